"""Pixel-level tests of the board renderer on real Pillow images."""

from __future__ import annotations

import ast
import io
from pathlib import Path

import pytest
from PIL import Image, ImageChops, ImageFont

from renderers import BoardView, render_capture_gif, render_png, square_center
from renderers import board as B

PX = 600
MAX_PNG_BYTES = 40 * 1024


# --- helpers -----------------------------------------------------------------


def dark_squares(size: int) -> list[tuple[int, int]]:
    return [(r, c) for r in range(size) for c in range(size) if (r + c) % 2 == 0]


def numbering(size: int) -> dict[tuple[int, int], int]:
    return {sq: i + 1 for i, sq in enumerate(dark_squares(size))}


# Known positions: men and kings of both colours, scattered over the board.
POSITIONS = {
    8: {
        (0, 0): "b",
        (0, 2): "b",
        (1, 1): "b",
        (1, 5): "b",
        (2, 2): "b",
        (2, 6): "B",
        (3, 1): "b",
        (4, 4): "w",
        (5, 1): "w",
        (5, 5): "w",
        (6, 2): "W",
        (6, 6): "w",
        (7, 3): "w",
        (7, 7): "w",
        (3, 7): "W",
        (0, 6): "B",
    },
    10: {
        (0, 0): "b",
        (0, 4): "b",
        (1, 3): "b",
        (1, 7): "B",
        (2, 2): "b",
        (2, 6): "b",
        (3, 1): "b",
        (3, 5): "b",
        (3, 9): "b",
        (4, 8): "W",
        (5, 5): "B",
        (6, 0): "w",
        (6, 4): "w",
        (6, 8): "w",
        (7, 3): "W",
        (7, 7): "w",
        (8, 2): "w",
        (9, 1): "w",
        (9, 9): "w",
        (8, 6): "w",
    },
}


def decode(data: bytes) -> Image.Image:
    img = Image.open(io.BytesIO(data))
    img.load()
    return img


def rgb_png(view: BoardView) -> Image.Image:
    img = decode(render_png(view, PX))
    assert img.format == "PNG"
    return img.convert("RGB")


def close(a, b, tol: int = 4) -> bool:
    return all(abs(x - y) <= tol for x, y in zip(a, b, strict=True))


def luminance(rgb) -> float:
    r, g, b = rgb[:3]
    return 0.299 * r + 0.587 * g + 0.114 * b


def body_point(size: int, sq: tuple[int, int], flipped: bool) -> tuple[int, int]:
    """A point on a piece's body: below the centre, clear of crown and ring."""
    x, y = square_center(size, *sq, px=PX, flipped=flipped)
    radius = (PX // size) * B.PIECE_RADIUS
    return x, y + round(0.52 * radius)


def is_gold(rgb) -> bool:
    r, g, b = rgb
    return r > 170 and g > 120 and b < 110 and r - b > 100


def classify(img: Image.Image, size: int, sq: tuple[int, int], flipped: bool) -> str:
    """'.' empty, 'w'/'W' white man/king, 'b'/'B' black man/king (by pixels)."""
    centre = img.getpixel(square_center(size, *sq, px=PX, flipped=flipped))
    if close(centre, B.DARK_SQUARE):
        return "."
    body = img.getpixel(body_point(size, sq, flipped))
    lum = luminance(body)
    if lum > 170:
        colour = "w"
    elif lum < 90:
        colour = "b"
    else:
        return "?"
    return colour.upper() if is_gold(centre) else colour


sizes_and_sides = pytest.mark.parametrize(("size", "flipped"), [(8, False), (8, True), (10, False), (10, True)])


# --- geometry ----------------------------------------------------------------


@pytest.mark.parametrize("size", [8, 10])
def test_square_center_orientation(size):
    sq = PX // size
    assert square_center(size, 0, 0, PX) == (sq // 2, sq // 2)
    assert square_center(size, size - 1, size - 1, PX) == (PX - sq + sq // 2, PX - sq + sq // 2)
    # Flipped: row 0 at the bottom, col 0 at the right.
    assert square_center(size, 0, 0, PX, flipped=True) == square_center(size, size - 1, size - 1, PX)
    assert square_center(size, 2, 1, PX, flipped=True) == square_center(size, size - 3, size - 2, PX)


def test_square_center_other_px():
    assert square_center(8, 7, 7, px=400) == (375, 375)
    assert square_center(10, 0, 9, px=300) == (285, 15)


# --- pieces and squares --------------------------------------------------------


@sizes_and_sides
def test_every_square_shows_the_right_thing(size, flipped):
    pieces = POSITIONS[size]
    view = BoardView(size, pieces, numbering(size), flipped=flipped)
    img = rgb_png(view)
    assert img.size == (PX, PX)
    for sq in dark_squares(size):
        assert classify(img, size, sq, flipped) == pieces.get(sq, "."), sq
    for r in range(size):
        for c in range(size):
            if (r + c) % 2 == 1:
                pixel = img.getpixel(square_center(size, r, c, PX, flipped))
                assert close(pixel, B.LIGHT_SQUARE), (r, c, pixel)
                assert luminance(pixel) > 190


@sizes_and_sides
def test_lower_right_corner_is_dark(size, flipped):
    img = rgb_png(BoardView(size, {}, {}, flipped=flipped))
    # Lower-right and upper-left corners are dark, the other two light,
    # whichever side the board is seen from.
    q = PX // size // 2
    assert close(img.getpixel((PX - q, PX - q)), B.DARK_SQUARE)
    assert close(img.getpixel((q, q)), B.DARK_SQUARE)
    assert close(img.getpixel((PX - q, q)), B.LIGHT_SQUARE)
    assert close(img.getpixel((q, PX - q)), B.LIGHT_SQUARE)


@sizes_and_sides
def test_flipping_moves_pieces(size, flipped):
    """A lone piece is drawn where square_center says, and only there."""
    sq = (size - 1, 1) if (size - 1 + 1) % 2 == 0 else (size - 1, 0)
    view = BoardView(size, {sq: "b"}, {}, flipped=flipped)
    img = rgb_png(view)
    assert classify(img, size, sq, flipped) == "b"
    mirror = (size - 1 - sq[0], size - 1 - sq[1])
    assert classify(img, size, mirror, flipped) == "."
    x, y = square_center(size, *sq, px=PX, flipped=flipped)
    assert (y > PX // 2) == (not flipped)


@pytest.mark.parametrize("size", [8, 10])
@pytest.mark.parametrize("colour", ["w", "b"])
def test_kings_differ_from_men(size, colour):
    man, king = (0, 0), (2, 2)
    img = rgb_png(BoardView(size, {man: colour, king: colour.upper()}, {}))
    man_c = img.getpixel(square_center(size, *man, px=PX))
    king_c = img.getpixel(square_center(size, *king, px=PX))
    assert is_gold(king_c) and not is_gold(man_c)
    # Whole sprites differ substantially, same-colour bodies agree.
    half = PX // size // 2
    pattern = [(dx, dy) for dx in range(-half + 4, half - 4, 3) for dy in range(-6, 7, 3)]
    diffs = sum(
        not close(
            img.getpixel((man_c_xy[0] + dx, man_c_xy[1] + dy)),
            img.getpixel((king_c_xy[0] + dx, king_c_xy[1] + dy)),
            tol=30,
        )
        for man_c_xy, king_c_xy in [(square_center(size, *man, px=PX), square_center(size, *king, px=PX))]
        for dx, dy in pattern
    )
    assert diffs > len(pattern) // 3
    assert close(img.getpixel(body_point(size, man, False)), img.getpixel(body_point(size, king, False)), tol=25)


def test_piece_colours():
    img = rgb_png(BoardView(8, {(0, 0): "w", (0, 2): "b"}, {}))
    white = img.getpixel(body_point(8, (0, 0), False))
    black = img.getpixel(body_point(8, (0, 2), False))
    assert luminance(white) > 200 and white[0] >= white[2]  # cream, not blue
    assert luminance(black) < 70


@sizes_and_sides
def test_square_numbers_are_drawn(size, flipped):
    labels = numbering(size)
    unlabelled = (size - 1, size - 1)
    del labels[unlabelled]
    pieces = POSITIONS[size]
    with_numbers = rgb_png(BoardView(size, pieces, labels, flipped=flipped))
    without = rgb_png(BoardView(size, pieces, {}, flipped=flipped))
    sq_px = PX // size

    def changed(sq, fx0, fy0, fx1, fy1):
        x0, y0, _, _ = B.square_box(size, *sq, px=PX, flipped=flipped)
        box = (x0 + int(fx0 * sq_px), y0 + int(fy0 * sq_px), x0 + int(fx1 * sq_px), y0 + int(fy1 * sq_px))
        a, b = with_numbers.crop(box), without.crop(box)
        # Palettes differ slightly between the two PNGs: count real changes.
        diff = ImageChops.difference(a, b).convert("L").point(lambda v: 255 if v > 30 else 0)
        return diff.histogram()[255], a

    for sq in dark_squares(size):
        # Nothing outside the top-left corner changes, occupied or not ...
        assert changed(sq, 0.45, 0, 1, 1)[0] == 0, sq
        assert changed(sq, 0, 0.35, 1, 1)[0] == 0, sq
        n, corner = changed(sq, 0, 0, 0.45, 0.35)
        if sq == unlabelled:
            assert n == 0
        else:
            # ... and the corner shows the number in its light colour.
            assert n >= 10, sq
            light = sum(
                close(corner.getpixel((x, y)), B.LABEL, tol=12)
                for x in range(corner.width)
                for y in range(corner.height)
            )
            assert light >= 4, sq


def test_labels_stay_upright_when_flipped():
    """The number's pixels are the same, only moved to the other square."""
    labels = {(0, 0): 7}
    a = rgb_png(BoardView(8, {}, labels))
    b = rgb_png(BoardView(8, {}, labels, flipped=True))
    box_a = (3, 3, 30, 25)  # clear of the thin frame around the board
    box_b = (528, 528, 555, 550)
    assert a.crop(box_a).tobytes() == b.crop(box_b).tobytes()
    assert a.crop(box_a).tobytes() != rgb_png(BoardView(8, {}, {})).crop(box_a).tobytes()


# --- marks ---------------------------------------------------------------------


@sizes_and_sides
def test_last_move_captures_dots_selection(size, flipped):
    start, mid, end = (size - 2, 2), (size - 4, 4), (size - 6, 2)
    captured = [(size - 3, 3), (size - 5, 3)]
    selected = (size - 1, 5 if size == 8 else 7)
    dots = [(size - 2, 6 if size == 8 else 8)]
    pieces = {end: "w", selected: "w", (0, 0): "b"}
    view = BoardView(
        size,
        pieces,
        numbering(size),
        last_path=[start, mid, end],
        captured=captured,
        dots=dots,
        selected=selected,
        flipped=flipped,
    )
    img = rgb_png(view)
    sq_px = PX // size

    def at(sq, fx, fy):
        """Pixel at a fraction of the square's box (as drawn)."""
        x0, y0, _, _ = B.square_box(size, *sq, px=PX, flipped=flipped)
        return img.getpixel((x0 + int(fx * sq_px), y0 + int(fy * sq_px)))

    # Start and end squares highlighted (corners off the path's diagonals).
    for sq in (start, end):
        corners = [at(sq, 0.9, 0.1), at(sq, 0.1, 0.9), at(sq, 0.9, 0.9)]
        assert sum(close(p, B.LAST_MOVE_SQUARE) for p in corners) >= 2, (sq, corners)
    # The piece sits on the end square.
    assert classify(img, size, end, flipped) == "w"
    # The intermediate landing square is not highlighted, but the path line
    # passes through its centre.
    assert close(at(mid, 0.9, 0.1), B.DARK_SQUARE) or close(at(mid, 0.1, 0.9), B.DARK_SQUARE)
    centre = img.getpixel(square_center(size, *mid, px=PX, flipped=flipped))
    assert centre[2] > centre[0] + 60, centre  # blue line
    # Captured squares carry a red mark.
    for sq in captured:
        r, g, b = img.getpixel(square_center(size, *sq, px=PX, flipped=flipped))
        assert r > 170 and g < 90 and b < 90
    # Destination dot: darker than the bare square, square edge untouched.
    for sq in dots:
        c = img.getpixel(square_center(size, *sq, px=PX, flipped=flipped))
        assert luminance(c) < luminance(B.DARK_SQUARE) - 25
        assert close(at(sq, 0.9, 0.9), B.DARK_SQUARE)
    # Selected piece: highlighted square, piece still recognisable.
    assert close(at(selected, 0.9, 0.1), B.SELECTED_SQUARE)
    assert classify(img, size, selected, flipped) == "w"
    # Numbers are still drawn on highlighted squares.
    x0, y0, _, _ = B.square_box(size, *start, px=PX, flipped=flipped)
    assert any(
        close(img.getpixel((x, y)), B.LABEL, tol=12)
        for x in range(x0, x0 + sq_px // 2)
        for y in range(y0, y0 + sq_px // 3)
    )


def test_path_line_stops_at_the_moved_piece():
    """The arrow does not paint over the piece that just moved."""
    plain = rgb_png(BoardView(8, {(4, 4): "w"}, {}))
    moved = rgb_png(BoardView(8, {(4, 4): "w"}, {}, last_path=[(6, 2), (4, 4)]))
    x, y = square_center(8, 4, 4, PX)
    assert plain.getpixel((x, y)) == moved.getpixel((x, y))


# --- output formats ------------------------------------------------------------


def midgame(size: int, flipped: bool = False) -> BoardView:
    pieces = dict(POSITIONS[size])
    return BoardView(
        size,
        pieces,
        numbering(size),
        last_path=[(size - 1, 1), (size - 3, 3), (size - 5, 1)],
        captured=[(size - 2, 2), (size - 4, 2)],
        flipped=flipped,
    )


@sizes_and_sides
def test_png_is_valid_small_and_sized(size, flipped):
    data = render_png(midgame(size, flipped), PX)
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    img = decode(data)
    assert img.format == "PNG" and img.size == (PX, PX)
    assert len(data) < MAX_PNG_BYTES, len(data)


@pytest.mark.parametrize("size", [8, 10])
def test_full_board_of_kings_still_under_limit(size):
    pieces = {sq: ("W" if sq[0] % 2 else "B") for sq in dark_squares(size)}
    view = BoardView(
        size, pieces, numbering(size), last_path=[(size - 1, size - 1), (0, 0)], captured=[(2, 2)], selected=(3, 3)
    )
    assert len(render_png(view)) < MAX_PNG_BYTES


@pytest.mark.parametrize("px", [300, 480, 777])
def test_other_sizes(px):
    data = render_png(midgame(10), px)
    assert decode(data).size == (px, px)


def test_png_is_deterministic():
    assert render_png(midgame(10)) == render_png(midgame(10))


def capture_frames(size: int = 10, flipped: bool = False) -> list[BoardView]:
    """A white man capturing three black men, step by step."""
    labels = numbering(size)
    path = [(9, 1), (7, 3), (5, 1), (3, 3)]
    victims = [(8, 2), (6, 2), (4, 2)]
    others = {(0, 0): "b", (0, 8): "b", (9, 9): "w"}
    frames = []
    for step in range(len(path)):
        pieces = dict(others)
        pieces[path[step]] = "w"
        for v in victims[step:]:
            pieces[v] = "b"
        frames.append(
            BoardView(size, pieces, labels, last_path=path[: step + 1], captured=victims[:step], flipped=flipped)
        )
    return frames


@pytest.mark.parametrize("flipped", [False, True])
def test_gif_has_one_frame_per_view(flipped):
    frames = capture_frames(flipped=flipped)
    data = render_capture_gif(frames, px=PX, ms_per_frame=500)
    assert data[:6] in (b"GIF87a", b"GIF89a")
    img = decode(data)
    assert img.format == "GIF"
    assert img.size == (PX, PX)
    assert img.n_frames == len(frames)
    durations = []
    for i in range(img.n_frames):
        img.seek(i)
        durations.append(img.info["duration"])
    assert durations[:-1] == [500] * (len(frames) - 1)
    assert durations[-1] >= 500
    # The mover is where each frame says it is.
    for i, view in enumerate(frames):
        img.seek(i)
        frame = img.convert("RGB")
        mover = view.last_path[-1]
        assert classify(frame, 10, mover, flipped) == "w", i


def test_gif_single_frame_and_empty():
    data = render_capture_gif(capture_frames()[:1])
    assert decode(data).size == (PX, PX)
    with pytest.raises(ValueError):
        render_capture_gif([])


# --- validation and packaging ---------------------------------------------------


def test_rejects_bad_input():
    with pytest.raises(ValueError):
        BoardView(8, {(0, 0): "x"}, {})
    with pytest.raises(ValueError):
        BoardView(8, {(8, 0): "w"}, {})
    with pytest.raises(ValueError):
        BoardView(8, {}, {}, last_path=[(0, 0), (-1, 1)])
    with pytest.raises(ValueError):
        render_png(BoardView(10, {}, {}), px=10)


def test_font_ships_with_the_package():
    fonts = Path(B.__file__).parent / "fonts"
    assert (fonts / "DejaVuSans-Bold.ttf").is_file()
    assert "Bitstream" in (fonts / "LICENSE-DejaVu.txt").read_text()
    assert isinstance(B._font(12), ImageFont.FreeTypeFont)


def test_renderer_imports_only_stdlib_and_pillow():
    tree = ast.parse(Path(B.__file__).read_text())
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "no relative imports"
            roots.add((node.module or "").split(".")[0])
    assert roots <= {"__future__", "io", "math", "collections", "dataclasses", "functools", "pathlib", "PIL"}


def test_falls_back_to_default_font_when_missing(monkeypatch, tmp_path):
    monkeypatch.setattr(B, "FONT_PATH", tmp_path / "missing.ttf")
    B._font.cache_clear()
    B._label_layer.cache_clear()
    try:
        assert B._font(13) is not None
        img = rgb_png(BoardView(8, {}, numbering(8)))
        # The numbers are still drawn, just in Pillow's built-in font.
        corner = img.crop((3, 3, 30, 25))
        assert any(close(corner.getpixel((x, y)), B.LABEL, tol=12) for x in range(27) for y in range(22))
    finally:
        B._font.cache_clear()
        B._label_layer.cache_clear()


def test_a_6x6_variant_renders_with_exact_colours():
    # A board smaller than any shipped variant, from a Variant made here (not registered): its
    # reference palette once needed at least 8x8 (a route of one square raised).
    from bot.rules import CapturePriority, Game, Variant

    mini = Variant(id="mini6", size=6, flying_kings=False, men_capture_kings=False,
                   priority=CapturePriority.ITALIAN, no_progress_plies=80, numbering="italian",
                   pdn_gametype="22,W,6,6,N2,1", start_rows=2)
    game = Game(mini)
    game.play(game.position.legal_moves()[0])
    pos = game.position
    pieces = {mini.square_to_rc(sq): code for sq, code in pos.pieces().items()}
    pieces[mini.square_to_rc(1)] = "W"      # a white king among the black men
    move = game.moves[-1]
    view = BoardView(6, pieces, {mini.square_to_rc(sq): sq for sq in range(1, mini.squares + 1)},
                     last_path=[mini.square_to_rc(sq) for sq in move.path], flipped=False)
    data = render_png(view, PX)
    assert len(data) < MAX_PNG_BYTES
    img = decode(data).convert("RGB")
    assert img.size == (PX, PX)
    for sq in dark_squares(6):
        if sq not in view.last_path:     # the path's squares are tinted
            assert classify(img, 6, sq, False) == pieces.get(sq, "."), sq
    colours = {colour for _, colour in img.getcolors(PX * PX)}
    assert {B.DARK_SQUARE, B.LIGHT_SQUARE} <= colours
