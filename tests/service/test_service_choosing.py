"""Choosing a move with buttons: the pictures on the way (issue 6, item 14).

Several capture routes ending on one square are drawn numbered, matching the path buttons; the
opponent's last move stays drawn while choosing; a double tap on the button that played the move
does not call the (current) board out of date."""

from __future__ import annotations

import io

import pytest
from harness import en
from PIL import Image

from bot.rules import Position
from bot.rules.variants import get_variant
from renderers import board as B

# Italian, black to move after these plies: the man on 15 takes two ways to 31 (15x22x31, 15x24x31).
TWO_PATHS = ("22-18 11-15 27-22 10-13 30-27 15-19 23x14 5-10 14x5 1x10 22-19 13x22 27x18 7-11 31-27 "
             "11-15 24-20").split()
# Spanish, white to move: the king on 3 takes five men three ways, all ending on 20.
THREE_PATHS_FEN = "W:WK3:B14,15,22,23,5,7,10"
THREE_PATHS = ["3x16x27x9x2x20", "3x16x27x13x6x20", "3x16x27x18x11x20"]


def image(data: bytes) -> Image.Image:
    img = Image.open(io.BytesIO(data))
    img.load()
    return img.convert("RGB")


def colour_pixels(img: Image.Image, colour, tol: int = 30) -> int:
    """Pixels of the picture close to ``colour``."""
    return sum(count for count, rgb in img.getcolors(img.width * img.height)
               if all(abs(a - b) <= tol for a, b in zip(rgb, colour, strict=True)))


def buttons(reply):
    return [b for row in reply.buttons for b in row]


def corner_pixels(reply, variant: str, square: int, flipped: bool) -> list[tuple[int, int, int]]:
    """Pixels near the four corners of a square (a move's arrow crosses two of them)."""
    v = get_variant(variant)
    x0, y0, x1, y1 = B.square_box(v.size, *v.square_to_rc(square), px=600, flipped=flipped)
    picture = image(reply.image)
    return [picture.getpixel(xy) for xy in ((x1 - 4, y0 + 4), (x1 - 4, y1 - 4), (x0 + 4, y1 - 4))]


@pytest.fixture
def two_paths(chat):
    game = chat.new_game("ana", "bob", "italian")
    chat.play(game, TWO_PATHS)
    return game


@pytest.fixture
def three_paths(chat):
    """A spanish game set up at a position where a king has three routes to one square."""
    game = chat.new_game("ana", "bob", "spanish")
    row = chat.game(game)
    chat.storage.update_game(game, row.version, {"fen": THREE_PATHS_FEN, "start_fen": THREE_PATHS_FEN})
    return game


def to_paths(chat, game: int, user: str, start: int, end: int):
    """Touch the piece, then the square: the paths screen."""
    ply = chat.game(game).ply
    board = chat.say(user, f"/board #{game}")[0]
    select = chat.press(user, f"s:{game}:{ply}:{start}")[0]
    paths = chat.press(user, f"d:{game}:{ply}:{start}:{end}")[0]
    return board, select, paths


def test_two_paths_are_numbered_buttons_and_numbered_routes(chat, two_paths):
    pos = chat.position(two_paths)
    legal = pos.legal_moves()
    same = [m for m in legal if (m.start, m.end) == (15, 31)]
    _, select, paths = to_paths(chat, two_paths, "bob", 15, 31)
    path_buttons = [b for b in buttons(paths) if b.action.startswith("m:")]
    assert [b.label for b in path_buttons] == [f"{n}: {m}" for n, m in enumerate(same, 1)]
    assert [b.command for b in path_buttons] == [f"/m {m}" for m in same]
    ply = len(TWO_PATHS)
    assert [b.action for b in path_buttons] == [f"m:{two_paths}:{ply}:{legal.index(m)}" for m in same]
    picture = image(paths.image)
    # Route 1 and route 2 are drawn, in their colours; there is no third.
    assert colour_pixels(picture, B.route_colour(0)) > 300
    assert colour_pixels(picture, B.route_colour(1)) > 300
    assert colour_pixels(picture, B.route_colour(2)) < 30
    # The select screen before it draws no routes.
    assert colour_pixels(image(select.image), B.route_colour(0)) < 30


def test_three_paths_of_a_spanish_king(chat, three_paths):
    _, _, paths = to_paths(chat, three_paths, "ana", 3, 20)
    assert paths.replaces_board and en("select.path") in paths.text
    path_buttons = [b for b in buttons(paths) if b.action.startswith("m:")]
    assert [b.label for b in path_buttons] == [f"{n}: {m}" for n, m in enumerate(THREE_PATHS, 1)]
    picture = image(paths.image)
    for i in range(3):
        assert colour_pixels(picture, B.route_colour(i)) > 300, i
    assert colour_pixels(picture, B.route_colour(3)) < 30
    # Button 3 plays route 3.
    reply = chat.press("ana", path_buttons[2].action)[0]
    assert en("move.played", name="Ana", move=THREE_PATHS[2], id=three_paths) in reply.text
    assert chat.moves(three_paths)[-1].notation == THREE_PATHS[2]


def test_two_and_three_paths_pictures_differ(chat, two_paths, three_paths):
    _, _, two = to_paths(chat, two_paths, "bob", 15, 31)
    _, _, three = to_paths(chat, three_paths, "ana", 3, 20)
    drawn = [[colour_pixels(image(r.image), B.route_colour(i)) > 300 for i in range(4)] for r in (two, three)]
    assert drawn == [[True, True, False, False], [True, True, True, False]]


def test_last_move_stays_drawn_while_choosing(chat, two_paths):
    board, select, paths = to_paths(chat, two_paths, "bob", 15, 31)
    # White's last move was 24-20: its squares are highlighted on all three pictures (routes
    # drawn over a square on the paths screen hide part of it).
    plain = colour_pixels(image(board.image), B.LAST_MOVE_SQUARE, tol=0)
    assert plain > 2 * 0.5 * (600 // 8) ** 2
    for reply in (select, paths):
        assert colour_pixels(image(reply.image), B.LAST_MOVE_SQUARE, tol=0) > 0.6 * plain, reply.text
    corners = corner_pixels(select, "italian", 20, flipped=True)
    assert corners.count(B.LAST_MOVE_SQUARE) >= 2, corners
    # And the arrow of that move is still there (the last-move blue).
    for reply in (select, paths):
        assert colour_pixels(image(reply.image), B.PATH_RGBA[:3], tol=40) > 100


def test_select_screen_after_a_capture_still_marks_the_captured_square(chat):
    game = chat.new_game("ana", "bob", "italian")
    chat.play(game, TWO_PATHS[:7])                 # White's last move, 23x14, took a man
    plain = chat.say("bob", "/board")[0]
    start = sorted({m.start for m in chat.position(game).legal_moves()})[0]
    select = chat.press("bob", f"s:{game}:7:{start}")[0]
    red = [colour_pixels(image(r.image), B.CAPTURE_RGB, tol=40) for r in (plain, select)]
    assert red[0] > 50 and red[1] > 0.8 * red[0], red


# -- double tap --------------------------------------------------------------------------------


def test_double_tap_on_a_destination_does_not_call_the_board_out_of_date(chat):
    game = chat.new_game("ana", "bob", "italian")
    chat.press("ana", f"s:{game}:0:22")
    first = chat.press("ana", f"d:{game}:0:22:18")[0]
    after_first = chat.snapshot()
    second = chat.press("ana", f"d:{game}:0:22:18")
    assert len(second) == 1
    again = second[0]
    assert en("button.stale") not in again.text
    # The board the second tap landed on already shows the move: the same picture and words.
    assert again.text == first.text and again.image == first.image
    assert again.replaces_board and [b.action for b in buttons(again)] == [b.action for b in buttons(first)]
    assert again.animation is None
    assert chat.snapshot() == after_first
    assert [m.notation for m in chat.moves(game)] == ["22-18"]


def test_double_tap_on_a_path_button_does_not_call_the_board_out_of_date(chat, two_paths):
    _, _, paths = to_paths(chat, two_paths, "bob", 15, 31)
    chosen = [b for b in buttons(paths) if b.action.startswith("m:")][1]
    first = chat.press("bob", chosen.action)[0]
    after_first = chat.snapshot()
    again = chat.press("bob", chosen.action)[0]
    assert en("button.stale") not in again.text and again.text == first.text
    assert chat.snapshot() == after_first


def test_old_buttons_are_still_out_of_date(chat):
    game = chat.new_game("ana", "bob", "italian")
    chat.press("ana", f"s:{game}:0:22")
    chat.press("ana", f"d:{game}:0:22:18")
    before = chat.snapshot()
    # Another destination of the same old screen: not what was played.
    assert en("button.stale") in chat.press("ana", f"d:{game}:0:22:19")[0].text
    # The piece button of the old board.
    assert en("button.stale") in chat.press("ana", f"s:{game}:0:22")[0].text
    # The opponent pressing the mover's old button.
    assert en("button.stale") in chat.press("bob", f"d:{game}:0:22:18")[0].text
    assert chat.snapshot() == before
    # Once the opponent has answered, the mover's button is two plies old.
    chat.say("bob", "/m 11-15")
    before = chat.snapshot()
    assert en("button.stale") in chat.press("ana", f"d:{game}:0:22:18")[0].text
    assert chat.snapshot() == before


def test_repeat_press_in_a_game_set_up_from_a_position(chat, three_paths):
    """The first move of a game that started from a position: the position before it is the start."""
    _, _, paths = to_paths(chat, three_paths, "ana", 3, 20)
    chosen = [b for b in buttons(paths) if b.action.startswith("m:")][0]
    first = chat.press("ana", chosen.action)[0]
    again = chat.press("ana", chosen.action)[0]
    assert en("button.stale") not in again.text and again.text == first.text
    assert Position.from_fen("spanish", chat.game(three_paths).fen).turn == "B"
