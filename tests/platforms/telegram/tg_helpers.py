"""Telegram's test clock, importable by name from the test files (a conftest is not: with the
Discord tests in the same run, ``conftest`` names whichever conftest pytest loaded last).

Telegram's flood limits run on a clock SPEED times faster than the real one, for the fake and the
limiter alike: the limiter's spacing and waits are real, only shorter."""

from __future__ import annotations

import asyncio
import time

SPEED = 10.0


def telegram_clock() -> float:
    """Telegram's time in the tests: SPEED times faster than the real one."""
    return time.monotonic() * SPEED


async def telegram_sleep(seconds: float) -> None:
    await asyncio.sleep(seconds / SPEED)
