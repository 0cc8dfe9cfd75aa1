"""The bank's standard looks four plies past the line (issue 28).

Two plies past the line let through puzzles whose key another move ties, or whose key keeps less
than the win, a little further on.  tests/puzzles/data/deeper_failures.jsonl holds five of them as
the bank shipped them (each with ``why`` the issue gave): the prover at the bank's standard
(``verify``, so ``puzzles check``, and the generator's ``accept``) refuses every one, though the
old two-ply margin passed them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bot.puzzles import bank
from bot.puzzles.generate import GENERATE_MOVES, accept
from bot.puzzles.prove import EXTRA_PLIES, prove, verify
from bot.rules import Position

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "data" / "deeper_failures.jsonl"
# Every puzzle the four-ply margin dropped from the bank, with what it found.
DROPPED = Path(__file__).parent / "data" / "deeper_dropped.txt"
NAMED = ("it-c0c1cb666a", "tr-982de5f1a4", "sp-9440fadc52", "sp-ae7471deb0", "it-044f08ccf7")
# What the deeper search finds wrong with each: where, and what.
FOUND = {
    "it-c0c1cb666a": ("[first]", "also wins"),
    "tr-982de5f1a4": ("[first]", "also wins"),
    "sp-9440fadc52": ("[later]", "also wins"),
    "sp-ae7471deb0": ("[first]", "does not win in a deeper search"),
    "it-044f08ccf7": ("[first]", "also wins"),
}


# A copy of the package has a compiled cache of its own (numba keys it by the source's path), so a
# ``python -m bot`` run from it would compile the engine and the material search again, about 10
# CPU-s a test.  There it searches in Python: the same results (tests/puzzles/test_fastprove.py
# compares the two), and what is tested is the command, not the search.
IN_COPY = {**os.environ, "DRAUGHTS_JIT": "off"}

def records() -> dict[str, dict]:
    lines = DATA.read_text(encoding="utf-8").splitlines()
    return {r["id"]: {k: v for k, v in r.items() if k != "why"} for r in map(json.loads, lines) if r}


def test_the_standard_searches_four_plies_past_the_line():
    assert EXTRA_PLIES == 4
    assert sorted(records()) == sorted(NAMED)


@pytest.mark.parametrize("pid", NAMED)
def test_a_puzzle_the_deeper_search_refutes_is_refused(pid):
    record = records()[pid]
    # The margin two plies past the line (the old standard) passed it: the tree and tags are sound.
    assert verify(record, extra_plies=2) == []
    problems = verify(record)
    where, what = FOUND[pid]
    assert any(p.startswith(where) and what in p for p in problems), problems
    assert bank.reprove(record) is not None


@pytest.mark.parametrize("pid", NAMED)
def test_the_generator_does_not_make_a_puzzle_of_it_again(pid):
    record = records()[pid]
    assert accept(prove(Position.from_fen(record["variant"], record["fen"]), GENERATE_MOVES), "test") is None


def test_none_of_them_is_in_the_shipped_bank():
    for pid, record in records().items():
        variant = record["variant"]
        assert bank.by_id(variant, pid) is None
        keys = {Position.from_fen(variant, p["fen"]).key for p in bank.load(variant)}
        assert Position.from_fen(variant, record["fen"]).key not in keys, pid


def test_none_of_the_dropped_puzzles_is_back_in_the_bank():
    lines = [line for line in DROPPED.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    dropped = {line.split("\t")[0] for line in lines}
    assert len(dropped) == len(lines) == 185
    assert set(NAMED) <= dropped
    variants = {"it": "italian", "sp": "spanish", "tr": "triestina"}
    assert [pid for pid in sorted(dropped) if bank.by_id(variants[pid[:2]], pid) is not None] == []


def test_check_names_them_in_a_bank(tmp_path):
    """``python -m bot puzzles check`` on a copy of the package whose Triestina bank holds one of
    them beside two shipped puzzles: it names that one and fails."""
    copy = tmp_path / "pkg"
    shutil.copytree(ROOT / "bot", copy / "bot", ignore=shutil.ignore_patterns("__pycache__"))
    copied = copy / "bot" / "puzzles" / "bank" / "triestina.jsonl"
    good = bank.load("triestina")[:2]
    bad = records()["tr-982de5f1a4"]
    copied.write_text("".join(json.dumps(p) + "\n" for p in [*good, bad]), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "bot", "puzzles", "check", "--variant", "triestina", "--jobs", "1"],
                          cwd=copy, env=IN_COPY, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    named = {line.split(":")[0] for line in done.stdout.splitlines() if line.startswith("tr-")}
    assert named == {"tr-982de5f1a4"}
    assert "1 puzzles failed" in done.stdout
