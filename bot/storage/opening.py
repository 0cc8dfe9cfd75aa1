"""Which store a database setting names: the one place a backend is chosen by its URL scheme."""

from __future__ import annotations

from .base import StorageError, Store
from .sqlite import DEFAULT_BUSY_TIMEOUT, SQLiteStore


def open_store(database: str, timeout: float | None = None) -> Store:
    """The store for a database path (or a ``sqlite:///path`` URL), opened and checked; StorageError
    with a one-line reason when it cannot be used."""
    path = database
    if database.startswith("sqlite:///"):
        path = database[len("sqlite:///"):]
    elif "://" in database:
        scheme = database.split("://", 1)[0]
        raise StorageError(f"database URL scheme {scheme!r} is not supported (use a file path or sqlite:///path)")
    return SQLiteStore(path, busy_timeout=DEFAULT_BUSY_TIMEOUT if timeout is None else timeout)
