"""The endgame tables against what players know of these endings (every position, not a sample).

Spanish: three kings against one win only when the lone king does not hold the long diagonal.
Italian: two kings (one-step kings) against one -- the tables' answer, written down here: with
the two kings to move they win in all but 34 of 14,880 positions, at most in 33 plies.
"""

from __future__ import annotations

import itertools

from bot.ai import egtb, search_position
from bot.ai.egtb import DRAW, LOSS, WIN, long_diagonal
from bot.rules import Position, get_variant, movegen


def kings(variant: str, to_move: str, white: tuple[int, ...], black: tuple[int, ...]) -> Position:
    w = ",".join(f"K{s}" for s in white)
    b = ",".join(f"K{s}" for s in black)
    return Position.from_fen(variant, f"{to_move}:W{w}:B{b}")


def test_the_long_diagonal_is_the_one_from_corner_to_corner() -> None:
    v = get_variant("spanish")
    assert v.mask_to_squares(long_diagonal(v)) == [1, 5, 10, 14, 19, 23, 28, 32]


def test_spanish_three_kings_against_one_win_only_off_the_long_diagonal() -> None:
    """Every position of three kings against one with the lone king to move and no capture for
    it (a capture is another ending), read from the tables by bitboards for speed."""
    v = get_variant("spanish")
    tb = egtb.tables(v)
    assert tb is not None
    can_capture = movegen.fast(v).can_capture
    diagonal = long_diagonal(v)
    bits = [1 << v.sq_to_bit[s] for s in range(1, v.squares + 1)]
    held = {WIN: 0, LOSS: 0, DRAW: 0}       # the lone king alone on the diagonal
    taken = {WIN: 0, LOSS: 0, DRAW: 0}      # one of the three on it, the lone king off it
    longest = 0
    for lone in bits:
        for trio in itertools.combinations([b for b in bits if b != lone], 3):
            three = trio[0] | trio[1] | trio[2]
            if can_capture(0, lone, 0, three, False):
                continue
            byte = tb.probe(0, lone, 0, three, False)
            result = DRAW if byte == 0 else LOSS if byte & 1 else WIN
            if lone & diagonal and not three & diagonal:
                held[result] += 1
            elif three & diagonal and not lone & diagonal:
                taken[result] += 1
                if result == LOSS:
                    longest = max(longest, byte - 1)
    # Holding the diagonal, the lone king is never lost.
    assert held == {WIN: 0, LOSS: 0, DRAW: 13_696}
    # Off it, with one of the three on it: lost but for 40 positions of 39,600 (it attacks
    # two kings at once or is about to), and well inside the 50 plies the no-progress rule allows.
    assert taken == {WIN: 0, LOSS: 39_560, DRAW: 40}
    assert longest <= 50


def test_italian_two_kings_against_one() -> None:
    tb = egtb.tables("italian")
    assert tb is not None
    v = get_variant("italian")
    won, drawn, longest, every_move_loses_a_king = 0, 0, 0, 0
    for lone in range(1, v.squares + 1):
        for two in itertools.combinations([s for s in range(1, v.squares + 1) if s != lone], 2):
            pos = kings("italian", "W", two, (lone,))
            verdict = tb.verdict(pos)
            assert verdict is not None and verdict.result != LOSS, pos.fen()
            if verdict.result == WIN:
                won += 1
                longest = max(longest, verdict.plies)
            else:
                drawn += 1
                after = [pos.play(m) for m in pos.legal_moves()]
                if all(p.legal_moves()[0].captured for p in after):
                    every_move_loses_a_king += 1
    assert (won, drawn, longest) == (14_846, 34, 33)
    # Most draws: whatever the two kings do, the lone king takes one of them.
    assert every_move_loses_a_king == 26


def test_the_engine_wins_three_kings_against_one_and_draws_on_the_diagonal() -> None:
    off = Position.from_fen("spanish", "W:WK2,K3,K4:BK15")
    result = search_position(off, 64, 1.0)
    assert result.score > 99_000
    on = Position.from_fen("spanish", "B:WK2,K3,K4:BK19")   # 19: on the long diagonal
    assert search_position(on, 64, 1.0).score == 0
