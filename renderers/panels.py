"""Pictures made of several parts: boards side by side with captions, a line chart, a table.

Like the board renderer these take plain data (board views, numbers, strings) and return PNG
bytes; they know nothing of the rules or of the chat.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence

from PIL import Image, ImageDraw

from .board import BoardView, Font, _font, render_image

BACKGROUND = (250, 248, 242)
INK = (40, 40, 40)
FAINT = (190, 186, 178)
LINE_COLOURS = ((33, 102, 172), (178, 24, 43), (27, 120, 55), (118, 42, 131))


def _png(img: Image.Image) -> bytes:
    out = io.BytesIO()
    img.quantize(colors=128, dither=Image.Dither.NONE).save(out, format="PNG")
    return out.getvalue()


def _wrap(draw: ImageDraw.ImageDraw, text: str, font: Font, width: int) -> list[str]:
    lines: list[str] = []
    for paragraph in text.split("\n"):
        line = ""
        for word in paragraph.split():
            trial = f"{line} {word}".strip()
            if line and draw.textlength(trial, font=font) > width:
                lines.append(line)
                line = word
            else:
                line = trial
        lines.append(line)
    return lines


def render_board_grid(views: Sequence[BoardView], captions: Sequence[str], columns: int = 3,
                      board_px: int = 300, title: str = "") -> bytes:
    """Boards in a grid, each with its caption below (up to three lines), under an optional title."""
    if not views:
        raise ValueError("no boards to draw")
    if len(captions) != len(views):
        raise ValueError("one caption per board")
    columns = max(1, min(columns, len(views)))
    rows = math.ceil(len(views) / columns)
    pad = board_px // 20
    font = _font(max(12, board_px // 18))
    line_h = int(font.size * 1.3) if hasattr(font, "size") else 16
    caption_h = 3 * line_h + pad
    title_h = line_h + 2 * pad if title else pad
    width = columns * board_px + (columns + 1) * pad
    height = title_h + rows * (board_px + caption_h) + pad
    img = Image.new("RGB", (width, height), BACKGROUND)
    draw = ImageDraw.Draw(img)
    if title:
        draw.text((pad, pad), title, fill=INK, font=font)
    for i, (view, caption) in enumerate(zip(views, captions, strict=True)):
        r, c = divmod(i, columns)
        x = pad + c * (board_px + pad)
        y = title_h + r * (board_px + caption_h)
        img.paste(render_image(view, board_px), (x, y))
        for k, line in enumerate(_wrap(draw, caption, font, board_px)[:3]):
            draw.text((x, y + board_px + pad // 2 + k * line_h), line, fill=INK, font=font)
    return _png(img)


# Board size in a grid by squares per side: a 10x10 board needs more pixels for its numbers
# and route badges to stay readable (a square about as large as on an 8x8 at 380 px).
GRID_BOARD_PX = {8: 300, 10: 480}
# The evaluation graph's range, hundredths of a man: won and lost positions sit on the edges.
EVAL_CLAMP = 500
EVAL_UP = (33, 102, 172)
EVAL_AREA = (222, 232, 244)


def grid_board_px(size: int) -> int:
    """Pixels per board in an analysis grid for a board of ``size`` squares a side."""
    return GRID_BOARD_PX.get(size, 300 if size <= 8 else 480)


# Room under the evaluation graph for its move numbers.
MOVE_BAND = 18
MOVE_STEPS = (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000)


def move_ticks(plies: int, black_first: bool = False, most: int = 12) -> list[tuple[int, int]]:
    """(point index, move number) of the moves numbered under the evaluation graph, one point a
    ply: move 1, then every ``step``-th move (a round step, at most ``most`` numbers), each under
    its first ply (White's; Black's for move 1 when Black began)."""
    if plies <= 0:
        return []
    offset = 1 if black_first else 0
    moves = (plies - 1 + offset) // 2 + 1
    step = next((s for s in MOVE_STEPS if math.ceil(moves / s) <= most), MOVE_STEPS[-1])
    numbers = [1, *(n for n in range(step, moves + 1, step) if n > 1)]
    return [(max(0, 2 * (n - 1) - offset), n) for n in numbers]


def _draw_eval_graph(draw: ImageDraw.ImageDraw, box: tuple[int, int, int, int], values: Sequence[float],
                     title: str, font: Font, small: Font, black_first: bool = False) -> None:
    """A line per ply from White's side, clamped to ±EVAL_CLAMP, the zero line across, and the
    move numbers under the frame (so a dip can be matched with the move that made it)."""
    x0, y0, x1, y1 = box
    if title:
        draw.text((x0, y0), title, fill=INK, font=font)
        y0 += int(getattr(font, "size", 14) * 1.5)
    left = x0 + 28
    draw.rectangle((left, y0, x1, y1), outline=FAINT, width=1)
    mid = (y0 + y1) / 2
    half = (y1 - y0) / 2 - 2
    draw.line((left, mid, x1, mid), fill=FAINT, width=1)
    draw.text((x0, y0), "+", fill=INK, font=small)
    draw.text((x0, y1 - getattr(small, "size", 12) - 2), "\u2212", fill=INK, font=small)
    points = []
    n = len(values)

    def x_of(i: int) -> float:
        return left + 3 + (x1 - left - 6) * (i / (n - 1) if n > 1 else 0.5)

    for i, v in enumerate(values):
        c = max(-EVAL_CLAMP, min(EVAL_CLAMP, v))
        points.append((x_of(i), mid - half * c / EVAL_CLAMP))
    most = max(2, (x1 - left) // 44)
    last_right = -1.0
    for index, number in move_ticks(n, black_first, most):
        x = x_of(index)
        label = str(number)
        w = draw.textlength(label, font=small)
        lx = min(max(x - w / 2, left), x1 - w)
        if lx <= last_right + 4:
            continue                         # no two numbers on top of each other
        draw.line((x, y1, x, y1 + 4), fill=INK, width=1)
        draw.text((lx, y1 + 5), label, fill=INK, font=small)
        last_right = lx + w
    if len(points) > 1:
        draw.polygon([(points[0][0], mid), *points, (points[-1][0], mid)], fill=EVAL_AREA)
        draw.line((left, mid, x1, mid), fill=FAINT, width=1)
        draw.line(points, fill=EVAL_UP, width=2, joint="curve")
    for x, y in points:
        draw.ellipse((x - 2, y - 2, x + 2, y + 2), fill=EVAL_UP)


def render_analysis(views: Sequence[BoardView], captions: Sequence[str], evaluations: Sequence[float],
                    title: str = "", graph_title: str = "", black_first: bool = False) -> bytes:
    """The analysis picture: the boards of the mistakes with their captions (if any), and below a
    graph of the evaluation after every ply (hundredths of a man, White's side; one point per
    ply, clamped so won and lost positions sit on the edges), its moves numbered along the
    bottom (``black_first``: the game began with Black's move 1)."""
    if not views and not evaluations:
        raise ValueError("nothing to draw")
    if len(captions) != len(views):
        raise ValueError("one caption per board")
    size = views[0].size if views else 8
    board_px = grid_board_px(size)
    columns = 2 if size > 8 else 3
    grid = None
    if views:
        grid = Image.open(io.BytesIO(render_board_grid(views, captions, columns=columns, board_px=board_px,
                                                       title=title))).convert("RGB")
    width = grid.width if grid else 640
    font = _font(max(14, min(22, width // 40)))
    small = _font(12)
    graph_h = 170 if evaluations else 0
    top = grid.height if grid else (int(getattr(font, "size", 14) * 1.6) + 12 if title else 0)
    img = Image.new("RGB", (width, top + graph_h + (MOVE_BAND if evaluations else 0) + 12), BACKGROUND)
    draw = ImageDraw.Draw(img)
    if grid:
        img.paste(grid, (0, 0))
    elif title:
        draw.text((12, 10), title, fill=INK, font=font)
    if evaluations:
        _draw_eval_graph(draw, (12, top, width - 12, top + graph_h), evaluations, graph_title, font, small,
                         black_first)
    return _png(img)


def render_line_chart(series: Sequence[tuple[str, Sequence[float]]], title: str = "", width: int = 640,
                      height: int = 320) -> bytes:
    """One line per (label, values) on shared axes (values in order, spaced evenly), with the
    lowest and highest value marked and a legend."""
    values = [v for _label, points in series for v in points]
    if not values:
        raise ValueError("nothing to draw")
    font = _font(14)
    small = _font(12)
    img = Image.new("RGB", (width, height), BACKGROUND)
    draw = ImageDraw.Draw(img)
    left, right, top, bottom = 56, 16, 34 if title else 14, 40
    if title:
        draw.text((left, 8), title, fill=INK, font=font)
    low, high = min(values), max(values)
    if high - low < 1:
        low, high = low - 10, high + 10
    margin = (high - low) * 0.08
    low, high = low - margin, high + margin
    plot_w, plot_h = width - left - right, height - top - bottom
    for k in range(5):
        value = low + (high - low) * k / 4
        y = top + plot_h - plot_h * k / 4
        draw.line((left, y, width - right, y), fill=FAINT, width=1)
        draw.text((4, y - 7), f"{value:.0f}", fill=INK, font=small)
    longest = max(len(points) for _label, points in series)
    for index, (label, points) in enumerate(series):
        colour = LINE_COLOURS[index % len(LINE_COLOURS)]
        if not points:
            continue

        def xy(i: int, v: float) -> tuple[float, float]:
            x = left + (plot_w * i / (longest - 1) if longest > 1 else plot_w / 2)
            return x, top + plot_h - plot_h * (v - low) / (high - low)

        coords = [xy(i, v) for i, v in enumerate(points)]
        if len(coords) > 1:
            draw.line(coords, fill=colour, width=3, joint="curve")
        for x, y in coords[-1:]:
            draw.ellipse((x - 4, y - 4, x + 4, y + 4), fill=colour)
        legend_x = left + index * 150
        draw.rectangle((legend_x, height - 22, legend_x + 12, height - 10), fill=colour)
        draw.text((legend_x + 18, height - 25), f"{label}: {points[-1]:.0f}", fill=INK, font=small)
    return _png(img)


def render_table(title: str, header: Sequence[str], rows: Sequence[Sequence[str]], width: int = 640) -> bytes:
    """A simple table: a title, a header row, then the rows (first column left, the rest right)."""
    font = _font(16)
    bold = _font(18)
    line_h = 28
    height = 24 + line_h * (len(rows) + 2) + 12
    img = Image.new("RGB", (width, height), BACKGROUND)
    draw = ImageDraw.Draw(img)
    draw.text((16, 10), title, fill=INK, font=bold)
    columns = max(len(header), 1)
    first_w = width * 0.46
    rest_w = (width - first_w - 32) / max(columns - 1, 1)

    def row_at(y: float, cells: Sequence[str], colour: tuple[int, int, int]) -> None:
        for k, cell in enumerate(cells):
            text = str(cell)
            if k == 0:
                while len(text) > 3 and draw.textlength(text, font=font) > first_w - 8:
                    text = text[:-2] + "…"
                draw.text((16, y), text, fill=colour, font=font)
            else:
                x = 16 + first_w + rest_w * k
                draw.text((x - draw.textlength(text, font=font), y), text, fill=colour, font=font)

    y = 24 + line_h
    row_at(y, header, (110, 106, 100))
    draw.line((16, y + line_h - 4, width - 16, y + line_h - 4), fill=FAINT, width=1)
    for i, cells in enumerate(rows):
        row_at(y + line_h * (i + 1), cells, INK)
    return _png(img)
