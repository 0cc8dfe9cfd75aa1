"""Endgame tables by retrograde analysis: every position of a few pieces, won, lost or drawn.

A table holds, for one *material* (our men, our kings, their men, their kings, counted for the
side to move), one byte per position: 0 for a draw (or an index that is no position: two pieces
on one square), otherwise ``d + 1`` where ``d`` is the number of plies to the end of the game
with best play (the winner hurrying, the loser holding out): odd ``d`` a win for the side to move,
even ``d`` a loss (``d = 0``: it has no move now).  The game ends when a side cannot move, so ``d``
is exact and the search can use it as its own forced-win score.

Positions are always seen with the side to move playing *up* the board (as White does): a
position with Black to move is turned half round first, which swaps nothing in the rules (the
board and both players' directions map onto themselves).  So one table serves both colours.

Materials are solved in an order where every move leaving a material lands in one already
solved: captures remove a piece, crowning turns a man into a king, so fewer pieces first and,
for the same pieces, more kings first.  A material and its colour swap (ours <-> theirs) are
solved together, since a plain move goes from one to the other.  Inside such a pair the
classical counting method: the positions where a move is forced to lose or can win are found
in order of their distance by walking moves backwards (un-moves) from the positions already
decided; a position is lost when the last of its moves is found to lose.  Moves out of the
pair read the table of the material they reach.

The rules come from the fast move generator (``bot.rules.movegen``), so the tables follow
exactly the rules the bot plays by; the un-moves are only plain moves (a capture or a crowning
always leaves the material) and a position reached backwards counts only when its side to move
had no capture (captures are compulsory).  The no-progress draw rule is not in the tables (as
in published tables); ``build`` reports the longest win so a reader can compare.
No I/O here: ``store.py`` reads and writes tables.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from math import comb

from bot.rules import Variant, movegen

Material = tuple[int, int, int, int]   # our men, our kings, their men, their kings

DRAW = 0


def materials(pieces: int) -> list[Material]:
    """Every material of 2..``pieces`` pieces with at least one piece a side, in solving order."""
    out: list[Material] = []
    for n in range(2, pieces + 1):
        level: list[Material] = []
        for ours in range(1, n):
            theirs = n - ours
            for ok in range(ours + 1):
                for tk in range(theirs + 1):
                    level.append((ours - ok, ok, theirs - tk, tk))
        # More kings first: crowning a man leads to a material with one king more.
        level.sort(key=lambda m: (-(m[1] + m[3]), m))
        out.extend(level)
    return out


def swap(m: Material) -> Material:
    return (m[2], m[3], m[0], m[1])


def name(m: Material) -> str:
    """A material as text: 'KKvK' (kings K, men m), ours first."""
    return "K" * m[1] + "m" * m[0] + "v" + "K" * m[3] + "m" * m[2]


class Geometry:
    """Squares, the half turn, and position <-> index for one variant."""

    def __init__(self, v: Variant) -> None:
        self.v = v
        self.size = v.size
        bits = sorted(v.sq_to_bit[1:])
        top = (v.size - 1) * (v.pitch + 1)
        # The half turn: (row, col) -> (size-1-row, size-1-col), bit b -> top - b.
        self.turn_bit = {b: 1 << (top - b) for b in bits}
        row = v.pitch
        # Our men never stand on our crowning row (row 0), theirs never on row size-1.
        self.our_men = [b for b in bits if b // row != 0]
        self.their_men = [b for b in bits if b // row != v.size - 1]
        self.kings = bits
        self._ranks: dict[tuple[int, int], tuple[list[int], dict[int, int]]] = {}

    def turn(self, mask: int) -> int:
        out = 0
        tb = self.turn_bit
        while mask:
            low = mask & -mask
            mask ^= low
            out |= tb[low.bit_length() - 1]
        return out

    def group(self, which: int, k: int) -> tuple[list[int], dict[int, int]]:
        """The masks of ``k`` pieces on a group's squares (0 our men, 1 kings, 2 their men),
        in index order, and mask -> rank."""
        key = (which, k)
        got = self._ranks.get(key)
        if got is None:
            squares = (self.our_men, self.kings, self.their_men)[which]
            masks = [sum(1 << b for b in combo) for combo in itertools.combinations(squares, k)]
            got = self._ranks[key] = (masks, {m: i for i, m in enumerate(masks)})
        return got

    def layout(self, m: Material) -> Layout:
        return Layout(self, m)


@dataclass
class Layout:
    """Index <-> position for one material."""

    geo: Geometry
    material: Material

    def __post_init__(self) -> None:
        a, b, c, d = self.material
        g = self.geo
        self.groups = (g.group(0, a), g.group(1, b), g.group(2, c), g.group(1, d))
        self.sizes = tuple(len(masks) for masks, _ in self.groups)
        self.size = self.sizes[0] * self.sizes[1] * self.sizes[2] * self.sizes[3]

    def index(self, um: int, uk: int, tm: int, tk: int) -> int:
        (_, r0), (_, r1), (_, r2), (_, r3) = self.groups
        _, n1, n2, n3 = self.sizes
        return ((r0[um] * n1 + r1[uk]) * n2 + r2[tm]) * n3 + r3[tk]

    def positions(self) -> Iterator[tuple[int, int, int, int, int]]:
        """(index, um, uk, tm, tk) of every real position (no two pieces on a square)."""
        (m0, _), (m1, _), (m2, _), (m3, _) = self.groups
        i = 0
        for um in m0:
            for uk in m1:
                if uk & um:
                    i += len(m2) * len(m3)
                    continue
                ours = um | uk
                for tm in m2:
                    if tm & ours:
                        i += len(m3)
                        continue
                    taken = ours | tm
                    for tk in m3:
                        if not tk & taken:
                            yield i, um, uk, tm, tk
                        i += 1


def size_of(v: Variant, m: Material) -> int:
    """Bytes of the table of material ``m`` (its index range)."""
    g_men = v.squares - v.size // 2
    return comb(g_men, m[0]) * comb(v.squares, m[1]) * comb(g_men, m[2]) * comb(v.squares, m[3])


Lookup = Callable[[int, int, int, int], int]


class Solver:
    """Solves the materials of one variant in order; ``tables`` maps a material to its bytes."""

    def __init__(self, v: Variant, tables: dict[Material, bytes | bytearray] | None = None) -> None:
        self.v = v
        self.geo = Geometry(v)
        self.gen = movegen.fast(v)
        self.tables: dict[Material, bytes | bytearray] = tables if tables is not None else {}
        self.layouts: dict[Material, Layout] = {}

    def layout(self, m: Material) -> Layout:
        lay = self.layouts.get(m)
        if lay is None:
            lay = self.layouts[m] = self.geo.layout(m)
        return lay

    def value(self, um: int, uk: int, tm: int, tk: int) -> int:
        """The stored byte of a position (side to move playing up) of a solved material; a side
        with no piece left has lost (byte 1)."""
        if not (um or uk):
            return 1
        m = (um.bit_count(), uk.bit_count(), tm.bit_count(), tk.bit_count())
        return self.tables[m][self.layout(m).index(um, uk, tm, tk)]

    def solve_pair(self, m: Material, progress: Callable[[int], None] | None = None) -> dict[Material, bytearray]:
        """Solve material ``m`` and its colour swap together (every material they reach by a
        capture or a crowning must be in ``tables``); returns their tables (also stored)."""
        ms = [m] if swap(m) == m else [m, swap(m)]
        lays = [self.layout(x) for x in ms]
        offsets = [0, lays[0].size]
        total = sum(lay.size for lay in lays)
        val = bytearray(total)          # d + 1 once decided
        moves_in = bytearray(total)     # plain moves staying in the pair, not yet found to lose
        worst_out = bytearray(total)    # d + 1 of the longest win the opponent gets by a move out
        safe = bytearray(total)         # a move out reaches a draw: this position cannot be lost
        buckets: dict[int, list[int]] = {}
        gen_moves = self.gen.moves
        turn = self.geo.turn
        value = self.value
        done = 0
        for k, lay in enumerate(lays):
            off = offsets[k]
            kings = ms[k][1]
            for i, um, uk, tm, tk in lay.positions():
                g = off + i
                moves = gen_moves(um, uk, tm, tk, True)
                if not moves:
                    buckets.setdefault(0, []).append(g)
                    continue
                win = 0        # d + 1 of our shortest win by a move out (0: none)
                worst = 0
                inside = 0
                for key, a, b, c, d in moves:
                    # A plain move that crowns nothing stays in the pair.
                    if not key >> 16 and d.bit_count() == kings:
                        inside += 1
                        continue
                    # The child is seen by the opponent, who plays down: turn it round.
                    byte = value(turn(a), turn(b), turn(c), turn(d))
                    if byte == DRAW:
                        safe[g] = 1
                    elif byte & 1:
                        # The opponent loses in byte-1 plies (even): we win in byte plies.
                        if not win or byte + 1 < win:
                            win = byte + 1
                    elif byte > worst:
                        worst = byte
                moves_in[g] = inside
                worst_out[g] = worst
                if win:
                    safe[g] = 2
                    buckets.setdefault(win - 1, []).append(g)
                elif not inside and not safe[g]:
                    buckets.setdefault(worst, []).append(g)
                done += 1
                if progress is not None and not done & 0xFFFF:
                    progress(done)
        d = 0
        top = max(buckets) if buckets else 0
        while d <= top:
            bucket = buckets.pop(d, None)
            if bucket:
                for g in bucket:
                    if val[g]:
                        continue
                    if d & 1 == 0 and (safe[g] or moves_in[g]):
                        # Queued as lost before a move was known to hold (cannot happen) -- guard.
                        continue
                    val[g] = d + 1
                    k = 0 if g < offsets[1] or len(lays) == 1 else 1
                    for p in self._unmoves(lays, offsets, k, g - offsets[k]):
                        if val[p]:
                            continue
                        if d & 1 == 0:
                            # g is lost for its side to move: p wins by moving there.
                            if d + 1 > top:
                                top = d + 1
                            buckets.setdefault(d + 1, []).append(p)
                        else:
                            moves_in[p] -= 1
                            if not moves_in[p] and not safe[p]:
                                lost = max(d, worst_out[p] - 1) + 1
                                if lost > top:
                                    top = lost
                                buckets.setdefault(lost, []).append(p)
            d += 1
        if top >= 255:
            raise ValueError("a distance beyond 254 plies does not fit the table's bytes")
        out: dict[Material, bytearray] = {}
        for k, x in enumerate(ms):
            table = val[offsets[k]:offsets[k] + lays[k].size]
            out[x] = table
            self.tables[x] = table
        return out

    def _unmoves(self, lays: list[Layout], offsets: list[int], k: int, i: int) -> Iterator[int]:
        """Pair indices of the positions from which a plain move leads to position ``i`` of
        material ``k`` (a capture or a crowning never stays in the pair)."""
        um, uk, tm, tk = self._decode(lays[k], i)
        v = self.v
        occupied = um | uk | tm | tk
        empty = v.valid & ~occupied
        other = 1 - k if len(lays) == 2 else 0
        lay = lays[other]
        off = offsets[other]
        turn = self.geo.turn
        can_capture = self.gen.can_capture
        # The opponent moved last, playing down: its men came from one row up.
        back = (v.steps[0], v.steps[1])
        m = tm
        while m:
            low = m & -m
            m ^= low
            b = low.bit_length() - 1
            for step in back:
                f = step[b]
                if f >= 0 and empty >> f & 1:
                    pm = tm ^ low | 1 << f
                    # Before the move: the opponent to move, turned round to play up.
                    a, bb, c, dd = turn(pm), turn(tk), turn(um), turn(uk)
                    if not can_capture(a, bb, c, dd, True):
                        yield off + lay.index(a, bb, c, dd)
        kk = tk
        while kk:
            low = kk & -kk
            kk ^= low
            b = low.bit_length() - 1
            rest = tk ^ low
            if v.flying_kings:
                for ray in v.rays[b]:
                    for _t, tmask in ray:
                        if not tmask & empty:
                            break
                        a, bb, c, dd = turn(tm), turn(rest | tmask), turn(um), turn(uk)
                        if not can_capture(a, bb, c, dd, True):
                            yield off + lay.index(a, bb, c, dd)
            else:
                for step in v.steps:
                    f = step[b]
                    if f >= 0 and empty >> f & 1:
                        a, bb, c, dd = turn(tm), turn(rest | 1 << f), turn(um), turn(uk)
                        if not can_capture(a, bb, c, dd, True):
                            yield off + lay.index(a, bb, c, dd)

    @staticmethod
    def _decode(lay: Layout, i: int) -> tuple[int, int, int, int]:
        _, n1, n2, n3 = lay.sizes
        i, r3 = divmod(i, n3)
        i, r2 = divmod(i, n2)
        r0, r1 = divmod(i, n1)
        (m0, _), (m1, _), (m2, _), (m3, _) = lay.groups
        return m0[r0], m1[r1], m2[r2], m3[r3]


def pairs(pieces: int) -> list[list[Material]]:
    """The materials to solve, a pair (a material and its colour swap) at a time, grouped in
    steps whose pairs need only earlier steps (same pieces and kings: neither reaches the other)."""
    steps: list[list[Material]] = []
    seen: set[Material] = set()
    last: tuple[int, int] | None = None
    for m in materials(pieces):
        if m in seen:
            continue
        seen.update((m, swap(m)))
        level = (sum(m), m[1] + m[3])
        if level != last:
            steps.append([])
            last = level
        steps[-1].append(m)
    return steps


_WORKER: Solver | None = None


def _solve_in_worker(m: Material) -> dict[Material, bytearray]:
    assert _WORKER is not None
    return _WORKER.solve_pair(m)


def solve(v: Variant, pieces: int, progress: Callable[[int, int], None] | None = None,
          tables: dict[Material, bytes | bytearray] | None = None, jobs: int = 1) -> dict[Material, bytes | bytearray]:
    """Every table of ``v`` up to ``pieces`` pieces (materials already in ``tables`` are kept).

    ``progress(done, total)`` is told the bytes solved so far; ``jobs`` > 1 solves the
    independent pairs of a step in that many forked processes (where the system forks)."""
    import multiprocessing

    global _WORKER
    solver = Solver(v, tables)
    total = sum(size_of(v, m) for m in materials(pieces))
    done = sum(len(solver.tables[m]) for m in materials(pieces) if m in solver.tables)
    forking = jobs > 1 and "fork" in multiprocessing.get_all_start_methods()
    for step in pairs(pieces):
        todo = [m for m in step if m not in solver.tables]
        if not todo:
            continue
        if forking and len(todo) > 1:
            # The workers inherit the tables solved so far by forking after them.
            _WORKER = solver
            try:
                with multiprocessing.get_context("fork").Pool(min(jobs, len(todo))) as pool:
                    for got in pool.imap_unordered(_solve_in_worker, todo):
                        solver.tables.update(got)
                        done += sum(len(t) for t in got.values())
                        if progress is not None:
                            progress(done, total)
            finally:
                _WORKER = None
            continue
        for m in todo:
            base = done

            def inside(n: int, base: int = base) -> None:
                if progress is not None:
                    progress(min(base + n, total), total)

            got = solver.solve_pair(m, inside)
            done = base + sum(len(t) for t in got.values())
            if progress is not None:
                progress(done, total)
    return solver.tables
