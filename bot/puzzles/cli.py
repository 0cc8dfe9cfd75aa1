"""`python -m bot puzzles generate|export|check|retag|from-games`."""

from __future__ import annotations

import argparse
import itertools
import multiprocessing
import random
import sys
import time
from pathlib import Path

from bot.rules import VARIANTS, Position

from . import bank
from .generate import LONG_MOVES, Lengthen, find, from_fens, from_pdn, from_selfplay
from .generate import retag as retag_puzzle
from .prove import verify

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
    gen.add_argument("--fens", default=None,
                     help="a JSON-lines file of positions ({fen, tags.source}, e.g. an old bank) tried next")
    gen.add_argument("--fens-label", default="earlier bank", help="what the sources of --fens positions start with")
    gen.add_argument("--first-game", type=int, default=1, help="number of the first engine game (to resume)")
    gen.add_argument("--long", action="store_true",
                     help=f"only puzzles of {LONG_MOVES} solver moves or more: the bank's puzzles lengthened back "
                          "two plies, then games' positions before each puzzle found")
    gen.add_argument("--per-puzzle", type=int, default=None,
                     help="with --long: at most this many long puzzles built back from one bank puzzle (default 1)")
    gen.set_defaults(func=generate)
    exp = actions.add_parser("export", help="print the bank as JSON lines")
    exp.add_argument("--variant", required=True, choices=sorted(VARIANTS))
    exp.set_defaults(func=export)
    chk = actions.add_parser("check", help="re-prove every puzzle of the bank")
    chk.add_argument("--variant", choices=sorted(VARIANTS), default=None, help="one variant (default: all)")
    chk.add_argument("--jobs", type=int, default=2, help="processes proving in parallel")
    chk.add_argument("--prune", action="store_true", help="remove the puzzles that fail from the bank")
    chk.set_defaults(func=check)
    ret = actions.add_parser("retag", help="recompute every puzzle's tags and starting rating from its line")
    ret.add_argument("--variant", choices=sorted(VARIANTS), default=None, help="one variant (default: all)")
    ret.set_defaults(func=retag)
    games = actions.add_parser("from-games", help="the proven puzzles of a PDN file's games (golpes missed or allowed)")
    games.add_argument("--pdn", required=True, help="the PDN file")
    games.add_argument("--json", action="store_true", help="one JSON object a line")
    games.add_argument("--variant", choices=sorted(VARIANTS), default="italian",
                       help="the variant of games without a GameType tag (default: italian)")
    games.set_defaults(func=from_games)


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
    """Find ``--count`` new proven puzzles and add them to the bank, saving after each one (so a
    generation stopped at any time keeps what it found, and a new run goes on from there)."""
    if args.count < 1:
        print("error: --count must be at least 1", file=sys.stderr)
        return 2
    if args.per_puzzle is not None and not args.long:
        print("error: --per-puzzle goes with --long", file=sys.stderr)
        return 2
    if args.per_puzzle is None:
        args.per_puzzle = 1
    if args.per_puzzle < 1:
        print("error: --per-puzzle must be at least 1", file=sys.stderr)
        return 2
    existing = bank.load(args.variant)
    seen = {(args.variant, Position.from_fen(args.variant, p["fen"]).key) for p in existing}
    rng = random.Random(args.seed)
    sources: list = []
    lengthen = Lengthen(existing, per_puzzle=args.per_puzzle) if args.long else None
    if lengthen is not None:
        sources.append(lengthen)
    pdn = Path(args.pdn) if args.pdn else (CHAMPIONSHIP if args.variant == "italian" else None)
    if pdn is not None and pdn.exists():
        sources.append(from_pdn(pdn, args.variant))
    if args.fens:
        sources.append(from_fens(Path(args.fens), args.variant, args.fens_label))
    sources.append(from_selfplay(args.variant, 10**9, rng, first=args.first_game))
    started = time.monotonic()
    kept = list(existing)

    def found_one(puzzle: dict) -> None:
        kept.append(puzzle)
        bank.add(args.variant, puzzle)

    found = find(itertools.chain(*sources), args.count, seen,
                 progress=lambda done, examined: _bar(done, args.count, examined, started), on_found=found_one,
                 min_moves=LONG_MOVES if args.long else 2, earlier=args.long,
                 on_proven=lengthen.offer if lengthen is not None else None)
    sys.stderr.write("\n")
    long = f" of {LONG_MOVES} solver moves or more" if args.long else ""
    print(f"{len(found)} new {args.variant} puzzles{long}; the bank has {len(existing) + len(found)}")
    return 0


def export(args: argparse.Namespace) -> int:
    """Print the bank as JSON lines {id, variant, fen, solution, tags, rating}."""
    for puzzle in bank.load(args.variant):
        print(bank.export_line(puzzle))
    return 0


def _problems(puzzle: dict) -> tuple[str, list[str]]:
    return puzzle["id"], verify(puzzle)


def check(args: argparse.Namespace) -> int:
    """Re-prove the bank to the standard of ``prove.verify``; exit 1 when any puzzle fails
    (``--prune``: remove those from the bank instead)."""
    failures = 0
    started = time.monotonic()
    with multiprocessing.get_context("spawn").Pool(max(args.jobs, 1)) as pool:
        for variant in [args.variant] if args.variant else sorted(VARIANTS):
            puzzles = bank.load(variant)
            failed = set()
            for pid, problems in pool.imap(_problems, puzzles, chunksize=4):
                if problems:
                    failed.add(pid)
                    more = f" (+{len(problems) - 3})" if len(problems) > 3 else ""
                    print(f"{pid}: {'; '.join(problems[:3])}{more}")
            if args.prune and failed:
                bank.save(variant, [p for p in puzzles if p["id"] not in failed])
                print(f"{variant}: {len(failed)} removed, {len(puzzles) - len(failed)} kept")
            else:
                failures += len(failed)
            print(f"{variant}: {len(puzzles)} puzzles checked")
    print(f"{time.monotonic() - started:.1f} s")
    print("all proven" if not failures else f"{failures} puzzles failed")
    return 1 if failures else 0


def retag(args: argparse.Namespace) -> int:
    """Recompute the tags (keeping each puzzle's source) and starting ratings of the bank from
    each main line (``generate.retag``) and save the banks that changed; running it again changes
    nothing."""
    for variant in [args.variant] if args.variant else sorted(VARIANTS):
        changed, total = bank.rewrite(variant, retag_puzzle)
        print(f"{variant}: {changed} of {total} puzzles retagged")
    return 0


def from_games(args: argparse.Namespace) -> int:
    """Print the proven puzzles of every game of ``--pdn`` (``from_games.scan_game``), one a line;
    exit 2 with one message on stderr when the file cannot be read or a game cannot be replayed."""
    import json

    from bot.rules import read_pdn

    from .from_games import scan_game

    try:
        games = read_pdn(Path(args.pdn).read_text(encoding="utf-8"), args.variant)
    except (OSError, UnicodeDecodeError) as err:
        print(f"error: cannot read {args.pdn}: {getattr(err, 'strerror', None) or err}", file=sys.stderr)
        return 2
    except ValueError as err:
        print(f"error: {args.pdn}: {err}", file=sys.stderr)
        return 2
    if not games:
        print(f"error: {args.pdn}: no game in the file", file=sys.stderr)
        return 2
    for number, game in enumerate(games, start=1):
        white, black = game.tags.get("White", "?"), game.tags.get("Black", "?")
        for found in scan_game(game.variant.id, game.start_fen, game.moves,
                               source=f"{white} - {black} (game {number})"):
            p = found.puzzle
            if args.json:
                print(json.dumps({"game": number, "white": white, "black": black, "ply": found.ply,
                                  "move_number": found.move_number, "side": found.side, "kind": found.kind,
                                  "id": p["id"], "variant": p["variant"], "fen": p["fen"],
                                  "solution": p["solution"], "tree": p["tree"], "tags": p["tags"],
                                  "rating": p["rating"]}, ensure_ascii=False, separators=(",", ":")))
            else:
                print(f"game {number} ({white} - {black}) move {found.move_number} {found.side} {found.kind}: "
                      f"{p['fen']} {' '.join(p['solution'])}")
    return 0
