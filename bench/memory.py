"""The memory of an idle bot: its main process and its engine workers, as the kernel counts it.

Run from the repository root::

    python bench/memory.py                  # two workers, one level-3 bot move first
    python bench/memory.py --workers 1 --mappings 12

``python -m bot console`` is started with its input a pipe kept open, ``DRAUGHTS_AI_WORKERS``
workers (2 by default), a throw-away database and the machine's engine cache (compiled already:
run the bot once before, or the first start's compile is measured too).  It is sent
``/play italian black level 3``, so the bot moves first; once its move is printed and a few seconds
have passed (the workers warm, the bot idle), every process of the tree (the bot, its workers,
multiprocessing's resource tracker and fork server) is read from ``/proc/<pid>/smaps_rollup``.

PSS (proportional set size) shares each page among the processes that map it, so the tree's summed
PSS is what the tree costs the machine: a page shared by two workers counts half in each.  Printed:
each process's PSS, RSS and private (USS) memory, the tree's PSS, and (``--mappings N``) the N
largest mappings of one worker by PSS (libraries, the heap, the endgame tables' file).

Target (issue 30, item 7): the idle tree with two workers at most 350 MB of PSS.  Linux only.

Measured on the shared two-core development machine, two workers, after a level-3 Italian move:
before (spawned workers, each loading numba, the compiled search and its own copy of the tables)
343 MB: the bot 70, the resource tracker 7, each worker 133.  After (workers forked from a fork
server that loaded the compiled search; the tables mapped from one unpacked file; no transposition
table kept between jobs) 160-175 MB: the bot 70, the resource tracker 7, the fork server 35-45,
each worker 25.  After a level-5 Triestina move (``--level 5 --variant triestina``): 282 MB
before the transposition table was let go after each job, 160 MB after.
"""

from __future__ import annotations

import argparse
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MOVE_LINE = re.compile(r"^\[\d+\] bot → \S+: Bot \(level \d\) played ")
TARGET_MB = 350.0


def children(parent: int) -> list[int]:
    """Running processes whose parent is ``parent``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[1]) == parent and fields[0] not in "ZX":
            found.append(int(entry.name))
    return sorted(found)


def tree(pid: int, parent: int = 0) -> list[tuple[int, int]]:
    """(pid, its parent) for ``pid`` and every process under it."""
    out = [(pid, parent)]
    for child in children(pid):
        out.extend(tree(child, pid))
    return out


def rollup(pid: int) -> dict[str, int]:
    """The kB fields of /proc/<pid>/smaps_rollup (Pss, Rss, Private_*, Shared_*)."""
    fields: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        key, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[-1] == "kB":
            fields[key] = int(parts[0])
    return fields


def mappings(pid: int) -> dict[str, int]:
    """PSS in kB per mapped file (anonymous memory as '[anon]', the heap as '[heap]')."""
    out: dict[str, int] = defaultdict(int)
    name = "[anon]"
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split()
        if head and re.fullmatch(r"[0-9a-f]+-[0-9a-f]+", head[0]):
            name = head[5] if len(head) > 5 else "[anon]"
            if "/" in name:
                name = "…/" + "/".join(Path(name).parts[-2:])
        elif head and head[0] == "Pss:":
            out[name] += int(head[1])
    return out


def kind(pid: int, parent: int, bot: int) -> str:
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "?"
    if pid == bot:
        return "bot (main)"
    if "resource_tracker" in cmd:
        return "resource tracker"
    if "forkserver" in cmd and parent == bot:
        return "fork server"
    return "engine worker"          # spawned by the bot, or forked by the fork server


def measure(workers: int, settle: float, shown: int, level: int, variant: str = "italian") -> float:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_BOT_TOKEN") and k != "DATABASE_URL"}
    env.update(PYTHONPATH=str(ROOT), LANG="en_US.UTF-8", LOG_LEVEL="WARNING", DRAUGHTS_AI_WORKERS=str(workers),
               PYTHONUNBUFFERED="1")
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.Popen([sys.executable, "-m", "bot", "console", "--db", str(Path(tmp) / "bot.db"),
                                 "--images", str(Path(tmp) / "boards")], cwd=tmp, env=env, text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert proc.stdin is not None and proc.stdout is not None
        lines: queue.Queue[str | None] = queue.Queue()

        def read() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                lines.put(line.rstrip("\n"))
            lines.put(None)

        threading.Thread(target=read, daemon=True).start()
        try:
            proc.stdin.write(f"/play {variant} black level {level}\n")
            proc.stdin.flush()
            end = time.monotonic() + 300
            while True:
                line = lines.get(timeout=max(0.1, end - time.monotonic()))
                if line is None:
                    raise SystemExit("the bot ended before its move")
                if MOVE_LINE.match(line):
                    break
            time.sleep(settle)
            pids = tree(proc.pid)
            total = 0
            print(f"{'process':<18} {'pid':>7} {'PSS MB':>8} {'RSS MB':>8} {'USS MB':>8}")
            worker = None
            for pid, parent in pids:
                r = rollup(pid)
                uss = r.get("Private_Clean", 0) + r.get("Private_Dirty", 0)
                what = kind(pid, parent, proc.pid)
                if what == "engine worker" and worker is None:
                    worker = pid
                print(f"{what:<18} {pid:>7} {r['Pss'] / 1024:>8.1f} {r['Rss'] / 1024:>8.1f} {uss / 1024:>8.1f}")
                total += r["Pss"]
            mb = total / 1024
            print(f"idle tree with {workers} worker(s): {mb:.1f} MB PSS in {len(pids)} processes "
                  f"(target <= {TARGET_MB:.0f} MB with two: {'met' if mb <= TARGET_MB else 'NOT met'})")
            if shown and worker is not None:
                print(f"\nthe {shown} largest mappings of worker {worker} by PSS:")
                for name, kb in sorted(mappings(worker).items(), key=lambda kv: -kv[1])[:shown]:
                    print(f"  {kb / 1024:8.1f} MB  {name}")
            return mb
        finally:
            proc.stdin.close()
            try:
                proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def main() -> int:
    if not sys.platform.startswith("linux"):
        print("Linux only (/proc)")
        return 2
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--level", type=int, default=3, help="the level of the bot's first move")
    parser.add_argument("--variant", default="italian", help="the variant of that game")
    parser.add_argument("--settle", type=float, default=3.0, help="seconds idle before measuring")
    parser.add_argument("--mappings", type=int, default=10, help="a worker's largest mappings shown")
    args = parser.parse_args()
    mb = measure(args.workers, args.settle, args.mappings, args.level, args.variant)
    return 0 if args.workers != 2 or mb <= TARGET_MB else 1


if __name__ == "__main__":
    sys.exit(main())
