"""The board layer's state (bot/service/web.py): what the page is sent, for 8x8 and 10x10, with the
legal moves and their paths from the rules engine, for a player and for a spectator."""

from __future__ import annotations

import json

import pytest
from web_helpers import two_routes

from bot.rules import Position, get_variant
from bot.service.web import Seat


def seat(chat, game: int, user: str) -> Seat:
    return Seat(game, "test", user, chat.now[0] + 60)


@pytest.mark.parametrize(("variant", "size", "squares"), [("spanish", 8, 32), ("italian", 8, 32),
                                                          ("triestina", 10, 50)])
def test_the_state_of_a_new_game_is_json_with_the_chats_geometry(chat, variant, size, squares):
    game = chat.new_game(variant)
    state = chat.service.web.state(game, seat(chat, game, "ana"), "en")
    data = json.loads(json.dumps(state.to_json()))
    v = get_variant(variant)
    assert data["size"] == size and len(data["squares"]) == squares
    # Each square's place is the one the chat's pictures are drawn from (Variant.square_to_rc).
    assert all(list(v.square_to_rc(n)) == [r, c] for n, r, c in data["squares"])
    start = Position.start(variant)
    assert data["pieces"] == {str(sq): code for sq, code in start.pieces().items()}
    assert data["turn"] == "W" and data["you"] == "W" and data["flipped"] is False
    assert sorted(m["notation"] for m in data["moves"]) == sorted(str(m) for m in start.legal_moves())
    assert data["players"]["W"]["name"] == "Ana" and data["players"]["B"]["name"] == "Bob"
    assert data["captured"] == {"W": 0, "B": 0} and data["last_move"] is None
    assert data["status"] == "active" and data["deadline"] is not None and data["result"] is None
    assert "Ana" in data["status_text"]


def test_spanish_square_one_is_whites_lower_right(chat):
    game = chat.new_game("spanish")
    data = chat.service.web.state(game, None, "es").to_json()
    assert [1, 7, 7] in data["squares"] and [32, 0, 0] in data["squares"]
    italian = chat.service.web.state(chat.new_game("italian", "carl", "dora"), None, "it").to_json()
    assert [1, 0, 0] in italian["squares"]


def test_black_sees_the_board_from_its_side_and_gets_no_moves_while_white_is_to_move(chat):
    game = chat.new_game("italian")
    data = chat.service.web.state(game, seat(chat, game, "bob"), "en").to_json()
    assert data["you"] == "B" and data["flipped"] is True and data["moves"] == []


def test_a_spectator_gets_no_seat_and_no_moves(chat):
    game = chat.new_game("italian")
    data = chat.service.web.state(game, None, "en").to_json()
    assert data["you"] is None and data["moves"] == []
    # A seat of someone who does not play here is a spectator's too.
    assert chat.service.web.state(game, seat(chat, game, "eve"), "en").to_json()["you"] is None


@pytest.mark.parametrize("variant", ["italian", "spanish", "triestina"])
def test_two_capture_paths_to_one_square_are_two_moves(chat, variant):
    game = chat.new_game(variant)
    chat.set_position(game, two_routes(variant))
    data = chat.service.web.state(game, seat(chat, game, "ana"), "en").to_json()
    v = get_variant(variant)
    start, end = v.rc_to_square(6, 2), v.rc_to_square(2, 2)
    routes = [m for m in data["moves"] if m["path"][0] == start and m["path"][-1] == end]
    assert len(routes) == 2
    assert {tuple(m["path"]) for m in routes} == {(start, v.rc_to_square(4, 0), end),
                                                  (start, v.rc_to_square(4, 4), end)}
    assert {tuple(sorted(m["captured"])) for m in routes} == {
        tuple(sorted((v.rc_to_square(5, 1), v.rc_to_square(3, 1)))),
        tuple(sorted((v.rc_to_square(5, 3), v.rc_to_square(3, 3))))}
    assert all("x" in m["notation"] for m in routes)


def test_after_a_typed_move_the_state_shows_it_and_the_version_moved(chat):
    game = chat.new_game("italian")
    before = chat.service.web.version(game)
    move = str(Position.start("italian").legal_moves()[0])
    chat.say("ana", f"/m {move}")
    data = chat.service.web.state(game, seat(chat, game, "bob"), "en").to_json()
    assert data["version"] > before and data["ply"] == 1
    assert data["last_move"]["notation"] == move and data["turn"] == "B"
    assert data["moves"]                # Bob's turn now: his legal moves are sent
