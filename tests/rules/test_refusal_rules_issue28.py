"""Issue 28, items 7 and 8: a refused capture names the rule that really stops it.

A capture typed on past the square where a man is crowned (docs/rules.md §3.7), and a Spanish
flying king jumping two pieces that stand next to each other (docs/rules.md §4, spanish)."""

import pytest

from bot.rules import Detail, ErrorCode, IllegalMove, Position


def reject(variant: str, fen: str, text: str) -> IllegalMove:
    pos = Position.from_fen(variant, fen)
    before = pos.fen()
    with pytest.raises(IllegalMove) as info:
        pos.parse_move(text)
    assert pos.fen() == before
    return info.value


@pytest.mark.parametrize(
    "variant, fen, text, legal",
    [
        ("spanish", "W:W6,10,15,20,22,26:B9,18,19,K27,K28", "22x31x24", "22x31"),
        ("triestina", "W:W15,38,43:B8,9,K26", "15x4x13", "15x4"),
        ("italian", "W:W11:B5,6", "11x2x9", "11x2"),
        # Beyond the crowning square lies a king: still the crowning, not "a man cannot take a king".
        ("italian", "W:W11:BK5,6", "11x2x9", "11x2"),
        # Black crowns on the other edge.
        ("italian", "B:W27,28:B22", "22x31x24", "22x31"),
    ],
)
def test_capture_past_the_crowning_square_names_the_crowning(variant, fen, text, legal):
    err = reject(variant, fen, text)
    assert err.code == ErrorCode.ILLEGAL_CAPTURE
    assert err.detail == Detail.CROWNED_STOPS
    assert [str(m) for m in err.moves] == [legal]


@pytest.mark.parametrize("text", ["1x19", "1x23", "1-19"])
def test_flying_king_over_two_adjacent_pieces_names_the_rule(text):
    err = reject("spanish", "W:WK1:B10,14,29", text)
    assert err.code == ErrorCode.ILLEGAL_CAPTURE
    assert err.detail == Detail.TWO_IN_A_ROW


@pytest.mark.parametrize(
    "variant, fen, text",
    [
        # A short-range king over two pieces: its range is the reason, as before.
        ("italian", "W:WK32:B27,23", "32x18"),
        # A man jumping over a king in Italian, with no crowning on the way: that rule stays.
        ("italian", "W:W22:BK18", "22x13"),
    ],
)
def test_other_refusals_keep_their_reason(variant, fen, text):
    err = reject(variant, fen, text)
    assert err.detail not in (Detail.TWO_IN_A_ROW, Detail.CROWNED_STOPS)
