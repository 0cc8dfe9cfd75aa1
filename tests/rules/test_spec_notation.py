"""docs/rules.md section 2: move notation input/output and FEN.

Board for the italian capture examples, "W:W29:B11,19,26" (29x22x15x6):

     - . - . - . - .        1 .  2 .  3 .  4 .
     . - . - . - . -        .  5 .  6 .  7 .  8
     - . - . b . - .        9 . 10 . 11 . 12 .
     . - . - . - . -        . 13 . 14 . 15 . 16
     - . - . b . - .       17 . 18 . 19 . 20 .
     . - . - . - . -        . 21 . 22 . 23 . 24
     - . b . - . - .       25 . 26 . 27 . 28 .
     . w . - . - . -        . 29 . 30 . 31 . 32
"""

import pytest

from bot.rules import ErrorCode, IllegalMove, Position, format_move

CAPTURE_FEN = "W:W29:B11,19,26"  # italian: the only move is 29x22x15x6


def moves(pos):
    return sorted(str(m) for m in pos.legal_moves())


def test_move_str_and_format_move():
    pos = Position.start("italian")
    m = pos.parse_move("22-18")
    assert str(m) == "22-18" == format_move(m)
    assert m.path == (22, 18)
    assert m.captured == ()
    assert not m.is_capture and not m.promotes

    pos = Position.from_fen("italian", CAPTURE_FEN)
    assert moves(pos) == ["29x22x15x6"]
    (m,) = pos.legal_moves()
    assert str(m) == "29x22x15x6" == format_move(m)
    assert m.path == (29, 22, 15, 6)
    assert m.captured == (11, 19, 26)  # sorted
    assert m.is_capture and not m.promotes


# ---------------------------------------------------------------------------
# full form and short form


def test_full_form_capture():
    pos = Position.from_fen("italian", CAPTURE_FEN)
    assert str(pos.parse_move("29x22x15x6")) == "29x22x15x6"


def test_short_form_capture_when_unique():
    pos = Position.from_fen("italian", CAPTURE_FEN)
    m = pos.parse_move("29x6")
    assert str(m) == "29x22x15x6"
    assert m == pos.legal_moves()[0]


@pytest.mark.parametrize(
    "text",
    ["22-18", "22:18", "22 18", "22\u201318", " 22 - 18 ", "22 : 18", "22 \u2013 18", "  22-18  ", "22  18"],
)
def test_plain_move_separators(text):
    pos = Position.start("italian")
    assert str(pos.parse_move(text)) == "22-18"


@pytest.mark.parametrize(
    "text",
    [
        "29x22x15x6",
        "29:22:15:6",
        "29 22 15 6",
        "29\u201322\u201315\u20136",
        "29 x 22 x 15 x 6",
        " 29x22x15x6 ",
        "29 : 22 : 15 : 6",
        "29x6",
        "29:6",
        "29 6",
        "29\u20136",
        " 29 x 6 ",
    ],
)
def test_capture_separators(text):
    pos = Position.from_fen("italian", CAPTURE_FEN)
    assert str(pos.parse_move(text)) == "29x22x15x6"


@pytest.mark.parametrize("text", ["29-22-15-6", "29-6", "29 - 6"])
def test_dash_separator_in_capture(text):
    # The brief lists '-' among the accepted separators; docs/rules.md says '-' writes a
    # plain move and 'x' a capture.  Kept separate so a failure is easy to classify.
    pos = Position.from_fen("italian", CAPTURE_FEN)
    assert str(pos.parse_move(text)) == "29x22x15x6"


def test_x_separator_in_plain_move():
    pos = Position.start("italian")
    assert str(pos.parse_move("22x18")) == "22-18"


def test_short_form_ambiguous_lists_candidates():
    pos = Position.from_fen("italian", "W:W30:B18,19,26,27")
    with pytest.raises(IllegalMove) as info:
        pos.parse_move("30x14")
    assert info.value.code == ErrorCode.AMBIGUOUS
    assert sorted(str(m) for m in info.value.moves) == ["30x21x14", "30x23x14"]
    assert str(pos.parse_move("30x21x14")) == "30x21x14"
    assert str(pos.parse_move("30 23 14")) == "30x23x14"


def test_short_form_spanish_king_capture():
    # spanish king 1 jumps 10 and must then jump 22 from 19: "1x26" is unique.
    pos = Position.from_fen("spanish", "W:WK1:B10,22")
    assert str(pos.parse_move("1x26")) == "1x19x26"
    assert str(pos.parse_move("1:29")) == "1x19x29"


def test_parse_returns_a_legal_move_usable_with_play():
    pos = Position.from_fen("italian", CAPTURE_FEN)
    after = pos.play(pos.parse_move("29x6"))
    assert after.pieces() == {6: "w"}
    assert after.turn == "B"


# ---------------------------------------------------------------------------
# FEN


START_FENS = {
    "italian": "W:W" + ",".join(map(str, range(21, 33))) + ":B" + ",".join(map(str, range(1, 13))),
    "spanish": "W:W" + ",".join(map(str, range(1, 13))) + ":B" + ",".join(map(str, range(21, 33))),
    "triestina": "W:W" + ",".join(map(str, range(31, 51))) + ":B" + ",".join(map(str, range(1, 21))),
}
START_RANGES = {
    "italian": "W:W21-32:B1-12",
    "spanish": "W:W1-12:B21-32",
    "triestina": "W:W31-50:B1-20",
}


@pytest.mark.parametrize("variant", ["italian", "spanish", "triestina"])
def test_start_position_fen(variant):
    start = Position.start(variant)
    assert start.fen() == START_FENS[variant]
    assert start.turn == "W"
    assert Position.from_fen(variant, START_RANGES[variant]) == start
    assert Position.from_fen(variant, START_FENS[variant]) == start
    assert Position.from_fen(variant, START_RANGES[variant]).fen() == START_FENS[variant]


@pytest.mark.parametrize(
    "variant, fen_in, fen_out",
    [
        ("italian", "W:W30,K22,21:B3,1,K2", "W:W21,K22,30:B1,K2,3"),
        ("italian", "B:W21-24,K30,26-28:B1-3,K9", "B:W21,22,23,24,26,27,28,K30:B1,2,3,K9"),
        ("spanish", "W:WK32,1:BK31,20", "W:W1,K32:B20,K31"),
        ("triestina", "B:W46-50,K10:B1-5,K41", "B:WK10,46,47,48,49,50:B1,2,3,4,5,K41"),
    ],
)
def test_fen_output_is_explicit_and_sorted(variant, fen_in, fen_out):
    pos = Position.from_fen(variant, fen_in)
    assert pos.fen() == fen_out
    assert Position.from_fen(variant, fen_out) == pos


@pytest.mark.parametrize(
    "variant, fen, pieces",
    [
        ("italian", "W:W21,K22,30:B1,K2,3", {21: "w", 22: "W", 30: "w", 1: "b", 2: "B", 3: "b"}),
        ("spanish", "B:WK5:B20-22", {5: "W", 20: "b", 21: "b", 22: "b"}),
        ("triestina", "W:W50:BK1", {50: "w", 1: "B"}),
    ],
)
def test_fen_pieces_and_turn(variant, fen, pieces):
    pos = Position.from_fen(variant, fen)
    assert pos.pieces() == pieces
    assert pos.turn == fen[0]
    for square in range(1, pos.variant.squares + 1):
        assert pos.piece_at(square) == pieces.get(square)


@pytest.mark.parametrize(
    "variant, fen",
    [
        ("italian", "W:W21,K22,30:B1,K2,3"),
        ("italian", "B:W17,K32:B5,K29"),
        ("spanish", "W:W1,2,K16:BK12,30"),
        ("spanish", "B:WK3:BK6,7"),
        ("triestina", "W:W31,K50:B1,K45"),
        ("triestina", "B:W40,41:B11,K12,20"),
    ],
)
def test_fen_round_trip(variant, fen):
    pos = Position.from_fen(variant, fen)
    assert pos.fen() == fen
    again = Position.from_fen(variant, pos.fen())
    assert again == pos
    assert hash(again) == hash(pos)
    assert again.key == pos.key


@pytest.mark.parametrize(
    "variant, fen",
    [
        ("italian", ""),
        ("italian", "hello"),
        ("italian", "X:W21:B1"),
        ("italian", "W:W33:B1"),  # off the 8x8 board
        ("italian", "W:W0:B1"),
        ("italian", "W:W21-33:B1"),  # range off the board
        ("italian", "W:W21:B21"),  # the same square twice
        ("italian", "W:W21,22:B1,22"),
        ("italian", "W:Wabc:B1"),
        ("italian", "W:W21,K:B1"),
        ("italian", "W:W-3:B1"),
        ("italian", "W:W21:X1"),
        ("spanish", "W:W33:B1"),
        ("spanish", "B:W1-12:B12-32"),  # 12 twice
        ("triestina", "W:W51:B1"),
        ("triestina", "W:W31-51:B1-20"),
    ],
)
def test_bad_fen_raises_value_error(variant, fen):
    with pytest.raises(ValueError):
        Position.from_fen(variant, fen)


def test_same_fen_different_variant_is_a_different_position():
    # A FEN never says its variant: the same text is a different board in spanish.
    it = Position.from_fen("italian", "W:W22:B5")
    sp = Position.from_fen("spanish", "W:W22:B5")
    assert it != sp
    assert it.variant.id == "italian" and sp.variant.id == "spanish"


def test_positions_compare_by_pieces_side_and_variant():
    a = Position.from_fen("italian", "W:W22:B1")
    assert a == Position.from_fen("italian", "W:W22:B1")
    assert a != Position.from_fen("italian", "B:W22:B1")
    assert a.key != Position.from_fen("italian", "B:W22:B1").key
    assert a != Position.from_fen("italian", "W:WK22:B1")
    assert a.key != Position.from_fen("italian", "W:WK22:B1").key
    assert len({a, Position.from_fen("italian", "W:W22:B1")}) == 1


@pytest.mark.parametrize("text", ["22\u221218", "22\u201018", "22 \u2212 18"])
def test_minus_sign_and_hyphen_are_separators(text):
    # Phones and word processors turn '-' into U+2212 (minus) or U+2010 (hyphen).
    pos = Position.start("italian")
    assert str(pos.parse_move(text)) == "22-18"


def test_minus_sign_in_a_capture():
    pos = Position.from_fen("italian", CAPTURE_FEN)
    assert str(pos.parse_move("29\u221222\u221215\u22126")) == "29x22x15x6"
