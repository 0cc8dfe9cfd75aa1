"""The console keeps going when the disk is full or the database is locked, and refuses a bad
LOG_LEVEL with one line instead of a traceback."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from catalog_text import says

from bot.i18n import t

REPO = Path(__file__).resolve().parents[2]


def fill_disk(images: Path, count: int = 60) -> None:
    """Every image name the console will use points at /dev/full: each write fails with ENOSPC."""
    images.mkdir(parents=True, exist_ok=True)
    for n in range(1, count + 1):
        for suffix in (".png", ".gif", "-game-1.pdn"):
            (images / f"message-{n}{suffix}").symlink_to("/dev/full")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_for_images_does_not_stop_the_console(console):
    fill_disk(console.images)
    out = console.feed("/new italian white", "/as Bob", "/accept", "/as Ana", "/m 22-18")
    # The move is stored and announced, the text board printed, and one line says the image failed.
    assert t("en", "move.played", name="Ana", move="22-18", id=1) in out
    assert console.storage.game(1).ply == 1
    assert " o  .  o  .  o  .  o  ." in out
    failures = [line for line in out.splitlines() if "could not be saved" in line]
    assert failures and all("No space left on device" in line for line in failures)
    assert "board image: " not in out
    # The chat goes on: more input is read and answered.
    out = console.feed("/as Bob", "/m 11-15", "/pdn")
    assert t("en", "move.played", name="Bob", move="11-15", id=1) in out and "1. 22-18 11-15" in out
    assert "file could not be saved" in out
    assert console.storage.game(1).ply == 2


def test_console_answers_busy_while_another_process_holds_the_lock_and_goes_on(console):
    console.storage.busy_timeout = 0.2
    console.storage.db.conn.execute("PRAGMA busy_timeout = 200")
    console.feed("/new italian white", "/as Bob", "/accept", "/as Ana")
    other = sqlite3.connect(console.storage.path, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        other.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('held', 1)")
        out = console.feed("/m 22-18", "/games")
        assert t("en", "error.busy") in out
        # /games needs no write
        assert says(out, "en", "games.line", id=1, variant=t("en", "variant.italian"), white="Ana", black="Bob")
        other.execute("ROLLBACK")
    finally:
        other.close()
    assert t("en", "move.played", name="Ana", move="22-18", id=1) in console.feed("/m 22-18")


def run_bot(tmp_path: Path, stdin: str, **env_extra: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_BOT_TOKEN")}
    env.update(DRAUGHTS_DB=str(tmp_path / "cli.db"), DRAUGHTS_IMAGES=str(tmp_path / "boards"),
               PYTHONPATH=str(REPO), LANG="en_US.UTF-8", **env_extra)
    return subprocess.run([sys.executable, "-m", "bot"], input=stdin, capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=60)


def test_an_unknown_log_level_is_one_line_and_exit_2(tmp_path):
    proc = run_bot(tmp_path, "/games\n", LOG_LEVEL="FOO")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    [line] = proc.stderr.splitlines()
    assert "LOG_LEVEL" in line and "FOO" in line
    for name in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
        assert name in line


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_python_m_bot_with_a_full_disk_for_images_exits_0(tmp_path):
    fill_disk(tmp_path / "boards")
    proc = run_bot(tmp_path, "/new italian white\n/as Bob\n/accept\n/as Ana\n/m 22-18\n/games\n",
                   LOG_LEVEL="info")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert t("en", "move.played", name="Ana", move="22-18", id=1) in proc.stdout and "could not be saved" in proc.stdout
    assert t("en", "games.line", id=1, variant=t("en", "variant.italian"), white="Ana", black="Bob", mover="Bob",
             to_mover="Bob", ply=1) in proc.stdout
