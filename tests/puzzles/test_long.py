"""Long combinations (issue 33): ``puzzles generate --long`` lengthens proven puzzles back by two
plies (``generate.predecessors``, ``generate.Lengthen``) and goes back to a game's own positions
before each puzzle found (``find(earlier=True)``); every puzzle kept meets the bank's standard."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bot.puzzles import bank
from bot.puzzles.generate import LONG_MOVES, Candidate, Lengthen, find, predecessors
from bot.puzzles.prove import prove, verify
from bot.rules import Position

ROOT = Path(__file__).resolve().parents[2]

# A three-mover of the shipped bank (it-1e05a3145c): Black gives 6-11, 15x6, then 2x11x18x27.
BASE = {"id": "it-1e05a3145c", "variant": "italian",
        "fen": "B:W14,15,21,22,25,26,28,31,32:B1,2,4,5,6,7,13,17,24",
        "solution": ["6-11", "15x6", "2x11x18x27", "31x22", "24x31"],
        "tags": {"moves": 3, "source": "earlier bank: engine game 329, ply 25"}}
# Two plies before it: Black gives 3-6 first (the man on 19 taken by 23x14 opens the way).
LONGER = "B:W15,21,22,23,25,26,28,31,32:B1,2,3,4,5,7,13,17,19,24"
LONGER_LINE = ["3-6", "23x14", "6-11", "15x6", "2x11x18x27", "31x22", "24x31"]


# A copy of the package has a compiled cache of its own (numba keys it by the source's path), so a
# ``python -m bot`` run from it would compile the engine and the material search again, about 10
# CPU-s a test.  There it searches in Python: the same results (tests/puzzles/test_fastprove.py
# compares the two), and what is tested is the command, not the search.
IN_COPY = {**os.environ, "DRAUGHTS_JIT": "off"}

def test_each_position_built_back_leads_to_the_puzzle_by_a_quiet_move_and_a_capture():
    examined = 0
    for puzzle in bank.load("spanish")[:12] + bank.load("triestina")[:6] + [BASE]:
        target = Position.from_fen(puzzle["variant"], puzzle["fen"])
        start = Position.start(puzzle["variant"])
        for before in predecessors(target):
            examined += 1
            assert before.turn == target.turn
            assert all(before.count(c)[0] + before.count(c)[1] <= sum(start.count(c)) for c in "WB")
            assert any(not move.captured and any(reply.captured and after.play(reply).key == target.key
                                                 for reply in after.legal_moves())
                       for move in before.legal_moves() for after in [before.play(move)])
    assert examined > 20
    assert LONGER in {p.fen() for p in predecessors(Position.from_fen("italian", BASE["fen"]))}


def test_a_three_mover_lengthened_back_is_a_proven_four_mover_naming_its_origin():
    lengthen = Lengthen([BASE])
    found = find(lengthen, 5, min_moves=LONG_MOVES, on_proven=lengthen.offer)
    assert len(found) == 1                      # one long puzzle per bank puzzle: they share its end
    puzzle = found[0]
    assert puzzle["fen"] == LONGER and puzzle["solution"] == LONGER_LINE
    assert puzzle["tags"]["moves"] == 4 and "long_combination" in puzzle["tags"]["themes"]
    assert puzzle["tags"]["source"] == ("built 2 plies before puzzle it-1e05a3145c "
                                        "(earlier bank: engine game 329, ply 25)")
    assert verify(puzzle) == []


# A two-mover of the shipped bank (it-381463bca8): 11-14, 18x11, 7x14x23x30.
TWO = {"id": "it-381463bca8", "variant": "italian", "fen": "B:W8,18,19,21,22,25,27,29,31,32:B1,2,4,5,6,7,10,11,16",
       "solution": ["11-14", "18x11", "7x14x23x30"], "tags": {"moves": 2, "source": "engine game 292, ply 17"}}


def test_shorter_puzzles_proven_on_the_way_are_lengthened_again_but_not_kept():
    """The two-mover lengthened gives three-movers (not kept with --long), lengthened once more."""
    heard: list[dict] = []
    lengthen = Lengthen([TWO], most=4)

    def proven(puzzle: dict) -> None:
        heard.append(puzzle)
        lengthen.offer(puzzle)

    found = find(lengthen, 5, min_moves=LONG_MOVES, on_proven=proven)
    assert {p["tags"]["moves"] for p in heard} == {3, 4}
    assert [p["tags"]["moves"] for p in found] == [4]
    # Its line goes through one of the three-movers, which goes through the bank's two-mover.
    assert found[0]["solution"][2:] in [p["solution"] for p in heard if p["tags"]["moves"] == 3]
    assert found[0]["solution"][4:] == TWO["solution"]
    assert found[0]["tags"]["source"] == "built 4 plies before puzzle it-381463bca8 (engine game 292, ply 17)"
    assert verify(found[0]) == []
    as_long = dict(found[0], tags={**found[0]["tags"], "moves": 4})
    assert list(Lengthen([as_long], most=4)) == []          # as long as allowed: nothing to build


def test_earlier_goes_back_to_the_game_s_own_positions_and_keeps_the_longer_puzzle():
    """A game that played into the combination: the three-mover is met at ply 3, its start two
    plies before; the prover (three moves at most) missed it there, so earlier goes back for it."""
    start = Position.from_fen("italian", LONGER)
    assert prove(start, 3) is None
    after_one = start.play(start.parse_move(LONGER_LINE[0]))
    three = after_one.play(after_one.parse_move(LONGER_LINE[1]))
    game = [Candidate(start, "engine game 7, ply 11", "g7", 11),
            Candidate(after_one, "engine game 7, ply 12", "g7", 12),
            Candidate(three, "engine game 7, ply 13", "g7", 13)]
    plain = find(iter(game), 5)
    assert [p["tags"]["moves"] for p in plain] == [3]
    found = find(iter(game), 5, earlier=True)
    assert len(found) == 1
    assert found[0]["fen"] == LONGER and found[0]["tags"]["moves"] == 4
    assert found[0]["tags"]["source"] == "engine game 7, ply 11"
    assert verify(found[0]) == []


def test_generate_long_adds_only_long_puzzles_to_the_bank_it_runs_from(tmp_path):
    copy = tmp_path / "pkg"
    shutil.copytree(ROOT / "bot", copy / "bot", ignore=shutil.ignore_patterns("__pycache__"))
    copied = copy / "bot" / "puzzles" / "bank" / "italian.jsonl"
    shipped = {p["id"]: p for p in map(json.loads, copied.read_text(encoding="utf-8").splitlines())}
    copied.write_text(json.dumps(shipped[BASE["id"]]) + "\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "bot", "puzzles", "generate", "--variant", "italian", "--long",
                           "--count", "1", "--seed", "1", "--pdn", str(tmp_path / "none.pdn")],
                          cwd=copy, env=IN_COPY, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "1 new italian puzzles of 4 solver moves or more; the bank has 2" in done.stdout
    after = [json.loads(line) for line in copied.read_text(encoding="utf-8").splitlines()]
    new = [p for p in after if p["id"] != BASE["id"]]
    assert [p["fen"] for p in new] == [LONGER] and new[0]["tags"]["moves"] >= LONG_MOVES
    assert bank.reprove(new[0]) is None


def test_per_puzzle_allows_more_long_puzzles_built_back_from_one_bank_puzzle():
    lengthen = Lengthen([BASE], per_puzzle=2)
    found = find(lengthen, 10, min_moves=LONG_MOVES, on_proven=lengthen.offer)
    assert len(found) == 2 and len({p["fen"] for p in found}) == 2
    assert {p["solution"][0] for p in found} == {"3-6", "10-13"}
    assert all(p["solution"][2:] == BASE["solution"] and verify(p) == [] for p in found)


@pytest.mark.parametrize("words", [["--long", "--per-puzzle", "0"], ["--per-puzzle", "2"]])
def test_generate_refuses_a_per_puzzle_below_one_or_without_long_and_changes_nothing(tmp_path, words):
    copy = tmp_path / "pkg"
    shutil.copytree(ROOT / "bot", copy / "bot", ignore=shutil.ignore_patterns("__pycache__"))
    copied = copy / "bot" / "puzzles" / "bank" / "italian.jsonl"
    before = copied.read_bytes()
    done = subprocess.run([sys.executable, "-m", "bot", "puzzles", "generate", "--variant", "italian", *words],
                          cwd=copy, env=IN_COPY, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "--per-puzzle" in done.stderr and done.stdout == ""
    assert copied.read_bytes() == before
