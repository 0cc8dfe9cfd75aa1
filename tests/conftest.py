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
from collections.abc import Callable, Mapping
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


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """How many test processes ``-n auto`` starts: two per CPU (pyproject caps them at 4).  A
    good part of the suite waits (the bot's own subprocesses, the platforms' fakes on their sped-up
    clocks, engine pools): one process per CPU left a 2-core machine a quarter idle (91 s a run,
    77 s with 4 processes).  xdist's own ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still wins (None hands
    the choice back to xdist, which reads it): a test that runs pytest itself asks for one."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
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
        # it at once on its first search, and tests waiting for a bot move could time out.  Where it
        # is compiled already, loading it here would only cost this process about 0.3 s of CPU.
        from bot.ai import jit

        if jit.needs_compiling():
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


@pytest.fixture(autouse=True)
def _boards_drawn_once() -> None:
    """``boards.render_png`` drawn once per picture from the first test that finds the service
    loaded (by its module or a fixture) on.  It never loads the service itself: a test process that
    runs only other parts' tests (the rules, the ratings: each of the summary-line runs' workers)
    would pay about 0.4 s of CPU to import it for nothing."""
    boards = sys.modules.get("bot.service.chat.boards")
    if boards is not None and not isinstance(boards.render_png, _DrawnOnce):
        boards.render_png = _DrawnOnce(boards.render_png)


@pytest.fixture
def pg_url() -> str:
    """The URL of a new, empty database on this test process's throw-away PostgreSQL server
    (tests/pg_server.py); skips where no server can run, unless DRAUGHTS_REQUIRE_POSTGRES=1."""
    from pg_server import new_database_url

    return new_database_url()


# The tests that take seconds, with about how many (each test's time in one whole run with one test
# process on a 2-core machine loaded by other work, ``--durations``; the two webhook workers' games
# measured alone, since their clock runs 8 times faster).  Only the order the workers run them in
# depends on these (the longest first), and a test missing here still runs.
LONG_TESTS: dict[str, float] = {
    "tests/console/test_console_first_start.py::test_a_cold_machine_compiles_once_outside_the_package_and_the_pi": 36.0,
    "tests/platforms/telegram/test_telegram_two_pollers.py::": 32.0,
    "tests/service/test_tournaments_processes.py::test_kill_9_at_each_rounds_last_result_on_postgresql": 30.0,
    "tests/service/test_tournaments_processes.py::test_kill_9_at_each_rounds_last_result_on_sqlite": 25.0,
    "tests/platforms/telegram/test_telegram_shared_budget.py::test_two_webhook_workers_two_games_in_one_group_dr": 25.0,
    "tests/test_summary_line.py::": 20.0,
    "tests/platforms/telegram/test_telegram_shared_budget.py::test_two_webhook_workers_keep_the_global_and_a_cha": 18.5,
    "tests/web/browser/test_browser_game.py::test_a_whole_triestina_game_by_taps_reaches_the_opponent_the_specta": 15.5,
    "tests/puzzles/test_puzzles_cli.py::test_check_names_the_puzzles_that_fail_and_prune_removes_them": 15.0,
    "tests/puzzles/test_puzzles_cli.py::test_check_proves_a_fixed_sample_of_the_shipped_bank[triestina-0]": 13.5,
    "tests/puzzles/test_puzzles_cli.py::test_check_proves_a_fixed_sample_of_the_shipped_bank[triestina-1]": 12.0,
    "tests/platforms/telegram/test_telegram_board_order_workers.py::test_a_retry_in_one_worker_never_puts_an_old": 11.0,
    "tests/console/test_console_tournament_postgres.py::": 12.0,
    "tests/platforms/discord/test_discord_processes.py::test_a_shard_process_that_never_saw_the_interaction_deli": 10.5,
    "tests/service/test_processes_postgres.py::test_two_processes_racing_on_one_game_each_move_is_played_once": 9.0,
    "tests/ai/test_egtb.py::test_build_writes_tables_that_load_and_probe_answers": 8.0,
    "tests/console/test_console_chat.py::test_python_m_bot_continues_the_game_after_a_restart": 4.0,
    "tests/platforms/discord/test_discord_bot.py::test_an_analysis_is_posted_with_its_picture_and_pdn_in_one_mes": 8.0,
    "tests/test_database_url.py::test_db_copy_moves_everything_checks_counts_and_is_safe_to_repeat": 7.5,
    "tests/test_imports_alone.py::test_every_module_imports_on_its_own": 22.0,
    "tests/test_imports_alone.py::test_the_service_imports_in_any_order": 17.0,
    "tests/tournaments/test_pairing_speed.py::test_fast_rounds_equal_the_library_rounds": 11.5,
    "tests/tournaments/test_pairing_speed.py::test_warm_started_runs_are_maximum_and_certified": 11.0,
    "tests/web/browser/test_browser_review.py::test_a_40_ply_game_stepped_to_every_ply_by_keys_buttons_and_tap": 9.0,
    "tests/web/browser/test_browser_analysis.py::test_the_analysis_asked_from_the_page_graph_marks_arrow_and_r": 8.5,
    "tests/storage/test_concurrency.py::test_ratings_rebuilt_during_play_match_a_fresh_rebuild[postgres]": 8.5,
    "tests/rules/test_variant_flags.py::test_every_position_of_random_games_has_pydraughts_moves_in_all_three_": 8.0,
    "tests/ai/test_ai_legal_and_time.py::test_legal_moves_on_championship_positions": 7.0,
    "tests/web/browser/test_browser_tournament.py::test_standings_and_pairings_on_a_phone_and_a_result_arrives": 6.5,
    "tests/console/test_console_tournament.py::test_python_m_bot_plays_it_and_the_cli_shows_the_same": 6.0,
    "tests/storage/test_postgres_outage.py::test_the_piped_console_keeps_answering_through_the_outage_and_exit": 5.5,
    "tests/ai/test_jit.py::test_a_node_budget_stops_both_searches_at_the_same_node[russian]": 5.5,
    "tests/platforms/telegram/test_telegram_broadcast.py::test_the_board_of_a_move_in_a_subscribed_group_goes_ou": 7.0,
    "tests/platforms/telegram/test_telegram_broadcast.py::test_a_stop_in_the_middle_of_the_posts_loses_none": 7.0,
    "tests/web/test_streams_issue30.py::test_out_of_file_descriptors_is_logged_once_a_minute_and_the_server_keep": 6.5,
    "tests/service/test_outbox_notifications.py::test_two_processes_on_one_database_deliver_every_message_once": 6.5,
    "tests/platforms/telegram/test_telegram_broadcast.py::test_a_private_reply_goes_out_while_the_daily_posts_to": 6.5,
    "tests/platforms/telegram/test_telegram_pg_outage.py::test_telegram_while_the_database_server_is_away": 6.5,
    "tests/service/test_processes_postgres.py::test_a_process_killed_mid_play_loses_no_acknowledged_move_and_its": 5.5,
    "tests/console/test_console_chat.py::test_python_m_bot_console_subcommand_with_paths": 2.5,
    "tests/web/test_console_web.py::test_the_plain_console_starts_the_board_at_the_first_web": 5.5,
    "tests/puzzles/test_puzzles_cli.py::test_check_proves_a_fixed_sample_of_the_shipped_bank[spanish-0]": 5.0,
    "tests/storage/test_startup.py::test_a_lock_held_at_start": 3.5,
    "tests/ai/test_ai_analyse.py::test_command_line_annotates_a_pdn_file": 5.0,
    "tests/storage/test_startup.py::test_a_damaged_index_is_refused_though_quick_check_passes": 2.5,
    "tests/platforms/telegram/test_telegram_poll_conflicts.py::test_no_poll_follows_the_conflict_that_stops_the_": 5.0,
    "tests/web/test_console_web.py::test_python_m_bot_web_serves_the_board_next_to_the_console": 5.0,
    "tests/platforms/telegram/test_telegram_poll_conflicts.py::test_a_webhook_set_for_the_token_stops_polling_wi": 5.0,
    "tests/platforms/telegram/test_telegram_polling.py::test_a_second_instance_on_the_token_stops_this_one_with_": 5.0,
    "tests/platforms/telegram/test_telegram_bot.py::test_an_analysis_reaches_the_chat_as_a_picture_and_a_pdn_fil": 4.5,
    "tests/test_cli_arguments.py::test_the_issues_three_commands_in_a_real_process": 4.5,
    "tests/console/test_console_bot.py::test_piped_play_as_black_shows_the_bots_opening_before_the_humans_reply": 4.0,
    "tests/puzzles/test_deeper.py::test_check_names_them_in_a_bank": 4.0,
    "tests/console/test_console_chat.py::test_whole_game_played_to_a_result_through_the_console": 4.0,
    "tests/service/test_service_extra_variant.py::test_the_bot_plays_and_analyses_the_new_variant": 4.0,
    "tests/platforms/telegram/test_telegram_shared_budget.py::test_two_processes_within_a_chats_limit_only_when_": 4.0,
    "tests/web/browser/test_browser_freshness.py::test_a_level_1_bots_replies_all_show_without_a_reload_and_its_": 3.5,
    "tests/platforms/telegram/test_telegram_shared_budget.py::test_two_processes_within_the_global_limit_only_wh": 3.5,
    "tests/puzzles/test_puzzles_cli.py::test_generate_adds_proven_puzzles_to_the_bank_it_runs_from": 3.5,
    "tests/platforms/telegram/test_telegram_flood.py::test_a_private_reply_is_not_queued_behind_a_group_burst": 3.5,
    "tests/puzzles/test_verify.py::test_the_two_spanish_puzzles_lost_by_force_are_rejected[W:W12,20,24:BK2,K17,1": 3.5,
    "tests/web/test_streams_issue30.py::test_a_move_by_another_process_on_postgresql_reaches_an_open_stream_by_n": 3.5,
    "tests/puzzles/test_puzzles_cli.py::test_check_proves_a_fixed_sample_of_the_shipped_bank[italian-0]": 3.0,
    "tests/platforms/telegram/test_telegram_polling.py::test_a_conflict_or_two_do_not_stop_the_bot": 2.5,
    "tests/test_database_url.py::test_db_copy_refuses_what_it_cannot_copy": 2.5,
    "tests/console/test_console_kill.py::test_the_engine_workers_end_when_the_bot_is_killed": 2.5,
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
