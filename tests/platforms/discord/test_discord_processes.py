"""Two real bot processes, two shards of one bot, one database file, one (fake) Discord on a real
socket (issue 29, item 5).

Each process is ``python -m bot discord`` as production runs it (discord_process.py only points
discord.py at the fake: discord_server.py), with DISCORD_SHARD_COUNT=2 and its own
DISCORD_SHARD_IDS.  A member's slash command in a channel where the bot lacks Send Messages comes
through the gateway to the shard of its server, in process A.  A is stopped (SIGINT); the
service then has something to say in that channel (an outbox row); process B, which runs the
other shard and never saw the interaction, delivers it: as a follow-up of A's interaction, taken
from the database, not as a post the channel refuses.  Neither process logs the token, at DEBUG
either (where discord.py logs gateway events and webhook URLs)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from discord_fake import CHANNEL_ID, GUILD_ID, SEND_MESSAGES, TOKEN, FakeDiscord, Harness
from discord_server import DiscordServer
from fresh_db import fresh_database
from procs import needs_proc

from bot.i18n import t
from bot.service import GameService, Reply
from bot.storage import Storage

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
SHARDS = 2
GUILD_SHARD = (GUILD_ID >> 22) % SHARDS          # where Discord sends the server's events
WATCHDOG_SECONDS = 60.0
POSTS = "/channels/{channel_id}/messages"
FOLLOW_UPS = "/webhooks/{webhook_id}/{webhook_token}"

pytestmark = needs_proc


class BotProcess:
    """``python -m bot discord`` running shards ``shard`` of SHARDS against the fake."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.log = ""
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.process.stderr is not None
        async for line in self.process.stderr:
            self.log += line.decode(errors="replace")

    async def stop(self) -> int:
        """SIGINT, as an operator would; its exit status."""
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGINT)
        try:
            status = await asyncio.wait_for(self.process.wait(), WATCHDOG_SECONDS)
        finally:
            if self.process.returncode is None:
                self.process.kill()
                await self.process.wait()
        await self._reader
        return status


async def start_bot(url: str, database: Path, shard: int) -> BotProcess:
    env = dict(os.environ, DISCORD_BOT_TOKEN=TOKEN, DRAUGHTS_DB=str(database), LOG_LEVEL="DEBUG",
               DISCORD_SHARD_COUNT=str(SHARDS), DISCORD_SHARD_IDS=str(shard),
               # No move is played here: one engine worker, not compiled (cheaper on a busy machine).
               DRAUGHTS_AI_WORKERS="1", DRAUGHTS_JIT="off")
    for variable in ("DATABASE_URL", "WEB_URL", "DISCORD_GUILD_ID"):
        env.pop(variable, None)
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(HERE / "discord_process.py"), url, "discord", cwd=str(REPO), env=env,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    return BotProcess(process)


async def until(condition: Callable[[], bool], what: str, bots: list[BotProcess]) -> None:
    give_up = time.monotonic() + WATCHDOG_SECONDS
    while not condition():
        if time.monotonic() > give_up or any(b.process.returncode is not None for b in bots):
            logs = "\n".join(b.log for b in bots)
            raise AssertionError(f"watchdog: {what}\n{logs}")
        await asyncio.sleep(0.02)


@pytest.fixture
async def server() -> AsyncIterator[DiscordServer]:
    server = DiscordServer(FakeDiscord())
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


async def test_a_shard_process_that_never_saw_the_interaction_delivers_through_its_follow_up(
        server: DiscordServer, tmp_path: Path):
    fake = server.fake
    database = fresh_database(tmp_path / "shared.db")
    fake.deny(CHANNEL_ID, SEND_MESSAGES)
    a = await start_bot(server.url, database, GUILD_SHARD)
    bots = [a]
    try:
        await until(lambda: "connected to Discord" in a.log, "process A is connected", bots)
        payload = Harness(None, fake, None, [time.time()]).slash_payload("games", "ana")  # type: ignore[arg-type]
        token = payload["token"]
        fake.dispatch("INTERACTION_CREATE", payload, shard=GUILD_SHARD)
        await until(lambda: len(fake.answers(token)) == 2, "process A answered the command", bots)
        assert [a.content for a in fake.answers(token)][0] == t("en", "games.empty")
    finally:
        assert await a.stop() == 0, a.log

    # Something for that channel, written by another process (here the test) to the shared database.
    storage = Storage(database)
    service = GameService(storage)
    try:
        service.outbox.say("discord", str(CHANNEL_ID), Reply("the bot has something to say"))
    finally:
        service.close()
        storage.close()

    b = await start_bot(server.url, database, 1 - GUILD_SHARD)
    bots = [b]
    try:
        await until(lambda: any(m.content == "the bot has something to say" for m in fake.answers(token)),
                    "process B delivered the row", bots)
    finally:
        assert await b.stop() == 0, b.log
    assert fake.identified == [(GUILD_SHARD, SHARDS), (1 - GUILD_SHARD, SHARDS)]
    follow_up = fake.answers(token)[-1]
    assert follow_up.content == "the bot has something to say" and not follow_up.ephemeral
    sent = [c for c in fake.requests(token=token, method="POST", path_end=FOLLOW_UPS) if c.error is None]
    assert len(sent) == 2 and sent[-1].path == FOLLOW_UPS      # A's answer, then B's delivery
    assert not fake.requests(method="POST", path_end=POSTS)       # the channel was never tried
    assert not fake.refused and not fake.rate_limited
    storage = Storage(database)
    try:
        assert [m.status for m in storage.find_outbox()] == ["sent"]
    finally:
        storage.close()
    for log in (a.log, b.log):
        assert token not in log and TOKEN not in log
        assert " ERROR " not in log and "Traceback" not in log, log
    assert "[interaction token]" in a.log + b.log          # discord.py did log them, hidden
