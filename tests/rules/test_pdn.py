"""PDN: the 2005 Italian championship imports move by move; our own games round-trip."""

import sys
import time
from pathlib import Path

import pytest

from bot.rules import (
    VARIANTS,
    CapturePriority,
    Color,
    ErrorCode,
    Game,
    IllegalMove,
    Result,
    ResultReason,
    Variant,
    read_pdn,
    write_pdn,
)
from bot.rules.notation import match_squares, split_squares
from bot.rules.pdn import read_game, split_games

CHAMPIONSHIP = Path(__file__).resolve().parents[1] / "data" / "italian_championship_2005.pdn"


@pytest.fixture(scope="module")
def championship_text():
    return CHAMPIONSHIP.read_text(encoding="utf-8")


def test_all_53_championship_games_import_move_by_move(championship_text):
    games = read_pdn(championship_text)
    assert len(games) == 53
    for (tags, body), game in zip(split_games(championship_text), games, strict=False):
        # Every move token became a move, and the recorded result is kept.
        tokens = [t for t in body.replace("\n", " ").split() if "-" in t or "x" in t]
        tokens = [t for t in tokens if t not in ("1-0", "0-1", "1/2-1/2")]
        assert len(game.moves) == len(tokens)
        assert game.result is not None and game.result.score == tags["Result"]
    assert games[0].tags["White"] == "BORGHETTI Michele"
    assert games[0].tags["Black"] == "MASCOLO Luca"
    assert sum(len(g.moves) for g in games) == 3227


def test_ambiguous_short_capture_takes_the_path_that_keeps_the_game_legal(championship_text):
    tags, body = split_games(championship_text)[45]
    game = read_game(tags, body)
    pos = game.positions[25]
    with pytest.raises(IllegalMove) as err:
        match_squares(pos, *split_squares("3x26"))
    assert err.value.code == ErrorCode.AMBIGUOUS
    assert sorted(str(m) for m in err.value.moves) == ["3x10x17x26", "3x10x19x26"]
    assert str(game.moves[25]) == "3x10x17x26"


def test_a_game_past_a_repetition_is_still_read_to_the_end(championship_text):
    # Borghetti-Sardu repeats a position a third time at ply 101 (our house rule would call
    # it a draw) and the players go on to ply 119: a record is replayed as it was played.
    game = read_pdn(championship_text)[24]
    assert (game.tags["White"], game.tags["Black"]) == ("BORGHETTI Michele", "SARDU Gianni")
    assert len(game.moves) == 119
    replay = Game("italian")
    for move in game.moves[:101]:
        replay.play(move)
    assert replay.result is not None and replay.result.reason == "repetition"
    assert game.result.score == game.tags["Result"]


@pytest.mark.parametrize("variant,gametype", [
    ("italian", "22,W,8,8,N2,1"), ("spanish", "24,W,8,8,N1,1"), ("triestina", "22,W,10,10,N2,1")])
def test_written_game_reads_back_with_its_variant(variant, gametype):
    game = Game(variant)
    for _ in range(30):
        moves = game.position.legal_moves()
        if not moves or game.result:
            break
        game.play(moves[len(game.moves) % len(moves)])
    text = write_pdn(game, {"White": "Ana", "Black": "Luca", "Event": "chat"})
    assert f'[GameType "{gametype}"]' in text
    assert ('[Variant "triestina"]' in text) == (variant == "triestina")
    # The seven-tag roster, in its order, before the variant's own tags.
    names = [line.split()[0][1:] for line in text.splitlines() if line.startswith("[")]
    assert names[:7] == ["Event", "Site", "Date", "Round", "White", "Black", "Result"]
    assert '[White "Ana"]' in text and '[Black "Luca"]' in text
    back = read_pdn(text, default_variant="italian")[0]
    assert back.variant.id == variant
    assert back.moves == game.moves
    assert back.position == game.position


# Variants registered only for a test: Italian rules on 6x6 (GameType 22, like Italian and
# Triestina, but a size neither has), and Italian on 8x8 that only a Variant tag tells apart.
MINI = Variant(id="mini", size=6, flying_kings=False, men_capture_kings=False,
               priority=CapturePriority.ITALIAN, no_progress_plies=80, numbering="italian",
               pdn_gametype="22,W,6,6,N2,1", start_rows=2)
QUICK_ITALIAN = Variant(id="quick_italian", size=8, flying_kings=False, men_capture_kings=False,
                        priority=CapturePriority.ITALIAN, no_progress_plies=20, numbering="italian",
                        pdn_gametype="22,W,8,8,N2,1", start_rows=3)


@pytest.mark.parametrize("extra", [MINI, QUICK_ITALIAN], ids=lambda v: v.id)
def test_a_registered_variant_writes_its_tag_and_reads_back_as_itself(monkeypatch, extra):
    monkeypatch.setitem(VARIANTS, extra.id, extra)
    game = Game(extra)
    for _ in range(12):
        moves = game.position.legal_moves()
        if not moves or game.result:
            break
        game.play(moves[len(game.moves) % len(moves)])
    text = write_pdn(game)
    assert f'[Variant "{extra.id}"]' in text
    assert f'[GameType "{extra.pdn_gametype}"]' in text
    back = read_pdn(text, default_variant="italian")[0]
    assert back.variant.id == extra.id
    assert back.moves == game.moves and back.position == game.position


def test_the_gametype_alone_reads_as_the_registered_variant_of_its_board_size(monkeypatch):
    # An older file without a Variant tag: the GameType's board size picks among same-type variants.
    monkeypatch.setitem(VARIANTS, MINI.id, MINI)
    assert read_pdn('[GameType "22,W,6,6,N2,1"]\n\n1. 13-10 *\n')[0].variant.id == "mini"
    assert read_pdn('[GameType "22,W,10,10,N2,1"]\n\n*\n')[0].variant.id == "triestina"
    assert read_pdn('[GameType "22,W,8,8,N2,1"]\n\n*\n')[0].variant.id == "italian"
    assert read_pdn('[GameType "22"]\n\n*\n', default_variant="spanish")[0].variant.id == "italian"
    assert read_pdn('[GameType "24"]\n\n*\n')[0].variant.id == "spanish"


def test_game_from_a_fen_writes_the_fen_and_black_first_numbering():
    game = Game("italian", "B:W21,22:B9,10")
    game.play("9-13")
    game.play("22-18")
    text = write_pdn(game)
    assert '[FEN "B:W21,22:B9,10"]' in text
    assert "1... 9-13 2. 22-18 *" in text
    back = read_pdn(text)[0]
    assert back.moves == game.moves


def test_comments_variations_and_result_tokens_are_skipped():
    text = '[Event "x"]\n\n1. 21-17 {good} (1. 22-18 10-14) 12-15 2. 23-19 11-14 3. 19x12 8x15 0-1\n'
    game = read_pdn(text)[0]
    assert [str(m) for m in game.moves] == ["21-17", "12-15", "23-19", "11-14", "19x12", "8x15"]
    assert game.result.score == "0-1"


@pytest.mark.parametrize(("score", "winner"), [("1-0", Color.WHITE), ("0-1", Color.BLACK), ("1/2-1/2", None)])
def test_a_recorded_result_is_typed_like_a_played_one(score, winner):
    """An unfinished record's result comes from its tag, as a ResultReason and a Color (were the
    bare strings "recorded" and "W"/"B")."""
    game = read_pdn(f'[Event "x"]\n[Result "{score}"]\n\n1. 21-17 12-15 {score}\n')[0]
    assert game.result == Result(score, ResultReason.RECORDED, winner)
    assert type(game.result.reason) is ResultReason
    assert winner is None or type(game.result.winner) is Color


def test_unplayable_move_names_the_move_number():
    with pytest.raises(ValueError, match=r"move 2 \(22-19\)"):
        read_pdn('[Event "x"]\n\n1. 22-18 10-14 2. 22-19 *\n')


def test_resumed_game_keeps_repetition_and_no_progress_counts():
    game = Game("italian", "W:WK29:BK4")
    fens = [game.position.fen()]
    cycle = ["29-25", "4-8", "25-29", "8-4"]
    for text in cycle:
        game.play(text)
        fens.append(game.position.fen())
    resumed = Game.resume("italian", "W:WK29:BK4", fens, game.quiet_plies)
    assert resumed.position == game.position and resumed.repetitions() == 2
    for text in cycle:
        resumed.play(text)
    assert resumed.result is not None and resumed.result.reason == "repetition"
    assert resumed.quiet_plies == 8


# -- malformed input is a ValueError, as read_game documents -------------------------------------

@pytest.mark.parametrize("movetext", [
    # A move-shaped token longer than the move reader accepts.
    "1. " + "-".join(["22"] * 80) + " *",
    # Arabic-Indic digits: \d matches them, the move reader does not.
    "1. \u0662\u0662-\u0661\u0668 *",
])
def test_malformed_move_is_a_value_error_not_an_illegal_move(movetext):
    with pytest.raises(ValueError) as err:
        read_pdn('[Event "x"]\n\n' + movetext + "\n")
    assert not isinstance(err.value, IllegalMove)


def test_unplayable_move_keeps_the_rule_as_its_cause():
    with pytest.raises(ValueError) as err:
        read_pdn('[Event "x"]\n\n1. 22-18 10-14 2. 22-19 *\n')
    assert isinstance(err.value.__cause__, IllegalMove)
    assert err.value.__cause__.code == ErrorCode.NO_PIECE


def test_unplayable_move_after_a_black_fen_is_numbered_from_black():
    # 1... 9-13 2. 22-26: White's backward step is the second ply but move 2.
    with pytest.raises(ValueError, match=r"move 2 \(22-26\)"):
        read_pdn('[FEN "B:W21,22:B9,10"]\n\n1... 9-13 2. 22-26 *\n')


@pytest.mark.parametrize("movetext", ["1. 22-18 (10-14 *", "1. 22-18 ) *", "1. 22-18 {open *"])
def test_unbalanced_variation_or_comment_is_a_value_error(movetext):
    with pytest.raises(ValueError):
        read_pdn('[Event "x"]\n\n' + movetext + "\n")


def test_comments_inside_variations_and_line_comments_are_skipped():
    text = ('[Event "x"]\n\n1. 21-17 ; a line comment (not a variation\n'
            "12-15 (12-16 {a ) in a comment} (1... 11-15 ; nested\n) 2. 22-18) 2. 23-19 *\n")
    assert [str(m) for m in read_pdn(text)[0].moves] == ["21-17", "12-15", "23-19"]


# -- nested variations are read in linear time --------------------------------------------------

def _nested(depth: int) -> str:
    return '[Event "x"]\n\n1. 22-18 ' + "(" * depth + "1. 21-17" + ")" * depth + " 10-14 *\n"


def _cpu_seconds(text: str) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        game = read_pdn(text)[0]
        best = min(best, time.process_time() - start)
    assert [str(m) for m in game.moves] == ["22-18", "10-14"]
    return best


def test_deeply_nested_variations_take_linear_time():
    # Doubling the nesting doubles the work; the old innermost-first regex loop quadrupled it
    # (20,000 levels took 1.6 s). CPU time, best of three, so other processes do not count.
    small, large = _cpu_seconds(_nested(20_000)), _cpu_seconds(_nested(40_000))
    assert large / small < 3


def test_nesting_far_past_the_recursion_limit_is_read():
    depth = 10 * sys.getrecursionlimit()
    assert [str(m) for m in read_pdn(_nested(depth))[0].moves] == ["22-18", "10-14"]
