"""A plain reference player, and a match of our level 5 against it.  Prints scores, asserts nothing.

Run from the repository root::

    python bench/ai_reference.py                                  # 8 games a variant, 0.5 s
    python bench/ai_reference.py --variants spanish --games 4 --time 0.25

The reference is written for the bench alone: it takes its moves from the rules engine's
fast generator (``bot.rules.movegen.fast``: the rules, not our engine) and imports nothing
of ``bot.ai``.  It is what a plain compiled engine does, only slower:

* iterative-deepening negamax alpha-beta, no extensions, no reductions, no table of scores;
* capture quiescence: at the horizon the search goes on while the side to move must
  capture (captures are compulsory, so every legal move is then a capture) and stops at
  the first quiet position;
* material only: a man 100, a king ``REF_KING`` (300 in Spanish, where kings fly; 200 in
  Italian and Triestina, where they step);
* ordering: captures come first by the rules (when one exists only captures are legal);
  then the best move of the previous iteration in that position (a move-only table
  by position, refreshed every iteration) goes first, the root's best first of all;
* a time limit per move: the iteration under way is dropped at the deadline (checked every
  64 nodes), its moves searched so far are kept only if one beat the previous best.

It plays with ``--ref-factor`` (5) times our time per move, to stand in for a compiled
generator's speed.

The match: our level 5 (``bot.ai.level_move``, the game's history passed like the service
does) at ``--time`` seconds a move against the reference at ``ref-factor x --time``.  Openings
are four random legal plies from ``--seed``; each opening is played twice, our engine taking
each colour once (``--games`` is rounded up to an even number).  Every move of both players is
checked against ``Position.legal_moves()`` before it is played (an illegal move is counted
and loses the game).  A game ends by its own rules (``Game``: no legal move, threefold
repetition, the variant's no-progress count); past ``--max-plies`` (300) it is adjudicated by
material (man 1, king as above): ahead by 2 or more is a win, else a draw.  Unless
``--no-adjudicate``, a game is also adjudicated earlier, as engine matches do: when the endgame
tables hold the position (four pieces or fewer: the result with best play from there, which
credits the reference with perfect play it does not have), or when both players' scores have
agreed for ``ADJUDGE_PLIES`` plies in a row that the same side is ``ADJUDGE_MARGIN`` (four men)
ahead.  ``--self S`` plays our level 5 at ``S`` seconds a move instead of the reference (level 5
at 2 s against itself at 0.5 s: ``--time 2 --self 0.5``).  One game at a time in this process,
or ``--jobs N`` games at once in processes (the machine is shared: times per move are wall time).

Score: win 1, draw 1/2.  The 95 % interval is Wilson's score interval on the score
fraction over n games (a draw counted as half a win, so it is approximate; with draws
it is a little wider than it needs to be).

Measured on 2026-12-04 (2 shared cores, one game at a time, seed 2026; small samples):

* ``--games 8 --time 0.5``: Spanish 8-0-0 (W-L-D), 4-0-0 with each colour, 95 % [0.68, 1.00];
  Italian 8-0-0, 4-0-0 with each colour, [0.68, 1.00].  ``--games 4``: Triestina 4-0-0,
  [0.51, 1.00].  No illegal move.  Ours reached depth 6-8 at 80-160 k nodes/s, the reference
  depth 7-9 at 90-210 k nodes/s (its nodes are cheaper: no evaluation beyond material).
* Spanish ``--games 4 --time 0.1 --ref-factor 25``: 4-0-0, 2-0-0 with each colour; Spanish
  ``--games 4 --time 0.05 --ref-factor 50 --first-opening 4``: 4-0-0 (ours depth 4-5 against
  the reference's 7-8).  The reference's scores agree with ``tests/ai/ai_helpers.prove`` at
  depths 1-3 (210 positions), so it is weak, not wrong: material alone, it picks the first of
  equal moves and walks into lost structures it cannot see.
* In 12 of the 14 pairs of games above ours searched less deep as Black (by 0.3-1.7 ply, with
  fewer nodes/s); on the same positions turned round (``tests/ai/test_ai_colour.mirror``) depth
  and nodes/s are equal, so the gap comes from the positions the games reach, not the colour.

So this reference, even at 25x our time, does not reach the depth of the compiled one of the
issue (which drew and won against level 5): it measures legality and gross blunders, not the
margin the targets ask for.

Measured on 2026-12-04 after the endgame tables and the colour-symmetric ordering (40 games a
variant, openings 0-19 of seed 2026, both colours, adjudicated, one game per process, two
processes on the 2 shared cores):

* ``--games 40 --time 0.5``: Spanish 40-0-0, Italian 40-0-0, Triestina 40-0-0 (each 20-0-0 with
  either colour), 95 % [0.91, 1.00]; no illegal move.
* ``--games 40 --time 2 --self 0.5`` (level 5 at 2 s against itself at 0.5 s): Spanish 18-8-14,
  score 0.62 [0.47, 0.76] (as White 10-5-5, as Black 8-3-9); Italian 16-2-22, 0.68 [0.52, 0.80]
  (as White 6-2-12, as Black 10-0-10).  The 2 s side searched 2-3 plies deeper; its Spanish losses
  drift from 0 to -4 men over twenty moves without a shot: positional, not tactical.

Measured on 2026-12-04 with the compiled search (bot/ai/jit.py, the same tree about 12 times
faster), the same protocol, three matches at a time on the 2 shared cores (wall-time moves):

* ``--games 40 --time 0.5``: Spanish 40-0-0, Italian 40-0-0, Triestina 40-0-0 (each 20-0-0 with
  either colour), 95 % [0.91, 1.00]; no illegal move.  Ours reached on average depth 11.0 / 11.3 /
  10.0 at 1.21 M / 1.15 M / 1.81 M nodes/s, the reference 8.7 / 8.9 / 8.0 at 138 k / 144 k / 189 k.
* ``--games 40 --time 2 --self 0.5``: Spanish 15-3-22, 0.65 [0.50, 0.78] (as White 6-2-12, as
  Black 9-1-10), depth 17.0 against 14.2; Italian 17-6-17, 0.64 [0.48, 0.77] (as White 9-2-9, as
  Black 8-4-8), depth 17.6 against 14.8; Triestina 26-3-11, 0.79 [0.64, 0.89] (as White 17-0-3,
  as Black 9-3-8), depth 13.6 against 11.5.  An earlier Italian run, stopped after 15 games to free
  a core, stood at 4-3-8; with it the 55 Italian games score 0.61.  Italian games between two
  searches of 12-19 plies are mostly drawn or decided by the random opening (a lost one replayed
  with ``--verbose``: both sides scored the opening at about -0.15 for the 2 s side's colour).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.rules import VARIANTS, Game, Position, Variant, movegen  # noqa: E402

INF = 10**7
WIN = 10**6
ADJUDGE_MARGIN = 400
ADJUDGE_PLIES = 6
CLOCK_EVERY = 63


def ref_king(v: Variant) -> int:
    """The reference's king value: flying kings 3 men, stepping kings 2."""
    return 300 if v.flying_kings else 200


class _Timeout(Exception):
    pass


class Reference:
    """Iterative-deepening alpha-beta with capture quiescence and material evaluation."""

    def __init__(self, v: Variant) -> None:
        self.v = v
        self.gen = movegen.fast(v)
        self.king = ref_king(v)
        self.nodes = 0
        self.depth = 0
        self.best: dict[tuple[int, int, int, int, bool], int] = {}

    def material(self, um: int, uk: int, tm: int, tk: int) -> int:
        return 100 * (um.bit_count() - tm.bit_count()) + self.king * (uk.bit_count() - tk.bit_count())

    def search(self, um: int, uk: int, tm: int, tk: int, white: bool, depth: int, alpha: int, beta: int,
               ply: int) -> int:
        self.nodes += 1
        if not self.nodes & CLOCK_EVERY and time.perf_counter() > self.deadline:
            raise _Timeout
        moves = self.gen.moves(um, uk, tm, tk, white)
        if not moves:
            return -WIN + ply
        capture = moves[0][0] >> 16
        if depth <= 0 and not capture:
            return self.material(um, uk, tm, tk)
        state = (um, uk, tm, tk, white)
        hint = self.best.get(state)
        if hint is not None and len(moves) > 1:
            moves.sort(key=lambda m: m[0] != hint)
        best = -INF
        best_key = moves[0][0]
        for key, a, b, c, d in moves:
            score = -self.search(a, b, c, d, not white, depth - 1, -beta, -alpha, ply + 1)
            if score > best:
                best, best_key = score, key
                if score > alpha:
                    alpha = score
                    if alpha >= beta:
                        break
        if depth > 0:
            self.best[state] = best_key
        return best

    def choose(self, pos: Position, seconds: float) -> tuple[int, int, int]:
        """(move key, score for the side to move, depth finished) within ``seconds``."""
        self.deadline = time.perf_counter() + seconds * 0.95
        self.nodes = 0
        self.best.clear()
        um, uk, tm, tk = pos.sides()
        white = pos.white
        root = self.gen.moves(um, uk, tm, tk, white)
        best_key, best_score, done = root[0][0], 0, 0
        if len(root) == 1:
            return best_key, 0, 0
        for depth in range(1, 100):
            alpha = -INF
            scored: list[tuple[int, int]] = []
            try:
                for key, a, b, c, d in root:
                    score = -self.search(a, b, c, d, not white, depth - 1, -INF, -alpha, 1)
                    scored.append((score, key))
                    if score > alpha:
                        alpha = score
            except _Timeout:
                if scored:
                    top = max(scored)
                    # The previous best was searched first: another move that beat it counts.
                    if top[1] != scored[0][1] and top[0] > scored[0][0]:
                        best_score, best_key = top
                break
            best_score, best_key = max(scored)
            done = depth
            root.sort(key=lambda m: m[0] != best_key)
            if abs(best_score) > WIN - 1000:
                break
        self.depth = done
        return best_key, best_score, done


def material_of(pos: Position, color: str) -> int:
    v = pos.variant
    k = ref_king(v)
    wm, wk = pos.count("W")
    bm, bk = pos.count("B")
    diff = 100 * (wm - bm) + k * (wk - bk)
    return diff if color == "W" else -diff


def wilson(score: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson's 95 % score interval for a fraction ``score`` of ``n`` trials."""
    if n == 0:
        return 0.0, 1.0
    centre = (score + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(score * (1 - score) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def opening(variant: str, seed: int, plies: int = 4) -> Game:
    rng = random.Random(seed)
    game = Game(variant)
    for _ in range(plies):
        moves = game.position.legal_moves()
        if game.result is not None or not moves:
            break
        game.play(rng.choice(moves))
    return game


def play_game(variant: str, seed: int, ours_white: bool, seconds: float, ref_factor: float, max_plies: int,
              verbose: bool = False, self_seconds: float = 0.0, adjudicate: bool = True) -> dict:
    """One game of our level 5 against the reference (or, with ``self_seconds``, against our
    level 5 at that many seconds a move); a dict with the result and the stats."""
    from bot.ai import egtb, level_move  # the engine measured; the reference above does not use it

    game = opening(variant, seed)
    fens = [p.fen() for p in game.positions]
    ref = Reference(game.variant)
    rng = random.Random(seed)
    ours = "W" if ours_white else "B"
    stats: dict[str, Any] = {"our_depth": 0, "our_nodes": 0, "our_secs": 0.0, "our_moves": 0,
             "ref_depth": 0, "ref_nodes": 0, "ref_secs": 0.0, "ref_moves": 0, "illegal": None}
    log: list[str] = []
    # Adjudication: both players' scores agree that one side is ahead by ADJUDGE_MARGIN for
    # ADJUDGE_PLIES plies in a row (each counted for White), or the endgame tables know the end.
    agreed: list[int] = []
    adjudged: tuple[str | None, str] | None = None
    while game.result is None and len(game.moves) < max_plies:
        pos = game.position
        side = pos.turn
        if adjudicate:
            known = egtb.verdict(pos)
            if known is not None:
                other = "B" if side == "W" else "W"
                winner_t = None if known.result == egtb.DRAW else side if known.result == egtb.WIN else other
                adjudged = (winner_t, f"endgame tables ({known.name}: {known.result})")
                break
            if len(agreed) >= ADJUDGE_PLIES and (all(a >= ADJUDGE_MARGIN for a in agreed[-ADJUDGE_PLIES:])
                                                 or all(a <= -ADJUDGE_MARGIN for a in agreed[-ADJUDGE_PLIES:])):
                adjudged = ("W" if agreed[-1] > 0 else "B", f"both scores {ADJUDGE_MARGIN}+ for {ADJUDGE_PLIES} plies")
                break
        if side == ours or self_seconds:
            # Our level 5, or its other self (counted in the reference's columns).
            mine = side == ours
            r = level_move(pos, 5, seconds if mine else self_seconds, fens, rng)
            move = r.move
            who = "our" if mine else "ref"
            stats[f"{who}_depth"] += r.depth
            stats[f"{who}_nodes"] += r.nodes
            stats[f"{who}_secs"] += r.seconds
            stats[f"{who}_moves"] += 1
            note = f"{'ours' if mine else 'self'} {r.score:+d} d{r.depth}"
            agreed.append(r.score if side == "W" else -r.score)
        else:
            started = time.perf_counter()
            key, score, depth = ref.choose(pos, seconds * ref_factor)
            move = pos.move_for_key(key)
            stats["ref_depth"] += depth
            stats["ref_nodes"] += ref.nodes
            stats["ref_secs"] += time.perf_counter() - started
            stats["ref_moves"] += 1
            note = f"ref {score:+d} d{depth}"
            agreed.append(score if side == "W" else -score)
        if not pos.is_legal(move):
            stats["illegal"] = side
            break
        log.append(f"{len(game.moves) + 1:3} {side} {move} ({note})")
        if verbose:
            print("   ", log[-1], flush=True)
        game.play(move)
        fens.append(game.position.fen())
    if stats["illegal"]:
        winner: str | None = "B" if stats["illegal"] == "W" else "W"
        how = "illegal move"
    elif adjudged is not None:
        winner, how = adjudged
    elif game.result is not None:
        winner = game.result.winner
        how = str(game.result.reason)
    else:
        diff = material_of(game.position, "W")
        winner = "W" if diff >= 200 else "B" if diff <= -200 else None
        how = f"move cap, material {diff:+d} for White"
    points = 0.5 if winner is None else 1.0 if winner == ours else 0.0
    return {"variant": variant, "seed": seed, "ours": ours, "winner": winner, "how": how, "points": points,
            "plies": len(game.moves), "log": log, "start": fens[0], "fens": fens, **stats}


def summarise(label: str, games: list[dict]) -> str:
    n = len(games)
    if not n:
        return f"{label}: no games"
    w = sum(g["points"] == 1.0 for g in games)
    d = sum(g["points"] == 0.5 for g in games)
    lost = n - w - d
    score = (w + d / 2) / n
    lo, hi = wilson(score, n)
    return f"{label}: {w}-{lost}-{d} (W-L-D) score {score:.2f} over {n}, 95% Wilson [{lo:.2f}, {hi:.2f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variants", default="spanish,italian,triestina")
    parser.add_argument("--games", type=int, default=8, help="games per variant (two per opening, both colours)")
    parser.add_argument("--time", type=float, default=0.5, help="our level 5's seconds per move")
    parser.add_argument("--ref-factor", type=float, default=5.0, help="the reference's time as a multiple of ours")
    parser.add_argument("--max-plies", type=int, default=300)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--first-opening", type=int, default=0, help="index of the first opening (to resume)")
    parser.add_argument("--verbose", action="store_true", help="print every move with both engines' scores")
    parser.add_argument("--ours", choices=("both", "W", "B"), default="both",
                        help="the colour our engine plays (both: each opening twice)")
    parser.add_argument("--dump", help="write every game (moves, scores, positions) to this JSON file")
    parser.add_argument("--self", type=float, default=0.0, dest="self_seconds",
                        help="play our level 5 at this many seconds a move instead of the reference")
    parser.add_argument("--jobs", type=int, default=1, help="games at once, each in its own process")
    parser.add_argument("--no-adjudicate", action="store_true",
                        help="play every game out (no endgame-table or agreed-score adjudication)")
    parser.add_argument("--review", type=float, default=0.0,
                        help="after each lost game, search each of our positions again for this many seconds and "
                             "print the moves where the longer search disagrees by 50 or more")
    args = parser.parse_args()
    variants = [v for v in args.variants.split(",") if v]
    for v in variants:
        if v not in VARIANTS:
            raise SystemExit(f"unknown variant {v}")
    openings = (args.games + 1) // 2
    rival = (f"level 5 at {args.self_seconds}s/move" if args.self_seconds
             else f"reference at {args.time * args.ref_factor}s/move")
    print(f"level 5 at {args.time}s/move vs {rival}, {2 * openings} games a variant, {args.jobs} at a time"
          f"{'' if args.no_adjudicate else f'; adjudicated by the endgame tables or both scores {ADJUDGE_MARGIN}+'}",
          flush=True)
    everything: list[dict] = []
    colours = {"both": (True, False), "W": (True,), "B": (False,)}[args.ours]
    for variant in variants:
        jobs = [(variant, args.seed * 1000 + i, ours_white, args.time, args.ref_factor, args.max_plies,
                 args.verbose, args.self_seconds, not args.no_adjudicate, i)
                for i in range(args.first_opening, args.first_opening + openings) for ours_white in colours]
        results: list[dict] = []
        if args.jobs > 1:
            from concurrent.futures import ProcessPoolExecutor
            with ProcessPoolExecutor(args.jobs) as pool:
                for g in pool.map(_timed_game, jobs):
                    results.append(g)
                    _report(g, args.review)
        else:
            for job in jobs:
                g = _timed_game(job)
                results.append(g)
                _report(g, args.review)
        everything += results
        print(summarise(f"{variant:9} all     ", results))
        print(summarise(f"{variant:9} as White", [g for g in results if g["ours"] == "W"]))
        print(summarise(f"{variant:9} as Black", [g for g in results if g["ours"] == "B"]), flush=True)
    illegal = sum(1 for g in everything if g["illegal"])
    print(f"illegal moves: {illegal}")
    if args.dump:
        Path(args.dump).write_text(json.dumps(everything, indent=1))


def _timed_game(job: tuple) -> dict:
    *params, index = job
    started = time.perf_counter()
    g = play_game(*params)
    g["opening"] = index
    g["wall"] = time.perf_counter() - started
    return g


def _report(g: dict, review_seconds: float) -> None:
    res = {1.0: "win", 0.5: "draw", 0.0: "loss"}[g["points"]]
    our_nps = g["our_nodes"] / g["our_secs"] if g["our_secs"] else 0
    ref_nps = g["ref_nodes"] / g["ref_secs"] if g["ref_secs"] else 0
    print(f"  {g['variant']:9} opening {g['opening']} ours {g['ours']}: {res} ({g['how']}, {g['plies']} plies, "
          f"{g['wall']:.0f}s) ours depth {g['our_depth'] / max(1, g['our_moves']):.1f} "
          f"{our_nps:.0f} n/s, other depth {g['ref_depth'] / max(1, g['ref_moves']):.1f} {ref_nps:.0f} n/s"
          f"{', ILLEGAL by ' + g['illegal'] if g['illegal'] else ''}", flush=True)
    if review_seconds and g["points"] == 0.0:
        review(g, review_seconds)


def review(g: dict, seconds: float) -> None:
    """Where a lost game went wrong: each of our moves' score against a search of ``seconds``."""
    from bot.ai import search_position

    print(f"    review of {g['variant']} opening seed {g['seed']}, ours {g['ours']} (score for us; "
          f"the longer search's best move and score)")
    for line in g["log"]:
        ply, side = line.split()[:2]
        if side != g["ours"]:
            continue
        # fens[0] is the start: the position before ply P is fens[P - 1].
        before = int(ply) - 1
        pos = Position.from_fen(g["variant"], g["fens"][before])
        deep = search_position(pos, 64, seconds, history=g["fens"][: before + 1])
        played = line.split()[2]
        mark = ""
        if str(deep.move) != played:
            mark = " <- differs"
        print(f"    {line}  | {seconds}s: {deep.move} {deep.score:+d} d{deep.depth}{mark}", flush=True)


if __name__ == "__main__":
    main()
