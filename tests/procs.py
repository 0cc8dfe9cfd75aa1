"""The engine's worker processes as the system sees them (Linux /proc): tests that kill a worker or
the bot find them here, without asking the code under test."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

needs_proc = pytest.mark.skipif(not sys.platform.startswith("linux") or not Path("/proc/self/stat").exists(),
                                reason="reads processes from Linux /proc")


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, parent pid) of ``pid``, None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return fields[0], int(fields[1])


def alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie nobody reaped has ended)."""
    stat = _stat(pid)
    return stat is not None and stat[0] not in ("Z", "X")


def engine_workers(parent: int | None = None) -> list[int]:
    """Running multiprocessing workers of ``parent`` (this process by default): spawned by it
    (``spawn_main`` on their command line), or forked by its fork server (a child of ``parent`` with
    ``forkserver`` on its command line, whose children carry the same)."""
    parent = os.getpid() if parent is None else parent
    found = []
    for server in _children(parent, b"forkserver"):
        found += _children(server, b"forkserver")
    return sorted(found + _children(parent, b"spawn_main"))


def _children(parent: int, marker: bytes) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        stat = _stat(pid)
        if stat is None or stat[1] != parent or not alive(pid):
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if marker in cmdline:
            found.append(pid)
    return sorted(found)
