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


def limiter_waits(limiter) -> list[float]:
    """Every wait ``limiter`` makes from now on (on Telegram's clock), still waited for: what a
    test checks instead of timing the call."""
    waits: list[float] = []
    sleep = limiter.sleep

    async def recorded(seconds: float) -> None:
        waits.append(seconds)
        await sleep(seconds)

    limiter.sleep = recorded
    return waits
