"""Answering a puzzle: right, wrong but legal, illegal, whole lines, hints, the puzzle of the day."""

from __future__ import annotations

import datetime as dt

from bot.puzzles.solve import Verdict, hint, judge, puzzle_of_day
from bot.rules import ErrorCode, Position

ITALIAN_SHOT = "B:W15,16,17,18,19,21,25,26,31:B1,3,6,7,9,10"


def _puzzle():
    """A golpe's record as the bank holds it (judging does not re-prove it): Black gives a man on
    13, 17x10 is the only reply, then 6x13x22x29 takes three."""
    pos = Position.from_fen("italian", ITALIAN_SHOT)
    assert [str(m) for m in pos.play(pos.parse_move("10-13")).legal_moves()] == ["17x10"]
    line = ["10-13", "17x10", "6x13x22x29"]
    return {"id": "it-test", "variant": "italian", "fen": ITALIAN_SHOT, "solution": line,
            "tree": {"10-13": {"17x10": {"6x13x22x29": {}}}}, "tags": {}, "rating": 1500}


def test_the_key_move_is_right_and_the_forced_reply_is_played():
    answer = judge(_puzzle(), [], "10-13")
    assert answer.verdict is Verdict.RIGHT
    assert answer.played == ["10-13", "17x10"]


def test_completing_the_line_solves_it():
    puzzle = _puzzle()
    assert judge(puzzle, ["10-13", "17x10"], "6x13x22x29").verdict is Verdict.SOLVED
    # The short form of the capture is the same move.
    assert judge(puzzle, ["10-13", "17x10"], "6x29").verdict is Verdict.SOLVED


def test_the_whole_line_at_once_with_or_without_the_reply():
    puzzle = _puzzle()
    assert judge(puzzle, [], "10-13 17x10 6x13x22x29").verdict is Verdict.SOLVED
    assert judge(puzzle, [], "10-13 6x13x22x29").verdict is Verdict.SOLVED


def test_a_legal_move_that_is_not_the_golpe_is_wrong_and_changes_nothing():
    answer = judge(_puzzle(), [], "9-13")
    assert answer.verdict is Verdict.WRONG
    assert answer.played == []


def test_an_illegal_move_names_the_rule():
    answer = judge(_puzzle(), [], "10-5")
    assert answer.verdict is Verdict.ILLEGAL
    assert answer.error is not None and isinstance(answer.error.code, ErrorCode)


def test_the_hint_names_the_piece_that_moves():
    assert hint(_puzzle(), []) == 10
    assert hint(_puzzle(), ["10-13", "17x10"]) == 6


def test_the_puzzle_of_the_day_is_the_same_for_everyone_and_changes_every_day():
    bank = [{"id": f"it-{i:03}"} for i in range(365)]
    days = [dt.date(2027, 1, 1) + dt.timedelta(days=n) for n in range(365)]
    picks = [puzzle_of_day(bank, d, "italian")["id"] for d in days]
    assert len(set(picks)) == 365
    assert puzzle_of_day(bank, days[3], "italian") == puzzle_of_day(list(reversed(bank)), days[3], "italian")
