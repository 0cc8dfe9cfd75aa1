"""Move generation on bitboards, shared by positions, the parser and perft.

All functions work from the side to move's point of view: ``um``/``uk`` are
our men and kings, ``tm``/``tk`` theirs, ``white`` says which way is forward.
A raw capture is a tuple ``(path, capmask, kingjumps, by_king, promotes)``:
``path`` the bit indices the piece stands on, ``capmask`` the captured
pieces, ``kingjumps`` the 1-based jump numbers at which a king was taken
(for the italian fourth criterion).
"""

from __future__ import annotations

from .variants import Variant

Raw = tuple[tuple[int, ...], int, tuple[int, ...], bool, bool]


def _short_jumps(table, b, victims, tk, empty, promo, capmask, path, kingjumps, out, by_king):
    """Extend a capture by single jumps (men in all variants, italian kings).

    ``promo`` is the far row for a man and 0 for a king.
    """
    done = True
    n = len(path)
    for mid, land, landmask in table[b]:
        if mid & victims and not mid & capmask and landmask & empty:
            done = False
            kj = kingjumps + (n,) if mid & tk else kingjumps
            if landmask & promo:
                # A man that reaches the far row stops there (RULES §3.7).
                out.append((path + (land,), capmask | mid, kj, False, True))
            else:
                _short_jumps(table, land, victims, tk, empty, promo, capmask | mid,
                             path + (land,), kj, out, by_king)
    if done and n > 1:
        out.append((path, capmask, kingjumps, by_king, False))


def _flying_jumps(rays, b, them, tk, empty, capmask, path, kingjumps, out):
    """Extend a flying king's capture: over one piece at any distance, land beyond."""
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
        while i < length and ray[i][1] & empty:
            done = False
            land = ray[i][0]
            _flying_jumps(rays, land, them, tk, empty, cm, path + (land,), kj, out)
            i += 1
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
    if white:
        m = um & ((((base_empty << s1) & men_victims) << s1) | (((base_empty << s2) & men_victims) << s2))
    else:
        m = um & ((((base_empty >> s1) & men_victims) >> s1) | (((base_empty >> s2) & men_victims) >> s2))
    while m:
        low = m & -m
        m ^= low
        b = low.bit_length() - 1
        _short_jumps(men_table, b, men_victims, tk, base_empty | low, promo, 0, (b,), (), out, False)
    k = uk
    while k:
        low = k & -k
        k ^= low
        b = low.bit_length() - 1
        if v.flying_kings:
            _flying_jumps(v.rays, b, them, tk, base_empty | low, 0, (b,), (), out)
        else:
            _short_jumps(v.jumps[2], b, them, tk, base_empty | low, 0, 0, (b,), (), out, True)
    return out


def best_captures(v: Variant, raws: list[Raw]) -> list[Raw]:
    """The captures the priority rules allow (RULES §3.8, §4), before merging."""
    if len(raws) < 2:
        return raws
    counts = [r[1].bit_count() for r in raws]
    top = max(counts)
    best = [r for r, c in zip(raws, counts, strict=False) if c == top]
    if len(best) > 1 and v.priority == "italian":
        if any(r[3] for r in best):
            best = [r for r in best if r[3]]
    if len(best) > 1:
        most = max(len(r[2]) for r in best)
        best = [r for r in best if len(r[2]) == most]
    if len(best) > 1 and v.priority == "italian" and most:
        earliest = min(r[2] for r in best)
        best = [r for r in best if r[2] == earliest]
    return best


def merge(raws: list[Raw]) -> list[Raw]:
    """One capture per (start, end, captured set): paths giving one position are one move."""
    if len(raws) < 2:
        return raws
    seen = {}
    for r in raws:
        seen.setdefault((r[0][0], r[0][-1], r[1]), r)
    return list(seen.values())


def legal_captures(v: Variant, um: int, uk: int, tm: int, tk: int, white: bool) -> list[Raw]:
    """The legal captures, merged; empty when no capture exists."""
    return merge(best_captures(v, all_captures(v, um, uk, tm, tk, white)))


def quiet_moves(v: Variant, um: int, uk: int, tm: int, tk: int, white: bool) -> list[tuple[int, int]]:
    """Plain moves as (from index, to index), ignoring compulsory capture."""
    out = []
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
