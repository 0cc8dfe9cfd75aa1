"""Helpers for the engine tests: an independent prover written over the public rules API."""

from __future__ import annotations

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
