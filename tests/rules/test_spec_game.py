"""Game results (docs/rules.md §3.11, section 4 draws; the bot.rules API Game).

Square numbers as in test_spec_worked_cases.py.  The long king-move sequences
below were checked with an independent reference move generator: only king moves, no
capture, no capture available to the side to move, and no position occurring
twice, so the only way the game can end during them is the no-progress rule.
"""

import pytest

from bot.rules import Game, Position


def play_all(game, text):
    for move in text.split():
        assert game.result is None, (move, game.result)
        game.play(move)


def assert_result(result, score, reason, winner):
    assert result is not None
    assert (result.score, result.reason, result.winner) == (score, reason, winner)


# ---------------------------------------------------------------------------
# no legal move loses: no pieces left


@pytest.mark.parametrize(
    "variant, fen, move, score, winner",
    [
        # italian man 22 takes the last black man on 18 (landing on 13)
        ("italian", "W:W22:B18", "22x13", "1-0", "W"),
        # same board, spanish numbers
        ("spanish", "W:W11:B15", "11x20", "1-0", "W"),
        # triestina man 33 = (6,4) takes 27 = (5,3) landing on 22 = (4,2)
        ("triestina", "W:W33:B27", "33x22", "1-0", "W"),
        # black man 18 = (4,2) takes the last white man on 22 = (5,3), landing on 27
        ("italian", "B:W22:B18", "18x27", "0-1", "B"),
    ],
)
def test_no_pieces_left_loses(variant, fen, move, score, winner):
    game = Game(variant, fen)
    assert game.result is None
    game.play(move)
    assert_result(game.result, score, "no_moves", winner)


# ---------------------------------------------------------------------------
# no legal move loses: all blocked
#
# italian "W:W24,29:B25": after 24-20 the black man on 25 = (6,0) faces the white
# man on 29 = (7,1) and cannot jump it (nothing behind, edge of the board).
#     - . - . - . - .
#     . - . - . - . -
#     - . - . - . - .
#     . - . - . - . -
#     - . - . - . - .
#     . - . - . - . w      <- 24, plays 24-20
#     b . - . - . - .      <- 25
#     . w . - . - . -      <- 29


@pytest.mark.parametrize(
    "variant, fen, move",
    [
        ("italian", "W:W24,29:B25", "24-20"),
        ("spanish", "W:W4,9:B8", "9-13"),
        # triestina: black man 41 = (8,0) against white man 46 = (9,1)
        ("triestina", "W:W40,46:B41", "40-35"),
    ],
)
def test_all_blocked_loses(variant, fen, move):
    game = Game(variant, fen)
    assert game.result is None
    game.play(move)
    assert game.position.legal_moves() == []
    assert_result(game.result, "1-0", "no_moves", "W")


@pytest.mark.parametrize(
    "variant, fen, score, winner",
    [
        # black to move: man 25 = (6,0) blocked by the white man on 29 = (7,1)
        ("italian", "B:W29:B25", "1-0", "W"),
        # white man 32 = (7,7) blocked by black men 28 = (6,6) and 23 = (5,5) behind it
        ("italian", "W:W32:B23,28", "0-1", "B"),
        # same two boards in spanish numbers
        ("spanish", "B:W4:B8", "1-0", "W"),
        ("spanish", "W:W1:B5,10", "0-1", "B"),
    ],
)
def test_game_starting_in_a_lost_position(variant, fen, score, winner):
    game = Game(variant, fen)
    assert game.position.legal_moves() == []
    assert_result(game.result, score, "no_moves", winner)


# ---------------------------------------------------------------------------
# no-progress draws: spanish 50 plies, italian/triestina 80 plies of king moves
# without capture.

SPANISH_50 = (  # spanish W:WK4:BK29
    "4-21 29-15 21-25 15-19 25-29 19-32 29-22 32-10 22-26 10-5 26-21 5-19 21-4 19-10 4-11 "
    "10-28 11-25 28-23 25-21 23-1 21-26 1-28 26-21 28-24 21-25 24-31 25-11 31-9 11-20 9-5 "
    "20-24 5-1 24-6 1-14 6-15 14-18 15-24 18-21 24-20 21-26 20-24 26-19 24-11 19-23 11-6 "
    "23-27 6-24 27-23 24-31 23-30 "
)
ITALIAN_80 = (  # italian W:WK29:BK4
    "29-26 4-8 26-30 8-12 30-26 12-16 26-29 16-12 29-25 12-7 25-29 7-11 29-26 11-6 26-22 "
    "6-10 22-26 10-13 26-29 13-10 29-25 10-13 25-21 13-10 21-18 10-5 18-14 5-1 14-19 1-5 "
    "19-23 5-9 23-27 9-13 27-31 13-17 31-27 17-21 27-22 21-25 22-26 25-29 26-30 29-25 "
    "30-27 25-29 27-23 29-25 23-20 25-29 20-24 29-26 24-28 26-29 28-31 29-25 31-28 25-21 "
    "28-32 21-17 32-28 17-13 28-23 13-10 23-27 10-6 27-31 6-3 31-28 3-6 28-24 6-11 24-28 "
    "11-14 28-23 14-18 23-19 18-21 19-23 21-26 "
)
TRIESTINA_80 = (  # triestina W:WK46:BK5
    "46-42 5-9 42-47 9-14 47-43 14-8 43-47 8-3 47-43 3-7 43-38 7-2 38-34 2-7 34-28 7-13 "
    "28-33 13-18 33-27 18-24 27-23 24-29 23-18 29-34 18-14 34-28 14-8 28-23 8-4 23-27 4-8 "
    "27-33 8-14 33-27 14-18 27-32 18-23 32-36 23-17 36-41 17-23 41-46 23-28 46-42 28-24 "
    "42-46 24-29 46-41 29-25 41-36 25-20 36-41 20-15 41-36 15-10 36-41 10-5 41-36 5-9 "
    "36-42 9-5 42-47 5-9 47-43 9-4 43-38 4-8 38-34 8-3 34-28 3-7 28-34 7-2 34-29 2-6 "
    "29-25 6-1 25-30 1-6 30-35 "
)
SPANISH_RESET = (  # spanish W:WK4,9:BK29,24
    "4-21 29-15 21-7 15-26 7-14 26-15 14-1 15-20 1-19 20-16 19-14 16-12 14-25 12-15 25-21 "
    "15-12 21-18 12-15 18-4 15-8 4-18 8-29 18-27 29-19 27-31 19-32 31-13 32-5 13-31 5-28 "
    "9-13 28-1 31-18 1-32 18-31 32-14 31-22 14-5 22-8 5-1 8-4 1-28 4-25 28-31 25-18 31-28 "
    "18-27 28-1 27-22 1-23 22-12 23-16 12-22 16-7 22-29 7-14 29-25 14-28 25-4 28-23 4-8 "
    "23-14 8-29 14-1 29-12 1-5 12-16 5-14 16-30 14-19 30-16 19-8 16-23 8-26 23-32 26-21 "
    "32-10 21-11 10-23 11-2 23-10 "
)
ITALIAN_RESET = (  # italian W:WK29,24:BK4,9
    "29-25 4-7 25-29 7-12 29-26 12-16 26-21 16-20 21-18 20-16 18-13 16-20 13-10 20-23 "
    "10-5 23-27 5-2 27-23 2-6 23-19 6-11 19-22 11-7 22-26 7-11 26-29 11-7 29-25 7-12 "
    "25-21 24-20 21-17 12-7 17-13 7-3 13-10 3-7 10-6 7-12 6-2 12-8 2-5 8-12 5-10 12-15 "
    "10-14 15-12 14-18 12-15 18-21 15-19 21-18 19-23 18-13 23-27 13-18 27-30 18-14 30-27 "
    "14-11 27-30 11-6 30-26 6-11 26-22 11-14 22-26 14-10 26-21 10-13 21-17 13-18 17-13 "
    "18-22 13-17 22-27 17-21 27-31 21-18 31-28 18-14 28-31 14-19 31-27 19-14 27-22 14-10 "
    "22-19 10-6 19-14 6-2 14-19 2-5 19-14 5-1 14-11 1-5 11-6 5-1 6-3 1-5 3-7 5-2 7-12 2-5 "
    "12-8 5-2 8-4 2-6 4-8 6-3 "
)
TRIESTINA_RESET = (  # triestina W:WK46,40:BK5,11
    "46-41 5-9 41-46 9-14 46-42 14-18 42-36 18-14 36-32 14-19 32-26 19-15 26-31 15-19 "
    "31-36 19-15 36-32 15-10 32-26 10-5 26-32 5-9 32-26 9-14 26-22 14-8 22-16 8-13 16-22 "
    "13-18 40-35 18-14 22-17 14-18 17-12 18-13 12-6 13-8 6-1 8-14 1-6 14-18 6-2 18-23 2-6 "
    "23-17 6-1 17-22 1-6 22-27 6-1 27-33 1-6 33-28 6-1 28-34 1-6 34-38 6-1 38-43 1-6 "
    "43-47 6-1 47-42 1-6 42-46 6-12 46-42 12-7 42-37 7-12 37-33 12-7 33-28 7-13 28-34 "
    "13-8 34-28 8-4 28-23 4-9 23-28 9-5 28-34 5-9 34-38 9-15 38-43 15-20 43-47 20-15 "
    "47-42 15-9 42-47 9-5 47-43 5-10 43-37 10-5 37-42 5-10 42-36 10-15 36-31 15-20 31-26 "
    "20-15 26-22 15-10 22-16 10-5 "
)


@pytest.mark.parametrize(
    "variant, fen, sequence, plies",
    [
        ("spanish", "W:WK4:BK29", SPANISH_50, 50),
        ("italian", "W:WK29:BK4", ITALIAN_80, 80),
        ("triestina", "W:WK46:BK5", TRIESTINA_80, 80),
    ],
)
def test_no_progress_draw(variant, fen, sequence, plies):
    moves = sequence.split()
    assert len(moves) == plies
    game = Game(variant, fen)
    play_all(game, " ".join(moves[:-1]))
    assert game.result is None  # plies - 1 king moves: not yet
    game.play(moves[-1])
    assert_result(game.result, "1/2-1/2", "no_progress", None)
    assert len(game.moves) == plies
    assert len(game.positions) == plies + 1


@pytest.mark.parametrize(
    "variant, fen, sequence, plies, man_move",
    [
        ("spanish", "W:WK4,9:BK29,24", SPANISH_RESET, 50, "9-13"),
        ("italian", "W:WK29,24:BK4,9", ITALIAN_RESET, 80, "24-20"),
        ("triestina", "W:WK46,40:BK5,11", TRIESTINA_RESET, 80, "40-35"),
    ],
)
def test_man_move_restarts_no_progress_count(variant, fen, sequence, plies, man_move):
    moves = sequence.split()
    # 30 king moves, then the man move, then `plies` king moves
    assert moves[30] == man_move
    assert len(moves) == 31 + plies
    game = Game(variant, fen)
    play_all(game, " ".join(moves[: 31 + plies - 1]))
    assert game.result is None  # 30 + 1 + (plies - 1): the man move reset the count
    game.play(moves[-1])
    assert_result(game.result, "1/2-1/2", "no_progress", None)


# ---------------------------------------------------------------------------
# third repetition


@pytest.mark.parametrize(
    "variant, fen, cycle",
    [
        ("italian", "W:WK29:BK4", "29-25 4-8 25-29 8-4"),
        ("spanish", "W:WK4:BK29", "4-8 29-25 8-4 25-29"),
        ("triestina", "W:WK46:BK5", "46-41 5-10 41-46 10-5"),
    ],
)
def test_third_repetition_draw(variant, fen, cycle):
    game = Game(variant, fen)
    moves = cycle.split() * 2
    # the start position occurs at plies 0, 4 and 8: the third time ends the game
    play_all(game, " ".join(moves[:-1]))
    assert game.result is None
    game.play(moves[-1])
    assert_result(game.result, "1/2-1/2", "repetition", None)
    assert game.position == Position.from_fen(variant, fen)


# ---------------------------------------------------------------------------
# resign, agreement, time


@pytest.mark.parametrize(
    "color, score, winner",
    [("W", "0-1", "B"), ("B", "1-0", "W")],
)
def test_resign(color, score, winner):
    game = Game("italian")
    game.play("22-18")
    game.resign(color)
    assert_result(game.result, score, "resign", winner)


def test_agreement():
    game = Game("spanish")
    game.play("11-15")
    game.agree_draw()
    assert_result(game.result, "1/2-1/2", "agreement", None)


@pytest.mark.parametrize(
    "color, score, winner",
    [("W", "0-1", "B"), ("B", "1-0", "W")],
)
def test_lose_on_time(color, score, winner):
    game = Game("triestina")
    game.lose_on_time(color)
    assert_result(game.result, score, "time", winner)


# ---------------------------------------------------------------------------
# bookkeeping


def test_game_bookkeeping():
    game = Game("italian")
    assert game.position == Position.start("italian")
    assert game.moves == [] and game.positions == [Position.start("italian")]
    first = game.play("22-18")
    assert str(first) == "22-18"
    second = game.play(game.position.parse_move("10-14"))
    assert str(second) == "10-14"
    assert [str(m) for m in game.moves] == ["22-18", "10-14"]
    assert len(game.positions) == 3
    assert game.positions[-1] == game.position
    assert game.position == Position.start("italian").play(first).play(second)
    assert game.result is None


def test_game_from_fen():
    game = Game("spanish", "B:W1-12:B21-32")
    assert game.position.turn == "B"
    assert game.position == Position.from_fen("spanish", "B:W1-12:B21-32")
