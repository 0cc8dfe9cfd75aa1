"""Fixtures for the game-service tests.

Everything is real: a SQLite file in tmp_path, the rules engine, Pillow boards.  Only the
clock (a list the test moves forward) and the colour draw (a seeded Random) are fixed.

``ChatHarness`` checks every reply: never the internal-error text, every button action at
most 64 bytes of UTF-8 (and tests/conftest.py fails any test during which bot.* logged an error).
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from executors import HeldExecutor
from fresh_db import fresh_database
from harness import CATALOG_DIR, T0, ChatHarness
from phrases import phrase_pattern

from bot.service import Reply
from bot.service.thinking import Thinker


@pytest.fixture
def now() -> list[float]:
    """The fake clock: tests move it with ``now[0] += seconds``."""
    return [T0]


@pytest.fixture
def chat(tmp_path: Path, now: list[float]):
    harness = ChatHarness(fresh_database(tmp_path / "t.db"), now)
    yield harness
    harness.storage.close()


@pytest.fixture
def pool():
    """Two threads for the engine (the production process pool is tested on its own)."""
    executor = ThreadPoolExecutor(2)
    yield executor
    executor.shutdown(wait=True, cancel_futures=True)


@pytest.fixture
def held(chat):
    """The chat harness on a service whose engine answers only when the test releases it."""
    executor = HeldExecutor()
    # Four workers, as on a machine with four CPUs (the limits that depend on it are fixed).
    chat.use_thinker(Thinker(executor, workers=4))
    return chat, executor


def button_actions(reply: Reply) -> list[str]:
    return [b.action for row in reply.buttons for b in row]


@pytest.fixture
def actions_of():
    """reply -> the action strings of its buttons, in order."""
    return button_actions


@pytest.fixture
def catalog():
    """lang -> its message catalog, or None when the file does not exist."""
    def load(lang: str) -> dict[str, str] | None:
        path = CATALOG_DIR / f"{lang}.json"
        if not path.exists():
            return None
        return json.loads(path.read_text(encoding="utf-8"))
    return load


@pytest.fixture
def phrase():
    return phrase_pattern
