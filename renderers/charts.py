"""Rating charts over time and leaderboard tables: data in, PNG bytes out.

The chart gives every rated game its own place along the x axis, in order, and writes the date
(the caller says how a date reads in its language) where it changes, round values on its y axis
and a marker on every game; the table sizes its columns from what they hold, so no header
touches the edge.
"""

from __future__ import annotations

import datetime as dt
import io
import math
from collections.abc import Callable, Sequence

from PIL import Image, ImageDraw

from .board import _font

BACKGROUND = (250, 248, 242)
INK = (40, 40, 40)
MUTED = (110, 106, 100)
FAINT = (200, 196, 188)
LINE_COLOURS = ((33, 102, 172), (178, 24, 43), (27, 120, 55), (118, 42, 131))
PAD = 24
DAY = 86400.0


def _png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=True)
    return buf.getvalue()


def nice_step(span: float, most: int = 6) -> float:
    """A round tick step (1, 2, 2.5 or 5 times a power of ten) giving at most ``most`` ticks."""
    span = max(span, 1e-9)
    raw = span / max(most - 1, 1)
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 2.5, 5, 10):
        if factor * power >= raw:
            return factor * power
    return 10 * power


def value_ticks(low: float, high: float, most: int = 6, least_step: float = 10.0) -> list[float]:
    """Round values covering [low, high]: the first at or below low, the last at or above high
    (ratings are whole numbers: steps of at least ``least_step``)."""
    step = max(nice_step(high - low, most - 1), least_step)
    first = math.floor(low / step) * step
    ticks = [first]
    while ticks[-1] < high - 1e-9:
        ticks.append(ticks[-1] + step)
    return ticks


def day_ticks(start: float, end: float, most: int = 5) -> list[dt.date]:
    """Whole days (UTC) between two times, evenly spaced, at most ``most`` of them."""
    first = dt.datetime.fromtimestamp(start, dt.UTC).date()
    last = dt.datetime.fromtimestamp(end, dt.UTC).date()
    days = (last - first).days
    step = max(1, math.ceil(days / max(most - 1, 1)))
    return [first + dt.timedelta(days=k) for k in range(0, days + 1, step)]


def render_rating_chart(series: Sequence[tuple[str, Sequence[tuple[float, float]]]],
                        date_label: Callable[[dt.date], str], title: str = "",
                        width: int = 640, height: int = 340) -> bytes:
    """One line per (label, [(epoch seconds, rating), ...]), a marker on each point.  The x axis
    is the games in order, evenly spaced (seven games of one evening are seven places, not one
    line), with the date under the first game of each day."""
    points = [p for _label, pts in series for p in pts]
    if not points:
        raise ValueError("nothing to draw")
    font, small = _font(14), _font(12)
    img = Image.new("RGB", (width, height), BACKGROUND)
    draw = ImageDraw.Draw(img)
    top = 36 if title else 16
    left, right, bottom = 60, PAD, 62
    if title:
        draw.text((left, 10), title, fill=INK, font=font)
    lowest, highest = min(v for _t, v in points), max(v for _t, v in points)
    # A little room so no marker sits on the frame.
    room = max((highest - lowest) * 0.04, 20.0)
    ticks = value_ticks(lowest - room, highest + room)
    if len(ticks) < 2:
        ticks = [ticks[0] - 50, ticks[0] + 50]
    low, high = ticks[0], ticks[-1]
    # Every game its place (the series share them: a time two players' games have is one place).
    times = sorted({t for t, _v in points})
    place = {t: i for i, t in enumerate(times)}
    plot_w, plot_h = width - left - right, height - top - bottom

    def x_of(t: float) -> float:
        if len(times) == 1:
            return left + plot_w / 2
        return left + plot_w * place[t] / (len(times) - 1)

    def y_of(v: float) -> float:
        return top + plot_h - plot_h * (v - low) / (high - low)

    for value in ticks:
        y = y_of(value)
        draw.line((left, y, left + plot_w, y), fill=FAINT, width=1)
        label = f"{value:g}"
        draw.text((left - 8 - draw.textlength(label, font=small), y - 7), label, fill=INK, font=small)
    axis_y = top + plot_h
    draw.line((left, axis_y, left + plot_w, axis_y), fill=MUTED, width=1)
    last_right = -1.0
    previous: dt.date | None = None
    for at in times:
        day = dt.datetime.fromtimestamp(at, dt.UTC).date()
        if day == previous:
            continue
        previous = day
        x = x_of(at)
        label = date_label(day)
        w = draw.textlength(label, font=small)
        lx = min(max(x - w / 2, left - 20), width - PAD - w)
        if lx <= last_right + 8:
            continue                         # no two dates on top of each other
        draw.line((x, axis_y, x, axis_y + 4), fill=MUTED, width=1)
        draw.text((lx, axis_y + 6), label, fill=INK, font=small)
        last_right = lx + w
    legend_x = float(left)
    for index, (label, pts) in enumerate(series):
        colour = LINE_COLOURS[index % len(LINE_COLOURS)]
        coords = [(x_of(t), y_of(v)) for t, v in pts]
        if len(coords) > 1:
            draw.line(coords, fill=colour, width=2)
        for x, y in coords:
            draw.ellipse((x - 4, y - 4, x + 4, y + 4), fill=colour, outline=BACKGROUND)
        if pts:
            text = f"{label}: {pts[-1][1]:.0f}"
            draw.rectangle((legend_x, height - 22, legend_x + 12, height - 10), fill=colour)
            draw.text((legend_x + 18, height - 25), text, fill=INK, font=small)
            legend_x += 18 + draw.textlength(text, font=small) + 20
    return _png(img)


def render_table(title: str, header: Sequence[str], rows: Sequence[Sequence[str]], width: int = 640) -> bytes:
    """A table: a title, a header row, then the rows (first column left, the rest right-aligned),
    with every column as wide as its widest cell and ``PAD`` pixels kept free on both sides."""
    font, bold = _font(16), _font(18)
    line_h = 28
    probe = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    columns = max(len(header), *(len(r) for r in rows)) if rows else len(header)
    widths = [0.0] * columns
    for cells in [header, *rows]:
        for k, cell in enumerate(cells):
            widths[k] = max(widths[k], probe.textlength(str(cell), font=font))
    gap = 24
    needed = PAD * 2 + sum(widths) + gap * (columns - 1)
    width = max(width, math.ceil(needed), math.ceil(probe.textlength(title, font=bold)) + PAD * 2)
    height = 24 + line_h * (len(rows) + 2) + 12
    img = Image.new("RGB", (width, height), BACKGROUND)
    draw = ImageDraw.Draw(img)
    draw.text((PAD, 10), title, fill=INK, font=bold)
    # Right edges of the numeric columns, from the right margin inwards.
    right_edges = [0.0] * columns
    edge: float = width - PAD
    for k in range(columns - 1, 0, -1):
        right_edges[k] = edge
        edge -= widths[k] + gap

    def row_at(y: float, cells: Sequence[str], colour: tuple[int, int, int]) -> None:
        for k, cell in enumerate(cells):
            text = str(cell)
            if k == 0:
                draw.text((PAD, y), text, fill=colour, font=font)
            else:
                draw.text((right_edges[k] - draw.textlength(text, font=font), y), text, fill=colour, font=font)

    y = 24 + line_h
    row_at(y, header, MUTED)
    draw.line((PAD, y + line_h - 4, width - PAD, y + line_h - 4), fill=FAINT, width=1)
    for i, cells in enumerate(rows):
        row_at(y + line_h * (i + 1), cells, INK)
    return _png(img)
