"""Telegram's inline mode: what an inline message is to the service, and where its game opens.

A user types ``@ourbot`` in any chat (one the bot is not in included) and sends one of the
challenges offered; Telegram posts it in their name, "via @ourbot", and gives the bot no chat and
no message id for it, only an ``inline_message_id`` that its button presses carry.  To the service
that message is a chat of its own, ``inline:<inline_message_id>``: the game accepted there lives in
it, and whatever the service later says there (a move, a reminder, the end) is delivered as an
edit of the message, in words (an inline message cannot take a newly uploaded picture).

The game is played on the web board; ``board_link`` says where its Open board button goes.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping

from bot import config as env_config

log = logging.getLogger(__name__)

INLINE_PREFIX = "inline:"
# The Mini App's short name, as registered with @BotFather (/newapp): the button opens
# https://t.me/<bot>/<app>?startapp=g<game> inside Telegram, which tells the web board who opened it.
WEBAPP_VARIABLE = "TELEGRAM_WEBAPP_NAME"
# Without a Mini App, the web board's own public address (the one it is served under, see
# docs/web.md): the button opens its spectator page <base>/g/<game>?t=w<game>s<mac>.  WEB_BASE_URL is
# its older name.
WEB_URL_VARIABLE = "WEB_URL"
WEB_BASE_VARIABLE = "WEB_BASE_URL"
_WEBAPP_NAME = env_config.WEBAPP_NAME      # BotFather's rule for a Mini App's short name
_BOT_USERNAME = re.compile(r"[A-Za-z0-9_]{4,32}")
_WEB_BASE = env_config.PUBLIC_URL
_warned: set[tuple[str, str]] = set()


def inline_chat(inline_message_id: str) -> str:
    """The service's chat id of an inline message."""
    return INLINE_PREFIX + inline_message_id


def is_inline_chat(chat_id: str | int) -> bool:
    return str(chat_id).startswith(INLINE_PREFIX)


def inline_message_id(chat_id: str) -> str:
    return chat_id.removeprefix(INLINE_PREFIX)


def board_link(game_id: int, bot_username: str | None, env: Mapping[str, str], mac: str | None = None) -> str | None:
    """Where a game's Open board button goes, or None when no web board is configured.

    Everyone who sees an inline message gets the same button, so the link names only the game and
    ``mac``, its spectator signature (``BoardLayer.watch_mac``; without it a link shows nothing to
    a non-player): the Mini App learns who opened it from Telegram's signed init data (without a
    Mini App the page is a spectator's)."""
    signed = f"s{mac}" if mac else ""
    app = env.get(WEBAPP_VARIABLE, "").strip()
    if app and not _WEBAPP_NAME.fullmatch(app):
        _warn(WEBAPP_VARIABLE, "is not a Mini App short name (3-30 letters, digits or _): ignored")
        app = ""
    if app and bot_username and _BOT_USERNAME.fullmatch(bot_username):
        return f"https://t.me/{bot_username}/{app}?startapp=g{game_id}{signed}"
    for variable in (WEB_URL_VARIABLE, WEB_BASE_VARIABLE):
        base = env.get(variable, "").strip().rstrip("/")
        if base and not _WEB_BASE.fullmatch(base):
            _warn(variable, "is not an http(s) URL without query or fragment: ignored")
            continue
        if base:
            return f"{base}/g/{game_id}?t=w{game_id}{signed}" if signed else f"{base}/g/{game_id}"
    return None


def _warn(variable: str, problem: str) -> None:
    # Once per variable and problem: the link is built for every edit.
    if (variable, problem) not in _warned:
        _warned.add((variable, problem))
        log.warning("%s %s", variable, problem)
