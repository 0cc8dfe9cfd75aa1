"""The search compiled with numba: the same tree as ``search.Searcher``, several times faster.

``Searcher`` (bot/ai/search.py) is the definition; this module is a second implementation of
its node function, move generator and evaluation for the compiler.  They are kept equal on
purpose: for a position, a depth and an evaluator, both visit the same nodes in the same order
and return the same scores (tests/ai/test_jit.py compares them node for node).  The root, the
iterative deepening, the levels and the principal variation stay in Python and are shared.

Boards here are "dense": the rules engine's bitboards (a row of ``size + 1`` bits, the extra one
a ghost column) keep only the squares of one colour, so bit ``b`` becomes ``b >> 1``.  A 10x10
board then needs 55 bits instead of 109 and fits a machine word; a diagonal step is a shift by
``pitch // 2`` or ``pitch // 2 + 1``.  A variant whose dense board does not fit 63 bits (a board
larger than 10x10), a search that uses the endgame tables, and a machine without numba use the
Python search (``available``).

What the compiled search keeps: a transposition table with the dictionary's semantics (a full
64-bit hash of the position decides, open addressing, emptied past the same ``TT_LIMIT``),
killers and history per search, the repetition path, and counters.  Capture sequences are
found by the same depth-first walk as ``movegen.all_captures``, with the same priority rules
(docs/rules.md §3.8, §4).
"""

from __future__ import annotations

import functools
import importlib.util
import threading
import weakref
from collections.abc import Callable
from math import comb
from typing import Any, cast

import numpy as np

from bot import config
from bot.rules import Variant
from bot.rules.variants import CapturePriority, Crowning

from . import jitcache
from .egtb import Tables, store
from .evaluation import Evaluator, Geometry, evaluator
from .search import LMR_AFTER, LMR_DEPTH, MATE, MATE_BOUND, NO_NODE_LIMIT, TT_LIMIT, Searcher, State, Timeout, now

# numba is loaded at the first search (``_load``), not with this module: a process that never
# searches (most of the bot's processes, the operator's commands) starts without it, about 0.2 s of
# CPU sooner.  Until then each compiled function below is a ``_Deferred`` standing for it.
# numba is a dependency; the Python search stands in where its wheel does not install.
HAVE_NUMBA = importlib.util.find_spec("numba") is not None
if HAVE_NUMBA:
    # Before numba is imported: its caches go to the user's cache folder, never into the installed
    # package (bot/ai/jitcache.py).
    jitcache.configure()

# What the compiled functions name and numba provides, set by ``_load`` (before anything compiles).
objmode: Any = None
List: Any = None
popcount: Callable[[Any], Any]
lowbit: Callable[[Any], Any]

_PENDING: dict[str, tuple[Callable[..., Any], dict[str, Any]]] = {}
_LOAD = threading.Lock()
_loaded = False


class _Deferred:
    """A compiled function before numba is loaded: the first call loads it (``_load``) and is then
    the compiled function's, as every later call through this module's name is."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        _load()
        return globals()[self.name](*args, **kwargs)


def njit(**options: Any) -> Callable[[Callable[..., Any]], Any]:
    """numba's ``njit`` with ``options``, applied when numba is loaded; the plain function where numba
    is not installed."""
    def wrap(f: Callable[..., Any]) -> Any:
        if not HAVE_NUMBA:
            return f
        _PENDING[f.__name__] = (f, options)
        return _Deferred(f.__name__)
    return wrap


def _load() -> bool:
    """Import numba and compile-wrap (compiling nothing yet) every function of this module written
    for it; whether numba is there.  Once per process."""
    global _loaded, HAVE_NUMBA, objmode, List, popcount, lowbit
    if _loaded:
        return HAVE_NUMBA
    with _LOAD:
        if _loaded:
            return HAVE_NUMBA
        try:
            import numba
            from llvmlite import ir
            from numba import objmode as numba_objmode
            from numba import types
            from numba.extending import intrinsic
            from numba.typed import List as numba_list
        except ImportError:  # pragma: no cover - a wheel that is there but does not import
            HAVE_NUMBA = False
            for name, (f, _options) in _PENDING.items():
                globals()[name] = f
            _loaded = True
            return False

        @intrinsic
        def _popcount(typingctx: Any, x: Any) -> Any:
            sig = types.int64(types.int64)

            def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                return builder.ctpop(args[0])
            return sig, codegen

        @intrinsic
        def _lowbit(typingctx: Any, x: Any) -> Any:
            """Index of the lowest set bit."""
            sig = types.int64(types.int64)

            def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                return builder.cttz(args[0], ir.Constant(ir.IntType(1), 0))
            return sig, codegen

        objmode, List = numba_objmode, numba_list
        # Typed for mypy as what they compute (the intrinsics' own signature is numba's).
        popcount = cast(Callable[[Any], Any], _popcount)
        lowbit = cast(Callable[[Any], Any], _lowbit)
        # The compiled functions find each other (and the names above) in this module's globals
        # when they compile: every one is numba's before any is called.
        for name, (f, options) in _PENDING.items():
            globals()[name] = numba.njit(**options)(f)
        _loaded = True
    return True


INF = MATE + 1
EXACT, LOWER, UPPER = 0, 1, 2

# Geometry: one int64 array per variant (G_* indices), and tables.
G_VALID, G_WPROMO, G_BPROMO, G_S1, G_S2, G_FLYING, G_MEN_TAKE_KINGS, G_ITALIAN, G_NO_PROGRESS, \
    G_WIN_BONUS, G_CENTRE, G_DIAG, G_WFAR, G_BFAR, G_WBACK, G_BBACK, G_WNEAR, G_BNEAR, G_SIZE, \
    G_MEN_BACK, G_CROWNING, G_FREE, G_MAJORITY = range(23)
G_LEN = 23
# G_CROWNING: what a man does on the far row mid-capture (rules.variants.Crowning).
CROWN_STOPS, CROWN_PASSES, CROWN_KING = 0, 1, 2

# Counters and settings of one search: an int64 array (S_* indices).
S_NODES, S_MAX_PLY, S_ABORT, S_EXT_LIMIT, S_TT_COUNT, S_GEN, S_RAWN, S_OVERFLOW, S_HIST_N, S_PROBE_PIECES, \
    S_TB_HITS, S_NODE_LIMIT = range(12)
S_LEN = 12

PLIES = 256        # deepest ply the buffers hold (a search deeper than this gives up: Python then)
MOVES = 320        # most legal moves in a position the buffers hold (likewise)
RAWS = 8192        # capture sequences before the priority rules and merging (likewise)
TT_SLOTS = 1 << 21  # open addressing: more than TT_LIMIT entries, so a probe always ends
CLOCK_MASK = 63    # as search.CLOCK_EVERY

_DISABLED = not config.engine().jit


def available(v: Variant) -> bool:
    """Whether the compiled search can play ``v`` on this machine.  Where it can, numba is loaded
    (``_load``, once): callers ask this just before they search, and a numba that is installed but
    fails to import is only found out by loading it."""
    return not (_DISABLED or not HAVE_NUMBA or v.size % 2 or v.size > 10) and _load()


@njit(cache=True)
def _now() -> Any:
    # The engine's one clock (search.now reads search.clock when called), so a test's clock
    # times this search as it times the Python one.
    with objmode(t="float64"):
        t = now()
    return t


@njit(cache=True, inline="always")
def _mix(x: Any) -> Any:
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True)
def state_hash(um: Any, uk: Any, tm: Any, tk: Any, white: Any) -> Any:
    """A 64-bit hash of a position (side to move included): equal hashes are taken as equal positions."""
    h = _mix(np.uint64(um) + np.uint64(0x9E3779B97F4A7C15))
    h = _mix(h ^ np.uint64(uk) ^ np.uint64(0x632BE59BD9B4E019))
    h = _mix(h ^ np.uint64(tm) ^ np.uint64(0x85157AF5B2F0A8C3))
    h = _mix(h ^ np.uint64(tk) ^ (np.uint64(0x3C6EF372FE94F82A) if white else np.uint64(0x1F83D9ABFB41BD6B)))
    return h


# -- move generation ------------------------------------------------------------------------


@njit(cache=True)
def _raw_add(raw: Any, st: Any, frm: Any, to: Any, cap: Any, nk: Any, kjm: Any, flags: Any) -> None:
    n = st[S_RAWN]
    if n >= RAWS:
        st[S_OVERFLOW] = 1
        return
    raw[n, 0] = frm
    raw[n, 1] = to
    raw[n, 2] = cap
    raw[n, 3] = nk
    raw[n, 4] = kjm
    raw[n, 5] = flags
    st[S_RAWN] = n + 1


@njit(cache=True)
def _short_jumps(jmid: Any, jland: Any, jn: Any, tbl: Any, b: Any, victims: Any, tk: Any, empty: Any,
                 promo: Any, capmask: Any, frm: Any, n: Any, nk: Any, kjm: Any, by_king: Any,
                 raw: Any, st: Any) -> None:
    done = True
    for k in range(jn[tbl, b]):
        mid = jmid[tbl, b, k]
        land = jland[tbl, b, k]
        lmask = np.int64(1) << land
        if mid & victims and not mid & capmask and lmask & empty:
            done = False
            nk2 = nk
            kjm2 = kjm
            if mid & tk:
                nk2 = nk + 1
                kjm2 = kjm | (np.int64(1) << (62 - n))
            if lmask & promo:
                # A man that reaches the far row stops there (docs/rules.md §3.7).
                _raw_add(raw, st, frm, land, capmask | mid, nk2, kjm2, 2)
            else:
                _short_jumps(jmid, jland, jn, tbl, land, victims, tk, empty, promo, capmask | mid, frm, n + 1,
                             nk2, kjm2, by_king, raw, st)
    if done and n > 1:
        _raw_add(raw, st, frm, b, capmask, nk, kjm, by_king)


@njit(cache=True)
def _man_jumps(jmid: Any, jland: Any, jn: Any, ray_sq: Any, ray_len: Any, crown: Any, flying: Any, free: Any,
               tbl: Any, b: Any, victims: Any, tk: Any, empty: Any, promo: Any, capmask: Any,
               frm: Any, n: Any, nk: Any, kjm: Any, raw: Any, st: Any) -> None:
    """``_short_jumps`` for a man whose capture does not stop on the far row (movegen._short_jumps):
    it passes it as a man (crowned only where the move ends) or goes on from it as a king.

    Takes its tables and flags one by one: with ``g`` and ``tabs`` passed whole, the mere call in
    ``gen_moves`` made every variant's generator 15 % slower, though the shipped ones never call it."""
    done = True
    for k in range(jn[tbl, b]):
        mid = jmid[tbl, b, k]
        land = jland[tbl, b, k]
        lmask = np.int64(1) << land
        if mid & victims and not mid & capmask and lmask & empty:
            done = False
            nk2 = nk
            kjm2 = kjm
            if mid & tk:
                nk2 = nk + 1
                kjm2 = kjm | (np.int64(1) << (62 - n))
            if lmask & promo and crown == CROWN_KING:
                first = st[S_RAWN]
                if flying:
                    _flying_jumps(ray_sq, ray_len, land, victims | tk, tk, empty, capmask | mid, frm, n + 1, nk2,
                                  kjm2, raw, st, free)
                else:
                    _short_jumps(jmid, jland, jn, np.int64(2), land, victims | tk, tk, empty, np.int64(0),
                                 capmask | mid, frm, n + 1, nk2, kjm2, np.int64(1), raw, st)
                # Set out as a man: a man's move that promotes, never one "by a king".
                for i in range(first, st[S_RAWN]):
                    raw[i, 5] = 2
            else:
                _man_jumps(jmid, jland, jn, ray_sq, ray_len, crown, flying, free, tbl, land, victims, tk, empty,
                           promo, capmask | mid, frm, n + 1, nk2, kjm2, raw, st)
    if done and n > 1:
        _raw_add(raw, st, frm, b, capmask, nk, kjm, 2 if (np.int64(1) << b) & promo else 0)


@njit(cache=True)
def _flying_jumps(ray_sq: Any, ray_len: Any, b: Any, them: Any, tk: Any, empty: Any, capmask: Any, frm: Any,
                  n: Any, nk: Any, kjm: Any, raw: Any, st: Any, complete: Any) -> None:
    # ``complete``: land only where the capture goes on when some landing lets it (movegen._flying_jumps).
    done = True
    for d in range(4):
        length = ray_len[b, d]
        i = 0
        while i < length and (np.int64(1) << ray_sq[b, d, i]) & empty:
            i += 1
        if i == length:
            continue
        mid = np.int64(1) << ray_sq[b, d, i]
        # Own pieces, and pieces already jumped (still on the board), block the line.
        if not mid & them or mid & capmask:
            continue
        i += 1
        nk2 = nk
        kjm2 = kjm
        if mid & tk:
            nk2 = nk + 1
            kjm2 = kjm | (np.int64(1) << (62 - n))
        cm = capmask | mid
        first = st[S_RAWN]
        while i < length and (np.int64(1) << ray_sq[b, d, i]) & empty:
            done = False
            _flying_jumps(ray_sq, ray_len, ray_sq[b, d, i], them, tk, empty, cm, frm, n + 1, nk2, kjm2, raw, st,
                          complete)
            i += 1
        if complete:
            goes_on = False
            for j in range(first, st[S_RAWN]):
                if raw[j, 2] != cm:
                    goes_on = True
            if goes_on:
                kept = first
                for j in range(first, st[S_RAWN]):
                    if raw[j, 2] != cm:
                        for c in range(6):
                            raw[kept, c] = raw[j, c]
                        kept += 1
                st[S_RAWN] = kept
    if done and n > 1:
        _raw_add(raw, st, frm, b, capmask, nk, kjm, 1)


@njit(cache=True)
def _kings_can_capture(g: Any, uk: Any, them: Any, empty: Any) -> Any:
    s1 = g[G_S1]
    s2 = g[G_S2]
    if not g[G_FLYING]:
        return bool((((uk >> s1) & them) >> s1) & empty or (((uk >> s2) & them) >> s2) & empty
                    or (((uk << s1) & them) << s1) & empty or (((uk << s2) & them) << s2) & empty)
    for s in (s1, s2):
        f = uk
        reach = uk
        while f:
            f = (f >> s) & empty
            reach |= f
        if (((reach >> s) & them) >> s) & empty:
            return True
        f = uk
        reach = uk
        while f:
            f = (f << s) & empty
            reach |= f
        if (((reach << s) & them) << s) & empty:
            return True
    return False


@njit(cache=True)
def can_capture(g: Any, um: Any, uk: Any, tm: Any, tk: Any, white: Any) -> Any:
    """Whether the side to move must capture."""
    s1 = g[G_S1]
    s2 = g[G_S2]
    them = tm | tk
    empty = g[G_VALID] & ~(um | uk | them)
    victims = them if g[G_MEN_TAKE_KINGS] else tm
    if white:
        if (((um >> s1) & victims) >> s1) & empty or (((um >> s2) & victims) >> s2) & empty:
            return True
    elif (((um << s1) & victims) << s1) & empty or (((um << s2) & victims) << s2) & empty:
        return True
    if g[G_MEN_BACK]:
        if not white:
            if (((um >> s1) & victims) >> s1) & empty or (((um >> s2) & victims) >> s2) & empty:
                return True
        elif (((um << s1) & victims) << s1) & empty or (((um << s2) & victims) << s2) & empty:
            return True
    if uk:
        return _kings_can_capture(g, uk, them, empty)
    return False


@njit(cache=True)
def _has_quiet_move(g: Any, um: Any, uk: Any, tm: Any, tk: Any, white: Any) -> Any:
    s1 = g[G_S1]
    s2 = g[G_S2]
    empty = g[G_VALID] & ~(um | uk | tm | tk)
    if white:
        if ((um >> s1) & empty) or ((um >> s2) & empty):
            return True
    elif ((um << s1) & empty) or ((um << s2) & empty):
        return True
    return bool(((uk >> s1) & empty) or ((uk >> s2) & empty) or ((uk << s1) & empty) or ((uk << s2) & empty))


@njit(cache=True, inline="always")
def _put(mv_ft: Any, mv_cap: Any, mv_ch: Any, ply: Any, n: Any, ft: Any, cap: Any, a: Any, b: Any, c: Any,
         d: Any) -> None:
    mv_ft[ply, n] = ft
    mv_cap[ply, n] = cap
    mv_ch[ply, n, 0] = a
    mv_ch[ply, n, 1] = b
    mv_ch[ply, n, 2] = c
    mv_ch[ply, n, 3] = d


@njit(cache=True)
def gen_moves(g: Any, tabs: Any, bufs: Any, st: Any, ply: Any, um: Any, uk: Any, tm: Any, tk: Any,
              white: Any) -> Any:
    """The legal moves of the position into the buffers of ``ply``: ``(from | to << 8, captured,
    child)`` with the child turned round for the opponent, as ``movegen.fast(v).moves``."""
    jmid, jland, jn, steps, ray_sq, ray_len = tabs[0], tabs[1], tabs[2], tabs[3], tabs[4], tabs[5]
    mv_ft, mv_cap, mv_ch, raw = bufs[0], bufs[1], bufs[2], bufs[3]
    s1 = g[G_S1]
    s2 = g[G_S2]
    them = tm | tk
    empty = g[G_VALID] & ~(um | uk | them)
    victims = them if g[G_MEN_TAKE_KINGS] else tm
    promo = g[G_WPROMO] if white else g[G_BPROMO]
    capture = False
    if white:
        starts = um & ((((empty << s1) & victims) << s1) | (((empty << s2) & victims) << s2))
    else:
        starts = um & ((((empty >> s1) & victims) >> s1) | (((empty >> s2) & victims) >> s2))
    if g[G_MEN_BACK]:
        if white:
            starts |= um & ((((empty >> s1) & victims) >> s1) | (((empty >> s2) & victims) >> s2))
        else:
            starts |= um & ((((empty << s1) & victims) << s1) | (((empty << s2) & victims) << s2))
    if starts:
        capture = True
    elif uk and _kings_can_capture(g, uk, them, empty):
        capture = True
    n = 0
    if capture:
        st[S_RAWN] = 0
        # Typed variables, not literals: the recursive walks must see one signature.
        zero = np.int64(0)
        one = np.int64(1)
        tbl = zero if white else one
        m = starts
        crown = g[G_CROWNING]
        while m:
            low = m & -m
            m ^= low
            b = lowbit(low)
            if crown == CROWN_STOPS:
                _short_jumps(jmid, jland, jn, tbl, b, victims, tk, empty | low, promo, zero, b, one, zero, zero, zero,
                             raw, st)
            else:
                _man_jumps(jmid, jland, jn, ray_sq, ray_len, crown, g[G_FLYING], g[G_FREE], tbl, b, victims, tk,
                           empty | low, promo, zero, b, one, zero, zero, raw, st)
        k = uk
        while k:
            low = k & -k
            k ^= low
            b = lowbit(low)
            if g[G_FLYING]:
                _flying_jumps(ray_sq, ray_len, b, them, tk, empty | low, zero, b, one, zero, zero, raw, st, g[G_FREE])
            else:
                _short_jumps(jmid, jland, jn, np.int64(2), b, them, tk, empty | low, zero, zero, b, one, zero, zero,
                             one, raw, st)
        r = st[S_RAWN]
        if st[S_OVERFLOW]:
            return 0
        # The priority rules (docs/rules.md §3.8, §4), as movegen.best_captures.
        keep = np.ones(r, np.bool_)
        top = 0
        alive = r
        if not g[G_FREE]:
            for i in range(r):
                c = popcount(raw[i, 2])
                if c > top:
                    top = c
            alive = 0
            for i in range(r):
                if popcount(raw[i, 2]) != top:
                    keep[i] = False
                else:
                    alive += 1
        italian = g[G_ITALIAN]
        if alive > 1 and italian:
            any_king = False
            for i in range(r):
                if keep[i] and raw[i, 5] & 1:
                    any_king = True
            if any_king:
                alive = 0
                for i in range(r):
                    if keep[i]:
                        if raw[i, 5] & 1:
                            alive += 1
                        else:
                            keep[i] = False
        most = 0
        if alive > 1 and not (g[G_FREE] or g[G_MAJORITY]):
            for i in range(r):
                if keep[i] and raw[i, 3] > most:
                    most = raw[i, 3]
            alive = 0
            for i in range(r):
                if keep[i]:
                    if raw[i, 3] == most:
                        alive += 1
                    else:
                        keep[i] = False
            if alive > 1 and italian and most:
                earliest = 0
                for i in range(r):
                    if keep[i] and raw[i, 4] > earliest:
                        earliest = raw[i, 4]
                for i in range(r):
                    if keep[i] and raw[i, 4] != earliest:
                        keep[i] = False
        for i in range(r):
            if not keep[i]:
                continue
            frm = raw[i, 0]
            to = raw[i, 1]
            cap = raw[i, 2]
            ft = frm | to << 8
            dup = False
            for j in range(n):
                if mv_ft[ply, j] == ft and mv_cap[ply, j] == cap:
                    dup = True
                    break
            if dup:
                continue
            if n >= MOVES:
                st[S_OVERFLOW] = 1
                return 0
            fbit = np.int64(1) << frm
            tbit = np.int64(1) << to
            flags = raw[i, 5]
            if flags & 1:
                um2 = um
                uk2 = (uk ^ fbit) | tbit
            elif flags & 2:
                um2 = um ^ fbit
                uk2 = uk | tbit
            else:
                um2 = um ^ fbit ^ tbit
                uk2 = uk
            _put(mv_ft, mv_cap, mv_ch, ply, n, ft, cap, tm & ~cap, tk & ~cap, um2, uk2)
            n += 1
        return n
    # Plain moves: men forward, then kings.
    for dirn in range(2):
        s = s1 if dirn == 0 else s2
        t = ((um >> s) if white else (um << s)) & empty
        while t:
            low = t & -t
            t ^= low
            src = (low << s) if white else (low >> s)
            if low & promo:
                _put(mv_ft, mv_cap, mv_ch, ply, n, lowbit(src) | lowbit(low) << 8, 0, tm, tk, um ^ src, uk | low)
            else:
                _put(mv_ft, mv_cap, mv_ch, ply, n, lowbit(src) | lowbit(low) << 8, 0, tm, tk, um ^ src ^ low, uk)
            n += 1
    k = uk
    while k:
        kbit = k & -k
        k ^= kbit
        kb = lowbit(kbit)
        rest = uk ^ kbit
        if g[G_FLYING]:
            for d in range(4):
                for i in range(ray_len[kb, d]):
                    t2 = ray_sq[kb, d, i]
                    tmask = np.int64(1) << t2
                    if not tmask & empty:
                        break
                    if n >= MOVES:
                        st[S_OVERFLOW] = 1
                        return 0
                    _put(mv_ft, mv_cap, mv_ch, ply, n, kb | t2 << 8, 0, tm, tk, um, rest | tmask)
                    n += 1
        else:
            for d in range(4):
                t2 = steps[d, kb]
                if t2 >= 0 and (np.int64(1) << t2) & empty:
                    if n >= MOVES:
                        st[S_OVERFLOW] = 1
                        return 0
                    _put(mv_ft, mv_cap, mv_ch, ply, n, kb | t2 << 8, 0, tm, tk, um, rest | (np.int64(1) << t2))
                    n += 1
    return n


# -- evaluation ---------------------------------------------------------------------------------


@njit(cache=True)
def _king_moves(g: Any, k: Any, empty: Any) -> Any:
    s1 = g[G_S1]
    s2 = g[G_S2]
    n = 0
    if g[G_FLYING]:
        for s in (s1, s2):
            f = k
            while f:
                f = (f >> s) & empty
                n += popcount(f)
            f = k
            while f:
                f = (f << s) & empty
                n += popcount(f)
    else:
        n = (popcount((k >> s1) & empty) + popcount((k >> s2) & empty)
             + popcount((k << s1) & empty) + popcount((k << s2) & empty))
    return n


@njit(cache=True)
def evaluate(g: Any, ev: Any, weights: Any, um: Any, uk: Any, tm: Any, tk: Any, white: Any) -> Any:
    """``evaluation.Evaluator.evaluate``: the same features, weights and sums in the same order."""
    rows, wcone, bcone = ev[0], ev[1], ev[2]
    if white:
        wm, wk, bm, bk = um, uk, tm, tk
    else:
        wm, wk, bm, bk = tm, tk, um, uk
    diagonal = g[G_DIAG]
    if not (wm or bm):
        nw = popcount(wk)
        nb = popcount(bk)
        if g[G_FLYING]:
            if nb == 1 and (nw <= 2 or (nw == 3 and bk & diagonal)):
                return 0
            if nw == 1 and (nb <= 2 or (nb == 3 and wk & diagonal)):
                return 0
        elif nw == 1 and nb == 1:
            return 0
    s1 = g[G_S1]
    s2 = g[G_S2]
    size = g[G_SIZE]
    empty = g[G_VALID] & ~(wm | wk | bm | bk)
    adv = 0
    for r in range(size):
        if size - 1 - r > 0:
            adv += (size - 1 - r) * popcount(wm & rows[r])
    for r in range(size):
        if r > 0:
            adv -= r * popcount(bm & rows[r])
    mob = (popcount((wm >> s1) & empty) + popcount((wm >> s2) & empty)
           - popcount((bm << s1) & empty) - popcount((bm << s2) & empty))
    if wk:
        mob += _king_moves(g, wk, empty)
    if bk:
        mob -= _king_moves(g, bk, empty)
    run = 0
    m = wm & g[G_WNEAR]
    enemies = bm | bk
    while m:
        low = m & -m
        m ^= low
        if not wcone[lowbit(low)] & enemies:
            run += 1
    m = bm & g[G_BNEAR]
    enemies = wm | wk
    while m:
        low = m & -m
        m ^= low
        if not bcone[lowbit(low)] & enemies:
            run -= 1
    centre = g[G_CENTRE]
    score = 0.0
    score += weights[0] * (popcount(wm) - popcount(bm))
    score += weights[1] * (popcount(wk) - popcount(bk))
    score += weights[2] * adv
    score += weights[3] * (popcount(wm & g[G_WBACK]) - popcount(bm & g[G_BBACK]))
    score += weights[4] * (popcount(wm & centre) - popcount(bm & centre))
    score += weights[5] * mob
    score += weights[6] * (popcount(wm & g[G_WFAR]) - popcount(bm & g[G_BFAR]))
    score += weights[7] * run
    score += weights[8] * (popcount(wk & diagonal) - popcount(bk & diagonal))
    bonus = g[G_WIN_BONUS]
    if bonus and not (wm or bm):
        nw = popcount(wk)
        nb = popcount(bk)
        if nb == 1 and nw >= 3 and not bk & diagonal:
            score += bonus
        elif nw == 1 and nb >= 3 and not wk & diagonal:
            score -= bonus
    s = int(score)
    return s if white else -s


# -- the tree -----------------------------------------------------------------------------------


@njit(cache=True)
def _tt_find(tt_key: Any, tt_info: Any, gen: Any, h: Any) -> Any:
    """The slot holding ``h`` in this search's generation, or -1."""
    mask = np.uint64(TT_SLOTS - 1)
    i = np.int64(h & mask)
    while True:
        info = tt_info[i]
        if (info >> 40) != gen:
            return -1
        if tt_key[i] == h:
            return i
        i = (i + 1) & (TT_SLOTS - 1)


@njit(cache=True)
def tt_put(tt: Any, st: Any, h: Any, depth: Any, flag: Any, score: Any, ft: Any, cap: Any) -> None:
    """Store an entry (an existing one for the position is replaced), as ``tt[state] = ...``."""
    tt_key, tt_info, tt_ft, tt_cap = tt[0], tt[1], tt[2], tt[3]
    gen = st[S_GEN]
    i = np.int64(h & np.uint64(TT_SLOTS - 1))
    while True:
        if (tt_info[i] >> 40) != gen:
            st[S_TT_COUNT] += 1
            break
        if tt_key[i] == h:
            break
        i = (i + 1) & (TT_SLOTS - 1)
    tt_key[i] = h
    tt_info[i] = gen << 40 | (depth & 0xFF) << 32 | (flag & 0x3) << 30 | ((score + INF) & 0x3FFFFFFF)
    tt_ft[i] = ft
    tt_cap[i] = cap


@njit(cache=True)
def tt_get(tt: Any, st: Any, h: Any) -> Any:
    """(found, depth, flag, score, from | to << 8, captured) of the entry for ``h``."""
    i = _tt_find(tt[0], tt[1], st[S_GEN], h)
    if i < 0:
        return False, 0, 0, 0, -1, 0
    info = tt[1][i]
    return True, (info >> 32) & 0xFF, (info >> 30) & 0x3, (info & 0x3FFFFFFF) - INF, tt[2][i], tt[3][i]


@njit(cache=True)
def _rank(gpos: Any, glen: Any, binom: Any, group: int, mask: Any, k: Any) -> Any:
    """Rank of ``mask`` among the ``k``-subsets of a group's squares in ``itertools.combinations``
    order (as ``egtb.solve.Geometry.group``), or -1 when a piece stands outside the group."""
    n = glen[group]
    rank = binom[n, k] - 1
    i = 0
    while mask:
        low = mask & -mask
        mask ^= low
        p = gpos[group, lowbit(low)]
        if p < 0:
            return -1
        rank -= binom[n - 1 - p, k - i]
        i += 1
    return rank


@njit(cache=True)
def _turned(turn: Any, mask: Any) -> Any:
    """The board turned half round (the tables are indexed with White to move)."""
    out = np.int64(0)
    while mask:
        low = mask & -mask
        mask ^= low
        out |= np.int64(1) << turn[lowbit(low)]
    return out


@njit(cache=True)
def probe(tb: Any, um: Any, uk: Any, tm: Any, tk: Any, white: Any) -> Any:
    """``egtb.Tables.probe``: the stored byte of the position, or -1 when it is not in the tables."""
    gpos, glen, turn, binom, offsets, data = tb[0], tb[1], tb[2], tb[3], tb[4], tb[5]
    if not white:
        um = _turned(turn, um)
        uk = _turned(turn, uk)
        tm = _turned(turn, tm)
        tk = _turned(turn, tk)
    c0 = popcount(um)
    c1 = popcount(uk)
    c2 = popcount(tm)
    c3 = popcount(tk)
    if c0 > 4 or c1 > 4 or c2 > 4 or c3 > 4:
        return -1
    at = offsets[c0, c1, c2, c3]
    if at < 0:
        return -1
    r0 = _rank(gpos, glen, binom, 0, um, c0)
    r1 = _rank(gpos, glen, binom, 1, uk, c1)
    r2 = _rank(gpos, glen, binom, 2, tm, c2)
    r3 = _rank(gpos, glen, binom, 1, tk, c3)
    if r0 < 0 or r1 < 0 or r2 < 0 or r3 < 0:
        return -1
    n1 = binom[glen[1], c1]
    n2 = binom[glen[2], c2]
    n3 = binom[glen[1], c3]
    return np.int64(data[at + ((r0 * n1 + r1) * n2 + r2) * n3 + r3])


@njit(cache=True)
def _rev(cap: Any) -> Any:
    out = 0
    while cap:
        low = cap & -cap
        cap ^= low
        out |= np.int64(1) << (62 - lowbit(low))
    return out


@njit(cache=True)
def search(g: Any, tabs: Any, ev: Any, weights: Any, tb: Any, tt: Any, ctx: Any, st: Any, deadline: Any,
           um: Any, uk: Any, tm: Any, tk: Any, white: Any, depth: Any, alpha: Any, beta: Any, ply: Any,
           quiet: Any) -> Any:
    """``Searcher.search`` compiled: returns the score, or 0 with ``st[S_ABORT]`` set when the
    deadline or the node budget passed (or a buffer overflowed: ``st[S_OVERFLOW]``)."""
    killers, history, path, hist_keys = ctx[0], ctx[1], ctx[2], ctx[3]
    bufs = (ctx[4], ctx[5], ctx[6], ctx[7])
    keys1, keys2, order = ctx[8], ctx[9], ctx[10]
    st[S_NODES] += 1
    if not st[S_NODES] & CLOCK_MASK and (st[S_NODES] > st[S_NODE_LIMIT] or _now() > deadline):
        st[S_ABORT] = 1
        return 0
    if ply >= PLIES - 1:
        st[S_OVERFLOW] = 1
        st[S_ABORT] = 1
        return 0
    h = state_hash(um, uk, tm, tk, white)
    if quiet >= 4:
        if quiet >= g[G_NO_PROGRESS]:
            return 0
        # Only king moves since the last capture or man move: a position can repeat.
        start = ply - quiet
        for i in range(max(start, 0), ply):
            if path[i] == h:
                return 0
        if start < 0:
            for i in range(st[S_HIST_N]):
                if hist_keys[i] == h:
                    return 0
    if popcount(um | uk | tm | tk) <= st[S_PROBE_PIECES]:
        byte = probe(tb, um, uk, tm, tk, white)
        if byte >= 0:
            st[S_TB_HITS] += 1
            if not byte:
                return 0
            # byte - 1 plies to the end of the game: odd, the side to move wins.
            end = ply + byte - 1
            return MATE - end if byte & 1 == 0 else end - MATE
    if depth <= 0 and not can_capture(g, um, uk, tm, tk, white):
        if not _has_quiet_move(g, um, uk, tm, tk, white):
            return -MATE + ply
        if ply >= st[S_EXT_LIMIT] or not can_capture(g, tm, tk, um, uk, not white):
            return evaluate(g, ev, weights, um, uk, tm, tk, white)
        depth = 1
    if ply > st[S_MAX_PLY]:
        st[S_MAX_PLY] = ply
    tt_ft = -1
    tt_cap = 0
    if depth > 0:
        found, e_depth, flag, e_score, f_ft, f_cap = tt_get(tt, st, h)
        if found:
            tt_ft = f_ft
            tt_cap = f_cap
            if e_depth >= depth and ply:
                if e_score > MATE_BOUND:
                    e_score -= ply
                elif e_score < -MATE_BOUND:
                    e_score += ply
                if flag == EXACT:
                    return e_score
                if flag == LOWER and e_score >= beta:
                    return e_score
                if flag == UPPER and e_score <= alpha:
                    return e_score
    n = gen_moves(g, tabs, bufs, st, ply, um, uk, tm, tk, white)
    if st[S_OVERFLOW]:
        st[S_ABORT] = 1
        return 0
    if not n:
        return -MATE + ply
    mv_ft, mv_cap, mv_ch = bufs[0], bufs[1], bufs[2]
    capture = mv_cap[ply, 0] != 0
    k1 = killers[ply, 0]
    k2 = killers[ply, 1]
    # Ties go in the mover's own frame, as in Searcher.search (the same order, key for key).
    for i in range(n):
        ft = mv_ft[ply, i]
        f = ft & 0xFF
        t = ft >> 8
        frame = 0xFFFF - (f << 8 | t) if white else 0xFFFF - ((63 - f) << 8 | (63 - t))
        if capture:
            is_tt = 1 if (ft == tt_ft and mv_cap[ply, i] == tt_cap) else 0
            keys1[ply, i] = is_tt << 16 | frame
            keys2[ply, i] = -mv_cap[ply, i] if white else -_rev(mv_cap[ply, i])
        else:
            if ft == tt_ft and tt_cap == 0:
                keys1[ply, i] = np.int64(1) << 60
            elif ft == k1:
                keys1[ply, i] = np.int64(1) << 59
            elif ft == k2:
                keys1[ply, i] = np.int64(1) << 58
            else:
                keys1[ply, i] = history[(f << 6) | t] << 16 | frame
            keys2[ply, i] = 0
        order[ply, i] = i
    for i in range(1, n):
        j = i
        x = order[ply, i]
        a1 = keys1[ply, x]
        a2 = keys2[ply, x]
        while j > 0:
            y = order[ply, j - 1]
            b1 = keys1[ply, y]
            if b1 > a1 or (b1 == a1 and keys2[ply, y] >= a2):
                break
            order[ply, j] = y
            j -= 1
        order[ply, j] = x
    child_depth = depth if n == 1 and ply < st[S_EXT_LIMIT] else depth - 1
    nxt = not white
    best = -INF
    best_ft = 0
    best_cap = 0
    orig_alpha = alpha
    reduce_from = LMR_AFTER if depth >= LMR_DEPTH and not capture and n > LMR_AFTER else n
    path[ply] = h
    for i in range(n):
        x = order[ply, i]
        ft = mv_ft[ply, x]
        cap = mv_cap[ply, x]
        a = mv_ch[ply, x, 0]
        b = mv_ch[ply, x, 1]
        c = mv_ch[ply, x, 2]
        d = mv_ch[ply, x, 3]
        child_quiet = 0 if cap or c != um else quiet + 1
        if i == 0:
            score = -search(g, tabs, ev, weights, tb, tt, ctx, st, deadline, a, b, c, d, nxt, child_depth, -beta,
                            -alpha, ply + 1, child_quiet)
            if st[S_ABORT]:
                return 0
        else:
            if i >= reduce_from and ft != k1 and ft != k2:
                score = -search(g, tabs, ev, weights, tb, tt, ctx, st, deadline, a, b, c, d, nxt, child_depth - 1,
                                -alpha - 1, -alpha, ply + 1, child_quiet)
                if st[S_ABORT]:
                    return 0
                if score <= alpha:
                    continue
            score = -search(g, tabs, ev, weights, tb, tt, ctx, st, deadline, a, b, c, d, nxt, child_depth,
                            -alpha - 1, -alpha, ply + 1, child_quiet)
            if st[S_ABORT]:
                return 0
            if alpha < score < beta:
                score = -search(g, tabs, ev, weights, tb, tt, ctx, st, deadline, a, b, c, d, nxt, child_depth,
                                -beta, -score, ply + 1, child_quiet)
                if st[S_ABORT]:
                    return 0
        if score > best:
            best = score
            best_ft = ft
            best_cap = cap
            if score > alpha:
                alpha = score
                if alpha >= beta:
                    if not cap:
                        if killers[ply, 0] != ft:
                            killers[ply, 1] = killers[ply, 0]
                            killers[ply, 0] = ft
                        f = ft & 0xFF
                        t = ft >> 8
                        history[(f << 6) | t] += depth * depth
                    break
    if depth > 0:
        if best >= beta:
            flag = LOWER
        elif best > orig_alpha:
            flag = EXACT
        else:
            flag = UPPER
        stored = best
        if stored > MATE_BOUND:
            stored += ply
        elif stored < -MATE_BOUND:
            stored -= ply
        if st[S_TT_COUNT] > TT_LIMIT:
            st[S_GEN] += 1
            st[S_TT_COUNT] = 0
        tt_put(tt, st, h, depth, flag, stored, best_ft, best_cap)
    return best


@njit(cache=True)
def perft(g: Any, tabs: Any, bufs: Any, st: Any, ply: Any, um: Any, uk: Any, tm: Any, tk: Any, white: Any,
          depth: Any) -> Any:
    """Leaf count (for the tests: the compiled generator against the rules engine's)."""
    n = gen_moves(g, tabs, bufs, st, ply, um, uk, tm, tk, white)
    if depth == 1:
        return n
    total = 0
    for i in range(n):
        ch = bufs[2]
        total += perft(g, tabs, bufs, st, ply + 1, ch[ply, i, 0], ch[ply, i, 1], ch[ply, i, 2], ch[ply, i, 3],
                       not white, depth - 1)
    return total


# -- the Python side ----------------------------------------------------------------------------


class _Layout:
    """One variant's dense layout and the compiled search's tables for it."""

    def __init__(self, v: Variant) -> None:
        self.v = v
        bits = [b for b in range(v.size * v.pitch) if v.valid >> b & 1]
        self.parity = bits[0] & 1
        if any(b & 1 != self.parity for b in bits) or max(bits) >> 1 > 62:
            raise ValueError(f"{v.id}: no dense layout")
        dense = self.dense
        g = np.zeros(G_LEN, np.int64)
        g[G_VALID] = dense(v.valid)
        g[G_WPROMO] = dense(v.white_promo)
        g[G_BPROMO] = dense(v.black_promo)
        g[G_S1] = (v.pitch - 1) // 2
        g[G_S2] = (v.pitch + 1) // 2
        g[G_FLYING] = int(v.flying_kings)
        g[G_MEN_TAKE_KINGS] = int(v.men_capture_kings)
        g[G_ITALIAN] = int(v.priority is CapturePriority.ITALIAN)
        g[G_NO_PROGRESS] = v.no_progress_plies
        g[G_WIN_BONUS] = 300 if v.flying_kings else 0
        geo = Geometry(v)
        g[G_CENTRE] = dense(geo.centre)
        g[G_DIAG] = dense(geo.diagonal)
        g[G_WFAR] = dense(geo.white_far_half)
        g[G_BFAR] = dense(geo.black_far_half)
        g[G_WBACK] = dense(geo.white_back)
        g[G_BBACK] = dense(geo.black_back)
        g[G_WNEAR] = dense(geo.white_near)
        g[G_BNEAR] = dense(geo.black_near)
        g[G_SIZE] = v.size
        g[G_MEN_BACK] = int(v.men_capture_backwards)
        g[G_CROWNING] = {Crowning.STOPS: CROWN_STOPS, Crowning.PASSES: CROWN_PASSES,
                         Crowning.CONTINUES_AS_KING: CROWN_KING}[v.crowning]
        g[G_FREE] = int(v.priority is CapturePriority.FREE)
        g[G_MAJORITY] = int(v.priority is CapturePriority.MAJORITY)
        self.g = g
        most = max(len(v.jumps[t][b]) for t in range(3) for b in bits)
        jmid = np.zeros((3, 64, max(most, 1)), np.int64)
        jland = np.zeros((3, 64, max(most, 1)), np.int64)
        jn = np.zeros((3, 64), np.int64)
        for t in range(3):
            for b in bits:
                for k, (mid, land, _mask) in enumerate(v.jumps[t][b]):
                    jmid[t, b >> 1, k] = dense(mid)
                    jland[t, b >> 1, k] = land >> 1
                jn[t, b >> 1] = len(v.jumps[t][b])
        steps = np.full((4, 64), -1, np.int64)
        for d, step in enumerate(v.steps):
            for b in bits:
                if b < len(step) and step[b] >= 0:
                    steps[d, b >> 1] = step[b] >> 1
        longest = max((len(ray) for b in bits for ray in v.rays[b]), default=1)
        ray_sq = np.zeros((64, 4, max(longest, 1)), np.int64)
        ray_len = np.zeros((64, 4), np.int64)
        for b in bits:
            for d, ray in enumerate(v.rays[b]):
                ray_len[b >> 1, d] = len(ray)
                for i, (t, _mask) in enumerate(ray):
                    ray_sq[b >> 1, d, i] = t >> 1
        self.tabs = (jmid, jland, jn, steps, ray_sq, ray_len)
        rows = np.array([dense(r) for r in geo.rows], np.int64)
        wcone = np.zeros(64, np.int64)
        bcone = np.zeros(64, np.int64)
        for b in bits:
            wcone[b >> 1] = dense(geo.white_cone[b])
            bcone[b >> 1] = dense(geo.black_cone[b])
        self.ev = (rows, wcone, bcone)

    @staticmethod
    def dense(x: int) -> int:
        out = 0
        while x:
            low = x & -x
            x ^= low
            out |= 1 << ((low.bit_length() - 1) >> 1)
        return out

    def full(self, x: int) -> int:
        out = 0
        p = self.parity
        while x:
            low = x & -x
            x ^= low
            out |= 1 << (((low.bit_length() - 1) << 1) | p)
        return out

    def key_to_full(self, ft: int, cap: int) -> int:
        """A move key of the rules engine (``from | to << 8 | captured << 16``) from the dense one."""
        p = self.parity
        return ((ft & 0xFF) << 1 | p) | ((ft >> 8) << 1 | p) << 8 | self.full(cap) << 16

    def key_to_dense(self, key: int) -> tuple[int, int]:
        return (key & 0xFF) >> 1 | ((key >> 8 & 0xFF) >> 1) << 8, self.dense(key >> 16)


_LAYOUTS: dict[str, _Layout] = {}


@functools.cache
def _binomials() -> Any:
    out = np.zeros((65, 65), np.int64)
    for n in range(65):
        for k in range(n + 1):
            out[n, k] = comb(n, k)
    return out


@functools.cache
def _no_tables() -> tuple:
    """The probe's arrays when there are no tables (the kernels always take the same types)."""
    return (np.full((3, 64), -1, np.int64), np.zeros(3, np.int64), np.zeros(64, np.int64), _binomials(),
            np.full((5, 5, 5, 5), -1, np.int64), np.zeros(1, np.uint8))


_TABLE_ARRAYS: weakref.WeakKeyDictionary[Tables, tuple] = weakref.WeakKeyDictionary()


def _table_arrays(tables: Tables) -> tuple:
    """A variant's endgame tables for the compiled probe: every material's bytes in one array (7 MB
    for the 8x8 variants, 47 MB for Triestina: the unpacked file every process maps, else read once
    per process), and the index's geometry."""
    got = _TABLE_ARRAYS.get(tables)
    if got is not None:
        return got
    geo = tables.geo
    gpos = np.full((3, 64), -1, np.int64)
    glen = np.zeros(3, np.int64)
    for group, squares in enumerate((geo.our_men, geo.kings, geo.their_men)):
        glen[group] = len(squares)
        for i, b in enumerate(squares):
            gpos[group, b >> 1] = i
    turn = np.zeros(64, np.int64)
    for b, bit in geo.turn_bit.items():
        turn[b >> 1] = (bit.bit_length() - 1) >> 1
    offsets = np.full((5, 5, 5, 5), -1, np.int64)
    whole = tables.source.mapped() if isinstance(tables.source, store.TableFile) else None
    if whole is not None:
        # The file every process maps (egtb/store.py): its pages are shared, nothing is copied.
        for m, (at, _size) in whole[1].items():
            if max(m) <= 4 and sum(m) <= tables.pieces:
                offsets[m] = at
        flat = np.frombuffer(whole[0], np.uint8)
    else:
        parts = []
        at = 0
        for m in tables.source.materials if isinstance(tables.source, store.TableFile) else list(tables.source):
            if max(m) > 4 or sum(m) > tables.pieces:
                continue
            data = np.frombuffer(tables.table(m), np.uint8)
            offsets[m] = at
            parts.append(data)
            at += len(data)
        flat = np.concatenate(parts) if parts else np.zeros(1, np.uint8)
    arrays = (gpos, glen, turn, _binomials(), offsets, flat)
    _TABLE_ARRAYS[tables] = arrays
    return arrays


def layout(v: Variant) -> _Layout:
    got = _LAYOUTS.get(v.id)
    if got is None or got.v is not v:
        got = _LAYOUTS[v.id] = _Layout(v)
    return got


class _Context:
    """A thread's buffers and transposition table, reused from search to search (the table's
    entries of an earlier search are ignored by generation, so nothing is cleared)."""

    def __init__(self) -> None:
        self.tt = (np.zeros(TT_SLOTS, np.uint64), np.zeros(TT_SLOTS, np.int64),
                   np.zeros(TT_SLOTS, np.int64), np.zeros(TT_SLOTS, np.int64))
        self.killers = np.full((PLIES, 2), -1, np.int64)
        self.history = np.zeros(64 * 64, np.int64)
        self.path = np.zeros(PLIES, np.uint64)
        self.bufs = (np.zeros((PLIES, MOVES), np.int64), np.zeros((PLIES, MOVES), np.int64),
                     np.zeros((PLIES, MOVES, 4), np.int64), np.zeros((RAWS, 6), np.int64))
        self.keys = (np.zeros((PLIES, MOVES), np.int64), np.zeros((PLIES, MOVES), np.int64),
                     np.zeros((PLIES, MOVES), np.int64))
        self.st = np.zeros(S_LEN, np.int64)
        self.generation = 0

    def begin(self, hist_keys: Any) -> tuple:
        """A new search: empty killers, history and table, this search's repetition keys."""
        self.generation += 1
        if self.generation >= 1 << 22:
            for arr in self.tt:
                arr[:] = 0
            self.generation = 1
        self.killers[:] = -1
        self.history[:] = 0
        self.st[:] = 0
        self.st[S_NODE_LIMIT] = NO_NODE_LIMIT
        self.st[S_GEN] = self.generation
        self.st[S_HIST_N] = len(hist_keys)
        keys = np.array(hist_keys if len(hist_keys) else [0], np.uint64)
        return (self.killers, self.history, self.path, keys, *self.bufs, *self.keys)


_LOCAL = threading.local()
_WARM = threading.Lock()
_warmed = False


def warm(tables: Tables | None = None) -> None:
    """Load the compiled search in this process (compile it, the first time on a machine: some
    seconds), and ``tables`` for it when given, so a search's clock does not pay for either.  Once
    per process (and per tables); a no-op without numba."""
    global _warmed
    if _DISABLED or not HAVE_NUMBA or not _load():
        return
    if tables is not None:
        with _WARM:
            _table_arrays(tables)
    if _warmed:
        return
    with _WARM:
        if _warmed:
            return
        from bot.rules import Position, get_variant

        v = get_variant("italian")
        pos = Position.start(v)
        # One process on the machine compiles; the others wait for its cache and load it.
        compiling = needs_compiling()
        with jitcache.first_compile():
            s = JitSearcher(v, evaluator(v), float("inf"))
            state = (*pos.sides(), pos.white)
            s.root(state, 2, s.gen_moves(*state), False)
            s.tt_move(state)
            # The puzzles' material search is compiled in the same one-time compile (so test workers
            # and generator processes only load it), and left unloaded where it is never used.
            if compiling:
                _warm_material()
        _warmed = True


def needs_compiling() -> bool:
    """Whether the next process to search compiles the search first (nothing of it in this
    machine's cache yet: seconds to a minute) rather than loading it."""
    return not (_DISABLED or not HAVE_NUMBA or jitcache.ready())


def release() -> None:
    """Let go of this thread's search buffers and transposition table (64 MB once a long search has
    filled it), so that an engine worker between jobs holds none of it.  The next search makes new
    ones: zeroed pages the system hands out as they are first touched, which a search does anyway."""
    _LOCAL.ctx = None


def _context() -> _Context:
    ctx = getattr(_LOCAL, "ctx", None)
    if ctx is None:
        ctx = _LOCAL.ctx = _Context()
    return ctx


class JitSearcher(Searcher):
    """``Searcher`` whose tree below the root is searched by the compiled ``search``."""

    def __init__(self, variant: Variant, ev: Evaluator, deadline: float, history_keys: set[State] | None = None,
                 quiet_plies: int = 0, tables: Tables | None = None, node_limit: int = NO_NODE_LIMIT) -> None:
        super().__init__(variant, ev.evaluate, deadline, history_keys, quiet_plies,
                         tables.probe if tables is not None else None, tables.pieces if tables is not None else 0,
                         node_limit)
        self.layout = layout(variant)
        self.weights = np.array(ev.weights, np.float64)
        self.ctx = _context()
        keys = [self._hash(state) for state in self.history_keys]
        self.arrays = self.ctx.begin(keys)
        self.st = self.ctx.st
        self.st[S_NODE_LIMIT] = node_limit
        self.fallback = False
        if tables is not None:
            self.tb = _table_arrays(tables)
            self.st[S_PROBE_PIECES] = tables.pieces
        else:
            self.tb = _no_tables()

    def _hash(self, state: State) -> Any:
        d = self.layout.dense
        return np.uint64(state_hash(d(state[0]), d(state[1]), d(state[2]), d(state[3]), state[4]))

    @property
    def tb_hits(self) -> int:
        return int(self.st[S_TB_HITS]) + self._py_tb_hits

    @tb_hits.setter
    def tb_hits(self, value: int) -> None:
        st = getattr(self, "st", None)
        self._py_tb_hits = value - (int(st[S_TB_HITS]) if st is not None else 0)

    @property
    def nodes(self) -> int:
        return int(self.st[S_NODES]) + self._py_nodes

    @nodes.setter
    def nodes(self, value: int) -> None:
        # Searcher counts its own nodes (``self.nodes += 1``) when the Python search stands in.
        st = getattr(self, "st", None)
        self._py_nodes = value - (int(st[S_NODES]) if st is not None else 0)

    def search(self, um: int, uk: int, tm: int, tk: int, white: bool, depth: int,
               alpha: int, beta: int, ply: int, quiet: int) -> int:
        if self.fallback:
            return super().search(um, uk, tm, tk, white, depth, alpha, beta, ply, quiet)
        lay = self.layout
        d = lay.dense
        st = self.st
        st[S_EXT_LIMIT] = self.ext_limit
        if ply == 1:
            self.ctx.path[0] = self._hash(self.path[0])
        score = search(lay.g, lay.tabs, lay.ev, self.weights, self.tb, self.ctx.tt, self.arrays, st, self.deadline,
                       d(um), d(uk), d(tm), d(tk), white, depth, alpha, beta, ply, quiet)
        if st[S_ABORT]:
            if st[S_OVERFLOW]:
                # A position beyond the buffers: this search goes on in Python from here.
                st[S_ABORT] = 0
                st[S_OVERFLOW] = 0
                self.fallback = True
                return super().search(um, uk, tm, tk, white, depth, alpha, beta, ply, quiet)
            raise Timeout
        return int(score)

    def remember(self, state: State, depth: int, score: int, key: int) -> None:
        if self.fallback:
            super().remember(state, depth, score, key)
            return
        ft, cap = self.layout.key_to_dense(key)
        tt_put(self.ctx.tt, self.st, self._hash(state), depth, EXACT, score, ft, cap)

    def tt_move(self, state: State) -> int:
        if self.fallback:
            return super().tt_move(state)
        found, _depth, _flag, _score, ft, cap = tt_get(self.ctx.tt, self.st, self._hash(state))
        return self.layout.key_to_full(int(ft), int(cap)) if found else 0


# -- the puzzles' material search ---------------------------------------------------------------
#
# ``bot.puzzles.prove.Search`` (alpha-beta on material, captures played out at the horizon, bounds
# kept per depth) compiled, for the puzzle generator and ``puzzles check``.  The Python class is the
# definition; this twin must return the same value for every call, and with alpha-beta's fail-soft
# bounds and a table shared across depths the value depends on the order moves are tried in and on
# what the table holds.  So the moves come in ``movegen.fast(v).moves``'s order (its single-jump
# shortcut lists jumps by direction, then landing square, which ``gen_moves`` does not: that case is
# generated here), and the table holds exactly the position, never only a hash of it.

# The settings of one variant's material search (an int64 array, M_* indices).
M_SHORTCUT, M_QUALITY, M_MAN, M_KING, M_NO_MOVE, M_INF = range(6)
M_LEN = 6


@njit(cache=True)
def _material_moves(g: Any, tabs: Any, bufs: Any, st: Any, ply: Any, um: Any, uk: Any, tm: Any, tk: Any,
                    white: Any, mg: Any) -> Any:
    """The legal moves into the buffers of ``ply`` in ``movegen.fast(v).moves``'s order."""
    if mg[M_SHORTCUT]:
        s1 = g[G_S1]
        s2 = g[G_S2]
        them = tm | tk
        empty = g[G_VALID] & ~(um | uk | them)
        victims = them if g[G_MEN_TAKE_KINGS] else tm
        if white:
            j1 = (((um >> s1) & victims) >> s1) & empty
            j2 = (((um >> s2) & victims) >> s2) & empty
        else:
            j1 = (((um << s1) & victims) << s1) & empty
            j2 = (((um << s2) & victims) << s2) & empty
        land = j1 | j2
        if land:
            if white:
                again = (((land >> s1) & victims) >> s1) & empty or (((land >> s2) & victims) >> s2) & empty
            else:
                again = (((land << s1) & victims) << s1) & empty or (((land << s2) & victims) << s2) & empty
            if not again and not (uk and _kings_can_capture(g, uk, them, empty)):
                # Every capture is a single jump by a man: movegen's jump_moves.
                if mg[M_QUALITY] and tk:
                    if white:
                        k1 = (((um >> s1) & tk) >> s1) & empty
                        k2 = (((um >> s2) & tk) >> s2) & empty
                    else:
                        k1 = (((um << s1) & tk) << s1) & empty
                        k2 = (((um << s2) & tk) << s2) & empty
                    if k1 or k2:
                        j1 = k1
                        j2 = k2
                promo = g[G_WPROMO] if white else g[G_BPROMO]
                mv_ft, mv_cap, mv_ch = bufs[0], bufs[1], bufs[2]
                n = 0
                for dirn in range(2):
                    s = s1 if dirn == 0 else s2
                    t = j1 if dirn == 0 else j2
                    while t:
                        low = t & -t
                        t ^= low
                        if white:
                            mid = low << s
                            src = low << (s + s)
                        else:
                            mid = low >> s
                            src = low >> (s + s)
                        ft = lowbit(src) | lowbit(low) << 8
                        if low & promo:
                            _put(mv_ft, mv_cap, mv_ch, ply, n, ft, mid, tm & ~mid, tk & ~mid, um ^ src, uk | low)
                        else:
                            _put(mv_ft, mv_cap, mv_ch, ply, n, ft, mid, tm & ~mid, tk & ~mid, um ^ src ^ low, uk)
                        n += 1
                return n
    return gen_moves(g, tabs, bufs, st, ply, um, uk, tm, tk, white)


# The bounds table: open addressing over rows (um, uk, tm, tk, side, depth, low, high), side 2 for
# White to move, 1 for Black, 0 for an empty row; held in a one-item typed list so that the search
# can put a table twice the size in its place when it is half full (the Python table is a dict:
# it never forgets an entry, and neither may this one).  ``count`` holds its entries.
BOUND_ROWS = 1 << 10


@njit(cache=True)
def _bound_slot(rows: Any, h: Any, um: Any, uk: Any, tm: Any, tk: Any, side: Any) -> Any:
    """The row holding the position, or the empty row where it would go."""
    mask = np.uint64(rows.shape[0] - 1)
    i = np.int64(h & mask)
    while True:
        if rows[i, 4] == 0 or (rows[i, 4] == side and rows[i, 0] == um and rows[i, 1] == uk and rows[i, 2] == tm
                               and rows[i, 3] == tk):
            return i
        i = np.int64((np.uint64(i) + np.uint64(1)) & mask)


@njit(cache=True)
def _bound_store(table: Any, count: Any, h: Any, um: Any, uk: Any, tm: Any, tk: Any, side: Any, depth: Any,
                 low: Any, high: Any) -> None:
    rows = table[0]
    i = _bound_slot(rows, h, um, uk, tm, tk, side)
    if rows[i, 4] == 0:
        if 2 * (count[0] + 1) > rows.shape[0]:
            bigger = np.zeros((2 * rows.shape[0], 8), np.int64)
            for j in range(rows.shape[0]):
                if rows[j, 4] != 0:
                    k = _bound_slot(bigger, state_hash(rows[j, 0], rows[j, 1], rows[j, 2], rows[j, 3], rows[j, 4] == 2),
                                    rows[j, 0], rows[j, 1], rows[j, 2], rows[j, 3], rows[j, 4])
                    for c in range(8):
                        bigger[k, c] = rows[j, c]
            table[0] = bigger
            rows = bigger
            i = _bound_slot(rows, h, um, uk, tm, tk, side)
        count[0] += 1
        rows[i, 0] = um
        rows[i, 1] = uk
        rows[i, 2] = tm
        rows[i, 3] = tk
        rows[i, 4] = side
    rows[i, 5] = depth
    rows[i, 6] = low
    rows[i, 7] = high


@njit(cache=True)
def material_value(g: Any, tabs: Any, bufs: Any, st: Any, mg: Any, table: Any, count: Any, um: Any, uk: Any,
                   tm: Any, tk: Any, white: Any, depth: Any, alpha: Any, beta: Any, ply: Any) -> Any:
    """``prove.Search.value`` on dense boards.  ``st[S_ABORT]`` set means no value: the node budget
    ran out (``st[S_OVERFLOW]`` clear) or a buffer did (set); nothing is stored in the table then."""
    st[S_NODES] += 1
    if st[S_NODES] > st[S_NODE_LIMIT]:
        st[S_ABORT] = 1
        return 0
    if ply >= PLIES:
        st[S_OVERFLOW] = 1
        st[S_ABORT] = 1
        return 0
    if depth <= 0:
        if not can_capture(g, um, uk, tm, tk, white):
            if not _has_quiet_move(g, um, uk, tm, tk, white):
                return -mg[M_NO_MOVE]
            return (popcount(um) - popcount(tm)) * mg[M_MAN] + (popcount(uk) - popcount(tk)) * mg[M_KING]
    n = _material_moves(g, tabs, bufs, st, ply, um, uk, tm, tk, white, mg)
    if st[S_OVERFLOW]:
        st[S_ABORT] = 1
        return 0
    if n == 0:
        return -mg[M_NO_MOVE]
    side = np.int64(2) if white else np.int64(1)
    h = state_hash(um, uk, tm, tk, white)
    slot = _bound_slot(table[0], h, um, uk, tm, tk, side)
    rows = table[0]
    found = rows[slot, 4] != 0
    ed = elow = ehigh = np.int64(0)
    if found:
        ed = rows[slot, 5]
        elow = rows[slot, 6]
        ehigh = rows[slot, 7]
        if ed >= depth:
            if elow >= beta:
                return elow
            if ehigh <= alpha:
                return ehigh
            alpha = max(alpha, elow)
            beta = min(beta, ehigh)
            if alpha >= beta:
                return elow
    inf = mg[M_INF]
    best = -inf
    start_alpha = alpha
    nxt = depth - 1 if depth > 0 else np.int64(0)
    ch = bufs[2]
    for i in range(n):
        v = -material_value(g, tabs, bufs, st, mg, table, count, ch[ply, i, 0], ch[ply, i, 1], ch[ply, i, 2],
                            ch[ply, i, 3], not white, nxt, -beta, -alpha, ply + 1)
        if st[S_ABORT]:
            return 0
        if v > best:
            best = v
            if v > alpha:
                alpha = v
                if alpha >= beta:
                    break
    low = -inf
    high = inf
    if best >= beta:
        low = best
    elif best <= start_alpha:
        high = best
    else:
        low = best
        high = best
    if found and ed == depth:
        low = max(low, elow)
        high = min(high, ehigh)
    _bound_store(table, count, h, um, uk, tm, tk, side, depth, low, high)
    return best


@njit(cache=True)
def material_moves(g: Any, tabs: Any, bufs: Any, st: Any, mg: Any, um: Any, uk: Any, tm: Any, tk: Any,
                   white: Any) -> Any:
    """The children ``material_value`` tries, in its order (for the tests: against movegen's)."""
    n = _material_moves(g, tabs, bufs, st, 0, um, uk, tm, tk, white, mg)
    return bufs[2][0, :n, :].copy()


def material_settings(v: Variant, man: int, king: int, no_move: int, inf: int) -> Any:
    """The ``mg`` array of ``material_value`` for ``v``, with the search's scores."""
    mg = np.zeros(M_LEN, np.int64)
    mg[M_SHORTCUT] = int(not v.men_capture_backwards and v.crowning is not Crowning.CONTINUES_AS_KING)
    mg[M_QUALITY] = int(v.men_capture_kings and v.priority in (CapturePriority.QUANTITY_QUALITY,
                                                                CapturePriority.ITALIAN))
    mg[M_MAN], mg[M_KING], mg[M_NO_MOVE], mg[M_INF] = man, king, no_move, inf
    return mg


@njit(cache=True)
def _new_bounds(rows: Any) -> Any:
    # Made compiled, and the compiled maker cached: a typed list made from Python compiles its
    # methods in every process (half a second).
    table = List()
    table.append(np.zeros((rows, 8), np.int64))
    return table


def material_table() -> tuple[Any, Any]:
    """An empty bounds table for ``material_value`` (position -> depth, low, high) and its count."""
    return _new_bounds(BOUND_ROWS), np.zeros(1, np.int64)


def material_bounds(table: Any) -> dict[tuple[int, int, int, int, bool], tuple[int, int, int]]:
    """The table's entries, on the dense boards it keys them by."""
    rows = table[0]
    return {(int(r[0]), int(r[1]), int(r[2]), int(r[3]), bool(r[4] == 2)): (int(r[5]), int(r[6]), int(r[7]))
            for r in rows[rows[:, 4] != 0]}


def material_buffers() -> tuple[tuple, Any]:
    """Move buffers and counters for ``material_value`` (one set per thread: the search nests)."""
    bufs = (np.zeros((PLIES, MOVES), np.int64), np.zeros((PLIES, MOVES), np.int64),
            np.zeros((PLIES, MOVES, 4), np.int64), np.zeros((RAWS, 6), np.int64))
    return bufs, np.zeros(S_LEN, np.int64)


def _warm_material() -> None:
    """Compile (or load) the material search, with the argument types the puzzles pass."""
    from bot.rules import Position, get_variant

    lay = layout(get_variant("italian"))
    bufs, st = material_buffers()
    st[S_NODE_LIMIT] = NO_NODE_LIMIT
    mg = material_settings(lay.v, 100, 200, 10_000, 1_000_000)
    pos = Position.start(lay.v)
    um, uk, tm, tk = (lay.dense(x) for x in pos.sides())
    material_value(lay.g, lay.tabs, bufs, st, mg, *material_table(), um, uk, tm, tk, pos.white, 2, -1_000_000,
                   1_000_000, 0)
    material_moves(lay.g, lay.tabs, bufs, st, mg, um, uk, tm, tk, pos.white)
