"""Issue 16, item 15: time made to pass with /clock, each run's images kept, $LANG."""

from __future__ import annotations

import io
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bot.i18n import t
from bot.platforms.console import ConsoleChat
from bot.service import GameService
from bot.storage import Storage

REPO = Path(__file__).resolve().parents[2]
IMAGE_LINE = re.compile(r"^\s+board image: (.+)$", re.M)


def test_clock_makes_time_pass_reminders_then_a_loss_on_time(console):
    console.feed("/new italian white 2h", "/as Bob", "/accept")
    out = console.feed("/clock +1h50m")
    assert "(clock:" in out and "1h50m ahead of the real time" in out
    assert t("en", "clock.reminder.other", name="Ana", left="10m", id=1) in out
    out = console.feed("/clock +15m")
    assert t("en", "result.win.time", winner="Bob", loser="Ana") in out
    assert console.storage.game(1).status == "finished"


def test_clock_with_nothing_readable_changes_nothing(console, now):
    out = console.feed("/clock +soon")
    assert "/clock +3h" in out
    assert console.service.clock() == now[0]


@pytest.mark.parametrize("amount", ["+999999999999d", "+99999999d", "+36501d"])
def test_clock_moved_past_what_a_date_can_hold_changes_nothing(console, now, amount):
    out = console.feed(f"/clock {amount}")
    assert "at most" in out
    assert console.service.clock() == now[0]
    assert "(clock: 2023-11-14 22:13 UTC" in console.feed("/clock")


def test_clock_alone_shows_the_time(console):
    out = console.feed("/clock")
    assert "(clock: 2023-11-14 22:13 UTC, 0h00m ahead of the real time)" in out


def _run(tmp_path: Path, images: Path, lines: list[str]) -> str:
    storage = Storage(tmp_path / "runs.db")
    try:
        service = GameService(storage, clock=lambda: 1_700_000_000.0, rng=random.Random(1))
        out = io.StringIO()
        chat = ConsoleChat(service, out, images, user="Ana", chat="main", language="en")
        for line in lines:
            chat.line(line)
        return out.getvalue()
    finally:
        storage.close()


def test_a_second_run_does_not_overwrite_the_first_runs_images(tmp_path):
    images = tmp_path / "boards"
    first = [Path(p) for p in IMAGE_LINE.findall(_run(tmp_path, images, ["/new italian white", "/as Bob",
                                                                          "/accept"]))]
    assert first and all(p.parent == images for p in first)
    kept = {p: p.read_bytes() for p in first}
    second = [Path(p) for p in IMAGE_LINE.findall(_run(tmp_path, images, ["/board #1", "/as Ana", "/m 22-18"]))]
    assert second and all(p.parent == images / "run-2" for p in second)
    assert all(p.read_bytes() == data for p, data in kept.items())
    third = [Path(p) for p in IMAGE_LINE.findall(_run(tmp_path, images, ["/board #1"]))]
    assert third and all(p.parent == images / "run-3" for p in third)


def test_python_m_bot_speaks_the_language_of_lang(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_BOT_TOKEN")}
    env.update(DRAUGHTS_DB=str(tmp_path / "cli.db"), DRAUGHTS_IMAGES=str(tmp_path / "boards"),
               PYTHONPATH=str(REPO), LANG="it_IT.UTF-8")
    proc = subprocess.run([sys.executable, "-m", "bot"], input="/new italian\n", capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "Sfida #1" in proc.stdout and "dama italiana" in proc.stdout
