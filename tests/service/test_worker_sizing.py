"""How many engine workers the bot starts in a container (issue 30, item 7): the CPU quota and the
memory limit of its control group bound the one-per-CPU default.  The cgroup files are fake ones in
a temporary folder, laid out as the kernel mounts them (v2 unified, v1 one folder per controller)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import from_env
from bot.service.capacity import MAIN_BUDGET, MIB, WORKER_BUDGET, Limits, container_limits, workers_for
from bot.service.thinking import MAX_WORKERS, worker_count


def files(root: Path, tree: dict[str, str]) -> Path:
    for name, text in tree.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n")
    return root


def v2(root: Path, **tree: str) -> Path:
    """A cgroup v2 mount: the container's own group at the root (a cgroup namespace)."""
    return files(root, {"cgroup.controllers": "cpuset cpu io memory pids",
                        **{name.replace("__", "/").replace("_", "."): text for name, text in tree.items()}})


def count(root: Path, membership: str = "0::/\n", cpus: int = 8) -> int:
    return worker_count(None, container_limits(root, membership), cpus)


def test_v2_no_quota_and_no_limit_is_one_worker_per_cpu_up_to_eight(tmp_path):
    root = v2(tmp_path, cpu_max="max 100000", memory_max="max", memory_high="max")
    assert container_limits(root, "0::/\n") == Limits(None, None)
    assert count(root, cpus=8) == 8
    assert count(root, cpus=16) == MAX_WORKERS == 8
    assert count(root, cpus=2) == 2


def test_v2_cpu_quota_of_two_cpus_gives_two_workers_on_an_eight_core_host(tmp_path):
    root = v2(tmp_path, cpu_max="200000 100000", memory_max="max")
    assert container_limits(root, "0::/\n") == Limits(2.0, None)
    assert count(root, cpus=8) == 2


def test_v2_fractional_and_tiny_quotas_round_down_but_keep_one_worker(tmp_path):
    assert count(v2(tmp_path / "a", cpu_max="150000 100000")) == 1
    assert count(v2(tmp_path / "b", cpu_max="50000 100000")) == 1
    assert count(v2(tmp_path / "c", cpu_max="350000 100000")) == 3


def test_v2_memory_limit_of_512_mb_on_an_eight_core_host(tmp_path):
    root = v2(tmp_path, cpu_max="max 100000", memory_max=str(512 * MIB))
    assert container_limits(root, "0::/\n") == Limits(None, 512 * MIB)
    assert count(root, cpus=8) == (512 * MIB - MAIN_BUDGET) // WORKER_BUDGET == 2
    # memory.high holds the group back before memory.max: the lower one counts.
    assert count(v2(tmp_path / "high", memory_max=str(2048 * MIB), memory_high=str(450 * MIB))) == 2
    # Less than the main process's budget leaves room for no worker: one all the same.
    assert count(v2(tmp_path / "small", memory_max=str(200 * MIB))) == 1
    assert count(v2(tmp_path / "big", memory_max=str(4096 * MIB))) == 8


def test_v2_a_limit_on_a_parent_group_binds_the_child(tmp_path):
    # No namespace: /proc/self/cgroup names the group's path under the mount.
    root = v2(tmp_path, cpu_max="max 100000", kubepods__cpu_max="300000 100000",
              kubepods__pod7__cpu_max="max 100000", kubepods__pod7__memory_max=str(1024 * MIB))
    assert container_limits(root, "0::/kubepods/pod7\n") == Limits(3.0, 1024 * MIB)
    assert count(root, "0::/kubepods/pod7\n") == 3
    # The host's path missing under the mount (the container's group bound there): the mount counts.
    assert container_limits(root, "0::/docker/abc\n") == Limits(None, None)


def test_v1_quota_and_memory_limit(tmp_path):
    root = files(tmp_path, {"cpu,cpuacct/cpu.cfs_quota_us": "300000", "cpu,cpuacct/cpu.cfs_period_us": "100000",
                            "memory/memory.limit_in_bytes": str(512 * MIB), "unified/cgroup.controllers": ""})
    membership = "12:memory:/\n4:cpu,cpuacct:/\n0::/\n"
    assert container_limits(root, membership) == Limits(3.0, 512 * MIB)
    assert count(root, membership) == 2                 # the memory allows two, the quota three
    assert worker_count(None, container_limits(root, membership), 1) == 1     # one visible CPU


def test_v1_unlimited_is_no_limit_and_a_nested_group_is_found(tmp_path):
    root = files(tmp_path, {"cpu/cpu.cfs_quota_us": "-1", "cpu/cpu.cfs_period_us": "100000",
                            "memory/memory.limit_in_bytes": "9223372036854771712",
                            "cpu/docker/abc/cpu.cfs_quota_us": "100000", "cpu/docker/abc/cpu.cfs_period_us": "100000",
                            "memory/docker/abc/memory.limit_in_bytes": "9223372036854771712"})
    assert container_limits(root, "4:cpu:/\n3:memory:/\n") == Limits(None, None)
    nested = "4:cpu:/docker/abc\n3:memory:/docker/abc\n"
    assert container_limits(root, nested) == Limits(1.0, None)
    assert count(root, nested) == 1


@pytest.mark.parametrize("text", ["", "garbage", "max", "-5 100000", "100000 0", "1e9"])
def test_unreadable_values_are_no_limit(tmp_path, text):
    root = v2(tmp_path, cpu_max=text, memory_max=text)
    assert container_limits(root, "0::/\n") == Limits(None, None)


def test_no_cgroup_files_at_all_is_no_limit(tmp_path):
    assert container_limits(tmp_path / "nothing", "") == Limits(None, None)
    assert workers_for(4, Limits(), 8) == 4


def test_draughts_ai_workers_wins_over_the_limits(tmp_path):
    root = v2(tmp_path, cpu_max="100000 100000", memory_max=str(300 * MIB))
    assert worker_count(from_env({"DRAUGHTS_AI_WORKERS": "4"}).ai_workers, container_limits(root, "0::/\n"), 8) == 4


def test_this_machine_is_read_without_error():
    limits = container_limits()
    assert limits.cpus is None or limits.cpus > 0
    assert limits.memory is None or limits.memory > 0
    assert 1 <= worker_count(None) <= MAX_WORKERS
