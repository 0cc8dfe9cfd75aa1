"""Issue 28, item 5: the route numbers never sit on a piece that two drawn paths capture, and the
analysis picture's evaluation graph numbers its moves along the x axis."""

from __future__ import annotations

import io
import math

import pytest
from PIL import Image
from test_choosing import PX, numbering, rgb_png

from renderers import BoardView, square_center
from renderers import board as B
from renderers.panels import INK, MOVE_BAND, move_ticks, render_analysis

SHARED = (4, 2)          # the black man both jumps go over


def colour_share(img: Image.Image, centre: tuple[float, float], radius: float, colour) -> float:
    """The share of the pixels of a disc that are (about) ``colour``."""
    cx, cy = centre
    inside = [img.getpixel((x, y))
              for x in range(int(cx - radius), int(cx + radius) + 1)
              for y in range(int(cy - radius), int(cy + radius) + 1)
              if (x - cx) ** 2 + (y - cy) ** 2 <= radius ** 2]
    return sum(all(abs(a - b) <= 40 for a, b in zip(p, colour, strict=True)) for p in inside) / len(inside)


# Two men of one side that can both jump the same man (italian W:W21,22:B18 on this grid: 21x14
# and 22x13), as two numbered routes; and as the analysis draws it, the played 21x14 with its
# capture mark and the better 22x13 as route 1.
PIECES = {(5, 1): "w", (5, 3): "w", SHARED: "b", (1, 1): "b"}
TWO_ROUTES = [BoardView(8, PIECES, numbering(8), routes=[[(5, 1), (3, 3)], [(5, 3), (3, 1)]], flipped=flipped)
              for flipped in (False, True)]
PLAYED_AND_BEST = [BoardView(8, PIECES, numbering(8), last_path=[(5, 1), (3, 3)], captured=[SHARED],
                             routes=[[(5, 3), (3, 1)]], flipped=flipped) for flipped in (False, True)]


@pytest.mark.parametrize("view", TWO_ROUTES + PLAYED_AND_BEST)
def test_no_route_number_sits_on_a_piece_two_paths_capture(view):
    sq = PX // view.size
    img = rgb_png(view)
    radius = B._badge_radius(sq)
    piece = square_center(view.size, *SHARED, px=PX, flipped=view.flipped)
    spots = B.route_label_spots(view, PX)
    for i, spot in enumerate(spots):
        # The number is drawn where route_label_spots says (its disc is of the route's colour)...
        assert colour_share(img, spot, radius * 0.9, B.route_colour(i)) > 0.3
        # ...and its disc keeps off the shared piece entirely.
        assert math.dist(spot, piece) >= sq * B.PIECE_RADIUS + radius - 1, (i, spot, piece)
        # Neither on the destination nor on the start (the arrow's head and the piece stay seen).
        for end in (view.routes[i][0], view.routes[i][-1]):
            assert math.dist(spot, square_center(view.size, *end, px=PX, flipped=view.flipped)) > sq * 0.5
    # The shared piece shows no badge: only the thin lines cross it.
    for i in range(len(spots)):
        assert colour_share(img, piece, radius * 0.9, B.route_colour(i)) < 0.25


def test_a_route_whose_only_jump_is_its_own_still_gets_its_number_on_that_jump():
    # One route over a piece no other path takes: the number stays half way, as before.
    view = BoardView(8, PIECES, numbering(8), routes=[[(5, 3), (3, 1)]])
    [spot] = B.route_label_spots(view, PX)
    assert math.dist(spot, square_center(8, *SHARED, px=PX)) < PX // 8 * 0.2


# -- the evaluation graph's move numbers -----------------------------------------------------------


def test_move_ticks_follow_the_moves():
    # One point per ply: move n is White's ply 2n-2; with Black first, ply 0 is move 1 (Black's).
    ticks = move_ticks(40)
    assert ticks[0] == (0, 1)
    assert all(index == 2 * (number - 1) for index, number in ticks)
    assert 4 <= len(ticks) <= 12
    black_first = move_ticks(41, black_first=True)
    assert all(index == 2 * (number - 1) - 1 for index, number in black_first if number > 1)
    assert move_ticks(1) == [(0, 1)]
    assert len(move_ticks(400)) <= 12


def dark_columns(img: Image.Image, y0: int, y1: int) -> set[int]:
    return {x for x in range(img.width) for y in range(y0, y1)
            if all(abs(a - b) <= 60 for a, b in zip(img.getpixel((x, y)), INK, strict=True))}


@pytest.mark.parametrize("plies", [12, 60, 161])
def test_the_graph_has_move_numbers_under_their_points(plies):
    evaluations = [math.sin(i / 5) * 300 for i in range(plies)]
    img = Image.open(io.BytesIO(render_analysis([], [], evaluations, title="Analysis",
                                                graph_title="Evaluation"))).convert("RGB")
    # The band below the graph's frame holds the move numbers: dark text around each tick's x.
    band = dark_columns(img, img.height - 12 - MOVE_BAND + 1, img.height)
    assert band, "no move numbers under the graph"
    ticks = move_ticks(plies)
    left, right = 12 + 28 + 3, img.width - 12 - 3
    for index, _number in ticks:
        x = left + (right - left) * index / (plies - 1)
        assert any(abs(x - c) <= 8 for c in band), (index, x)


@pytest.mark.parametrize("view", TWO_ROUTES + PLAYED_AND_BEST)
def test_a_number_beside_a_shared_piece_stands_on_the_side_its_own_jump_lands(view):
    # Route 1 of the analysis view is 22x13 while the played 21x14 goes the other way: a number
    # put on the 14 side read as the played move's.
    spots = B.route_label_spots(view, PX)
    for i, spot in enumerate(spots):
        own = square_center(view.size, *view.routes[i][-1], px=PX, flipped=view.flipped)
        for other in [r for j, r in enumerate(view.routes) if j != i] + ([view.last_path] if view.last_path else []):
            theirs = square_center(view.size, *other[-1], px=PX, flipped=view.flipped)
            assert math.dist(spot, own) < math.dist(spot, theirs), (i, spot)
