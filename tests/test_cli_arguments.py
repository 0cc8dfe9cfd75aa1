"""Bad numbers on the command line and in the environment (issue 28, item 16): each is one line on
stderr and exit 2, before anything is opened or started; every number option has a range."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot import cli, config
from bot.ai import jitcache
from bot.config import problem as engine_settings_problem
from bot.service.thinking import MOST_WORKERS, worker_count


def workers_problem() -> str | None:
    """What the entry point says of this process's settings (bot.config reads them)."""
    return engine_settings_problem(os.environ)


def configured_worker_count() -> int:
    """The pool's size as the entry point asks for it: with $DRAUGHTS_AI_WORKERS, read by bot.config
    (ValueError when it is no number of processes)."""
    return worker_count(config.load().ai_workers)

REPO = Path(__file__).resolve().parents[1]


def refused(capsys, *argv: str) -> str:
    """Run ``python -m bot ARGV`` in this process; it must exit 2 with one line on stderr, which is returned."""
    with pytest.raises(SystemExit) as stop:
        cli.main(list(argv))
    assert stop.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def test_games_show_an_id_past_64_bits_is_one_line_and_exit_2(capsys, tmp_path):
    db = tmp_path / "none.db"
    line = refused(capsys, "games", "show", "99999999999999999999999", "--db", str(db))
    assert "99999999999999999999999" in line and "game number" in line
    assert not db.exists()
    for bad in ("0", "-3", "seven"):
        assert bad in refused(capsys, "games", "show", bad, "--db", str(db))


def test_perft_with_a_negative_depth_is_refused(capsys):
    line = refused(capsys, "rules", "perft", "--variant", "italian", "--depth", "-1")
    assert "--depth" in line and "'-1'" in line and "from 1 to" in line
    assert "--depth" in refused(capsys, "rules", "perft", "--variant", "italian", "--depth", "0")
    assert "--depth" in refused(capsys, "rules", "perft", "--variant", "italian", "--depth", "1000")


@pytest.mark.parametrize("argv", [
    ("games", "list", "--limit", "-1"),
    ("games", "list", "--limit", "0"),
    ("ai", "move", "--variant", "italian", "--time", "-2"),
    ("ai", "move", "--variant", "italian", "--time", "nan"),
    ("ai", "move", "--variant", "italian", "--time", "inf"),
    ("ai", "move", "--variant", "italian", "--level", "9"),
    ("ai", "analyse", "--variant", "italian", "--pdn", "x.pdn", "--time", "0"),
    ("puzzles", "generate", "--variant", "italian", "--count", "0"),
    ("puzzles", "generate", "--variant", "italian", "--seed", "-1"),
    ("puzzles", "generate", "--variant", "italian", "--first-game", "0"),
    ("puzzles", "generate", "--variant", "italian", "--long", "--per-puzzle", "0"),
    ("puzzles", "check", "--jobs", "0"),
    ("ai", "egtb", "build", "--pieces", "9"),
    ("ai", "egtb", "build", "--jobs", "-1"),
])
def test_every_number_out_of_its_range_is_refused(capsys, argv):
    line = refused(capsys, *argv)
    assert argv[-1] in line


def test_no_number_option_is_left_without_a_range():
    assert cli.plain_numbers(cli.build_parser()) == []


def test_numbers_in_range_still_work(capsys):
    assert cli.main(["rules", "perft", "--variant", "italian", "--depth", "2"]) == 0
    assert capsys.readouterr().out.split() == ["1", "7", "2", "49"]


@pytest.mark.parametrize("value", ["abc", "0", "-1", "1.5", " 2x", str(MOST_WORKERS + 1), "٣"])
def test_draughts_ai_workers_must_be_a_number_of_processes(capsys, monkeypatch, tmp_path, value):
    monkeypatch.setenv("DRAUGHTS_AI_WORKERS", value)
    assert "DRAUGHTS_AI_WORKERS" in (workers_problem() or "")
    with pytest.raises(ValueError):
        configured_worker_count()
    assert cli.main(["games", "list", "--db", str(tmp_path / "x.db")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and "DRAUGHTS_AI_WORKERS" in err


def test_draughts_ai_workers_in_range_is_taken(monkeypatch):
    for value, count in (("1", 1), (" 3 ", 3), (str(MOST_WORKERS), MOST_WORKERS)):
        monkeypatch.setenv("DRAUGHTS_AI_WORKERS", value)
        assert workers_problem() is None and configured_worker_count() == count
    monkeypatch.setenv("DRAUGHTS_AI_WORKERS", "")
    assert 1 <= configured_worker_count() <= MOST_WORKERS


def test_engine_switches_and_cache_folder_are_checked(tmp_path):
    assert engine_settings_problem({}) is None
    assert engine_settings_problem({"DRAUGHTS_JIT": "off", "DRAUGHTS_EGTB": "on"}) is None
    assert "DRAUGHTS_JIT" in (engine_settings_problem({"DRAUGHTS_JIT": "maybe"}) or "")
    assert "DRAUGHTS_EGTB" in (engine_settings_problem({"DRAUGHTS_EGTB": "2"}) or "")
    a_file = tmp_path / "file"
    a_file.write_text("")
    assert jitcache.ENV in (engine_settings_problem({jitcache.ENV: str(a_file / "cache")}) or "")
    assert engine_settings_problem({jitcache.ENV: str(tmp_path / "new" / "cache")}) is None


def test_the_issues_three_commands_in_a_real_process(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_BOT_TOKEN")}
    env.update(PYTHONPATH=str(REPO), DRAUGHTS_DB=str(tmp_path / "bot.db"))
    for argv, extra in ((["games", "show", "99999999999999999999999"], {}),
                        (["rules", "perft", "--variant", "italian", "--depth", "-1"], {}),
                        ([], {"DRAUGHTS_AI_WORKERS": "abc"})):
        proc = subprocess.run([sys.executable, "-m", "bot", *argv], input="/help\n", capture_output=True, text=True,
                              cwd=tmp_path, env={**env, **extra}, timeout=120)
        assert proc.returncode == 2, (argv, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert proc.stdout == ""
    assert not (tmp_path / "bot.db").exists()       # nothing opened, nothing made


@pytest.mark.parametrize("value", ["abc", "0", "-5", "12.5", str(2**64)])
def test_a_discord_guild_id_that_is_no_id_is_refused_before_anything_starts(capsys, monkeypatch, tmp_path, value):
    monkeypatch.setenv("DISCORD_BOT_TOKEN", "not-a-real-token")
    monkeypatch.setenv("DISCORD_GUILD_ID", value)
    monkeypatch.setenv("DRAUGHTS_DB", str(tmp_path / "bot.db"))
    monkeypatch.delenv("DATABASE_URL", raising=False)
    assert cli.main(["discord", "sync"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and "DISCORD_GUILD_ID" in err, err
    assert not (tmp_path / "bot.db").exists()
