"""Engine search speed: nodes per second and depth finished in a fixed time.

Run from the repository root::

    python bench/ai_speed.py              # 2 s per position
    python bench/ai_speed.py --seconds 1

For each variant, from the start position and from a middlegame (the first seeded
random playout of 24 plies that ends level, with a choice of moves), runs ``bot.ai.search_position`` with no depth cap
for ``--seconds`` and prints the depth finished, nodes, nodes per second and the
deepest ply reached (captures and threats go past the nominal depth).  The
machine is shared with other work, so the numbers are noisy.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.ai import search_position  # noqa: E402
from bot.rules import VARIANTS, Position  # noqa: E402


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
    args = parser.parse_args()
    print(f"{'variant':10} {'position':11} {'depth':>5} {'nodes':>9} {'nodes/s':>9} {'time':>6}  move")
    for variant in sorted(VARIANTS):
        for name, pos in (("start", Position.start(variant)), ("middlegame", middlegame(variant))):
            r = search_position(pos, 64, args.seconds)
            print(f"{variant:10} {name:11} {r.depth:5} {r.nodes:9} {r.nodes / r.seconds:9,.0f} "
                  f"{r.seconds:5.2f}s  {r.move}  ({pos.fen()})")


if __name__ == "__main__":
    main()
