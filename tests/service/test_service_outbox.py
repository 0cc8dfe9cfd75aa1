"""The outbox: what the service says on its own is written with the change that caused it,
scheduled for its due time, delivered once, retried with backoff, dropped when undeliverable."""

from __future__ import annotations

import pytest

from bot.service import Button, Reply
from bot.service.features.common import OUTBOX_FIRST_RETRY, OUTBOX_MAX_ATTEMPTS

PLATFORM = "test"          # the chat harness's platform (tests/service/conftest.py)
T0 = 1_700_000_000.0       # and the start of its clock


@pytest.fixture
def game(chat):
    return chat.new_game(extra="1h")


def test_the_next_wakeup_is_the_reminder_then_the_deadline(chat, game, now):
    # One hour per move: the reminder is due when a tenth is left (54 min), the loss at 60 min.
    assert chat.service.next_wakeup(PLATFORM) == pytest.approx(T0 + 54 * 60)
    now[0] = T0 + 54 * 60
    assert chat.service.run_due(PLATFORM) == 1
    items = chat.service.pending_messages(PLATFORM)
    assert len(items) == 1 and f"#{game}" in items[0].reply.text
    chat.service.message_sent(items[0].id)
    assert chat.service.next_wakeup(PLATFORM) == pytest.approx(T0 + 3600)


def test_a_reminder_and_a_time_out_are_ready_the_moment_they_are_due(chat, game, now):
    reminder_at = chat.service.next_wakeup(PLATFORM)
    now[0] = reminder_at - 0.001
    assert chat.service.run_due(PLATFORM) == 0          # not a moment early
    now[0] = reminder_at
    assert chat.service.run_due(PLATFORM) == 1
    for item in chat.service.pending_messages(PLATFORM):
        chat.service.message_sent(item.id)
    deadline = chat.service.next_wakeup(PLATFORM)
    now[0] = deadline
    assert chat.service.run_due(PLATFORM) == 1
    [item] = chat.service.pending_messages(PLATFORM)
    assert item.reply.image is not None                  # the final board comes with it
    assert chat.game(game).status == "finished"
    assert chat.game(game).result_reason == "time"


def test_the_state_change_and_its_message_are_one_transaction(chat, game, now, monkeypatch, bot_errors):
    now[0] = T0 + 3600

    def broken_enqueue(*args, **kwargs):
        raise RuntimeError("disk gone")

    monkeypatch.setattr(chat.storage, "enqueue", broken_enqueue)
    assert chat.service.run_due(PLATFORM) == 0
    # The loss on time was not written without its announcement.
    assert chat.game(game).status == "active"
    assert [r.getMessage() for r in bot_errors] == [f"deadline work failed for game {game}"]
    bot_errors.clear()


def test_a_message_is_delivered_once_even_after_a_restart(chat, game, now):
    now[0] = T0 + 3600
    chat.service.run_due(PLATFORM)
    [item] = chat.service.pending_messages(PLATFORM)
    chat.service.message_sent(item.id)
    chat.restart()
    assert chat.service.pending_messages(PLATFORM) == []
    assert chat.service.run_due(PLATFORM) == 0           # the game is over: nothing said twice


def test_a_pending_message_survives_a_restart(chat, game, now):
    now[0] = T0 + 3600
    chat.service.run_due(PLATFORM)
    chat.restart()
    [item] = chat.service.pending_messages(PLATFORM)
    assert f"#{game}" in item.reply.text


def test_a_transient_failure_backs_off_and_a_permanent_one_drops(chat, game, now):
    now[0] = T0 + 3600
    chat.service.run_due(PLATFORM)
    [item] = chat.service.pending_messages(PLATFORM)
    chat.service.message_failed(item.id, "502 Bad Gateway")
    assert chat.service.pending_messages(PLATFORM) == []                  # not at once ...
    assert chat.service.next_wakeup(PLATFORM) == pytest.approx(now[0] + OUTBOX_FIRST_RETRY)
    now[0] += OUTBOX_FIRST_RETRY
    [again] = chat.service.pending_messages(PLATFORM)                     # ... but later
    assert again.id == item.id and again.attempts == 1
    chat.service.message_failed(item.id, "403 Forbidden: bot was kicked", permanent=True)
    now[0] += 10_000
    assert chat.service.pending_messages(PLATFORM) == []
    assert chat.storage.find_outbox()[0].status == "dropped"


def test_a_message_that_keeps_failing_is_dropped_in_the_end(chat, game, now):
    now[0] = T0 + 3600
    chat.service.run_due(PLATFORM)
    for _ in range(OUTBOX_MAX_ATTEMPTS):
        items = chat.service.pending_messages(PLATFORM)
        if not items:
            now[0] += 10_000
            items = chat.service.pending_messages(PLATFORM)
        if not items:
            break
        chat.service.message_failed(items[0].id, "timeout")
    assert chat.storage.find_outbox()[0].status == "dropped"


def test_listeners_hear_of_moves_and_of_new_messages(chat, game, now):
    heard: list[str] = []
    chat.service.add_listener(heard.append)
    chat.play(game, ["22-18"])
    assert heard and set(heard) == {PLATFORM}
    heard.clear()
    now[0] = T0 + 10 * 3600
    chat.service.run_due(PLATFORM)
    assert heard == [PLATFORM]



def test_a_reply_survives_the_outbox_byte_for_byte():
    reply = Reply("Game #3 is over.\nä €", image=b"\x89PNG\x00\xff", animation=b"GIF89a",
                  buttons=[[Button("Accept", "acc:3", "/accept #3", "go")], [Button("1", "s:3:0:1")]],
                  replaces_board=True, game_id=3, board_text="  . x .", document=("game-3.pdn", b"[Event]"),
                  private=True)
    assert Reply.from_json(reply.to_json()) == reply
