"""Pixel tests of the pictures shown while a player chooses a move: destination markers and
numbered capture routes that end on one square."""

from __future__ import annotations

import io
import math

import pytest
from PIL import Image

from renderers import BoardView, render_png, square_center
from renderers import board as B

PX = 600
sizes_and_sides = pytest.mark.parametrize(("size", "flipped"), [(8, False), (8, True), (10, False), (10, True)])


def numbering(size: int) -> dict[tuple[int, int], int]:
    dark = [(r, c) for r in range(size) for c in range(size) if (r + c) % 2 == 0]
    return {sq: i + 1 for i, sq in enumerate(dark)}


def rgb_png(view: BoardView) -> Image.Image:
    img = Image.open(io.BytesIO(render_png(view, PX)))
    img.load()
    return img.convert("RGB")


def close(a, b, tol: int) -> bool:
    return all(abs(x - y) <= tol for x, y in zip(a, b, strict=True))


def relative_luminance(rgb) -> float:
    def channel(v: int) -> float:
        c = v / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(v) for v in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a, b) -> float:
    """WCAG contrast ratio (1 to 21)."""
    la, lb = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def disc(img: Image.Image, centre: tuple[float, float], radius: float) -> list[tuple[int, int, int]]:
    cx, cy = centre
    r = int(radius)
    return [img.getpixel((x, y))
            for x in range(max(0, int(cx) - r), min(img.width, int(cx) + r + 1))
            for y in range(max(0, int(cy) - r), min(img.height, int(cy) + r + 1))
            if (x - cx) ** 2 + (y - cy) ** 2 <= radius ** 2]


# --- destination markers --------------------------------------------------------------------


def marker_view(size: int, flipped: bool) -> tuple[BoardView, dict[str, tuple[int, int]]]:
    """Markers on an empty dark square, a light square, a white piece and a black piece."""
    where = {"dark": (size - 2, 2), "light": (size - 2, 3), "white": (2, 2), "black": (3, 3)}
    pieces = {where["white"]: "w", where["black"]: "b"}
    return BoardView(size, pieces, {}, dots=list(where.values()), flipped=flipped), where


@sizes_and_sides
def test_marker_stands_out_on_dark_and_light_squares_and_on_pieces(size, flipped):
    view, where = marker_view(size, flipped)
    img = rgb_png(view)
    sq = PX // size
    plain = rgb_png(BoardView(size, view.pieces, {}, flipped=flipped))
    for name, square in where.items():
        centre = square_center(size, *square, px=PX, flipped=flipped)
        background = plain.getpixel(centre)
        inside = disc(img, centre, sq * 0.19)
        best = max(contrast(p, background) for p in inside)
        # A light ring on dark ground and a dark rim on light ground: strong contrast either way.
        assert best >= 3.0, (name, best)
        # Both a light and a dark part, whatever is underneath.
        assert max(relative_luminance(p) for p in inside) > 0.75, name
        assert min(relative_luminance(p) for p in inside) < 0.05, name


@sizes_and_sides
def test_marker_is_big_enough_and_leaves_the_square_edge_alone(size, flipped):
    view, where = marker_view(size, flipped)
    img = rgb_png(view)
    sq = PX // size
    x0, y0, x1, y1 = B.square_box(size, *where["dark"], px=PX, flipped=flipped)
    cy = (y0 + y1) // 2
    changed = [x for x in range(x0, x1) if not close(img.getpixel((x, cy)), B.DARK_SQUARE, 6)]
    assert max(changed) - min(changed) + 1 >= 0.36 * sq
    for x, y in ((x0 + 2, y0 + sq // 2), (x1 - 3, y1 - 3), (x0 + sq // 2, y1 - 3)):
        assert close(img.getpixel((x, y)), B.DARK_SQUARE, 4)


def test_marker_centre_is_darker_than_a_dark_square():
    """The centre stays dark, so the marker reads as a hole to move into, not as a piece."""
    img = rgb_png(BoardView(8, {}, {}, dots=[(4, 4)]))
    centre = img.getpixel(square_center(8, 4, 4, px=PX))
    assert relative_luminance(centre) < relative_luminance(B.DARK_SQUARE) * 0.7


# --- numbered routes ------------------------------------------------------------------------

# Three king captures (Spanish rules) from (7, 3) that all end on (3, 1); they share the first
# two hops and then part.  Captured men stand half way along each hop.
SHARED_ROUTES = [
    [(7, 3), (4, 0), (1, 3), (5, 7), (7, 5), (3, 1)],
    [(7, 3), (4, 0), (1, 3), (4, 6), (6, 4), (3, 1)],
    [(7, 3), (4, 0), (1, 3), (3, 5), (5, 3), (3, 1)],
]
SHARED_MEN = [(6, 2), (2, 2), (4, 4), (4, 2), (2, 4), (5, 5), (6, 6)]
# Two man captures of a 10x10 board ending on one square through different landing squares.
DIAMOND_ROUTES = [[(6, 4), (4, 6), (2, 4)], [(6, 4), (4, 2), (2, 4)]]
DIAMOND_MEN = [(5, 5), (3, 5), (5, 3), (3, 3)]


def route_view(size: int, flipped: bool) -> BoardView:
    if size == 8:
        routes, men, king = SHARED_ROUTES, SHARED_MEN, "W"
    else:
        routes, men, king = DIAMOND_ROUTES, DIAMOND_MEN, "w"
    pieces = {sq: "b" for sq in men} | {routes[0][0]: king}
    return BoardView(size, pieces, numbering(size), dots=[routes[0][-1]], selected=routes[0][0],
                     routes=routes, flipped=flipped)


def colour_near(img: Image.Image, point: tuple[float, float], radius: float, colour, tol: int = 36) -> int:
    """How many pixels within ``radius`` of ``point`` are close to ``colour``."""
    return sum(close(p, colour, tol) for p in disc(img, point, radius))


@sizes_and_sides
def test_each_route_is_drawn_in_its_colour_along_all_its_hops(size, flipped):
    view = route_view(size, flipped)
    img = rgb_png(view)
    sq = PX // size
    for i, route in enumerate(view.routes):
        colour = B.route_colour(i)
        for a, b in zip(route, route[1:], strict=False):
            (ax, ay), (bx, by) = (square_center(size, *s, px=PX, flipped=flipped) for s in (a, b))
            for t in (0.3, 0.5, 0.7):
                point = (ax + (bx - ax) * t, ay + (by - ay) * t)
                assert colour_near(img, point, sq * 0.3, colour) >= 6, (i, a, b, t)


def test_routes_sharing_a_stretch_all_stay_visible_there():
    view = route_view(8, False)
    img = rgb_png(view)
    sq = PX // 8
    # The first hop is common to the three routes: each colour is seen along it, side by side.
    (ax, ay), (bx, by) = (square_center(8, *s, px=PX) for s in SHARED_ROUTES[0][:2])
    mid = ((ax + bx) / 2, (ay + by) / 2)
    counts = [colour_near(img, mid, sq * 0.35, B.route_colour(i)) for i in range(3)]
    assert min(counts) >= 15, counts


def test_route_colours_are_distinct_and_none_is_the_last_move_blue_or_capture_red():
    colours = [B.route_colour(i) for i in range(len(B.ROUTE_COLOURS))]
    assert len(set(colours)) == len(colours)
    for c in colours:
        assert not close(c, B.PATH_RGBA[:3], 60)
        assert not close(c, B.CAPTURE_RGB, 60)
        for other in colours:
            if other != c:
                assert sum(abs(x - y) for x, y in zip(c, other, strict=True)) > 90


@sizes_and_sides
def test_every_route_carries_its_number(size, flipped):
    view = route_view(size, flipped)
    img = rgb_png(view)
    plain = rgb_png(BoardView(size, view.pieces, view.labels, dots=view.dots, selected=view.selected,
                              flipped=flipped))
    sq = PX // size
    spots = B.route_label_spots(view, PX)
    assert len(spots) == len(view.routes)
    glyphs = []
    for i, spot in enumerate(spots):
        # The whole badge is on the picture, even for a route along the border.
        assert all(sq * 0.2 <= v <= PX - sq * 0.2 for v in spot), spot
        for other in spots[:i]:
            assert math.dist(spot, other) >= sq * 0.4     # numbers do not cover each other
        # A badge in the route's colour with light digits on it.
        assert colour_near(img, spot, sq * 0.19, B.route_colour(i)) >= 20, i
        x, y = round(spot[0]), round(spot[1])
        r = round(sq * 0.12)
        glyph = frozenset((dx, dy) for dx in range(-r, r + 1) for dy in range(-r, r + 1)
                          if close(img.getpixel((x + dx, y + dy)), B.ROUTE_TEXT, 40))
        assert len(glyph) >= 8, i
        glyphs.append(glyph)
        # The number is drawn on top: the spot looks different from the same board without routes.
        assert img.crop((x - r, y - r, x + r, y + r)).tobytes() != plain.crop((x - r, y - r, x + r, y + r)).tobytes()
    # Different digits, different shapes ("1" is not "2").
    assert len(set(glyphs)) == len(glyphs)


def test_route_number_goes_where_only_that_route_passes():
    view = route_view(10, False)
    spots = B.route_label_spots(view, PX)
    # The diamond's routes differ only in their middle landing square: each number sits there.
    for spot, route in zip(spots, DIAMOND_ROUTES, strict=True):
        cx, cy = square_center(10, *route[1], px=PX)
        assert math.dist(spot, (cx, cy)) < PX / 10 * 0.3


def test_routes_leave_the_rest_of_the_board_alone():
    view = route_view(10, False)
    img = rgb_png(view)
    plain = rgb_png(BoardView(10, view.pieces, view.labels, dots=view.dots, selected=view.selected))
    # Far from every route: the bottom-left corner square.
    x0, y0, x1, y1 = B.square_box(10, 9, 0, px=PX)
    assert img.crop((x0, y0, x1, y1)).tobytes() == plain.crop((x0, y0, x1, y1)).tobytes()


def test_route_squares_must_be_on_the_board():
    with pytest.raises(ValueError):
        BoardView(8, {}, {}, routes=[[(0, 0), (8, 8)]])
    for short in ([], [(0, 0)]):
        with pytest.raises(ValueError):
            BoardView(8, {}, {}, routes=[[(7, 1), (5, 3)], short])


def test_a_single_hop_route_and_a_route_back_to_its_start_render():
    """A king that comes back to where it started: the route number and arrow still drawn."""
    loop = [(7, 3), (5, 1), (3, 3), (5, 5), (7, 3)]
    view = BoardView(8, {(7, 3): "W"}, {}, dots=[(7, 3)], selected=(7, 3), routes=[loop, [(7, 3), (5, 5)]])
    img = rgb_png(view)
    for i, spot in enumerate(B.route_label_spots(view, PX)):
        assert colour_near(img, spot, PX / 8 * 0.19, B.route_colour(i)) >= 20, i


def test_many_routes_still_render():
    routes = [[(7, 1), (5, 3), (3, 1 + 2 * (i % 3))] for i in range(12)]
    img = rgb_png(BoardView(8, {}, numbering(8), routes=routes))
    assert img.size == (PX, PX)
