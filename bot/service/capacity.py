"""How many engine workers the machine (or the container) the bot runs in can hold.

``os.sched_getaffinity`` sees the CPUs a process may run on, not a container's CPU quota nor its
memory limit: a 512 MB container on an 8-core host would start 8 workers.  So the count is also
bounded by the control group's limits (Linux; elsewhere there are none to read):

- the CPU quota: cgroup v2 ``cpu.max`` (``"200000 100000"``: 2 CPUs; ``"max 100000"``: none), cgroup
  v1 ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us`` (a quota of -1: none), rounded down, at least 1;
- the memory limit: cgroup v2 ``memory.max`` (and ``memory.high``, the point where the kernel starts
  to hold the group back), cgroup v1 ``memory.limit_in_bytes``: what is left after ``MAIN_BUDGET``
  (the bot's own process, the engine's fork server and the endgame tables' pages) in workers of
  ``WORKER_BUDGET`` each (a worker's own memory after long searches: its transposition table is
  64 MB, its search buffers and Python objects about 20 MB more).

A limit set on a parent group binds too, so the group's folder and those above it are read and the
smallest limit wins.  ``bench/memory.py`` measures what the budgets stand for.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
MIB = 1 << 20
# The bot's process, the fork server the workers are forked from (it holds the compiled search they
# share), multiprocessing's resource tracker and the endgame tables' pages: about 210 MB measured
# idle with the tables of one variant in use (bench/memory.py), 250 MB with room for the others.
MAIN_BUDGET = 250 * MIB
# One worker's own memory at its largest (after long searches); idle it is about 6 MB.
WORKER_BUDGET = 100 * MIB
# cgroup v1 writes a huge number (the largest page-aligned int64) for "no limit".
V1_NO_LIMIT = 1 << 62


@dataclass(frozen=True)
class Limits:
    """A control group's limits: ``cpus`` the CPU quota in CPUs (2.5 for 250 ms every 100 ms),
    ``memory`` in bytes; None where there is none."""

    cpus: float | None = None
    memory: int | None = None


def container_limits(root: Path = CGROUP_ROOT, membership: str | None = None) -> Limits:
    """The limits of the control group this process is in: ``root`` is where the cgroup file
    systems are mounted, ``membership`` the text of /proc/self/cgroup (read when None).  Files that
    are missing or unreadable mean no limit."""
    if membership is None:
        try:
            membership = Path("/proc/self/cgroup").read_text()
        except OSError:
            membership = ""
    groups: dict[str, str] = {}             # controller ("" for cgroup v2) -> the group's path
    for line in membership.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            for controller in parts[1].split(",") if parts[1] else [""]:
                groups[controller] = parts[2].strip()
    if (root / "cgroup.controllers").exists():          # cgroup v2 mounted at the root: unified
        folders = _folders(root, groups.get("", "/"))
        quota = [_v2_cpus(folder / "cpu.max") for folder in folders]
        memory = [_number(folder / name) for folder in folders for name in ("memory.max", "memory.high")]
    else:
        cpu, mem = _v1_mount(root, "cpu"), _v1_mount(root, "memory")
        quota = [_v1_cpus(folder) for folder in _folders(cpu, groups.get("cpu", "/"))] if cpu else []
        memory = [_number(folder / "memory.limit_in_bytes")
                  for folder in _folders(mem, groups.get("memory", "/"))] if mem else []
        memory = [m if m is None or m < V1_NO_LIMIT else None for m in memory]
    cpus = [q for q in quota if q is not None]
    sizes = [m for m in memory if m is not None]
    return Limits(min(cpus) if cpus else None, min(sizes) if sizes else None)


def workers_for(cpus: int, limits: Limits, most: int) -> int:
    """Engine workers for ``cpus`` usable CPUs under ``limits``: at most ``most``, at least 1."""
    count = min(cpus, most)
    if limits.cpus is not None:
        count = min(count, max(1, math.floor(limits.cpus)))
    if limits.memory is not None:
        count = min(count, (limits.memory - MAIN_BUDGET) // WORKER_BUDGET)
    return max(1, count)


def visible_cpus() -> int:
    """The CPUs this process may run on (its affinity: a cpuset's too)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _folders(mount: Path, group: str) -> list[Path]:
    """The group's folder under ``mount`` and every folder above it up to the mount, those that
    exist.  Inside a container with its own cgroup namespace the group is "/" (the mount is the
    container's group); without one, the host's path may not exist under the mount, and the mount
    (the container's group, bound there) is what is left."""
    folders = []
    path = Path(group if group.startswith("/") else "/" + group)
    while True:
        folder = mount / path.relative_to("/")
        if folder.is_dir():
            folders.append(folder)
        if path == path.parent:
            return folders
        path = path.parent


def _v1_mount(root: Path, controller: str) -> Path | None:
    """Where a cgroup v1 controller is mounted under ``root`` ("cpu", "cpu,cpuacct", ...)."""
    try:
        entries = sorted(root.iterdir())
    except OSError:
        return None
    for entry in entries:
        if controller in entry.name.split(",") and entry.is_dir():
            return entry
    return None


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None


def _number(path: Path) -> int | None:
    """A byte count; None for "max", a missing file or anything else."""
    text = _read(path)
    return int(text) if text is not None and text.isdigit() and int(text) > 0 else None


def _v2_cpus(path: Path) -> float | None:
    """``cpu.max``: "QUOTA PERIOD" in microseconds, QUOTA "max" for none."""
    parts = (_read(path) or "").split()
    if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit() and int(parts[1]) > 0 and int(parts[0]) > 0:
        return int(parts[0]) / int(parts[1])
    return None


def _v1_cpus(folder: Path) -> float | None:
    quota, period = _read(folder / "cpu.cfs_quota_us"), _read(folder / "cpu.cfs_period_us")
    if quota and period and quota.isdigit() and period.isdigit() and int(quota) > 0 and int(period) > 0:
        return int(quota) / int(period)
    return None                                 # -1: no quota
