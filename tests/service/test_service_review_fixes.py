"""Cases found in review: each was a real defect once."""

from __future__ import annotations

import dataclasses
import threading

from catalog_text import says
from harness import en

from bot.rules import Move, Position
from bot.rules.notation import looks_like_move
from bot.storage import MIGRATIONS, Storage


def finishes_within(seconds: float, call) -> bool:
    """Run a call in a thread; whether it returned in time (an exponential regex never does)."""
    done = threading.Event()
    threading.Thread(target=lambda: (call(), done.set()), daemon=True).start()
    return done.wait(seconds)


def test_adversarial_spaces_in_a_message_are_answered_at_once(chat):
    chat.new_game()
    text = "1" + "  1" * 60 + " x"
    # Exponential backtracking took seconds at 70 characters and doubled every two more.
    assert finishes_within(10, lambda: chat.say("ana", text))
    assert finishes_within(10, lambda: chat.say("ana", "/m " + text))
    assert not looks_like_move(text)


def test_a_bare_move_with_an_em_dash_or_tab_is_played(chat):
    game_id = chat.new_game()
    assert en("move.played", name="Ana", move="22-18", id=game_id) in chat.text("ana", "22\u201418")
    assert en("move.played", name="Bob", move="11-15", id=game_id) in chat.text("bob", "11\t-\t15")
    assert chat.game(game_id).ply == 2


def test_stray_words_after_resign_change_nothing(chat):
    game_id = chat.new_game()
    before = chat.snapshot()
    answer = chat.text("ana", "/resign maybe later")
    assert "/resign" in answer and "#3" in answer
    assert chat.snapshot() == before and chat.game(game_id).status == "active"


def test_a_bare_number_names_the_challenge(chat):
    first = chat.challenge("ana", "italian")
    chat.challenge("carl", "spanish")
    assert says(chat.text("bob", f"/accept {first}"), "en", "game.started", id=1, variant=en("variant.italian"))
    assert chat.game(1).variant == "italian"


def test_commands_addressed_to_another_bot_are_ignored(chat):
    game_id = chat.new_game()
    before = chat.snapshot()
    event = dataclasses.replace(chat.event("ana", "/resign@SomeOtherBot"), bot_username="DraughtsBot")
    assert chat.check(chat.service.handle(event)) == []
    assert chat.snapshot() == before
    event = dataclasses.replace(chat.event("ana", "/board@DraughtsBot"), bot_username="draughtsbot")
    assert chat.check(chat.service.handle(event))[0].game_id == game_id


def test_a_move_sent_before_the_deadline_but_delivered_late_is_played(chat):
    game_id = chat.new_game(extra="1h")
    sent = chat.now[0] + 3500
    chat.now[0] += 3700           # the bot was down; the update arrives after the deadline
    event = dataclasses.replace(chat.event("ana", "/m 22-18"), sent_at=sent)
    assert en("move.played", name="Ana", move="22-18", id=game_id) in chat.check(chat.service.handle(event))[0].text
    row = chat.game(game_id)
    assert row.status == "active" and row.ply == 1


def test_a_move_sent_after_the_deadline_loses_on_time(chat):
    game_id = chat.new_game(extra="1h")
    chat.now[0] += 3700
    event = dataclasses.replace(chat.event("ana", "/m 22-18"), sent_at=chat.now[0] - 10)
    assert en("result.win.time", winner="Bob", loser="Ana") in chat.check(chat.service.handle(event))[0].text
    assert chat.moves(game_id) == [] and chat.game(game_id).result_reason == "time"


def test_a_move_right_after_the_game_ended_says_it_is_over(chat):
    game_id = chat.new_game()
    chat.resign("bob")
    before = chat.snapshot()
    answer = chat.text("ana", "/m 22-18")
    assert en("game.over", id=game_id) in answer and en("result.win.resign", winner="Ana", loser="Bob") in answer
    assert chat.snapshot() == before


def test_play_accepts_every_route_of_a_merged_capture():
    pos = Position.from_fen("spanish", "W:WK23:BK2,K3,K4,K5,K7,K11,13,17,K19,K21,K24,K28,32")
    legal = next(m for m in pos.legal_moves() if (m.start, m.end) == (23, 1))
    other_route = Move((23, 10, 1), legal.captured, legal.promotes)
    assert pos.play(other_route) == pos.play(legal)


def test_reopening_a_database_runs_no_migration_twice(tmp_path):
    path = tmp_path / "d.db"
    Storage(path).close()
    again = Storage(path)
    assert again.schema_version == len(MIGRATIONS)
    again.close()


def test_each_platform_ticks_only_its_own_games(chat):
    game_id = chat.new_game(extra="1h")
    chat.now[0] += 3700
    assert chat.service.tick(platform="telegram") == []
    assert chat.game(game_id).status == "active"
    out = chat.service.tick(platform=chat.platform)
    assert [o.chat_id for o in out] == [chat.chat_id]
    assert chat.game(game_id).result_reason == "time"


def test_a_chat_moving_onto_an_id_that_already_has_a_row_merges(chat):
    game_id = chat.new_game()
    chat.say("ana", "/games", chat="new-id")          # the new chat already exists
    chat.service.chat_moved(chat.platform, chat.chat_id, "new-id")
    assert chat.storage.game(game_id).chat_id == "new-id"
    assert chat.storage.chat(chat.platform, chat.chat_id) is None
    assert chat.storage.chat(chat.platform, "new-id") is not None
