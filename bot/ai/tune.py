"""Texel-style tuning of the evaluation weights from engine self-play.

How it was run (the weights in ``weights.py`` came from this)::

    python -m bot.ai.tune --variant all --games 240 --depth 3 --seed 1 --cache /tmp/ai/cache --write

(self-play for the three variants took about 35 minutes on the shared machine.
Held-out error, start -> fitted: italian 0.04076 -> 0.04022 (l2 1e-7); spanish
0.07985 -> 0.07993 (no gain: the fitted weights stay near the start); triestina
0.00951 -> 0.00951 (depth-3 self-play on 10x10 almost always draws, so its results
say little; k lands at its lower bound).  In play, italian fitted weights scored
9.5/16 against the starting ones at depth 4 (bench/ai_weights.py style games).)

Tried again on 2026-12-04 with the compiled search (docs/engine.md), deeper self-play for Italian:
``--variant italian --games 200 --depth 7 --seed 5`` (29,451 positions, 9.5 minutes).  The fit made
the held-out games' error worse, 0.04369 -> 0.04489 (l2 1e-7) and 0.04521 (1e-6), so the weights
above were kept: with these nine features the tune finds nothing more to take from stronger games.

1. Self-play: the engine plays itself at a fixed shallow depth (``--depth``, with a
   small random margin at the root and 4 random opening plies so games differ), with
   ``STARTING_WEIGHTS``, to the end by the rules (no moves, threefold repetition, the
   variant's no-progress rule) or ``--max-plies`` (then scored a draw).
2. Positions: every quiet position (no capture pending for either side) after the
   opening plies, labelled with the game's final result for White (1, 1/2, 0).
   Positions the endgame rules score by themselves are left out: their weights do
   not decide anything.
3. Fit: the prediction is ``1 / (1 + 10 ** (-k * eval / 400))`` with ``eval`` the
   linear part of the evaluation from White's side.  ``k`` is fitted first with the
   starting weights, then every weight but the man's (fixed at 100, the unit) by
   gradient descent (Adam) on the mean squared error, as in Texel's method, with a
   small L2 pull towards the starting weights.  One game in ten is held out (whole
   games, since a game's positions share its result); each pull in ``--l2`` is fitted
   and the one with the lowest held-out error is kept.
4. ``--write`` rewrites ``bot/ai/weights.py`` with the fitted weights, keeping the
   other variants' entries.

Self-play is the slow part (two to seven seconds a game at depth 3 on this shared
machine); ``--cache DIR`` keeps the positions so a refit does not replay.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import time
from pathlib import Path

from bot.rules import VARIANTS, Game, get_variant, movegen

from . import search_position
from .evaluation import FEATURES, Evaluator
from .weights import WEIGHTS, stand_in  # the other variants' entries are kept when one is refitted

# Where the fit starts, and what the self-play engine plays with: round numbers
# (man 100; a flying king worth more than a short one), only a starting point.  A variant
# without an entry starts from the one ``weights.stand_in`` picks (the variant it plays like).
STARTING_WEIGHTS: dict[str, dict[str, float]] = {
    "spanish": {"men": 100, "kings": 350, "advance": 3, "back_rank": 8, "centre": 6, "mobility": 2,
                "tempo": 4, "runaway": 40, "diagonal": 15},
    "italian": {"men": 100, "kings": 220, "advance": 3, "back_rank": 8, "centre": 6, "mobility": 2,
                "tempo": 4, "runaway": 40, "diagonal": 5},
    "triestina": {"men": 100, "kings": 220, "advance": 3, "back_rank": 8, "centre": 6, "mobility": 2,
                  "tempo": 4, "runaway": 40, "diagonal": 5},
}



def starting_weights(variant: str) -> dict[str, float]:
    """Where the fit of a variant starts (its entry, or the one of the variant it plays like)."""
    return dict(STARTING_WEIGHTS[stand_in(variant, STARTING_WEIGHTS)])


Sample = tuple[list[int], float, int]   # features, White's result, game number


def self_play(variant: str, games: int, depth: int, max_plies: int, seed: int,
              weights: dict[str, float] | None = None, log: bool = True) -> list[Sample]:
    """Quiet positions from engine self-play games, each with the game's result for White."""
    v = get_variant(variant)
    ev = Evaluator(v, weights)
    gen = movegen.fast(v)
    rng = random.Random(seed)
    samples: list[Sample] = []
    started = time.perf_counter()
    for n in range(games):
        game = Game(v)
        for _ in range(4):
            moves = game.position.legal_moves()
            if game.result is not None or not moves:
                break
            game.play(rng.choice(moves))
        fens = [p.fen() for p in game.positions]
        while game.result is None and len(game.moves) < max_plies:
            result = search_position(game.position, depth, 5.0, margin=15, history=fens,
                                     rng=rng, ev=ev)
            game.play(result.move)
            fens.append(game.position.fen())
        if game.result is None or game.result.winner is None:
            outcome = 0.5
        else:
            outcome = 1.0 if game.result.winner == "W" else 0.0
        for pos in game.positions[4:]:
            um, uk, tm, tk = pos.sides()
            if gen.can_capture(um, uk, tm, tk, pos.white) or gen.can_capture(tm, tk, um, uk, not pos.white):
                continue
            if not (pos.wm or pos.bm) and ev.endgame(pos.wm, pos.wk, pos.bm, pos.bk) is not None:
                continue
            samples.append((ev.features_of(pos.wm, pos.wk, pos.bm, pos.bk), outcome, n))
        if log and (n + 1) % 10 == 0:
            print(f"  {variant}: {n + 1}/{games} games, {len(samples)} positions, "
                  f"{time.perf_counter() - started:.0f}s", flush=True)
    return samples


def _loss(samples: list[Sample], w: list[float], k: float) -> float:
    total = 0.0
    for f, y, _g in samples:
        e = sum(a * b for a, b in zip(w, f, strict=True))
        p = 1.0 / (1.0 + 10.0 ** max(-30.0, min(30.0, -k * e / 400.0)))
        total += (y - p) ** 2
    return total / len(samples)


def fit_k(samples: list[Sample], w: list[float]) -> float:
    """The scale that best maps the starting evaluation onto results (golden-section search)."""
    lo, hi = 0.05, 4.0
    phi = (math.sqrt(5) - 1) / 2
    for _ in range(30):
        a = hi - phi * (hi - lo)
        b = lo + phi * (hi - lo)
        if _loss(samples, w, a) < _loss(samples, w, b):
            hi = b
        else:
            lo = a
    return (lo + hi) / 2


def fit_weights(samples: list[Sample], start: list[float], k: float, steps: int = 400,
                lr: float = 2.0, fixed: tuple[int, ...] = (0,), l2: float = 0.0) -> list[float]:
    """Adam on the mean squared error between results and predictions, plus
    ``l2 * sum((w - start) ** 2)``: positions of one game are far from independent, so
    a few hundred games do not pin nine weights down without a pull towards the start."""
    w = list(start)
    m = [0.0] * len(w)
    s = [0.0] * len(w)
    c = k * math.log(10) / 400.0
    b1, b2 = 0.9, 0.999
    for step in range(1, steps + 1):
        grad = [0.0] * len(w)
        for f, y, _g in samples:
            e = sum(a * b for a, b in zip(w, f, strict=True))
            x = max(-60.0, min(60.0, c * e))
            p = 1.0 / (1.0 + math.exp(-x))
            g = -2.0 * (y - p) * p * (1.0 - p) * c
            if g:
                for i, fi in enumerate(f):
                    if fi:
                        grad[i] += g * fi
        n = len(samples)
        for i in range(len(w)):
            if i in fixed:
                continue
            gi = grad[i] / n + 2.0 * l2 * (w[i] - start[i])
            m[i] = b1 * m[i] + (1 - b1) * gi
            s[i] = b2 * s[i] + (1 - b2) * gi * gi
            mh = m[i] / (1 - b1 ** step)
            sh = s[i] / (1 - b2 ** step)
            w[i] -= lr * mh / (math.sqrt(sh) + 1e-12)
    return w


def tune(variant: str, games: int, depth: int, max_plies: int, seed: int, steps: int, l2: list[float],
         cache: Path | None = None) -> dict[str, float]:
    start = starting_weights(variant)
    w0 = [float(start.get(name, 0.0)) for name in FEATURES]
    path = cache / f"tune-{variant}-{games}-{depth}-{seed}.json" if cache else None
    if path and path.exists():
        samples = [tuple(s) for s in json.loads(path.read_text(encoding="utf-8"))]
    else:
        samples = self_play(variant, games, depth, max_plies, seed, start)
        if path:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(samples), encoding="utf-8")
    # Hold out whole games: positions of one game share its result.
    held = [s for s in samples if s[2] % 10 == 0]
    train = [s for s in samples if s[2] % 10 != 0]
    k = fit_k(train, w0)
    before = _loss(held, w0, k)
    best: tuple[float, float, list[float]] | None = None
    for pull in l2:
        w = fit_weights(train, w0, k, steps, l2=pull)
        after = _loss(held, w, k)
        print(f"{variant}: {len(samples)} positions from {games} games, k={k:.3f}, l2={pull:g}: "
              f"held-out games' error {before:.5f} -> {after:.5f}", flush=True)
        if best is None or after < best[0]:
            best = (after, pull, w)
    assert best is not None
    print(f"{variant}: keeping l2={best[1]:g}", flush=True)
    return {name: round(x, 1) for name, x in zip(FEATURES, best[2], strict=True)}


def write_weights(weights: dict[str, dict[str, float]], path: Path, note: str) -> None:
    """Rewrite the table of ``weights.py`` (and the note of how it was fitted), keeping the rest
    of the module (its imports and functions) as it is."""
    lines = ["WEIGHTS: dict[str, dict[str, float]] = {"]
    for variant in sorted(weights):
        lines.append(f'    "{variant}": {{')
        for k, v in weights[variant].items():
            lines.append(f'        "{k}": {v},')
        lines.append("    },")
    lines.append("}")
    text = path.read_text(encoding="utf-8")
    start = text.index(lines[0])
    end = text.index("\n}\n", start) + len("\n}")
    text = text[:start] + "\n".join(lines) + text[end:]
    text = re.sub(r"Fitted by ``python -m bot\.ai\.tune`` \([^)]*\);",
                  lambda _: f"Fitted by ``python -m bot.ai.tune`` ({note});", text, count=1)
    path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Fit the evaluation weights on self-play (Texel's method).")
    parser.add_argument("--variant", default="all", choices=["all", *sorted(VARIANTS)])
    parser.add_argument("--games", type=int, default=160)
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--max-plies", type=int, default=220)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--l2", default="1e-7,1e-6",
                        help="pulls towards the starting weights to try; the one with the lowest "
                             "held-out error is kept")
    parser.add_argument("--cache", type=Path, default=None,
                        help="folder to keep self-play positions in, to refit without replaying")
    parser.add_argument("--write", action="store_true", help="rewrite bot/ai/weights.py")
    args = parser.parse_args(argv)
    variants = sorted(VARIANTS) if args.variant == "all" else [args.variant]
    fitted = {v: dict(WEIGHTS[v]) for v in WEIGHTS}
    for variant in variants:
        pulls = [float(x) for x in args.l2.split(",")]
        fitted[variant] = tune(variant, args.games, args.depth, args.max_plies, args.seed, args.steps,
                               pulls, args.cache)
        print(f"  {variant}: {fitted[variant]}", flush=True)
    if args.write:
        note = (f"--games {args.games} --depth {args.depth} --seed {args.seed} --steps {args.steps} "
                f"--l2 {args.l2}")
        write_weights(fitted, Path(__file__).with_name("weights.py"), note)
        print("wrote bot/ai/weights.py")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
