"""What the service says on its own reaches Telegram through the outbox: the delivery task started
with the Application wakes at the service's next timer (not at a 30 s poll), sends each message
once, tries a transient failure again later and drops a message to a chat that is gone.

The service's clock is the real one plus an offset the test sets, so "due in 0.3 s" is a real
0.3 s: nothing sleeps for long, and the delay measured is the real one."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest
from telegram_fake_api import GROUP, FakeBotAPI
from tg_helpers import telegram_clock, telegram_sleep

from bot.platforms.base import MAX_IDLE_SECONDS
from bot.platforms.telegram import TelegramAdapter, build_application
from bot.platforms.telegram.limiter import FloodLimiter
from bot.service import GameService, Reply
from bot.storage import Storage

CHAT = GROUP["id"]
MOVE_SECONDS = 300
LEAD = 0.3                       # how far ahead of now the test puts the due time


def outbox(tg) -> list[tuple[str, int]]:
    return [(m.status, m.attempts) for m in tg.storage.find_outbox()]


async def five_minute_game(tg) -> dict:
    await tg.say("ana", "/new italian white 5m")
    await tg.say("bob", "/accept")
    return tg.storage.game(1)


def clock_with_offset(tg) -> list[float]:
    offset = [0.0]
    tg.service.clock = lambda: time.time() + offset[0]
    return offset


async def first_call(tg, method: str, contains: str, after: int, timeout: float = MAX_IDLE_SECONDS / 2):
    """The first ``method`` call after index ``after`` whose text holds ``contains``, waiting for it."""
    give_up = time.monotonic() + timeout
    while time.monotonic() < give_up:
        for call in tg.http.calls[after:]:
            text = call.params.get("text") or call.params.get("caption") or ""
            if call.method == method and call.status == 200 and contains in text:
                return call
        await asyncio.sleep(0.005)
    raise AssertionError(f"no {method} with {contains!r} within {timeout} s")


async def test_a_reminder_and_a_time_out_reach_the_chat_at_their_due_time_by_the_services_timer(tg):
    game = await five_minute_game(tg)
    offset = clock_with_offset(tg)
    reminder_at = game.deadline_at - MOVE_SECONDS / 10
    # The reminder falls due LEAD seconds after the Application starts.
    offset[0] = reminder_at - LEAD - time.time()
    before = len(tg.http.calls)
    await tg.app.start()
    try:
        assert tg.adapter.delivering
        call = await first_call(tg, "sendMessage", "para mover en la partida #1", before)
        reminder_delay = call.at + offset[0] - reminder_at
        # The loss on time, due LEAD seconds after the delivery task is started again (a restart:
        # the task sleeps on its own timer, and the test's clock is about to jump).
        await tg.adapter.stop_delivery()
        offset[0] = game.deadline_at - LEAD - time.time()
        before = len(tg.http.calls)
        tg.adapter.start_delivery()
        call = await first_call(tg, "sendPhoto", "se le acabó el tiempo", before)
        timeout_delay = call.at + offset[0] - game.deadline_at
    finally:
        await tg.app.stop()
    print(f"telegram: reminder {reminder_delay * 1000:.0f} ms, time-out {timeout_delay * 1000:.0f} ms after due")
    # Woken by the service's own timer, not by the idle poll: never early, and well before
    # MAX_IDLE_SECONDS (the delays printed above are the measure; how small they are depends on
    # the machine, so it is not asserted).
    assert 0 <= reminder_delay < MAX_IDLE_SECONDS / 2
    assert 0 <= timeout_delay < MAX_IDLE_SECONDS / 2
    assert not tg.adapter.delivering
    assert tg.storage.game(1).result_reason == "time"
    assert outbox(tg) == [("sent", 0), ("sent", 0)]


async def test_a_new_deadline_wakes_the_idle_delivery_task(tg):
    await tg.app.start()
    try:
        await asyncio.sleep(0.05)
        rounds = tg.adapter.delivery.rounds
        assert rounds >= 1                              # nothing scheduled: asleep for up to a minute
        await five_minute_game(tg)                      # a game with a clock: the service says so
        await asyncio.sleep(0.2)
        assert tg.adapter.delivery.rounds > rounds      # woken, it now sleeps until the reminder
    finally:
        await tg.app.stop()


async def test_a_transient_failure_is_tried_again_later_and_delivered_once(tg, caplog):
    await five_minute_game(tg)
    offset = clock_with_offset(tg)
    offset[0] = 285                                     # 15 s of 5 minutes left: the reminder is due
    tg.http.fail("sendMessage", 502, "Bad Gateway", times=4)     # outlasts the retries of one send
    with caplog.at_level(logging.WARNING, logger="bot.platforms"):
        assert await tg.adapter.delivery_round() == 0
    assert outbox(tg) == [("pending", 1)]
    assert any("tried again" in r.getMessage() for r in caplog.records)
    assert await tg.adapter.delivery_round() == 0       # not due again yet: backing off
    offset[0] += 6                                      # past the first backoff (5 s)
    assert await tg.adapter.delivery_round() == 1
    reminders = [c for c in tg.http.named("sendMessage", ok_only=True) if "para mover" in c.params["text"]]
    assert len(reminders) == 1
    assert outbox(tg) == [("sent", 1)]
    assert await tg.adapter.delivery_round() == 0


async def test_a_chat_that_removed_the_bot_gets_nothing_more(tg, caplog):
    await five_minute_game(tg)
    offset = clock_with_offset(tg)
    offset[0] = 285
    tg.http.kick(CHAT)
    with caplog.at_level(logging.WARNING, logger="bot.platforms"):
        assert await tg.adapter.delivery_round() == 0
    assert outbox(tg) == [("dropped", 1)]
    assert any("dropped" in r.getMessage() and str(CHAT) in r.getMessage() for r in caplog.records)
    calls = len(tg.http.calls)
    offset[0] += 3600                                    # the loss on time: also dropped, tried once
    await tg.adapter.delivery_round()
    assert [c.method for c in tg.http.calls[calls:]] == ["sendPhoto"]
    assert outbox(tg) == [("dropped", 1), ("dropped", 1)]


async def test_a_later_message_never_overtakes_one_that_failed(tg):
    await five_minute_game(tg)
    offset = clock_with_offset(tg)
    offset[0] = 285
    tg.service.run_due("telegram")                       # the reminder is written...
    with tg.storage.transaction():                       # ...then a second message for the chat
        tg.service.say("telegram", str(CHAT), Reply("second"))
    tg.http.fail("sendMessage", 502, "Bad Gateway", times=4)
    await tg.adapter.delivery_round()
    assert not [c for c in tg.http.named("sendMessage") if c.params["text"] == "second"]
    assert [s for s, _ in outbox(tg)] == ["pending", "pending"]
    offset[0] += 6
    assert await tg.adapter.delivery_round() == 2
    texts = [c.params["text"] for c in tg.http.named("sendMessage", ok_only=True)]
    assert texts[-1] == "second" and "para mover" in texts[-2]


async def test_a_message_is_delivered_once_across_a_restart(tg, tmp_path):
    await five_minute_game(tg)
    offset = clock_with_offset(tg)
    offset[0] = 285
    assert await tg.adapter.delivery_round() == 1
    offset[0] = 3600
    tg.http.fail("sendPhoto", 502, "Bad Gateway", times=4)
    assert await tg.adapter.delivery_round() == 0        # the loss on time is still to be delivered
    # A new process: new storage, service, adapter and Telegram connection, on the same database.
    storage = Storage(tmp_path / "tg.db")
    try:
        service = GameService(storage, clock=lambda: time.time() + 3610)
        http = FakeBotAPI(clock=telegram_clock)
        http.add_chat(GROUP)
        limiter = FloodLimiter(clock=telegram_clock, sleep=telegram_sleep)
        app = build_application("123:TEST", service=service, request=http, rate_limiter=limiter)
        adapter = app.adapter
        assert isinstance(adapter, TelegramAdapter)
        async with app:
            assert await adapter.delivery_round() == 1
            assert await adapter.delivery_round() == 0
        sent = [(c.method, c.params.get("caption") or c.params.get("text")) for c in http.calls if c.method != "getMe"]
        assert len(sent) == 1 and sent[0][0] == "sendPhoto" and "se le acabó el tiempo" in sent[0][1]
    finally:
        storage.close()
    # The first process, still running, does not send it again either.
    offset[0] = 3700
    assert await tg.adapter.delivery_round() == 0
    assert outbox(tg) == [("sent", 0), ("sent", 1)]


@pytest.mark.parametrize("grace, played", [(0.5, True), (0.0, False)])
async def test_a_move_queued_while_the_bot_was_down_is_played_before_an_overdue_clock_is_called(
        tg, grace, played):
    game = await five_minute_game(tg)
    offset = clock_with_offset(tg)
    offset[0] = game.deadline_at + 10 - time.time()  # back up ten seconds after Ana's deadline
    with tg.storage.transaction():                       # and a message that was waiting meanwhile
        tg.service.say("telegram", str(CHAT), Reply("queued"))
    tg.adapter.startup_grace = grace
    await tg.app.start()
    try:
        await first_call(tg, "sendMessage", "queued", 0)  # pending messages go out at once, grace or not
        await asyncio.sleep(0.1)
        # Ana's move, sent before her deadline (Telegram dates it so), reaches the bot only now.
        await tg.say("ana", "/m 22-18")
        await asyncio.sleep(grace + 0.2)
    finally:
        await tg.app.stop()
    row = tg.storage.game(1)
    if played:
        assert (row.ply, row.status) == (1, "active")
    else:
        assert (row.ply, row.result_reason) == (0, "time")


async def test_timed_work_the_service_cannot_do_does_not_make_the_task_spin(tg, bot_errors):
    await five_minute_game(tg)
    with tg.storage.transaction():
        tg.storage.db.execute("UPDATE games SET fen='damaged'")     # every look at its clock fails
    offset = clock_with_offset(tg)
    offset[0] = 285
    tg.adapter.startup_grace = 0
    await tg.app.start()
    try:
        await asyncio.sleep(0.6)
    finally:
        await tg.app.stop()
    # Still due after every round: the looks back off (0.05, 0.1, 0.2, 0.4 s...) instead of spinning.
    assert 2 <= tg.adapter.delivery.rounds <= 6
    assert bot_errors and all("deadline work failed" in r.getMessage() for r in bot_errors)
    bot_errors.clear()       # the expected errors: the service's log of the damaged game
