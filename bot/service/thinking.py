"""The bot's thinking, away from the thread that asked: engine searches (the bot's move, a game's
analysis) run in a process pool sized for the machine, so a bot that thinks blocks no event loop
and, with several workers, delays no other game.

Work is keyed (a game and its ply, an analysis and its chat): a key already being worked on is
not submitted twice, which is what makes "resume every game the bot is to move in" after a
restart safe to call as often as one likes.  Results come back through a callback: from a
process pool, in a small thread pool of the Thinker's own (not on the pool's manager thread, which
would stop collecting every other result while one is written); from a thread pool, in the worker
that did the job.  The service writes them with the game's version check, so a result that
arrives for a position that moved on changes nothing.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Hashable
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

log = logging.getLogger("bot.service.thinking")

MAX_WORKERS = 8
# After a job failed, its key waits this long before it may be submitted again (no hot loop on a
# position the engine cannot handle).
FAILED_BACKOFF_SECONDS = 30.0
# Threads that handle results (write the move, render its board): a slow one does not hold up others.
RESULT_THREADS = 2


def worker_count() -> int:
    """How many engine processes: $DRAUGHTS_AI_WORKERS, else one per CPU this process may use
    (at most MAX_WORKERS)."""
    text = os.environ.get("DRAUGHTS_AI_WORKERS", "").strip()
    if text.isdigit() and int(text) > 0:
        return min(int(text), 64)
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, MAX_WORKERS))


# -- the jobs (run in the worker processes; module-level so they pickle by name) -----------------------


def warm_job() -> bool:
    """Load the engine in a worker (its modules and tables), so the first real search is not slower."""
    from bot.ai import choose_move
    from bot.rules import Position

    choose_move("italian", Position.start("italian").fen(), 1, time_limit=0.01, rng=0)
    return True


def move_job(variant: str, fen: str, level: int, history: list[str], seed: int,
             seconds: float | None = None) -> dict[str, Any]:
    """The bot's move for a position: its notation and how the search went."""
    from bot.ai import choose_move

    started = time.perf_counter()
    result = choose_move(variant, fen, level, time_limit=seconds, history=history, rng=seed)
    return {"move": str(result.move), "score": result.score, "depth": result.depth, "nodes": result.nodes,
            "seconds": time.perf_counter() - started}


def analysis_job(variant: str, start_fen: str | None, moves: list[str], seconds: float) -> list[dict[str, Any]]:
    """The engine's note on every move of a game (see bot.ai.analyse_game), as plain values."""
    from bot.ai import analyse_game
    from bot.rules import Game

    game = Game(variant, start_fen, draw_rules=False)
    for move in moves:
        game.play(move)
    return [{"ply": n.ply, "move": str(n.move), "best": str(n.best), "best_score": n.best_score,
             "played_score": n.played_score, "forced": n.forced} for n in analyse_game(game, seconds)]


class Thinker:
    """A pool of engine processes shared by everything the service has the bot think about.

    ``executor`` may be given (tests pass one that runs jobs in threads); otherwise a process pool
    of ``worker_count()`` processes is started on first use, with the spawn method (safe in a
    process that runs threads, and the same on every system)."""

    def __init__(self, executor: Executor | None = None, workers: int | None = None) -> None:
        self._executor = executor
        self._own = executor is None
        self.workers = workers or worker_count()
        self._lock = threading.Condition()
        self._running: dict[Hashable, Future] = {}
        self._failed: dict[Hashable, float] = {}
        self._closed = False
        self._results = ThreadPoolExecutor(RESULT_THREADS, thread_name_prefix="bot-results")

    def _pool(self) -> Executor:
        if self._executor is None:
            self._executor = ProcessPoolExecutor(max_workers=self.workers,
                                                 mp_context=multiprocessing.get_context("spawn"))
        return self._executor

    def warm(self) -> None:
        """Start the worker processes now, in the background (a process pool starts them on
        demand, and the first move after a start would pay for it)."""
        for n in range(self.workers):
            self.submit(("warm", n), warm_job, (), on_done=lambda _result: None)

    def busy(self, key: Hashable) -> bool:
        """Whether work under ``key`` is being done (or waits for a worker)."""
        with self._lock:
            return key in self._running

    def running(self, kind: str | None = None) -> list[Hashable]:
        """The keys being worked on (those whose first element is ``kind``, when given)."""
        with self._lock:
            return [k for k in self._running if kind is None or (isinstance(k, tuple) and k and k[0] == kind)]

    def submit(self, key: Hashable, job: Callable[..., Any], args: tuple,
               on_done: Callable[[Any], None], on_error: Callable[[BaseException], None] | None = None) -> bool:
        """Start ``job(*args)`` in the pool unless ``key`` is already being worked on (or failed
        a moment ago); ``on_done(result)`` or ``on_error(exception)`` is called when it ends.
        Whether it was started."""
        with self._lock:
            if self._closed or key in self._running:
                return False
            if self._failed.get(key, 0.0) > time.monotonic():
                return False
            try:
                future = self._pool().submit(job, *args)
            except BrokenProcessPool:
                # A worker died (killed, out of memory): a fresh pool takes the work.
                log.warning("the engine pool broke; starting a new one")
                self._executor = None
                future = self._pool().submit(job, *args)
            self._running[key] = future
            in_processes = isinstance(self._executor, ProcessPoolExecutor)
        if in_processes:
            future.add_done_callback(lambda f: self._hand_over(key, f, on_done, on_error))
        else:
            # A thread pool's worker calls back itself: nothing else waits on that thread.
            future.add_done_callback(lambda f: self._finished(key, f, on_done, on_error))
        return True

    def _hand_over(self, key: Hashable, future: Future, on_done: Callable[[Any], None],
                   on_error: Callable[[BaseException], None] | None) -> None:
        try:
            self._results.submit(self._finished, key, future, on_done, on_error)
        except RuntimeError:
            # Closed meanwhile: the result is not wanted (the work is found again after a restart).
            with self._lock:
                self._running.pop(key, None)
                self._lock.notify_all()

    def _finished(self, key: Hashable, future: Future, on_done: Callable[[Any], None],
                  on_error: Callable[[BaseException], None] | None) -> None:
        try:
            if self._closed or future.cancelled():
                # Stopped meanwhile: whoever handles the result may be gone (its database closed);
                # the work is found again after the restart.
                return
            error = future.exception()
            if error is None:
                try:
                    on_done(future.result())
                except Exception:
                    log.exception("handling the result of %r failed", key)
                    self._backoff(key)
            else:
                if isinstance(error, BrokenProcessPool):
                    with self._lock:
                        if self._own:
                            self._executor = None
                log.error("engine work %r failed: %r", key, error)
                self._backoff(key)
                if on_error is not None:
                    try:
                        on_error(error)
                    except Exception:
                        log.exception("reporting the failure of %r failed", key)
        finally:
            with self._lock:
                self._running.pop(key, None)
                self._lock.notify_all()

    def _backoff(self, key: Hashable) -> None:
        with self._lock:
            self._failed[key] = time.monotonic() + FAILED_BACKOFF_SECONDS

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until nothing asked for is being worked on (results handled too); False on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            # Warming the workers up is nobody's answer: it is not waited for.
            while any(not (isinstance(k, tuple) and k[:1] == ("warm",)) for k in self._running):
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._lock.wait(left)
        return True

    def close(self) -> None:
        """Stop the pool: work not started is cancelled, results still coming are ignored (the
        work is found again after a restart)."""
        with self._lock:
            self._closed = True
            executor, self._executor = self._executor, None
            running = list(self._running.values())
        for future in running:
            future.cancel()
        if executor is not None and self._own:
            executor.shutdown(wait=False, cancel_futures=True)
        # A result being written finishes before the caller closes the database under it.
        self._results.shutdown(wait=True)
