"""Endgame tables: perfect play with few pieces, for the search, the analysis and the puzzles.

``tables(variant)`` gives the tables of a variant (loaded once per process from the shipped
files or the user's built ones, see ``store.py``), or None when there are none.  A position
with at most ``Tables.pieces`` pieces is then known exactly: ``verdict`` says whether the side
to move wins, loses or draws and in how many plies the game ends with best play.  How they are
made: ``solve.py``; the command ``python -m bot ai egtb build``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from bot import config
from bot.rules import Move, Position, Variant, get_variant

from . import store
from .solve import Geometry, Material, name, swap

__all__ = ["DRAW", "LOSS", "WIN", "Tables", "Verdict", "explain", "forget", "long_diagonal", "tables", "verdict"]

WIN, LOSS, DRAW = "win", "loss", "draw"

Probe = Callable[[int, int, int, int, bool], int]


@dataclass(frozen=True)
class Verdict:
    """What the tables say of a position, for the side to move: ``result`` win, loss or draw;
    ``plies`` to the end of the game with best play (0 for a draw); ``material`` the pieces,
    the side to move's first ((men, kings) each)."""

    result: str
    plies: int
    material: Material

    @property
    def name(self) -> str:
        """'KKKvK': kings K, men m, the side to move's first."""
        return name(self.material)


def _verdict(byte: int, material: Material) -> Verdict:
    if byte == 0:
        return Verdict(DRAW, 0, material)
    plies = byte - 1
    return Verdict(WIN if plies & 1 else LOSS, plies, material)


class Tables:
    """One variant's tables up to ``pieces`` pieces; ``source`` gives a material's table bytes
    (read when a position of that material is first probed)."""

    def __init__(self, v: Variant, pieces: int,
                 source: Mapping[Material, bytes | bytearray | memoryview] | store.TableFile) -> None:
        self.variant = v
        self.pieces = pieces
        self.source = source
        self.geo = Geometry(v)
        self._index: dict[Material, tuple[dict[int, int], dict[int, int], dict[int, int], dict[int, int],
                                          int, int, int, bytes | bytearray | memoryview] | None] = {}
        self.probe: Probe = self._make_probe()

    def table(self, m: Material) -> bytes | bytearray | memoryview:
        """Material ``m``'s bytes (KeyError when the tables do not hold it)."""
        if isinstance(self.source, store.TableFile):
            return self.source.table(m)
        return self.source[m]

    def _entry(self, m: Material) -> tuple[dict[int, int], dict[int, int], dict[int, int], dict[int, int],
                                            int, int, int, bytes | bytearray | memoryview] | None:
        if m in self._index:
            return self._index[m]
        entry = None
        if sum(m) <= self.pieces and m[0] + m[1] and m[2] + m[3]:
            lay = self.geo.layout(m)
            (_, r0), (_, r1), (_, r2), (_, r3) = lay.groups
            _, n1, n2, n3 = lay.sizes
            entry = (r0, r1, r2, r3, n1, n2, n3, self.table(m))
        self._index[m] = entry
        return entry

    def _make_probe(self) -> Probe:
        """A function (um, uk, tm, tk, white) -> the stored byte (see ``solve.py``), or -1 when
        the material is not in the tables.  Written for speed: the search calls it at every node
        with few pieces."""
        turn_bit = self.geo.turn_bit
        index = self._index
        load = self._entry

        def turn(mask: int) -> int:
            out = 0
            while mask:
                low = mask & -mask
                mask ^= low
                out |= turn_bit[low.bit_length() - 1]
            return out

        def probe(um: int, uk: int, tm: int, tk: int, white: bool) -> int:
            if not white:
                um, uk, tm, tk = turn(um), turn(uk), turn(tm), turn(tk)
            m = (um.bit_count(), uk.bit_count(), tm.bit_count(), tk.bit_count())
            entry = index[m] if m in index else load(m)
            if entry is None:
                return -1
            r0, r1, r2, r3, n1, n2, n3, table = entry
            return table[((r0[um] * n1 + r1[uk]) * n2 + r2[tm]) * n3 + r3[tk]]

        return probe

    def covers(self, pos: Position) -> bool:
        return (pos.wm | pos.wk | pos.bm | pos.bk).bit_count() <= self.pieces

    def verdict(self, pos: Position) -> Verdict | None:
        """The tables' word on ``pos`` for its side to move; None when it has too many pieces
        (or a side has none: the game is over)."""
        um, uk, tm, tk = pos.sides()
        if not (um | uk) or not (tm | tk) or not self.covers(pos):
            return None
        byte = self.probe(um, uk, tm, tk, pos.white)
        if byte < 0:
            return None
        return _verdict(byte, (um.bit_count(), uk.bit_count(), tm.bit_count(), tk.bit_count()))

    def after(self, pos: Position, move: Move) -> Verdict:
        """The verdict for the side playing ``move`` once it is played (a capture of the last
        piece is a win in 1)."""
        child = pos.play(move)
        um, uk, tm, tk = pos.sides()
        if not (child.wm | child.wk) or not (child.bm | child.bk):
            return Verdict(WIN, 1, (um.bit_count(), uk.bit_count(), tm.bit_count(), tk.bit_count()))
        theirs = self.verdict(child)
        if theirs is None:
            raise ValueError("the position is not in the tables")
        mat = theirs.material
        mine = (mat[2], mat[3], mat[0], mat[1])
        if theirs.result == DRAW:
            return Verdict(DRAW, 0, mine)
        return Verdict(LOSS if theirs.result == WIN else WIN, theirs.plies + 1, mine)

    def best_moves(self, pos: Position) -> list[tuple[Move, Verdict]]:
        """Every legal move with its verdict for the mover, best first: the quickest win, then
        draws, then the longest loss."""
        def rank(mv: tuple[Move, Verdict]) -> tuple[int, int]:
            v = mv[1]
            if v.result == WIN:
                return (0, v.plies)
            if v.result == DRAW:
                return (1, 0)
            return (2, -v.plies)

        return sorted(((m, self.after(pos, m)) for m in pos.legal_moves()), key=rank)


_LOADED: dict[str, Tables | None] = {}
_LOCK = threading.Lock()


def tables(variant: Variant | str) -> Tables | None:
    """The tables of a variant with the most pieces found (loaded once per process), or None
    (also when ``DRAUGHTS_EGTB=off``: the engine then plays on its search alone)."""
    v = get_variant(variant)
    if not config.engine().egtb:
        return None
    if v.id in _LOADED:
        return _LOADED[v.id]
    with _LOCK:
        if v.id not in _LOADED:
            found: Tables | None = None
            for path in store.find(v):
                try:
                    source = store.TableFile(path, v)
                except store.TableFileError:
                    continue
                found = Tables(v, source.pieces, source)
                break
            _LOADED[v.id] = found
    return _LOADED[v.id]


def forget(variant: Variant | str | None = None) -> None:
    """Drop loaded tables (all, or one variant's) so the next use reads the files again."""
    with _LOCK:
        if variant is None:
            _LOADED.clear()
        else:
            _LOADED.pop(get_variant(variant).id, None)


def verdict(pos: Position) -> Verdict | None:
    """The tables' word on ``pos`` (None without tables or with too many pieces)."""
    tb = tables(pos.variant)
    return None if tb is None else tb.verdict(pos)


def explain(pos: Position, v: Verdict) -> str | None:
    """A catalog key naming why a known ending ends as it does, when there is a classic reason.

    Spanish three kings against one: the lone king draws when it holds the long diagonal (the
    one from corner to corner), or gets to it; ``tests/ai/test_egtb_known.py`` checks the
    tables say so."""
    if pos.variant.id != "spanish" or v.result != DRAW or sorted([v.material, swap(v.material)])[0] != (0, 1, 0, 3):
        return None
    diagonal = long_diagonal(pos.variant)
    lone_white = (pos.count("W"), pos.count("B")) == ((0, 1), (0, 3))
    lone = pos.wk if lone_white else pos.bk
    if lone & diagonal:
        return "ending.why_long_diagonal"
    if pos.white == lone_white and any(1 << pos.variant.sq_to_bit[m.path[-1]] & diagonal and not m.captured
                                       for m in pos.legal_moves()):
        return "ending.why_reaches_long_diagonal"
    return None


def long_diagonal(v: Variant) -> int:
    """The bitboard of the long diagonal: from the top-left corner to the bottom-right one, the
    right-hand corner of both players (seed 002: 'la gran diagonal ... a la derecha de cada
    jugador'); its squares are dark."""
    mask = 0
    for row in range(v.size):
        mask |= 1 << (row * v.pitch + row)
    return mask
