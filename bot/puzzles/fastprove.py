"""The puzzles' material search compiled: ``prove.Search`` run by ``bot.ai.jit.material_value``.

``prove.Search`` stays the definition and the fallback (no numba, a variant the compiled generator
does not play, ``DRAUGHTS_JIT=off``); this twin gives the same value for every call, counts the
same nodes against the same budget, and keeps its bounds in a table of its own (compiled, keyed by
the position exactly as the Python one is).  ``tests/puzzles/test_fastprove.py`` holds them equal.
"""

from __future__ import annotations

import threading
from typing import Any

from bot.ai import jit
from bot.rules import Variant

from .prove import INF, MAN, NO_MOVE, BudgetExceeded, Search

_LOCAL = threading.local()
_compiled = False


def _compile_once() -> None:
    """On a machine without the compiled code (a fresh clone), the engine's one-time compile makes it,
    under its lock: ``puzzles check``'s worker processes would otherwise each compile it at once."""
    global _compiled
    if not _compiled:
        if jit.needs_compiling():
            jit.warm()
        _compiled = True


def _buffers() -> tuple[tuple, Any]:
    # One set per thread: a search's calls nest only through its own recursion, never another's.
    got = getattr(_LOCAL, "buffers", None)
    if got is None:
        got = _LOCAL.buffers = jit.material_buffers()
    return got


class CompiledSearch(Search):
    """``Search`` whose ``value`` is the compiled ``jit.material_value``."""

    def __init__(self, variant: Variant | str, budget: int | None = None) -> None:
        super().__init__(variant, budget)
        _compile_once()
        self.layout = jit.layout(self.variant)
        self.settings = jit.material_settings(self.variant, MAN, self.king, NO_MOVE, INF)
        self.bounds, self.count = jit.material_table()
        # A buffer overflow (never met in a game's position) hands the search to Python for good.
        self.fallback = False

    def value(self, um: int, uk: int, tm: int, tk: int, white: bool, depth: int, alpha: int, beta: int) -> int:
        if self.fallback:
            return super().value(um, uk, tm, tk, white, depth, alpha, beta)
        bufs, st = _buffers()
        before = self.nodes
        st[:] = 0
        st[jit.S_NODES] = self.nodes
        st[jit.S_NODE_LIMIT] = self.budget if self.budget is not None else jit.NO_NODE_LIMIT
        lay = self.layout
        d = lay.dense
        score = jit.material_value(lay.g, lay.tabs, bufs, st, self.settings, self.bounds, self.count, d(um), d(uk),
                                   d(tm), d(tk), white, depth, alpha, beta, 0)
        self.nodes = int(st[jit.S_NODES])
        if st[jit.S_ABORT]:
            if not st[jit.S_OVERFLOW]:
                raise BudgetExceeded
            # The call is searched again in Python; the bounds the compiled one stored on the way are
            # kept (true bounds all the same, though the Python search alone would not hold them yet).
            self._to_python()
            self.nodes = before
            return super().value(um, uk, tm, tk, white, depth, alpha, beta)
        return int(score)

    def _to_python(self) -> None:
        """Go on in Python with the bounds found so far (on full boards, as the Python table keys them)."""
        full = self.layout.full
        for (um, uk, tm, tk, white), bound in jit.material_bounds(self.bounds).items():
            self.table[(full(um), full(uk), full(tm), full(tk), white)] = bound
        self.fallback = True


def available(variant: Variant) -> bool:
    """Whether the compiled search runs ``variant`` here."""
    if not jit.available(variant):
        return False
    try:
        jit.layout(variant)
    except ValueError:
        return False
    return True
