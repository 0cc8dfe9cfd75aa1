"""``python -m bot rules ...``: the exact output formats people and scripts rely on."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bot", "rules", *args], cwd=ROOT, input=stdin,
                          capture_output=True, text=True, timeout=120)


def test_moves_prints_one_full_move_per_line():
    out = run("moves", "--variant", "italian", "--fen", "W:WK3:B4,6,K7,8,9,K14,K15,K21,22")
    assert out.returncode == 0
    assert out.stdout.splitlines() == ["3x12x19x10x3"]


def test_moves_json_lists_path_and_sorted_captured():
    out = run("moves", "--variant", "italian", "--fen", "W:WK30:B10,K12,K18,20,K26,K27", "--json")
    assert json.loads(out.stdout) == [{"path": [30, 21, 14, 5], "captured": [10, 18, 26]}]


def test_moves_from_stdin_prints_one_json_list_per_line_in_order():
    fens = ["start", "W:W22:B18", "B:W22:B18", "W:W21-32:B1-12"]
    out = run("moves", "--variant", "italian", "--fen", "-", "--json", stdin="\n".join(fens) + "\n")
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(lines) == 4
    assert len(lines[0]) == 7 and lines[0] == lines[3]
    assert lines[1] == [{"path": [22, 13], "captured": [18]}]
    assert lines[2] == [{"path": [18, 27], "captured": [22]}]


def test_bad_fen_is_a_clear_error_not_a_traceback():
    out = run("moves", "--variant", "spanish", "--fen", "W:W40:B1")
    assert out.returncode == 2
    assert "not on the spanish board" in out.stderr and "Traceback" not in out.stderr


def test_perft_prints_depth_and_leaves_per_line():
    out = run("perft", "--variant", "triestina", "--depth", "4")
    assert out.stdout.splitlines() == ["1 9", "2 81", "3 658", "4 4265"]
    out = run("perft", "--variant", "spanish", "--fen", "B:W3,12,11,16,13,K27:B8,5,24,28,32,30", "--depth", "3")
    assert out.stdout.splitlines() == ["1 1", "2 8", "3 44"]
