"""The board drawn in plain text, for the console and for logs."""

from __future__ import annotations

from .board import BoardView

_SYMBOL = {"w": "o", "W": "O", "b": "x", "B": "X"}


def render_text(view: BoardView) -> str:
    """Rows of cells: ``o``/``O`` white man/king, ``x``/``X`` black man/king, the square
    number on an empty dark square, ``*`` on a destination dot, and ``.`` on light squares."""
    width = len(str(max(view.labels.values(), default=0)))
    dots = set(view.dots)
    rows = range(view.size - 1, -1, -1) if view.flipped else range(view.size)
    cols = list(range(view.size - 1, -1, -1) if view.flipped else range(view.size))
    lines = []
    for row in rows:
        cells = []
        for col in cols:
            rc = (row, col)
            if rc in view.pieces:
                cell = _SYMBOL[view.pieces[rc]]
            elif rc in dots:
                cell = "*"
            elif rc in view.labels:
                cell = str(view.labels[rc])
            else:
                cell = "."
            cells.append(cell.rjust(width))
        lines.append(" ".join(cells))
    return "\n".join(lines)
