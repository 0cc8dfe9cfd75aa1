"""What a process does once it stops for 409 Conflicts (issue 29, item 2): it sends no getUpdates
after the one that decided it (not PTB's retry, not PTB's last poll at stop), since Telegram
would end the poll of the process that now serves the token with it, and that one would count
a conflict of its own.  ``run_telegram`` with the real Application and polling loop, the fake
Bot API as HTTP.  Two real processes: test_telegram_two_pollers."""

from __future__ import annotations

import logging

import pytest
from telegram_fake_api import WEBHOOK_ACTIVE, FakeBotAPI
from tg_helpers import service_on_a_fresh_loop

from bot.platforms.telegram import adapter as telegram_adapter
from bot.platforms.telegram.adapter import run_telegram


@pytest.fixture
def service(tmp_path):
    yield from service_on_a_fresh_loop(tmp_path)


def test_no_poll_follows_the_conflict_that_stops_the_bot(service, caplog, bot_errors):
    http = FakeBotAPI()
    http.conflict(telegram_adapter.CONFLICTS_TO_STOP)
    with caplog.at_level(logging.INFO):
        assert run_telegram("123:TEST", service, request=http) == 1
    polls = http.named("getUpdates")
    assert [c.status for c in polls] == [409] * telegram_adapter.CONFLICTS_TO_STOP, \
        "neither a retry nor PTB's last poll at stop went out"
    [line] = [r.getMessage() for r in bot_errors]
    assert line.startswith("another instance uses TELEGRAM_BOT_TOKEN and serves it now")
    bot_errors.clear()


def test_a_webhook_set_for_the_token_stops_polling_with_one_line(service, caplog, bot_errors):
    # Another deployment serves the token by webhook (set after this one deleted it at start).
    http = FakeBotAPI()
    http.fail("getUpdates", 409, WEBHOOK_ACTIVE, times=telegram_adapter.CONFLICTS_TO_STOP)
    with caplog.at_level(logging.INFO):
        assert run_telegram("123:TEST", service, request=http) == 1
    assert len(http.named("getUpdates")) == telegram_adapter.CONFLICTS_TO_STOP
    [line] = [r.getMessage() for r in bot_errors]
    assert "TELEGRAM_BOT_TOKEN with a webhook" in line and "\n" not in line
    assert not [r for r in caplog.records if r.exc_info], "no traceback"
    bot_errors.clear()
