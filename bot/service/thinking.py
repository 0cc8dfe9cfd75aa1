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

The pool is never handed more work than it has workers: jobs wait in the Thinker's own queue, which
takes turns between chats and users (one waiting job per user in the queue, a few more behind it,
the rest refused) and serves short searches (levels 1-2) first, so a level-1 move waits behind at
most one longer search per worker.  A worker that dies (killed, out of memory) breaks the process
pool: a new pool takes over and the work that was under way is run again at once.  Workers end with
the bot: each watches its parent and exits when it is gone (kill -9 leaves no orphan searching).
"""

from __future__ import annotations

import functools
import logging
import multiprocessing
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any

from bot import config, engine_workers
from bot.ai import jit
from bot.service import capacity

log = logging.getLogger("bot.service.thinking")

MAX_WORKERS = 8
# After a job failed, its key waits this long before it may be submitted again (no hot loop on a
# position the engine cannot handle).
FAILED_BACKOFF_SECONDS = 30.0
# Threads that handle results (write the move, render its board): a slow one does not hold up others.
RESULT_THREADS = 2
# Jobs expected to take at most this long (levels 1 and 2) are served before longer ones.
SHORT_SECONDS = 0.5
# Jobs a user may have waiting (one in the queue, the others behind it); more are refused.
MAX_PER_USER = 4
# Runs of a job whose worker died: a job that takes its worker down every time is then given up.
MAX_ATTEMPTS = 3


# The most engine processes $DRAUGHTS_AI_WORKERS may ask for (bot.config checks it).
MOST_WORKERS = config.MOST_WORKERS


def worker_count(configured: int | None = None, limits: capacity.Limits | None = None,
                 cpus: int | None = None) -> int:
    """How many engine processes: ``configured`` ($DRAUGHTS_AI_WORKERS, which the entry point reads
    through bot.config and passes down), else one per CPU this process may use (at most
    MAX_WORKERS), as many as the container's CPU quota and memory limit allow (``capacity``; at
    least one).  ``limits`` and ``cpus`` stand in for the machine's (read when None)."""
    if configured is not None:
        return configured
    limits = capacity.container_limits() if limits is None else limits
    count = capacity.workers_for(capacity.visible_cpus() if cpus is None else cpus, limits, MAX_WORKERS)
    log.info("%d engine workers (CPU quota %s, memory limit %s)", count,
             "none" if limits.cpus is None else f"{limits.cpus:g}",
             "none" if limits.memory is None else f"{limits.memory // capacity.MIB} MB")
    return count


def ready_server() -> None:
    """Start the fork server, if the pool uses one, and wait until it has loaded the engine (its first
    start on a machine compiles the search: seconds).  Called by the dispatcher thread before it takes
    the Thinker's lock: a worker's start waits for the server, and the lock held meanwhile would hold
    up every ``submit`` (a chat's /play) for as long."""
    context = pool_context()
    if context.get_start_method() != "forkserver":
        return
    try:
        probe = context.Process(target=engine_workers.ready, name="bot-engine-ready", daemon=True)
        probe.start()
        probe.join()
    except Exception as error:
        log.warning("the engine's fork server did not start (%r); the pool starts it again", error)


# -- the worker processes ------------------------------------------------------------------------------

# The worker side (the jobs, the guard that ends a worker with the bot) lives outside the service, so
# that a worker imports the engine and not this service (see bot/engine_workers.py).
worker_init = engine_workers.worker_init
warm_job = engine_workers.warm_job
move_job = engine_workers.move_job
analysis_job = engine_workers.analysis_job

# What the fork server imports before it forks the workers (bot/engine_preload.py).
PRELOAD = "bot.engine_preload"


def pool_context() -> multiprocessing.context.ForkServerContext | multiprocessing.context.SpawnContext:
    """How the engine processes are started: forked from multiprocessing's fork server where the
    system has one (it loads the engine once and every worker shares those pages: see
    bot/engine_workers.py), else spawned (Windows).  Both are safe in a process that runs threads."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([PRELOAD])
        return context
    return multiprocessing.get_context("spawn")


# How long closing waits for the dispatcher thread to shut the pool down.
CLOSE_JOIN_SECONDS = 5.0
# After ``warm``, how long the engine processes wait for a first job before they are started anyway.
# A bot run that never searches in that time (a console fed a few lines, the tests' bot processes,
# which live seconds) starts none: the fork server's load of the engine is about 0.6 s of CPU.  A
# first job starts them at once, as before; only one asked for within these seconds of the start
# waits for that load (about a second), as it did when it came before the load was done.
WARM_AFTER_SECONDS = 30.0


@dataclass(eq=False)
class _Job:
    key: Hashable
    fn: Callable[..., Any]
    args: tuple
    on_done: Callable[[Any], None]
    on_error: Callable[[BaseException], None] | None
    chat: Hashable
    user: Hashable
    short: bool
    seq: int
    attempts: int = 0
    pool: Executor | None = None
    future: Future | None = field(default=None, repr=False)


class Thinker:
    """A pool of engine processes shared by everything the service has the bot think about.

    ``executor`` may be given (tests pass one that runs jobs in threads); otherwise a process pool
    of ``worker_count()`` processes is started on first use (``pool_context``: forked from the fork
    server, else spawned), and replaced when a worker dies.
    At most ``workers`` jobs are handed to the executor at a time; the others wait in the
    Thinker's queue (see the module's docstring)."""

    def __init__(self, executor: Executor | None = None, workers: int | None = None) -> None:
        self._executor = executor
        self._own = executor is None
        self.workers = workers or worker_count()
        self._lock = threading.Condition()
        self._jobs: dict[Hashable, _Job] = {}           # asked for and not ended: waiting or running
        self._queue: list[_Job] = []                    # waiting for a worker, one per user
        self._behind: dict[Hashable, deque[_Job]] = {}  # a user's further jobs, behind the queued one
        self._queued_users: dict[Hashable, int] = {}    # user -> their jobs in the queue (one, but
                                                        # for work run again after its worker died)
        self._active = 0                                # handed to the executor, not ended
        self._served: dict[tuple[str, Hashable], int] = {}   # chat / user -> the turn it was last served
        self._turn = 0
        self._seq = 0
        self._failed: dict[Hashable, float] = {}
        self._closed = False
        self._dispatcher: threading.Thread | None = None
        self._closing: Executor | None = None           # our pool, for the dispatcher to shut down
        self._results = ThreadPoolExecutor(RESULT_THREADS, thread_name_prefix="bot-results")
        self._first_start_asked = False
        self._warming = False           # warm() was called: the bot started its engine processes
        self._warm_pending = False      # ... and they are not started yet (see WARM_AFTER_SECONDS)
        self._warm_timer: threading.Timer | None = None

    def _pool(self) -> Executor:
        if self._executor is None:
            context = pool_context()
            self._executor = ProcessPoolExecutor(max_workers=self.workers, mp_context=context,
                                                 initializer=worker_init,
                                                 initargs=(os.getpid(), context.get_start_method() == "forkserver"))
        return self._executor

    def warm(self, after: float = WARM_AFTER_SECONDS) -> None:
        """Have the worker processes started and loaded before they are needed, in the background:
        with the first job, or ``after`` seconds from now, whichever comes first (a process pool
        starts them on demand, and the first move after a start would pay for it)."""
        with self._lock:
            if self._closed:
                return
            self._warming = True
            self._warm_pending = True
            if after > 0 and self._warm_timer is None:
                self._warm_timer = threading.Timer(after, self._start_warming)
                self._warm_timer.name = "bot-engine-warm"
                self._warm_timer.daemon = True
                self._warm_timer.start()
        if after <= 0:
            self._start_warming()

    def _start_warming(self, first: Hashable | None = None) -> None:
        """Start every worker with a job that loads the engine; ``first``: the key of the job that
        asked for them, which then takes one of them (the others' loads queue behind it)."""
        with self._lock:
            if not self._warm_pending or self._closed:
                return
            self._warm_pending = False
        for n in range(1 if first is not None else 0, self.workers):
            self.submit(("warm", n), warm_job, (), on_done=lambda _result: None,
                        seconds=None if first is not None else 0.0)

    @property
    def serving(self) -> bool:
        """Whether the pool is there for work nobody waits for (a finished game's scan): an executor
        given (tests, benchmarks), or our own pool once the bot started it (``warm``); a pool that
        nothing started is not started for it."""
        return not self._own or self._warming

    def first_start(self) -> bool:
        """Whether to tell a player that the engine is being prepared: True at most once, for the
        first caller, when our own pool's workers were started (``warm``) and this machine has not
        compiled the engine's search yet (the first move then waits for that: seconds, up to a
        minute on a busy machine)."""
        with self._lock:
            if not self._own or not self._warming or self._first_start_asked:
                return False
            self._first_start_asked = True
        return jit.needs_compiling()

    def busy(self, key: Hashable) -> bool:
        """Whether work under ``key`` is being done (or waits for a worker)."""
        with self._lock:
            return key in self._jobs

    def running(self, kind: str | None = None) -> list[Hashable]:
        """The keys being worked on or waiting (those whose first element is ``kind``, when given)."""
        with self._lock:
            return [k for k in self._jobs if kind is None or (isinstance(k, tuple) and k and k[0] == kind)]

    def submit(self, key: Hashable, job: Callable[..., Any], args: tuple,
               on_done: Callable[[Any], None], on_error: Callable[[BaseException], None] | None = None, *,
               chat: Hashable | None = None, user: Hashable | None = None, seconds: float | None = None) -> bool:
        """Queue ``job(*args)`` for the pool unless ``key`` is already being worked on (or failed
        a moment ago, or ``user`` has MAX_PER_USER jobs waiting); ``on_done(result)`` or
        ``on_error(exception)`` is called when it ends.  ``chat`` and ``user`` are whom the work
        is for (the queue takes turns between them; by default the key), ``seconds`` how long it
        is expected to take (short jobs go first; unknown counts as long).  Whether it was taken."""
        with self._lock:
            if self._closed or key in self._jobs:
                return False
            if self._failed.get(key, 0.0) > time.monotonic():
                return False
            user = key if user is None else user
            chat = user if chat is None else chat
            behind = self._behind.get(user)
            if self._queued_users.get(user) and len(behind or ()) + 1 >= MAX_PER_USER:
                return False
            self._seq += 1
            item = _Job(key, job, args, on_done, on_error, chat, user,
                        seconds is not None and seconds <= SHORT_SECONDS, self._seq)
            self._jobs[key] = item
            if self._queued_users.get(user):
                self._behind.setdefault(user, deque()).append(item)
            else:
                self._enqueue(item)
            started = self._after_change()
            warm_now = self._warm_pending and not (isinstance(key, tuple) and key[:1] == ("warm",))
        self._watch(started)
        if warm_now:
            self._start_warming(first=key)
        return True

    # -- the queue ---------------------------------------------------------------------------------------

    def _enqueue(self, job: _Job) -> None:
        self._queue.append(job)
        self._queued_users[job.user] = self._queued_users.get(job.user, 0) + 1

    def _after_change(self) -> list[_Job]:
        """Under the lock, when the queue or the free workers changed: with a process pool of our
        own the dispatcher thread hands work over (it starts the workers, see ``worker_init``);
        with a given executor it is done here.  The jobs started, for ``_watch``."""
        self._lock.notify_all()
        if self._own:
            if self._queue and self._dispatcher is None and not self._closed:
                self._dispatcher = threading.Thread(target=self._dispatch_loop, name="bot-engine-dispatch",
                                                    daemon=True)
                self._dispatcher.start()
            return []
        return self._start_ready()

    def _pick(self) -> _Job:
        """The next job: work whose worker died first, then short searches, then the longer ones;
        within each, the job whose chat and user were served least recently (turns), then the
        oldest."""
        retried = [j for j in self._queue if j.attempts]
        short = [j for j in self._queue if j.short]
        lane = retried or short or self._queue

        def turn(job: _Job) -> tuple[int, int, int]:
            chat, user = self._served.get(("chat", job.chat), -1), self._served.get(("user", job.user), -1)
            return max(chat, user), min(chat, user), job.seq

        return min(lane, key=turn)

    def _start_ready(self) -> list[_Job]:
        """Under the lock: hand queued jobs to the executor while it has a free worker."""
        started: list[_Job] = []
        while self._queue and self._active < self.workers and not self._closed:
            job = self._pick()
            self._queue.remove(job)
            left = self._queued_users.pop(job.user) - 1
            if left:
                self._queued_users[job.user] = left
            behind = self._behind.get(job.user)
            if behind and not left:
                # The user's next job takes its place at the back of the queue.
                self._enqueue(behind.popleft())
            if behind is not None and not behind:
                self._behind.pop(job.user, None)
            if not job.attempts:
                self._served[("chat", job.chat)] = self._served[("user", job.user)] = self._turn
                self._turn += 1
                if len(self._served) > 20_000:
                    waiting = {("chat", j.chat) for j in self._queue} | {("user", j.user) for j in self._queue}
                    self._served = {k: v for k, v in self._served.items() if k in waiting}
            try:
                pool = self._pool()
                try:
                    future = pool.submit(job.fn, *job.args)
                except BrokenProcessPool:
                    if not self._own:
                        raise
                    # A worker died since the last job: a fresh pool takes the work.
                    log.warning("the engine pool broke; starting a new one")
                    self._retire(pool)
                    pool = self._pool()
                    future = pool.submit(job.fn, *job.args)
            except Exception as error:
                # Reported like work that failed in the pool (logged, backed off, on_error).
                pool, future = None, Future()
                future.set_exception(error)
            job.pool, job.future = pool, future
            self._active += 1
            started.append(job)
        return started

    def _dispatch_loop(self) -> None:
        ready_server()
        while True:
            with self._lock:
                while not self._closed and not (self._queue and self._active < self.workers):
                    self._lock.wait()
                if self._closed:
                    pool, self._closing = self._closing, None
                    break
                started = self._start_ready()
            self._watch(started)
        if pool is not None:
            # This thread started the workers: it ends only after they did (see ``worker_init``).
            pool.shutdown(wait=True, cancel_futures=True)

    def _retire(self, pool: Executor) -> None:
        """Under the lock: a broken pool of ours is replaced (its workers are already gone)."""
        if self._own and self._executor is pool:
            self._executor = None
            pool.shutdown(wait=False, cancel_futures=True)

    # -- results -----------------------------------------------------------------------------------------

    def _watch(self, jobs: list[_Job]) -> None:
        """Called without the lock (a future already done calls back on the spot)."""
        for job in jobs:
            assert job.future is not None
            if isinstance(job.pool, ProcessPoolExecutor):
                job.future.add_done_callback(functools.partial(self._hand_over, job))
            else:
                # A thread pool's worker calls back itself: nothing else waits on that thread.
                job.future.add_done_callback(functools.partial(self._finished, job))

    def _hand_over(self, job: _Job, future: Future) -> None:
        try:
            self._results.submit(self._finished, job, future)
        except RuntimeError:
            # Closed meanwhile: the result is not wanted (the work is found again after a restart).
            self._end(job)

    def _end(self, job: _Job, again: bool = False) -> None:
        """The job left its worker: ended for good, or (``again``) back in the queue first."""
        with self._lock:
            self._active -= 1
            if again and not self._closed:
                job.attempts += 1
                job.pool = job.future = None
                self._enqueue(job)
            else:
                self._jobs.pop(job.key, None)
            started = self._after_change()
        self._watch(started)

    def _finished(self, job: _Job, future: Future) -> None:
        again = False
        try:
            if self._closed or future.cancelled():
                # Stopped meanwhile: whoever handles the result may be gone (its database closed);
                # the work is found again after the restart.
                return
            error = future.exception()
            if error is None:
                try:
                    job.on_done(future.result())
                except Exception:
                    log.exception("handling the result of %r failed", job.key)
                    self._backoff(job.key)
                return
            if isinstance(error, BrokenProcessPool) and self._own:
                with self._lock:
                    if job.pool is not None:
                        self._retire(job.pool)
                if job.attempts + 1 < MAX_ATTEMPTS:
                    # A worker died (killed, out of memory): the work it held, or that waited in the
                    # same pool, is run again now on a new one.
                    log.warning("an engine worker died; %r is run again", job.key)
                    again = True
                    return
            log.error("engine work %r failed: %r", job.key, error)
            self._backoff(job.key)
            if job.on_error is not None:
                try:
                    job.on_error(error)
                except Exception:
                    log.exception("reporting the failure of %r failed", job.key)
        finally:
            self._end(job, again)

    def _backoff(self, key: Hashable) -> None:
        with self._lock:
            self._failed[key] = time.monotonic() + FAILED_BACKOFF_SECONDS

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until nothing asked for is being worked on (results handled too); False on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            # Warming the workers up is nobody's answer: it is not waited for.
            while any(not (isinstance(k, tuple) and k[:1] == ("warm",)) for k in self._jobs):
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._lock.wait(left)
        return True

    def close(self) -> None:
        """Stop the pool: work not started is dropped, results still coming are ignored (the
        work is found again after a restart)."""
        with self._lock:
            self._closed = True
            if self._warm_timer is not None:
                self._warm_timer.cancel()
            executor, self._executor = self._executor, None
            for job in self._queue + [j for line in self._behind.values() for j in line]:
                self._jobs.pop(job.key, None)
            self._queue.clear()
            self._behind.clear()
            self._queued_users.clear()
            running = [j.future for j in self._jobs.values() if j.future is not None]
            if self._own and self._dispatcher is not None:
                self._closing, executor = executor, None
            self._lock.notify_all()
        for future in running:
            future.cancel()
        if executor is not None and self._own:
            executor.shutdown(wait=False, cancel_futures=True)
        # The dispatcher shuts our pool down; an exit before it is done leaves the pool's semaphore
        # to the resource tracker, which then warns on stderr.  A search under way ends within its time.
        dispatcher = self._dispatcher
        if dispatcher is not None and dispatcher is not threading.current_thread():
            dispatcher.join(CLOSE_JOIN_SECONDS)
        # A result being written finishes before the caller closes the database under it.
        self._results.shutdown(wait=True)
