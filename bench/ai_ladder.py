"""The levels' ladder: each level against the scripted material players and the level below.

Prints the calibration table and whether each step of the ladder holds; asserts nothing.  Run
from the repository root::

    python bench/ai_ladder.py                          # levels 1-5, 20 games a cell, 2 workers
    python bench/ai_ladder.py --levels 1-4 --openings 20 --workers 1

The scripted players are those of bench/ai_match.py: ``mat1``, ``mat2`` and ``mat3`` count
material one, two and three plies ahead (random among ties).  For every level and variant
the table has the score of each of them against the level, and the level's score against the
level below (win 1, draw 1/2).  Each opening (four random plies, seeded) is played twice, each
side taking each colour once, so a cell has ``2 * --openings`` games.

The ladder (project issue 28): each level is a step a learning player can climb, not a cliff.
A player that scores well against level N-1 gets some points against level N, which still
clearly beats level N-1:

* ``mat1`` scores at least 0.5 against level 1 and ``mat2`` at least 0.5 against level 2;
* ``mat2`` scores at least 0.15 against level 3, which scores at least 0.6 against level 2;
* ``mat3`` scores at least 0.15 against level 4, which scores at least 0.6 against level 3.

Levels 1-4 are depth-capped and answer well inside their time, so the result does not depend
on the machine's load; level 5 searches for ``--l5-seconds`` (default 0.1 s, a twentieth of
its own 2 s, to keep the table to minutes: it only plays weaker than it would).
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ai_match import game_tasks, parse_variants, play_one  # noqa: E402

SCRIPTED = ("mat1", "mat2", "mat3")

# (player, opponent): the least score the player must reach.
TARGETS: dict[tuple[str, str], float] = {
    ("mat1", "l1"): 0.5,
    ("mat2", "l2"): 0.5,
    ("mat2", "l3"): 0.15,
    ("l3", "l2"): 0.6,
    ("mat3", "l4"): 0.15,
    ("l4", "l3"): 0.6,
}


def cells(levels: list[int]) -> list[tuple[str, str]]:
    """The table's pairings, (measured player, opponent), level by level."""
    out = []
    for n in levels:
        out += [(s, f"l{n}") for s in SCRIPTED]
        if n > 1:
            out.append((f"l{n}", f"l{n - 1}"))
    return out


def parse_levels(text: str) -> list[int]:
    if "-" in text:
        low, high = (int(x) for x in text.split("-"))
        return list(range(low, high + 1))
    return [int(x) for x in text.split(",") if x]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variants", default="spanish,italian,triestina")
    parser.add_argument("--levels", default="1-5", help="levels measured: 1-5, or a list such as 3,4")
    parser.add_argument("--openings", type=int, default=10, help="openings a cell (2 games each)")
    parser.add_argument("--max-plies", type=int, default=600)
    parser.add_argument("--l5-seconds", type=float, default=0.1, help="level 5's time per move")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    variants = parse_variants(args.variants)
    levels = parse_levels(args.levels)
    if not levels or any(n not in range(1, 6) for n in levels):
        raise SystemExit("levels must be within 1-5")
    pairings = cells(levels)
    tasks = game_tasks(pairings, variants, args.openings, args.seed, args.max_plies, 1.0, args.l5_seconds)
    print(f"{len(tasks)} games ({2 * args.openings} a cell), {args.workers} workers, "
          f"level 5 at {args.l5_seconds}s a move", flush=True)
    started = time.perf_counter()
    # (variant, player, opponent) -> [won, drawn, lost]
    table: dict[tuple[str, str, str], list[int]] = {}
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        for done, (variant, white, black, winner, _plies, _stats) in enumerate(pool.map(play_one, tasks), 1):
            for player, other, color in ((white, black, "W"), (black, white, "B")):
                row = table.setdefault((variant, player, other), [0, 0, 0])
                row[0 if winner == color else 2 if winner else 1] += 1
            if done % 100 == 0:
                print(f"  {done}/{len(tasks)} games, {time.perf_counter() - started:.0f}s", flush=True)

    def score(variant: str, a: str, b: str) -> tuple[str, float | None]:
        w, d, lost = table.get((variant, a, b), [0, 0, 0])
        n = w + d + lost
        if not n:
            return "", None
        s = (w + d / 2) / n
        return f"{s:.2f} (+{w}={d}-{lost})", s

    print(f"\nscores ({time.perf_counter() - started:.0f}s): the column's player against the level, "
          "and the level against the one below")
    header = f"{'variant':10}{'level':6}" + "".join(f"{s + ' vs lN':>18}" for s in SCRIPTED) + f"{'lN vs lN-1':>18}"
    misses = []
    for variant in variants:
        print("\n" + header)
        for n in levels:
            line = f"{variant:10}{n:<6}"
            for a, b in [(s, f"l{n}") for s in SCRIPTED] + [(f"l{n}", f"l{n - 1}")]:
                text, s = score(variant, a, b)
                target = TARGETS.get((a, b))
                mark = ""
                if target is not None and s is not None:
                    mark = "" if s >= target else "!"
                    if s < target:
                        misses.append(f"{variant} {a} vs {b}: {s:.2f} < {target}")
                line += f"{text + mark:>18}"
            print(line)
    print("\ntargets: " + ", ".join(f"{a} vs {b} >= {t}" for (a, b), t in TARGETS.items()))
    print("all targets met" if not misses else "missed (!): " + "; ".join(misses))


if __name__ == "__main__":
    main()
