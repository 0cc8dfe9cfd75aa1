"""The SQLite backend of the storage contract (through sqlite-utils): one file, WAL mode.

Writes go through one connection, inside ``BEGIN IMMEDIATE`` so a write transaction takes the lock
before it reads what it will change; reads outside a write go through a second, read-only
connection, so a read-only command never waits behind a write that is waiting for another
process's lock.  The queries are the shared ones (sql.py, with the SQLITE dialect); what is
SQLite's own stays here: the file (its checks, PRAGMAs, migrations), the unit of work and which
sqlite3 errors mean busy, full or gone, the ``#N`` counter and the ratings lock.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import sqlite_utils

from .errors import StorageBusy, StorageDamaged, StorageError, StorageFull, StorageGone
from .migrations import migrations
from .sql import SQLITE, SqlStore

_log = logging.getLogger("bot.storage")

# The schema's history as numbered files (bot/storage/migrations/sqlite/); kept as a list of
# statement lists, one per migration, for the code and tests that count them.
MIGRATIONS: list[list[str]] = [list(m.statements) for m in migrations("sqlite")]

DEFAULT_BUSY_TIMEOUT = 5.0
# A full disk fails every write: it is logged once, then at most once per this many seconds.
FULL_LOG_SECONDS = 60.0

log = logging.getLogger(__name__)

T = TypeVar("T")

# SQLite primary result codes (the low byte of an extended code).
_BUSY, _LOCKED, _READONLY, _IOERR, _CORRUPT, _FULL, _CANTOPEN, _NOTADB = 5, 6, 8, 10, 11, 13, 14, 26


def _code(err: sqlite3.Error) -> int:
    return (getattr(err, "sqlite_errorcode", None) or 0) & 0xFF


def _is_busy(err: sqlite3.Error) -> bool:
    if _code(err) in (_BUSY, _LOCKED):
        return True
    return isinstance(err, sqlite3.OperationalError) and "database is locked" in str(err)


def _is_full(err: BaseException) -> bool:
    return isinstance(err, sqlite3.Error) and (_code(err) == _FULL or "database or disk is full" in str(err))


def _file_id(path: str) -> tuple[int, int]:
    info = os.stat(path)
    return info.st_dev, info.st_ino


def _private_files(path: str) -> None:
    """The database holds chat and user ids, names and games: only its owner may read it.  A new
    file is created 0600 before SQLite opens it (SQLite gives the WAL and SHM files the main file's
    mode); an existing file, WAL or SHM readable by others is tightened (its owner's bits kept, so
    a read-only file stays read-only)."""
    try:
        os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        pass
    except OSError:
        return                  # SQLite's own open says why (missing folder, no permission)
    for name in (path, f"{path}-wal", f"{path}-shm", f"{path}-journal"):
        try:
            mode = os.stat(name).st_mode & 0o777
            if mode & 0o077:
                os.chmod(name, mode & 0o700)
                _log.info("%s was readable by others (mode %03o): now %03o", name, mode, mode & 0o700)
        except FileNotFoundError:
            continue
        except OSError as err:
            _log.info("%s is readable by others and could not be restricted: %s", name, err.strerror or err)



class SQLiteStore(SqlStore):
    """The database in one SQLite file; every method is one short transaction.

    Opening checks the file (a database, undamaged, writable, not from a newer bot) and
    raises StorageError with a one-line reason; a write that waits longer than
    ``busy_timeout`` seconds for another connection's lock raises StorageBusy."""

    dialect = SQLITE

    def __init__(self, path: str | Path, busy_timeout: float = DEFAULT_BUSY_TIMEOUT) -> None:
        self.path = str(path)
        self.name = self.path
        self.busy_timeout = busy_timeout
        self._lock = threading.RLock()
        self._depth = 0
        self._writer: int | None = None          # the thread inside a write transaction
        # Reads outside a write transaction go through their own connection, so they never queue
        # behind a write that is waiting (up to busy_timeout) for another process's lock.
        self._reader: sqlite3.Connection | None = None
        self._read_lock = threading.Lock()
        self._db: sqlite_utils.Database | None = None
        # The file opened (device, inode), to notice it being deleted or replaced under us.
        self._identity: tuple[int, int] | None = None
        self._gone: str | None = None
        self._full_logged: float | None = None     # when a full disk was last logged (monotonic)
        self._full = False
        try:
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
                _private_files(self.path)
            # isolation_level=None: we issue BEGIN IMMEDIATE ourselves, so a write
            # transaction takes the lock before it reads what it will change.
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                                   timeout=busy_timeout)
            self._db = sqlite_utils.Database(conn)
            if self.path != ":memory:":
                self._identity = _file_id(self.path)
            self._open(conn)
            if self.path != ":memory:":
                self._reader = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                                               timeout=busy_timeout)
                self._reader.execute("PRAGMA query_only=ON")
        except StorageBusy as err:
            self.close()
            # Raised from the sqlite3 error that kept the lock; without one its message already says why.
            cause = err.__cause__
            raise StorageBusy(self._explain(cause) if isinstance(cause, sqlite3.Error) else str(err)) from None
        except StorageError:
            self.close()
            raise
        except sqlite3.Error as err:
            self.close()
            raise StorageError(self._explain(err)) from None
        except OSError as err:
            self.close()
            raise StorageError(f"database {self.path}: {err.strerror or err}") from None

    # -- plumbing ---------------------------------------------------------------------

    @property
    def db(self) -> sqlite_utils.Database:
        """The write connection (missing only while a failed open cleans up)."""
        if self._db is None:
            raise StorageError(f"database {self.path} is not open")
        return self._db

    def _open(self, conn: sqlite3.Connection) -> None:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        # The full check, not quick_check: only it compares every index with its table, and a
        # damaged index answers "no games here" for a chat that has one.  (About 2 s for 50,000
        # games of 40 moves; see bench/robustness.py.)
        problem = _integrity_problem(conn)
        if problem is not None:
            raise StorageError(f"database {self.path} is damaged (integrity check: {problem})")
        version = self.schema_version
        if version > len(MIGRATIONS):
            raise StorageError(
                f"database {self.path} has schema version {version}, but this bot knows only up to "
                f"version {len(MIGRATIONS)}: it was written by a newer bot; run that version or use "
                "another database file")
        self._migrate()

    def _explain(self, err: sqlite3.Error) -> str:
        """One line on why the database cannot be opened."""
        code = _code(err)
        if _is_busy(err):
            return (f"database {self.path} is locked by another process (waited {self.busy_timeout:g} s); "
                    "stop the other process or try again")
        if code == _NOTADB:
            return f"{self.path} is not an SQLite database"
        if code == _CORRUPT:
            return f"database {self.path} is damaged ({err})"
        if code == _READONLY:
            return f"database {self.path} is read-only: the file and its folder must be writable"
        if code == _CANTOPEN:
            return f"database {self.path} cannot be opened (missing folder or no permission)"
        if code == _FULL:
            return f"database {self.path}: the disk is full"
        return f"database {self.path}: {err}"

    def check_file(self) -> None:
        """StorageGone when the file at the path is not the one this store opened (deleted, or
        replaced by a restored backup, say): writes would go into a file nobody will read again."""
        if self._identity is None:
            return
        if self._gone is None:
            try:
                now = _file_id(self.path)
            except FileNotFoundError:
                self._gone = f"database {self.path} was deleted while the bot was running"
            except OSError:
                return          # cannot tell (a permission changed): the writes themselves will say
            else:
                if now != self._identity:
                    self._gone = f"database {self.path} was replaced by another file while the bot was running"
        if self._gone is not None:
            raise StorageGone(self._gone)

    def verify(self) -> None:
        """StorageDamaged when the full integrity check finds a problem.  It reads through a
        connection of its own (seconds on a big file): reads and writes go on meanwhile."""
        try:
            if self._reader is None:
                with self._lock:
                    problem = _integrity_problem(self.db.conn)
            else:
                conn = sqlite3.connect(self.path, isolation_level=None, timeout=self.busy_timeout)
                try:
                    conn.execute("PRAGMA query_only=ON")
                    problem = _integrity_problem(conn)
                finally:
                    conn.close()
        except sqlite3.DatabaseError as err:
            if _is_busy(err):
                return          # a checkpoint held it: the next check runs the next day
            problem = " ".join(str(err).split())[:200]
        if problem is not None:
            raise StorageDamaged(f"database {self.path} is damaged (integrity check: {problem})")

    def _migrate(self) -> None:
        """Apply the numbered migrations this file has not had, in order, in one transaction (a
        failure leaves the file as it was).  A file from before ``schema_version`` (its count in
        PRAGMA user_version only) gets the table first, filled with the migrations it had."""
        with self.transaction():
            self.db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, "
                            "name TEXT NOT NULL, applied_at REAL NOT NULL)")
            version = self.schema_version
            known = {row[0] for row in self.db.execute("SELECT version FROM schema_version")}
            for migration in migrations("sqlite")[:version]:
                if migration.number not in known:      # applied by the bot before the table existed
                    self.db.execute("INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, 0)",
                                    (migration.number, migration.name))
            for migration in migrations("sqlite")[version:]:
                for statement in migration.statements:
                    self.db.execute(statement)
                self.db.execute("INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)",
                                (migration.number, migration.name, time.time()))
                # Kept in step: a bot from before the table reads its version here.
                self.db.execute(f"PRAGMA user_version = {migration.number}")
            # A write on every start: a read-only file or folder shows up now, not at the first move.
            self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('opened_at', ?)", (time.time(),))
            # The key that signs links handed to one user (made once per database, kept across restarts).
            self.db.execute("INSERT OR IGNORE INTO meta (key, value) "
                            "VALUES ('link_secret', lower(hex(randomblob(32))))")

    @property
    def schema_version(self) -> int:
        """The number of the last migration this file has had (the table, or for a file from before
        it, PRAGMA user_version; the larger, so a file from a newer bot is never taken as older)."""
        pragma = self.db.execute("PRAGMA user_version").fetchone()[0]
        has_table = self.db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='schema_version'"
                                    ).fetchone()
        table = self.db.execute("SELECT max(version) FROM schema_version").fetchone()[0] if has_table else None
        return max(pragma, table or 0)

    def in_transaction(self) -> bool:
        return self._writer == threading.get_ident()

    @contextmanager
    def transaction(self, wait: float | None = None) -> Iterator[None]:
        """One write transaction (nested calls join the outer one).

        Waits at most ``wait`` seconds (default: the busy timeout) in all, for this process's other
        threads and for other processes, then raises StorageBusy: concurrent events under a held
        lock each get their answer after one timeout, not one timeout per event queued ahead."""
        limit = self.busy_timeout if wait is None else wait
        deadline = time.monotonic() + limit
        if not self._lock.acquire(timeout=limit):
            raise StorageBusy(f"database {self.path} stayed locked for {limit:g} s")
        try:
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            # Before every write: a file deleted or replaced under us must not take one more.
            self.check_file()
            self._begin(max(0.0, deadline - time.monotonic()), limit)
            self._depth, self._writer = 1, threading.get_ident()
            try:
                yield
                self.db.execute("COMMIT")
            except BaseException as err:
                if self.db.conn.in_transaction:
                    self.db.execute("ROLLBACK")
                if isinstance(err, sqlite3.OperationalError) and _is_busy(err):
                    raise StorageBusy(f"database {self.path} stayed locked for {limit:g} s") from err
                if _is_full(err):
                    raise self._disk_full() from None
                raise
            else:
                if self._full:
                    self._full = False
                    log.warning("database %s: writes work again (there is room on the disk)", self.path)
            finally:
                self._depth, self._writer = 0, None
        finally:
            self._lock.release()

    def _disk_full(self) -> StorageFull:
        """The error for a write the full disk refused, logged once a minute at most (every
        command that writes fails the same way meanwhile)."""
        self._full = True
        now = time.monotonic()
        if self._full_logged is None or now - self._full_logged >= FULL_LOG_SECONDS:
            self._full_logged = now
            log.error("database %s: the disk is full; commands that write are refused until there is room",
                      self.path)
        return StorageFull(f"database {self.path}: the disk is full")

    def _begin(self, remaining: float, limit: float) -> None:
        """BEGIN IMMEDIATE, waiting at most ``remaining`` s for another connection's lock."""
        shorter = remaining < self.busy_timeout - 0.01
        if shorter:
            self.db.execute(f"PRAGMA busy_timeout = {int(remaining * 1000)}")
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as err:
            if _is_busy(err):
                raise StorageBusy(f"database {self.path} stayed locked for {limit:g} s") from err
            raise
        finally:
            if shorter:
                self.db.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")

    def _all(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        # Inside its own write transaction a thread must read what it has written so far.
        in_write = self._writer == threading.get_ident()
        conn = self.db.conn if self._reader is None or in_write else self._reader
        with self._lock if conn is self.db.conn else self._read_lock:
            try:
                cursor = conn.execute(sql, params)
                names = [c[0] for c in cursor.description]
                # Always fetch to the end: a statement left open would keep its read snapshot.
                rows = cursor.fetchall()
            except sqlite3.OperationalError as err:
                # Readers do not wait for writers in WAL mode, but a checkpoint or recovery can.
                if _is_busy(err):
                    raise StorageBusy(f"database {self.path} stayed locked for {self.busy_timeout:g} s") from err
                raise
        return [dict(zip(names, row, strict=True)) for row in rows]

    def _write(self, sql: str, params: Sequence[Any] = ()) -> int:
        # Every write under BEGIN IMMEDIATE (the caller's unit, or one of its own).
        with self.transaction():
            return int(self.db.execute(sql, params).rowcount)

    def _insert_id(self, sql: str, params: Sequence[Any] = ()) -> int | None:
        with self.transaction():
            cur = self.db.execute(sql, params)
            if cur.rowcount != 1:
                return None
            if cur.lastrowid is None:
                raise StorageError("an INSERT reported no row id")
            return cur.lastrowid

    def _unit(self, work: Callable[[], T]) -> T:
        # The write lock already orders every unit: none loses a race to be run again for.
        return work()

    def dump(self) -> dict[str, list[tuple]]:
        tables = [r["name"] for r in self._all("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
        out: dict[str, list[tuple]] = {}
        for table in tables:
            rows = self._all(f"SELECT * FROM [{table}]")
            if table == "schema_version":
                # Which migrations ran is state; when they ran is not (see opened_at below).
                rows = [{k: v for k, v in r.items() if k != "applied_at"} for r in rows]
            if table == "meta":
                # When the file was last opened is not state: two databases given the same calls match.
                rows = [r for r in rows if r["key"] not in ("opened_at", "link_secret")]
            out[table] = sorted((tuple(r.values()) for r in rows), key=repr)
        return out

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
        if self._db is not None:
            self._db.conn.close()

    def _next_number(self) -> int:
        """The next challenge/game number (inside a transaction), from one counter taken with a
        single atomic UPDATE (a sequence: two writers never read the same value, whatever the
        database's locking); never at or below an id in use, so a number never names two things."""
        self.db.execute(
            "UPDATE meta SET value = max(coalesce(value, 0), coalesce((SELECT max(id) FROM challenges), 0),"
            " coalesce((SELECT max(id) FROM games), 0)) + 1 WHERE key='last_number'")
        return int(self.db.execute("SELECT value FROM meta WHERE key='last_number'").fetchone()[0])

    def lock_ratings(self) -> None:
        # BEGIN IMMEDIATE already holds the database's one write lock, which covers this one: only
        # the rule (inside a transaction) is checked.
        if self._writer != threading.get_ident():
            raise RuntimeError("lock_ratings() outside a transaction: the lock would end at once")


def _integrity_problem(conn: sqlite3.Connection) -> str | None:
    """The first problem PRAGMA integrity_check reports (indexes against their tables included),
    or None."""
    problems = [row[0] for row in conn.execute("PRAGMA integrity_check(1)").fetchall()]
    if problems == ["ok"]:
        return None
    return " ".join(str(problems[0]).split())[:200]
