"""A new bot database for a test, as a copy of one migrated per test process.

Creating a database runs every migration (about 30 ms); the fixtures of the service, Telegram and
Discord tests make one per test, well over a thousand in a run.  A copy of a file made once is the
same database: the schema and rows a new file gets.  What must differ between databases (the
secret that signs private links) is taken out of the copy, so each copy makes its own when it is
first opened, as a new file does.  The storage tests that are about creating or migrating a file
make their own.
"""

from __future__ import annotations

import atexit
import shutil
import sqlite3
import tempfile
from pathlib import Path

from bot.storage import Storage

# Per database, made at its first opening.
PER_DATABASE_META = ("link_secret", "opened_at")

_template: Path | None = None


def _make_template() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="draughts-test-template-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = folder / "template.db"
    Storage(path).close()
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute(f"DELETE FROM meta WHERE key IN ({', '.join('?' for _ in PER_DATABASE_META)})",
                     PER_DATABASE_META)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return path


def fresh_database(path: Path) -> Path:
    """``path``, a new bot database nobody has opened (what ``Storage(path)`` makes of a missing file)."""
    global _template
    if _template is None or not _template.exists():
        _template = _make_template()
    assert not path.exists(), path
    shutil.copyfile(_template, path)
    path.chmod(0o600)
    return path
