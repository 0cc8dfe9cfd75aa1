"""Checks shared by every test: nothing may be logged at ERROR by our code or by the chat
libraries.

The service answers a bug with its internal-error message and logs the traceback, and
python-telegram-bot and discord.py only log a failing handler: a test that triggers either
must fail, not pass on the polite answer.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

# Each test worker rewrites the asserts of every test module it imports; with bytecode writing
# switched off (PYTHONDONTWRITEBYTECODE, set in some shells and CI images) that is redone by every
# worker on every run, about 7 s of CPU each.  pytest keeps the rewritten modules in __pycache__
# (ignored by git) when this is false, as it does where the variable is not set.
sys.dont_write_bytecode = False


def _memory_tmpdir(environ: Mapping[str, str] = os.environ, shm: str = "/dev/shm",
                   need: int = 2 << 30) -> str | None:
    """A folder in RAM for the run's temporary files, or None to leave them where they are.

    Every bot database a test opens is closed at its end, and an SQLite file in WAL mode closes
    with a checkpoint and its fsyncs: about 15 ms on this machine's disk, 1.5 ms in RAM, for
    about 1,500 databases a run (and the PostgreSQL servers' folders, the subprocesses' files).
    Nothing a test checks depends on the disk under its files (a full disk is /dev/full).  A TMPDIR
    set by the caller is kept; a small /dev/shm (containers give 64 MB, which Chromium needs for
    itself) is not used."""
    if environ.get("TMPDIR") or not os.path.isdir(shm) or not os.access(shm, os.W_OK | os.X_OK):
        return None
    try:
        stats = os.statvfs(shm)
    except OSError:
        return None
    if stats.f_bavail * stats.f_frsize < need:
        return None
    return shm


_tmp = _memory_tmpdir()
if _tmp is not None:
    # Set before pytest makes its base temporary folder (the controller makes it when it starts
    # the workers and hands each its part), and inherited by the subprocesses the tests start.
    os.environ["TMPDIR"] = _tmp
    tempfile.tempdir = None          # recomputed from TMPDIR on the next use

WATCHED = ("bot", "discord", "telegram")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """How many test processes ``-n auto`` starts: two per CPU (pyproject caps them at 4).  A
    good part of the suite waits (the bot's own subprocesses, the platforms' fakes on their sped-up
    clocks, engine pools): one process per CPU left a 2-core machine a quarter idle (91 s a run,
    77 s with 4 processes)."""
    return 2 * (os.cpu_count() or 1)


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Every run ends with pytest's summary line ("N passed in ..."): pyproject's addopts already
    has -q, and a -q typed on top makes -qq, at which pytest drops that line (the dots and the
    warnings still come), so a full run looked as if it had not ended."""
    if getattr(config.option, "verbose", 0) < -1:
        config.option.verbose = -1
    if not hasattr(config, "workerinput"):
        # The engine's compiled search is compiled once, here, before the test processes start
        # (on a fresh clone: some seconds; later runs load it): else every process would compile
        # it at once on its first search, and tests waiting for a bot move could time out.
        from bot.ai import jit

        jit.warm()


def _utf8(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A report's captured output in UTF-8 (a lone surrogate shown escaped): tests feed the bot
    ids such as "bad\\udcffid", its log lines quote them, and pytest-xdist cannot send a report
    with such a string from its worker, so the whole run ended in an INTERNALERROR."""
    report = yield
    report.sections = [(title, _utf8(text)) for title, text in report.sections]
    if isinstance(report.longrepr, str):
        report.longrepr = _utf8(report.longrepr)
    return report


@pytest.fixture(autouse=True)
def bot_errors(request):
    """Every record logged at ERROR or above during the test by the watched loggers (must stay empty)."""
    handler = _Collect()
    loggers = [logging.getLogger(name) for name in WATCHED]
    for logger in loggers:
        logger.addHandler(handler)
    request.node._bot_error_records = handler.records
    try:
        yield handler.records
    finally:
        for logger in loggers:
            logger.removeHandler(handler)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """Fail the test itself (not its teardown) when a watched logger logged an error."""
    result = yield
    records = getattr(item, "_bot_error_records", [])
    if records:
        details = "\n".join(f"{r.name}: {r.getMessage()}\n{logging.Formatter().formatException(r.exc_info)}"
                            if r.exc_info else f"{r.name}: {r.getMessage()}" for r in records)
        raise AssertionError(f"{len(records)} error(s) logged:\n{details}")
    return result


class _DrawnOnce:
    """``render_png`` as the service calls it, each distinct picture drawn once per test process.

    The service tests play the same openings again and again: about 2,600 boards drawn in
    tests/service, 460 of them different, at about 5 ms of CPU each.  A picture is a function of
    its view (every field is in the key: the view's repr) and its size; the renderer itself is
    tested, uncached, in tests/renderers, and a test that watches the drawing patches
    ``boards.png``, which still runs each time."""

    def __init__(self, draw: Callable[..., bytes], keep: int = 1024) -> None:
        self.draw = draw
        self.keep = keep
        self.made: OrderedDict[tuple[str, int], bytes] = OrderedDict()
        self.lock = threading.Lock()

    def __call__(self, view: Any, px: int = 600) -> bytes:
        key = (repr(view), px)
        with self.lock:
            if key in self.made:
                self.made.move_to_end(key)
                return self.made[key]
        data = self.draw(view, px)
        with self.lock:
            self.made[key] = data
            while len(self.made) > self.keep:
                self.made.popitem(last=False)
        return data


@pytest.fixture(autouse=True, scope="session")
def _boards_drawn_once() -> Iterator[None]:
    from bot.service import boards

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(boards, "render_png", _DrawnOnce(boards.render_png))
        yield


@pytest.fixture
def pg_url() -> str:
    """The URL of a new, empty database on this test process's throw-away PostgreSQL server
    (tests/pg_server.py); skips where no server can run, unless DRAUGHTS_REQUIRE_POSTGRES=1."""
    from pg_server import new_database_url

    return new_database_url()


# The tests that take seconds, with about how many (measured on a loaded 2-core machine; only
# the order the workers run them in depends on these, and a test missing here still runs).
LONG_TESTS: dict[str, float] = {
    "tests/platforms/telegram/test_telegram_shared_budget.py::test_two_webhook_workers_two_games_in_one_group": 110.0,
    "tests/console/test_console_first_start.py::test_a_cold_machine_compiles_once": 40.0,
    "tests/platforms/telegram/test_telegram_two_pollers.py::": 20.0,
    "tests/platforms/telegram/test_telegram_shared_budget.py::test_two_webhook_workers_keep_the_global": 7.0,
    "tests/platforms/telegram/test_telegram_broadcast.py::test_": 6.0,
    "tests/platforms/discord/test_discord_processes.py::": 5.5,
    "tests/platforms/telegram/test_telegram_board_order_workers.py::": 5.0,
    "tests/web/test_streams_issue30.py::test_out_of_file_descriptors": 5.0,
    "tests/platforms/telegram/test_telegram_poll_conflicts.py::": 4.5,
    "tests/web/browser/test_browser_game.py::test_a_whole_triestina_game": 14.0,
    "tests/puzzles/test_puzzles_cli.py::test_check_proves_a_fixed_quarter_of_the_shipped_bank[triestina-0]": 10.0,
    "tests/ai/test_ai_legal_and_time.py::test_legal_moves_on_championship_positions": 8.0,
    "tests/puzzles/test_puzzles_cli.py::test_check_names_the_puzzles_that_fail_and_prune_removes_them": 6.0,
    "tests/storage/test_startup.py::test_a_damaged_index_is_refused": 5.0,
    "tests/storage/test_downtime.py::test_the_console_start_extends_deadlines_after_downtime": 5.0,
    "tests/puzzles/test_puzzles_cli.py::test_check_proves_a_fixed_quarter_of_the_shipped_bank[triestina-5]": 10.0,
    "tests/storage/test_startup.py::test_a_database_deleted_or_replaced_under_the_console": 4.5,
    "tests/platforms/telegram/test_telegram_polling.py::test_a_second_instance_on_the_token": 4.5,
    "tests/web/test_console_web.py::test_python_m_bot_web_serves_the_board": 4.5,
    "tests/web/test_console_web.py::test_the_plain_console_starts_the_board": 4.0,
    "tests/service/test_outbox_notifications.py::test_two_processes_on_one_database": 4.0,
    "tests/test_database_url.py::test_db_copy_moves_everything": 4.0,
    "tests/storage/test_startup.py::test_a_lock_held_at_start": 4.0,
    "tests/puzzles/test_puzzles_cli.py::test_check_proves_a_fixed_quarter_of_the_shipped_bank[spanish": 3.5,
    "tests/test_summary_line.py::": 3.0,
    "tests/platforms/telegram/test_telegram_flood.py::test_a_private_reply_is_not_queued": 3.0,
    "tests/service/test_thinker.py::test_a_job_that_kills_every_worker": 3.0,
    "tests/storage/test_startup.py::test_a_good_database_still_starts": 3.0,
    "tests/puzzles/test_verify.py::test_every_puzzle_of_the_bank_that_passes": 2.5,
    "tests/platforms/telegram/test_telegram_polling.py::test_a_conflict_or_two": 2.5,
    "tests/platforms/telegram/test_telegram_flood.py::test_the_limiter_spaces": 2.5,
    "tests/console/test_console_chat.py::test_whole_game_played_to_a_result": 2.5,
    "tests/service/test_thinker.py::test_a_killed_worker_is_replaced": 2.5,
}


def _expected_seconds(item: pytest.Item) -> float:
    return max((s for prefix, s in LONG_TESTS.items() if item.nodeid.startswith(prefix)), default=0.0)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under xdist, the long tests first, spread over the workers.  The "worksteal" scheduler gives
    worker k the k-th of N equal runs of the collected list to start with, and an idle worker takes
    the second half of the longest queue left; collected in file order, the whole browser game
    (about 14 s) tended to start among the last tests, and a run ended with one busy worker.
    Here each run starts with its share of the long tests (the longest first, each to the run with
    the least so far); the rest keep their order.  Every worker computes the same order, as xdist
    requires."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0") or 0)
    if workers < 2 or len(items) < 4 * workers:
        return
    long = sorted((item for item in items if _expected_seconds(item) > 0), key=_expected_seconds, reverse=True)
    if not long:
        return
    chosen = {id(item) for item in long}
    rest = [item for item in items if id(item) not in chosen]
    # The runs' lengths as the scheduler cuts them: what is left, shared by the workers left.
    sizes, left = [], len(items)
    for k in range(workers):
        sizes.append(left // (workers - k))
        left -= sizes[-1]
    heads: list[list[pytest.Item]] = [[] for _ in range(workers)]
    loads = [0.0] * workers
    for item in long:
        k = min((k for k in range(workers) if len(heads[k]) < sizes[k]), key=lambda k: loads[k])
        heads[k].append(item)
        loads[k] += _expected_seconds(item)
    ordered: list[pytest.Item] = []
    for k in range(workers):
        take = sizes[k] - len(heads[k])
        ordered += heads[k] + rest[:take]
        rest = rest[take:]
    assert not rest and len(ordered) == len(items)
    items[:] = ordered
