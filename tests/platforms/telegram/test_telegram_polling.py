"""Two processes on one token (issue 15, item 9): getUpdates answers 409 Conflict while another
process polls.  ``run_telegram`` — the real Application, Updater and polling loop, with the fake
Bot API as HTTP — stops after a few conflicts within a minute with exit status 1 and one log line,
no traceback; a conflict or two (a restart overlapping the old process's last poll) do not stop it."""

from __future__ import annotations

import asyncio
import logging
import threading
import time

import pytest
from telegram_fake_api import USERS, FakeBotAPI
from tg_helpers import service_on_a_fresh_loop

from bot.platforms.telegram import adapter as telegram_adapter
from bot.platforms.telegram.adapter import run_telegram

PRIVATE = {"id": USERS["bob"]["id"], "type": "private", "first_name": "Bob", "username": "bob"}


@pytest.fixture
def service(tmp_path):
    yield from service_on_a_fresh_loop(tmp_path)


def test_a_second_instance_on_the_token_stops_this_one_with_one_line_and_status_1(service, caplog, bot_errors):
    http = FakeBotAPI()
    http.conflict(telegram_adapter.CONFLICTS_TO_STOP)
    started = time.monotonic()
    with caplog.at_level(logging.DEBUG):
        status = run_telegram("123:TEST", service, request=http)
    took = time.monotonic() - started
    assert status == 1
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and "another instance uses TELEGRAM_BOT_TOKEN" in errors[0].getMessage()
    assert "\n" not in errors[0].getMessage()
    assert not [r for r in caplog.records if r.exc_info], "no traceback"
    assert bot_errors == errors
    bot_errors.clear()                                   # the one line expected
    polls = http.named("getUpdates")
    assert [c.status for c in polls[:3]] == [409, 409, 409]
    print(f"telegram: stopped after {len(polls)} getUpdates, {took:.1f} s")
    # Stopped at the third conflict: one more poll may be under way then, no more (not timed:
    # PTB's pauses between failed polls are its own).
    assert len(polls) <= telegram_adapter.CONFLICTS_TO_STOP + 1


def test_a_conflict_or_two_do_not_stop_the_bot(service, caplog):
    http = FakeBotAPI()
    http.conflict(telegram_adapter.CONFLICTS_TO_STOP - 1)
    http.queue_update(message=http.incoming(PRIVATE, USERS["bob"], "/help"))

    loop = asyncio.get_event_loop()

    def stop_when_answered() -> None:
        # The answer to /help shows the bot polled on through the conflicts; then it is stopped
        # the way a stop signal ends run_polling's loop (status 0).
        give_up = time.monotonic() + 15
        while time.monotonic() < give_up and not http.named("sendMessage", ok_only=True):
            time.sleep(0.02)
        time.sleep(0.1)
        loop.call_soon_threadsafe(loop.stop)

    watcher = threading.Thread(target=stop_when_answered)
    watcher.start()
    with caplog.at_level(logging.INFO):
        status = run_telegram("123:TEST", service, request=http)
    watcher.join()
    assert status == 0
    assert http.named("sendMessage", ok_only=True), "the update after the conflicts was answered"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
