"""The fast perft (bitboard shortcuts) must agree with the plain move list on any position."""

import random

import pytest

from bot.rules import Position, perft
from bot.rules.perft import count_moves
from bot.rules.variants import registered


def slow_perft(pos: Position, depth: int) -> int:
    moves = pos.legal_moves()
    if depth == 1:
        return len(moves)
    return sum(slow_perft(pos.play(m), depth - 1) for m in moves)


def random_positions(variant: str, seed: int, games: int = 12, plies: int = 120):
    rng = random.Random(seed)
    for _ in range(games):
        pos = Position.start(variant)
        for ply in range(plies):
            moves = pos.legal_moves()
            if not moves:
                break
            pos = pos.play(rng.choice(moves))
            if ply % 9 == 0:
                yield pos


@pytest.mark.parametrize("variant", [v.id for v in registered()])
def test_fast_perft_matches_move_list_on_random_positions(variant):
    checked = 0
    for pos in random_positions(variant, seed=len(variant)):
        assert count_moves(pos) == len(pos.legal_moves()), pos.fen()
        assert perft(pos, 2) == slow_perft(pos, 2), pos.fen()
        checked += 1
    assert checked > 50
