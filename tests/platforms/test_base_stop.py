"""Stopping the delivery task: a stop asked for while the task does its timed work ends the task
after that round, by itself; the round's own clearing of its wake-up does not swallow the stop
(the task then slept until its next timer, and stopping waited out its timeout and cancelled it,
so that a message being sent could go out twice)."""

from __future__ import annotations

import asyncio
import threading

import bot.platforms.base as base
from bot.platforms.base import ChatAdapter
from bot.service import GameService
from bot.storage import Storage

WATCHDOG_SECONDS = 60.0      # how long stopping may wait before it cancels: never reached when right


class Quiet(ChatAdapter):
    platform = "test"


async def test_a_stop_asked_for_during_the_timed_work_ends_the_delivery_task_by_itself(tmp_path, monkeypatch):
    # The idle sleep is long, as with no timer due: only a wake-up ends it.
    monkeypatch.setattr(base, "MAX_IDLE_SECONDS", 3600.0)
    storage = Storage(tmp_path / "stop.db")
    service = GameService(storage)
    adapter = Quiet(service)
    in_timed_work, go_on = threading.Event(), threading.Event()
    run_due = service.run_due

    def held_run_due(*args, **kwargs):
        in_timed_work.set()
        go_on.wait(WATCHDOG_SECONDS)
        return run_due(*args, **kwargs)

    monkeypatch.setattr(service, "run_due", held_run_due)
    try:
        adapter.start_delivery()
        task = adapter._task
        assert task is not None
        await asyncio.to_thread(in_timed_work.wait, WATCHDOG_SECONDS)
        assert in_timed_work.is_set()
        stopping = asyncio.create_task(adapter.stop_delivery(timeout=WATCHDOG_SECONDS))
        while not adapter._stopping:                 # the stop is asked for, and its wake-up sent ...
            await asyncio.sleep(0)
        await asyncio.sleep(0)
        go_on.set()                                  # ... before the round's timed work ends
        await stopping
        assert task.done() and not task.cancelled() and task.exception() is None
        assert not adapter.delivering
    finally:
        go_on.set()
        service.close()
        storage.close()
