"""Draughts board renderer: a neutral board description in, PNG / GIF bytes out.

This module deliberately knows nothing about the rules or the bot: callers
build a :class:`BoardView` (pieces, square numbers, highlights) and get image
bytes back.  Everything that does not depend on the position (the empty board
with its square numbers, piece sprites, markers) is drawn once and cached, so
a render is mostly a handful of ``paste`` calls plus the PNG encode.  Numbered routes
(alternative captures ending on one square) are the one part drawn per render, and only on
the screen that asks the player to choose one of them.

Coordinates: ``(row, col)`` with row 0 at the top and col 0 at the left as seen
from White's side.  Dark (playable) squares have ``(row + col)`` even, so the
lower-right corner is dark.  ``flipped=True`` rotates the picture 180 degrees
(Black's point of view); the square numbers stay upright.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from PIL import Image, ImageDraw, ImageFilter, ImageFont

__all__ = [
    "BoardView",
    "render_image",
    "render_png",
    "render_capture_gif",
    "square_center",
    "square_box",
    "route_colour",
    "route_label_spots",
]

Square = tuple[int, int]
# What _font gives: the bundled TrueType font, or Pillow's own where that cannot be read.
Font = ImageFont.FreeTypeFont | ImageFont.ImageFont
RGB = tuple[int, int, int]

FONT_PATH = Path(__file__).resolve().parent / "fonts" / "DejaVuSans-Bold.ttf"

# --- palette ---------------------------------------------------------------
LIGHT_SQUARE: RGB = (238, 218, 180)
DARK_SQUARE: RGB = (160, 112, 72)
BORDER: RGB = (92, 60, 34)
LABEL: RGB = (255, 246, 226)
LABEL_SHADOW: RGB = (70, 44, 22)
LAST_MOVE_SQUARE: RGB = (150, 152, 58)  # start and end square of the last move
SELECTED_SQUARE: RGB = (74, 134, 150)  # square of the selected piece
PATH_RGBA = (38, 96, 200, 215)  # line / arrow through the last move
CAPTURE_RGB: RGB = (214, 28, 28)
CAPTURE_EDGE: RGB = (255, 240, 230)
# Destination marker: a dark disc in a light ring in a dark rim, so it stands out on the
# light squares, the dark squares, the highlights and on a piece alike.
DOT_FILL: RGB = (18, 92, 44)
DOT_RING: RGB = (250, 250, 240)
DOT_RIM: RGB = (16, 16, 16)
DOT_RADIUS = 0.2  # outer radius, as a fraction of the square
# Numbered capture routes ending on one square: one colour each (then they repeat; the
# numbers still tell them apart).  None of them is the blue of the last move or the red
# of a capture mark.
ROUTE_COLOURS: tuple[RGB, ...] = (
    (255, 140, 0),
    (226, 60, 214),
    (0, 206, 214),
    (150, 226, 40),
    (255, 226, 40),
    (160, 110, 255),
)
ROUTE_EDGE: RGB = (24, 16, 10)
ROUTE_TEXT: RGB = (255, 255, 255)

# Piece colours: body, highlight, shade, outline, inner ring.
WHITE_PIECE = {
    "body": (242, 230, 200),
    "light": (255, 252, 240),
    "shade": (196, 176, 134),
    "outline": (72, 54, 36),
    "ring": (186, 164, 120),
}
BLACK_PIECE = {
    "body": (52, 48, 46),
    "light": (112, 106, 100),
    "shade": (20, 18, 17),
    "outline": (8, 8, 8),
    "ring": (92, 88, 84),
}
GOLD: RGB = (232, 182, 36)
GOLD_LIGHT: RGB = (255, 226, 120)
GOLD_EDGE: RGB = (110, 72, 8)

PIECE_KINDS = ("w", "W", "b", "B")

# Geometry, as fractions of the square size.
PIECE_RADIUS = 0.375  # discs leave the top-left corner free for the number
LABEL_SIZE = 0.2
SUPERSAMPLE = 4

PNG_COLOURS = 128  # palette size of the output PNG


@dataclass(frozen=True)
class BoardView:
    """Everything needed to draw one board picture."""

    size: int  # 8 or 10
    pieces: Mapping[Square, str]  # "w", "W", "b", "B"
    labels: Mapping[Square, int]  # square number printed on each dark square
    last_path: Sequence[Square] = ()  # squares of the last move, start first
    captured: Sequence[Square] = ()  # squares where pieces were just captured
    dots: Sequence[Square] = ()  # destination dots for a selected piece
    selected: Square | None = None  # highlighted selected piece
    flipped: bool = False  # seen from Black's side (rotated 180 degrees)
    # Alternative routes of one piece, each drawn in its own colour with its number
    # (1, 2, ... in this order), e.g. captures that end on the same square.
    routes: Sequence[Sequence[Square]] = ()
    # Moves played just before the last one (a puzzle's step: the solver's move, then the
    # reply as ``last_path``), drawn the same way.
    earlier_paths: Sequence[Sequence[Square]] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.size, int) or self.size < 2:
            raise ValueError(f"board size must be an int >= 2, got {self.size!r}")
        for sq, kind in self.pieces.items():
            if kind not in PIECE_KINDS:
                raise ValueError(f"unknown piece {kind!r} on {sq}")
        for route in self.routes:
            if len(route) < 2:
                raise ValueError(f"a route needs at least two squares, got {list(route)!r}")
        squares = [
            *self.pieces,
            *self.labels,
            *self.last_path,
            *self.captured,
            *self.dots,
            *(sq for route in self.routes for sq in route),
            *(sq for path in self.earlier_paths for sq in path),
            *([self.selected] if self.selected is not None else []),
        ]
        for sq in squares:
            r, c = sq
            if not (0 <= r < self.size and 0 <= c < self.size):
                raise ValueError(f"square {sq} is off a {self.size}x{self.size} board")


# --- geometry --------------------------------------------------------------


def _edge(i: int, size: int, px: int) -> int:
    return i * px // size


def _display(size: int, row: int, col: int, flipped: bool) -> tuple[int, int]:
    """Row and column as drawn (after the optional 180 degree turn)."""
    if flipped:
        return size - 1 - row, size - 1 - col
    return row, col


def square_box(view_size: int, row: int, col: int, px: int = 600, flipped: bool = False) -> tuple[int, int, int, int]:
    """Pixel box ``(x0, y0, x1, y1)`` (x1, y1 exclusive) of a square."""
    r, c = _display(view_size, row, col, flipped)
    return (
        _edge(c, view_size, px),
        _edge(r, view_size, px),
        _edge(c + 1, view_size, px),
        _edge(r + 1, view_size, px),
    )


def square_center(view_size: int, row: int, col: int, px: int = 600, flipped: bool = False) -> tuple[int, int]:
    """Pixel centre ``(x, y)`` of a square in the output image."""
    x0, y0, x1, y1 = square_box(view_size, row, col, px, flipped)
    return (x0 + x1) // 2, (y0 + y1) // 2


# --- cached building blocks ------------------------------------------------


@lru_cache(maxsize=16)
def _font(size_px: int) -> Font:
    try:
        return ImageFont.truetype(str(FONT_PATH), size_px)
    except OSError:
        try:
            return ImageFont.load_default(size=size_px)
        except TypeError:  # Pillow < 10.1: fixed-size bitmap font only
            return ImageFont.load_default()


@lru_cache(maxsize=32)
def _empty_board(size: int, px: int, flipped: bool) -> Image.Image:
    img = Image.new("RGB", (px, px), LIGHT_SQUARE)
    draw = ImageDraw.Draw(img)
    for row in range(size):
        for col in range(size):
            if (row + col) % 2 == 0:
                x0, y0, x1, y1 = square_box(size, row, col, px, flipped)
                draw.rectangle((x0, y0, x1 - 1, y1 - 1), fill=DARK_SQUARE)
    border = max(1, px // 300)
    draw.rectangle((0, 0, px - 1, px - 1), outline=BORDER, width=border)
    return img


@lru_cache(maxsize=64)
def _label_layer(
    size: int, px: int, flipped: bool, labels: tuple[tuple[Square, int], ...]
) -> tuple[Image.Image, tuple[tuple[tuple[int, int], Image.Image], ...]]:
    """Square numbers (light text with a dark drop shadow) as RGBA.

    Returns the full-board layer and, per number, its position and a small
    crop of the layer, so renders can repaint just the numbers cheaply.
    """
    text = Image.new("L", (px, px), 0)
    draw = ImageDraw.Draw(text)
    sq = px / size
    font = _font(max(8, round(sq * LABEL_SIZE)))
    pad_x = max(2, round(sq * 0.05))
    pad_y = max(1, round(sq * 0.035))
    boxes: list[tuple[int, int, int, int]] = []
    for (row, col), number in labels:
        x0, y0, _, _ = square_box(size, row, col, px, flipped)
        xy = (x0 + pad_x, y0 + pad_y)
        draw.text(xy, str(number), fill=255, font=font, anchor="lt")
        # Whole pixels already (a FreeType box from an integer origin); typed as floats by Pillow.
        left, top, right, bottom = map(int, draw.textbbox(xy, str(number), font=font, anchor="lt"))
        boxes.append((max(0, left - 1), max(0, top - 1), min(px, right + 2), min(px, bottom + 2)))
    shadow = Image.new("L", (px, px), 0)
    shadow.paste(text, (1, 1))
    shadow = shadow.point(lambda v: v * 3 // 4)
    layer = Image.new("RGBA", (px, px), LABEL_SHADOW + (0,))
    layer.putalpha(shadow)
    ink = Image.new("RGBA", (px, px), LABEL + (0,))
    ink.putalpha(text)
    layer = Image.alpha_composite(layer, ink)
    crops = tuple(((b[0], b[1]), layer.crop(b)) for b in boxes)
    return layer, crops


def _downsample(img: Image.Image, size: int) -> Image.Image:
    return img.resize((size, size), Image.Resampling.LANCZOS)


def _radial_mask(side: int, cx: float, cy: float, reach: float) -> Image.Image:
    """L image: 0 at (cx, cy) growing linearly to 255 at distance ``reach``."""
    grad = Image.radial_gradient("L")  # 256x256, 0 at the centre, 255 at r=128
    scale = reach / 128.0
    big = grad.resize((max(1, round(256 * scale)),) * 2, Image.Resampling.BILINEAR)
    out = Image.new("L", (side, side), 255)
    out.paste(big, (round(cx - 128 * scale), round(cy - 128 * scale)))
    return out


def _crown(cx: float, cy: float, w: float) -> list[tuple[float, float]]:
    """Outline of a three-pointed crown, ``w`` wide, centred on (cx, cy)."""
    h = w * 0.78
    top, base = cy - h / 2, cy + h / 2
    band = base - h * 0.26
    pts = [
        (-0.50, band),
        (-0.56, top + h * 0.12),
        (-0.24, top + h * 0.50),
        (0.00, top),
        (0.24, top + h * 0.50),
        (0.56, top + h * 0.12),
        (0.50, band),
        (0.50, base),
        (-0.50, base),
    ]
    return [(cx + fx * w, y) for fx, y in pts]


@lru_cache(maxsize=32)
def _piece_sprite(kind: str, sq: int) -> Image.Image:
    """RGBA sprite (sq x sq) of one piece, centred."""
    ss = SUPERSAMPLE
    side = sq * ss
    c = side / 2
    r = sq * PIECE_RADIUS * ss
    col = WHITE_PIECE if kind in "wW" else BLACK_PIECE
    king = kind in "WB"

    img = Image.new("RGBA", (side, side), (0, 0, 0, 0))

    # Soft drop shadow towards the lower right.
    shadow = Image.new("L", (side, side), 0)
    off = sq * 0.035 * ss
    ImageDraw.Draw(shadow).ellipse((c - r + off, c - r + off * 1.3, c + r + off, c + r + off * 1.3), fill=110)
    shadow = shadow.filter(ImageFilter.GaussianBlur(sq * 0.03 * ss))
    img.paste((0, 0, 0, 255), (0, 0, side, side), shadow)

    # Body: radial shading, light spot towards the upper left.
    grad = _radial_mask(side, c - r * 0.38, c - r * 0.42, r * 1.55)
    light_body = Image.composite(
        Image.new("RGB", (side, side), col["body"]),
        Image.new("RGB", (side, side), col["light"]),
        grad.point(lambda v: min(255, v * 2)),
    )
    body = Image.composite(
        Image.new("RGB", (side, side), col["shade"]),
        light_body,
        grad.point(lambda v: max(0, (v - 150) * 255 // 105)),
    )
    disc = Image.new("L", (side, side), 0)
    ImageDraw.Draw(disc).ellipse((c - r, c - r, c + r, c + r), fill=255)
    img.paste(body, (0, 0, side, side), disc)

    draw = ImageDraw.Draw(img)
    # Outline.
    ow = max(ss * 1.6, sq * 0.035 * ss)
    draw.ellipse((c - r, c - r, c + r, c + r), outline=col["outline"], width=round(ow))
    # Inner ring (a gold ring on kings).
    ri = r * 0.74
    rw = max(ss, sq * 0.025 * ss)
    if king:
        rw = max(ss * 1.5, sq * 0.05 * ss)
        draw.ellipse(
            (c - ri - rw / 2, c - ri - rw / 2, c + ri + rw / 2, c + ri + rw / 2),
            outline=GOLD_EDGE,
            width=round(rw + 2 * ss),
        )
        draw.ellipse(
            (c - ri - rw / 2 + ss, c - ri - rw / 2 + ss, c + ri + rw / 2 - ss, c + ri + rw / 2 - ss),
            outline=GOLD,
            width=round(rw),
        )
        crown = _crown(c, c - r * 0.03, r * 0.86)
        draw.polygon(crown, fill=GOLD, outline=GOLD_EDGE, width=max(ss, round(sq * 0.025 * ss)))
        # Jewels on the crown points and a light band.
        jr = r * 0.075
        for x, y in (crown[1], crown[3], crown[5]):
            draw.ellipse(
                (x - jr, y - jr, x + jr, y + jr), fill=GOLD_LIGHT, outline=GOLD_EDGE, width=max(1, ss // 2 * 2)
            )
        bx0, by = crown[0][0], crown[0][1]
        draw.line(
            (bx0 + r * 0.12, by + r * 0.1, crown[6][0] - r * 0.12, by + r * 0.1),
            fill=GOLD_LIGHT,
            width=max(1, round(r * 0.06)),
        )
    else:
        draw.ellipse((c - ri, c - ri, c + ri, c + ri), outline=col["ring"], width=round(rw))
    return _downsample(img, sq)


@lru_cache(maxsize=16)
def _capture_sprite(sq: int) -> Image.Image:
    ss = SUPERSAMPLE
    side = sq * ss
    img = Image.new("RGBA", (side, side), (0, 0, 0, 0))
    draw = ImageDraw.Draw(img)
    c = side / 2
    a = sq * 0.24 * ss
    w = sq * 0.09 * ss
    for colour, width in ((CAPTURE_EDGE, w + 2.4 * ss), (CAPTURE_RGB, w)):
        for x0, y0, x1, y1 in ((c - a, c - a, c + a, c + a), (c - a, c + a, c + a, c - a)):
            draw.line((x0, y0, x1, y1), fill=colour, width=round(width))
            rr = width / 2
            for x, y in ((x0, y0), (x1, y1)):
                draw.ellipse((x - rr, y - rr, x + rr, y + rr), fill=colour)
    return _downsample(img, sq)


@lru_cache(maxsize=16)
def _dot_sprite(sq: int) -> Image.Image:
    ss = SUPERSAMPLE
    side = sq * ss
    img = Image.new("RGBA", (side, side), (0, 0, 0, 0))
    draw = ImageDraw.Draw(img)
    c = side / 2
    rim = max(1.0, sq * 0.025) * ss  # at least one output pixel of rim at any size
    ring = max(1.5, sq * 0.05) * ss
    for r, colour in ((sq * DOT_RADIUS * ss, DOT_RIM), (sq * DOT_RADIUS * ss - rim, DOT_RING),
                      (sq * DOT_RADIUS * ss - rim - ring, DOT_RIM), (sq * DOT_RADIUS * ss - 2 * rim - ring, DOT_FILL)):
        draw.ellipse((c - r, c - r, c + r, c + r), fill=colour + (255,))
    return _downsample(img, sq)


# --- drawing ---------------------------------------------------------------


def _paste_centered(img: Image.Image, sprite: Image.Image, centre: tuple[int, int]) -> None:
    w, h = sprite.size
    img.paste(sprite, (centre[0] - w // 2, centre[1] - h // 2), sprite)


def _fill_square(img: Image.Image, view: BoardView, sq: Square, colour: RGB, px: int) -> None:
    img.paste(colour, square_box(view.size, sq[0], sq[1], px, view.flipped))


def _draw_path(img: Image.Image, view: BoardView, px: int, sq: int) -> None:
    """Line through the path's square centres, arrow head at the last square."""
    pts = [square_center(view.size, r, c, px, view.flipped) for r, c in view.last_path]
    # Drop repeated points (a path should not have them, but be tolerant).
    pts = [p for i, p in enumerate(pts) if i == 0 or p != pts[i - 1]]
    if len(pts) < 2:
        return
    ss = 3
    width = max(3.0, sq * 0.11)
    head_len = sq * 0.34
    head_half = sq * 0.22
    margin = int(sq * 0.5) + 2
    x0 = max(0, min(p[0] for p in pts) - margin)
    y0 = max(0, min(p[1] for p in pts) - margin)
    x1 = min(px, max(p[0] for p in pts) + margin)
    y1 = min(px, max(p[1] for p in pts) + margin)

    # The arrow tip touches the rim of the piece on the last square (or its
    # centre region if the square is empty).
    (ax, ay), (bx, by) = pts[-2], pts[-1]
    seg = math.hypot(bx - ax, by - ay)
    ux, uy = (bx - ax) / seg, (by - ay) / seg
    end_sq = view.last_path[-1]
    stop = sq * PIECE_RADIUS if end_sq in view.pieces else sq * 0.12
    stop = min(stop, max(0.0, seg - head_len))
    tip = (bx - ux * stop, by - uy * stop)
    base = (tip[0] - ux * head_len, tip[1] - uy * head_len)

    def loc(p: tuple[float, float]) -> tuple[float, float]:
        return ((p[0] - x0) * ss, (p[1] - y0) * ss)

    layer = Image.new("L", ((x1 - x0) * ss, (y1 - y0) * ss), 0)
    draw = ImageDraw.Draw(layer)
    line_pts = [loc(p) for p in pts[:-1]] + [loc((base[0] + ux * 2, base[1] + uy * 2))]
    w = round(width * ss)
    draw.line(line_pts, fill=255, width=w, joint="curve")
    sx, sy = loc(pts[0])
    rr = w / 2
    draw.ellipse((sx - rr, sy - rr, sx + rr, sy + rr), fill=255)
    nx, ny = -uy, ux
    head = [
        loc(tip),
        loc((base[0] + nx * head_half, base[1] + ny * head_half)),
        loc((base[0] - nx * head_half, base[1] - ny * head_half)),
    ]
    draw.polygon(head, fill=255)
    mask = layer.resize((x1 - x0, y1 - y0), Image.Resampling.BOX)
    mask = mask.point(lambda v: v * PATH_RGBA[3] // 255)
    img.paste(PATH_RGBA[:3], (x0, y0, x1, y1), mask)


def route_colour(index: int) -> RGB:
    """The colour of route number ``index + 1``."""
    return ROUTE_COLOURS[index % len(ROUTE_COLOURS)]


def _route_points(view: BoardView, px: int, sq: int) -> list[list[tuple[float, float]]]:
    """Each route's points in the image, shifted sideways so shared stretches run side by side.

    A horizontal shift keeps the same distance between parallel lines on both diagonals."""
    n = len(view.routes)
    step = min(sq * 0.13, sq * 0.42 / max(1, n - 1))
    out = []
    for i, route in enumerate(view.routes):
        dx = (i - (n - 1) / 2) * step
        pts = [square_center(view.size, r, c, px, view.flipped) for r, c in route]
        out.append([(x + dx, float(y)) for x, y in pts])
    return out


def _midway(route: Sequence[Square], pts: list[tuple[float, float]], k: int, sq: int = 0,
            size: int = 0) -> tuple[float, float]:
    """A point half way along hop ``k``, on a square centre (not on a corner between squares).

    A one-square step has no square in between: the point is then the light square beside the
    step (``sq`` and ``size`` given), so a number there covers neither end of the step."""
    steps = abs(route[k + 1][0] - route[k][0])
    t = (steps // 2) / steps if steps >= 2 else 0.5
    (ax, ay), (bx, by) = pts[k], pts[k + 1]
    mx, my = ax + (bx - ax) * t, ay + (by - ay) * t
    if steps == 1 and sq:
        # The two light squares touching the step's corner: the one on the board.
        for sx, sy in (((ay - by) / 2, (bx - ax) / 2), ((by - ay) / 2, (ax - bx) / 2)):
            x, y = mx + sx, my + sy
            if 0 < x < sq * size and 0 < y < sq * size:
                return x, y
    return mx, my


def _badge_radius(sq: int) -> float:
    return max(sq * 0.24, 13.0)


def _midway_square(route: Sequence[Square], k: int) -> Square | None:
    """The square ``_midway`` puts hop ``k``'s point on (None: beside a one-square step)."""
    (r1, c1), (r2, c2) = route[k], route[k + 1]
    steps = abs(r2 - r1)
    if steps < 2:
        return None
    half = steps // 2
    return (r1 + half * (1 if r2 > r1 else -1), c1 + half * (1 if c2 > c1 else -1))


def _jumped(path: Sequence[Square], pieces: Mapping[Square, str]) -> set[Square]:
    """The pieces a drawn path passes over (what it captures)."""
    out: set[Square] = set()
    for (r1, c1), (r2, c2) in zip(path, path[1:], strict=False):
        steps = abs(r2 - r1)
        if steps != abs(c2 - c1):
            continue
        dr, dc = (1 if r2 > r1 else -1), (1 if c2 > c1 else -1)
        out.update(sq for i in range(1, steps) if (sq := (r1 + i * dr, c1 + i * dc)) in pieces)
    return out


def _badge_spots(view: BoardView, points: list[list[tuple[float, float]]], sq: int) -> list[tuple[float, float]]:
    """Where each route's number goes: on a stretch of the route that no other route takes
    (a landing square of its own first, else the middle of a jump of its own, else the
    destination), apart from the numbers already placed, and never on a piece that another
    drawn path also captures (the number would hide which route takes it)."""
    # Tuples, to hash (a route may come as lists, e.g. from JSON).
    routes: list[list[Square]] = [[(row, col) for row, col in r] for r in view.routes]
    pieces = {(row, col): kind for (row, col), kind in view.pieces.items()}
    # The pieces the last move (and the ones before it) took or passes over: they are crossed out
    # or drawn there, a number on them would hide that.
    played = {(row, col) for row, col in view.captured}
    for path in (view.last_path, *view.earlier_paths):
        played |= _jumped([(row, col) for row, col in path], pieces)
    spots: list[tuple[float, float]] = []
    for i, route in enumerate(routes):
        pts = points[i]
        others = [r for j, r in enumerate(routes) if j != i]
        other_squares = {s for r in others for s in r}
        other_jumps = {frozenset(p) for r in others for p in zip(r, r[1:], strict=False)}
        taken_elsewhere = played.union(*(_jumped(r, pieces) for r in others))
        shared = [k for k in range(len(route) - 1) if _midway_square(route, k) in taken_elsewhere]
        hops = [k for k in range(len(route) - 1) if k not in shared]
        candidates = [pts[k] for k in range(1, len(pts) - 1) if route[k] not in other_squares]
        candidates += [_midway(route, pts, k, sq, view.size) for k in hops
                       if frozenset(route[k:k + 2]) not in other_jumps]
        # A jump over a piece another path takes too: a light square beside that piece (off both
        # lines, the piece and its capture mark left visible), on the side this jump lands (the
        # number stays with its own arrow, not beside the other path's).
        for k in shared:
            mx, my = _midway(route, pts, k)
            beside = [(x, y) for x, y in ((mx + sq, my), (mx - sq, my), (mx, my + sq), (mx, my - sq))
                      if 0 < x < sq * view.size and 0 < y < sq * view.size]
            candidates += sorted(beside, key=lambda spot: math.dist(spot, pts[k + 1]))
        # Fallbacks: the destination, anywhere along the route, the start last (the piece is there).
        candidates.append(pts[-1])
        candidates += [pts[k] for k in range(1, len(pts) - 1)]
        candidates += [_midway(route, pts, k) for k in hops]
        candidates.append(pts[0])
        free = [p for p in candidates if all(math.dist(p, q) >= sq * 0.4 for q in spots)]
        x, y = free[0] if free else (candidates[0][0] + sq * 0.3 * len(spots), candidates[0][1])
        # The whole badge on the picture, even next to the border.
        r = _badge_radius(sq)
        spots.append((min(max(x, r), sq * view.size - r), min(max(y, r), sq * view.size - r)))
    return spots


def route_label_spots(view: BoardView, px: int = 600) -> list[tuple[float, float]]:
    """Pixel centres of the route numbers, route 1 first (where a viewer finds them)."""
    sq = px // view.size
    return _badge_spots(view, _route_points(view, px, sq), sq)


def _draw_routes(img: Image.Image, view: BoardView, px: int, sq: int) -> None:
    """Every route as a coloured arrow with a dark edge, and its number in a badge."""
    points = _route_points(view, px, sq)
    if not points:
        return
    ss = 2
    width = max(2.0, sq * 0.085)
    edge = max(1.0, sq * 0.022)
    head_len, head_half = sq * 0.24, sq * 0.14
    badge_r = _badge_radius(sq)
    spots = _badge_spots(view, points, sq)
    # Draw only the box that holds the routes and their numbers (supersampled).
    every = [p for pts in points for p in pts] + spots
    margin = max(badge_r, head_len, width) + 2 * edge + 2
    x0 = max(0, math.floor(min(p[0] for p in every) - margin))
    y0 = max(0, math.floor(min(p[1] for p in every) - margin))
    x1 = min(px, math.ceil(max(p[0] for p in every) + margin))
    y1 = min(px, math.ceil(max(p[1] for p in every) + margin))
    # Drawn opaque on a black layer plus a coverage mask, both shrunk with reduce() (a
    # transparent RGBA layer would be premultiplied both ways, several times slower); the edge
    # pixels darken a little against the black, and the edges are dark anyway.
    size = ((x1 - x0) * ss, (y1 - y0) * ss)
    layer, mask = Image.new("RGB", size), Image.new("L", size)
    draws = ((ImageDraw.Draw(layer), False), (ImageDraw.Draw(mask), True))

    def paint(method: str, *args: object, fill: RGB, **kw: object) -> None:
        for draw, is_mask in draws:
            extra = dict(kw)
            for key in ("outline", "stroke_fill"):
                if key in extra and is_mask:
                    extra[key] = 255
            getattr(draw, method)(*args, fill=255 if is_mask else fill, **extra)

    def loc(p: tuple[float, float]) -> tuple[float, float]:
        return ((p[0] - x0) * ss, (p[1] - y0) * ss)

    for i, pts in enumerate(points):
        colour = route_colour(i)
        if len(pts) < 2:
            continue
        (ax, ay), (bx, by) = pts[-2], pts[-1]
        seg = math.hypot(bx - ax, by - ay) or 1.0
        ux, uy = (bx - ax) / seg, (by - ay) / seg
        # The tip stops on the rim of the destination marker.
        stop = min(sq * DOT_RADIUS, max(0.0, seg - head_len))
        tip = (bx - ux * stop, by - uy * stop)
        base = (tip[0] - ux * head_len, tip[1] - uy * head_len)
        nx, ny = -uy, ux
        head = [tip, (base[0] + nx * head_half, base[1] + ny * head_half),
                (base[0] - nx * head_half, base[1] - ny * head_half)]
        # The line leaves from the rim of the moving piece, whose face stays visible.
        (fx, fy) = pts[1]
        first = math.hypot(fx - pts[0][0], fy - pts[0][1]) or 1.0
        lift = min(sq * PIECE_RADIUS * 0.8, first / 3) if len(pts) > 2 else 0.0
        start = (pts[0][0] + (fx - pts[0][0]) * lift / first, pts[0][1] + (fy - pts[0][1]) * lift / first)
        line = [start, *pts[1:-1], (base[0] + ux, base[1] + uy)]
        for fill, extra in ((ROUTE_EDGE, 2 * edge), (colour, 0.0)):
            w = round((width + extra) * ss)
            paint("line", [loc(p) for p in line], fill=fill, width=w, joint="curve")
            sx, sy = loc(start)
            paint("ellipse", (sx - w / 2, sy - w / 2, sx + w / 2, sy + w / 2), fill=fill)
            if extra:
                # The edge around the head: the head grown by the edge width.
                cx = sum(p[0] for p in head) / 3
                cy = sum(p[1] for p in head) / 3
                grow = 1 + edge * 2.2 / head_half
                paint("polygon", [loc((cx + (x - cx) * grow, cy + (y - cy) * grow)) for x, y in head], fill=fill)
            else:
                paint("polygon", [loc(p) for p in head], fill=fill)
    font = _font(max(8, round(badge_r * 1.5 * ss)))
    for i, (x, y) in enumerate(spots):
        cx, cy = loc((x, y))
        r = badge_r * ss
        paint("ellipse", (cx - r, cy - r, cx + r, cy + r), fill=route_colour(i), outline=ROUTE_EDGE,
              width=round(edge * 1.5 * ss))
    # The digits only change colours inside their badges: the layer alone.
    for i, (x, y) in enumerate(spots):
        draws[0][0].text(loc((x, y)), str(i + 1), fill=ROUTE_TEXT, font=font, anchor="mm",
                         stroke_width=round(edge * 1.6 * ss), stroke_fill=ROUTE_EDGE)
    img.paste(layer.reduce(ss), (x0, y0), mask.reduce(ss))


def render_image(view: BoardView, px: int = 600) -> Image.Image:
    """Render ``view`` to a ``px`` x ``px`` RGB Pillow image."""
    if px < 2 * view.size:
        raise ValueError(f"px={px} is too small for a {view.size}x{view.size} board")
    size, flipped = view.size, view.flipped
    labels = tuple(sorted(view.labels.items()))
    img = _empty_board(size, px, flipped).copy()
    sq = px // size

    for path in view.earlier_paths:
        if path:
            for s in {path[0], path[-1]}:
                _fill_square(img, view, s, LAST_MOVE_SQUARE, px)
            if len(path) >= 2:
                _draw_path(img, replace(view, last_path=tuple(path)), px, sq)
    if view.last_path:
        for s in {view.last_path[0], view.last_path[-1]}:
            _fill_square(img, view, s, LAST_MOVE_SQUARE, px)
    if view.selected is not None:
        _fill_square(img, view, view.selected, SELECTED_SQUARE, px)
    if len(view.last_path) >= 2:
        _draw_path(img, view, px, sq)

    for (row, col), kind in view.pieces.items():
        _paste_centered(img, _piece_sprite(kind, sq), square_center(size, row, col, px, flipped))
    if view.captured:
        sprite = _capture_sprite(sq)
        for row, col in view.captured:
            _paste_centered(img, sprite, square_center(size, row, col, px, flipped))
    if view.routes:
        _draw_routes(img, view, px, sq)
    if view.dots:
        sprite = _dot_sprite(sq)
        for row, col in view.dots:
            _paste_centered(img, sprite, square_center(size, row, col, px, flipped))

    # Square numbers go on top of everything (pieces leave them free, but
    # highlights and the path line may cross them): paste the cached crops.
    _, crops = _label_layer(size, px, flipped, labels)
    for xy, crop in crops:
        img.paste(crop, xy, crop)
    return img


# Flat colours that must come out of the palette exactly (quantizing may
# shift a big area by a shade otherwise).
_EXACT = (LIGHT_SQUARE, DARK_SQUARE, LAST_MOVE_SQUARE, SELECTED_SQUARE, BORDER, LABEL)


def _to_palette(img: Image.Image, colours: int = PNG_COLOURS) -> Image.Image:
    """Quantize to a small palette (no dithering), flat colours kept exact."""
    pim = img.quantize(colors=colours, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
    pal = pim.getpalette() or []
    entries = [tuple(pal[i : i + 3]) for i in range(0, len(pal), 3)]
    changed = False
    for want in _EXACT:
        best = min(
            range(len(entries)),
            key=lambda i: sum(abs(a - b) for a, b in zip(entries[i], want, strict=True)),
        )
        got = entries[best]
        if got != want and sum(abs(a - b) for a, b in zip(got, want, strict=True)) <= 12:
            pal[best * 3 : best * 3 + 3] = want
            entries[best] = want
            changed = True
    if changed:
        pim.putpalette(pal)
    return pim


@lru_cache(maxsize=8)
def _reference_palette(size: int, px: int) -> Image.Image:
    """One palette per board size, made from a board showing every kind of piece and marker.

    Building a palette takes several times longer than drawing the board; mapping a
    render onto a ready palette is fast, and the flat colours stay exact (they are
    forced into this palette and map onto themselves).

    The reference board is at least 8x8: a smaller one has too few free squares for every
    marker and route colour, and the colours, not the geometry, are what it is for."""
    size = max(size, 8)
    dark = [(r, c) for r in range(size) for c in range(size) if (r + c) % 2 == 0]
    kinds = PIECE_KINDS * (len(dark) // 8)
    pieces = dict(zip(dark[::2], kinds, strict=False))
    free = [sq for sq in dark if sq not in pieces]
    view = BoardView(
        size=size, pieces=pieces, labels={sq: i + 1 for i, sq in enumerate(dark)},
        last_path=free[:3], captured=free[3:5], dots=free[5:8], selected=free[0],
        routes=[free[8 + i : 10 + i] for i in range(len(ROUTE_COLOURS))],
    )
    return _to_palette(render_image(view, px))


def render_png(view: BoardView, px: int = 600) -> bytes:
    """Render ``view`` as a palette PNG of ``px`` x ``px`` pixels (~20-30 KB at 600)."""
    out = io.BytesIO()
    image = render_image(view, px).quantize(palette=_reference_palette(view.size, px), dither=Image.Dither.NONE)
    # Default zlib level: level 9 / optimize saves ~5% for ~4x the encode time.
    image.save(out, format="PNG")
    return out.getvalue()


def render_capture_gif(frames: Sequence[BoardView], px: int = 600, ms_per_frame: int = 700) -> bytes:
    """Animated GIF (looping) showing ``frames`` one after the other.

    All frames share one palette.  The last frame is held twice as long so the
    final position can be read before the loop restarts.  Note that GIF
    encoders merge a frame identical to the one before it into that frame.
    """
    if not frames:
        raise ValueError("render_capture_gif needs at least one frame")
    images = [render_image(v, px) for v in frames]
    # One palette for every frame: quantize a strip of all frames (halved with
    # NEAREST so no new colours are made up).
    half = max(1, px // 2)
    strip = Image.new("RGB", (half * len(images), half))
    for i, im in enumerate(images):
        strip.paste(im.resize((half, half), Image.Resampling.NEAREST), (i * half, 0))
    palette = strip.quantize(colors=255, method=Image.Quantize.FASTOCTREE)
    pframes = [im.quantize(palette=palette, dither=Image.Dither.NONE) for im in images]
    durations = [ms_per_frame] * len(pframes)
    durations[-1] = ms_per_frame * 2
    out = io.BytesIO()
    pframes[0].save(
        out,
        format="GIF",
        save_all=True,
        append_images=pframes[1:],
        duration=durations,
        loop=0,
        disposal=1,
    )
    return out.getvalue()
