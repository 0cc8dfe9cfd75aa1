"""`python -m bot puzzles generate|export|check`."""

from __future__ import annotations

import argparse
import itertools
import random
import sys
import time
from pathlib import Path

from bot.rules import VARIANTS, Position

from . import bank
from .generate import find, from_pdn, from_selfplay

# The 2005 Italian championship, kept with the tests; used when generating from a checkout.
CHAMPIONSHIP = Path(__file__).resolve().parents[2] / "tests" / "data" / "italian_championship_2005.pdn"


def add_commands(sub: argparse._SubParsersAction) -> None:
    """The `puzzles` command and its sub-commands."""
    puzzles = sub.add_parser("puzzles", help="the puzzle bank: generate, export, check")
    actions = puzzles.add_subparsers(dest="action", required=True)
    gen = actions.add_parser("generate", help="find and prove new puzzles, added to the bank")
    gen.add_argument("--variant", required=True, choices=sorted(VARIANTS))
    gen.add_argument("--count", type=int, default=10)
    gen.add_argument("--seed", type=int, default=None, help="random seed of the engine games")
    gen.add_argument("--pdn", default=None, help="a PDN file whose positions are tried first")
    gen.set_defaults(func=generate)
    exp = actions.add_parser("export", help="print the bank as JSON lines")
    exp.add_argument("--variant", required=True, choices=sorted(VARIANTS))
    exp.set_defaults(func=export)
    chk = actions.add_parser("check", help="re-prove every puzzle of the bank")
    chk.add_argument("--variant", choices=sorted(VARIANTS), default=None, help="one variant (default: all)")
    chk.set_defaults(func=check)


_last_draw = [0.0]


def _bar(done: int, total: int, examined: int, started: float) -> None:
    now = time.monotonic()
    if now - _last_draw[0] < 0.25 and done < total:
        return
    _last_draw[0] = now
    width = 30
    filled = width * min(done, total) // max(total, 1)
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} puzzles, "
                     f"{examined} positions, {now - started:.0f} s")
    sys.stderr.flush()


def generate(args: argparse.Namespace) -> int:
    """Find ``--count`` new proven puzzles and add them to the bank."""
    if args.count < 1:
        print("error: --count must be at least 1", file=sys.stderr)
        return 2
    existing = bank.load(args.variant)
    seen = {(args.variant, Position.from_fen(args.variant, p["fen"]).key) for p in existing}
    rng = random.Random(args.seed)
    sources = []
    pdn = Path(args.pdn) if args.pdn else (CHAMPIONSHIP if args.variant == "italian" else None)
    if pdn is not None and pdn.exists():
        sources.append(from_pdn(pdn, args.variant))
    sources.append(from_selfplay(args.variant, 10**9, rng))
    started = time.monotonic()
    found = find(itertools.chain(*sources), args.count, seen,
                 progress=lambda done, examined: _bar(done, args.count, examined, started))
    sys.stderr.write("\n")
    bank.save(args.variant, existing + found)
    print(f"{len(found)} new {args.variant} puzzles; the bank has {len(existing) + len(found)}")
    return 0


def export(args: argparse.Namespace) -> int:
    """Print the bank as JSON lines {id, variant, fen, solution, tags, rating}."""
    for puzzle in bank.load(args.variant):
        print(bank.export_line(puzzle))
    return 0


def check(args: argparse.Namespace) -> int:
    """Re-prove the bank; exit 1 when any puzzle fails."""
    failures = 0
    for variant in [args.variant] if args.variant else sorted(VARIANTS):
        puzzles = bank.load(variant)
        for puzzle in puzzles:
            problem = bank.reprove(puzzle)
            if problem:
                failures += 1
                print(f"{puzzle['id']}: {problem}")
        print(f"{variant}: {len(puzzles)} puzzles checked")
    print("all proven" if not failures else f"{failures} puzzles failed")
    return 1 if failures else 0
