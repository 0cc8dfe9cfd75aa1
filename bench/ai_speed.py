"""Engine search speed: nodes per second and depth finished in a fixed time.

Run from the repository root::

    python bench/ai_speed.py              # 2 s per position
    python bench/ai_speed.py --seconds 1

For each variant, from the start position and from a middlegame (the first seeded
random playout of 24 plies that ends level, with a choice of moves), runs ``bot.ai.search_position`` with no depth cap
for ``--seconds`` and prints the depth finished, nodes, nodes per second and the
deepest ply reached (captures and threats go past the nominal depth).  The
machine is shared with other work, so the numbers are noisy.

Then, in the same run, py-draughts 1.10.1's ``TurboEngine`` (international rules, 10x10; installed
in ``bench/.venvs/py-draughts`` as ``bench/perft.py`` does) searches the international start and a
seeded middlegame for the same time, and the ratio of our Triestina (10x10) nodes per second to its
nodes per second is printed (issue 22's target: >= 1.5x).  ``--no-turbo`` skips it.

``search_position`` uses the compiled search (bot/ai/jit.py, docs/engine.md) unless
``DRAUGHTS_JIT=off``; run both ways to compare it with its Python definition.  Loading the compiled
code happens before a search's clock starts, so it is not in these numbers.

Measured on 2026-12-04 (2 shared cores, 2 s a position, nothing else running; single runs):

* Python search (``DRAUGHTS_JIT=off``): Triestina 171 k nodes/s from the start (depth 9), 151 k in
  the middlegame (depth 8); TurboEngine 170 k and 178 k: ratios 1.01x and 0.85x.
* Compiled search, after the matches, the machine quiet: Triestina 1,911 k nodes/s from the start
  (depth 13) and 2,020 k in the middlegame (depth 11); Spanish 1,824 k and 1,686 k (depth 13 and 14);
  Italian 1,919 k and 1,937 k (depth 14 and 14; the Italian middlegame has 12 pieces, so it searches
  with the endgame tables, compiled too).  TurboEngine in the same run 170 k and 177 k: ratios
  11.3x and 11.4x.  (An earlier run, before the compiled table probe: 10.8x and 15.2x.)
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.ai import search_position  # noqa: E402
from bot.rules import VARIANTS, Position  # noqa: E402

TURBO_SNIPPET = r"""
import json, random, sys, time
from draughts import Board
from draughts.engines import TurboEngine
seconds = float(sys.argv[1])
out = []
for name, plies in (("start", 0), ("middlegame", 24)):
    board = Board()
    rng = random.Random(0)
    for _ in range(plies):
        board.push(rng.choice(list(board.legal_moves)))
    engine = TurboEngine(depth_limit=64, time_limit=seconds)
    started = time.perf_counter()
    engine.get_best_move(board)
    took = time.perf_counter() - started
    out.append({"position": name, "nodes": engine.nodes, "depth": engine.completed_depth, "seconds": took})
print(json.dumps(out))
"""


def turbo(seconds: float) -> list[dict]:
    """TurboEngine's nodes and depth in ``seconds`` on the international start and a middlegame."""
    import json
    import subprocess

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from perft import VENVS_DIR, ensure_venv

    python = ensure_venv("py-draughts")
    res = subprocess.run([str(python), "-I", "-c", TURBO_SNIPPET, str(seconds)], capture_output=True, text=True,
                         cwd=str(VENVS_DIR), check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def middlegame(variant: str, plies: int = 24) -> Position:
    """The first seeded playout that ends level (same men each side, no kings) with a choice."""
    for seed in range(1000):
        rng = random.Random(seed)
        pos = Position.start(variant)
        for _ in range(plies):
            moves = pos.legal_moves()
            if not moves:
                break
            pos = pos.play(rng.choice(moves))
        moves = pos.legal_moves()
        if (len(moves) >= 5 and not moves[0].captured and not (pos.wk or pos.bk)
                and pos.wm.bit_count() == pos.bm.bit_count()):
            return pos
    raise RuntimeError("no level middlegame found")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--no-turbo", action="store_true", help="skip the py-draughts TurboEngine comparison")
    args = parser.parse_args()
    print(f"{'variant':10} {'position':11} {'depth':>5} {'nodes':>9} {'nodes/s':>9} {'time':>6}  move")
    ours: dict[tuple[str, str], tuple[float, int]] = {}
    for variant in sorted(VARIANTS):
        for name, pos in (("start", Position.start(variant)), ("middlegame", middlegame(variant))):
            r = search_position(pos, 64, args.seconds)
            ours[(variant, name)] = (r.nodes / r.seconds, r.depth)
            print(f"{variant:10} {name:11} {r.depth:5} {r.nodes:9} {r.nodes / r.seconds:9,.0f} "
                  f"{r.seconds:5.2f}s  {r.move}  ({pos.fen()})")
    if args.no_turbo:
        return
    print()
    for row in turbo(args.seconds):
        rate = row["nodes"] / row["seconds"]
        mine, depth = ours[("triestina", row["position"])]
        print(f"TurboEngine international {row['position']:11} depth {row['depth']:3} {rate:9,.0f} nodes/s   "
              f"ours (triestina) {mine:9,.0f} nodes/s depth {depth}   ratio {mine / rate:.2f}x (target >= 1.5x)")


if __name__ == "__main__":
    main()
