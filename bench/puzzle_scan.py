"""The background scan of finished games for their golpes (``bot.puzzles.from_games.scan_game``):
what it costs, and how much it yields.

Run from the repository root::

    python bench/puzzle_scan.py                       # all three parts
    python bench/puzzle_scan.py --parts cost,parallel --games 3
    python bench/puzzle_scan.py --parts share --share 10

Three parts:

``cost``      the scan of a 60-ply game: the first 60 plies of ``--games`` games of the 2005 Italian
              championship (people) and of as many engine games (the bot's levels 1-3 against the
              scripted player mat2 of bench/ai_match.py, each variant in turn); CPU seconds and wall
              seconds of each (min, median, max), and the ratio to ``/analysis`` of the same game
              (``bot.ai.analyse_game`` with its node budgets), timed in the same run for the first
              game of each kind (an analysis takes many seconds).
``parallel``  the bot plays level-5 moves in one process while another scans those 60-ply games over
              and over (the worst case: a game finished every tenth of a second), as the service does
              on its engine workers, for ``--span`` seconds, ``--rounds`` times: the share of a core
              the scan takes (its CPU time over its wall time), and the bot's search speed (nodes a
              second) beside it as a ratio to its speed alone in the same round, and beside a plain
              busy loop (any second process on the machine) as the reference.
``share``     ``--share`` games per level (1, 2, 3) and variant of the bot against mat2, played to
              their end (a game still going at ``--max-plies`` is counted as finished there): how
              many yield at least one puzzle (and one of mat2's side: the service keeps people's
              puzzles only), the puzzles (missed / allowed), and each puzzle proven again to the
              bank's standard (``prove.verify``, what ``puzzles check`` runs).

Figures of a shared machine vary; the ratios are what compare.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from ai_match import mat2_move  # noqa: E402

from bot.ai import analyse_game, level_move, search_position  # noqa: E402
from bot.puzzles.from_games import ALLOWED, MISSED, scan_game  # noqa: E402
from bot.puzzles.prove import verify  # noqa: E402
from bot.rules import Game, read_pdn  # noqa: E402

PDN = ROOT / "tests" / "data" / "italian_championship_2005.pdn"
VARIANTS = ("italian", "spanish", "triestina")
PLIES = 60
BOT_SECONDS = 0.5


def engine_game(variant: str, level: int, seed: int, max_plies: int) -> Game:
    """The bot's ``level`` against mat2 (the bot White on even seeds), until the game ends or
    ``max_plies``."""
    rng = random.Random(seed)
    bot_white = seed % 2 == 0
    game = Game(variant)
    while game.result is None and len(game.moves) < max_plies:
        pos = game.position
        move = (level_move(pos, level, 0.3, None, rng).move if pos.white == bot_white
                else pos.parse_move(mat2_move(pos, rng)))
        game.play(move)
    return game


def first_plies(game: Game, plies: int) -> Game:
    short = Game(game.variant, game.start_fen, draw_rules=False)
    for move in game.moves[:plies]:
        short.play(move)
    return short


def sixty_ply_games(count: int) -> list[tuple[str, Game]]:
    """``count`` championship games and ``count`` engine games of at least 60 plies, cut there."""
    games = [(f"championship {i + 1}", first_plies(g, PLIES))
             for i, g in enumerate(g for g in read_pdn(PDN.read_text(encoding="utf-8")) if len(g.moves) >= PLIES)]
    out = games[:count]
    seed = 0
    while len(out) < 2 * count:
        seed += 1
        variant, level = VARIANTS[seed % 3], 1 + seed % 3
        game = engine_game(variant, level, seed, PLIES)
        if len(game.moves) == PLIES:
            out.append((f"{variant} level {level} v mat2 (seed {seed})", game))
    return out


def timed_scan(game: Game) -> tuple[float, float, int]:
    cpu, wall = time.process_time(), time.monotonic()
    found = scan_game(game.variant.id, game.start_fen, game.moves)
    return time.process_time() - cpu, time.monotonic() - wall, len(found)


def spread(values: list[float]) -> str:
    return f"min {min(values):.2f}  median {statistics.median(values):.2f}  max {max(values):.2f}"


def part_cost(games: list[tuple[str, Game]]) -> None:
    print(f"== cost: the scan of a {PLIES}-ply game")
    cpus, walls, ratios = [], [], []
    for i, (name, game) in enumerate(games):
        cpu, wall, found = timed_scan(game)
        cpus.append(cpu)
        walls.append(wall)
        line = f"  {name:44} scan {cpu:5.2f} CPU-s {wall:5.2f} s wall, {found} puzzles"
        if i % len(games) in (0, len(games) // 2):
            # /analysis of the game as the reference (one a kind of game: it takes many seconds).
            started = time.process_time()
            analyse_game(game)
            analysis = time.process_time() - started
            ratios.append(cpu / analysis)
            line += f"; /analysis {analysis:5.2f} CPU-s (scan/analysis {cpu / analysis:.3f})"
        print(line)
    print(f"  scan CPU-s   {spread(cpus)}")
    print(f"  scan wall s  {spread(walls)}")
    print(f"  scan / analysis of the same game (CPU)  {spread(ratios)}" if ratios else "")


# -- parallel: the bot's moves and the scan, each in a process of its own ----------------------


def bot_moves(seconds: float, stop_after: float) -> tuple[int, float]:
    """Level-5 searches of ``seconds`` each from varied positions until ``stop_after`` seconds have
    passed: (nodes, wall seconds)."""
    rng = random.Random(7)
    game = Game("italian")
    nodes, started = 0, time.monotonic()
    while time.monotonic() - started < stop_after:
        if game.result is not None or len(game.moves) > 80:
            game = Game("italian")
        result = search_position(game.position, 64, seconds, 0, rng=rng)
        nodes += result.nodes
        game.play(result.move)
    return nodes, time.monotonic() - started


def scan_for(games: list[tuple[str, str | None, list[str]]], stop_after: float) -> tuple[float, float, int]:
    """Scan the games over and over until ``stop_after`` seconds have passed: (CPU seconds, wall
    seconds, games scanned)."""
    cpu, wall = time.process_time(), time.monotonic()
    scanned = 0
    while scanned == 0 or time.monotonic() - wall < stop_after:
        variant, start_fen, moves = games[scanned % len(games)]
        scan_game(variant, start_fen, moves)
        scanned += 1
    return time.process_time() - cpu, time.monotonic() - wall, scanned


def warm(_: int) -> int:
    # The engine's compiled search loads in each new process; not part of what is measured.
    search_position(Game("italian").position, 64, 0.2, 0)
    return 0


def busy_for(stop_after: float) -> tuple[float, float, int]:
    """Any CPU-bound Python beside the bot, the reference for the scan: (CPU seconds, wall seconds, 0)."""
    cpu, wall = time.process_time(), time.monotonic()
    x = 0
    while time.monotonic() - wall < stop_after:
        for i in range(10_000):
            x ^= i * i
    return time.process_time() - cpu, time.monotonic() - wall, 0


def part_parallel(games: list[tuple[str, Game]], span: float, rounds: int) -> None:
    print(f"== parallel: the scan beside the bot's level-5 moves (two processes, {rounds} rounds of {span:.0f} s "
          f"each way; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
    plain = [(g.variant.id, g.start_fen, [str(m) for m in g.moves]) for _name, g in games]
    ctx = multiprocessing.get_context("spawn")
    alone_share, beside_share, per_game, with_scan, with_busy = [], [], [], [], []
    with ctx.Pool(2) as pool:
        pool.map(warm, [0, 1])
        for _round in range(rounds):
            cpu, wall, scanned = pool.apply(scan_for, (plain, span))
            alone_share.append(cpu / wall)
            per_game.append(cpu / scanned)
            nodes, wall = pool.apply(bot_moves, (BOT_SECONDS, span))
            alone = nodes / wall
            for other, ratios in ((scan_for, with_scan), (busy_for, with_busy)):
                bot = pool.apply_async(bot_moves, (BOT_SECONDS, span))
                args = (plain, span) if other is scan_for else (span,)
                beside = pool.apply_async(other, args)
                cpu, wall, _n = beside.get()
                nodes, bot_wall = bot.get()
                ratios.append(nodes / bot_wall / alone)
                if other is scan_for:
                    beside_share.append(cpu / wall)
    med = statistics.median
    print(f"  scan alone:        {med(alone_share):.2f} of a core, {med(per_game):.3f} CPU-s a {PLIES}-ply game")
    print(f"  scan beside bot:   {med(beside_share):.2f} of a core (scanning without a pause)")
    print(f"  bot's nodes/s beside the scan / alone:          {spread(with_scan)}")
    print(f"  bot's nodes/s beside a plain busy loop / alone: {spread(with_busy)}  (the reference)")
    print(f"  one {PLIES}-ply scan = {med(per_game) / BOT_SECONDS:.2f} level-5 moves of {BOT_SECONDS} s (CPU, alone)")


# -- share: how many games give a puzzle ------------------------------------------------------


def part_share(per_level: int, max_plies: int) -> None:
    print(f"== share: {per_level} games per level and variant, the bot against mat2 (at most {max_plies} plies)")
    total_games = total_with = total_puzzles = total_failed = capped = 0
    cpu_all = plies_all = 0.0
    slowest: tuple[float, int, str] = (0.0, 0, "")
    by_level: dict[int, int] = {}
    finished: dict[int, int] = {}
    finished_with: dict[int, int] = {}
    for_person: dict[int, int] = {}
    for variant in VARIANTS:
        for level in (1, 2, 3):
            with_puzzles = missed = allowed = failed = 0
            for seed in range(1, per_level + 1):
                game = engine_game(variant, level, 1000 * level + seed, max_plies)
                capped += game.result is None
                if game.result is not None:
                    finished[level] = finished.get(level, 0) + 1
                cpu = time.process_time()
                found = scan_game(variant, None, game.moves)
                spent = time.process_time() - cpu
                cpu_all += spent
                slowest = max(slowest, (spent, len(game.moves), f"{variant} level {level} seed {1000 * level + seed}"))
                plies_all += len(game.moves)
                with_puzzles += bool(found)
                by_level[level] = by_level.get(level, 0) + bool(found)
                # The service keeps the puzzles of people only: mat2 stands for the person here.
                person = "black" if (1000 * level + seed) % 2 == 0 else "white"
                for_person[level] = for_person.get(level, 0) + any(f.side == person for f in found)
                if game.result is not None:
                    finished_with[level] = finished_with.get(level, 0) + bool(found)
                missed += sum(f.kind == MISSED for f in found)
                allowed += sum(f.kind == ALLOWED for f in found)
                failed += sum(bool(verify(f.puzzle)) for f in found)
            total_games += per_level
            total_with += with_puzzles
            total_puzzles += missed + allowed
            total_failed += failed
            print(f"  {variant:9} level {level}: {with_puzzles:3}/{per_level} games with a puzzle "
                  f"({with_puzzles / per_level:4.0%}); {missed} missed, {allowed} allowed; {failed} fail verify")
    print(f"  all: {total_with}/{total_games} games ({total_with / total_games:.0%}) with a puzzle, "
          f"{total_puzzles} puzzles, {total_failed} fail verify; {capped} games stopped at {max_plies} plies; "
          f"scan {1000 * cpu_all / max(plies_all, 1):.1f} CPU-ms a ply")
    for level in (1, 2, 3):
        played = per_level * len(VARIANTS)
        print(f"  level {level}: {by_level.get(level, 0)}/{played} games with a puzzle "
              f"({by_level.get(level, 0) / played:.0%}); of those that ended before {max_plies} plies "
              f"{finished_with.get(level, 0)}/{finished.get(level, 0)}; with a puzzle of mat2's (the person's) "
              f"{for_person.get(level, 0)}/{played}")
    print(f"  slowest scan: {slowest[0]:.2f} CPU-s, {slowest[1]} plies ({slowest[2]})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parts", default="cost,parallel,share")
    parser.add_argument("--games", type=int, default=3, help="championship games and engine games of 60 plies")
    parser.add_argument("--share", type=int, default=10, help="games per level and variant for the share")
    parser.add_argument("--max-plies", type=int, default=300)
    parser.add_argument("--span", type=float, default=5.0, help="seconds of each parallel measurement")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the parallel measurement")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    started = time.monotonic()
    games = sixty_ply_games(args.games) if parts & {"cost", "parallel"} else []
    if "cost" in parts:
        part_cost(games)
    if "parallel" in parts:
        part_parallel(games, args.span, args.rounds)
    if "share" in parts:
        part_share(args.share, args.max_plies)
    print(f"{time.monotonic() - started:.0f} s in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
