"""Fixtures for the storage tests: real SQLite files in tmp_path, and real PostgreSQL databases on
the test process's throw-away server (tests/pg_server.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fresh_db import fresh_database
from storage_helpers import T0, Bot


@pytest.fixture
def now() -> list[float]:
    return [T0]


@pytest.fixture(params=["sqlite", "postgres"])
def database(request, tmp_path: Path) -> str:
    """A new, empty database of each backend: an SQLite file's path, or a PostgreSQL URL (skipped
    where no server can run, unless DRAUGHTS_REQUIRE_POSTGRES=1)."""
    if request.param == "postgres":
        from pg_server import new_database_url

        return new_database_url()
    return str(tmp_path / "t.db")


@pytest.fixture
def bot(database: str, tmp_path: Path, now: list[float]):
    b = Bot(database if database.startswith("postgres") else fresh_database(Path(database)), now)
    yield b
    b.storage.close()


def pytest_configure(config: pytest.Config) -> None:
    import coverage_check

    coverage_check.install()
    config.pluginmanager.register(coverage_check.Plugin(), "storage_contract_coverage")
