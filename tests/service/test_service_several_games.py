"""Several games in one chat: a player with two games names #id or replies to the board."""

from __future__ import annotations

import pytest
from catalog_text import says
from harness import en


@pytest.fixture
def two_games(chat):
    """Ana plays white against Bob (game 1) and against Carol (game 2)."""
    first = chat.new_game("ana", "bob")
    second = chat.new_game("ana", "carol")
    return first, second


def test_player_with_two_games_must_say_which(chat, two_games):
    before = chat.snapshot()
    text = chat.text("ana", "/m 22-18")
    assert en("game.which") in text and "#1" in text and "#2" in text
    assert chat.snapshot() == before


def test_player_with_two_games_names_the_game_with_id(chat, two_games):
    first, second = two_games
    chat.say("ana", f"/m #{second} 22-18")
    assert chat.game(second).ply == 1 and chat.game(first).ply == 0
    chat.say("ana", f"/m 21-17 #{first}")     # the reference may come after the move
    assert chat.game(first).ply == 1 and chat.game(second).ply == 1


def test_player_with_two_games_replies_to_the_board(chat, two_games):
    first, second = two_games
    chat.service.remember_board(chat.platform, chat.chat_id, "msg-17", second)
    chat.service.remember_board(chat.platform, chat.chat_id, "msg-18", first)
    chat.say("ana", "/m 22-18", reply_to="msg-17")
    assert [m.notation for m in chat.moves(second)] == ["22-18"]
    assert chat.moves(first) == []
    chat.say("ana", "/m 23-19", reply_to="msg-18")
    assert [m.notation for m in chat.moves(first)] == ["23-19"]


def test_reply_to_an_unknown_message_still_asks_which(chat, two_games):
    before = chat.snapshot()
    assert en("game.which") in chat.text("ana", "/m 22-18", reply_to="msg-999")
    assert chat.snapshot() == before


def test_explicit_id_wins_over_the_replied_board(chat, two_games):
    first, second = two_games
    chat.service.remember_board(chat.platform, chat.chat_id, "msg-1", first)
    chat.say("ana", f"/m #{second} 22-18", reply_to="msg-1")
    assert chat.game(second).ply == 1 and chat.game(first).ply == 0


def test_opponents_with_one_game_need_no_id(chat, two_games):
    first, second = two_games
    chat.say("ana", f"/m #{first} 22-18")
    chat.say("ana", f"/m #{second} 22-18")
    chat.say("bob", "/m 11-15")
    chat.say("carol", "/m 12-15")
    assert [m.notation for m in chat.moves(first)] == ["22-18", "11-15"]
    assert [m.notation for m in chat.moves(second)] == ["22-18", "12-15"]


def test_player_cannot_move_in_a_game_of_others_by_id(chat, two_games):
    first, second = two_games
    chat.say("ana", f"/m #{first} 22-18")
    before = chat.snapshot()
    replies = chat.say("carol", f"/m #{first} 11-15")
    assert en("game.not_player", id=first) in replies[0].text
    assert chat.snapshot() == before


def test_game_id_of_another_chat_is_unknown(chat, two_games):
    first, _ = two_games
    before = chat.snapshot()
    assert f"no game #{first}" in chat.text("ana", f"/m #{first} 22-18", chat="elsewhere")
    assert chat.snapshot() == before


def test_board_and_resign_with_two_games(chat, two_games):
    first, second = two_games
    assert en("game.which") in chat.text("ana", "/resign")
    assert chat.say("ana", f"/board #{second}")[0].game_id == second
    chat.resign("ana", f"/resign #{second}")
    assert chat.game(second).status == "finished" and chat.game(first).status == "active"
    # Only one game left: no id needed any more.
    chat.say("ana", "/m 22-18")
    assert chat.game(first).ply == 1


def test_games_lists_both(chat, two_games):
    text = chat.text("dave", "/games")
    italian = en("variant.italian")
    assert says(text, "en", "games.line", id=1, variant=italian, white="Ana", black="Bob")
    assert says(text, "en", "games.line", id=2, variant=italian, white="Ana", black="Carol")
