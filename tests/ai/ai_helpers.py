"""Helpers for the engine tests: an independent prover written over the public rules API, and
positions from seeded random playouts."""

from __future__ import annotations

import random

from bot.rules import Position

INF = 10**6


def material(pos: Position, king: int) -> int:
    """Material for the side to move: man 100, king ``king``."""
    um, uk, tm, tk = pos.sides()
    return 100 * (um.bit_count() - tm.bit_count()) + king * (uk.bit_count() - tk.bit_count())


def prove(pos: Position, depth: int, king: int, alpha: int = -INF, beta: int = INF) -> int:
    """Best material the side to move can force within ``depth`` plies, following
    captures to the end (a capture is compulsory, so it is never cut off half way).
    Plain alpha-beta over ``legal_moves()``/``play()``; shares no code with bot.ai."""
    moves = pos.legal_moves()
    if not moves:
        return -INF
    if depth <= 0 and not moves[0].captured:
        return material(pos, king)
    best = -INF
    for move in moves:
        score = -prove(pos.play(move), depth - 1, king, -beta, -alpha)
        if score > best:
            best = score
            if score > alpha:
                alpha = score
                if alpha >= beta:
                    break
    return best


def playout_positions(variant: str, count: int, seed: int, plies: tuple[int, int] = (10, 120)) -> list[Position]:
    """``count`` positions with a legal move, each after a seeded random playout of a number of
    plies in ``plies`` (from its first to before its second)."""
    rng = random.Random(seed)
    out: list[Position] = []
    while len(out) < count:
        pos = Position.start(variant)
        for _ in range(rng.randrange(*plies)):
            moves = pos.legal_moves()
            if not moves:
                break
            pos = pos.play(rng.choice(moves))
        if pos.legal_moves():
            out.append(pos)
    return out
