"""A forced move is searched through: its score is the position's, not 0, and analysis does not
mark an even exchange as a mistake because the reply to it is forced."""

import re
import subprocess
import sys
from pathlib import Path

from bot.ai import analyse_game, choose_move
from bot.rules import Game, Position

ROOT = Path(__file__).resolve().parents[2]
# Black's only move is 18-22; White (two kings and six men against a man) is winning.
FORCED = "B:WK1,K3,16,19,21,25,28,32:B18"
# White is two men up; 19-14 offers one for one (10x19 is Black's only move, then White retakes).
EXCHANGE = "W:W8,19,20,23,24,25,27,28,30,32:B1,2,4,6,7,9,10,16"


def test_a_forced_move_gets_the_positions_score_and_a_depth():
    assert len(Position.from_fen("italian", FORCED).legal_moves()) == 1
    result = choose_move("italian", FORCED, level=5)
    assert str(result.move) == "18-22"
    assert result.depth >= 2
    assert result.score < -300                 # Black is lost, not level
    assert len(result.pv) >= 2


def test_command_line_reports_the_real_score_of_a_forced_move():
    out = subprocess.run(
        [sys.executable, "-m", "bot", "ai", "move", "--variant", "italian", "--fen", FORCED, "--level", "5",
         "--time", "1"],
        capture_output=True, text=True, cwd=ROOT, timeout=60, check=True,
    ).stdout.strip().splitlines()
    score, depth = map(int, re.match(r"score (-?\d+) depth (\d+) ", out[0]).groups())
    assert depth >= 2 and score < -300, out
    assert out[-1] == "18-22"


def test_an_even_exchange_into_a_forced_reply_is_not_a_mistake():
    pos = Position.from_fen("italian", EXCHANGE)
    after = pos.play(pos.parse_move("19-14"))
    assert len(after.legal_moves()) == 1 and after.legal_moves()[0].captured
    game = Game("italian", EXCHANGE)
    game.play("19-14")
    [note] = analyse_game(game, nodes=20_000, confirm_nodes=40_000)
    # Still two men up after the exchange: not scored as a level position.
    assert note.played_score >= 150
    assert note.mark == ""


def test_forced_moves_in_an_analysis_carry_the_positions_score():
    game = Game("italian", FORCED)
    game.play("18-22")
    [note] = analyse_game(game, nodes=20_000, confirm_nodes=40_000)
    assert note.forced and note.mark == ""
    assert note.best_score == note.played_score < -300
