"""``python -m bot ai egtb build|probe|info``: make, read and list the endgame tables."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import TextIO

from bot.rules import VARIANTS, Position, get_variant

from . import forget, store, tables
from .solve import materials, size_of, solve

MAX_PIECES = 5


class Bar:
    """A progress bar on a terminal, a line every ten per cent elsewhere (logs, pipes)."""

    def __init__(self, label: str, out: TextIO) -> None:
        self.label = label
        self.out = out
        self.tty = out.isatty()
        self.started = time.monotonic()
        self.shown = -1

    def __call__(self, done: int, total: int) -> None:
        share = done / total if total else 1.0
        step = int(share * (100 if self.tty else 10))
        if step == self.shown:
            return
        self.shown = step
        took = time.monotonic() - self.started
        if self.tty:
            filled = int(share * 30)
            self.out.write(f"\r{self.label} [{'#' * filled}{'.' * (30 - filled)}] {share:4.0%} {took:5.0f} s")
        else:
            self.out.write(f"{self.label} {share:4.0%} {took:.0f} s\n")
        self.out.flush()

    def end(self) -> None:
        if self.tty:
            self.out.write("\n")
            self.out.flush()


def build(args: argparse.Namespace) -> int:
    """Solve the tables of each variant asked for and write them, one file per variant."""
    out_dir = Path(args.out) if args.out else store.user_dir()
    if not 2 <= args.pieces <= MAX_PIECES:
        print(f"error: --pieces must be 2-{MAX_PIECES}", file=sys.stderr)
        return 2
    jobs = args.jobs or (os.cpu_count() or 1)
    for vid in args.variant or sorted(VARIANTS):
        v = get_variant(vid)
        total = sum(size_of(v, m) for m in materials(args.pieces))
        path = out_dir / store.file_name(v, args.pieces)
        print(f"{v.id}: {len(materials(args.pieces))} materials up to {args.pieces} pieces, "
              f"{total:,} positions -> {path}", flush=True)
        started = time.monotonic()
        bar = Bar(v.id, sys.stderr)
        solved = solve(v, args.pieces, progress=bar, jobs=jobs)
        bar.end()
        took = time.monotonic() - started
        size = store.save(path, v, args.pieces, solved)
        longest = max((max(t) - 1 for t in solved.values() if max(t)), default=0)
        wins = sum(len(t) - t.count(0) for t in solved.values())
        print(f"{v.id}: solved in {took:.0f} s, {size:,} bytes compressed; {wins:,} positions decided, "
              f"the longest ends in {longest} plies (the no-progress rule draws after {v.no_progress_plies} "
              f"plies without a capture or a man move)", flush=True)
        forget(v)
    return 0


def probe(args: argparse.Namespace) -> int:
    """What the tables say of a position, and of each legal move."""
    try:
        pos = Position.from_fen(args.variant, args.fen)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    tb = tables(pos.variant)
    if tb is None:
        print(f"error: no tables for {pos.variant.id}; build them with `python -m bot ai egtb build`",
              file=sys.stderr)
        return 1
    v = tb.verdict(pos)
    if v is None:
        print(f"error: the tables hold up to {tb.pieces} pieces, each side with one at least", file=sys.stderr)
        return 1
    print(f"{v.name}: {_words(v.result, v.plies)} for the side to move")
    for move, after in tb.best_moves(pos):
        print(f"  {move}: {_words(after.result, after.plies)}")
    return 0


def _words(result: str, plies: int) -> str:
    return "draw" if result == "draw" else f"{result} in {plies} plies"


def info(args: argparse.Namespace) -> int:
    """The tables each variant would use, and where they come from."""
    for vid in sorted(VARIANTS):
        v = get_variant(vid)
        found = store.find(v)
        tb = tables(v)
        if tb is None:
            print(f"{vid}: none")
        else:
            print(f"{vid}: up to {tb.pieces} pieces ({len(materials(tb.pieces))} materials) from {found[0]}")
    return 0


def add_commands(asub: argparse._SubParsersAction) -> None:
    egtb = asub.add_parser("egtb", help="endgame tables: build, probe, info")
    esub = egtb.add_subparsers(dest="egtb_command", required=True)
    b = esub.add_parser("build", help="solve the tables by retrograde analysis and write them")
    b.add_argument("--variant", action="append", choices=sorted(VARIANTS),
                   help="a variant (repeat for more; default: all)")
    b.add_argument("--pieces", type=int, default=4, help="most pieces on the board (default 4)")
    b.add_argument("--out", default=None, help="folder for the files (default: $DRAUGHTS_EGTB_DIR, "
                                               "else ~/.cache/draughts-bot/egtb)")
    b.add_argument("--jobs", type=int, default=0, help="processes (default: one per CPU)")
    b.set_defaults(func=build)
    p = esub.add_parser("probe", help="what the tables say of a position and each of its moves")
    p.add_argument("--variant", required=True, choices=sorted(VARIANTS))
    p.add_argument("--fen", required=True)
    p.set_defaults(func=probe)
    i = esub.add_parser("info", help="the tables found for each variant")
    i.set_defaults(func=info)
