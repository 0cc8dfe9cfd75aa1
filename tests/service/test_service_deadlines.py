"""Time per move: a reminder when a tenth of the time is left, then a loss on time."""

from __future__ import annotations

import pytest
from catalog_text import says
from harness import en

from bot.i18n import tn

HOUR = 3600
MINUTE = 60


@pytest.fixture
def game(chat):
    """An italian game with one hour per move, started at the fake clock's time."""
    return chat.new_game("ana", "bob", "italian", extra="1h")


def test_new_with_one_hour_sets_the_deadline(chat, game, now):
    row = chat.game(game)
    assert row.move_seconds == HOUR
    assert row.deadline_at == now[0] + HOUR
    assert says(chat.text("ana", "/board"), "en", "game.to_move", name="Ana", to_name="Ana", left=tn("en", "unit.h", 1))


def test_no_reminder_before_54_minutes(chat, game, now):
    now[0] += 53 * MINUTE
    assert chat.service.tick() == []
    assert chat.game(game).reminded == 0


def test_reminder_after_54_minutes_is_sent_exactly_once(chat, game, now):
    now[0] += 54 * MINUTE + 30
    out = chat.service.tick()
    assert len(out) == 1
    sent = out[0]
    assert (sent.platform, sent.chat_id) == (chat.platform, chat.chat_id)
    assert sent.reply.game_id == game
    assert tn("en", "clock.reminder", 5, name="Ana", id=game, left=tn("en", "unit.m", 5)) in sent.reply.text
    assert chat.game(game).reminded == 1
    now[0] += MINUTE
    assert chat.service.tick() == []
    assert chat.service.tick() == []
    assert chat.game(game).status == "active"


def test_reminder_is_sent_once_even_after_a_restart(chat, game, now):
    now[0] += 55 * MINUTE
    assert len(chat.service.tick()) == 1
    chat.restart()
    assert chat.service.tick() == []


def test_a_move_resets_the_clock_and_the_reminder(chat, game, now):
    now[0] += 55 * MINUTE
    chat.service.tick()
    chat.say("ana", "/m 22-18")
    row = chat.game(game)
    assert row.deadline_at == now[0] + HOUR and row.reminded == 0
    now[0] += 54 * MINUTE
    out = chat.service.tick()
    assert len(out) == 1 and "Bob:" in out[0].reply.text


def test_side_to_move_loses_on_time(chat, game, now):
    now[0] += 55 * MINUTE
    chat.service.tick()
    now[0] += 5 * MINUTE + 1
    out = chat.service.tick()
    assert len(out) == 1
    text = out[0].reply.text
    assert en("game.over", id=game) in text and en("result.win.time", winner="Bob", loser="Ana") in text
    assert out[0].reply.image and [b.action for row in out[0].reply.buttons for b in row] == [f"rm:{game}"]
    row = chat.game(game)
    assert (row.status, row.result_score, row.result_reason, row.winner) == \
        ("finished", "0-1", "time", "B")
    assert row.deadline_at is None
    assert chat.service.tick() == []


def test_black_loses_on_time_after_whites_move(chat, game, now):
    chat.say("ana", "/m 22-18")
    now[0] += HOUR + 1
    out = chat.service.tick()
    assert len(out) == 1 and en("result.win.time", winner="Ana", loser="Bob") in out[0].reply.text
    assert chat.game(game).winner == "W"


def test_loss_on_time_without_a_reminder_first(chat, game, now):
    now[0] += 3 * HOUR
    out = chat.service.tick()
    assert len(out) == 1 and says(out[0].reply.text, "en", "result.win.time")
    assert chat.service.tick() == []


def test_loss_on_time_survives_a_restart(chat, game, now):
    chat.say("ana", "/m 22-18")
    moves_before = chat.moves(game)
    now[0] += HOUR + 1
    chat.service.tick()
    finished = chat.game(game)
    chat.restart()
    assert chat.game(game) == finished
    assert chat.moves(game) == moves_before
    assert chat.service.tick() == []
    assert en("result.win.time", winner="Ana", loser="Bob") in chat.text("bob", f"/board #{game}")
    before = chat.snapshot()
    assert en("err.game_over") in chat.text("bob", f"/m #{game} 11-15")
    assert chat.snapshot() == before


def test_move_after_the_deadline_is_not_played_even_before_the_tick(chat, game, now):
    # The clock ran out while nobody ticked (e.g. the bot was down): the late move must not
    # count, and the game is lost on time, whether the move or the next tick says so.
    now[0] += HOUR + 1
    chat.say("ana", "/m 22-18")
    chat.service.tick()
    row = chat.game(game)
    assert chat.moves(game) == []
    assert (row.status, row.result_reason, row.winner) == ("finished", "time", "B")


def test_tick_with_an_explicit_time(chat, game, now):
    assert len(chat.service.tick(now[0] + 55 * MINUTE)) == 1
    assert len(chat.service.tick(now[0] + HOUR + 1)) == 1
    assert chat.game(game).result_reason == "time"


@pytest.mark.parametrize("word", ["4m", "8d", "0m", "9999h", "1m"])
def test_bad_move_time_is_rejected(chat, word):
    replies = chat.say("ana", f"/new italian {word}")
    assert says(replies[0].text, "en", "new.bad_time", word=word)
    assert chat.rows("challenges") == []


@pytest.mark.parametrize("word, seconds", [("5m", 300), ("7d", 7 * 86400), ("30min", 1800), ("2ore", 7200),
                                           ("3dias", 3 * 86400)])
def test_move_time_limits_and_words(chat, word, seconds):
    cid = chat.challenge("ana", word)
    assert chat.storage.challenge(cid).move_seconds == seconds
