"""The golpe prover on positions whose answer is known."""

from __future__ import annotations

import pytest

from bot.puzzles.prove import GAIN, MAN, NO_MOVE, Prover, Search, balance, leaf_won, main_line, prove, verify
from bot.rules import VARIANTS, Position

# Italian: Black gives a man on 13 (17x10 is forced), then 6x13x22x29 takes three and crowns.
ITALIAN_SHOT = "B:W15,16,17,18,19,21,25,26,31:B1,3,6,7,9,10"
# Spanish: 11-14 gives a man, 18x11 is forced, then 7x14x23x30 takes three and crowns.
SPANISH_SHOT = "W:W2,4,5,6,7,8,9,10,11,13:B16,18,19,20,22,25,27,29,31,32"
# Italian, Black to move: both 23-28 and 25-29 win at once: two answers make no puzzle.
TWO_WINS = "B:WK3,K13,15,18,30:B9,23,25,K26"


def test_a_sacrifice_then_a_triple_capture_that_leaves_the_solver_behind_is_no_puzzle():
    # Three men for one, but Black started three men down: level or behind after it (issue 17).
    assert prove(Position.from_fen("italian", ITALIAN_SHOT)) is None


def test_the_spanish_shot_with_flying_kings_rules():
    golpe = prove(Position.from_fen("spanish", SPANISH_SHOT))
    assert golpe is not None
    assert golpe.line == ["11-14", "18x11", "7x14x23x30"]
    assert list(golpe.tree) == ["11-14"]
    assert golpe.solver == "W"


def test_a_position_with_two_winning_first_moves_is_rejected():
    assert prove(Position.from_fen("italian", TWO_WINS)) is None


def test_the_start_position_has_no_golpe():
    for variant in VARIANTS:
        assert prove(Position.start(variant)) is None


def test_a_side_already_two_men_up_gets_no_puzzle():
    # The spanish shot with two of Black's far-away men gone: the shot still works, but White is
    # already two men up, so finding it is no puzzle.
    ahead = Position.from_fen("spanish", "W:W2,4,5,6,7,8,9,10,11,13:B16,18,19,20,22,25,27,29")
    assert balance(ahead, "W") >= GAIN
    assert Prover("W", balance(ahead, "W")).solver_node(ahead, 2)
    assert prove(ahead) is None


def test_every_reply_in_the_tree_is_legal_and_every_accepted_move_wins():
    start = Position.from_fen("spanish", SPANISH_SHOT)
    golpe = prove(start)
    base = round(balance(start, "W") * 100)

    def walk(pos, node, solver_turn):
        for text, sub in node.items():
            after = pos.play(pos.parse_move(text))
            if solver_turn and not sub:
                assert leaf_won(after, "W", base)
                assert balance(after, "W") >= GAIN or not after.legal_moves()
            walk(after, sub, not solver_turn)
        if not solver_turn and node:
            assert sorted(node) == sorted(str(m) for m in pos.legal_moves())   # every defence answered

    walk(start, golpe.tree, True)
    assert main_line(golpe.tree) == golpe.line
    record = {"variant": "spanish", "fen": SPANISH_SHOT, "tree": golpe.tree, "solution": golpe.line,
              "tags": {"sacrifices": 1, "longest_capture": 3, "promotion": True, "moves": 2,
                       "themes": ["opening", "sacrifice", "shot", "promotion", "breakthrough", "short"]}}
    assert verify(record) == []


def _plain(gen, king: int, um: int, uk: int, tm: int, tk: int, white: bool, depth: int) -> int:
    """The material search written out plainly: every move made at every node, no table, no cut."""
    moves = gen(um, uk, tm, tk, white)
    if not moves:
        return -NO_MOVE
    if depth <= 0 and not moves[0][0] >> 16:
        return (um.bit_count() - tm.bit_count()) * MAN + (uk.bit_count() - tk.bit_count()) * king
    return max(-_plain(gen, king, cm, ck, cum, cuk, not white, max(depth - 1, 0)) for _k, cm, ck, cum, cuk in moves)


@pytest.mark.parametrize("variant, fen", [
    ("spanish", SPANISH_SHOT), ("italian", ITALIAN_SHOT), ("italian", TWO_WINS),
    ("italian", "W:WK14:BK28"),                 # a king that can be shut in: no move at the horizon
    ("triestina", "B:W17,21,26,30,32,35,40,45,48,49:B3,4,5,11,19,20,23,28,34,K42"),
])
def test_the_search_scores_every_move_as_the_plain_search_does(variant, fen):
    """The margin's search (captures only searched on at the horizon, bounds kept in a table)
    gives each move the value the plain search gives it."""
    pos = Position.from_fen(variant, fen)
    search = Search(variant)
    for depth in (0, 1, 2, 3):
        for move in pos.legal_moves():
            after = pos.play(move)
            expected = -_plain(search.gen, search.king, *after.sides(), after.white, depth)
            assert search.after(pos, move, depth) == expected, (depth, str(move))


def test_a_capture_whose_landing_squares_win_in_different_lengths_keeps_those_within_the_puzzle():
    """Spanish: the flying king's 32x1 wins in two moves, the same capture landing on 5 in three.
    The tree is cut to two moves, so 32x5 (whose defences need a third move) is not accepted;
    before, it stayed with empty answers and working out the main line raised ValueError."""
    golpe = prove(Position.from_fen("spanish", "W:WK32,27:B21,14,13,17"), 3)
    assert golpe is not None
    assert list(golpe.tree) == ["32x1"] and golpe.line[0] == "32x1"
