"""Executors for tests of the bot's thinking: jobs held until the test runs them."""

from __future__ import annotations

from concurrent.futures import Executor, Future
from typing import Any


class HeldExecutor(Executor):
    """Takes jobs and runs them only when ``run_all`` is called (in the caller's thread)."""

    def __init__(self) -> None:
        self.jobs: list[tuple[Future, Any, tuple, dict]] = []

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()
        self.jobs.append((future, fn, args, kwargs))
        return future

    def run_all(self) -> int:
        jobs, self.jobs = self.jobs, []
        for future, fn, args, kwargs in jobs:
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(fn(*args, **kwargs))
                except BaseException as exc:  # handed to the future, as a pool would
                    future.set_exception(exc)
        return len(jobs)
