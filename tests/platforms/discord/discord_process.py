"""``python -m bot ...`` as production runs it, with discord.py talking to a fake Discord on this
machine (discord_server.py) instead of discord.com: ``python discord_process.py <fake address>
<arguments of python -m bot>``.  Only the addresses change (discord.py's API base, which its
interaction webhooks share, and its gateway); the token, the database and the shards come from the
environment as in production."""

from __future__ import annotations

import sys

import discord.gateway
import discord.http
import yarl


def main() -> int:
    base = sys.argv[1]
    discord.http.Route.BASE = f"{base}/api/v10"
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(base.replace("http://", "ws://", 1) + "/gateway")
    from bot.cli import main as bot_main

    return bot_main(sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
