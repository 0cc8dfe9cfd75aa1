"""What a storm's "wrong" answer names as the move wanted: the tree's move in the position the
player reached, not the main line's when the player went another accepted way."""

from __future__ import annotations

from bot.service.features.storm import _expected

# Two accepted first moves (the same capture landing on two squares), each with its own follow-up.
PUZZLE = {"solution": ["7x14", "20x11", "6x15"],
          "tree": {"7x14": {"20x11": {"6x15": {}}}, "7x21": {"28x19": {"6x13": {}}}}}


def test_the_main_lines_move_on_the_main_line():
    assert _expected(PUZZLE, []) == "7x14"
    assert _expected(PUZZLE, ["7x14", "20x11"]) == "6x15"


def test_the_move_of_the_branch_the_player_took():
    assert _expected(PUZZLE, ["7x21", "28x19"]) == "6x13"
