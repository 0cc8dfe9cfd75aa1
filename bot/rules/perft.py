"""Perft: count the leaves of the legal move tree, as fast as pure Python allows.

Works on raw bitboards from the side to move's point of view.  Plain moves
are produced by whole-board shifts, and the last ply is counted with
``int.bit_count`` without making a single move; only positions with a
capture go through the general capture search of ``movegen``.  The men's
capture test is written inline on purpose: a function call per node would
cost a third of the speed.
"""

from __future__ import annotations

from collections.abc import Callable

from . import movegen
from .position import Position
from .variants import Variant

State = tuple[int, int, int, int]
_CACHE: dict[str, tuple[Callable, Callable, Callable]] = {}


def _build(v: Variant) -> tuple[Callable, Callable, Callable]:
    valid = v.valid
    s1 = v.pitch - 1
    s2 = v.pitch + 1
    men_take_kings = v.men_capture_kings
    flying = v.flying_kings
    rays = v.rays
    wpromo = v.white_promo
    bpromo = v.black_promo
    legal_captures = movegen.legal_captures
    kings_can_capture = movegen.kings_can_capture

    def capture_children(um, uk, tm, tk, white):
        out = []
        for path, capmask, _kj, by_king, promotes in legal_captures(v, um, uk, tm, tk, white):
            fbit = 1 << path[0]
            tbit = 1 << path[-1]
            if by_king:
                um2, uk2 = um, (uk ^ fbit) | tbit
            elif promotes:
                um2, uk2 = um ^ fbit, uk | tbit
            else:
                um2, uk2 = um ^ fbit ^ tbit, uk
            out.append((tm & ~capmask, tk & ~capmask, um2, uk2))
        return out

    def king_captures(uk, them, empty):
        return kings_can_capture(v, uk, them, empty)

    def single_jumps(um, uk, tk, them, empty, victims, white):
        """Landing squares of the legal captures, per forward direction, when every
        legal capture is a single jump by a man (the common case, decided without a
        search: no landing square offers a second jump and no king can capture);
        None when the full capture search is needed."""
        if white:
            j1 = (((um >> s1) & victims) >> s1) & empty
            j2 = (((um >> s2) & victims) >> s2) & empty
            land = j1 | j2
            if ((land >> s1) & victims) >> s1 & empty or ((land >> s2) & victims) >> s2 & empty:
                return None
        else:
            j1 = (((um << s1) & victims) << s1) & empty
            j2 = (((um << s2) & victims) << s2) & empty
            land = j1 | j2
            if ((land << s1) & victims) << s1 & empty or ((land << s2) & victims) << s2 & empty:
                return None
        if uk and king_captures(uk, them, empty):
            return None
        if men_take_kings and tk:
            # Spanish law of quality: taking a king beats taking a man.
            if white:
                k1 = (((um >> s1) & tk) >> s1) & empty
                k2 = (((um >> s2) & tk) >> s2) & empty
            else:
                k1 = (((um << s1) & tk) << s1) & empty
                k2 = (((um << s2) & tk) << s2) & empty
            if k1 or k2:
                return k1, k2
        return j1, j2

    def count(um, uk, tm, tk, white):
        """Number of legal moves."""
        them = tm | tk
        empty = valid & ~(um | uk | them)
        victims = them if men_take_kings else tm
        if white:
            a = um >> s1
            b = um >> s2
            capture = ((a & victims) >> s1) & empty or ((b & victims) >> s2) & empty
        else:
            a = um << s1
            b = um << s2
            capture = ((a & victims) << s1) & empty or ((b & victims) << s2) & empty
        if capture:
            single = single_jumps(um, uk, tk, them, empty, victims, white)
            if single is None:
                return len(legal_captures(v, um, uk, tm, tk, white))
            return single[0].bit_count() + single[1].bit_count()
        n = (a & empty).bit_count() + (b & empty).bit_count()
        if uk:
            if king_captures(uk, them, empty):
                return len(legal_captures(v, um, uk, tm, tk, white))
            if flying:
                for s in (s1, s2):
                    f = uk
                    while f:
                        f = (f >> s) & empty
                        n += f.bit_count()
                    f = uk
                    while f:
                        f = (f << s) & empty
                        n += f.bit_count()
            else:
                n += (((uk >> s1) & empty).bit_count() + ((uk >> s2) & empty).bit_count()
                      + ((uk << s1) & empty).bit_count() + ((uk << s2) & empty).bit_count())
        return n

    def children(um, uk, tm, tk, white):
        """Every position after a legal move, from the opponent's point of view."""
        them = tm | tk
        empty = valid & ~(um | uk | them)
        victims = them if men_take_kings else tm
        if white:
            a = (um >> s1) & empty
            b = (um >> s2) & empty
            capture = ((um >> s1) & victims) >> s1 & empty or ((um >> s2) & victims) >> s2 & empty
        else:
            a = (um << s1) & empty
            b = (um << s2) & empty
            capture = ((um << s1) & victims) << s1 & empty or ((um << s2) & victims) << s2 & empty
        out = []
        append = out.append
        promo = wpromo if white else bpromo
        if capture:
            single = single_jumps(um, uk, tk, them, empty, victims, white)
            if single is None:
                return capture_children(um, uk, tm, tk, white)
            for t, s in ((single[0], s1), (single[1], s2)):
                while t:
                    low = t & -t
                    t ^= low
                    if white:
                        gone = ~(low << s)
                        src = low << (s + s)
                    else:
                        gone = ~(low >> s)
                        src = low >> (s + s)
                    if low & promo:
                        append((tm & gone, tk & gone, um ^ src, uk | low))
                    else:
                        append((tm & gone, tk & gone, um ^ src ^ low, uk))
            return out
        if uk and king_captures(uk, them, empty):
            return capture_children(um, uk, tm, tk, white)
        for t, s in ((a, s1), (b, s2)):
            while t:
                low = t & -t
                t ^= low
                src = low << s if white else low >> s
                if low & promo:
                    append((tm, tk, um ^ src, uk | low))
                else:
                    append((tm, tk, um ^ src ^ low, uk))
        if uk:
            if flying:
                k = uk
                while k:
                    kbit = k & -k
                    k ^= kbit
                    for ray in rays[kbit.bit_length() - 1]:
                        for _t, tmask in ray:
                            if not tmask & empty:
                                break
                            append((tm, tk, um, uk ^ kbit ^ tmask))
            else:
                for s in (s1, s2):
                    t = (uk >> s) & empty
                    while t:
                        low = t & -t
                        t ^= low
                        append((tm, tk, um, uk ^ (low << s) ^ low))
                    t = (uk << s) & empty
                    while t:
                        low = t & -t
                        t ^= low
                        append((tm, tk, um, uk ^ (low >> s) ^ low))
        return out

    def walk(um, uk, tm, tk, white, depth):
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

    return count, children, walk


def _engine(v: Variant) -> tuple[Callable, Callable, Callable]:
    if v.id not in _CACHE:
        _CACHE[v.id] = _build(v)
    return _CACHE[v.id]


def perft(pos: Position, depth: int) -> int:
    """Leaves of the legal move tree at ``depth`` plies (merged moves, RULES §3.12)."""
    if depth <= 0:
        return 1
    count, _children, walk = _engine(pos.variant)
    um, uk, tm, tk = pos.sides()
    if depth == 1:
        return count(um, uk, tm, tk, pos.white)
    return walk(um, uk, tm, tk, pos.white, depth)


def count_moves(pos: Position) -> int:
    """Number of legal moves, without building them."""
    return _engine(pos.variant)[0](*pos.sides(), pos.white)
