"""Perft counts and priority positions from the issue (merged moves, docs/rules.md §3.12)."""

import pytest

from bot.rules import Position, perft

START_COUNTS = {
    "italian": [7, 49, 302, 1469, 7361, 36473, 177532, 828783],
    "spanish": [7, 49, 302, 1469, 7361, 36473, 177532],
    "triestina": [9, 81, 658, 4265, 26875, 163555, 1008033],
}
SLOW = {("italian", 8), ("triestina", 7)}


def _start_cases():
    for variant, counts in START_COUNTS.items():
        for depth, count in enumerate(counts, start=1):
            marks = [pytest.mark.slow] if (variant, depth) in SLOW else []
            yield pytest.param(variant, depth, count, marks=marks, id=f"{variant}-d{depth}")


@pytest.mark.parametrize("variant, depth, count", list(_start_cases()))
def test_perft_start(variant, depth, count):
    assert perft(Position.start(variant), depth) == count


POSITIONS = [
    ("italian", "W:W30,26,27,22,23,24,17,18,20:B14,15,16,9,11,5,6,1,3", [5, 13, 42, 107, 360]),
    ("italian", "B:W30,21,22,17,20,K6:B25,28,9,5,1,3", [6, 47, 271, 1916, 10810]),
    ("italian", "W:WK27,K28,17,20,9,K12,8:B21,24,K19,K13,14,K11,4", [13, 112, 828, 6756, 46241]),
    ("spanish", "W:W3,7,6,11,10,9,16,15,13:B19,18,17,24,22,28,27,32,30", [5, 13, 42, 111, 378]),
    ("spanish", "B:W3,12,11,16,13,K27:B8,5,24,28,32,30", [1, 8, 44, 226, 931]),
    ("spanish", "W:WK6,K5,16,13,24,K21,25:B12,9,K14,K20,19,K22,29", [4, 8, 30, 239, 1892]),
]


def _position_cases():
    for n, (variant, fen, counts) in enumerate(POSITIONS):
        for depth, count in enumerate(counts, start=1):
            yield pytest.param(variant, fen, depth, count, id=f"{variant}-pos{n}-d{depth}")


@pytest.mark.parametrize("variant, fen, depth, count", list(_position_cases()))
def test_perft_position(variant, fen, depth, count):
    assert perft(Position.from_fen(variant, fen), depth) == count


def test_perft_depth_one_is_number_of_legal_moves():
    for variant, fen, counts in POSITIONS:
        pos = Position.from_fen(variant, fen)
        assert len(pos.legal_moves()) == counts[0] == perft(pos, 1)


# Italian priority positions from the issue.
#
# "W:WK30:B10,K12,K18,20,K26,K27"      "W:WK3:B4,6,K7,8,9,K14,K15,K21,22"
#   - . - . - . - .                       - . - . W . b .
#   . - . - . - . -                       . - . b . B . b
#   - . b . - . B .                       b . - . - . - .
#   . - . - . - . -                       . - . B . B . -
#   - . B . - . b .                       - . - . - . - .
#   . - . - . - . -                       . B . b . - . -
#   - . B . B . - .                       - . - . - . - .
#   . - . W . - . -                       . - . - . - . -
@pytest.mark.parametrize(
    "fen, only",
    [
        ("W:WK30:B10,K12,K18,20,K26,K27", "30x21x14x5"),
        ("W:WK3:B4,6,K7,8,9,K14,K15,K21,22", "3x12x19x10x3"),
    ],
)
def test_italian_priority_positions(fen, only):
    pos = Position.from_fen("italian", fen)
    assert [str(m) for m in pos.legal_moves()] == [only]
    assert str(pos.parse_move(only)) == only
