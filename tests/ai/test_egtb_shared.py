"""The endgame tables are unpacked once into a file and mapped by every process (issue 30, item 7):
two engine workers that probe the same ending read the same pages of one file mapping, and nobody
holds a copy of their own."""

from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from procs import needs_proc

from bot.ai import egtb, jit
from bot.ai.egtb import store
from bot.rules import Position, get_variant
from bot.service.thinking import move_job, pool_context, worker_init

# Three pieces, so every node of the search is in the tables.
ENDING = ("spanish", "W:WK10,K20:BK1")


def mappings_of(pid: int, path: Path) -> list[dict[str, int]]:
    """The kB fields (Rss, Shared_Clean, Private_Dirty, ...) and the inode of each mapping of ``path``
    in ``pid``."""
    found: list[dict[str, int]] = []
    current: dict[str, int] | None = None
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split()
        if len(head) >= 5 and "-" in head[0] and ":" in head[3]:
            current = None
            if len(head) >= 6 and head[5] == str(path):
                current = {"inode": int(head[4])}
                found.append(current)
        elif current is not None and head and head[0].endswith(":") and len(head) >= 2 and head[1].isdigit():
            current[head[0][:-1]] = int(head[1])
    return found


def test_a_table_file_is_unpacked_once_and_read_through_one_mapping(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(store, "unpacked_dir", lambda: tmp_path)
    v = get_variant("spanish")
    [shipped] = [p for p in store.find(v) if p.parent == store.SHIPPED]
    first, second = store.TableFile(shipped, v), store.TableFile(shipped, v)
    m = first.materials[3]
    a, b = first.table(m), second.table(m)
    assert isinstance(a, memoryview) and bytes(a) == bytes(b) == store.load(shipped, v)[1][m]
    [unpacked] = tmp_path.glob("*.egtb")
    assert unpacked == first.unpacked_path() == second.unpacked_path()
    assert unpacked.stat().st_nlink == 1 and not list(tmp_path.glob("*.part"))
    # The same file, mapped by both (no second copy was written over the first).
    mine = mappings_of(os.getpid(), unpacked)
    assert len(mine) == 2 and mine[0]["inode"] == mine[1]["inode"] == unpacked.stat().st_ino
    # The compiled probe's array is that mapping (numpy over it, no copy).
    tb = egtb.Tables(v, first.pieces, first)
    if jit.HAVE_NUMBA:
        flat = jit._table_arrays(tb)[-1]
        whole = first.mapped()
        assert whole is not None and flat.flags.writeable and getattr(flat.base, "obj", flat.base) is whole[0]
    assert tb.verdict(Position.from_fen(*ENDING)) is not None


def test_without_a_writable_cache_the_tables_are_read_into_memory(tmp_path, monkeypatch) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    monkeypatch.setattr(store, "unpacked_dir", lambda: blocked / "egtb")
    v = get_variant("spanish")
    [shipped] = [p for p in store.find(v) if p.parent == store.SHIPPED]
    f = store.TableFile(shipped, v)
    assert f.mapped() is None
    m = f.materials[3]
    assert bytes(f.table(m)) == store.load(shipped, v)[1][m]
    assert egtb.Tables(v, f.pieces, f).verdict(Position.from_fen(*ENDING)) is not None


@needs_proc
def test_two_engine_workers_probe_the_same_pages_of_one_file_mapping() -> None:
    v = get_variant(ENDING[0])
    [shipped] = [p for p in store.find(v) if p.parent == store.SHIPPED]
    unpacked = store.TableFile(shipped, v).unpacked_path()
    context = pool_context()
    pool = ProcessPoolExecutor(2, mp_context=context, initializer=worker_init,
                               initargs=(os.getpid(), context.get_start_method() == "forkserver"))
    try:
        seen: dict[int, list[dict[str, int]]] = {}
        deadline = time.monotonic() + 120
        while len(seen) < 2 and time.monotonic() < deadline:
            # Two searches at once, so that both workers take one.
            jobs = [pool.submit(move_job, ENDING[0], ENDING[1], 5, [], seed, 0.3) for seed in (1, 2)]
            assert all(job.result(timeout=120)["move"] for job in jobs)
            for pid in list(pool._processes):  # type: ignore[attr-defined]
                found = mappings_of(pid, unpacked)
                if found:
                    seen[pid] = found
        assert len(seen) == 2, f"workers mapping {unpacked}: {sorted(seen)}"
        inodes = {m["inode"] for found in seen.values() for m in found}
        assert inodes == {unpacked.stat().st_ino}
        for found in seen.values():
            # The pages the probes read are the file's, shared with the other worker; none copied.
            assert sum(m.get("Shared_Clean", 0) for m in found) > 0
            assert sum(m.get("Private_Dirty", 0) + m.get("Anonymous", 0) for m in found) == 0
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


@pytest.fixture(autouse=True)
def _fresh_tables():
    egtb.forget()
    yield
    egtb.forget()
