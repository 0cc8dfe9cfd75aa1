"""The engine answers with a legal move on positions from real games and random
playouts, and answers in time even where flying kings have dozens of moves."""

import pickle
import random
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from ai_helpers import playout_positions

from bot.ai import choose_move, search_position
from bot.rules import Position, read_pdn
from bot.rules.variants import registered

ROOT = Path(__file__).resolve().parents[2]


def championship_positions(every: int) -> list[Position]:
    text = (ROOT / "tests/data/italian_championship_2005.pdn").read_text(encoding="utf-8")
    out = []
    for game in read_pdn(text):
        out.extend(p for p in game.positions[::every] if p.legal_moves())
    return out


def test_legal_moves_on_championship_positions():
    # Every position of the 53 games (thousands), each searched two plies deep plus captures.
    positions = championship_positions(every=1)
    assert len(positions) >= 3000
    for pos in positions:
        result = search_position(pos, max_depth=2, seconds=1.0)
        assert pos.is_legal(result.move), pos.fen()


@pytest.mark.parametrize("variant", [v.id for v in registered()])
def test_legal_moves_on_random_playouts(variant):
    positions = playout_positions(variant, 60, seed=5)
    assert any(p.wk or p.bk for p in positions)
    for pos in positions:
        result = search_position(pos, max_depth=3, seconds=1.0)
        assert pos.is_legal(result.move), pos.fen()
        # The whole principal variation is a legal line.
        p = pos
        for move in result.pv:
            p = p.play(move)


def king_heavy_spanish(count: int, seed: int) -> list[Position]:
    """Spanish positions with several flying kings a side and at least 20 moves."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        squares = rng.sample(range(1, 33), 10)
        kings = rng.randint(3, 5)
        white = ",".join(f"K{s}" for s in squares[:kings])
        black = ",".join(f"K{s}" for s in squares[5:5 + kings])
        men = [s for s in squares[kings:5] if 5 <= s <= 28]
        if men:
            white += "," + ",".join(map(str, men))
        pos = Position.from_fen("spanish", f"W:W{white}:B{black}")
        if len(pos.legal_moves()) >= 20:
            out.append(pos)
    return out


@pytest.mark.parametrize("limit", [0.2, 0.6])
def test_answers_within_the_time_on_king_heavy_spanish_positions(limit, work_clock):
    for pos in king_heavy_spanish(3, seed=int(limit * 10)):
        started = work_clock.perf_counter()
        result = choose_move("spanish", pos.fen(), level=5, time_limit=limit)
        elapsed = work_clock.perf_counter() - started
        assert 0 < elapsed < limit * 1.5 + 0.3, (pos.fen(), elapsed)
        assert pos.is_legal(result.move)


def test_long_flying_king_captures_answer_in_time(work_clock):
    # Two white kings among scattered black men: long capture chains at every node.
    fen = "W:WK1,K32:B6,7,10,11,14,15,18,19,22,23,26,27"
    started = work_clock.perf_counter()
    result = choose_move("spanish", fen, level=5, time_limit=0.3)
    assert 0 < work_clock.perf_counter() - started < 0.3 * 1.5 + 0.3
    assert Position.from_fen("spanish", fen).is_legal(result.move)


def test_inputs_and_results_pickle_for_a_process_pool():
    fen = Position.start("italian").fen()
    with ProcessPoolExecutor(max_workers=1) as pool:
        result = pool.submit(choose_move, "italian", fen, 2, 0.3, None, 1).result(timeout=30)
    assert Position.start("italian").is_legal(result.move)
    assert pickle.loads(pickle.dumps(result)) == result
