"""Which store a database setting names: the one place a backend is chosen by its URL scheme."""

from __future__ import annotations

from .base import StorageError, Store
from .sqlite import DEFAULT_BUSY_TIMEOUT, SQLiteStore

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def open_store(database: str, timeout: float | None = None) -> Store:
    """The store for a database path, a ``sqlite:///path`` URL or a ``postgresql://`` (``postgres://``)
    URL, opened and checked; StorageError with a one-line reason when it cannot be used."""
    busy = DEFAULT_BUSY_TIMEOUT if timeout is None else timeout
    if database.startswith(POSTGRES_SCHEMES):
        # Imported here: psycopg is an extra (pip install '.[postgres]'), the SQLite bot runs without it.
        from .postgres import PostgresStore

        return PostgresStore(database, busy_timeout=busy)
    path = database
    if database.startswith("sqlite:///"):
        path = database[len("sqlite:///"):]
    elif "://" in database:
        scheme = database.split("://", 1)[0]
        raise StorageError(f"database URL scheme {scheme!r} is not supported (use a file path, sqlite:///path "
                           "or postgresql://user@host/database)")
    return SQLiteStore(path, busy_timeout=busy)
