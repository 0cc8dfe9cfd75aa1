"""What an engine worker holds (issue 30, item 7): it imports the engine and not the service's
stack, it is forked from a fork server that loaded the compiled search once, and between jobs it
keeps no search memory."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot import engine_workers
from bot.ai import jit
from bot.rules import Position
from bot.service.thinking import PRELOAD, analysis_job, move_job, pool_context, warm_job

REPO = Path(__file__).resolve().parents[2]

JOBS = """
import json, sys
from bot import engine_workers as w
from bot.rules import Position
w.warm_job()
w.move_job("spanish", Position.start("spanish").fen(), 2, [], 1, 0.2)
w.analysis_job("italian", None, ["21-17", "12-16"], (300, 300))
print(json.dumps({name: name in sys.modules for name in
                  ("bot.service", "bot.storage", "bot.platforms", "renderers", "PIL", "sqlite3", "bot.i18n")}))
"""


def test_a_worker_running_every_job_imports_nothing_of_the_service():
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-c", JOBS], capture_output=True, text=True, env=env, timeout=300, cwd=REPO)
    assert out.returncode == 0, out.stderr
    loaded = json.loads(out.stdout.splitlines()[-1])
    assert not any(loaded.values()), loaded


def test_the_jobs_pickle_by_the_workers_module():
    for job in (warm_job, move_job, analysis_job):
        assert job.__module__ == "bot.engine_workers"


def test_after_a_job_the_worker_holds_no_transposition_table():
    move_job("italian", Position.start("italian").fen(), 2, [], 1, 0.2)
    assert getattr(jit._LOCAL, "ctx", None) is None
    analysis_job("italian", None, ["21-17", "12-16"], (300, 300))
    assert getattr(jit._LOCAL, "ctx", None) is None


@pytest.mark.skipif("forkserver" not in multiprocessing.get_all_start_methods(), reason="no fork server here")
def test_workers_are_forked_from_a_fork_server_that_preloads_the_engine():
    context = pool_context()
    assert context.get_start_method() == "forkserver"
    assert PRELOAD == "bot.engine_preload"
    from multiprocessing import forkserver

    assert forkserver._forkserver._preload_modules == [PRELOAD]  # type: ignore[attr-defined]


def test_preload_never_raises(monkeypatch, bot_errors):
    def broken() -> None:
        raise RuntimeError("no compiler today")

    monkeypatch.setattr(jit, "warm", broken)
    engine_workers.preload()        # logged; each worker then loads the engine itself
    assert [r.name for r in bot_errors] == ["bot.engine_workers"]
    bot_errors.clear()
