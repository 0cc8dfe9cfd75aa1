"""The lower levels (1-3): a player who looks at the board, not a search that sees everything.

A beginner judges a move by the board it leaves, sometimes also by the opponent's answers to
it; they misjudge positions a little, like to crown, miss that a man is left hanging whenever
they do not look at the answers, and rarely see a shot (a sacrifice that wins more back: only
when they look at their own capture after the opponent's).  ``human_move`` plays that way with
a few probabilities (``Vision``); bench/ai_ladder.py calibrates them against scripted players
that count material one, two and three plies ahead (``mat1``, ``mat2``, ``mat3``).

Pure like the search: all chance comes from the ``rng`` given.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from bot.rules import Move, Position, Variant, movegen

from .evaluation import Evaluator
from .search import MATE
from .weights import weights_for

# A beginner never passes up a free king (the engine's linear evaluation counts a man about to
# crown almost like a king, so the bonus makes the preference a person's).
CROWN_BONUS = 120


@dataclass(frozen=True)
class Vision:
    """What a beginner notices on a turn.

    ``replies``: the chance of looking at the opponent's answers this turn (else each move is
    judged by the board it leaves, so a man left hanging goes unseen); ``recapture``: having looked
    at the replies, the chance of seeing one's own capture after a capture (an exchange, or a shot
    when one's own move was a sacrifice); ``noise``: how far off their judgement of each move is
    (standard deviation, hundredths of a man); ``rush``: if set, the player judges a position by the pieces and
    how far the men have got (hundredths of a man per row), as beginners push for a king, instead
    of by the engine's evaluation; ``attack``: how much they like a move that threatens a man
    (hundredths of a man), without asking whether the threatened man can take first; ``hunt``:
    with more pieces than the opponent, how much they like each of their kings a step nearer the
    opponent's nearest piece (hundredths of a man a step), as a player who knows the ending is won
    closes in instead of wandering until the no-progress rule draws it."""

    replies: float
    recapture: float
    noise: int
    rush: int | None = None
    attack: int = 0
    hunt: int = 0


Evaluate = Callable[[int, int, int, int, bool], int]

_RUSHERS: dict[tuple[str, int], Evaluator] = {}


def judgement(variant: Variant, vision: Vision, engine: Evaluate) -> Evaluate:
    """How a player with ``vision`` values a position: the engine's evaluation, or a beginner's."""
    if vision.rush is None:
        return engine
    key = (variant.id, vision.rush)
    ev = _RUSHERS.get(key)
    if ev is None or ev.variant is not variant:
        # A king is still worth more than a man about to crown.
        kings = weights_for(variant)["kings"] + vision.rush * (variant.size - 1)
        # They also like the edges (they feel safe there) and see no point in keeping the back row.
        weights = {"men": 100.0, "kings": kings, "advance": float(vision.rush), "centre": -vision.rush / 4,
                   "back_rank": -vision.rush / 2}
        ev = _RUSHERS[key] = Evaluator(variant, weights)
    return ev.evaluate


def human_move(pos: Position, vision: Vision, evaluate: Evaluate, rng: random.Random) -> tuple[Move, int, int]:
    """The move a beginner with ``vision`` plays in ``pos``, the value they see in it (for the
    side to move) and the positions looked at."""
    gen = movegen.fast(pos.variant)
    evaluate = judgement(pos.variant, vision, evaluate)
    um, uk, tm, tk, white = *pos.sides(), pos.white
    moves = gen.moves(um, uk, tm, tk, white)
    if not moves:
        raise ValueError("no legal move: the game is over")
    kings = uk.bit_count()
    nodes = 0

    def leaf(a: int, b: int, c: int, d: int, side: bool) -> int:
        """Value for the player to move at the root of the position (a, b, c, d) with ``side`` to move."""
        nonlocal nodes
        nodes += 1
        s = evaluate(a, b, c, d, side)
        return s if side == white else -s

    hunting = vision.hunt and uk and (um | uk).bit_count() > (tm | tk).bit_count()
    look = rng.random() < vision.replies
    see_back = look and rng.random() < vision.recapture
    opp = not white
    best: list[tuple[float, tuple]] = []
    for move in moves:
        _key, a, b, c, d = move
        value: float
        if look:
            replies = gen.moves(a, b, c, d, opp)
            if not replies:
                value = MATE
            else:
                worst = float(MATE)
                for rkey, ra, rb, rc, rd in replies:
                    v = leaf(ra, rb, rc, rd, white)
                    if see_back and rkey >> 16:
                        # Their capture seen, and our capture after it (if any).
                        mine = gen.moves(ra, rb, rc, rd, white)
                        if mine and mine[0][0] >> 16:
                            v = max(leaf(ma, mb, mc, md, opp) for _k, ma, mb, mc, md in mine)
                    worst = min(worst, v)
                value = worst
        elif not gen.count(a, b, c, d, opp):
            value = MATE
        else:
            value = leaf(a, b, c, d, opp)
        if d.bit_count() > kings:
            value += CROWN_BONUS
        if vision.attack and gen.can_capture(c, d, a, b, white):
            value += vision.attack
        if hunting:
            value -= vision.hunt * _distance(pos.variant, d, a | b)
        if vision.noise:
            value += rng.gauss(0.0, vision.noise)
        best.append((value, move))
    value, chosen = max(best, key=lambda vm: vm[0])
    return pos.move_for_key(chosen[0]), int(value), nodes



def _distance(variant: Variant, kings: int, targets: int) -> int:
    """The steps from each of ``kings`` to the nearest of ``targets``, added up."""
    pitch = variant.pitch
    spots = [divmod(bit, pitch) for bit in _bits(targets)]
    total = 0
    for bit in _bits(kings):
        row, col = divmod(bit, pitch)
        total += min((max(abs(row - r), abs(col - c)) for r, c in spots), default=0)
    return total


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out
