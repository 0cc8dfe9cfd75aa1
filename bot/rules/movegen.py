"""Move generation on bitboards, shared by positions, the parser and perft.

All functions work from the side to move's point of view: ``um``/``uk`` are
our men and kings, ``tm``/``tk`` theirs, ``white`` says which way is forward.
A raw capture is a tuple ``(path, capmask, kingjumps, by_king, promotes)``:
``path`` the bit indices the piece stands on, ``capmask`` the captured
pieces, ``kingjumps`` the 1-based jump numbers at which a king was taken
(for the italian fourth criterion).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from .variants import CapturePriority, Crowning, Variant

Raw = tuple[tuple[int, ...], int, tuple[int, ...], bool, bool]


def _short_jumps(table: tuple[tuple[tuple[int, int, int], ...], ...], b: int, victims: int, tk: int, empty: int,
                 promo: int, capmask: int, path: tuple[int, ...], kingjumps: tuple[int, ...], out: list[Raw],
                 by_king: bool, v: Variant) -> None:
    """Extend a capture by single jumps (men in all variants, short-range kings).

    ``promo`` is the far row for a man and 0 for a king.
    """
    done = True
    n = len(path)
    for mid, land, landmask in table[b]:
        if mid & victims and not mid & capmask and landmask & empty:
            done = False
            kj = kingjumps + (n,) if mid & tk else kingjumps
            if landmask & promo:
                crowning = v.crowning
                if crowning is Crowning.STOPS:
                    # A man that reaches the far row stops there (docs/rules.md §3.7).
                    out.append((path + (land,), capmask | mid, kj, False, True))
                    continue
                if crowning is Crowning.CONTINUES_AS_KING:
                    _crowned_jumps(v, land, victims | tk, tk, empty, capmask | mid, path + (land,), kj, out)
                    continue
            _short_jumps(table, land, victims, tk, empty, promo, capmask | mid, path + (land,), kj, out, by_king, v)
    if done and n > 1:
        # A man passing the far row (Crowning.PASSES) is crowned only where the move ends.
        out.append((path, capmask, kingjumps, by_king, bool(promo >> b & 1)))


def _crowned_jumps(v: Variant, b: int, them: int, tk: int, empty: int, capmask: int, path: tuple[int, ...],
                   kingjumps: tuple[int, ...], out: list[Raw]) -> None:
    """Go on from where a man was crowned mid-capture, as a king (Crowning.CONTINUES_AS_KING)."""
    first = len(out)
    if v.flying_kings:
        _flying_jumps(v.rays, b, them, tk, empty, capmask, path, kingjumps, out, v.priority is CapturePriority.FREE)
    else:
        _short_jumps(v.jumps[2], b, them, tk, empty, 0, capmask, path, kingjumps, out, True, v)
    # The piece set out as a man: the moves are a man's that promote (never "by a king").
    for i in range(first, len(out)):
        p, c, k, _by_king, _promotes = out[i]
        out[i] = (p, c, k, False, True)


def _flying_jumps(rays: tuple[tuple[tuple[tuple[int, int], ...], ...], ...], b: int, them: int, tk: int,
                  empty: int, capmask: int, path: tuple[int, ...], kingjumps: tuple[int, ...],
                  out: list[Raw], complete: bool = False) -> None:
    """Extend a flying king's capture: over one piece at any distance, land beyond.

    ``complete``: the king must land where it can go on capturing, when some landing lets it
    (free choice of capture, CapturePriority.FREE; under the other priorities the stopped
    sequences take fewer pieces and are outranked anyway, and their explanations need them)."""
    done = True
    n = len(path)
    for ray in rays[b]:
        i = 0
        length = len(ray)
        while i < length and ray[i][1] & empty:
            i += 1
        if i == length:
            continue
        mid = ray[i][1]
        # Own pieces, and pieces already jumped (still on the board), block the line.
        if not mid & them or mid & capmask:
            continue
        i += 1
        kj = kingjumps + (n,) if mid & tk else kingjumps
        cm = capmask | mid
        first = len(out)
        while i < length and ray[i][1] & empty:
            done = False
            land = ray[i][0]
            _flying_jumps(rays, land, them, tk, empty, cm, path + (land,), kj, out, complete)
            i += 1
        if complete and any(r[1] != cm for r in out[first:]):
            out[first:] = [r for r in out[first:] if r[1] != cm]
    if done and n > 1:
        out.append((path, capmask, kingjumps, True, False))


def all_captures(v: Variant, um: int, uk: int, tm: int, tk: int, white: bool) -> list[Raw]:
    """Every complete capture sequence, before the priority rules."""
    out: list[Raw] = []
    them = tm | tk
    men_victims = them if v.men_capture_kings else tm
    men_table = v.jumps[0 if white else 1]
    promo = v.white_promo if white else v.black_promo
    base_empty = v.valid & ~(um | uk | them)
    # Start the search only from men that have a first jump: most have none.
    s1 = v.pitch - 1
    s2 = v.pitch + 1
    up = (((base_empty << s1) & men_victims) << s1) | (((base_empty << s2) & men_victims) << s2)
    if v.men_capture_backwards:
        m = um & (up | (((base_empty >> s1) & men_victims) >> s1) | (((base_empty >> s2) & men_victims) >> s2))
    elif white:
        m = um & up
    else:
        m = um & ((((base_empty >> s1) & men_victims) >> s1) | (((base_empty >> s2) & men_victims) >> s2))
    while m:
        low = m & -m
        m ^= low
        b = low.bit_length() - 1
        _short_jumps(men_table, b, men_victims, tk, base_empty | low, promo, 0, (b,), (), out, False, v)
    k = uk
    while k:
        low = k & -k
        k ^= low
        b = low.bit_length() - 1
        if v.flying_kings:
            _flying_jumps(v.rays, b, them, tk, base_empty | low, 0, (b,), (), out, v.priority is CapturePriority.FREE)
        else:
            _short_jumps(v.jumps[2], b, them, tk, base_empty | low, 0, 0, (b,), (), out, True, v)
    return out


def best_captures(v: Variant, raws: list[Raw]) -> list[Raw]:
    """The captures the priority rules allow (docs/rules.md §3.8, §4), before merging."""
    if len(raws) < 2 or v.priority is CapturePriority.FREE:
        return raws
    counts = [r[1].bit_count() for r in raws]
    top = max(counts)
    best = [r for r, c in zip(raws, counts, strict=False) if c == top]
    if v.priority is CapturePriority.MAJORITY:
        return best
    if len(best) > 1 and v.priority is CapturePriority.ITALIAN:
        if any(r[3] for r in best):
            best = [r for r in best if r[3]]
    if len(best) > 1:
        most = max(len(r[2]) for r in best)
        best = [r for r in best if len(r[2]) == most]
    if len(best) > 1 and v.priority is CapturePriority.ITALIAN and most:
        earliest = min(r[2] for r in best)
        best = [r for r in best if r[2] == earliest]
    return best


def merge(raws: list[Raw]) -> list[Raw]:
    """One capture per (start, end, captured set): paths giving one position are one move."""
    if len(raws) < 2:
        return raws
    seen: dict[tuple[int, int, int], Raw] = {}
    for r in raws:
        seen.setdefault((r[0][0], r[0][-1], r[1]), r)
    return list(seen.values())


def legal_captures(v: Variant, um: int, uk: int, tm: int, tk: int, white: bool) -> list[Raw]:
    """The legal captures, merged; empty when no capture exists."""
    return merge(best_captures(v, all_captures(v, um, uk, tm, tk, white)))


def quiet_moves(v: Variant, um: int, uk: int, tm: int, tk: int, white: bool) -> list[tuple[int, int]]:
    """Plain moves as (from index, to index), ignoring compulsory capture."""
    out: list[tuple[int, int]] = []
    empty = v.valid & ~(um | uk | tm | tk)
    steps = v.steps
    forward = (steps[0], steps[1]) if white else (steps[2], steps[3])
    m = um
    while m:
        low = m & -m
        m ^= low
        b = low.bit_length() - 1
        for step in forward:
            t = step[b]
            if t >= 0 and empty >> t & 1:
                out.append((b, t))
    k = uk
    while k:
        low = k & -k
        k ^= low
        b = low.bit_length() - 1
        if v.flying_kings:
            for ray in v.rays[b]:
                for t, tmask in ray:
                    if not tmask & empty:
                        break
                    out.append((b, t))
        else:
            for step in steps:
                t = step[b]
                if t >= 0 and empty >> t & 1:
                    out.append((b, t))
    return out


def kings_can_capture(v: Variant, uk: int, them: int, empty: int) -> bool:
    """Whether some king can capture, by whole-board shifts."""
    s1 = v.pitch - 1
    s2 = v.pitch + 1
    if not v.flying_kings:
        return bool(
            ((uk >> s1) & them) >> s1 & empty or ((uk >> s2) & them) >> s2 & empty
            or ((uk << s1) & them) << s1 & empty or ((uk << s2) & them) << s2 & empty
        )
    # Flying kings: slide through empty squares first, then look for piece + empty.
    for s in (s1, s2):
        f = reach = uk
        while f:
            f = (f >> s) & empty
            reach |= f
        if ((reach >> s) & them) >> s & empty:
            return True
        f = reach = uk
        while f:
            f = (f << s) & empty
            reach |= f
        if ((reach << s) & them) << s & empty:
            return True
    return False


# -- the fast generator (perft and search) ------------------------------------------
#
# Works on raw bitboards from the side to move's point of view, and returns the
# positions after each move already turned round for the opponent: a child is
# ``(their men, their kings, our men, our kings)`` after the move, which is exactly
# the ``(um, uk, tm, tk)`` of the next call.  Plain moves and single jumps by men
# are produced by whole-board shifts; only positions where a capture may be longer
# than one jump (or a king can capture) go through ``legal_captures``.  The men's
# capture test is written inline on purpose: a function call per node would cost
# a third of the speed.
#
# A move key is an int ``from | to << 8 | capmask << 16`` (bit indices, captured
# pieces as a bitboard).  It names one legal move exactly (merged captures share a
# start, end and captured set, docs/rules.md §3.12), costs nothing to compare or hash, and
# ``key & 0xFFFF`` is the from/to pair history tables want.
# ``Position.move_for_key`` turns a key back into a ``Move``.

Child = tuple[int, int, int, int]
KeyedChild = tuple[int, int, int, int, int]


class FastGen(NamedTuple):
    """One variant's fast generator; every function takes ``(um, uk, tm, tk, white)``.

    ``count`` gives the number of legal moves without making them;
    ``children`` the positions after each legal move (no keys, for perft);
    ``moves`` ``(key, um', uk', tm', tk')`` per legal move, turned round for the opponent;
    ``captures`` the same but only when captures are compulsory (else an empty list);
    ``can_capture`` whether the side to move has a capture.
    """

    # Shadows tuple.count on purpose: ``fast(v).count`` is the name perft, the engine and the bench call.
    count: Callable[[int, int, int, int, bool], int]  # type: ignore[assignment]
    children: Callable[[int, int, int, int, bool], list[Child]]
    moves: Callable[[int, int, int, int, bool], list[KeyedChild]]
    captures: Callable[[int, int, int, int, bool], list[KeyedChild]]
    can_capture: Callable[[int, int, int, int, bool], bool]


_FAST: dict[str, FastGen] = {}


def fast(v: Variant) -> FastGen:
    """The fast generator of a variant (built once per variant)."""
    gen = _FAST.get(v.id)
    if gen is None:
        gen = _FAST[v.id] = _build_fast(v)
    return gen


def _build_fast(v: Variant) -> FastGen:
    valid = v.valid
    s1 = v.pitch - 1
    s2 = v.pitch + 1
    men_take_kings = v.men_capture_kings
    flying = v.flying_kings
    rays = v.rays
    short_steps = tuple(
        tuple((step[b], 1 << step[b]) for step in v.steps if b < len(step) and step[b] >= 0)
        for b in range(v.size * v.pitch)
    )
    wpromo = v.white_promo
    bpromo = v.black_promo
    back_men = v.men_capture_backwards
    # The shortcut below (single jumps by men decided by shifts) holds only while a man's capture
    # goes forwards and ends where it is crowned; other variants always search.
    shortcut = not back_men and v.crowning is not Crowning.CONTINUES_AS_KING
    # The law of quality among single jumps by men: a man taking a king outranks one taking a man.
    quality = men_take_kings and v.priority in (CapturePriority.QUANTITY_QUALITY, CapturePriority.ITALIAN)

    def men_capture_back(um: int, victims: int, empty: int, white: bool) -> bool:
        """Whether a man can capture backwards (only asked when the variant allows it)."""
        if white:
            return bool(((um << s1) & victims) << s1 & empty or ((um << s2) & victims) << s2 & empty)
        return bool(((um >> s1) & victims) >> s1 & empty or ((um >> s2) & victims) >> s2 & empty)

    def capture_children(um: int, uk: int, tm: int, tk: int, white: bool) -> list[Child]:
        out: list[Child] = []
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

    def king_captures(uk: int, them: int, empty: int) -> bool:
        return kings_can_capture(v, uk, them, empty)

    def single_jumps(um: int, uk: int, tk: int, them: int, empty: int, victims: int,
                     white: bool) -> tuple[int, int] | None:
        """Landing squares of the legal captures, per forward direction, when every
        legal capture is a single jump by a man (the common case, decided without a
        search: no landing square offers a second jump and no king can capture);
        None when the full capture search is needed."""
        if not shortcut:
            return None
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
        if quality and tk:
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

    def count(um: int, uk: int, tm: int, tk: int, white: bool) -> int:
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
        if back_men and not capture:
            capture = men_capture_back(um, victims, empty, white)
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

    def children(um: int, uk: int, tm: int, tk: int, white: bool) -> list[Child]:
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
        if back_men and not capture:
            capture = men_capture_back(um, victims, empty, white)
        out: list[Child] = []
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

    def capture_moves(um: int, uk: int, tm: int, tk: int, white: bool) -> list[KeyedChild]:
        out: list[KeyedChild] = []
        for path, capmask, _kj, by_king, promotes in legal_captures(v, um, uk, tm, tk, white):
            frm = path[0]
            to = path[-1]
            fbit = 1 << frm
            tbit = 1 << to
            if by_king:
                um2, uk2 = um, (uk ^ fbit) | tbit
            elif promotes:
                um2, uk2 = um ^ fbit, uk | tbit
            else:
                um2, uk2 = um ^ fbit ^ tbit, uk
            out.append((frm | to << 8 | capmask << 16, tm & ~capmask, tk & ~capmask, um2, uk2))
        return out

    def jump_moves(single: tuple[int, int], um: int, uk: int, tm: int, tk: int, white: bool) -> list[KeyedChild]:
        out: list[KeyedChild] = []
        append = out.append
        promo = wpromo if white else bpromo
        for t, s in ((single[0], s1), (single[1], s2)):
            while t:
                low = t & -t
                t ^= low
                if white:
                    mid = low << s
                    src = low << (s + s)
                else:
                    mid = low >> s
                    src = low >> (s + s)
                gone = ~mid
                key = (src.bit_length() - 1) | (low.bit_length() - 1) << 8 | mid << 16
                if low & promo:
                    append((key, tm & gone, tk & gone, um ^ src, uk | low))
                else:
                    append((key, tm & gone, tk & gone, um ^ src ^ low, uk))
        return out

    def moves(um: int, uk: int, tm: int, tk: int, white: bool) -> list[KeyedChild]:
        """Every legal move as (key, child), the child turned round for the opponent."""
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
        if back_men and not capture:
            capture = men_capture_back(um, victims, empty, white)
        if capture:
            single = single_jumps(um, uk, tk, them, empty, victims, white)
            if single is None:
                return capture_moves(um, uk, tm, tk, white)
            return jump_moves(single, um, uk, tm, tk, white)
        if uk and king_captures(uk, them, empty):
            return capture_moves(um, uk, tm, tk, white)
        out: list[KeyedChild] = []
        append = out.append
        promo = wpromo if white else bpromo
        for t, s in ((a, s1), (b, s2)):
            while t:
                low = t & -t
                t ^= low
                src = low << s if white else low >> s
                key = (src.bit_length() - 1) | (low.bit_length() - 1) << 8
                if low & promo:
                    append((key, tm, tk, um ^ src, uk | low))
                else:
                    append((key, tm, tk, um ^ src ^ low, uk))
        if uk:
            k = uk
            while k:
                kbit = k & -k
                k ^= kbit
                kb = kbit.bit_length() - 1
                rest = uk ^ kbit
                if flying:
                    for ray in rays[kb]:
                        for t, tmask in ray:
                            if not tmask & empty:
                                break
                            append((kb | t << 8, tm, tk, um, rest | tmask))
                else:
                    for t, tmask in short_steps[kb]:
                        if tmask & empty:
                            append((kb | t << 8, tm, tk, um, rest | tmask))
        return out

    def captures(um: int, uk: int, tm: int, tk: int, white: bool) -> list[KeyedChild]:
        """The legal moves when they are captures; an empty list when no capture exists."""
        them = tm | tk
        empty = valid & ~(um | uk | them)
        victims = them if men_take_kings else tm
        if white:
            capture = ((um >> s1) & victims) >> s1 & empty or ((um >> s2) & victims) >> s2 & empty
        else:
            capture = ((um << s1) & victims) << s1 & empty or ((um << s2) & victims) << s2 & empty
        if back_men and not capture:
            capture = men_capture_back(um, victims, empty, white)
        if capture:
            single = single_jumps(um, uk, tk, them, empty, victims, white)
            if single is None:
                return capture_moves(um, uk, tm, tk, white)
            return jump_moves(single, um, uk, tm, tk, white)
        if uk and king_captures(uk, them, empty):
            return capture_moves(um, uk, tm, tk, white)
        return []

    def can_capture(um: int, uk: int, tm: int, tk: int, white: bool) -> bool:
        """Whether the side to move must capture."""
        them = tm | tk
        empty = valid & ~(um | uk | them)
        victims = them if men_take_kings else tm
        if white:
            if ((um >> s1) & victims) >> s1 & empty or ((um >> s2) & victims) >> s2 & empty:
                return True
        elif ((um << s1) & victims) << s1 & empty or ((um << s2) & victims) << s2 & empty:
            return True
        if back_men and men_capture_back(um, victims, empty, white):
            return True
        return bool(uk) and king_captures(uk, them, empty)

    return FastGen(count, children, moves, captures, can_capture)
