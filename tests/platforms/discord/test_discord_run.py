"""``run_discord`` as production runs it (discord.py's own login, our service on a real SQLite
file), with the strict fake Discord in place of HTTP: Discord failing on its side (5xx) or
unreachable at start is tried again with a doubling wait, one log line per attempt and no
traceback; a token it refuses is one line and exit status 1."""

from __future__ import annotations

import asyncio
import logging

import aiohttp
import pytest
from discord_fake import TOKEN, FakeDiscord, http_error, install

from bot.platforms.base import START_ATTEMPTS
from bot.platforms.discord import run_discord
from bot.service import GameService
from bot.storage import Storage


class Unreachable(aiohttp.ClientConnectionError):
    """What aiohttp raises when the connection fails (the fake notes a ``code`` for every failure)."""

    code = 0


@pytest.fixture
def service(tmp_path):
    storage = Storage(tmp_path / "run.db")
    service = GameService(storage)
    yield service
    service.close()
    storage.close()


@pytest.fixture
def fake(monkeypatch):
    fake = FakeDiscord()
    install(fake, monkeypatch)
    return fake


def logins(fake: FakeDiscord) -> int:
    return sum(1 for c in fake.calls if (c.method, c.path) == ("GET", "/users/@me"))


def test_a_discord_failing_at_start_is_tried_again_until_it_answers(service, fake, caplog, bot_errors):
    # 503: a 5xx discord.py does not retry itself (a 500/502/504 it tries five times first, which
    # the fake on the wire now shows as discord.py's own requests).
    fake.script("/users/@me", http_error(503, 0, "Service Unavailable"), method="GET", times=3)
    # Then the token is refused: the one thing that ends the run at once.
    fake.script("/users/@me", http_error(401, 0, "401: Unauthorized"), method="GET")
    sleeps: list[float] = []
    assert run_discord(TOKEN, service, sleep=sleeps.append) == 1
    assert sleeps == [1.0, 2.0, 4.0] and logins(fake) == 4
    retries = [r for r in caplog.records if r.name.startswith("bot") and r.levelno == logging.WARNING]
    assert len(retries) == 3 and "trying again in 1 s" in retries[0].getMessage()
    assert [r.getMessage() for r in bot_errors] == [
        "Discord refused DISCORD_BOT_TOKEN; check it in the developer portal"]
    assert not any(r.exc_info for r in caplog.records)
    assert TOKEN.lower() not in caplog.text.lower()
    bot_errors.clear()


def test_a_network_error_at_every_start_is_one_line_and_exit_1(service, fake, caplog, bot_errors):
    fake.script("/users/@me", Unreachable("Cannot connect to host discord.com:443"), method="GET",  # type: ignore[arg-type]
                times=START_ATTEMPTS)
    sleeps: list[float] = []
    assert run_discord(TOKEN, service, sleep=sleeps.append) == 1
    assert len(sleeps) == START_ATTEMPTS - 1 and logins(fake) == START_ATTEMPTS
    assert len(bot_errors) == 1 and "could not be reached in" in bot_errors[0].getMessage()
    assert not any(r.exc_info for r in caplog.records)
    bot_errors.clear()


async def test_a_database_deleted_under_the_running_bot_closes_it_with_one_line(h, discord_errors):
    await h.new_game()
    await h.bot.on_ready()                               # what starts the delivery task in production
    assert h.bot.delivering
    h.db_path.unlink()
    token = await h.slash("games", "ana")
    # Answered (nothing was written), then the delivery task sees the file gone and closes the bot.
    assert h.only_answer(token).content
    for _ in range(200):
        if h.bot.is_closed():
            break
        await asyncio.sleep(0.01)
    assert h.bot.is_closed() and not h.bot.delivering
    assert h.bot.fatal is not None and "deleted" in h.bot.fatal
    assert [r.getMessage() for r in discord_errors] == [f"{h.bot.fatal}; the discord bot stops"]
    discord_errors.clear()
