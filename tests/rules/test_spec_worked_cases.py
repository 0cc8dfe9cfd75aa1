"""docs/rules.md section 6: every worked case as its own test.

Positions are built by hand.  Each one is given twice, as a FEN and as an
ASCII diagram (see conftest.py: '.' light square, '-' empty dark square,
w/W white man/king, b/B black man/king, row 0 = top = Black's side); the
``position`` fixture checks that both describe the same board.

Square numbers, for reading the FENs and the expected moves:

    italian (8x8)                 spanish (8x8, = 33 - italian)
     1  .  2  .  3  .  4  .        32  . 31  . 30  . 29  .
     .  5  .  6  .  7  .  8         . 28  . 27  . 26  . 25
     9  . 10  . 11  . 12  .        24  . 23  . 22  . 21  .
     . 13  . 14  . 15  . 16         . 20  . 19  . 18  . 17
    17  . 18  . 19  . 20  .        16  . 15  . 14  . 13  .
     . 21  . 22  . 23  . 24         . 12  . 11  . 10  .  9
    25  . 26  . 27  . 28  .         8  .  7  .  6  .  5  .
     . 29  . 30  . 31  . 32         .  4  .  3  .  2  .  1

    triestina (10x10)
     1  .  2  .  3  .  4  .  5  .
     .  6  .  7  .  8  .  9  . 10
    11  . 12  . 13  . 14  . 15  .
     . 16  . 17  . 18  . 19  . 20
    21  . 22  . 23  . 24  . 25  .
     . 26  . 27  . 28  . 29  . 30
    31  . 32  . 33  . 34  . 35  .
     . 36  . 37  . 38  . 39  . 40
    41  . 42  . 43  . 44  . 45  .
     . 46  . 47  . 48  . 49  . 50

White moves up (towards row 0).
"""

import pytest

from bot.rules import IllegalMove


def moves(pos):
    return sorted(str(m) for m in pos.legal_moves())


def signature(move):
    return (move.path[0], move.path[-1], frozenset(move.captured))


# ---------------------------------------------------------------------------
# 1. A man in front of an enemy king with the square behind free:
#    italian and triestina, no capture exists; spanish, the capture is compulsory.

# 8x8: white man on (5,3), black king on (4,2), (3,1) behind it is free.
MAN_VS_KING_8 = """
    b . - . - . - .
    . - . - . - . -
    - . - . - . - .
    . - . - . - . -
    - . B . - . - .
    . - . w . - . -
    - . - . - . - .
    . - . - . - . -
"""
# 10x10: white man on (6,4)=33, black king on (5,5)=28, (4,6)=24 behind it is free.
MAN_VS_KING_10 = """
    b . - . - . - . - .
    . - . - . - . - . -
    - . - . - . - . - .
    . - . - . - . - . -
    - . - . - . - . - .
    . - . - . B . - . -
    - . - . w . - . - .
    . - . - . - . - . -
    - . - . - . - . - .
    . - . - . - . - . -
"""


@pytest.mark.parametrize(
    "variant, fen, diagram, expected",
    [
        # 22 would jump the king on 18 to 13; forbidden, so only the step 22-19.
        ("italian", "W:W22:B1,K18", MAN_VS_KING_8, ["22-19"]),
        # 33 would jump the king on 28 to 24; forbidden, so only the step 33-27.
        ("triestina", "W:W33:B1,K28", MAN_VS_KING_10, ["33-27"]),
    ],
)
def test_man_in_front_of_king_italian_no_capture(position, variant, fen, diagram, expected):
    pos = position(variant, fen, diagram)
    assert moves(pos) == sorted(expected)
    assert not any(m.is_capture for m in pos.legal_moves())


def test_man_in_front_of_king_spanish_capture_compulsory(position):
    # Same board as MAN_VS_KING_8 in spanish numbers: man 11, king 15, 20 free.
    pos = position("spanish", "W:W11:BK15,32", MAN_VS_KING_8)
    assert moves(pos) == ["11x20"]
    (move,) = pos.legal_moves()
    assert move.captured == (15,)
    after = pos.play(move)
    assert after.piece_at(15) is None
    assert after.piece_at(20) == "w"


# ---------------------------------------------------------------------------
# 2. Two captures, one takes 2 men, the other 1 king: all variants take the 2 men.

# 8x8: white king (7,7) can take the black king (6,6) landing on (5,5) (the white man
# on (4,4) stops a spanish king there); white man (7,1) takes (6,2) and (4,2).
TWO_MEN_VS_KING_8 = """
    - . - . - . - .
    . - . - . - . -
    - . - . - . - .
    . - . - . - . -
    - . b . w . - .
    . - . - . - . -
    - . b . - . B .
    . w . - . - . W
"""
TWO_MEN_VS_KING_10 = """
    - . - . - . - . - .
    . - . - . - . - . -
    - . - . - . - . - .
    . - . - . - . - . -
    - . - . - . - . - .
    . - . - . - . - . -
    - . b . - . w . - .
    . - . - . - . - . -
    - . b . - . - . B .
    . w . - . - . - . W
"""


@pytest.mark.parametrize(
    "variant, fen, diagram, expected, rejected",
    [
        ("italian", "W:W19,29,K32:B18,26,K28", TWO_MEN_VS_KING_8, ["29x22x13"], "32x23"),
        ("spanish", "W:WK1,4,14:BK5,7,15", TWO_MEN_VS_KING_8, ["4x11x20"], "1x10"),
        ("triestina", "W:W34,46,K50:B32,42,K45", TWO_MEN_VS_KING_10, ["46x37x26"], "50x39"),
    ],
)
def test_two_men_beat_one_king_all_variants(position, variant, fen, diagram, expected, rejected):
    pos = position(variant, fen, diagram)
    assert moves(pos) == sorted(expected)
    (move,) = pos.legal_moves()
    assert len(move.captured) == 2
    with pytest.raises(IllegalMove):
        pos.parse_move(rejected)


# ---------------------------------------------------------------------------
# 3. Equal count, one by a king, one by a man: italian/triestina must use the king;
#    spanish may choose (both legal) unless the quality law separates them.

# 8x8: king (7,7) takes the man (6,6) landing (5,5) (blocked beyond by the white man
# on (4,4)); man (7,1) takes the piece on (6,2) landing on (5,3).
KING_OR_MAN_8 = """
    - . - . - . - .
    . - . - . - . -
    - . - . - . - .
    . - . - . - . -
    - . - . w . - .
    . - . - . - . -
    - . b . - . b .
    . w . - . - . W
"""
KING_OR_MAN_8_QUALITY = """
    - . - . - . - .
    . - . - . - . -
    - . - . - . - .
    . - . - . - . -
    - . - . w . - .
    . - . - . - . -
    - . B . - . b .
    . w . - . - . W
"""
KING_OR_MAN_10 = """
    - . - . - . - . - .
    . - . - . - . - . -
    - . - . - . - . - .
    . - . - . - . - . -
    - . - . - . - . - .
    . - . - . - . - . -
    - . - . - . w . - .
    . - . - . - . - . -
    - . b . - . - . b .
    . w . - . - . - . W
"""


@pytest.mark.parametrize(
    "variant, fen, diagram, expected, rejected",
    [
        ("italian", "W:W19,29,K32:B26,28", KING_OR_MAN_8, ["32x23"], "29x22"),
        ("triestina", "W:W34,46,K50:B42,45", KING_OR_MAN_10, ["50x39"], "46x37"),
    ],
)
def test_equal_count_king_beats_man_italian(position, variant, fen, diagram, expected, rejected):
    pos = position(variant, fen, diagram)
    assert moves(pos) == sorted(expected)
    with pytest.raises(IllegalMove):
        pos.parse_move(rejected)


def test_equal_count_king_or_man_spanish_free_choice(position):
    pos = position("spanish", "W:WK1,4,14:B5,7", KING_OR_MAN_8)
    assert moves(pos) == ["1x10", "4x11"]


def test_equal_count_king_or_man_spanish_quality_law_separates(position):
    # The man's capture takes a king (7), the king's capture a man (5): quality law.
    pos = position("spanish", "W:WK1,4,14:B5,K7", KING_OR_MAN_8_QUALITY)
    assert moves(pos) == ["4x11"]
    with pytest.raises(IllegalMove):
        pos.parse_move("1x10")


# ---------------------------------------------------------------------------
# 4. Equal count and capturer, one takes a king: all variants must take the king.

# 8x8: a white king on (7,3) between a man (6,2) and a king (6,4).
TAKE_THE_KING_8 = """
    - . - . - . - .
    . - . - . - . -
    - . - . - . - .
    . - . - . - . -
    - . - . - . - .
    . - . - . - . -
    - . b . B . - .
    . - . W . - . -
"""
TAKE_THE_KING_8_MEN = """
    - . - . - . - .
    . - . - . - . -
    - . - . - . - .
    . - . - . - . -
    - . - . - . - .
    . - . - . - . -
    - . b . B . - .
    . - . w . - . -
"""
TAKE_THE_KING_10 = """
    - . - . - . - . - .
    . - . - . - . - . -
    - . - . - . - . - .
    . - . - . - . - . -
    - . - . - . - . - .
    . - . - . - . - . -
    - . - . - . - . - .
    . - . - . - . - . -
    - . b . B . - . - .
    . - . W . - . - . -
"""


@pytest.mark.parametrize(
    "variant, fen, diagram, expected, rejected",
    [
        ("italian", "W:WK30:B26,K27", TAKE_THE_KING_8, ["30x23"], "30x21"),
        ("triestina", "W:WK47:B42,K43", TAKE_THE_KING_10, ["47x38"], "47x36"),
        # spanish flying king: every landing square beyond the king (10, 13, 17) is a move.
        ("spanish", "W:WK3:BK6,7", TAKE_THE_KING_8, ["3x10", "3x13", "3x17"], "3x12"),
        # spanish, both capturers men (spanish men may take kings).
        ("spanish", "W:W3:BK6,7", TAKE_THE_KING_8_MEN, ["3x10"], "3x12"),
    ],
)
def test_equal_count_and_capturer_must_take_king(position, variant, fen, diagram, expected, rejected):
    pos = position(variant, fen, diagram)
    assert moves(pos) == sorted(expected)
    with pytest.raises(IllegalMove):
        pos.parse_move(rejected)


# ---------------------------------------------------------------------------
# 5. Italian 4th criterion: two king captures of 2 pieces each, both take one king,
#    one at jump 1, the other at jump 2: only the first is legal.

# italian: king 30 takes K26 then man 18 (30x21x14: king at jump 1) or man 27 then
# K20 (30x23x16: king at jump 2).
KING_EARLIEST_8 = """
    - . - . - . - .
    . - . - . - . -
    - . - . - . - .
    . - . - . - . -
    - . b . - . B .
    . - . - . - . -
    - . B . b . - .
    . - . W . - . -
"""
# triestina: king 47 takes K42 then man 32 (47x36x27) or man 43 then K34 (47x38x29).
KING_EARLIEST_10 = """
    - . - . - . - . - .
    . - . - . - . - . -
    - . - . - . - . - .
    . - . - . - . - . -
    - . - . - . - . - .
    . - . - . - . - . -
    - . b . - . B . - .
    . - . - . - . - . -
    - . B . b . - . - .
    . - . W . - . - . -
"""


@pytest.mark.parametrize(
    "variant, fen, diagram, expected, rejected",
    [
        ("italian", "W:WK30:B18,K20,K26,27", KING_EARLIEST_8, ["30x21x14"], "30x23x16"),
        ("triestina", "W:WK47:B32,K34,K42,43", KING_EARLIEST_10, ["47x36x27"], "47x38x29"),
    ],
)
def test_italian_fourth_criterion_king_earliest(position, variant, fen, diagram, expected, rejected):
    pos = position(variant, fen, diagram)
    assert moves(pos) == sorted(expected)
    with pytest.raises(IllegalMove):
        pos.parse_move(rejected)


# docs/rules.md §4 (italian 4th criterion) spells out the comparison: kings taken at jumps
# [1, 3] beat [2, 3]; [1, 2] beat [1, 3].  All captures below: by a king, 3 pieces,
# 2 of them kings.

# italian K12: 12x3x10x1 takes K7, 6, K5 (kings at [1, 3]);
#              12x19x26x17 takes 15, K22, K21 (kings at [2, 3]).
KING_EARLIEST_13_23_8 = """
    - . - . - . - .
    . B . b . B . -
    - . - . - . W .
    . - . - . b . -
    - . - . - . - .
    . B . B . - . -
    - . - . - . - .
    . - . - . - . -
"""
# triestina K44: 44x35x24x13 takes K39, 29, K18 ([1, 3]);
#                44x33x22x11 takes 38, K27, K16 ([2, 3]).
KING_EARLIEST_13_23_10 = """
    - . - . - . - . - .
    . - . - . - . - . -
    - . - . - . - . - .
    . B . - . B . - . -
    - . - . - . - . - .
    . - . B . - . b . -
    - . - . - . - . - .
    . - . - . b . B . -
    - . - . - . W . - .
    . - . - . - . - . -
"""
# italian K8: 8x15x24x31 takes K12, K20, 28 ([1, 2]);
#             8x15x22x13 takes K12, 19, K18 ([1, 3]).
KING_EARLIEST_12_13_8 = """
    - . - . - . - .
    . - . - . - . W
    - . - . - . B .
    . - . - . - . -
    - . B . b . B .
    . - . - . - . -
    - . - . - . b .
    . - . - . - . B
"""


@pytest.mark.parametrize(
    "variant, fen, diagram, expected, rejected",
    [
        ("italian", "W:WK12:BK5,6,K7,15,K21,K22", KING_EARLIEST_13_23_8, ["12x3x10x1"], "12x19x26x17"),
        ("triestina", "W:WK44:BK16,K18,K27,29,38,K39", KING_EARLIEST_13_23_10, ["44x35x24x13"], "44x33x22x11"),
        ("italian", "W:WK8:BK12,K18,19,K20,28,K32", KING_EARLIEST_12_13_8, ["8x15x24x31"], "8x15x22x13"),
    ],
)
def test_italian_fourth_criterion_lexicographic(position, variant, fen, diagram, expected, rejected):
    pos = position(variant, fen, diagram)
    assert moves(pos) == sorted(expected)
    with pytest.raises(IllegalMove) as info:
        pos.parse_move(rejected)
    assert info.value.code == "king_earliest"


# ---------------------------------------------------------------------------
# 6. A man that promotes during a capture stops, even when the new king could jump
#    on; and if another capture takes more pieces, the promoting one is illegal.

# 8x8: man (2,4) jumps (1,3) and lands on the far row (0,2); as a king it could
# then take (1,1) landing on (2,0) -- but the move ends on the far row.
PROMOTE_STOPS_8 = """
    - . - . - . - .
    . b . b . - . -
    - . - . w . - .
    . - . - . - . -
    - . - . - . - .
    . - . - . - . -
    - . - . - . - .
    . - . - . - . -
"""
PROMOTE_STOPS_10 = """
    - . - . - . - . - .
    . b . b . - . - . -
    - . - . w . - . - .
    . - . - . - . - . -
    - . - . - . - . - .
    . - . - . - . - . -
    - . - . - . - . - .
    . - . - . - . - . -
    - . - . - . - . - .
    . - . - . - . - . -
"""


@pytest.mark.parametrize(
    "variant, fen, diagram, expected, king_sq, left_sq, taken_sq, too_long",
    [
        ("italian", "W:W11:B5,6", PROMOTE_STOPS_8, "11x2", 2, 5, 6, "11x2x9"),
        ("spanish", "W:W22:B27,28", PROMOTE_STOPS_8, "22x31", 31, 28, 27, "22x31x24"),
        ("triestina", "W:W13:B6,7", PROMOTE_STOPS_10, "13x2", 2, 6, 7, "13x2x11"),
    ],
)
def test_promoting_man_stops_even_if_king_could_jump_on(
    position, variant, fen, diagram, expected, king_sq, left_sq, taken_sq, too_long
):
    pos = position(variant, fen, diagram)
    assert moves(pos) == [expected]
    (move,) = pos.legal_moves()
    assert move.promotes
    assert move.captured == (taken_sq,)
    after = pos.play(move)
    assert after.turn == "B"
    assert after.piece_at(king_sq) == "W"
    assert after.piece_at(left_sq) == "b"
    assert after.piece_at(taken_sq) is None
    with pytest.raises(IllegalMove):
        pos.parse_move(too_long)


# Same promoting capture (which a king could prolong to 2 pieces), plus a man
# that takes 2 pieces: only the 2-piece capture is legal.
PROMOTE_OUTNUMBERED_8 = """
    - . - . - . - .
    . b . b . - . -
    - . - . w . - .
    . - . - . - . -
    - . b . - . - .
    . - . - . - . -
    - . b . - . - .
    . w . - . - . -
"""
PROMOTE_OUTNUMBERED_10 = """
    - . - . - . - . - .
    . b . b . - . - . -
    - . - . w . - . - .
    . - . - . - . - . -
    - . - . - . - . - .
    . - . - . - . - . -
    - . b . - . - . - .
    . - . - . - . - . -
    - . b . - . - . - .
    . w . - . - . - . -
"""


@pytest.mark.parametrize(
    "variant, fen, diagram, expected, rejected",
    [
        ("italian", "W:W11,29:B5,6,18,26", PROMOTE_OUTNUMBERED_8, ["29x22x13"], "11x2"),
        ("spanish", "W:W4,22:B7,15,27,28", PROMOTE_OUTNUMBERED_8, ["4x11x20"], "22x31"),
        ("triestina", "W:W13,46:B6,7,32,42", PROMOTE_OUTNUMBERED_10, ["46x37x26"], "13x2"),
    ],
)
def test_promoting_capture_illegal_when_other_takes_more(position, variant, fen, diagram, expected, rejected):
    pos = position(variant, fen, diagram)
    assert moves(pos) == sorted(expected)
    with pytest.raises(IllegalMove):
        pos.parse_move(rejected)


# ---------------------------------------------------------------------------
# 7. A promoting man counts as a man for "capture with a king".

# 8x8: man (2,4) takes (1,3) and promotes on (0,2); king (7,7) takes (6,6) -> (5,5).
PROMOTER_IS_A_MAN_8 = """
    - . - . - . - .
    . - . b . - . -
    - . - . w . - .
    . - . - . - . -
    - . - . - . - .
    . - . - . - . -
    - . - . - . b .
    . - . - . - . W
"""
PROMOTER_IS_A_MAN_10 = """
    - . - . - . - . - .
    . - . b . - . - . -
    - . - . w . - . - .
    . - . - . - . - . -
    - . - . - . - . - .
    . - . - . - . - . -
    - . - . - . - . - .
    . - . - . - . - . -
    - . - . - . - . b .
    . - . - . - . - . W
"""
# spanish: a white man on (3,3) limits the flying king's landings to (5,5) and (4,4),
# so that no landing square gives the king a second capture.
PROMOTER_IS_A_MAN_SPANISH = """
    - . - . - . - .
    . - . b . - . -
    - . - . w . - .
    . - . w . - . -
    - . - . - . - .
    . - . - . - . -
    - . - . - . b .
    . - . - . - . W
"""


@pytest.mark.parametrize(
    "variant, fen, diagram, expected, rejected",
    [
        ("italian", "W:W11,K32:B6,28", PROMOTER_IS_A_MAN_8, ["32x23"], "11x2"),
        ("triestina", "W:W13,K50:B7,45", PROMOTER_IS_A_MAN_10, ["50x39"], "13x2"),
    ],
)
def test_promoting_man_counts_as_man_for_king_priority(position, variant, fen, diagram, expected, rejected):
    pos = position(variant, fen, diagram)
    assert moves(pos) == sorted(expected)
    with pytest.raises(IllegalMove):
        pos.parse_move(rejected)


def test_promoting_man_counts_as_man_spanish_has_no_king_criterion(position):
    pos = position("spanish", "W:WK1,19,22:B5,27", PROMOTER_IS_A_MAN_SPANISH)
    assert moves(pos) == ["1x10", "1x14", "22x31"]
    promoting = pos.parse_move("22x31")
    assert promoting.promotes


# ---------------------------------------------------------------------------
# 8. A triestina king loop back to its own starting square (7x7) is legal; jumping
#    the same piece twice is not, even when the geometry allows a second pass.

# King on 7 = (1,3); men on 12, 13, 22, 23 form a diamond around (3,3).
# 7x18x27x16x7 (or the other way round, 7x16x27x18x7: same move, docs/rules.md §3.12).
# Back on 7, the captured man on 13 is still there with 18 empty behind it, but it
# may not be jumped a second time.
KING_LOOP_10 = """
    - . - . - . - . - .
    . - . W . - . - . -
    - . b . b . - . - .
    . - . - . - . - . -
    - . b . b . - . - .
    . - . - . - . - . -
    - . - . - . - . - .
    . - . - . - . - . -
    - . - . - . - . b .
    . - . - . - . - . -
"""
KING_LOOP_8 = """
    - . - . - . - .
    . - . W . - . -
    - . b . b . - .
    . - . - . - . -
    - . b . b . - .
    . - . - . - . -
    - . - . - . b .
    . - . - . - . -
"""


@pytest.mark.parametrize(
    "variant, fen, diagram, start, captured, paths, second_pass",
    [
        (
            "triestina",
            "W:WK7:B12,13,22,23,45",
            KING_LOOP_10,
            7,
            (12, 13, 22, 23),
            ("7x18x27x16x7", "7x16x27x18x7"),
            ("7x18x27x16x7x18", "7x16x27x18x7x16"),
        ),
        (
            "italian",
            "W:WK6:B10,11,18,19,28",
            KING_LOOP_8,
            6,
            (10, 11, 18, 19),
            ("6x15x22x13x6", "6x13x22x15x6"),
            ("6x15x22x13x6x15", "6x13x22x15x6x13"),
        ),
    ],
)
def test_triestina_king_loop_back_to_start_square(position, variant, fen, diagram, start, captured, paths, second_pass):
    pos = position(variant, fen, diagram)
    legal = pos.legal_moves()
    assert len(legal) == 1, [str(m) for m in legal]  # both directions are one move
    (move,) = legal
    assert move.path[0] == start and move.path[-1] == start
    assert move.captured == captured
    assert str(move) in paths
    # every way of writing it gives the same move
    for text in (*paths, f"{start}x{start}"):
        assert signature(pos.parse_move(text)) == signature(move)
    after = pos.play(move)
    assert after.piece_at(start) == "W"
    for s in captured:
        assert after.piece_at(s) is None
    # a second pass over an already jumped man is not a move
    for text in second_pass:
        with pytest.raises(IllegalMove):
            pos.parse_move(text)


# ---------------------------------------------------------------------------
# 9. A spanish king capture at a distance with several landing squares.

# King on 1 = (7,7), man on 10 = (5,5), 5 = (6,6) empty between them: the king may
# land on 14, 19, 23, 28 or 32; no landing square allows a further capture
# (the man on 29 at the edge cannot be jumped: nothing behind it).
DISTANCE_LANDINGS = """
    - . - . - . b .
    . - . - . - . -
    - . - . - . - .
    . - . - . - . -
    - . - . - . - .
    . - . - . b . -
    - . - . - . - .
    . - . - . - . W
"""
# Same, with a man on 22 = (2,4): only from landing square 19 = (3,3) can the king
# go on (over 22, landing on 26 or 29), so 19 must be taken and the capture continued.
DISTANCE_CONTINUE = """
    - . - . - . - .
    . - . - . - . -
    - . - . b . - .
    . - . - . - . -
    - . - . - . - .
    . - . - . b . -
    - . - . - . - .
    . - . - . - . W
"""


def test_spanish_distance_capture_each_landing_square_is_a_move(position):
    pos = position("spanish", "W:WK1:B10,29", DISTANCE_LANDINGS)
    assert moves(pos) == ["1x14", "1x19", "1x23", "1x28", "1x32"]
    for m in pos.legal_moves():
        assert m.captured == (10,)


def test_spanish_distance_capture_must_take_continuing_landing(position):
    pos = position("spanish", "W:WK1:B10,22", DISTANCE_CONTINUE)
    assert moves(pos) == ["1x19x26", "1x19x29"]
    for m in pos.legal_moves():
        assert m.captured == (10, 22)
    for text in ("1x14", "1x23", "1x28", "1x32", "1x19"):
        with pytest.raises(IllegalMove):
            pos.parse_move(text)


# ---------------------------------------------------------------------------
# 10. A captured piece, not yet removed, blocks a spanish king's later jump along
#     that line.

# King 4 = (7,1) takes 11 = (5,3) landing on 18 = (3,5), takes 22 = (2,4) landing on
# 27 = (1,3), takes 23 = (2,2) landing on 20 = (3,1) or 16 = (4,0).  From 20 the line
# down-right is 15 (empty), 11 (captured, still on the board), 6 (black man), 2:
# if 11 were removed at once, 4x18x27x20x2 would take 4 pieces.  It must not.
CAPTURED_BLOCKS = """
    - . - . - . - .
    . - . - . - . -
    - . b . b . - .
    . - . - . - . -
    - . - . - . - .
    . - . b . - . -
    - . - . b . - .
    . W . - . - . -
"""


def test_spanish_captured_piece_blocks_later_jump(position):
    pos = position("spanish", "W:WK4:B6,11,22,23", CAPTURED_BLOCKS)
    assert moves(pos) == ["4x18x27x16", "4x18x27x20"]
    for m in pos.legal_moves():
        assert m.captured == (11, 22, 23)
        assert 6 not in m.captured
    with pytest.raises(IllegalMove):
        pos.parse_move("4x18x27x20x2")


# ---------------------------------------------------------------------------
# Basics that the worked cases rely on (docs/rules.md §3.1, §3.7, §4).


@pytest.mark.parametrize(
    "variant, expected",
    [
        ("italian", ["21-17", "21-18", "22-18", "22-19", "23-19", "23-20", "24-20"]),
        ("spanish", ["9-13", "10-13", "10-14", "11-14", "11-15", "12-15", "12-16"]),
        (
            "triestina",
            ["31-26", "32-26", "32-27", "33-27", "33-28", "34-28", "34-29", "35-29", "35-30"],
        ),
    ],
)
def test_opening_moves(variant, expected):
    from bot.rules import Position

    pos = Position.start(variant)
    assert pos.turn == "W"
    assert moves(pos) == sorted(expected)


def test_italian_king_steps_one_square(position):
    # king on 22 = (5,3), nothing else near: 4 single steps.
    pos = position("italian", "W:WK22:B1")
    assert moves(pos) == sorted(["22-18", "22-19", "22-26", "22-27"])


def test_spanish_king_flies(position):
    # king on 1 = (7,7): the whole long diagonal 5, 10, 14, 19, 23, 28, 32 is free.
    pos = position("spanish", "W:WK1:B29")
    assert moves(pos) == sorted(["1-5", "1-10", "1-14", "1-19", "1-23", "1-28", "1-32"])


@pytest.mark.parametrize(
    "variant, fen, move, square, code",
    [
        ("italian", "W:W5:B12", "5-1", 1, "W"),
        ("italian", "B:W32:B25", "25-29", 29, "B"),
        ("spanish", "W:W28:B21", "28-32", 32, "W"),
        ("spanish", "B:W9:B8", "8-4", 4, "B"),
        ("triestina", "W:W6:B25", "6-1", 1, "W"),
        ("triestina", "B:W31:B45", "45-50", 50, "B"),
    ],
)
def test_plain_move_to_far_row_promotes(position, variant, fen, move, square, code):
    pos = position(variant, fen)
    m = pos.parse_move(move)
    assert m.promotes
    assert pos.play(m).piece_at(square) == code


def test_men_never_move_backward(position):
    # italian white man on 18 = (4,2): only 13 and 14 (forward); black man on 15 = (3,5):
    # only 19 and 20 (forward for black).
    pos = position("italian", "W:W18:B15")
    assert moves(pos) == ["18-13", "18-14"]
    black = position("italian", "B:W18:B15")
    assert moves(black) == ["15-19", "15-20"]


def test_capture_is_compulsory_for_the_whole_position(position):
    # italian: man 22 can take 18 (landing 13); man 32 could step, but may not.
    pos = position("italian", "W:W22,32:B18")
    assert moves(pos) == ["22x13"]


def test_men_capture_forward_only(position):
    # italian white man 18 = (4,2) with a black man behind it on 22 = (5,3) and 27 empty:
    # no capture backward.
    pos = position("italian", "W:W18:B22")
    assert moves(pos) == ["18-13", "18-14"]
    # spanish same board: man 15, black man 11, 6 empty.
    pos = position("spanish", "W:W15:B11")
    assert moves(pos) == ["15-19", "15-20"]
