"""Fixtures for the console chat tests: a real service on a SQLite file in tmp_path.
"""

from __future__ import annotations

import io
import random

import pytest
from fresh_db import fresh_database

from bot.platforms.console import ConsoleChat
from bot.service import GameService
from bot.storage import Storage

T0 = 1_700_000_000.0


class Console:
    """A ConsoleChat writing into a StringIO, with a fixed clock."""

    def __init__(self, tmp_path, now: list[float]) -> None:
        self.now = now
        self.storage = Storage(fresh_database(tmp_path / "console.db"))
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
