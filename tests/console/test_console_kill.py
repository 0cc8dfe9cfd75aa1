"""The bot killed outright (kill -9, the OOM killer): its engine workers end with it instead of
running on as orphans."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from procs import alive, engine_workers, needs_proc

ROOT = Path(__file__).resolve().parents[2]


@needs_proc
def test_the_engine_workers_end_when_the_bot_is_killed(tmp_path):
    env = dict(os.environ, DRAUGHTS_AI_WORKERS="2", PYTHONPATH=str(ROOT))
    bot = subprocess.Popen([sys.executable, "-m", "bot", "console", "--db", str(tmp_path / "kill.db"),
                            "--images", str(tmp_path / "boards")],
                           cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, text=True)
    workers: list[int] = []
    try:
        # The bot opens at level 5: it is searching when it is killed.
        bot.stdin.write("/play italian level 5 black\n")
        bot.stdin.flush()
        deadline = time.monotonic() + 60
        while len(workers) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
            workers = engine_workers(bot.pid)
        assert len(workers) == 2, "the bot's engine workers did not start"
        time.sleep(0.5)
        os.kill(bot.pid, signal.SIGKILL)
        bot.wait(10)
        deadline = time.monotonic() + 5
        while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = [pid for pid in workers if alive(pid)]
        assert left == [], f"{len(left)} engine worker(s) still running 5 s after the bot was killed"
    finally:
        for pid in workers:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        if bot.poll() is None:
            bot.kill()
            bot.wait(10)
