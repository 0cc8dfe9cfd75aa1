"""Buttons: touch a piece, then its square (and the path when captures share both ends)."""

from __future__ import annotations

import io

import pytest
from catalog_text import says
from harness import en
from PIL import Image

from bot.rules import Position

# An italian game (black to move after these 17 plies) in which black's man on 15 has two
# captures that both end on 31: 15x22x31 and 15x24x31 (different pieces taken).
TWO_PATHS = ("22-18 11-15 27-22 10-13 30-27 15-19 23x14 5-10 14x5 1x10 22-19 13x22 27x18 7-11 31-27 "
             "11-15 24-20").split()
TWO_PATHS_START, TWO_PATHS_END = 15, 31


def _image(data: bytes) -> Image.Image:
    img = Image.open(io.BytesIO(data))
    img.load()
    return img


@pytest.fixture
def game(chat):
    """Ana (white) against Bob (black), italian, White to move at ply 0."""
    return chat.new_game("ana", "bob", "italian")


@pytest.fixture
def two_paths_game(chat):
    game_id = chat.new_game("ana", "bob", "italian")
    chat.play(game_id, TWO_PATHS)
    return game_id


def test_board_buttons_are_the_pieces_that_can_move(chat, game, actions_of):
    reply = chat.say("ana", "/board")[0]
    starts = sorted({m.start for m in chat.position(game).legal_moves()})
    assert starts == [21, 22, 23, 24]
    assert actions_of(reply) == [f"s:{game}:0:{sq}" for sq in starts]
    assert [b.label for row in reply.buttons for b in row] == [str(sq) for sq in starts]


def test_board_buttons_when_a_capture_is_compulsory_are_only_the_capturing_pieces(chat, game, actions_of):
    chat.play(game, ["24-20", "11-14", "23-19"])
    reply = chat.say("bob", "/board")[0]
    assert actions_of(reply) == [f"s:{game}:3:14"]


def test_pressing_a_piece_shows_its_destinations_with_dots(chat, game, actions_of):
    board = chat.say("ana", "/board")[0]
    before = chat.snapshot()
    reply = chat.press("ana", f"s:{game}:0:22")[0]
    assert reply.replaces_board and reply.game_id == game
    assert "22" in reply.text
    ends = sorted(m.end for m in chat.position(game).legal_moves() if m.start == 22)
    assert ends == [18, 19]
    assert actions_of(reply) == [f"d:{game}:0:22:{end}" for end in ends] + [f"p:{game}:0"]
    commands = [b.command for row in reply.buttons for b in row]
    assert commands[:2] == [f"/m 22-{end}" for end in ends]
    # The dots are drawn: same size as the board, different pixels.
    picture, plain = _image(reply.image), _image(board.image)
    assert picture.size == plain.size
    assert picture.convert("RGB").tobytes() != plain.convert("RGB").tobytes()
    assert chat.snapshot() == before


def test_pressing_a_destination_plays_the_move(chat, game, actions_of):
    chat.press("ana", f"s:{game}:0:22")
    reply = chat.press("ana", f"d:{game}:0:22:18")[0]
    assert reply.replaces_board
    assert en("move.played", name="Ana", move="22-18", id=game) in reply.text
    assert [m.notation for m in chat.moves(game)] == ["22-18"]
    assert chat.game(game).ply == 1
    # The new board offers Black's pieces at ply 1.
    assert all(a.startswith(f"s:{game}:1:") for a in actions_of(reply))


def test_back_button_shows_the_board_again(chat, game, actions_of):
    chat.press("ana", f"s:{game}:0:22")
    reply = chat.press("ana", f"p:{game}:0")[0]
    assert reply.replaces_board
    assert actions_of(reply) == [f"s:{game}:0:{sq}" for sq in (21, 22, 23, 24)]
    assert chat.game(game).ply == 0


def test_capture_with_two_paths_offers_path_buttons(chat, two_paths_game, actions_of):
    game = two_paths_game
    ply = len(TWO_PATHS)
    pos = chat.position(game)
    same_ends = [m for m in pos.legal_moves() if (m.start, m.end) == (TWO_PATHS_START, TWO_PATHS_END)]
    assert len(same_ends) == 2 and same_ends[0].captured != same_ends[1].captured

    board = chat.say("bob", "/board")[0]
    assert f"s:{game}:{ply}:{TWO_PATHS_START}" in actions_of(board)
    select = chat.press("bob", f"s:{game}:{ply}:{TWO_PATHS_START}")[0]
    destinations = [b for row in select.buttons for b in row if b.action.startswith("d:")]
    assert [b.action for b in destinations] == [f"d:{game}:{ply}:{TWO_PATHS_START}:{TWO_PATHS_END}"]
    assert destinations[0].command is None        # one destination, two moves: no single command

    before = chat.snapshot()
    paths = chat.press("bob", destinations[0].action)[0]
    assert chat.snapshot() == before               # choosing the square plays nothing yet
    assert paths.replaces_board and en("select.path") in paths.text
    path_buttons = [b for row in paths.buttons for b in row if b.action.startswith("m:")]
    # Numbered like the routes drawn on the board: "1: 15x22x31", "2: 15x24x31".
    assert [b.label for b in path_buttons] == [f"{n}: {m}" for n, m in enumerate(same_ends, 1)]
    assert sorted(b.command for b in path_buttons) == sorted(f"/m {m}" for m in same_ends)

    chosen = path_buttons[1]
    reply = chat.press("bob", chosen.action)[0]
    notation = chosen.command.removeprefix("/m ")
    assert en("move.played", name="Bob", move=notation, id=game) in reply.text
    assert chat.moves(game)[-1].notation == notation
    move = next(m for m in same_ends if str(m) == notation)
    assert chat.position(game) == pos.play(move)
    # A two-piece capture comes with its animation.
    gif = _image(reply.animation)
    assert gif.format == "GIF" and gif.n_frames > 1


def test_every_action_string_fits_in_64_bytes(chat, two_paths_game, actions_of):
    game = chat.new_game("carol", "dave", "triestina")
    ply = 0
    for sq in sorted({m.start for m in chat.position(game).legal_moves()}):
        chat.press("carol", f"s:{game}:{ply}:{sq}")
    chat.say("carol", "/new triestina @dave 7d")
    chat.say("carol", f"/draw #{game}")
    chat.press("bob", f"s:{two_paths_game}:{len(TWO_PATHS)}:{TWO_PATHS_START}")
    chat.press("bob", f"d:{two_paths_game}:{len(TWO_PATHS)}:{TWO_PATHS_START}:{TWO_PATHS_END}")
    kinds = {a.split(":")[0] for a in chat.actions}
    assert kinds >= {"s", "d", "p", "m", "acc", "dec", "dr"}
    assert all(len(a.encode("utf-8")) <= 64 for a in chat.actions)


def test_stale_piece_button_gets_a_fresh_board(chat, game, actions_of):
    chat.say("ana", "/m 22-18")
    before = chat.snapshot()
    reply = chat.press("ana", f"s:{game}:0:21")[0]
    assert en("button.stale") in reply.text
    assert reply.replaces_board and reply.image
    assert all(a.startswith(f"s:{game}:1:") for a in actions_of(reply))
    assert chat.snapshot() == before


def test_stale_destination_button_plays_nothing(chat, game):
    chat.say("ana", "/m 22-18")
    chat.say("bob", "/m 11-15")
    before = chat.snapshot()
    reply = chat.press("ana", f"d:{game}:0:23:19")[0]    # legal at ply 0, ply is now 2
    assert en("button.stale") in reply.text
    assert chat.snapshot() == before


def test_stale_path_button_plays_nothing(chat, two_paths_game):
    game = two_paths_game
    ply = len(TWO_PATHS)
    chat.say("bob", "/m 15x22x31")
    before = chat.snapshot()
    assert en("button.stale") in chat.press("ana", f"m:{game}:{ply}:0")[0].text
    assert chat.snapshot() == before


def test_button_pressed_by_the_player_not_to_move_gets_a_private_answer(chat, game):
    before = chat.snapshot()
    replies = chat.press("bob", f"s:{game}:0:22")
    assert len(replies) == 1 and replies[0].private
    assert en("err.not_your_turn", name="Ana", to_name=en("name.to_vowel", name="Ana")) in replies[0].text
    replies = chat.press("bob", f"d:{game}:0:22:18")
    assert replies[0].private and says(replies[0].text, "en", "err.not_your_turn")
    assert chat.snapshot() == before


def test_button_pressed_by_a_spectator_gets_a_private_answer(chat, game):
    before = chat.snapshot()
    for action in (f"s:{game}:0:22", f"d:{game}:0:22:18", f"p:{game}:0", f"m:{game}:0:0"):
        replies = chat.press("carol", action)
        assert len(replies) == 1 and replies[0].private, action
        assert en("game.not_player", id=game) in replies[0].text
    assert chat.snapshot() == before


def test_button_of_a_finished_game(chat, game):
    chat.resign("bob")
    before = chat.snapshot()
    replies = chat.press("ana", f"d:{game}:0:22:18")
    assert replies[0].private and en("err.game_over") in replies[0].text
    assert chat.snapshot() == before


def test_button_of_a_game_in_another_chat(chat, game):
    before = chat.snapshot()
    replies = chat.press("ana", f"d:{game}:0:22:18", chat="elsewhere")
    assert replies[0].private and en("game.unknown", id=game) in replies[0].text
    assert chat.snapshot() == before


GARBAGE_ACTIONS = [
    "", "x", "s", "s:", "s:1", "s:1:0", "s:a:b:c", "s:1:0:22:5", "d:1:0:22", "d:1:0:22:18:7", "m:1:0",
    "m:1:0:-1", "m:1:0:99", "d:1:0:22:99", "d:1:0:99:18", "s:1:0:99", "s:1:0:0", "zz:1:0:22", "acc:", "acc:abc",
    "acc:99", "dec:99", "dr:99", "dr:1:2", "p:99:0", "p:1", "s:1:0:22\x00", " s:1:0:22", "s:1:0:22 ",
    "🙂:1:0:22", "s:1:0:🙂", "s:1:0:1234567890", "d:1:0:22:18" + "0" * 100, "x" * 10_000,
    "s:" + ":".join(["1"] * 40), "s:1:99999999999999999999:22", "\u200fs:1:0:22", "s:1:0:22\u202e",
]


@pytest.mark.parametrize("action", GARBAGE_ACTIONS, ids=[repr(a[:24]) for a in GARBAGE_ACTIONS])
def test_garbage_action_gets_a_clear_answer_and_changes_nothing(chat, game, action):
    assert game == 1
    before = chat.snapshot()
    replies = chat.press("ana", action)
    assert replies and all(r.text.strip() for r in replies)
    assert chat.snapshot() == before


def test_button_with_a_superscript_digit_gets_a_clear_answer(chat, game):
    # str.isdigit() is true for '²' but int('²') fails: the action must still be refused cleanly.
    before = chat.snapshot()
    replies = chat.press("ana", f"s:{game}:0:²")
    assert replies and replies[0].private
    assert en("button.invalid") in replies[0].text
    assert chat.snapshot() == before


def test_piece_buttons_in_a_spanish_game(chat, actions_of):
    game = chat.new_game("ana", "bob", "spanish")
    reply = chat.say("ana", "/board")[0]
    pos = Position.start("spanish")
    assert actions_of(reply) == [f"s:{game}:0:{sq}" for sq in sorted({m.start for m in pos.legal_moves()})]
    first = pos.legal_moves()[0]
    chat.press("ana", f"s:{game}:0:{first.start}")
    chat.press("ana", f"d:{game}:0:{first.start}:{first.end}")
    assert [m.notation for m in chat.moves(game)] == [str(first)]
