"""The compiled search (bot/ai/jit.py) against its definition, the Python search.

The compiled generator must make exactly the rules engine's moves (the same keys and the same
positions after them) on random playouts and on random boards full of kings, where the capture
rules bite; its perft must be the rules engine's.  The compiled search must be the Python one
node for node: for a position and a depth, the same scores, best moves, node counts and principal
variations, repetitions and the no-progress count included.  Nothing here is mocked: both
searches run for real on the same positions.
"""

from __future__ import annotations

import math
import random
import threading
import time

import pytest

import bot.ai.search as search_mod
from bot.ai import SOFT, _history, _state, egtb, evaluator, jit, search_position
from bot.ai.search import Searcher, Timeout, frame_order
from bot.rules import VARIANTS as OFFERED
from bot.rules import Position, get_variant, movegen
from bot.rules.perft import perft
from bot.rules.variants import registered
from tests.ai.ai_helpers import playout_positions

pytestmark = pytest.mark.skipif(not jit.HAVE_NUMBA, reason="numba is not installed")

# The generator and search tests run on every variant the engine knows, the tests' own included
# (tests/extra_variants.py); the tests of the endgame tables on the variants that have tables.
VARIANTS = tuple(v.id for v in registered())
WITH_TABLES = tuple(OFFERED)


def random_board(variant: str, rng: random.Random, men: bool = True) -> Position:
    """A random board with several kings a side, and men (where men may stand) unless ``men`` is false."""
    v = get_variant(variant)
    squares = list(range(1, v.squares + 1))
    rng.shuffle(squares)
    pieces: dict[str, list[str]] = {"W": [], "B": []}
    for colour in "WB":
        for _ in range(rng.randint(1, 5)):
            pieces[colour].append(f"K{squares.pop()}")
    white_crown = {v.bit_to_sq[b] for b in range(v.size * v.pitch) if v.white_promo >> b & 1}
    black_crown = {v.bit_to_sq[b] for b in range(v.size * v.pitch) if v.black_promo >> b & 1}
    for colour, banned in (("W", white_crown), ("B", black_crown)):
        for _ in range(rng.randint(0, 6) if men else 0):
            sq = squares.pop()
            if sq in banned:
                continue
            pieces[colour].append(str(sq))
    side = rng.choice("WB")
    return Position.from_fen(v, f"{side}:W{','.join(pieces['W'])}:B{','.join(pieces['B'])}")


def compiled_moves(pos: Position) -> list[tuple[int, int, int, int, int]]:
    v = pos.variant
    lay = jit.layout(v)
    ctx = jit._context()
    ctx.begin([])
    d = lay.dense
    um, uk, tm, tk = pos.sides()
    n = jit.gen_moves(lay.g, lay.tabs, ctx.bufs, ctx.st, 0, d(um), d(uk), d(tm), d(tk), pos.white)
    assert not ctx.st[jit.S_OVERFLOW]
    ft, cap, child = ctx.bufs[0], ctx.bufs[1], ctx.bufs[2]
    return sorted((lay.key_to_full(int(ft[0, i]), int(cap[0, i])), *(lay.full(int(x)) for x in child[0, i]))
                  for i in range(n))


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_compiled_generator_makes_the_rules_engines_moves(variant):
    rng = random.Random(11)
    positions = playout_positions(variant, 120, seed=3, plies=(0, 160))
    positions += [random_board(variant, rng) for _ in range(400)]
    fast = movegen.fast(get_variant(variant))
    captures = 0
    for pos in positions:
        want = sorted(fast.moves(*pos.sides(), pos.white))
        assert compiled_moves(pos) == want, pos.fen()
        captures += bool(want and want[0][0] >> 16)
    # The boards full of kings do reach the capture rules.
    assert captures > 100


@pytest.mark.parametrize(("variant", "depth"), [(v.id, 5 if v.size > 8 else 6) for v in registered()])
def test_the_compiled_perft_is_the_rules_engines(variant, depth):
    v = get_variant(variant)
    lay = jit.layout(v)
    ctx = jit._context()
    d = lay.dense
    for pos in [Position.start(v), *playout_positions(variant, 3, seed=9, plies=(20, 60))]:
        ctx.begin([])
        um, uk, tm, tk = pos.sides()
        got = jit.perft(lay.g, lay.tabs, ctx.bufs, ctx.st, 0, d(um), d(uk), d(tm), d(tk), pos.white,
                        depth if pos.legal_moves() else 1)
        assert got == perft(pos, depth if pos.legal_moves() else 1), pos.fen()


def iterations(cls: type, pos: Position, depth: int, history: list[str] | None = None,
               quiet: int | None = None, tables: egtb.Tables | None = None
               ) -> tuple[list[tuple[int, int, int, int]], list[int]]:
    """(score, best move key, nodes so far, table hits so far) after each iteration to ``depth``,
    and the PV."""
    v = pos.variant
    keys, implied = _history(v, history, pos)
    plies = implied if quiet is None else quiet
    if cls is Searcher:
        s = Searcher(v, evaluator(v).evaluate, time.perf_counter() + 600, keys, plies,
                     tables.probe if tables else None, tables.pieces if tables else 0)
    else:
        s = jit.JitSearcher(v, evaluator(v), time.perf_counter() + 600, keys, plies, tables)
    state = _state(pos)
    root = frame_order(v, s.gen_moves(*state), pos.white)
    out = []
    for dep in range(1, depth + 1):
        scored = s.root(state, dep, root, exact_all=False)
        root = [m for _s, m in scored]
        out.append((scored[0][0], scored[0][1][0], s.nodes, s.tb_hits))
    return out, s.pv(state, out[-1][1], max(depth, 2 * depth))


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_compiled_search_is_the_python_search_node_for_node(variant):
    depth = 4 if get_variant(variant).size > 8 else 5
    positions = playout_positions(variant, 14, seed=21, plies=(0, 110))
    rng = random.Random(4)
    positions += [random_board(variant, rng) for _ in range(6)]
    for pos in positions:
        assert iterations(jit.JitSearcher, pos, depth) == iterations(Searcher, pos, depth), pos.fen()


@pytest.mark.parametrize("variant", VARIANTS)
def test_repetitions_and_the_no_progress_count_are_seen_alike(variant):
    """King endings where the search meets repeated positions (from the game's history and in
    its own tree) and the no-progress limit."""
    rng = random.Random(8)
    v = get_variant(variant)
    checked = 0
    for _ in range(40):
        pos = random_board(variant, rng, men=False)
        if not pos.legal_moves():
            continue
        # A history of king moves leading here: shuffle a king out and back.
        history = [pos.fen()]
        p = pos
        for _ in range(4):
            moves = [m for m in p.legal_moves() if not m.captured]
            if not moves:
                break
            p = p.play(rng.choice(moves))
            history.append(p.fen())
        for quiet in (None, v.no_progress_plies - 3):
            got = iterations(jit.JitSearcher, p, 5, history[:-1], quiet)
            assert got == iterations(Searcher, p, 5, history[:-1], quiet), (p.fen(), quiet)
        checked += 1
        if checked == 5:
            break
    assert checked == 5


def test_search_position_gives_the_same_answer_either_way(monkeypatch):
    pos = playout_positions("triestina", 1, seed=2, plies=(30, 40))[0]
    compiled = search_position(pos, 5, 600)
    monkeypatch.setattr(jit, "_DISABLED", True)
    python = search_position(pos, 5, 600)
    assert (compiled.move, compiled.score, compiled.depth, compiled.nodes, compiled.pv) == \
        (python.move, python.score, python.depth, python.nodes, python.pv)


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_node_budget_stops_both_searches_at_the_same_node(variant, monkeypatch):
    """Issue 28: analysis searches by nodes; the compiled and the Python search must stop at the
    same node (an unfinished iteration included) and answer the same, whatever the clock says."""
    positions = [p for p in playout_positions(variant, 6, seed=8, plies=(10, 50)) if len(p.legal_moves()) > 1][:3]
    budget = 7_000 if get_variant(variant).size > 8 else 20_000
    ticks = [0.0]

    def busy() -> float:
        ticks[0] += 1.0
        return ticks[0]

    monkeypatch.setattr(search_mod, "clock", busy)

    def answers() -> list[tuple]:
        out = []
        for pos in positions:
            got = search_position(pos, 64, math.inf, nodes=budget)
            pair = search_position(pos, 64, math.inf, nodes=budget, moves=pos.legal_moves()[:2])
            out.append((got.move, got.score, got.depth, got.nodes, got.pv, pair.scores, pair.nodes))
        return out

    compiled = answers()
    monkeypatch.setattr(jit, "_DISABLED", True)
    python = answers()
    assert compiled == python
    for (_move, _score, depth, nodes, _pv, scores, _pair_nodes), pos in zip(compiled, positions, strict=True):
        assert budget * SOFT < nodes <= budget + 64 and depth >= 3
        # Each of the two moves scored, the better one first.
        assert [m for m, _s in scores] in (pos.legal_moves()[:2], pos.legal_moves()[1::-1])
        assert scores[0][1] >= scores[1][1]


def test_the_compiled_search_reads_the_engines_clock(monkeypatch):
    """Issue 14: the compiled search reads the one clock tests replace (bot.ai.search.clock), not
    the machine's.  This clock is far past any uptime and loses a minute a reading: the compiled
    tree must stop at its first look at it (node 64) with its deadline passed, where one timed by
    the machine's clock would finish the depth-8 iteration."""
    readings = [0]

    def busy() -> float:
        readings[0] += 1
        return 1e12 + 60.0 * readings[0]

    # Loaded before the clock is replaced: a process that had not searched yet (this test alone)
    # would otherwise count warm()'s own readings too.
    jit.warm()
    monkeypatch.setattr(search_mod, "clock", busy)
    v = get_variant("italian")
    pos = Position.start(v)
    s = jit.JitSearcher(v, evaluator(v), search_mod.now() + 5.0)
    state = _state(pos)
    with pytest.raises(Timeout):
        s.root(state, 8, frame_order(v, s.gen_moves(*state), pos.white), exact_all=False)
    assert s.nodes <= 64 and readings[0] == 2


def test_threads_search_with_their_own_tables():
    """Two threads searching at once (the web board's and a chat's) get what each gets alone."""
    positions = [*playout_positions("italian", 2, seed=5, plies=(20, 30)),
                 *playout_positions("triestina", 2, seed=5, plies=(20, 30))]
    alone = [search_position(p, 5, 600) for p in positions]
    together: list = [None] * len(positions)

    def run(i: int) -> None:
        together[i] = search_position(positions[i], 5, 600)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(positions))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [(r.move, r.score, r.nodes) for r in together] == [(r.move, r.score, r.nodes) for r in alone]


def test_a_deadline_inside_the_compiled_tree_stops_it():
    pos = Position.start("triestina")
    started = time.perf_counter()
    result = search_position(pos, 64, 0.3)
    took = time.perf_counter() - started
    assert result.move in pos.legal_moves()
    assert result.depth >= 4
    assert took < 1.5


def few_pieces(variant: str, rng: random.Random, most: int) -> Position:
    """A random board of 2 to ``most`` pieces, both sides with a piece and a move."""
    while True:
        pos = random_board(variant, rng)
        v = pos.variant
        pieces = [(c, sq) for c, mask in (("W", pos.wm), ("WK", pos.wk), ("B", pos.bm), ("BK", pos.bk))
                  for sq in v.mask_to_squares(mask)]
        rng.shuffle(pieces)
        keep = pieces[:rng.randint(2, most)]
        white = [("K" if c == "WK" else "") + str(sq) for c, sq in keep if c.startswith("W")]
        black = [("K" if c == "BK" else "") + str(sq) for c, sq in keep if c.startswith("B")]
        if not white or not black:
            continue
        got = Position.from_fen(v, f"{'W' if pos.white else 'B'}:W{','.join(white)}:B{','.join(black)}")
        if got.legal_moves():
            return got


@pytest.mark.parametrize("variant", WITH_TABLES)
def test_the_compiled_probe_reads_the_tables_byte_for_byte(variant):
    tables = egtb.tables(variant)
    assert tables is not None
    arrays = jit._table_arrays(tables)
    lay = jit.layout(get_variant(variant))
    d = lay.dense
    rng = random.Random(6)
    hits = 0
    for _ in range(3000):
        pos = few_pieces(variant, rng, tables.pieces)
        um, uk, tm, tk = pos.sides()
        want = tables.probe(um, uk, tm, tk, pos.white)
        assert jit.probe(arrays, d(um), d(uk), d(tm), d(tk), pos.white) == want, pos.fen()
        hits += want > 0
    assert hits > 1000


@pytest.mark.parametrize("variant", WITH_TABLES)
def test_the_compiled_search_uses_the_tables_as_the_python_search_does(variant):
    tables = egtb.tables(variant)
    rng = random.Random(12)
    hits = 0
    for _ in range(8):
        pos = few_pieces(variant, rng, 7)
        got = iterations(jit.JitSearcher, pos, 5, tables=tables)
        assert got == iterations(Searcher, pos, 5, tables=tables), pos.fen()
        hits += got[0][-1][3]
    assert hits > 0


def test_a_position_beyond_the_buffers_is_searched_on_in_python(monkeypatch):
    """The compiled kernel reports an overflow (no real position of the shipped variants makes
    one, so the kernel is replaced by one that always does): the search goes on in Python and
    gives the Python search's answer, its nodes counted once."""
    pos = playout_positions("italian", 1, seed=7, plies=(20, 30))[0]
    want = iterations(Searcher, pos, 4)

    def overflowing(*args):
        st = args[7]
        st[jit.S_NODES] += 1
        st[jit.S_OVERFLOW] = 1
        st[jit.S_ABORT] = 1
        return 0

    monkeypatch.setattr(jit, "search", overflowing)
    got, pv = iterations(jit.JitSearcher, pos, 4)
    # The kernel's one node before the overflow is counted too; the rest is the Python search's.
    assert [(score, key) for score, key, _n, _h in got] == [(score, key) for score, key, _n, _h in want[0]]
    assert [n for _s, _k, n, _h in got] == [n + 1 for _s, _k, n, _h in want[0]]
    assert pv == want[1]
