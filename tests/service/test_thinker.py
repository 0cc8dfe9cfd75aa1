"""The Thinker on its own: results are handled off the pool's threads, one slow result does not
hold up another, nothing is handled after close."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

from bot.service.thinking import Thinker


def double(n: int) -> int:
    time.sleep(0.3)         # still running when its callback is attached (not run on the spot)
    return 2 * n


def test_a_slow_result_does_not_hold_up_the_next_one():
    # One engine process: its results are collected by the pool's single manager thread, which
    # must not be the thread that writes them.
    pool = ProcessPoolExecutor(1)
    thinker = Thinker(pool)
    release = threading.Event()
    seen: dict[str, tuple[int, str]] = {}
    done = threading.Event()

    def slow(result: int) -> None:
        seen["slow"] = (result, threading.current_thread().name)
        release.wait(30)

    def fast(result: int) -> None:
        seen["fast"] = (result, threading.current_thread().name)
        done.set()

    try:
        assert thinker.submit(("a", 1), double, (1,), on_done=slow)
        deadline = time.monotonic() + 30
        while "slow" not in seen and time.monotonic() < deadline:
            time.sleep(0.01)
        assert thinker.submit(("b", 2), double, (2,), on_done=fast)
        assert done.wait(10), "the second result waited for the first one's handler"
        assert seen["slow"][0] == 2 and seen["fast"][0] == 4
        assert all(name.startswith("bot-results") for _result, name in seen.values())
    finally:
        release.set()
        assert thinker.wait_idle(30)
        thinker.close()
        pool.shutdown(wait=True)


def test_a_result_after_close_is_not_handled():
    pool = ThreadPoolExecutor(1)
    thinker = Thinker(pool)
    started, finish = threading.Event(), threading.Event()
    handled: list[int] = []

    def job() -> int:
        started.set()
        finish.wait(30)
        return 7

    try:
        assert thinker.submit("k", job, (), on_done=handled.append)
        assert started.wait(30)
        thinker.close()
        finish.set()
        pool.shutdown(wait=True)
        assert thinker.wait_idle(30)
        assert handled == []
        assert not thinker.submit("k2", job, (), on_done=handled.append)
    finally:
        finish.set()
