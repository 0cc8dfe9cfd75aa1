"""Fixtures of the web board's tests: a real service on a real SQLite file, games started the
ordinary way (a challenge typed in a group chat and accepted), and the real aiohttp application."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fresh_db import fresh_database
from web_helpers import T0, WebChat


@pytest.fixture
def now() -> list[float]:
    return [T0]


@pytest.fixture
def chat(tmp_path: Path, now: list[float]) -> Iterator[WebChat]:
    harness = WebChat(fresh_database(tmp_path / "web.db"), now)
    yield harness
    harness.service.close()
    harness.storage.close()
