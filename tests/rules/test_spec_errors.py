"""Every ErrorCode of the bot.rules API exercised through Position.parse_move / Game.play.

Board diagrams: '.' light, '-' empty dark, w/W white man/king, b/B black
man/king; row 0 at the top.  Square numbers as in test_spec_worked_cases.py:

    italian (8x8)                 spanish (8x8, = 33 - italian)
     1  .  2  .  3  .  4  .        32  . 31  . 30  . 29  .
     .  5  .  6  .  7  .  8         . 28  . 27  . 26  . 25
     9  . 10  . 11  . 12  .        24  . 23  . 22  . 21  .
     . 13  . 14  . 15  . 16         . 20  . 19  . 18  . 17
    17  . 18  . 19  . 20  .        16  . 15  . 14  . 13  .
     . 21  . 22  . 23  . 24         . 12  . 11  . 10  .  9
    25  . 26  . 27  . 28  .         8  .  7  .  6  .  5  .
     . 29  . 30  . 31  . 32         .  4  .  3  .  2  .  1
"""

import pytest

from bot.rules import Detail, ErrorCode, Game, IllegalMove, Position


def moves(pos):
    return sorted(str(m) for m in pos.legal_moves())


def reject(pos, text):
    """parse_move must raise IllegalMove; the position must not change."""
    before = pos.fen()
    with pytest.raises(IllegalMove) as info:
        pos.parse_move(text)
    assert pos.fen() == before
    return info.value


def strs(ms):
    return sorted(str(m) for m in ms)


# ---------------------------------------------------------------------------
# MALFORMED


@pytest.mark.parametrize("text", ["hello", "", "   ", "x", "-", "a1-b2", "22-?", "twenty-two"])
def test_malformed(text):
    err = reject(Position.start("italian"), text)
    assert err.code == ErrorCode.MALFORMED


def test_malformed_through_game():
    game = Game("italian")
    with pytest.raises(IllegalMove) as info:
        game.play("e3-d4")
    assert info.value.code == ErrorCode.MALFORMED
    assert game.moves == []


# ---------------------------------------------------------------------------
# NOT_YOUR_TURN


def test_not_your_turn():
    game = Game("italian")
    start = game.position
    with pytest.raises(IllegalMove) as info:
        game.play("22-18", by="B")
    assert info.value.code == ErrorCode.NOT_YOUR_TURN
    assert game.position == start and game.moves == []
    game.play("22-18", by="W")
    with pytest.raises(IllegalMove) as info:
        game.play("9-13", by="W")
    assert info.value.code == ErrorCode.NOT_YOUR_TURN
    assert len(game.moves) == 1
    game.play("9-13", by="B")
    assert len(game.moves) == 2


# ---------------------------------------------------------------------------
# NO_PIECE / NOT_YOUR_PIECE


@pytest.mark.parametrize(
    "variant, text, square",
    [("italian", "17-13", 17), ("spanish", "16-20", 16), ("triestina", "26-21", 26)],
)
def test_no_piece(variant, text, square):
    err = reject(Position.start(variant), text)
    assert err.code == ErrorCode.NO_PIECE
    assert tuple(err.squares) == (square,)


@pytest.mark.parametrize(
    "variant, text, square",
    # black men, white to move
    [("italian", "9-13", 9), ("spanish", "24-20", 24), ("triestina", "16-21", 16)],
)
def test_not_your_piece(variant, text, square):
    err = reject(Position.start(variant), text)
    assert err.code == ErrorCode.NOT_YOUR_PIECE
    assert tuple(err.squares) == (square,)


def test_not_your_piece_black_to_move():
    game = Game("italian")
    game.play("22-18")
    with pytest.raises(IllegalMove) as info:
        game.play("18-14")
    assert info.value.code == ErrorCode.NOT_YOUR_PIECE
    assert tuple(info.value.squares) == (18,)


# ---------------------------------------------------------------------------
# ILLEGAL_STEP  squares=(from, to)

#   "W:W22:B13,18" (italian)        "W:W18:B1"           "W:W29:B1"
#    b . - . - . - .                 b . - . - . - .      b . - . - . - .
#    . - . - . - . -                 . - . - . - . -      . - . - . - . -
#    - . - . - . - .                 - . - . - . - .      - . - . - . - .
#    . b . - . - . -                 . - . - . - . -      . - . - . - . -
#    - . b . - . - .                 - . w . - . - .      - . - . - . - .
#    . - . w . - . -                 . - . - . - . -      . - . - . - . -
#    - . - . - . - .                 - . - . - . - .      - . - . - . - .
#    . - . - . - . -                 . - . - . - . -      . w . - . - . -
#  ("W:W22:B13,18" has black men on 13 and 18 and no capture: 13 is occupied.)


@pytest.mark.parametrize(
    "variant, fen, text, squares",
    [
        ("italian", "W:W21-32:B1-12", "26-22", (26, 22)),  # own piece on 22
        ("italian", "W:W22:B13,18", "22-18", (22, 18)),  # enemy piece on 18, no capture
        ("italian", "W:W18:B1", "18-22", (18, 22)),  # man backward
        ("italian", "W:W18:B1", "18-23", (18, 23)),  # not diagonal
        ("italian", "W:W22:B1", "22-23", (22, 23)),  # same row
        ("italian", "W:W29:B1", "29-15", (29, 15)),  # a man 4 squares along the diagonal
        ("italian", "W:WK29:B1", "29-15", (29, 15)),  # italian king: one square only
        ("spanish", "W:WK1,14:B29", "1-14", (1, 14)),  # flying king onto its own man
    ],
)
def test_illegal_step(variant, fen, text, squares):
    err = reject(Position.from_fen(variant, fen), text)
    assert err.code == ErrorCode.ILLEGAL_STEP
    assert tuple(err.squares) == squares


def test_spanish_king_through_own_man_is_rejected():
    # K1 -> 23 would cross its own man on 19.  Whether this reads as a blocked plain
    # move (ILLEGAL_STEP) or as a "capture" over its own piece (ILLEGAL_CAPTURE) is
    # not fixed by docs/rules.md/the bot.rules API, so both codes are accepted here.
    err = reject(Position.from_fen("spanish", "W:WK1,19:B29"), "1-23")
    assert err.code in (ErrorCode.ILLEGAL_STEP, ErrorCode.ILLEGAL_CAPTURE)


def test_illegal_step_spanish_man_backward():
    # spanish man on 15 = (4,2), 11 = (5,3) behind it: backward for White.
    err = reject(Position.from_fen("spanish", "W:W15:B32"), "15-11")
    assert err.code == ErrorCode.ILLEGAL_STEP
    assert tuple(err.squares) == (15, 11)


def test_illegal_step_black_man_backward():
    # italian black man on 18 = (4,2), black to move: 13/14 are backward for Black.
    err = reject(Position.from_fen("italian", "B:W32:B18"), "18-14")
    assert err.code == ErrorCode.ILLEGAL_STEP
    assert tuple(err.squares) == (18, 14)


# ---------------------------------------------------------------------------
# CAPTURE_COMPULSORY  moves = legal captures


@pytest.mark.parametrize(
    "variant, fen, text, captures",
    [
        # man 22 can take 18 landing on 13; 32-27 is a plain move.
        ("italian", "W:W22,32:B18", "32-27", ["22x13"]),
        # same board in spanish numbers.
        ("spanish", "W:W1,11:B15", "1-5", ["11x20"]),
        # triestina: man 33 = (6,4) takes 27 = (5,3) landing on 22 = (4,2).
        ("triestina", "W:W33,50:B27", "50-45", ["33x22"]),
    ],
)
def test_capture_compulsory(variant, fen, text, captures):
    pos = Position.from_fen(variant, fen)
    assert moves(pos) == captures
    err = reject(pos, text)
    assert err.code == ErrorCode.CAPTURE_COMPULSORY
    assert strs(err.moves) == captures


def test_capture_compulsory_other_piece_through_game():
    game = Game("italian", "W:W22,32:B18")
    with pytest.raises(IllegalMove) as info:
        game.play("32-28")
    assert info.value.code == ErrorCode.CAPTURE_COMPULSORY
    assert strs(info.value.moves) == ["22x13"]
    assert game.moves == [] and game.position == Position.from_fen("italian", "W:W22,32:B18")


# ---------------------------------------------------------------------------
# Priority errors: LAW_OF_QUANTITY, KING_MUST_CAPTURE, LAW_OF_QUALITY, KING_EARLIEST.
# Positions are the worked cases of test_spec_worked_cases.py (diagrams there).


@pytest.mark.parametrize(
    "variant, fen, typed, legal, code",
    [
        # 2 men (29x22x13) against 1 king (32x23)
        ("italian", "W:W19,29,K32:B18,26,K28", "32x23", ["29x22x13"], ErrorCode.LAW_OF_QUANTITY),
        ("spanish", "W:WK1,4,14:BK5,7,15", "1x10", ["4x11x20"], ErrorCode.LAW_OF_QUANTITY),
        ("triestina", "W:W34,46,K50:B32,42,K45", "50x39", ["46x37x26"], ErrorCode.LAW_OF_QUANTITY),
        # promoting capture (1 piece) against 2 pieces
        ("italian", "W:W11,29:B5,6,18,26", "11x2", ["29x22x13"], ErrorCode.LAW_OF_QUANTITY),
        ("spanish", "W:W4,22:B7,15,27,28", "22x31", ["4x11x20"], ErrorCode.LAW_OF_QUANTITY),
        ("triestina", "W:W13,46:B6,7,32,42", "13x2", ["46x37x26"], ErrorCode.LAW_OF_QUANTITY),
        # spanish king: a landing square that does not continue, when continuing takes more
        ("spanish", "W:WK1:B10,22", "1x14", ["1x19x26", "1x19x29"], ErrorCode.LAW_OF_QUANTITY),
        # man against king, 1 man each
        ("italian", "W:W19,29,K32:B26,28", "29x22", ["32x23"], ErrorCode.KING_MUST_CAPTURE),
        ("triestina", "W:W34,46,K50:B42,45", "46x37", ["50x39"], ErrorCode.KING_MUST_CAPTURE),
        # a promoting man is still a man
        ("italian", "W:W11,K32:B6,28", "11x2", ["32x23"], ErrorCode.KING_MUST_CAPTURE),
        ("triestina", "W:W13,K50:B7,45", "13x2", ["50x39"], ErrorCode.KING_MUST_CAPTURE),
        # same capturer, one takes a king
        ("italian", "W:WK30:B26,K27", "30x21", ["30x23"], ErrorCode.LAW_OF_QUALITY),
        ("triestina", "W:WK47:B42,K43", "47x36", ["47x38"], ErrorCode.LAW_OF_QUALITY),
        ("spanish", "W:WK3:BK6,7", "3x12", ["3x10", "3x13", "3x17"], ErrorCode.LAW_OF_QUALITY),
        ("spanish", "W:W3:BK6,7", "3x12", ["3x10"], ErrorCode.LAW_OF_QUALITY),
        ("spanish", "W:WK1,4,14:B5,K7", "1x10", ["4x11"], ErrorCode.LAW_OF_QUALITY),
        # king met at jump 2 instead of jump 1
        ("italian", "W:WK30:B18,K20,K26,27", "30x23x16", ["30x21x14"], ErrorCode.KING_EARLIEST),
        ("triestina", "W:WK47:B32,K34,K42,43", "47x38x29", ["47x36x27"], ErrorCode.KING_EARLIEST),
    ],
)
def test_priority_errors(variant, fen, typed, legal, code):
    pos = Position.from_fen(variant, fen)
    assert moves(pos) == sorted(legal)
    err = reject(pos, typed)
    assert err.code == code
    assert strs(err.moves) == sorted(legal)
    assert err.attempted is not None
    assert str(err.attempted) == typed


def test_priority_error_through_game_leaves_position():
    fen = "W:W19,29,K32:B18,26,K28"
    game = Game("italian", fen)
    with pytest.raises(IllegalMove) as info:
        game.play("32x23")
    assert info.value.code == ErrorCode.LAW_OF_QUANTITY
    assert game.position == Position.from_fen("italian", fen)
    assert game.moves == []
    assert str(game.play("29x22x13")) == "29x22x13"


# ---------------------------------------------------------------------------
# MAN_CANNOT_TAKE_KING


@pytest.mark.parametrize(
    "variant, fen, text",
    [
        ("italian", "W:W22:B1,K18", "22x13"),  # man 22 over king 18
        ("triestina", "W:W33:B1,K28", "33x24"),  # man 33 over king 28
        # black man 11 = (2,4) over the white king on 15 = (3,5), landing 20 = (4,6)
        ("italian", "B:WK15,32:B11", "11x20"),
    ],
)
def test_man_cannot_take_king(variant, fen, text):
    err = reject(Position.from_fen(variant, fen), text)
    assert err.code == ErrorCode.MAN_CANNOT_TAKE_KING


def test_man_cannot_take_king_even_inside_a_sequence():
    # italian: man 29 takes 26 landing 22, then the king on 18 stops it (13 free).
    #  - . - . - . - .
    #  . - . - . - . -
    #  - . - . - . b .      (b on 12: black still has a man)
    #  . - . - . - . -
    #  - . B . - . - .
    #  . - . - . - . -
    #  - . b . - . - .
    #  . w . - . - . -
    pos = Position.from_fen("italian", "W:W29:B12,K18,26")
    assert moves(pos) == ["29x22"]
    err = reject(pos, "29x22x13")
    assert err.code == ErrorCode.MAN_CANNOT_TAKE_KING


# ---------------------------------------------------------------------------
# CAPTURE_NOT_FINISHED  moves = the legal captures that continue the typed path


@pytest.mark.parametrize(
    "variant, fen, typed, continuations",
    [
        # man 29 takes 26 (landing 22) and must go on over 18 to 13.
        ("italian", "W:W29:B18,26", "29x22", ["29x22x13"]),
        ("spanish", "W:W4:B7,15", "4x11", ["4x11x20"]),
        ("triestina", "W:W46:B32,42", "46x37", ["46x37x26"]),
        # spanish king: landing 19 must continue over 22.
        ("spanish", "W:WK1:B10,22", "1x19", ["1x19x26", "1x19x29"]),
        # king loops (all men, no king anywhere): stopping early, in either direction.
        ("triestina", "W:WK7:B12,13,22,23,45", "7x18x27x16", None),
        ("triestina", "W:WK7:B12,13,22,23,45", "7x16x27x18", None),
        ("triestina", "W:WK7:B12,13,22,23,45", "7x18", None),
        ("triestina", "W:WK7:B12,13,22,23,45", "7x16", None),
        ("italian", "W:WK6:B10,11,18,19,28", "6x15x22x13", None),
        ("italian", "W:WK6:B10,11,18,19,28", "6x13x22x15", None),
        ("italian", "W:WK6:B10,11,18,19,28", "6x15", None),
        ("italian", "W:WK6:B10,11,18,19,28", "6x13", None),
    ],
)
def test_capture_not_finished(variant, fen, typed, continuations):
    pos = Position.from_fen(variant, fen)
    err = reject(pos, typed)
    assert err.code == ErrorCode.CAPTURE_NOT_FINISHED
    if continuations is None:
        # the loop: the continuation is the one legal move, however its path is written
        (move,) = pos.legal_moves()
        assert [m.captured for m in err.moves] == [move.captured]
    else:
        assert strs(err.moves) == continuations


# ---------------------------------------------------------------------------
# ILLEGAL_CAPTURE


@pytest.mark.parametrize(
    "variant, fen, text",
    [
        ("italian", "W:W22:B1", "22x13"),  # nothing to jump on 18
        ("italian", "W:W18,22:B1", "22x13"),  # jumps its own man
        ("italian", "W:W22:B13,18", "22x13"),  # lands on an occupied square
        ("italian", "W:W18:B22", "18x27"),  # man jumping backward
        ("italian", "W:W29:B18,26", "29x22x15"),  # second jump over an empty square
        ("spanish", "W:WK1,14:B10", "1x19"),  # 10 and the king's own man 14 in a row
        ("spanish", "W:WK1,12:B5,10", "1x14"),  # two pieces in a row cannot be jumped
        ("triestina", "W:WK7:B12,13,22,23,45", "7x18x27x16x7x18"),  # same man twice
        ("spanish", "W:WK4:B6,11,22,23", "4x18x27x20x2"),  # over a captured man
    ],
)
def test_illegal_capture(variant, fen, text):
    err = reject(Position.from_fen(variant, fen), text)
    assert err.code == ErrorCode.ILLEGAL_CAPTURE


# ---------------------------------------------------------------------------
# AMBIGUOUS  moves = the candidates

#   italian "W:W30:B18,19,26,27": 30x21x14 and 30x23x14, both "30x14"
#    - . - . - . - .
#    . - . - . - . -
#    - . - . - . - .
#    . - . - . - . -
#    - . b . b . - .
#    . - . - . - . -
#    - . b . b . - .
#    . - . w . - . -


@pytest.mark.parametrize(
    "variant, fen, short, candidates",
    [
        ("italian", "W:W30:B18,19,26,27", "30x14", ["30x21x14", "30x23x14"]),
        ("spanish", "W:W3:B6,7,14,15", "3x19", ["3x10x19", "3x12x19"]),
        ("triestina", "W:W47:B32,33,42,43", "47x27", ["47x36x27", "47x38x27"]),
    ],
)
def test_ambiguous(variant, fen, short, candidates):
    pos = Position.from_fen(variant, fen)
    assert moves(pos) == candidates
    err = reject(pos, short)
    assert err.code == ErrorCode.AMBIGUOUS
    assert strs(err.moves) == candidates
    # each full form is accepted
    for text in candidates:
        assert str(pos.parse_move(text)) == text


# ---------------------------------------------------------------------------
# GAME_OVER


def test_game_over_after_last_piece_taken():
    game = Game("italian", "W:W22,32:B18")
    game.play("22x13")
    assert game.result is not None
    with pytest.raises(IllegalMove) as info:
        game.play("32-27")
    assert info.value.code == ErrorCode.GAME_OVER
    assert len(game.moves) == 1


@pytest.mark.parametrize("finish", ["resign", "agree", "time"])
def test_game_over_after_resign_agreement_time(finish):
    game = Game("spanish")
    game.play("11-15")
    if finish == "resign":
        game.resign("B")
    elif finish == "agree":
        game.agree_draw()
    else:
        game.lose_on_time("B")
    with pytest.raises(IllegalMove) as info:
        game.play("22-18")
    assert info.value.code == ErrorCode.GAME_OVER
    assert len(game.moves) == 1


# ---------------------------------------------------------------------------
# Position.play with a move that is not legal there


def test_play_rejects_foreign_move():
    start = Position.start("italian")
    move = start.parse_move("22-18")
    after = start.play(move)
    with pytest.raises(IllegalMove):
        after.play(move)  # 22 is empty now and it is Black's turn


def test_error_codes_are_the_documented_strings():
    expected = {
        "MALFORMED": "malformed",
        "NOT_YOUR_TURN": "not_your_turn",
        "NO_PIECE": "no_piece",
        "NOT_YOUR_PIECE": "not_your_piece",
        "ILLEGAL_STEP": "illegal_step",
        "CAPTURE_COMPULSORY": "capture_compulsory",
        "LAW_OF_QUANTITY": "law_of_quantity",
        "KING_MUST_CAPTURE": "king_must_capture",
        "LAW_OF_QUALITY": "law_of_quality",
        "KING_EARLIEST": "king_earliest",
        "MAN_CANNOT_TAKE_KING": "man_cannot_take_king",
        "CAPTURE_NOT_FINISHED": "capture_not_finished",
        "ILLEGAL_CAPTURE": "illegal_capture",
        "AMBIGUOUS": "ambiguous",
        "GAME_OVER": "game_over",
    }
    for name, value in expected.items():
        assert getattr(ErrorCode, name) == value


# ---------------------------------------------------------------------------
# A full path that is a real, complete capture but is outranked must be rejected
# with its reason (docs/rules.md §3.10 and §5: "the law of quantity: ... takes 4
# pieces, this takes 2"), not read as an abbreviation of another legal move whose
# path happens to pass through the same squares.
#
#  italian "W:WK13:B10,11,18,19,26"
#    - . - . - . - .
#    . - . - . - . -
#    - . b . b . - .      10, 11
#    . W . - . - . -      13
#    - . b . b . - .      18, 19
#    . - . - . - . -
#    - . b . - . - .      26
#    . - . - . - . -
#  13x22x29 jumps 18 (landing 22) then 26 (landing 29): 2 men, and from 29 nothing
#  more.  The legal captures take 4: 13x6x15x22x29 (10, 11, 19, 26) and the loop
#  13x6x15x22x13 (10, 11, 19, 18).
#
#  spanish "W:W3,K7:B11,12,18,19,20": 7x14x21 takes 11 and 18 (2); the legal
#  captures 7x16x23x14x.. take 4.
#
#  triestina "W:WK26,39:B22,23,32,33,K42,K50": 26x37x46 takes 32 and K42 (2); the
#  legal capture 26x17x28x37x46 takes 4.


@pytest.mark.parametrize(
    "variant, fen, typed, captured, legal",
    [
        ("italian", "W:WK13:B10,11,18,19,26", "13x22x29", (18, 26), ["13x6x15x22x13", "13x6x15x22x29"]),
        (
            "spanish",
            "W:W3,K7:B11,12,18,19,20",
            "7x14x21",
            (11, 18),
            ["7x16x23x14x21", "7x16x23x14x25", "7x16x23x14x4", "7x16x23x14x7"],
        ),
        ("triestina", "W:WK26,39:B22,23,32,33,K42,K50", "26x37x46", (32, 42), ["26x17x28x37x46"]),
    ],
)
def test_outranked_full_path_is_rejected_not_reinterpreted(variant, fen, typed, captured, legal):
    pos = Position.from_fen(variant, fen)
    assert moves(pos) == sorted(legal)
    err = reject(pos, typed)
    assert err.code == ErrorCode.LAW_OF_QUANTITY
    assert str(err.attempted) == typed
    assert err.attempted.captured == captured
    assert strs(err.moves) == sorted(legal)


# ---------------------------------------------------------------------------
# Detail: the one rule a refused step or jump breaks, for the wording (issue 16, item 5)


@pytest.mark.parametrize(
    "variant, fen, text, code, detail",
    [
        # italian king two squares over its own man: kings move and capture one square only
        ("italian", "W:WK12,15:B1", "12-19", ErrorCode.ILLEGAL_CAPTURE, Detail.KING_ONE_SQUARE),
        ("italian", "W:WK29:B1", "29-15", ErrorCode.ILLEGAL_STEP, Detail.KING_ONE_SQUARE),
        ("triestina", "W:WK46:B1", "46-37", ErrorCode.ILLEGAL_STEP, Detail.KING_ONE_SQUARE),
        # spanish flying king through its own man
        ("spanish", "W:WK1,10:B32", "1-19", ErrorCode.ILLEGAL_CAPTURE, Detail.OWN_PIECE),
        ("italian", "W:W18,22:B1", "22x13", ErrorCode.ILLEGAL_CAPTURE, Detail.OWN_PIECE),
        # men stepping or jumping backwards
        ("spanish", "W:W15:B32", "15-11", ErrorCode.ILLEGAL_STEP, Detail.MAN_BACKWARD),
        ("italian", "B:W32:B18", "18-14", ErrorCode.ILLEGAL_STEP, Detail.MAN_BACKWARD),
        ("italian", "W:W18:B22", "18x27", ErrorCode.ILLEGAL_CAPTURE, Detail.MAN_BACKWARD),
    ],
)
def test_refusal_names_the_rule_broken(variant, fen, text, code, detail):
    err = reject(Position.from_fen(variant, fen), text)
    assert err.code == code
    assert err.detail == detail


@pytest.mark.parametrize(
    "variant, fen, text",
    [
        ("italian", "W:W22:B13,18", "22-18"),   # onto an enemy man: no single rule to name
        ("spanish", "W:WK1,14:B29", "1-14"),    # onto its own man
        ("italian", "W:W18:B1", "18-23"),       # not a diagonal
    ],
)
def test_refusal_without_detail(variant, fen, text):
    assert reject(Position.from_fen(variant, fen), text).detail is None
