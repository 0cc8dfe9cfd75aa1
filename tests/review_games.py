"""The games the review tests (the web board's move list, analysis, links, screen-reader text) play:
chosen by the rules engine, the same each run, and the positions the engine gives after each ply."""

from __future__ import annotations

from bot.rules import Position


def scripted(variant: str, plies: int, stride: int = 7) -> list[str]:
    """The legal moves sorted by notation, one taken by a fixed stride (a capture is compulsory, so
    the game has them wherever one is legal)."""
    pos = Position.start(variant)
    moves = []
    for i in range(plies):
        legal = sorted(pos.legal_moves(), key=str)
        move = legal[(i * stride) % len(legal)]
        moves.append(str(move))
        pos = pos.play(move)
    return moves


def positions_after(variant: str, moves: list[str]) -> list[Position]:
    """The start and the position after each of ``moves``."""
    pos = Position.start(variant)
    seen = [pos]
    for move in moves:
        pos = pos.play(pos.parse_move(move))
        seen.append(pos)
    return seen
