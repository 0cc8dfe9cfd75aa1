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

import pytest

# Each test worker rewrites the asserts of every test module it imports; with bytecode writing
# switched off (PYTHONDONTWRITEBYTECODE, set in some shells and CI images) that is redone by every
# worker on every run, about 7 s of CPU each.  pytest keeps the rewritten modules in __pycache__
# (ignored by git) when this is false, as it does where the variable is not set.
sys.dont_write_bytecode = False

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


@pytest.fixture
def pg_url() -> str:
    """The URL of a new, empty database on this test process's throw-away PostgreSQL server
    (tests/pg_server.py); skips where no server can run, unless DRAUGHTS_REQUIRE_POSTGRES=1."""
    from pg_server import new_database_url

    return new_database_url()
