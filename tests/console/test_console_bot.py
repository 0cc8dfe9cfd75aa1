"""`python -m bot` with piped input plays against the bot: after each human move the bot's move is
printed before the next line is read, by the real engine process pool, and the program exits 0."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from catalog_text import pattern, tr

from bot.rules import Position
from bot.storage import BOT_ID, Storage

REPO = Path(__file__).resolve().parents[2]
OUT_LINE = re.compile(r"^\[(\d+)\] bot → main: (.*)$", re.M)
BOT = tr("en", "bot.name_start", level=1)
BOT_PLAYED = pattern("en", "bot.played", bot=BOT, id=1)


def bot_lines(out: str) -> list[tuple[str, str]]:
    """The console lines (number, move) that give the bot's move in game 1."""
    return [(line[1], found["move"]) for line in OUT_LINE.finditer(out) if (found := BOT_PLAYED.fullmatch(line[2]))]


def played(move: str, name: str = BOT) -> str:
    return tr("en", "bot.played" if name == BOT else "move.played", bot=BOT, name=name, move=move, id=1)


def run_bot(tmp_path: Path, stdin: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_BOT_TOKEN")}
    env.update(DRAUGHTS_DB=str(tmp_path / "cli.db"), DRAUGHTS_IMAGES=str(tmp_path / "boards"),
               PYTHONPATH=str(REPO), LANG="en_US.UTF-8", LOG_LEVEL="WARNING")
    env.pop("DRAUGHTS_AI_WORKERS", None)
    return subprocess.run([sys.executable, "-m", "bot"], input=stdin, capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=60)


def stored_moves(tmp_path: Path) -> list[tuple[str, str]]:
    storage = Storage(tmp_path / "cli.db")
    try:
        return [(m.notation, m.by_user) for m in storage.moves(1)]
    finally:
        storage.close()


def test_piped_play_prints_the_bots_move_after_the_humans_and_exits_0(tmp_path):
    proc = run_bot(tmp_path, "/play italian level 1 white\n/m 22-18\n")
    out = proc.stdout
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and tr("en", "error.internal") not in out
    assert tr("en", "play.started", id=1, variant=tr("en", "variant.italian"), level=1, name="Ana",
              color=tr("en", "side.white")) in out
    human = out.index(played("22-18", "Ana"))
    thinking = out.index(tr("en", "bot.thinking", bot=BOT), human)
    [found] = bot_lines(out)
    bot_move = found[1]
    assert out.index(played(bot_move)) > thinking
    after = Position.start("italian").play(Position.start("italian").parse_move("22-18"))
    assert str(after.parse_move(bot_move)) == bot_move
    assert stored_moves(tmp_path) == [("22-18", "ana"), (bot_move, BOT_ID)]


def test_piped_play_as_black_shows_the_bots_opening_before_the_humans_reply(tmp_path):
    proc = run_bot(tmp_path, "/play italian level 1 black\n/m 11-15\n")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "Traceback" not in proc.stderr and tr("en", "error.internal") not in out
    opening, answer = (m[1] for m in bot_lines(out))
    assert out.index(played(opening)) < out.index(played("11-15", "Ana")) < out.index(played(answer))
    moves = stored_moves(tmp_path)
    assert [by for _, by in moves] == [BOT_ID, "ana", BOT_ID]
    assert [n for n, _ in moves] == [opening, "11-15", answer]
