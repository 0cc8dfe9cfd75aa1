"""The compiled material search (prove.CompiledSearch, bot/ai/jit.py) against the Python one (prove.Search).

They must agree on every value, not only on which side of a window it falls: alpha-beta's
fail-soft bounds and the table of bounds shared across depths make a value depend on the order
moves are tried in and on what the table holds, so the twin is held to the same order, the same
table and the same node count.  Positions: bank puzzles and positions of seeded random games
(kings, long captures, Spanish flying kings, Italian capture precedence among them).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from bot.ai import jit
from bot.puzzles import prove
from bot.puzzles.prove import INF, MAN, NO_MOVE, WIN, BudgetExceeded, Search, verify
from bot.rules import VARIANTS, Position, get_variant, movegen

BANK = Path(prove.__file__).with_name("bank")
COMPILED = [v for v in sorted(VARIANTS) if prove.compiled_available(get_variant(v))]
pytestmark = pytest.mark.skipif(not COMPILED, reason="the compiled search does not run here (no numba)")

# Hand-picked: a flying king's capture with several landing squares (spanish), a king that must
# take a king before a man takes (italian precedence), a long capture by a man (triestina); and in
# each variant a quiet position whose search fills more than the compiled table's first 1,024 rows
# (so that the table's growth is tested whichever bank puzzles the sample picks as the bank grows).
EXTRA = {
    "spanish": ["W:WK32,27:B21,14,13,17", "W:W2,4,5,6,7,8,9,10,11,13:B16,18,19,20,22,25,27,29,31,32",
                "B:WK1,K30,10,19:BK8,K26,12,13,21", "B:W1,2,4,7,11,12,18,25:B13,20,23,24,29,31,32"],
    "italian": ["B:W15,16,17,18,19,21,25,26,31:B1,3,6,7,9,10", "B:WK3,K13,15,18,30:B9,23,25,K26",
                "W:WK14,18,19:B10,11,K15,22,23", "B:W19,20,21,23,24,25,26,27,29,31,32:B1,2,3,4,5,6,7,8,10,14,16"],
    "triestina": ["B:W17,21,26,30,32,35,40,45,48,49:B3,4,5,11,19,20,23,28,34,K42"],
}
WINDOWS = ((-INF, INF), (WIN - 1, WIN), (-MAN, MAN), (0, 1), (-WIN, -WIN + 1))


def _bank(variant: str, count: int, rng: random.Random) -> list[Position]:
    lines = [line for line in (BANK / f"{variant}.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    return [Position.from_fen(variant, json.loads(line)["fen"]) for line in rng.sample(lines, count)]


def _random_games(variant: str, count: int, rng: random.Random) -> list[Position]:
    """Positions of random games: late ones (kings), and ones with a capture of two or more pending."""
    out: list[Position] = []
    while len(out) < count:
        pos = Position.start(variant)
        for ply in range(200):
            legal = pos.legal_moves()
            if not legal:
                break
            if (ply > 40 and rng.random() < 0.05) or len(legal[0].captured) >= 2:
                out.append(pos)
            pos = pos.play(rng.choice(legal))
    return out[:count]


def _positions(variant: str) -> list[Position]:
    rng = random.Random(f"fastprove {variant}")
    extra = [Position.from_fen(variant, fen) for fen in EXTRA.get(variant, [])]
    return extra + _bank(variant, 4, rng) + _random_games(variant, 8, rng)


@pytest.mark.parametrize("variant", COMPILED)
def test_the_compiled_search_tries_the_moves_of_the_fast_generator_in_its_order(variant: str) -> None:
    v = get_variant(variant)
    lay = jit.layout(v)
    bufs, st = jit.material_buffers()
    settings = jit.material_settings(v, MAN, 200, NO_MOVE, INF)
    fast = movegen.fast(v)
    rng = random.Random(f"order {variant}")
    seen = 0
    for start in _positions(variant):
        pos = start
        for _ in range(20):
            expected = [tuple(lay.dense(x) for x in child) for _key, *child in fast.moves(*pos.sides(), pos.white)]
            if not expected:
                break
            um, uk, tm, tk = (lay.dense(x) for x in pos.sides())
            got = jit.material_moves(lay.g, lay.tabs, bufs, st, settings, um, uk, tm, tk, pos.white)
            assert [tuple(int(x) for x in row) for row in got] == expected, pos.fen()
            seen += 1
            pos = pos.play(rng.choice(pos.legal_moves()))
    assert seen > 100


@pytest.mark.parametrize("variant", COMPILED)
def test_the_compiled_search_gives_every_value_the_python_search_gives(variant: str) -> None:
    """One search object of each kind per position, asked in turn at rising depths and various
    windows, so the second and later calls also meet the bounds the first ones left."""
    grown = 0
    for pos in _positions(variant):
        python, compiled = Search(variant), prove.CompiledSearch(variant)
        for depth in (0, 1, 2, 3, 4, 6):
            for alpha, beta in WINDOWS if depth < 6 else WINDOWS[:1]:
                expected = python.score(pos, depth, alpha, beta)
                assert compiled.score(pos, depth, alpha, beta) == expected, (pos.fen(), depth, alpha, beta)
                assert compiled.nodes == python.nodes
        for move in pos.legal_moves()[:4]:
            assert compiled.after(pos, move, 2) == python.after(pos, move, 2), (pos.fen(), str(move))
        # The same bounds, entry for entry (the compiled table grew from 1,024 rows on the way).
        full = compiled.layout.full
        assert {(full(um), full(uk), full(tm), full(tk), white): bound
                for (um, uk, tm, tk, white), bound in jit.material_bounds(compiled.bounds).items()} == python.table
        grown = max(grown, len(python.table))
    assert grown > jit.BOUND_ROWS


@pytest.mark.parametrize("variant", COMPILED)
def test_the_budget_runs_out_at_the_same_node(variant: str) -> None:
    pos = _positions(variant)[-1]
    for budget in (1, 7, 150):
        python, compiled = Search(variant, budget), prove.CompiledSearch(variant, budget)
        outcomes: list[int | None] = []
        for search in (python, compiled):
            try:
                outcomes.append(search.score(pos, 6))
            except BudgetExceeded:
                outcomes.append(None)
        assert outcomes[0] == outcomes[1] and python.nodes == compiled.nodes


def _python_search(variant: object, budget: int | None = None) -> Search:
    return Search(variant, budget)  # type: ignore[arg-type]


@pytest.mark.parametrize("variant", COMPILED)
def test_prove_and_verify_give_the_same_results_with_either_search(variant: str,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The generator's and the check's answers, and the check's messages (which quote the scores)."""
    rng = random.Random(f"prove {variant}")
    lines = [json.loads(line) for line in (BANK / f"{variant}.jsonl").read_text(encoding="utf-8").splitlines()
             if line.strip()]
    puzzles = rng.sample(lines, 3)
    # A puzzle made wrong on purpose: its key's other moves are checked and the message quotes them.
    broken = {**puzzles[0], "solution": puzzles[0]["solution"][:1], "tree": {puzzles[0]["solution"][0]: {}}}
    positions = [Position.from_fen(variant, p["fen"]) for p in puzzles] + _random_games(variant, 3, rng)

    def results() -> list[object]:
        out: list[object] = [verify(p) for p in [*puzzles, broken]]
        for pos in positions:
            golpe = prove.prove(pos, 3)
            out.append(None if golpe is None else (golpe.tree, golpe.line))
            out.append(prove.wins_materially(pos, 5, budget=200))
        return out

    compiled = results()
    monkeypatch.setattr(prove, "material_search", _python_search)
    assert results() == compiled
    assert compiled[:3] == [[], [], []] and compiled[3]


@pytest.mark.parametrize("variant", COMPILED)
def test_after_the_hand_over_to_python_the_search_goes_on_with_the_same_values(variant: str) -> None:
    """What a buffer overflow does (never met in a game's position): the compiled search hands its
    bounds to the Python one and goes on in Python.  It must still search (it once called a numpy
    array where the Python search calls its move counter) and give the Python search's values."""
    for pos in _positions(variant)[:6]:
        python, compiled = Search(variant), prove.CompiledSearch(variant)
        for depth in (0, 1, 2):
            assert compiled.score(pos, depth) == python.score(pos, depth), (pos.fen(), depth)
        compiled._to_python()
        assert compiled.fallback
        for depth in (0, 1, 2, 3, 4):
            for alpha, beta in WINDOWS:
                assert compiled.score(pos, depth, alpha, beta) == python.score(pos, depth, alpha, beta), (
                    pos.fen(), depth, alpha, beta)
