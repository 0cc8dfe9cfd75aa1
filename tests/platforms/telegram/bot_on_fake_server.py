"""``python -m bot telegram`` with only its HTTP pointed elsewhere: every Bot API request
python-telegram-bot's HTTPX layer makes goes to ``$FAKE_BOT_API`` (a fake_bot_server) instead of
https://api.telegram.org.  Everything else (the command line, logging, the database, the
service, run_telegram, PTB's polling) is production's.  Run as a script by the polling tests.

``$FAKE_BOT_API_SPEED`` (default 1): Telegram's time runs that many times faster than the real one,
as the fake's flood control does on its side (webhook_workers), so that a scenario bound by a
group's 20 messages a minute lasts seconds.  The limiter is still production's ``FloodLimiter`` and
``SharedBudget``, given the sped-up clock and sleep their constructors take; the adapter waits out a
flood wait on that clock too, and hands the outbox its waits in real seconds (the service's time is
the real one).  The shared budget's clock is the wall clock sped up alike in every process, so the
workers still agree on it."""

from __future__ import annotations

import asyncio
import os
import runpy
import sys
import time
from typing import Any

from telegram.request import HTTPXRequest

BASE = os.environ["FAKE_BOT_API"]
SPEED = float(os.environ.get("FAKE_BOT_API_SPEED", "1"))
_do_request = HTTPXRequest.do_request


async def _to_fake(self: HTTPXRequest, url: str, *args: Any, **kwargs: Any) -> tuple[int, bytes]:
    return await _do_request(self, url.replace("https://api.telegram.org", BASE, 1), *args, **kwargs)


HTTPXRequest.do_request = _to_fake  # type: ignore[method-assign]


def _on_telegram_time(speed: float) -> None:
    from bot.platforms.telegram import adapter, limiter

    def monotonic() -> float:
        return time.monotonic() * speed

    def wall() -> float:
        return time.time() * speed

    async def sleep(seconds: float) -> None:
        await asyncio.sleep(seconds / speed)

    class SpedLimiter(limiter.FloodLimiter):
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**{"clock": monotonic, "sleep": sleep, **kwargs})

    class SpedBudget(limiter.SharedBudget):
        def __init__(self, store: Any, prefix: str = "telegram:", clock: Any = None) -> None:
            super().__init__(store, prefix, clock or wall)

    class SpedAdapter(adapter.TelegramAdapter):
        def __init__(self, service: Any, sleep_: Any = None, env: Any = None) -> None:
            super().__init__(service, sleep_ or sleep, env)

        def retry_delay(self, exc: BaseException) -> float | None:
            wait = super().retry_delay(exc)
            return None if wait is None else wait / speed

    # The names run_telegram, build_application and shared_budget look up when they are called.
    adapter.FloodLimiter = SpedLimiter  # type: ignore[misc]
    adapter.TelegramAdapter = SpedAdapter  # type: ignore[misc]
    limiter.SharedBudget = SpedBudget  # type: ignore[misc]


if SPEED != 1:
    _on_telegram_time(SPEED)
sys.argv = ["bot", "telegram"]
runpy.run_module("bot", run_name="__main__", alter_sys=True)
