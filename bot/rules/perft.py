"""Perft: count the leaves of the legal move tree, as fast as pure Python allows.

Walks the fast generator of ``movegen`` (``movegen.fast``) on raw bitboards;
the last ply is counted with ``int.bit_count`` without making a single move.
"""

from __future__ import annotations

from collections.abc import Callable

from . import movegen
from .position import Position
from .variants import Variant

_CACHE: dict[str, Callable[[int, int, int, int, bool, int], int]] = {}


def _build(v: Variant) -> Callable[[int, int, int, int, bool, int], int]:
    children = movegen.fast(v).children
    count = movegen.fast(v).count

    def walk(um: int, uk: int, tm: int, tk: int, white: bool, depth: int) -> int:
        nxt = not white
        total = 0
        if depth == 2:
            for a, b, c, d in children(um, uk, tm, tk, white):
                total += count(a, b, c, d, nxt)
        else:
            depth -= 1
            for a, b, c, d in children(um, uk, tm, tk, white):
                total += walk(a, b, c, d, nxt, depth)
        return total

    return walk


def _walker(v: Variant) -> Callable[[int, int, int, int, bool, int], int]:
    if v.id not in _CACHE:
        _CACHE[v.id] = _build(v)
    return _CACHE[v.id]


def perft(pos: Position, depth: int) -> int:
    """Leaves of the legal move tree at ``depth`` plies (merged moves, docs/rules.md §3.12)."""
    if depth <= 0:
        return 1
    um, uk, tm, tk = pos.sides()
    if depth == 1:
        return movegen.fast(pos.variant).count(um, uk, tm, tk, pos.white)
    return _walker(pos.variant)(um, uk, tm, tk, pos.white, depth)


def count_moves(pos: Position) -> int:
    """Number of legal moves, without building them."""
    return movegen.fast(pos.variant).count(*pos.sides(), pos.white)
