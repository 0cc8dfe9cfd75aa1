"""The console chat end to end: a whole game to a result, and ``python -m bot`` itself."""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

from catalog_text import pattern, says, tr
from PIL import Image

from bot.i18n import catalog, tn
from bot.rules import Position

REPO = Path(__file__).resolve().parents[2]
INTERNAL_ERROR = tr("en", "error.internal")
IMAGE_LINE = re.compile(r"^\s+(board image|capture animation|file): (.+)$", re.M)
GAME_OVER = pattern("en", "game.over")
RESULT = pattern("en", *sorted(key for key in catalog("en") if key.startswith("result.")))
CONSOLE_LINE = re.compile(r"^\[(\d+)\] bot: (.*)$", re.M)


def result_lines(text: str) -> list[str]:
    """The lines that say a game is over and how it ended."""
    return [line for line in text.splitlines() if GAME_OVER.search(line) and RESULT.search(line)]


def reminder(name: str, minutes: int, game: int = 1) -> str:
    return tn("en", "clock.reminder", minutes, name=name, id=game, left=tn("en", "unit.m", minutes))


def saved_files(output: str) -> list[Path]:
    return [Path(m.group(2)) for m in IMAGE_LINE.finditer(output)]


def current_game(console, game_id: int):
    row = console.storage.game(game_id)
    return row, Position.from_fen(row.variant, row.fen)


def test_whole_game_played_to_a_result_through_the_console(console):
    out = console.feed("/new italian white", "/as Bob", "/accept")
    assert says(out, "en", "game.started", id=1)
    rng = random.Random(2024)
    names = {"W": "Ana", "B": "Bob"}
    for ply in range(400):
        row, pos = current_game(console, 1)
        if row.status != "active":
            break
        assert row.ply == ply
        move = rng.choice(pos.legal_moves())
        console.feed(f"/as {names[pos.turn]}")
        if ply % 5 == 4:
            # Every fifth move by the buttons: the piece, then its square (and path).
            out = console.feed(f"/press s:1:{ply}:{move.start}")
            assert f"/press d:1:{ply}:{move.start}:{move.end}" in out or f"/m {move}" in out
            out = console.feed(f"/press d:1:{ply}:{move.start}:{move.end}")
            if tr("en", "select.path") in out:
                index = pos.legal_moves().index(move)
                out = console.feed(f"/press m:1:{ply}:{index}")
        else:
            out = console.feed(f"/m {move}")
        assert says(out, "en", "move.played", move=move, id=1), out
    else:
        raise AssertionError("no result after 400 plies")
    text = console.out.getvalue()
    assert INTERNAL_ERROR not in text
    results = result_lines(text)
    assert len(results) == 1, results
    row = console.storage.game(1)
    assert row.status == "finished" and row.result_score in ("1-0", "0-1", "1/2-1/2")
    assert len(console.storage.moves(1)) == row.ply
    files = saved_files(text)
    assert files and all(f.exists() for f in files)
    # The last board shown is the final position.
    final = console.feed("/board")
    assert says(final, "en", "game.over", id=1) and result_lines(final)


def test_console_prints_the_board_as_text_and_a_png_that_exists(console):
    out = console.feed("/new italian white", "/as Bob", "/accept")
    assert " x  .  x  .  x  .  x  ." in out            # Black's men on the top row (Ana's view)
    assert " .  o  .  o  .  o  .  o" in out
    [png] = [p for p in saved_files(out) if p.suffix == ".png"]
    assert png.exists() and png.parent == console.images
    with Image.open(png) as img:
        assert img.format == "PNG" and img.size[0] >= 200
    assert "/press s:1:0:22" in out


def test_console_as_and_chat_switch_user_and_chat(console):
    out = console.feed("/as Carol", "/chat lobby")
    assert "(now Carol in chat lobby)" in out
    console.feed("/new spanish")
    assert console.storage.open_challenges("console", "lobby")[0].challenger_id == "carol"
    assert console.storage.open_challenges("console", "main") == []


def test_console_press_runs_a_button(console):
    console.feed("/new italian white", "/as Bob", "/press acc:1")
    assert console.storage.game(1).black_id == "bob"


def test_console_reply_answers_a_board(console):
    console.feed("/new italian white", "/as Bob", "/accept", "/as Ana", "/new italian white", "/as Carol")
    out = console.feed("/accept")
    started = pattern("en", "game.started", id=2)
    [second] = [int(line[1]) for line in CONSOLE_LINE.finditer(out) if started.match(line[2])]
    console.feed("/as Ana")
    assert tr("en", "game.which") in console.feed("/m 22-18")
    console.feed(f"/reply {second} /m 22-18")
    assert console.storage.game(2).ply == 1 and console.storage.game(1).ply == 0


def test_console_blank_lines_are_ignored(console):
    assert console.feed("", "   ", "\n") == ""


def test_console_reminder_and_loss_on_time_are_printed(console, now):
    console.feed("/new italian white 1h", "/as Bob", "/accept")
    now[0] += 55 * 60
    out = console.feed("/games")
    assert "→ main" in out and says(out, "en", "clock.reminder", id=1)
    now[0] += 10 * 60
    out = console.feed("/games")
    assert tr("en", "result.win.time", winner="Bob", loser="Ana") in out


def test_console_run_reads_until_end_of_input(console):
    import io
    console.chat.run(io.StringIO("/new italian white\n/as Bob\n/accept\n"))
    text = console.out.getvalue()
    assert text.startswith("Draughts console chat.")
    assert says(text, "en", "game.started", id=1)


def test_the_end_of_input_stops_the_delivery_thread_instead_of_waiting_out_its_join(console, monkeypatch):
    # The end of input delivers last while holding the lock the delivery thread waits for; that
    # delivery clears the wake-up, and a thread that then slept its full idle time kept a piped
    # console from exiting for DELIVERY_JOIN_SECONDS (30 s) after every script.
    import io
    import threading

    import bot.platforms.console.chat as chat_module
    monkeypatch.setattr(chat_module, "DELIVERY_JOIN_SECONDS", 2.0)
    console.chat.run(io.StringIO("/new italian white\n/as Bob\n/accept\n"))
    assert not [t for t in threading.enumerate() if t.name == "console-delivery" and t.is_alive()]


# -- python -m bot ---------------------------------------------------------------------------------


def run_bot(tmp_path: Path, stdin: str, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_BOT_TOKEN")}
    env.update(DRAUGHTS_DB=str(tmp_path / "cli.db"), DRAUGHTS_IMAGES=str(tmp_path / "boards"),
               PYTHONPATH=str(REPO), LANG="en_US.UTF-8", LOG_LEVEL="WARNING")
    return subprocess.run([sys.executable, "-m", "bot", *args], input=stdin, capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=60)


def test_python_m_bot_plays_from_stdin_and_exits_0(tmp_path):
    lines = "/new italian white\n/as Bob\n/accept\n/as Ana\n/m 22-18\n/board\n"
    proc = run_bot(tmp_path, lines)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and INTERNAL_ERROR not in proc.stdout
    assert says(proc.stdout, "en", "game.started", id=1)
    assert tr("en", "move.played", name="Ana", move="22-18", id=1) in proc.stdout
    # The board in text, seen from Black's side after White's move, and image paths that exist.
    assert " o  .  o  .  o  .  o  ." in proc.stdout
    pngs = [p for p in saved_files(proc.stdout) if p.suffix == ".png"]
    assert pngs and all(p.exists() and p.is_relative_to(tmp_path / "boards") for p in pngs)
    assert (tmp_path / "cli.db").exists()


def test_python_m_bot_continues_the_game_after_a_restart(tmp_path):
    first = run_bot(tmp_path, "/new italian white\n/as Bob\n/accept\n/as Ana\n/m 22-18\n")
    assert first.returncode == 0, first.stderr
    second = run_bot(tmp_path, "/as Bob\n/m 11-15\n/games\n")
    assert second.returncode == 0, second.stderr
    assert tr("en", "move.played", name="Bob", move="11-15", id=1) in second.stdout
    assert tr("en", "games.line", id=1, variant=tr("en", "variant.italian"), white="Ana", black="Bob", mover="Ana",
              to_mover="Ana", ply=2) in second.stdout


def test_python_m_bot_console_subcommand_with_paths(tmp_path):
    proc = run_bot(tmp_path, "/new spanish\n/games\n", "console", "--db", str(tmp_path / "other.db"),
                   "--images", str(tmp_path / "pics"))
    assert proc.returncode == 0, proc.stderr
    assert says(proc.stdout, "en", "new.open", id=1, variant=tr("en", "variant.spanish"))
    assert (tmp_path / "other.db").exists()


def test_python_m_bot_with_empty_input_exits_0(tmp_path):
    proc = run_bot(tmp_path, "")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Draughts console chat.")


def test_console_interactive_ticker_announces_deadlines_without_input(console, now):
    console.feed("/new italian white 1h", "/as Bob", "/accept")
    read_end, write_end = os.pipe()
    with os.fdopen(read_end, "r") as stdin, os.fdopen(write_end, "w") as writer:
        runner = threading.Thread(target=console.chat.run, args=(stdin,),
                                  kwargs={"interactive": True, "tick_every": 0.02})
        runner.start()
        try:
            now[0] += 55 * 60
            waited = time.monotonic() + 10
            while not says(console.out.getvalue(), "en", "clock.reminder", id=1) and time.monotonic() < waited:
                time.sleep(0.02)
        finally:
            writer.close()
            runner.join(timeout=10)
    assert not runner.is_alive()
    text = console.out.getvalue()
    assert text.count(reminder("Ana", 5)) == 1
    assert "Ana@main> " in text or "Bob@main> " in text


def test_python_m_bot_stops_quietly_when_its_reader_goes_away(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_BOT_TOKEN")}
    env.update(DRAUGHTS_DB=str(tmp_path / "cli.db"), DRAUGHTS_IMAGES=str(tmp_path / "boards"),
               PYTHONPATH=str(REPO), LANG="en_US.UTF-8")
    proc = subprocess.Popen([sys.executable, "-m", "bot"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=tmp_path, env=env)
    first = proc.stdout.readline()
    proc.stdout.close()                      # like `python -m bot | head -1`
    try:
        proc.stdin.write(b"/new italian white\n/as Bob\n/accept\n" + b"/board\n" * 200)
        proc.stdin.close()
    except BrokenPipeError:
        pass
    stderr = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=60) == 0, stderr
    assert first.startswith(b"Draughts console chat.")
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr
