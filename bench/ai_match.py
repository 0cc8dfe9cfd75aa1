"""Matches between players, to measure the engine's levels.  Prints scores, asserts nothing.

Run from the repository root::

    python bench/ai_match.py --pairings l5-greedy,l5-ab6 --openings 4
    python bench/ai_match.py --pairings l2-l1,l3-l2,l4-l3,l5-l4 --openings 2 --time-scale 0.5

Players:

* ``lN``: ``bot.ai`` at level N (1-5) with the level's own time per move
  (times ``--time-scale``); ``l5`` uses ``--l5-seconds`` (default 0.5 s).
* ``greedy`` (or ``mat1``): one ply: the move that leaves the most material (man 1, king 3
  in spanish, 2 otherwise), random among ties.
* ``mat2``: two plies: the move whose worst reply leaves the most material, random among
  ties (it sees a man left hanging, not its own recapture after).  Levels 1 and 2 are
  calibrated so that ``mat1`` scores at least half against level 1 and ``mat2`` against
  level 2::

    python bench/ai_match.py --pairings mat1-l1,mat2-l2,l2-l1,l3-l2 --openings 10
* ``mat3``: three plies: the move whose worst reply, answered by its best move, leaves the most
  material, random among ties (it sees its recapture and a shot of one sacrifice).  Against
  levels 3 and 4 with ``mat2`` in bench/ai_ladder.py, the whole calibration table.
* ``ab6``: a plain fixed-depth alpha-beta, depth 6, material + advancement only, no
  table, no ordering; at the horizon it plays out pending captures (a compulsory
  capture half done is not a position to count).

Each opening (``--openings``, four random plies from a seeded generator) is played
twice, each player taking each colour once.  A game ends by the rules (no moves,
threefold repetition, the variant's no-progress rule) or after ``--max-plies``
(a draw).  Score: win 1, draw 1/2.  Games run in ``--workers`` processes; the
machine is shared with other work, so the engine's depth per move (and so the
result) varies from run to run.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.ai import LEVELS, level_move  # noqa: E402
from bot.rules import VARIANTS, Game, Position, movegen  # noqa: E402

INF = 10**9


def king_value(variant: str) -> int:
    return 300 if variant == "spanish" else 200


def _best_move(pos: Position, rng: random.Random, score: Callable[[int, int, int, int, int], int]) -> str:
    """The move with the highest ``score(tm, tk, um, uk, best)`` (the child position, the side to
    move's men and kings first, and the best score so far), random among ties."""
    best, choices = -INF, []
    for key, tm, tk, um, uk in movegen.fast(pos.variant).moves(*pos.sides(), pos.white):
        value = score(tm, tk, um, uk, best)
        if value > best:
            best, choices = value, [key]
        elif value == best:
            choices.append(key)
    return str(pos.move_for_key(rng.choice(choices)))


def _material(um: int, uk: int, tm: int, tk: int, kv: int) -> int:
    return 100 * (um.bit_count() - tm.bit_count()) + kv * (uk.bit_count() - tk.bit_count())


def greedy_move(pos: Position, rng: random.Random) -> str:
    kv = king_value(pos.variant.id)
    return _best_move(pos, rng, lambda tm, tk, um, uk, _best: _material(um, uk, tm, tk, kv))


def mat2_move(pos: Position, rng: random.Random) -> str:
    gen = movegen.fast(pos.variant)
    kv = king_value(pos.variant.id)
    white = pos.white

    def score(tm: int, tk: int, um: int, uk: int, _best: int) -> int:
        replies = gen.moves(tm, tk, um, uk, not white)
        if not replies:
            return INF
        # After a reply the child is turned round again: (a, b) are ours.
        return min(_material(a, b, c, d, kv) for _k, a, b, c, d in replies)

    return _best_move(pos, rng, score)


def mat3_move(pos: Position, rng: random.Random) -> str:
    gen = movegen.fast(pos.variant)
    kv = king_value(pos.variant.id)
    white = pos.white

    def score(tm: int, tk: int, um: int, uk: int, best: int) -> int:
        replies = gen.moves(tm, tk, um, uk, not white)
        value = INF
        for _k, a, b, c, d in replies:
            # After the reply (a, b) are ours again; our best answer, or a loss with none.
            answers = gen.moves(a, b, c, d, white)
            value = min(value, max((_material(e, f, g, h, kv) for _k2, g, h, e, f in answers), default=-INF))
            if value < best:
                break   # already worse than the best so far: not a tie either
        return value

    return _best_move(pos, rng, score)


def _ab6_eval(v, um, uk, tm, tk, white, kv, adv_white, adv_black):
    own_adv, their_adv = (adv_white, adv_black) if white else (adv_black, adv_white)
    score = 100 * (um.bit_count() - tm.bit_count()) + kv * (uk.bit_count() - tk.bit_count())
    for n, mask in own_adv:
        score += 2 * n * (um & mask).bit_count()
    for n, mask in their_adv:
        score -= 2 * n * (tm & mask).bit_count()
    return score


def ab6_move(pos: Position, depth: int = 6) -> str:
    v = pos.variant
    gen = movegen.fast(v)
    kv = king_value(v.id)
    rows = [0] * v.size
    for n in range(1, v.squares + 1):
        b = v.sq_to_bit[n]
        rows[b // v.pitch] |= 1 << b
    adv_white = [(v.size - 1 - r, rows[r]) for r in range(v.size)]
    adv_black = [(r, rows[r]) for r in range(v.size)]

    def ab(um, uk, tm, tk, white, d, alpha, beta):
        moves = gen.moves(um, uk, tm, tk, white)
        if not moves:
            return -INF
        if d <= 0 and not moves[0][0] >> 16:
            return _ab6_eval(v, um, uk, tm, tk, white, kv, adv_white, adv_black)
        best = -INF
        for _key, a, b, c, e in moves:
            s = -ab(a, b, c, e, not white, d - 1, -beta, -alpha)
            if s > best:
                best = s
                if s > alpha:
                    alpha = s
                    if alpha >= beta:
                        break
        return best

    best_key, alpha = None, -INF - 1
    for key, a, b, c, e in gen.moves(*pos.sides(), pos.white):
        s = -ab(a, b, c, e, not pos.white, depth - 1, -INF - 1, -alpha)
        if s > alpha or best_key is None:
            alpha, best_key = s, key
    return str(pos.move_for_key(best_key))


def pick(player: str, game: Game, fens: list[str], rng: random.Random, time_scale: float,
         l5_seconds: float, stats: dict) -> str:
    pos = game.position
    if player in ("greedy", "mat1"):
        return greedy_move(pos, rng)
    if player == "mat2":
        return mat2_move(pos, rng)
    if player == "mat3":
        return mat3_move(pos, rng)
    if player == "ab6":
        return ab6_move(pos)
    level = int(player[1:])
    spec = LEVELS[level]
    seconds = l5_seconds if level == 5 else spec.seconds * time_scale
    result = level_move(pos, level, seconds, fens, rng)
    stats["depth"] += result.depth
    stats["moves"] += 1
    stats["slowest"] = max(stats["slowest"], result.seconds / seconds)
    return str(result.move)


def play_one(task: tuple) -> tuple:
    variant, opening_seed, white, black, max_plies, time_scale, l5_seconds = task
    rng = random.Random(opening_seed)
    game = Game(variant)
    for _ in range(4):
        moves = game.position.legal_moves()
        if game.result is not None or not moves:
            break
        game.play(rng.choice(moves))
    fens = [p.fen() for p in game.positions]
    stats = {"W": {"depth": 0, "moves": 0, "slowest": 0.0}, "B": {"depth": 0, "moves": 0, "slowest": 0.0}}
    while game.result is None and len(game.moves) < max_plies:
        side = game.position.turn
        player = white if side == "W" else black
        text = pick(player, game, fens, rng, time_scale, l5_seconds, stats[side])
        game.play(text)
        fens.append(game.position.fen())
    winner = game.result.winner if game.result else None
    stats["cut"] = game.result is None
    return variant, white, black, winner, len(game.moves), stats


def parse_variants(text: str) -> list[str]:
    """The variants of a comma-separated ``--variants``; an unknown one ends the run."""
    variants = [v for v in text.split(",") if v]
    for v in variants:
        if v not in VARIANTS:
            raise SystemExit(f"unknown variant {v}")
    return variants


def game_tasks(pairings: list[tuple[str, str]], variants: list[str], openings: int, seed: int, max_plies: int,
               time_scale: float, l5_seconds: float) -> list[tuple]:
    """``play_one``'s tasks: for each pairing, variant and opening, two games, each player taking
    each colour once."""
    tasks = []
    for a, b in pairings:
        for variant in variants:
            for i in range(openings):
                opening = seed * 1000 + i
                for white, black in ((a, b), (b, a)):
                    tasks.append((variant, opening, white, black, max_plies, time_scale, l5_seconds))
    return tasks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variants", default="spanish,italian,triestina")
    parser.add_argument("--pairings", default="l5-greedy,l5-ab6,l2-l1,l3-l2,l4-l3,l5-l4",
                        help="comma-separated A-B: A is the player measured")
    parser.add_argument("--openings", type=int, default=2, help="openings per variant and pairing (2 games each)")
    # Long enough for 10x10 games and king endings: the variants' own draw rules end the rest.
    parser.add_argument("--max-plies", type=int, default=600)
    parser.add_argument("--time-scale", type=float, default=1.0, help="multiplies levels 1-4's time")
    parser.add_argument("--l5-seconds", type=float, default=0.5,
                        help="level 5's time per move (0.5 s for the targets against greedy and ab6; the ladder "
                             "l5-l4 is level 5 at its own 2 s)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    variants = parse_variants(args.variants)
    pairings = [(a, b) for a, b in (pairing.split("-") for pairing in args.pairings.split(","))]
    tasks = game_tasks(pairings, variants, args.openings, args.seed, args.max_plies, args.time_scale,
                       args.l5_seconds)
    print(f"{len(tasks)} games, {args.workers} workers, l5 {args.l5_seconds}s/move, "
          f"levels 1-4 at {args.time_scale}x their time", flush=True)
    started = time.perf_counter()
    table: dict[tuple[str, str, str], list] = {}
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        for variant, white, black, winner, plies, stats in pool.map(play_one, tasks):
            for player, other, color in ((white, black, "W"), (black, white, "B")):
                key = (variant, player, other)
                row = table.setdefault(key, [0, 0, 0, 0, 0, 0])
                if winner is None:
                    row[1] += 1
                elif winner == color:
                    row[0] += 1
                else:
                    row[2] += 1
                row[3] += stats[color]["depth"]
                row[4] += stats[color]["moves"]
                row[5] += stats["cut"]
            print(f"  {variant:9} {white:>6} (W) - {black:<6} (B): "
                  f"{'draw' if winner is None else winner + ' wins'} in {plies} plies", flush=True)
    print(f"\nresults ({time.perf_counter() - started:.0f}s):")
    for pairing in args.pairings.split(","):
        a, b = pairing.split("-")
        for variant in variants:
            w, d, lost, depth, moves, cut = table.get((variant, a, b), [0, 0, 0, 0, 0, 0])
            n = w + d + lost
            if not n:
                continue
            avg_depth = f", mean depth {depth / moves:.1f}" if moves else ""
            cuts = f", {cut} stopped at --max-plies" if cut else ""
            print(f"{variant:9} {a:>6} vs {b:<6}: +{w} ={d} -{lost}  score {100 * (w + d / 2) / n:5.1f}%{avg_depth}"
                  f"{cuts}")


if __name__ == "__main__":
    main()
