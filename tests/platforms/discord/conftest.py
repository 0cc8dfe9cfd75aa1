"""The Discord adapter harness: a real DraughtsBot, a real service on a real SQLite file, and
the strict fake Discord (discord_fake.py) in place of HTTP."""

from __future__ import annotations

import random
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from discord_fake import TOKEN, FakeDiscord, Harness, install
from fresh_db import fresh_database

from bot.platforms.discord import DraughtsBot
from bot.service import GameService
from bot.service.thinking import Thinker
from bot.storage import Storage


@pytest.fixture
def discord_errors(bot_errors):
    """ERROR records of the discord logger and ours (tests/conftest.py fails the test on any)."""
    return bot_errors


@pytest.fixture
async def h(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, discord_errors):
    storage = Storage(fresh_database(tmp_path / "discord.db"))
    now = [time.time()]
    service = GameService(storage, clock=lambda: now[0], rng=random.Random(1))
    sleeps: list[float] = []
    fake = FakeDiscord()

    async def sleep(seconds: float) -> None:
        # Retries wait for real in production; here they only say how long they would have (and
        # Discord's clock moves on by as much).
        sleeps.append(seconds)
        fake.skew += seconds

    bot = DraughtsBot(service, sleep=sleep, clock=fake.now)
    install(fake, monkeypatch, bot.http)
    await bot.login(TOKEN)
    try:
        harness = Harness(bot, fake, storage, now)
        harness.sleeps = sleeps
        harness.db_path = tmp_path / "discord.db"
        yield harness
    finally:
        await bot.close()
        storage.close()
    assert not fake.refused, "requests Discord would refuse:\n" + "\n".join(fake.refusals)


@pytest.fixture
def bot_h(h: Harness):
    """The harness with a thread pool thinking for the bot (0.2 s a move)."""
    pool = ThreadPoolExecutor(2)
    h.bot.service.thinker = Thinker(pool)
    h.bot.service.bot_seconds = 0.2
    yield h
    assert h.bot.service.settle(20)
    pool.shutdown(wait=True)
