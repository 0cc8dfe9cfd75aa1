"""The first start on a machine (issue 28, items 11-13), as a person runs it: ``python -m bot`` with
its input a pipe that stays open, a new, empty engine cache folder, and the real engine workers.

The search is compiled once (by the fork server the workers are forked from, or by one spawned worker
while the other waits and loads its cache); the cache is
written in the folder ``$DRAUGHTS_CACHE_DIR`` names and nowhere in the package; ``/play`` says once
that the engine is being prepared; the bot's move is printed when it comes, with no further input;
and the end of input waits for a move under way and prints it before the console exits.

The console's wait after each line is made 0 s (from 60 s), so that every bot move here comes after
the console went back to reading its input.
"""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

from catalog_text import regex

from bot.i18n import t

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "bot"
MOVE_LINE = re.compile(r"^\[\d+\] bot → (\S+): "
                       + regex("en", "bot.played", bot=regex("en", "bot.name_start", level=r"\d"), move=r"\S+",
                               id=r"(\d+)") + "$")
CONSOLE = ("import sys; import bot.platforms.console.chat as chat; chat.BOT_WAIT_SECONDS = 0.0; "
           "from bot.cli import main; sys.exit(main(sys.argv[1:]))")


def numba_files() -> set[Path]:
    """The compiled functions numba keeps in the package's own folders (where it used to write)."""
    return {p for p in PACKAGE.rglob("__pycache__/*") if p.suffix in (".nbi", ".nbc")}


def read_lines(stream, into: queue.Queue) -> None:
    for line in stream:
        into.put(line.rstrip("\n"))
    into.put(None)


def test_a_cold_machine_compiles_once_outside_the_package_and_the_piped_console_prints_as_moves_come(tmp_path):
    cache = tmp_path / "cache" / "numba"
    before = numba_files()
    env = {k: v for k, v in os.environ.items() if not k.endswith("_BOT_TOKEN")}
    env.update(PYTHONPATH=str(REPO), LANG="en_US.UTF-8", LOG_LEVEL="WARNING", DRAUGHTS_AI_WORKERS="2",
               DRAUGHTS_CACHE_DIR=str(cache), NUMBA_DEBUG_CACHE="1", PYTHONUNBUFFERED="1")
    env.pop("NUMBA_CACHE_DIR", None)
    proc = subprocess.Popen([sys.executable, "-c", CONSOLE, "console", "--db", str(tmp_path / "bot.db"),
                             "--images", str(tmp_path / "boards")], cwd=tmp_path, env=env, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=read_lines, args=(proc.stdout, lines), daemon=True).start()
    seen: list[str] = []

    def wait_for(pattern: re.Pattern[str], seconds: float) -> re.Match[str] | None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                line = lines.get(timeout=0.5)
            except queue.Empty:
                continue
            if line is None:
                return None
            seen.append(line)
            found = pattern.match(line)
            if found:
                return found
        return None

    try:
        # The bot plays White: its move is thought about while the console waits for input.
        proc.stdin.write("/play italian black level 3\n")
        proc.stdin.flush()
        first = wait_for(MOVE_LINE, 400)
        assert first is not None and first.group(1) == "main", "\n".join(seen[-30:])
        # Then a move under way when the input ends: printed before the console exits.
        proc.stdin.write("/chat second\n/play italian black level 4\n")
        proc.stdin.close()
        last = wait_for(MOVE_LINE, 120)
        assert last is not None and last.group(1) == "second", "\n".join(seen[-30:])
        assert proc.wait(timeout=120) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        stderr = proc.stderr.read()
        proc.stderr.close()
    while (line := lines.get(timeout=10)) is not None:
        seen.append(line)
    out = "\n".join(seen)
    assert "Traceback" not in stderr, stderr
    # Said once, in the first /play's message, not in the second's.
    assert out.count(t("en", "bot.preparing")) == 1
    first_move = re.compile(MOVE_LINE.pattern, re.M).search(out)
    assert first_move is not None and out.index(t("en", "bot.preparing")) < first_move.start()
    # numba's own report (NUMBA_DEBUG_CACHE): the search was compiled and saved once, in the folder
    # given (by the fork server the workers are forked from, which they share it with; where workers
    # are spawned, by one worker, the other loading it).
    saved = [line for line in seen if line.startswith("[cache] data saved to") and "jit.search-" in line]
    loaded = [line for line in seen if line.startswith("[cache] data loaded from") and "jit.search-" in line]
    assert len(saved) == 1, "\n".join(line for line in seen if line.startswith("[cache]"))
    assert all(str(cache) in line for line in saved + loaded)
    assert list(cache.rglob("jit.search-*.nbi")) and list(cache.rglob("jit.search-*.nbc"))
    assert list(cache.glob("ready-*"))
    assert numba_files() <= before

    # The next start finds the cache: nothing compiled, nothing said about preparing.
    again = subprocess.run([sys.executable, "-c", CONSOLE, "console", "--db", str(tmp_path / "bot.db"),
                            "--images", str(tmp_path / "boards")], input="/chat third\n/play italian black level 1\n",
                           cwd=tmp_path, env=env, text=True, capture_output=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert t("en", "bot.preparing") not in again.stdout
    assert "[cache] data saved" not in again.stdout
    assert [m.group(1) for m in map(MOVE_LINE.match, again.stdout.splitlines()) if m] == ["third"]


def test_the_cache_folder_comes_from_the_environment(tmp_path):
    from bot import config
    from bot.ai import jitcache

    home = Path.home()
    assert config.cache_folder({}) == home / ".cache" / "draughts-bot" / "numba"
    assert config.cache_folder({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "draughts-bot" / "numba"
    assert config.cache_folder({"XDG_CACHE_HOME": "relative/path"}) == home / ".cache" / "draughts-bot" / "numba"
    assert config.cache_folder({"XDG_CACHE_HOME": str(tmp_path), "NUMBA_CACHE_DIR": "/n"}) == Path("/n")
    assert config.cache_folder({"NUMBA_CACHE_DIR": "/n", jitcache.ENV: str(tmp_path / "d")}) == tmp_path / "d"
    # This process's engine caches there too, never in the package.
    assert not jitcache.folder().is_relative_to(PACKAGE)
    assert os.environ["NUMBA_CACHE_DIR"] == str(jitcache.folder())


def test_the_first_compile_marks_the_cache_ready_only_when_it_succeeds(tmp_path, monkeypatch):
    from bot.ai import jitcache

    monkeypatch.setattr(jitcache, "_configured", tmp_path)
    assert not jitcache.ready()
    try:
        with jitcache.first_compile():
            raise RuntimeError("the compile failed")
    except RuntimeError:
        pass
    assert not jitcache.ready() and (tmp_path / jitcache.LOCK_NAME).exists()
    with jitcache.first_compile():
        assert not jitcache.ready()
    assert jitcache.ready()
