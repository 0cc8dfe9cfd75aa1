"""Tuned weights against the starting weights: does the fit help?  Prints, asserts nothing.

Run from the repository root::

    python bench/ai_weights.py --openings 6 --depth 4

Both sides search to the same fixed depth (no clock, so the machine's load does
not matter), one with ``bot/ai/weights.py`` (fitted by ``bot/ai/tune.py``) and one
with ``bot.ai.tune.STARTING_WEIGHTS``.  Each opening (four seeded random plies)
is played twice with colours swapped; games end by the rules or after 200 plies
(a draw).  Prints the tuned side's score per variant.
"""

from __future__ import annotations

import argparse
import random
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.ai import search_position  # noqa: E402
from bot.ai.evaluation import Evaluator  # noqa: E402
from bot.ai.tune import STARTING_WEIGHTS  # noqa: E402
from bot.ai.weights import WEIGHTS  # noqa: E402
from bot.rules import Game  # noqa: E402


def play(task: tuple[str, int, bool, int]) -> tuple[str, float]:
    variant, seed, tuned_white, depth = task
    evs = {True: Evaluator(variant, WEIGHTS[variant]), False: Evaluator(variant, STARTING_WEIGHTS[variant])}
    rng = random.Random(seed)
    game = Game(variant)
    for _ in range(4):
        game.play(rng.choice(game.position.legal_moves()))
    fens = [p.fen() for p in game.positions]
    while game.result is None and len(game.moves) < 200:
        tuned = game.position.white == tuned_white
        result = search_position(game.position, depth, 60.0, history=fens, ev=evs[tuned], rng=rng)
        game.play(result.move)
        fens.append(game.position.fen())
    winner = game.result.winner if game.result else None
    if winner is None:
        return variant, 0.5
    return variant, 1.0 if (winner == "W") == tuned_white else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variants", default="spanish,italian,triestina")
    parser.add_argument("--openings", type=int, default=6)
    parser.add_argument("--depth", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    tasks = [(v, 500 + i, tuned_white, args.depth)
             for v in args.variants.split(",") for i in range(args.openings) for tuned_white in (True, False)]
    scores: dict[str, list[float]] = {}
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        for variant, score in pool.map(play, tasks):
            scores.setdefault(variant, []).append(score)
    for variant, s in scores.items():
        print(f"{variant:9} tuned vs starting weights, depth {args.depth}: "
              f"{sum(s)}/{len(s)} = {100 * sum(s) / len(s):.0f}%")


if __name__ == "__main__":
    main()
