"""``run_telegram`` as production runs it (python-telegram-bot's own run_polling, our service on a
real SQLite file), with the strict fake Bot API as its HTTP layer:

- Telegram unreachable or failing (5xx) at start is retried with a doubling wait, one log line per
  attempt and no traceback; a token Telegram refuses is one line and exit status 1, at once; so
  is a Telegram that stays unreachable for every attempt.
- The database deleted or replaced under the running bot stops it: one line, exit status 1, and
  nothing more written into the file nobody will read again.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from telegram_fake_api import GROUP, USERS, FakeBotAPI

import bot.platforms.base as base
from bot.i18n import t
from bot.platforms.base import START_ATTEMPTS
from bot.platforms.telegram import run_telegram
from bot.service import GameService
from bot.storage import Storage

TOKEN = "123456:AbCdEfSecretTokenForTheRun"
WATCHDOG_SECONDS = 60.0


class PollingBotAPI(FakeBotAPI):
    """The fake Bot API, plus what run_polling asks for: deleteWebhook, and getUpdates answered
    from a queue the test fills.  A run that does not stop on its own is stopped by SIGINT (as an
    operator would) after WATCHDOG_SECONDS, so a failing test fails instead of hanging."""

    def __init__(self) -> None:
        super().__init__()
        self.updates: list[dict[str, Any]] = []
        self.polls = 0
        self.first_poll: float | None = None
        self.watchdog_fired = False
        self.on_idle: list[Any] = []            # called (once each) when the queue is empty
        self._update_ids = iter(range(1, 10_000))

    def send(self, user: str, text: str) -> None:
        self.updates.append({"update_id": next(self._update_ids), "message": self.incoming(GROUP, USERS[user], text)})

    def _answer(self, name: str, wire: dict[str, str], uploads: dict[str, bytes]) -> Any:
        if name == "deleteWebhook":
            return True
        return super()._answer(name, wire, uploads)

    async def _get_updates(self, wire: dict[str, str]) -> list[dict[str, Any]]:
        # The fake's own getUpdates (updates it queued, 409 while another instance polls) gives
        # way to this test's queue and watchdog.
        return self._poll(wire)

    def _poll(self, wire: dict[str, str]) -> list[dict[str, Any]]:
        self.polls += 1
        self.first_poll = self.first_poll or time.monotonic()
        if time.monotonic() - self.first_poll > WATCHDOG_SECONDS and not self.watchdog_fired:
            self.watchdog_fired = True
            signal.raise_signal(signal.SIGINT)
        offset = int(wire.get("offset", 0) or 0)
        due = [u for u in self.updates if u["update_id"] >= offset]
        if not due and self.on_idle:
            self.on_idle.pop(0)()
        return due

    async def do_request(self, url: str, method: str, request_data: Any = None, **kwargs: Any) -> tuple[int, bytes]:
        if url.endswith("/getUpdates"):
            await asyncio.sleep(0.02)           # a long poll that comes back empty, shortened
        return await super().do_request(url, method, request_data, **kwargs)


def damage_index(db: Path, index: str) -> None:
    """Make an index disagree with its table through SQLite itself (so that the running bot's
    connections see it): its definition changes under entries built for the old one.  Every
    page stays well-formed; only a full integrity check sees the damage."""
    conn = sqlite3.connect(db, isolation_level=None)
    version = conn.execute("PRAGMA schema_version").fetchone()[0]
    conn.execute("PRAGMA writable_schema=ON")
    conn.execute("UPDATE sqlite_master SET sql = replace(sql, 'status)', 'created_at)') WHERE name=?", (index,))
    conn.execute(f"PRAGMA schema_version={version + 1}")
    conn.close()


def stop_when_idle(api: PollingBotAPI) -> None:
    api.on_idle.append(lambda: signal.raise_signal(signal.SIGINT))


@pytest.fixture
def service(tmp_path):
    storage = Storage(tmp_path / "run.db")
    service = GameService(storage)
    yield service
    service.close()
    storage.close()


def our_lines(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith("bot") and r.levelno >= logging.WARNING]


def test_a_telegram_failing_at_start_is_tried_again_with_backoff(service, caplog, bot_errors):
    api = PollingBotAPI()
    api.fail("getMe", 502, "Bad Gateway", times=3)
    stop_when_idle(api)
    sleeps: list[float] = []
    assert run_telegram(TOKEN, service, request=api, sleep=sleeps.append) == 0
    assert sleeps == [1.0, 2.0, 4.0]
    assert len(api.named("getMe", ok_only=True)) >= 1 and api.polls >= 1
    lines = our_lines(caplog)
    assert len(lines) == 3 and all("could not be reached" in r.getMessage() for r in lines), lines
    assert "trying again in 1 s (attempt 2 of" in lines[0].getMessage()
    assert not any(r.exc_info for r in caplog.records)
    assert TOKEN.lower() not in caplog.text.lower() and bot_errors == []


def test_a_refused_token_after_a_network_error_is_one_line_and_exit_1(service, caplog, bot_errors):
    api = PollingBotAPI()
    api.fail("getMe", 502, "Bad Gateway")
    api.fail("getMe", 401, "Unauthorized")
    sleeps: list[float] = []
    assert run_telegram(TOKEN, service, request=api, sleep=sleeps.append) == 1
    assert sleeps == [1.0]
    assert [r.getMessage() for r in bot_errors] == [
        "Telegram refused TELEGRAM_BOT_TOKEN; check it with @BotFather"]
    assert not any(r.exc_info for r in caplog.records)
    bot_errors.clear()


def test_telegram_unreachable_for_every_attempt_is_one_line_and_exit_1(service, caplog, bot_errors):
    api = PollingBotAPI()
    api.fail("getMe", 504, "Gateway Timeout", times=START_ATTEMPTS)
    sleeps: list[float] = []
    assert run_telegram(TOKEN, service, request=api, sleep=sleeps.append) == 1
    assert len(sleeps) == START_ATTEMPTS - 1 and max(sleeps) == 60.0 and sleeps[:3] == [1.0, 2.0, 4.0]
    assert len(bot_errors) == 1 and "could not be reached in" in bot_errors[0].getMessage()
    assert not any(r.exc_info for r in caplog.records)
    bot_errors.clear()


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_a_database_deleted_or_replaced_under_the_running_bot_stops_it(tmp_path, service, caplog, bot_errors, how):
    db = tmp_path / "run.db"
    api = PollingBotAPI()
    api.send("ana", "/new italian")
    api.send("bob", "/accept")

    def take_the_file_away() -> None:
        if not api.named("sendPhoto"):
            api.on_idle.append(take_the_file_away)      # the game's board is not out yet
            return
        if how == "deleted":
            db.unlink()
        else:
            shutil.copy(db, tmp_path / "backup.db")
            os.replace(tmp_path / "backup.db", db)
        api.send("ana", "/new spanish")

    api.on_idle.append(take_the_file_away)
    assert run_telegram(TOKEN, service, request=api, sleep=lambda s: None) == 1
    assert not api.watchdog_fired, "the bot did not stop"
    # The challenge sent after the file went away was not written anywhere, and was not confirmed.
    assert [c.variant for c in service.storage.find_challenges()] == ["italian"]
    texts = [c.params.get("text", "") for c in api.named("sendMessage")]
    assert not any("#2" in text for text in texts)
    # Whether the bot read that message before its delivery round found the file gone is a race
    # (both run at once): if it answered, it answered that something went wrong, once.
    assert texts.count(t("es", "error.internal")) <= 1
    assert texts[-1] == t("es", "error.internal") or not any("español" in text for text in texts)
    fatal = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(fatal) == 1, [r.getMessage() for r in fatal]
    assert how in fatal[0].getMessage() and str(db) in fatal[0].getMessage() and not fatal[0].exc_info
    bot_errors.clear()


def test_a_database_damaged_while_the_bot_runs_stops_it_at_the_scheduled_check(tmp_path, service, caplog, bot_errors,
                                                                             monkeypatch):
    db = tmp_path / "run.db"
    api = PollingBotAPI()
    api.send("ana", "/new italian")
    api.send("bob", "/accept")
    # The check is due at once (it runs once a day otherwise).
    monkeypatch.setattr(base, "INTEGRITY_CHECK_SECONDS", 0.0)

    def damage() -> None:
        if not api.named("sendPhoto"):
            api.on_idle.append(damage)
            return
        damage_index(db, "games_chat")
        api.send("bob", "/games")           # any event makes the delivery task look again

    api.on_idle.append(damage)
    assert run_telegram(TOKEN, service, request=api, sleep=lambda s: None) == 1
    assert not api.watchdog_fired, "the bot did not stop"
    fatal = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(fatal) == 1 and "damaged" in fatal[0].getMessage() and not fatal[0].exc_info, fatal
    bot_errors.clear()
