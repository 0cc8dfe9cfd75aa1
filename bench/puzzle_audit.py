"""The bank against issue 17's standard, criterion by criterion, per variant.

Usage: python bench/puzzle_audit.py [--jobs 2] [--variant spanish] [--dir OLD_BANK_DIR]
Prints, per variant, how many puzzles show each finding: first (another first move wins or comes
within the margin), later (the same at a later turn of the main line, or the tree accepts two
answers there), end (the line leaves the solver under two men ahead), branch (a defence's branch
ends so), defence (a defence missing from the tree), tags (the tags are not the line's),
level_or_worse / two_behind (the material after the main line), false_sacrifice (tagged a
sacrifice, none in the line), real_game (from a game between people), PASSES; then the seconds."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from multiprocessing import Pool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.puzzles import bank  # noqa: E402
from bot.puzzles.prove import centi_balance, line_tags, verify  # noqa: E402
from bot.rules import Position  # noqa: E402


def audit(puzzle: dict) -> set[str]:
    problems = verify(puzzle)
    found = {p[1:p.index("]")] for p in problems if p.startswith("[")}
    start = Position.from_fen(puzzle["variant"], puzzle["fen"])
    pos = start
    for text in puzzle["solution"]:
        pos = pos.play(pos.parse_move(text))
    lead = centi_balance(pos, start.turn)
    if lead <= 0:
        found.add("level_or_worse")
    if lead <= -200:
        found.add("two_behind")
    if puzzle["tags"].get("sacrifices", 0) > 0 and line_tags(puzzle["variant"], puzzle["fen"],
                                                            puzzle["solution"])["sacrifices"] == 0:
        found.add("false_sacrifice")
    if " - " in puzzle["tags"].get("source", ""):
        found.add("real_game")
    if not problems:
        found.add("PASSES")
    return found


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--variant", default=None)
    parser.add_argument("--dir", default=None, help="a directory of <variant>.jsonl banks (default: the shipped one)")
    args = parser.parse_args()
    started = time.monotonic()
    with Pool(args.jobs) as pool:
        for variant in [args.variant] if args.variant else ["spanish", "italian", "triestina"]:
            if args.dir:
                path = Path(args.dir) / f"{variant}.jsonl"
                puzzles = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
            else:
                puzzles = bank.load(variant)
            counts: Counter[str] = Counter()
            for found in pool.imap(audit, puzzles, chunksize=4):
                counts.update(found)
            print(variant, len(puzzles), dict(sorted(counts.items())), flush=True)
    print(f"{time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
