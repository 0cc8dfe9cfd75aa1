"""Helpers shared by the Telegram tests, importable by name from the test files (a conftest is not: with the
Discord tests in the same run, ``conftest`` names whichever conftest pytest loaded last).

Telegram's flood limits run on a clock SPEED times faster than the real one, for the fake and the
limiter alike: the limiter's spacing and waits are real, only shorter."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Iterator
from pathlib import Path

import pytest
from telegram import Bot
from telegram.error import RetryAfter
from telegram_fake_api import GROUP, FakeBotAPI

from bot.platforms.telegram.limiter import retry_seconds
from bot.service import GameService
from bot.storage import Storage

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


# -- a fake on a clock the test moves by hand ---------------------------------------------------------------

PRIVATE_ANA = {"id": 1, "type": "private", "first_name": "Ana"}


async def fake_on_a_hand_clock() -> AsyncIterator[tuple[FakeBotAPI, Bot, list[float]]]:
    """The body of a fixture: a fake on a clock the test moves by hand (``now[0]``), knowing GROUP
    and PRIVATE_ANA, and a Bot on it."""
    now = [1000.0]
    fake = FakeBotAPI(clock=lambda: now[0])
    fake.add_chat(GROUP)
    fake.add_chat(PRIVATE_ANA)
    bot = Bot("123:TEST", request=fake, get_updates_request=fake)
    async with bot:
        yield fake, bot, now


async def told_to_wait(coro: Awaitable[object]) -> float:
    """The seconds of the RetryAfter ``coro`` must raise."""
    with pytest.raises(RetryAfter) as err:
        await coro
    return retry_seconds(err.value)


# -- run_telegram's service ---------------------------------------------------------------------------------


def service_on_a_fresh_loop(tmp_path: Path) -> Iterator[GameService]:
    """The body of a fixture: a service for ``run_telegram``, on a fresh event loop (run_polling runs
    the current thread's loop and closes it at the end)."""
    asyncio.set_event_loop(asyncio.new_event_loop())
    storage = Storage(tmp_path / "tg.db")
    service = GameService(storage)
    yield service
    service.close()
    storage.close()
