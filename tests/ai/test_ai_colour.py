"""The engine plays both colours alike: a position and its colour mirror (board turned half
round, colours swapped, the other side to move) get the same evaluation and the same search
score.  Probed for the Spanish-as-Black losses of the reference match (bench/ai_reference.py).

The search is compared below the depth where late move reductions start (``LMR_DEPTH``), where
alpha-beta's score does not depend on the order of the moves (a difference would be a colour
bug: promotion rows, capture rules, quiescence), and beyond it, where the order matters: the
generator makes moves from the lowest bit up, which is White's most advanced piece but Black's
rearmost, so the search breaks ties in each side's own frame.  A position and its mirror are
then searched move for move alike: same score, same best move, same number of nodes.
"""

from __future__ import annotations

import pytest
from ai_helpers import playout_positions as _playouts

from bot.ai import search_position
from bot.ai.evaluation import evaluator
from bot.ai.search import LMR_DEPTH
from bot.rules import Move, Position, Variant
from bot.rules.variants import registered

# Every variant the engine knows (tests/ai/conftest.py registers the tests' own): the generator's
# colour symmetry must hold whatever the flags say (men capturing backwards, crowning mid-capture).
VARIANTS = [v.id for v in registered()]


def _turned(v: Variant, mask: int) -> int:
    out = 0
    while mask:
        low = mask & -mask
        mask ^= low
        row, col = divmod(low.bit_length() - 1, v.pitch)
        out |= 1 << ((v.size - 1 - row) * v.pitch + (v.size - 1 - col))
    return out


def mirror(pos: Position) -> Position:
    """The same position seen from the other side: each colour's pieces become the other's."""
    v = pos.variant
    return Position(v, _turned(v, pos.bm), _turned(v, pos.bk), _turned(v, pos.wm), _turned(v, pos.wk), not pos.white)


def playout_positions(variant: str, count: int, seed: int) -> list[Position]:
    """Positions from seeded random playouts of 4-60 plies (kings appear in the longer ones)."""
    return _playouts(variant, count, seed, plies=(4, 60))


def test_mirror_is_the_same_position_for_the_rules():
    pos = Position.from_fen("spanish", "B:W1,2,K12:B30,K25")
    turned = mirror(pos)
    # Spanish squares count from White's corner, so turning the board maps square n to 33 - n.
    assert turned.fen() == "W:W3,K8:BK21,31,32"
    assert mirror(turned) == pos
    assert len(turned.legal_moves()) == len(pos.legal_moves())


@pytest.mark.parametrize("variant", VARIANTS)
def test_evaluation_and_shallow_search_are_colour_symmetric(variant):
    ev = evaluator(variant).evaluate
    for pos in playout_positions(variant, 40, seed=3):
        turned = mirror(pos)
        assert ev(*pos.sides(), pos.white) == ev(*turned.sides(), turned.white), pos.fen()
        for depth in range(1, LMR_DEPTH):
            ours = search_position(pos, depth, 1000.0)
            theirs = search_position(turned, depth, 1000.0)
            assert ours.score == theirs.score, (pos.fen(), depth)


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_search_is_the_same_tree_for_both_colours(variant, monkeypatch):
    # The search alone (the endgame tables answer some nodes without a tree).
    monkeypatch.setenv("DRAUGHTS_EGTB", "off")
    depth = LMR_DEPTH + 2
    for pos in playout_positions(variant, 12, seed=7):
        turned = mirror(pos)
        ours = search_position(pos, depth, 1000.0)
        theirs = search_position(turned, depth, 1000.0)
        assert (ours.score, ours.nodes) == (theirs.score, theirs.nodes), pos.fen()
        assert theirs.move == mirror_move(pos, turned, ours.move), pos.fen()


def mirror_move(pos: Position, turned: Position, move: Move) -> Move:
    """The move of ``turned`` that is ``move`` of ``pos`` seen from the other side (turning the
    board maps square n to squares + 1 - n in both numberings)."""
    n = pos.variant.squares + 1
    path = tuple(n - sq for sq in move.path)
    return next(m for m in turned.legal_moves() if m.path == path)
