"""The engine's process pool under load and under failure, through the whole service.

Run from the repository root::

    python bench/thinking_fairness.py                    # all three parts
    python bench/thinking_fairness.py --parts fairness --users 30

Three measurements, each against the production service (``bot.app.build_service``: a SQLite
file, the engine's process pool of ``DRAUGHTS_AI_WORKERS`` processes, 2 by default here):

``fairness``  ``--users`` players, each in a private chat of their own, send ``/play italian level
              L black`` at once (the bot opens), the levels of ``--levels`` in turn (5, 5, 1 by
              default: two level-5 searches for each level-1 move, about 30 s of searching on two
              workers).  Per level, the
              longest wait from the /play's answer to the bot's opening move being written (its
              time stamp in the moves table); the line that
              counts is the last level-1 move (target: behind at most one level-5 search per
              worker and the other level-1 and -2 moves: a level 5's time plus their time shared
              by the workers, plus half a second).
``recovery``  one worker: a level-5 search is started and its worker killed (SIGKILL) half a
              second later; the time from the kill to the bot's move being stored, with the timed
              work run every second as the bot runs it (target: <= 5 s).
``orphans``   ``--kills`` times: ``python -m bot console`` opens a level-5 game, is killed with
              SIGKILL while it searches; counted 3 s later: its child processes still running
              (target: 0).  Whatever is left is killed by this script.

Linux only for ``recovery`` and ``orphans`` (processes are read from /proc).
"""

from __future__ import annotations

import argparse
import io
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.ai import LEVELS  # noqa: E402

PLATFORM = "console"


def children(parent: int) -> list[int]:
    """Running processes whose parent is ``parent`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            stat = _stat(int(entry.name))
            if stat is not None and stat[1] == parent and stat[0] not in "ZX":
                found.append(int(entry.name))
    return sorted(found)


def descendants(parent: int) -> list[int]:
    """Every running process under ``parent`` (the engine's fork server forks the workers)."""
    found = []
    for child in children(parent):
        found += [child, *descendants(child)]
    return found


def engine_workers(bot: int) -> list[int]:
    """The bot's engine workers: spawned by it, or forked by its fork server."""
    found = []
    for pid in children(bot):
        if b"forkserver" in _cmdline(pid):
            found += children(pid)
        elif b"spawn_main" in _cmdline(pid):
            found.append(pid)
    return found


def _stat(pid: int) -> tuple[str, int] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return fields[0], int(fields[1])


def alive(pid: int) -> bool:
    stat = _stat(pid)
    return stat is not None and stat[0] not in "ZX"


def _service(tmp: str, workers: int):
    os.environ["DRAUGHTS_AI_WORKERS"] = str(workers)
    from bot.app import build_service

    service = build_service(str(Path(tmp) / "bench.db"))
    service.thinker.warm(after=0)       # the engine processes started, as a bot up 30 s has them
    time.sleep(3)
    return service


def fairness(levels: list[int], workers: int) -> dict[int, float]:
    """The longest wait per level for the bot's opening move, all players asking at once."""
    from bot.platforms.console import ConsoleChat

    with tempfile.TemporaryDirectory() as tmp:
        service = _service(tmp, workers)
        out = io.StringIO()
        try:
            asked: dict[int, tuple[int, float]] = {}
            for n, level in enumerate(levels):
                chat = ConsoleChat(service, out, Path(tmp) / "boards", user=f"player{n}", chat=f"private-{n}",
                                   language="en")
                chat.interactive = True         # the line returns at once, as in a live chat
                chat.line(f"/play italian level {level} black")
                at = time.time()                # the wall clock, as the service stamps the bot's move
                [game] = [g for g in service.storage.bot_games(PLATFORM) if g.chat_id == f"private-{n}"]
                asked[game.id] = (level, at)
            if not service.settle(30 + 3 * len(levels)):
                raise SystemExit("the bot's moves never all came")
            waits: dict[int, float] = {}
            for game_id, (_level, at) in asked.items():
                [opening] = service.storage.moves(game_id)
                waits[game_id] = opening.played_at - at
        finally:
            service.close()
            service.storage.close()
    worst: dict[int, float] = {}
    for game_id, wait in waits.items():
        level = asked[game_id][0]
        worst[level] = max(worst.get(level, 0.0), wait)
    return worst


def recovery() -> float:
    """Seconds from killing the worker in the middle of a level-5 search to the bot's move."""
    from bot.platforms.console import ConsoleChat

    with tempfile.TemporaryDirectory() as tmp:
        service = _service(tmp, 1)
        try:
            chat = ConsoleChat(service, io.StringIO(), Path(tmp) / "boards", user="Ana", chat="bench", language="en")
            chat.interactive = True
            deadline = time.monotonic() + 60
            while len(workers := engine_workers(os.getpid())) < 1 and time.monotonic() < deadline:
                time.sleep(0.1)
            if len(workers) != 1:
                raise SystemExit(f"expected one engine worker, found {workers}")
            chat.line("/play italian level 5 black")
            [game] = service.storage.bot_games(PLATFORM)
            time.sleep(0.5)
            os.kill(workers[0], signal.SIGKILL)
            killed = time.perf_counter()
            next_tick = killed + 1.0
            while time.perf_counter() - killed < 60:
                time.sleep(0.05)
                if time.perf_counter() >= next_tick:
                    service.run_due(PLATFORM)   # the bot's timed work (it also resumes the bot's games)
                    next_tick += 1.0
                if service.storage.game(game.id).ply >= 1:
                    return time.perf_counter() - killed
            return float("inf")
        finally:
            service.close()
            service.storage.close()


def orphans(kills: int) -> int:
    """Child processes of the killed bot still running 3 s after each kill -9, summed."""
    left_total = 0
    env = dict(os.environ, DRAUGHTS_AI_WORKERS="2", PYTHONPATH=str(ROOT))
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(kills):
            bot = subprocess.Popen([sys.executable, "-m", "bot", "console", "--db", str(Path(tmp) / f"k{n}.db"),
                                    "--images", str(Path(tmp) / "boards")], cwd=ROOT, env=env, text=True,
                                   stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            assert bot.stdin is not None
            bot.stdin.write("/play italian level 5 black\n")
            bot.stdin.flush()
            deadline = time.monotonic() + 60
            kids: list[int] = []
            while time.monotonic() < deadline:
                workers = engine_workers(bot.pid)
                if len(workers) >= 2:
                    break
                time.sleep(0.1)
            time.sleep(0.7)                 # the search is under way
            kids = descendants(bot.pid)
            os.kill(bot.pid, signal.SIGKILL)
            bot.wait(10)
            time.sleep(3)
            left = [pid for pid in kids if alive(pid)]
            left_total += len(left)
            for pid in left:
                os.kill(pid, signal.SIGKILL)
    return left_total


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="fairness,recovery,orphans")
    parser.add_argument("--users", type=int, default=60)
    parser.add_argument("--levels", default="5,5,1", help="the players' levels, in turn")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--kills", type=int, default=5)
    args = parser.parse_args()
    parts = args.parts.split(",")
    if "fairness" in parts:
        pattern = [int(x) for x in args.levels.split(",")]
        levels = [pattern[n % len(pattern)] for n in range(args.users)]
        worst = fairness(levels, args.workers)
        for level in sorted(worst):
            print(f"fairness  {args.users} players, {args.workers} workers: longest wait for a level-{level} "
                  f"move {worst[level]:.2f} s")
        # Behind one level-5 search per worker, and the other level-1 and -2 moves shared by the workers.
        shorts = sum(LEVELS[level].seconds for level in levels if level <= 2)
        bound = LEVELS[5].seconds + shorts / args.workers + 0.5
        print(f"fairness  last level-1 move after {worst[1]:.2f} s (target <= {bound:.1f} s) "
              f"{'MET' if worst[1] <= bound else 'MISSED'}")
    if "recovery" in parts:
        took = recovery()
        print(f"recovery  the bot's move {took:.2f} s after its worker was killed (target <= 5 s) "
              f"{'MET' if took <= 5 else 'MISSED'}")
    if "orphans" in parts:
        left = orphans(args.kills)
        print(f"orphans   {left} processes left running after {args.kills} kill -9 of the bot (target 0) "
              f"{'MET' if left == 0 else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
