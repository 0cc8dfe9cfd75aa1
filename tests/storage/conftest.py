"""Fixtures for the storage tests: real SQLite files in tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest
from fresh_db import fresh_database
from storage_helpers import T0, Bot


@pytest.fixture
def now() -> list[float]:
    return [T0]


@pytest.fixture
def bot(tmp_path: Path, now: list[float]):
    b = Bot(fresh_database(tmp_path / "t.db"), now)
    yield b
    b.storage.close()


def pytest_configure(config: pytest.Config) -> None:
    import coverage_check

    coverage_check.install()
    config.pluginmanager.register(coverage_check.Plugin(), "storage_contract_coverage")
