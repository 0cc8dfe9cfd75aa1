"""A move as people see it: square numbers, captured squares, promotion.

Kept apart from ``position`` so that ``notation`` can build moves without
importing ``position`` (``position`` imports ``notation``, never the reverse).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Move:
    """A move: the squares the piece stands on, the squares it captures, whether it promotes."""

    path: tuple[int, ...]
    captured: tuple[int, ...] = ()
    promotes: bool = False

    @property
    def is_capture(self) -> bool:
        """Whether the move takes pieces."""
        return bool(self.captured)

    @property
    def start(self) -> int:
        """The square the piece leaves."""
        return self.path[0]

    @property
    def end(self) -> int:
        """The square the piece ends on."""
        return self.path[-1]

    def __str__(self) -> str:
        return format_move(self)


def format_move(move: Move) -> str:
    """Standard notation: ``22-19`` for a plain move, the full path ``29x22x15x6`` for a capture."""
    return ("x" if move.captured else "-").join(map(str, move.path))
