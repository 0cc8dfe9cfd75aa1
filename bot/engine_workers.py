"""What runs in the bot's engine processes (bot/service/thinking.py starts them): the jobs, the guard
that ends a worker with the bot, and what a worker loads before its first job.

It stands outside the service so that a worker imports only the engine and the rules (unpickling a
job imports its module: a job in ``bot.service`` would load the whole service, storage and drawing
stack into every worker, about 11 MB each), and outside ``bot.ai`` so that the bot's own process
can name the jobs without importing the engine (numba) itself.

Where the system has it (Linux, macOS), the workers are forked from multiprocessing's fork server,
which imports ``bot.engine_preload`` first: the engine's modules and its compiled search (numba and
LLVM, about 75 MB of a worker's 130) are loaded once, in the fork server, and every worker shares
those pages with it instead of loading its own copy.  The endgame tables are mapped from one
unpacked file (``egtb/store.py``), so their pages are shared too.
"""

from __future__ import annotations

import ctypes
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from typing import Any

log = logging.getLogger("bot.engine_workers")

# How often a worker looks whether the bot is still there (it also wakes at once when it goes).
PARENT_CHECK_SECONDS = 0.5
# Linux prctl option: a signal for the process when the thread that started it ends.
PR_SET_PDEATHSIG = 1


def worker_init(parent_pid: int, via_server: bool = False) -> None:
    """Run first in every engine process: it ends with the bot, however the bot ends (kill -9 runs
    no clean-up of ours, and an orphaned worker would search on for nobody).  ``via_server``: forked
    by the fork server (its parent), which itself ends when the bot does."""
    if sys.platform.startswith("linux"):
        try:
            # Killed by the kernel when the thread that started it ends: the Thinker starts every
            # spawned worker from its own dispatcher thread, which lives as long as the pool; the fork
            # server forks from its only thread, and exits when the bot is gone.
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    parent = multiprocessing.parent_process()
    if (not via_server and os.getppid() != parent_pid) or (parent is not None and not parent.is_alive()):
        os._exit(1)                 # the bot was gone before the signal was asked for
    threading.Thread(target=_watch_parent, args=(os.getppid(),), name="bot-parent-watch", daemon=True).start()


def _watch_parent(parent_pid: int) -> None:
    """The portable guard: multiprocessing's parent sentinel (a pipe the bot holds, whichever
    process forked this one) wakes this thread when the bot dies; a changed parent pid catches
    the rest."""
    parent = multiprocessing.parent_process()
    while True:
        if parent is not None:
            parent.join(PARENT_CHECK_SECONDS)
            gone = not parent.is_alive()
        else:
            time.sleep(PARENT_CHECK_SECONDS)
            gone = False
        if gone or os.getppid() != parent_pid:
            os._exit(1)


def preload() -> None:
    """Load the engine and its compiled search (compiling it, the first time on a machine) in the
    fork server, before it forks any worker.  Never raises: a worker then loads what it needs itself
    (``warm_job``), and says what went wrong."""
    try:
        from bot.ai import jit

        jit.warm()
        jit.release()
    except Exception:
        log.exception("loading the engine before starting its workers failed; each worker loads it")


def ready() -> None:
    """Forked once by the fork server when it has loaded the engine: the bot waits for it (see
    ``bot.service.thinking.ready_server``)."""


def _rest() -> None:
    """After a job: an idle worker holds no search memory.  The compiled search's transposition
    table goes (``jit.release``), and the C heap's free memory goes back to the system (glibc keeps
    what the Python search freed, some 20 MB after a long search, unless asked)."""
    from bot.ai import jit

    jit.release()
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None).malloc_trim(0)
        except (OSError, AttributeError):
            pass                    # not glibc (musl has no malloc_trim)


# -- the jobs (module-level so they pickle by name) ------------------------------------------------------


def warm_job() -> bool:
    """Load the engine in a worker (its modules, tables and compiled search), so the first real
    search is not slower."""
    from bot.ai import choose_move, jit
    from bot.rules import Position

    choose_move("italian", Position.start("italian").fen(), 1, time_limit=0.01, rng=0)
    jit.warm()
    jit.release()
    return True


def move_job(variant: str, fen: str, level: int, history: list[str], seed: int,
             seconds: float | None = None) -> dict[str, Any]:
    """The bot's move for a position: its notation and how the search went."""
    from bot.ai import choose_move

    started = time.perf_counter()
    try:
        result = choose_move(variant, fen, level, time_limit=seconds, history=history, rng=seed)
    finally:
        _rest()
    return {"move": str(result.move), "score": result.score, "depth": result.depth, "nodes": result.nodes,
            "seconds": time.perf_counter() - started}


def analysis_job(variant: str, start_fen: str | None, moves: list[str],
                 nodes: tuple[int, int]) -> list[dict[str, Any]]:
    """The engine's note on every move of a game (see bot.ai.analyse_game), as plain values.
    ``nodes``: the search's budget a position and to confirm a cost (not seconds: the same game
    gets the same notes on any machine)."""
    from bot.ai import analyse_game
    from bot.rules import Game

    game = Game(variant, start_fen, draw_rules=False)
    for move in moves:
        game.play(move)
    try:
        notes = analyse_game(game, nodes=nodes[0], confirm_nodes=nodes[1])
    finally:
        _rest()
    out: list[dict[str, Any]] = []
    for n in notes:
        note: dict[str, Any] = {"ply": n.ply, "move": str(n.move), "best": str(n.best), "best_score": n.best_score,
                                "played_score": n.played_score, "forced": n.forced,
                                "table": n.table.as_dict() if n.table is not None else None}
        if n.mark:
            # The line that refutes a marked move, for the web board to step through: a scan-budget
            # search after it (a few marked moves a game, so little added to the analysis's cost).
            note["line"] = _refutation(game.positions[n.ply + 1], nodes[0])
        out.append(note)
    return out


# The refutation line's length at most, in plies (the opponent's answer first).
REFUTATION_PLIES = 8


def _refutation(pos: Any, nodes: int) -> list[str]:
    import math

    from bot.ai.deepening import search_position

    if not pos.legal_moves():
        return []
    try:
        pv = search_position(pos, 64, math.inf, nodes=nodes).pv
    finally:
        _rest()
    return [str(m) for m in pv[:REFUTATION_PLIES]]
