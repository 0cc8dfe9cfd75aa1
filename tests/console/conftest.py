"""Fixtures for the console chat tests: a real service on a SQLite file in tmp_path.

Nothing under the ``bot`` logger may be logged at ERROR during a test (the service logs a
traceback whenever it answers with its internal-error message).
"""

from __future__ import annotations

import io
import logging
import random

import pytest

from bot.platforms.console import ConsoleChat
from bot.service import GameService
from bot.storage import Storage

T0 = 1_700_000_000.0


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


class Console:
    """A ConsoleChat writing into a StringIO, with a fixed clock."""

    def __init__(self, tmp_path, now: list[float]) -> None:
        self.now = now
        self.storage = Storage(tmp_path / "console.db")
        self.service = GameService(self.storage, clock=lambda: self.now[0], rng=random.Random(1))
        self.out = io.StringIO()
        self.images = tmp_path / "images"
        self.chat = ConsoleChat(self.service, self.out, self.images, user="Ana", chat="main", language="en")

    def feed(self, *lines: str) -> str:
        """Send lines; the output they produced."""
        start = len(self.out.getvalue())
        for line in lines:
            self.chat.line(line)
        return self.out.getvalue()[start:]


@pytest.fixture
def now() -> list[float]:
    return [T0]


@pytest.fixture
def console(tmp_path, now):
    c = Console(tmp_path, now)
    yield c
    c.storage.close()
