"""Checks shared by every test: nothing under the ``bot`` logger may be logged at ERROR.

The service answers a bug with its internal-error message and logs the traceback; a test
that triggers that must fail, not pass on the polite answer.
"""

from __future__ import annotations

import logging

import pytest


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(autouse=True)
def bot_errors(request):
    """Every record bot.* logs at ERROR or above during the test (must stay empty)."""
    handler = _Collect()
    logger = logging.getLogger("bot")
    logger.addHandler(handler)
    request.node._bot_error_records = handler.records
    try:
        yield handler.records
    finally:
        logger.removeHandler(handler)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """Fail the test itself (not its teardown) when bot.* logged an error."""
    result = yield
    records = getattr(item, "_bot_error_records", [])
    if records:
        details = "\n".join(f"{r.name}: {r.getMessage()}\n{logging.Formatter().formatException(r.exc_info)}"
                            if r.exc_info else f"{r.name}: {r.getMessage()}" for r in records)
        raise AssertionError(f"bot.* logged {len(records)} error(s):\n{details}")
    return result
