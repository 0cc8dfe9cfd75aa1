"""The first start: seconds from ``/play`` to the bot's first move in a piped console, with the
engine's compiled search not yet in the cache (cold) and then in it (warm).

Run from the repository root::

    python bench/first_move.py                 # one cold start, then two warm ones
    python bench/first_move.py --warm 4
    python bench/first_move.py --tree DIR      # another source tree (an older commit, unpacked)

Each start is ``python -m bot console`` on a new database, its standard input a pipe kept open: the
script writes ``/play italian black level 3`` (the bot plays White, so it moves first) as soon as
the console's banner is out, and times until the bot's move is printed.  The cold start gets an
empty ``$DRAUGHTS_CACHE_DIR``; the warm ones reuse it.  A tree from before the cache moved keeps the
cache in its own ``bot/ai/__pycache__``: empty it yourself for a cold start there.  The engine
workers start with the console (two on a two-core machine), so the first move pays for their start
too.  The machine is shared, so the numbers are noisy: the load average is printed with each.

Measured on 2026-12-05 (2 shared cores, load average 5 to 8), issue 28 items 11-13:

* before (each engine worker compiling on its own, the cache in ``bot/ai/__pycache__``): cold 47.6 s
  and 53.9 s, and once more than 60 s (the piped console then never printed the move); warm 5.7 s
  and 4.9 s;
* after (one worker compiles, the other loads its cache; the cache in ``$DRAUGHTS_CACHE_DIR``): cold
  25.5 s and 32.1 s; warm 4.1 s, 3.2 s and 4.1 s.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import queue
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PLAY = "/play italian black level 3\n"
MOVE_MARK = " played "


def _reader(stream: object, lines: queue.Queue[tuple[float, str]]) -> None:
    for line in stream:  # type: ignore[attr-defined]
        lines.put((time.perf_counter(), line))
    lines.put((time.perf_counter(), ""))


def stored_seconds(database: Path) -> float | None:
    """From the game's start to the bot's first move as the database has them (a console that
    leaves the move unprinted still stores it)."""
    if not database.exists():
        return None
    with contextlib.closing(sqlite3.connect(database)) as db:
        row = db.execute("SELECT m.played_at - g.created_at FROM moves m JOIN games g ON g.id = m.game_id "
                         "WHERE m.game_id = 1 AND m.ply = 1").fetchone()
    return None if row is None else float(row[0])


def first_move(tree: Path, cache: Path, limit: float) -> tuple[float | None, float | None, list[str]]:
    """Seconds from /play to the bot's move printed (None when it was not within ``limit``), the same
    as stored, and the console's lines."""
    with tempfile.TemporaryDirectory() as work:
        env = dict(os.environ, DRAUGHTS_CACHE_DIR=str(cache), PYTHONPATH=str(tree), LANG="en_US.UTF-8",
                   PYTHONUNBUFFERED="1")
        proc = subprocess.Popen([sys.executable, "-m", "bot", "console", "--db", f"{work}/bench.db",
                                 "--images", f"{work}/boards"], cwd=work, env=env, text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        assert proc.stdin is not None and proc.stdout is not None
        lines: queue.Queue[tuple[float, str]] = queue.Queue()
        threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True).start()
        seen: list[str] = []
        asked: float | None = None
        took: float | None = None
        end = time.perf_counter() + limit
        try:
            while time.perf_counter() < end:
                try:
                    at, line = lines.get(timeout=0.5)
                except queue.Empty:
                    continue
                if not line:
                    break
                seen.append(line.rstrip("\n"))
                if asked is None and line.startswith("Draughts console chat"):
                    proc.stdin.write(PLAY)
                    proc.stdin.flush()
                    asked = time.perf_counter()
                elif asked is not None and MOVE_MARK in line and line.lstrip().startswith("["):
                    took = at - asked
                    break
        finally:
            proc.stdin.close()
            try:
                proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        return took, stored_seconds(Path(work) / "bench.db"), seen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=REPO, help="the source tree to run (default: this one)")
    parser.add_argument("--warm", type=int, default=2, help="warm starts after the cold one")
    parser.add_argument("--limit", type=float, default=300.0, help="seconds to wait for a move")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache_root:
        cache = Path(cache_root) / "numba"
        for n in range(1 + args.warm):
            kind = "cold" if n == 0 else "warm"
            load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
            took, stored, seen = first_move(args.tree.resolve(), cache, args.limit)
            shown = f"{took:.1f} s" if took is not None else f"not printed within {args.limit:.0f} s"
            kept = f"{stored:.1f} s" if stored is not None else "none"
            print(f"{kind}: /play to the bot's first move printed: {shown}; stored: {kept} "
                  f"(load average {load:.1f} at the start)", flush=True)
            if took is None:
                print("\n".join("    " + line for line in seen[-15:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
