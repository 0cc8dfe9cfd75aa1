"""``python -m bot telegram`` with only its HTTP pointed elsewhere: every Bot API request
python-telegram-bot's HTTPX layer makes goes to ``$FAKE_BOT_API`` (a fake_bot_server) instead of
https://api.telegram.org.  Everything else (the command line, logging, the database, the
service, run_telegram, PTB's polling) is production's.  Run as a script by the polling tests."""

from __future__ import annotations

import os
import runpy
import sys
from typing import Any

from telegram.request import HTTPXRequest

BASE = os.environ["FAKE_BOT_API"]
_do_request = HTTPXRequest.do_request


async def _to_fake(self: HTTPXRequest, url: str, *args: Any, **kwargs: Any) -> tuple[int, bytes]:
    return await _do_request(self, url.replace("https://api.telegram.org", BASE, 1), *args, **kwargs)


HTTPXRequest.do_request = _to_fake  # type: ignore[method-assign]
sys.argv = ["bot", "telegram"]
runpy.run_module("bot", run_name="__main__", alter_sys=True)
