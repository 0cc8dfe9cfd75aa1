"""The bank's standard (issue 17), as ``prove.verify`` (and so ``python -m bot puzzles check``)
proves it: puzzles the audit found in the old bank are rejected, each for its own reason.

tests/puzzles/data/audit_failures.jsonl holds those old bank records as they were shipped (the
old ``puzzles check`` passed them all), each with ``why`` the audit found it wanting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.puzzles import bank
from bot.puzzles.prove import Search, line_tags, prove, same_capture, verify
from bot.rules import Position

DATA = Path(__file__).parent / "data" / "audit_failures.jsonl"
LOST_SPANISH = ("W:W12,20,24:BK2,K17,18,19,28,29,31", "B:W1,2,5,10,11,24,26,K32:B9,17,19,22,27,31")


def old(why: str) -> list[dict]:
    records = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    chosen = [{k: v for k, v in r.items() if k != "why"} for r in records if r["why"] == why]
    assert chosen, why
    return chosen


@pytest.mark.parametrize("fen", LOST_SPANISH)
def test_the_two_spanish_puzzles_lost_by_force_are_rejected(fen):
    (record,) = [r for r in old("lost") if r["fen"] == fen]
    problem = bank.reprove(record)
    assert problem is not None
    # The line does not leave the solver two men ahead, or a deeper search refutes the key.
    assert "[end]" in problem or "does not win" in problem
    # Nor does the generator make a puzzle of the position.
    golpe = prove(Position.from_fen("spanish", fen))
    assert golpe is None or verify({"variant": "spanish", "fen": fen, "tree": golpe.tree, "solution": golpe.line,
                                    "tags": line_tags("spanish", fen, golpe.line)}) != []


def test_the_lost_spanish_position_really_loses_for_the_side_to_move():
    """What the check rests on: the search sees the solver's key fail (B:... White's 32 king)."""
    pos = Position.from_fen("spanish", LOST_SPANISH[1])
    search = Search("spanish")
    key = pos.parse_move("19-14")
    assert search.after(pos, key, 6) < 200


def test_a_puzzle_with_a_second_winning_first_move_is_rejected():
    (record,) = old("first_alt")
    problem = bank.reprove(record)
    assert problem is not None and "[first]" in problem and "also wins" in problem


def test_a_puzzle_whose_later_turn_accepts_another_winning_move_is_rejected():
    (record,) = old("later_alt")
    problem = bank.reprove(record)
    assert problem is not None and "[later]" in problem


def test_a_puzzle_whose_tree_accepts_two_moves_at_a_later_turn_is_rejected():
    (record,) = old("later_many")
    problem = bank.reprove(record)
    assert problem is not None and "[later]" in problem and "moves accepted" in problem


def test_a_puzzle_that_leaves_the_solver_level_is_rejected():
    (record,) = old("level")
    problem = bank.reprove(record)
    assert problem is not None and "[end]" in problem
    assert bank.check_line(record) is not None


def test_an_exchange_is_not_tagged_as_a_sacrifice():
    (record,) = old("false_sac")
    assert record["tags"]["sacrifices"] >= 1                    # what the old bank said
    assert line_tags(record["variant"], record["fen"], record["solution"])["sacrifices"] == 0
    problem = bank.reprove(record)
    assert problem is not None and "tag sacrifices" in problem


def test_a_man_given_for_three_is_a_sacrifice_and_one_for_one_is_not():
    # Spanish: 11-14 gives a man, 18x11, then 7x14x23x30 takes three: a sacrifice and a shot.
    shot = line_tags("spanish", "W:W2,4,5,6,7,8,9,10,11,13:B16,18,19,20,22,25,27,29,31,32",
                     ["11-14", "18x11", "7x14x23x30"])
    assert shot["sacrifices"] == 1 and "shot" in shot["themes"] and "sacrifice" in shot["themes"]
    # Italian: White plays 17-13, Black must take 9x18, White retakes 22x13 (its
    # only move): man for man, no sacrifice.
    fen = "W:W17,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,11,12,14"
    trade = ["17-13", "9x18", "22x13"]
    pos = Position.from_fen("italian", fen)
    for text in trade:
        pos = pos.play(pos.parse_move(text))            # legal, as the line says
    assert line_tags("italian", fen, trade)["sacrifices"] == 0
    # The same man given, the line stopping before any recapture, is one.
    assert line_tags("italian", fen, trade[:2])["sacrifices"] == 1


def test_every_puzzle_of_the_bank_that_passes_has_one_move_per_main_line_turn():
    """The invariants the solving flow relies on, checked on the shipped bank whole (cheap)."""
    for variant in ("spanish", "italian", "triestina"):
        for p in bank.load(variant):
            node, line = p["tree"], p["solution"]
            for i, text in enumerate(line):
                if i % 2 == 0:
                    # One answer: the key, or the same capture landing elsewhere.
                    pos = Position.from_fen(variant, p["fen"])
                    for earlier in line[:i]:
                        pos = pos.play(pos.parse_move(earlier))
                    assert {same_capture(pos, m) for m in node} == {same_capture(pos, text)}, p["id"]
                    replies = node[text]
                else:
                    node = replies[text]
            assert p["tags"] == {**line_tags(variant, p["fen"], line), "source": p["tags"]["source"]}, p["id"]


def test_a_flying_king_capture_landing_on_either_square_is_one_answer():
    """Spanish: the king on 1 takes 19 landing on 23, 28 or 32 - one capture, one answer; a quiet
    move is its own answer."""
    pos = Position.from_fen("spanish", "W:WK1:B19")
    assert sorted(str(m) for m in pos.legal_moves()) == ["1x23", "1x28", "1x32"]
    assert len({same_capture(pos, m) for m in pos.legal_moves()}) == 1
    quiet = Position.from_fen("spanish", "W:WK1:B30")
    assert len({same_capture(quiet, m) for m in quiet.legal_moves()}) == len(quiet.legal_moves()) > 1
