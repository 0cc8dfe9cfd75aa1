"""A tournament's standings as a picture: rank, name, points and tie-breaks, and for a round robin
the cross table (each player's result against each other) between the name and the points.

Like the other renderers it takes plain data and returns PNG bytes; it knows nothing of the
tournament rules or of the chat (the caller words the header and formats nothing but names).
Telegram shows a photo about 512 px wide on a phone, so the picture is drawn at most a little
wider than that for a Swiss and only as wide as a 16-player cross table needs, with the text
large enough to stay legible once scaled down.
"""

from __future__ import annotations

import io
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from PIL import Image, ImageDraw

from .board import Font, _font

__all__ = ["StandingRow", "StandingsView", "cross_cells", "fit_name", "points_text", "render_standings"]

BACKGROUND = (250, 248, 242)
INK = (40, 40, 40)
MUTED = (110, 106, 100)
FAINT = (214, 210, 202)
STRIPE = (240, 236, 226)
SELF_CELL = (200, 196, 188)
LEADER = (176, 122, 10)
PAD = 16
GAP = 14
LINE_H = 30
NAME_MAX_PX = 190
CELL_W = 30


@dataclass(frozen=True)
class StandingRow:
    """One player's line: ``cross`` (round robin only) has one cell per player in rank order,
    the player's own cell empty ("")."""

    rank: int
    name: str
    points: float
    tiebreaks: tuple[float, ...] = ()
    withdrawn: bool = False
    cross: tuple[str, ...] = ()


@dataclass(frozen=True)
class StandingsView:
    """Everything one picture shows; hashable, so equal views are drawn once."""

    title: str
    # Column headings: rank, name, points, then one per tie-break (in the rows' order).
    rank_label: str
    name_label: str
    points_label: str
    tiebreak_labels: tuple[str, ...]
    rows: tuple[StandingRow, ...]
    subtitle: str = ""
    # Written after a withdrawn player's name (a mark, not a word: the caller chooses it).
    withdrawn_mark: str = "†"


def points_text(value: float) -> str:
    """1, 2½, ½: the way draughts and chess tables write half points."""
    whole = int(value)
    half = abs(value - whole) >= 0.25
    if half and whole == 0:
        return "½" if value >= 0 else "-½"
    return f"{whole}½" if half else str(whole)


def _number(value: float) -> str:
    return points_text(value) if abs(value * 2 - round(value * 2)) < 1e-9 else f"{value:.2f}"


_INVISIBLE = "\u200c\u200d\ufe0e\ufe0f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


@lru_cache(maxsize=4096)
def _drawable(ch: str, size: int) -> bool:
    """Whether the bundled font has a glyph for ``ch`` (an emoji or a CJK letter it lacks would
    be drawn as an empty box): a missing glyph draws the same as a private-use code point."""
    font = _font(size)
    mask, missing = font.getmask(ch), font.getmask(chr(0x10FFFD))
    return not (mask.size == missing.size and bytes(mask) == bytes(missing))


def _clean(name: str, size: int) -> str:
    """Control and bidi-override characters removed (an override would flip the rest of the
    row, so a name cannot change how the picture reads beyond its own cell), and characters the
    font cannot draw with them, unless nothing would be left (then boxes still tell names apart)."""
    kept = []
    for ch in name:
        if ch.isspace():
            kept.append(" ")
        elif unicodedata.category(ch) in ("Cc", "Cs") or ch in _INVISIBLE or 0x1F3FB <= ord(ch) <= 0x1F3FF:
            continue
        else:
            kept.append(ch)
    drawable = [ch for ch in kept if ch.isspace() or _drawable(ch, size)]
    return " ".join("".join(drawable if "".join(drawable).strip() else kept).split())


def _prefix(text: str, n: int) -> str:
    """The first ``n`` characters, moved back so a letter is never cut from its accents."""
    while 0 < n < len(text) and unicodedata.combining(text[n]):
        n -= 1
    return text[:n].rstrip()


def fit_name(name: str, font: Font, width: float) -> str:
    """The name as drawn: cleaned, and cut with an ellipsis where it is wider than ``width``."""
    text = _clean(name, int(getattr(font, "size", 18))) or "?"
    probe = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    if probe.textlength(text, font=font) <= width:
        return text
    low, high = 0, len(text)
    while low < high:                     # the longest prefix that fits with its ellipsis
        mid = (low + high + 1) // 2
        if probe.textlength(_prefix(text, mid) + "…", font=font) <= width:
            low = mid
        else:
            high = mid - 1
    return _prefix(text, low) + "…"


def render_standings(view: StandingsView) -> bytes:
    """The standings as PNG bytes (cached by the view: a standings post goes to several places)."""
    return _render(view)


@lru_cache(maxsize=32)
def _render(view: StandingsView) -> bytes:
    font, small, bold = _font(18), _font(14), _font(20)
    probe = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    rows = view.rows
    cross = any(r.cross for r in rows)
    size = max((len(r.cross) for r in rows), default=0)
    names = [fit_name(r.name, font, NAME_MAX_PX) + (f" {view.withdrawn_mark}" if r.withdrawn else "")
             for r in rows]
    rank_w = max([probe.textlength(view.rank_label, font=small)]
                 + [probe.textlength(str(r.rank), font=font) for r in rows])
    name_w = max([probe.textlength(view.name_label, font=small)] + [probe.textlength(n, font=font) for n in names])
    # Numeric columns: points then each tie-break, as wide as their widest cell.
    numeric_heads = [view.points_label, *view.tiebreak_labels]
    numeric_cells = [[points_text(r.points), *(_number(v) for v in r.tiebreaks)] for r in rows]
    numeric_w = [probe.textlength(h, font=small) for h in numeric_heads]
    for cells in numeric_cells:
        for k, cell in enumerate(cells[:len(numeric_w)]):
            numeric_w[k] = max(numeric_w[k], probe.textlength(cell, font=font))
    cross_w = size * CELL_W if cross else 0
    width = int(PAD * 2 + rank_w + GAP + name_w + GAP + (cross_w + GAP if cross else 0)
                + sum(numeric_w) + GAP * (len(numeric_w) - 1))
    width = max(width, int(probe.textlength(view.title, font=bold)) + PAD * 2, 360)
    top = PAD + 28 + (22 if view.subtitle else 0)
    height = top + LINE_H * (len(rows) + 1) + PAD
    img = Image.new("RGB", (width, height), BACKGROUND)
    draw = ImageDraw.Draw(img)
    draw.text((PAD, PAD), view.title, fill=INK, font=bold)
    if view.subtitle:
        draw.text((PAD, PAD + 28), view.subtitle, fill=MUTED, font=small)
    x_rank = PAD
    x_name = x_rank + rank_w + GAP
    x_cross = x_name + name_w + GAP
    # Right edges of the numeric columns, from the right margin inwards.
    edges: list[float] = []
    edge = float(width - PAD)
    for w in reversed(numeric_w):
        edges.insert(0, edge)
        edge -= w + GAP

    def centred(x: float, text: str, y: float, colour: tuple[int, int, int], f: Font) -> None:
        draw.text((x + (CELL_W - draw.textlength(text, font=f)) / 2, y), text, fill=colour, font=f)

    y = top
    head_y = y + 8
    draw.text((x_rank + rank_w - draw.textlength(view.rank_label, font=small), head_y), view.rank_label,
              fill=MUTED, font=small)
    draw.text((x_name, head_y), view.name_label, fill=MUTED, font=small)
    if cross:
        for k in range(size):
            centred(x_cross + k * CELL_W, str(k + 1), head_y, MUTED, small)
    for k, head in enumerate(numeric_heads):
        draw.text((edges[k] - draw.textlength(head, font=small), head_y), head, fill=MUTED, font=small)
    draw.line((PAD, y + LINE_H - 2, width - PAD, y + LINE_H - 2), fill=FAINT, width=1)
    for i, (row, name, cells) in enumerate(zip(rows, names, numeric_cells, strict=True)):
        ry = y + LINE_H * (i + 1)
        if i % 2:
            draw.rectangle((PAD // 2, ry, width - PAD // 2, ry + LINE_H - 1), fill=STRIPE)
        ty = ry + 4
        colour = LEADER if row.rank == 1 and row.points > 0 else (MUTED if row.withdrawn else INK)
        rank = str(row.rank)
        draw.text((x_rank + rank_w - draw.textlength(rank, font=font), ty), rank, fill=colour, font=font)
        draw.text((x_name, ty), name, fill=colour, font=font)
        if cross:
            for k, cell in enumerate(row.cross[:size]):
                cx = x_cross + k * CELL_W
                if k == i:
                    draw.rectangle((cx + 3, ry + 4, cx + CELL_W - 3, ry + LINE_H - 5), fill=SELF_CELL)
                elif cell:
                    centred(cx, cell, ty, INK, font)
        for k, cell in enumerate(cells):
            draw.text((edges[k] - draw.textlength(cell, font=font), ty), cell, fill=INK if k else colour, font=font)
    out = io.BytesIO()
    img.save(out, format="PNG", optimize=True)
    return out.getvalue()


def cross_cells(order: Sequence[str], results: dict[tuple[str, str], Sequence[str]]) -> dict[str, tuple[str, ...]]:
    """Each player's row of the cross table, in ``order`` (rank order): ``results[(a, b)]`` is
    what ``a`` scored against ``b`` in each game they played ("1", "½", "0", "+", "-"), joined
    when they met twice."""
    return {a: tuple("" if a == b else "".join(results.get((a, b), ())) for b in order) for a in order}
