"""From a position to the pictures the chat sees (the renderers know nothing of the rules)."""

from __future__ import annotations

from collections.abc import Iterable

from bot.rules import Move, Position, Variant
from renderers import BoardView, render_capture_gif, render_png
from renderers.text import render_text

BOARD_PX = 600


def _rc(v: Variant, squares: Iterable[int]) -> list[tuple[int, int]]:
    return [v.square_to_rc(sq) for sq in squares]


def board_view(
    pos: Position,
    last_path: Iterable[int] = (),
    captured: Iterable[int] = (),
    dots: Iterable[int] = (),
    selected: int | None = None,
    flipped: bool | None = None,
    routes: Iterable[Iterable[int]] = (),
    earlier_paths: Iterable[Iterable[int]] = (),
) -> BoardView:
    """The neutral picture description of a position; seen from the side to move by default.

    ``routes`` are numbered alternatives of one piece (capture paths ending on one square)."""
    v = pos.variant
    return BoardView(
        size=v.size,
        pieces={v.square_to_rc(sq): code for sq, code in pos.pieces().items()},
        labels={v.square_to_rc(sq): sq for sq in range(1, v.squares + 1)},
        last_path=_rc(v, last_path),
        captured=_rc(v, captured),
        dots=_rc(v, dots),
        selected=v.square_to_rc(selected) if selected else None,
        flipped=(not pos.white) if flipped is None else flipped,
        routes=[_rc(v, route) for route in routes],
        earlier_paths=[_rc(v, path) for path in earlier_paths],
    )


def png(view: BoardView) -> bytes:
    return render_png(view, BOARD_PX)


def text(view: BoardView) -> str:
    return render_text(view)


def capture_animation(before: Position, move: Move, flipped: bool) -> bytes | None:
    """A GIF of a multi-capture step by step (captured pieces stay until the move ends)."""
    if len(move.captured) < 2:
        return None
    v = before.variant
    pieces = {v.square_to_rc(sq): code for sq, code in before.pieces().items()}
    mover = pieces.pop(v.square_to_rc(move.start))
    labels = {v.square_to_rc(sq): sq for sq in range(1, v.squares + 1)}
    frames = []
    for i, sq in enumerate(move.path):
        now = dict(pieces)
        now[v.square_to_rc(sq)] = mover
        frames.append(BoardView(size=v.size, pieces=now, labels=labels, last_path=_rc(v, move.path[: i + 1]),
                                flipped=flipped))
    final = {rc: code for rc, code in pieces.items() if rc not in set(_rc(v, move.captured))}
    final[v.square_to_rc(move.end)] = mover.upper() if move.promotes else mover
    frames.append(BoardView(size=v.size, pieces=final, labels=labels, last_path=_rc(v, move.path),
                            captured=_rc(v, move.captured), flipped=flipped))
    return render_capture_gif(frames, BOARD_PX)
