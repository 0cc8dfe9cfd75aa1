"""The SQLite backend of the storage contract (through sqlite-utils): one file, WAL mode.

Writes go through one connection, inside ``BEGIN IMMEDIATE`` so a write transaction takes the lock
before it reads what it will change; reads outside a write go through a second, read-only
connection, so a read-only command never waits behind a write that is waiting for another
process's lock.  Everything SQLite-specific (PRAGMAs, ``OR IGNORE``/``OR REPLACE``, JSON text for
lists, 0/1 for booleans) stays in this module: the service sees only ``Store`` and its records.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlite_utils

from .base import (
    CHAT_SETTINGS,
    GAME_UPDATE_FIELDS,
    MOVE_FIELDS,
    NEW_CHALLENGE_FIELDS,
    NEW_CHALLENGE_OPTIONAL,
    NEW_GAME_FIELDS,
    NEW_GAME_OPTIONAL,
    StaleGame,
    StorageBusy,
    StorageContention,
    StorageDamaged,
    StorageError,
    StorageFull,
    StorageGone,
    Store,
    check_fields,
)
from .migrations import migrations
from .records import (
    AnalysisRecord,
    AttemptRecord,
    ChallengeRecord,
    ChatRecord,
    GameCountRecord,
    GameRecord,
    MoveRecord,
    NotifyRecord,
    PlayerRecord,
    PuzzlePostRecord,
    RatingEventRecord,
    RatingRecord,
    SubscriptionRecord,
    field_names,
)
from .rows import ATTEMPT_COLUMNS as _ATTEMPT_COLUMNS
from .rows import CLOSED as _CLOSED
from .rows import COLUMNS as _COLUMNS
from .rows import COUNTED_COLUMNS as _COUNTED_COLUMNS
from .rows import COUNTED_FIELDS as _COUNTED_FIELDS
from .rows import PLAYER_WAIT
from .rows import POST_COLUMNS as _POST_COLUMNS
from .rows import TABLES as _TABLES
from .rows import beat_key as _beat_key
from .rows import count_games_query as _count_games_query
from .rows import count_key as _count_key
from .rows import count_merge as _count_merge
from .rows import count_prune as _count_prune
from .rows import count_upsert as _count_upsert
from .rows import counted as _counted
from .rows import decode as _record
from .rows import decode_count as _decode_count
from .rows import encode_game as _encode_game
from .rows import history_params as _history_params
from .rows import history_query as _history_query
from .sqlite_outbox import SQLiteOutbox

_log = logging.getLogger("bot.storage")

# The schema's history as numbered files (bot/storage/migrations/sqlite/); kept as a list of
# statement lists, one per migration, for the code and tests that count them.
MIGRATIONS: list[list[str]] = [list(m.statements) for m in migrations("sqlite")]

DEFAULT_BUSY_TIMEOUT = 5.0
# A full disk fails every write: it is logged once, then at most once per this many seconds.
FULL_LOG_SECONDS = 60.0

log = logging.getLogger(__name__)

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


def _rowid(cur: sqlite3.Cursor) -> int:
    """The id of the row the cursor's INSERT made (typed optional: a cursor that ran no INSERT has none)."""
    if cur.lastrowid is None:
        raise StorageError("an INSERT reported no row id")
    return cur.lastrowid


class _PuzzlesAndRatings:
    """The SQLite side of daily puzzles and ratings (mixed into SQLiteStore)."""

    if TYPE_CHECKING:
        # The plumbing these methods use, defined by SQLiteStore: declared for the type checker only,
        # so at run time SQLiteStore's own definitions are the only ones.
        _writer: int | None

        @property
        def db(self) -> sqlite_utils.Database: ...

        def transaction(self, wait: float | None = None) -> AbstractContextManager[None]: ...

        def _all(self, sql: str, params: tuple = (), first: bool = False) -> list[dict[str, Any]]: ...

        def _records(self, cls: type, where: str, params: tuple = ()) -> list[Any]: ...

        def _record(self, cls: type, where: str, params: tuple = ()) -> Any: ...

    # -- daily puzzles -------------------------------------------------------------------------------

    def subscribe(self, platform: str, chat_id: str, time: str, timezone: str, variant: str, now: float,
                  language: str | None = None) -> None:
        with self.transaction():
            self.db.execute(
                "INSERT INTO subscriptions (platform, chat_id, time, timezone, variant, language, active, created_at,"
                " updated_at) VALUES (?,?,?,?,?,?,1,?,?) ON CONFLICT (platform, chat_id) DO UPDATE SET"
                " time=excluded.time, timezone=excluded.timezone, variant=excluded.variant,"
                " language=excluded.language, active=1, updated_at=excluded.updated_at,"
                " created_at=CASE WHEN subscriptions.active THEN subscriptions.created_at ELSE excluded.created_at END",
                (platform, chat_id, time, timezone, variant, language, now, now))

    def unsubscribe(self, platform: str, chat_id: str, now: float) -> bool:
        with self.transaction():
            cur = self.db.execute("UPDATE subscriptions SET active=0, updated_at=? WHERE platform=? AND chat_id=? "
                                  "AND active=1", (now, platform, chat_id))
            return cur.rowcount == 1

    def subscription(self, platform: str, chat_id: str) -> SubscriptionRecord | None:
        return self._record(SubscriptionRecord, "platform=? AND chat_id=?", (platform, chat_id))

    def subscriptions(self, platform: str | None = None) -> list[SubscriptionRecord]:
        where, params = _filters(platform=platform)
        return self._records(SubscriptionRecord, f"active=1 AND {where} ORDER BY platform, chat_id", params)

    def claim_daily_post(self, platform: str, chat_id: str, day: str, variant: str, puzzle_id: str,
                         now: float) -> int | None:
        with self.transaction():
            cur = self.db.execute(
                "INSERT OR IGNORE INTO puzzle_posts (platform, chat_id, kind, day, variant, puzzle_id, posted_at)"
                " VALUES (?,?,'daily',?,?,?,?)", (platform, chat_id, day, variant, puzzle_id, now))
            return _rowid(cur) if cur.rowcount == 1 else None

    def create_personal_post(self, platform: str, chat_id: str, user_id: str, variant: str, puzzle_id: str,
                             now: float) -> int:
        with self.transaction():
            cur = self.db.execute(
                "INSERT INTO puzzle_posts (platform, chat_id, kind, user_id, variant, puzzle_id, posted_at)"
                " VALUES (?,?,'personal',?,?,?,?)", (platform, chat_id, user_id, variant, puzzle_id, now))
            return _rowid(cur)

    def puzzle_post(self, post_id: int) -> PuzzlePostRecord | None:
        return self._record(PuzzlePostRecord, "id=?", (post_id,))

    def daily_posts(self, platform: str, chat_id: str, limit: int = 1) -> list[PuzzlePostRecord]:
        return self._records(PuzzlePostRecord, "platform=? AND chat_id=? AND kind='daily' ORDER BY day DESC, id DESC "
                             "LIMIT ?", (platform, chat_id, limit))

    def personal_posts(self, platform: str, user_id: str, limit: int = 1) -> list[PuzzlePostRecord]:
        return self._records(PuzzlePostRecord, "platform=? AND user_id=? AND kind='personal' ORDER BY id DESC "
                             "LIMIT ?", (platform, user_id, limit))

    def claim_first_solver(self, post_id: int, user_id: str, name: str) -> bool:
        with self.transaction():
            cur = self.db.execute("UPDATE puzzle_posts SET first_solver_id=?, first_solver_name=? "
                                  "WHERE id=? AND first_solver_id IS NULL", (user_id, name, post_id))
            return cur.rowcount == 1

    def attempt(self, post_id: int, user_id: str) -> AttemptRecord | None:
        return self._record(AttemptRecord, "post_id=? AND user_id=?", (post_id, user_id))

    def save_attempt(self, attempt: AttemptRecord) -> None:
        values = {name: getattr(attempt, name) for name in field_names(AttemptRecord)}
        values["progress"] = json.dumps(list(attempt.progress))
        expected = values.pop("version")
        key = (attempt.post_id, attempt.user_id)
        with self.transaction():
            if expected is None:
                # No version known: stored as it is, whatever is there (a new row starts at 1).
                self.db.execute(
                    f"INSERT INTO attempts ({', '.join(values)}, version) VALUES ({', '.join('?' * len(values))}, 1)"
                    " ON CONFLICT (post_id, user_id) DO UPDATE SET "
                    + ", ".join(f"{name}=excluded.{name}" for name in values) + ", version=attempts.version+1",
                    tuple(values.values()))
                return
            if expected == 0:
                cur = self.db.execute(f"INSERT OR IGNORE INTO attempts ({', '.join(values)}, version) "
                                      f"VALUES ({', '.join('?' * len(values))}, 1)", tuple(values.values()))
            else:
                cur = self.db.execute(f"UPDATE attempts SET {', '.join(f'{name}=?' for name in values)}, "
                                      "version=version+1 WHERE post_id=? AND user_id=? AND version=?",
                                      (*values.values(), *key, expected))
            if cur.rowcount != 1:
                raise StorageContention(f"attempt {key} changed since it was read (version {expected})")

    def attempts(self, post_id: int) -> list[AttemptRecord]:
        return self._records(AttemptRecord, "post_id=? ORDER BY started_at, user_id", (post_id,))

    def _post_attempts(self, where: str, params: tuple) -> list[tuple[PuzzlePostRecord, AttemptRecord]]:
        rows = self._all(f"SELECT {_POST_COLUMNS}, {_ATTEMPT_COLUMNS} FROM attempts a JOIN puzzle_posts p "
                         f"ON p.id = a.post_id WHERE {where}", params)
        return [(_record(PuzzlePostRecord, {name: row[f"p_{name}"] for name in field_names(PuzzlePostRecord)}),
                 _record(AttemptRecord, {name: row[f"a_{name}"] for name in field_names(AttemptRecord)}))
                for row in rows]

    def chat_attempts(self, platform: str, chat_id: str) -> list[tuple[PuzzlePostRecord, AttemptRecord]]:
        return self._post_attempts("p.platform=? AND p.chat_id=? AND p.kind='daily' ORDER BY p.day, p.id, a.started_at",
                                   (platform, chat_id))

    def user_attempts(self, platform: str, user_id: str,
                      daily_only: bool = True) -> list[tuple[PuzzlePostRecord, AttemptRecord]]:
        kind = " AND p.kind='daily'" if daily_only else ""
        return self._post_attempts(f"p.platform=? AND a.user_id=?{kind} ORDER BY p.day, p.id",
                                   (platform, user_id))

    def rated_attempts(self) -> list[tuple[PuzzlePostRecord, AttemptRecord]]:
        return self._post_attempts("a.rated_at IS NOT NULL ORDER BY a.rated_at, a.post_id, a.user_id", ())

    # -- ratings ---------------------------------------------------------------------------------------

    def rating(self, platform: str, subject: str, pool: str) -> RatingRecord | None:
        return self._record(RatingRecord, "platform=? AND subject=? AND pool=?", (platform, subject, pool))

    def rating_pool(self, platform: str, pool: str) -> list[RatingRecord]:
        return self._records(RatingRecord, "platform=? AND pool=? ORDER BY rating DESC, subject", (platform, pool))

    def save_rating(self, rating: RatingRecord, source: str) -> None:
        values = {name: getattr(rating, name) for name in field_names(RatingRecord)}
        with self.transaction():
            self.db.execute(f"INSERT OR REPLACE INTO ratings ({', '.join(values)}) "
                            f"VALUES ({', '.join('?' * len(values))})", tuple(values.values()))
            self.db.execute("INSERT INTO rating_history (platform, subject, pool, source, at, rating, deviation) "
                            "VALUES (?,?,?,?,?,?,?)", (rating.platform, rating.subject, rating.pool, source,
                                                        rating.updated_at, rating.rating, rating.deviation))

    def rating_history(self, platform: str, subject: str, pool: str,
                       limit: int | None = None) -> list[RatingEventRecord]:
        if limit is None:
            return self._records(RatingEventRecord, "platform=? AND subject=? AND pool=? ORDER BY at, rowid",
                                 (platform, subject, pool))
        if limit < 2:
            raise ValueError("a history limit below 2 cannot keep the first event and the last")
        # A history that fits is read whole; a longer one is picked from through the index.
        head = self._records(RatingEventRecord, "platform=? AND subject=? AND pool=? "
                             "ORDER BY at, rowid LIMIT ?", (platform, subject, pool, limit + 1))
        if len(head) <= limit:
            return head
        rows = self._all(_history_query("?", "rowid", _COLUMNS[RatingEventRecord]),
                         _history_params(platform, subject, pool, limit))
        return [_record(RatingEventRecord, row) for row in rows]

    def lock_ratings(self) -> None:
        # BEGIN IMMEDIATE already holds the database's one write lock, which covers this one: only
        # the rule (inside a transaction) is checked.
        if self._writer != threading.get_ident():
            raise RuntimeError("lock_ratings() outside a transaction: the lock would end at once")

    def clear_ratings(self) -> None:
        with self.transaction():
            self.db.execute("DELETE FROM ratings")
            self.db.execute("DELETE FROM rating_history")


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


class SQLiteStore(_PuzzlesAndRatings, SQLiteOutbox, Store):
    """The database in one SQLite file; every method is one short transaction.

    Opening checks the file (a database, undamaged, writable, not from a newer bot) and
    raises StorageError with a one-line reason; a write that waits longer than
    ``busy_timeout`` seconds for another connection's lock raises StorageBusy."""

    def __init__(self, path: str | Path, busy_timeout: float = DEFAULT_BUSY_TIMEOUT) -> None:
        self.path = str(path)
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

    def _one(self, sql: str, params: tuple = ()) -> dict[str, Any] | None:
        rows = self._all(sql, params, first=True)
        return rows[0] if rows else None

    def _all(self, sql: str, params: tuple = (), first: bool = False) -> list[dict[str, Any]]:
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
        return [dict(zip(names, row, strict=True)) for row in (rows[:1] if first else rows)]

    def _records(self, cls: type, where: str, params: tuple = ()) -> list[Any]:
        """The rows of ``cls``'s table that ``where`` (plus ORDER BY / LIMIT) selects, as records."""
        rows = self._all(f"SELECT {_COLUMNS[cls]} FROM {_TABLES[cls]} WHERE {where}", params)
        return [_record(cls, row) for row in rows]

    def _record(self, cls: type, where: str, params: tuple = ()) -> Any:
        rows = self._all(f"SELECT {_COLUMNS[cls]} FROM {_TABLES[cls]} WHERE {where}", params, first=True)
        return _record(cls, rows[0]) if rows else None

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

    # -- players and chats ---------------------------------------------------------------

    def save_player(self, platform: str, user_id: str, name: str, username: str | None,
                    language: str | None, now: float) -> bool:
        known = self.player(platform, user_id)
        if known and (known.name, known.username, known.language) == (name, username, language):
            return False
        # A name refresh never makes a command wait: under a held lock it waits for the next message.
        with self.transaction(wait=min(self.busy_timeout, PLAYER_WAIT)):
            self.db.table("players").upsert(
                {"platform": platform, "user_id": user_id, "name": name, "username": username,
                 "language": language, "updated_at": now},
                pk=("platform", "user_id"))
        return True

    def player(self, platform: str, user_id: str) -> PlayerRecord | None:
        return self._record(PlayerRecord, "platform=? AND user_id=?", (platform, user_id))

    def player_by_username(self, platform: str, username: str) -> PlayerRecord | None:
        return self._record(PlayerRecord, "platform=? AND lower(username)=lower(?) ORDER BY updated_at DESC LIMIT 1",
                            (platform, username))

    def notify_setting(self, platform: str, user_id: str) -> NotifyRecord | None:
        return self._record(NotifyRecord, "platform=? AND user_id=?", (platform, user_id))

    def set_notify(self, platform: str, user_id: str, private: bool, now: float) -> None:
        with self.transaction():
            self.db.execute(
                """INSERT INTO notify_settings (platform, user_id, private, unreachable, updated_at)
                   VALUES (?, ?, ?, 0, ?) ON CONFLICT (platform, user_id)
                   DO UPDATE SET private=excluded.private, unreachable=0, updated_at=excluded.updated_at""",
                (platform, user_id, int(private), now))

    def set_unreachable(self, platform: str, user_id: str, unreachable: bool, now: float) -> bool:
        with self.transaction():
            cur = self.db.execute("UPDATE notify_settings SET unreachable=?, updated_at=? "
                                  "WHERE platform=? AND user_id=? AND unreachable<>?",
                                  (int(unreachable), now, platform, user_id, int(unreachable)))
            return cur.rowcount > 0

    def chat(self, platform: str, chat_id: str) -> ChatRecord | None:
        return self._record(ChatRecord, "platform=? AND chat_id=?", (platform, chat_id))

    def ensure_chat(self, platform: str, chat_id: str, kind: str, now: float) -> ChatRecord:
        known = self.chat(platform, chat_id)
        if known is not None:
            return known
        with self.transaction():
            self.db.execute(
                "INSERT OR IGNORE INTO chats (platform, chat_id, kind, created_at) VALUES (?,?,?,?)",
                (platform, chat_id, kind, now))
            # Read inside the transaction: the row is there even if another process made it.
            made = self.chat(platform, chat_id)
            assert made is not None
            return made

    def set_chat(self, platform: str, chat_id: str, **fields: Any) -> None:
        check_fields("chat setting", fields, CHAT_SETTINGS)
        with self.transaction():
            for name, value in fields.items():
                self.db.execute(f"UPDATE chats SET {name}=? WHERE platform=? AND chat_id=?",
                                (value, platform, chat_id))

    def move_chat(self, platform: str, old_chat_id: str, new_chat_id: str) -> None:
        with self.transaction():
            # The new chat may already have a row (someone typed there first): it keeps its own
            # settings, and the old row goes.
            for table in ("chats", "messages", "post_messages", "subscriptions"):
                self.db.execute(f"UPDATE OR IGNORE {table} SET chat_id=? WHERE platform=? AND chat_id=?",
                                (new_chat_id, platform, old_chat_id))
                self.db.execute(f"DELETE FROM {table} WHERE platform=? AND chat_id=?", (platform, old_chat_id))
            # Messages still to be sent follow the chat too (the old id no longer takes any).
            for table in ("challenges", "games", "outbox"):
                self.db.execute(f"UPDATE {table} SET chat_id=? WHERE platform=? AND chat_id=?",
                                (new_chat_id, platform, old_chat_id))
            # The games' counts follow them, added to any the new id has already.
            if new_chat_id != old_chat_id:
                self.db.execute(_count_merge("?"), (new_chat_id, platform, old_chat_id))
                self.db.execute("DELETE FROM game_counts WHERE platform=? AND chat_id=?", (platform, old_chat_id))
            # A day the new id already has a post for keeps that one.
            self.db.execute("UPDATE OR IGNORE puzzle_posts SET chat_id=? WHERE platform=? AND chat_id=?",
                            (new_chat_id, platform, old_chat_id))

    # -- challenges -------------------------------------------------------------------------

    def create_challenge(self, **fields: Any) -> int:
        check_fields("challenge", fields, NEW_CHALLENGE_FIELDS, NEW_CHALLENGE_OPTIONAL)
        with self.transaction():
            number = self._next_number()
            self.db.table("challenges").insert(dict(fields, id=number, status="open"))
            return number

    def challenge(self, challenge_id: int) -> ChallengeRecord | None:
        return self._record(ChallengeRecord, "id=?", (challenge_id,))

    def open_challenges(self, platform: str, chat_id: str) -> list[ChallengeRecord]:
        return self._records(ChallengeRecord, "platform=? AND chat_id=? AND status='open' ORDER BY id",
                             (platform, chat_id))

    def find_challenges(self, platform: str | None = None, chat_id: str | None = None,
                        status: str | None = None) -> list[ChallengeRecord]:
        where, params = _filters(platform=platform, chat_id=chat_id, status=status)
        return self._records(ChallengeRecord, f"{where} ORDER BY id", params)

    def lapsed_challenges(self, platform: str | None, now: float, lifetime: float) -> list[ChallengeRecord]:
        where, params = _filters(platform=platform)
        return self._records(ChallengeRecord, f"{where} AND status='open' AND created_at + max(?, move_seconds) <= ? "
                             "ORDER BY id", (*params, lifetime, now))

    def next_challenge_lapse(self, platform: str | None, lifetime: float) -> float | None:
        where, params = _filters(platform=platform)
        row = self._one(f"SELECT min(created_at + max(?, move_seconds)) AS t FROM challenges WHERE {where} "
                        "AND status='open'", (lifetime, *params))
        return row["t"] if row else None

    def remember_challenge_message(self, platform: str, chat_id: str, message_id: str, challenge_id: int) -> None:
        with self.transaction():
            self.db.execute("INSERT OR REPLACE INTO challenge_messages (platform, chat_id, message_id, challenge_id) "
                            "VALUES (?, ?, ?, ?)", (platform, chat_id, message_id, challenge_id))

    def challenge_messages(self, challenge_id: int) -> list[tuple[str, str, str]]:
        rows = self._all("SELECT platform, chat_id, message_id FROM challenge_messages WHERE challenge_id=? "
                         "ORDER BY rowid", (challenge_id,))
        return [(r["platform"], r["chat_id"], r["message_id"]) for r in rows]

    def close_challenge(self, challenge_id: int, status: str) -> bool:
        if status not in _CLOSED:
            raise ValueError(f"a challenge cannot be closed as {status!r}")
        with self.transaction():
            cur = self.db.execute("UPDATE challenges SET status=? WHERE id=? AND status='open'",
                                  (status, challenge_id))
            return cur.rowcount == 1

    def accept_challenge(self, challenge_id: int, game: dict[str, Any]) -> int | None:
        check_fields("game", game, NEW_GAME_FIELDS, NEW_GAME_OPTIONAL)
        with self.transaction():
            cur = self.db.execute("UPDATE challenges SET status='accepted' WHERE id=? AND status='open'",
                                  (challenge_id,))
            if cur.rowcount != 1:
                return None
            game_id = challenge_id
            if self.db.execute("SELECT 1 FROM games WHERE id=?", (game_id,)).fetchone():
                # A challenge from before the shared numbering whose number an old game has.
                game_id = self._next_number()
            self._insert_game(game_id, game)
            self.db.execute("UPDATE challenges SET game_id=? WHERE id=?", (game_id, challenge_id))
            return game_id

    def create_game(self, game: dict[str, Any]) -> int:
        check_fields("game", game, NEW_GAME_FIELDS, NEW_GAME_OPTIONAL)
        with self.transaction():
            game_id = self._next_number()
            self._insert_game(game_id, game)
            return game_id

    def _insert_game(self, game_id: int, game: dict[str, Any]) -> None:
        self.db.table("games").insert(dict(_encode_game(game), id=game_id, version=0, ply=0, quiet_plies=0,
                                           status="active", reminded=0))

    # -- games --------------------------------------------------------------------------------

    def game(self, game_id: int) -> GameRecord | None:
        return self._record(GameRecord, "id=?", (game_id,))

    def active_games(self, platform: str, chat_id: str) -> list[GameRecord]:
        return self._records(GameRecord, "platform=? AND chat_id=? AND status='active' ORDER BY id",
                             (platform, chat_id))

    def recent_games(self, platform: str, chat_id: str, user_id: str, limit: int = 1) -> list[GameRecord]:
        return self._records(GameRecord, "platform=? AND chat_id=? AND (white_id=? OR black_id=?) "
                             "ORDER BY id DESC LIMIT ?", (platform, chat_id, user_id, user_id, limit))

    def last_game(self, platform: str, chat_id: str) -> GameRecord | None:
        return self._record(GameRecord, "platform=? AND chat_id=? ORDER BY id DESC LIMIT 1", (platform, chat_id))

    def find_games(self, platform: str | None = None, chat_id: str | None = None, status: str | None = None,
                   limit: int | None = None, user_id: str | None = None) -> list[GameRecord]:
        where, params = _filters(platform=platform, chat_id=chat_id, status=status)
        if user_id is not None:
            where, params = f"{where} AND (white_id=? OR black_id=?)", (*params, user_id, user_id)
        return self._records(GameRecord, f"{where} ORDER BY id DESC LIMIT ?", (*params, -1 if limit is None else limit))

    def count_finished_games(self, platform: str, chat_id: str | None = None, user_id: str | None = None,
                             opponent_id: str | None = None) -> list[GameCountRecord]:
        sql, params = _count_games_query("?", platform, chat_id, user_id, opponent_id)
        return [_decode_count(row) for row in self._all(sql, params)]

    def bot_games(self, platform: str | None = None) -> list[GameRecord]:
        where, params = _filters(platform=platform)
        return self._records(GameRecord, f"status='active' AND bot_level IS NOT NULL AND {where} ORDER BY id", params)

    def recent_fens(self, game_id: int, count: int) -> list[str]:
        rows = self._all("SELECT fen_after FROM moves WHERE game_id=? ORDER BY ply DESC LIMIT ?", (game_id, count))
        return [r["fen_after"] for r in reversed(rows)]

    def moves(self, game_id: int) -> list[MoveRecord]:
        return self._records(MoveRecord, "game_id=? ORDER BY ply", (game_id,))

    def update_game(self, game_id: int, version: int, fields: dict[str, Any],
                    move: dict[str, Any] | None = None) -> GameRecord:
        check_fields("game update", fields, GAME_UPDATE_FIELDS)
        if move is not None:
            check_fields("move", move, MOVE_FIELDS, ())
        counted = not _COUNTED_FIELDS.isdisjoint(fields)
        fields = dict(_encode_game(fields), version=version + 1)
        names = ", ".join(f"{k}=?" for k in fields)
        with self.transaction():
            before = self._one(f"SELECT {_COUNTED_COLUMNS} FROM games WHERE id=?", (game_id,)) if counted else None
            cur = self.db.execute(f"UPDATE games SET {names} WHERE id=? AND version=?",
                                  (*fields.values(), game_id, version))
            if cur.rowcount != 1:
                raise StaleGame(game_id)
            if move is not None:
                self.db.table("moves").insert(dict(move, game_id=game_id))
            changed = self.game(game_id)
            assert changed is not None          # written just now, in this transaction
            if before is not None:
                self._recount(_count_key(before), _count_key(_counted(changed)))
            return changed

    def _recount(self, old: tuple[Any, ...] | None, new: tuple[Any, ...] | None) -> None:
        """Move a game's count from its key as it was to its key as it is (inside the change's
        transaction): a game counts once, under what it is now."""
        if old == new:
            return
        if old is not None:
            self.db.execute(_count_upsert("?"), (*old, -1))
            self.db.execute(_count_prune("?"), old)
        if new is not None:
            self.db.execute(_count_upsert("?"), (*new, 1))

    def mark_reminded(self, game_id: int, version: int) -> bool:
        with self.transaction():
            cur = self.db.execute("UPDATE games SET reminded=1 WHERE id=? AND version=? AND reminded=0",
                                  (game_id, version))
            return cur.rowcount == 1

    def due_games(self, now: float, platform: str | None = None) -> list[GameRecord]:
        where = "AND platform=?" if platform is not None else ""
        params = (now, now, platform) if platform is not None else (now, now)
        return self._records(
            GameRecord, "status='active' AND deadline_at IS NOT NULL AND "
            f"(deadline_at <= ? OR (reminded=0 AND deadline_at - move_seconds / 10.0 <= ?)) {where} "
            "ORDER BY deadline_at", params)

    # -- board messages --------------------------------------------------------------------------

    def save_analysis(self, game_id: int, ply: int, notes: Sequence[dict[str, Any]], at: float) -> None:
        with self.transaction():
            self.db.execute("INSERT OR REPLACE INTO analyses (game_id, ply, notes, created_at) VALUES (?,?,?,?)",
                            (game_id, ply, json.dumps(list(notes), separators=(",", ":")), at))

    def analysis(self, game_id: int, ply: int) -> AnalysisRecord | None:
        row = self._one("SELECT * FROM analyses WHERE game_id=? AND ply=?", (game_id, ply))
        if row is None:
            return None
        return AnalysisRecord(row["game_id"], row["ply"], tuple(json.loads(row["notes"])), row["created_at"])

    def remember_message(self, platform: str, chat_id: str, message_id: str, game_id: int) -> None:
        with self.transaction():
            self.db.table("messages").upsert(
                {"platform": platform, "chat_id": chat_id, "message_id": message_id, "game_id": game_id},
                pk=("platform", "chat_id", "message_id"))

    def game_of_message(self, platform: str, chat_id: str, message_id: str) -> int | None:
        row = self._one("SELECT game_id FROM messages WHERE platform=? AND chat_id=? AND message_id=?",
                        (platform, chat_id, message_id))
        return row["game_id"] if row else None

    def board_messages(self, platform: str, chat_id: str) -> list[tuple[str, int]]:
        rows = self._all("SELECT message_id, game_id FROM messages WHERE platform=? AND chat_id=? ORDER BY rowid",
                         (platform, chat_id))
        return [(r["message_id"], r["game_id"]) for r in rows]

    def remember_post_message(self, platform: str, chat_id: str, message_id: str, post_id: int) -> None:
        with self.transaction():
            self.db.execute("INSERT OR REPLACE INTO post_messages (platform, chat_id, message_id, post_id) "
                            "VALUES (?,?,?,?)", (platform, chat_id, message_id, post_id))

    def post_of_message(self, platform: str, chat_id: str, message_id: str) -> int | None:
        row = self._one("SELECT post_id FROM post_messages WHERE platform=? AND chat_id=? AND message_id=?",
                        (platform, chat_id, message_id))
        return row["post_id"] if row else None

    # -- send budget -------------------------------------------------------------------------------

    def reserve_sends(self, scopes: Sequence[tuple[str, float, float]], now: float, max_wait: float) -> float:
        keys = tuple(key for key, _, _ in scopes)
        # BEGIN IMMEDIATE: the read and the reservation hold the write lock, so two processes
        # never reserve the same slot.
        with self.transaction():
            held = {row[0]: float(row[1]) for row in self.db.execute(
                f"SELECT key, tat FROM send_budget WHERE key IN ({', '.join('?' * len(keys))})", keys)}
            start = max([now, *(held[key] - tolerance for key, _, tolerance in scopes if key in held)])
            if start - now <= max_wait:
                for key, interval, _ in scopes:
                    self.db.execute("INSERT INTO send_budget (key, tat) VALUES (?, ?) "
                                    "ON CONFLICT (key) DO UPDATE SET tat=excluded.tat",
                                    (key, max(held.get(key, start), start) + interval))
            return start

    def hold_sends(self, key: str, until: float) -> None:
        with self.transaction():
            self.db.execute("INSERT INTO send_budget (key, tat) VALUES (?, ?) "
                            "ON CONFLICT (key) DO UPDATE SET tat=max(tat, excluded.tat)", (key, until))

    def prune_sends(self, before: float) -> int:
        with self.transaction():
            return int(self.db.execute("DELETE FROM send_budget WHERE tat < ?", (before,)).rowcount)

    # -- heartbeat and downtime -------------------------------------------------------------------

    def beat(self, platform: str | None, now: float) -> None:
        with self.transaction():
            self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (_beat_key(platform), now))

    def last_beat(self, platform: str | None) -> float | None:
        row = self._one("SELECT value FROM meta WHERE key=?", (_beat_key(platform),))
        return float(row["value"]) if row else None

    def resume_after_downtime(self, platform: str | None, now: float, threshold: float,
                              limit: float | None = None) -> float:
        key = _beat_key(platform)
        with self.transaction():
            row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
            # Compare-and-set on the heartbeat read: of two processes starting at once, only the one
            # that renews the beat it read moves the clocks (the other finds it renewed: no gap).
            if row is None:
                cur = self.db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", (key, now))
            else:
                cur = self.db.execute("UPDATE meta SET value=? WHERE key=? AND value=?", (now, key, row[0]))
            if cur.rowcount != 1:
                return 0.0
            gap = now - float(row[0]) if row else 0.0
            if limit is not None:
                gap = min(gap, limit)
            if gap <= threshold:
                return 0.0
            where = " AND platform=?" if platform is not None else ""
            self.db.execute("UPDATE games SET deadline_at = deadline_at + ? "
                            f"WHERE status='active' AND deadline_at IS NOT NULL{where}",
                            (gap, platform) if platform is not None else (gap,))
            return gap

    def link_secret(self) -> bytes:
        row = self._one("SELECT value FROM meta WHERE key='link_secret'")
        if row is None:
            raise StorageError(f"database {self.path} has no link secret")
        return bytes.fromhex(str(row["value"]))

    # -- questions waiting for a confirmation ------------------------------------------------------

    def set_pending(self, key: str, value: Any) -> None:
        with self.transaction():
            self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                            (f"pending:{key}", json.dumps(value)))

    def pending(self, key: str) -> Any:
        row = self._one("SELECT value FROM meta WHERE key=?", (f"pending:{key}",))
        return json.loads(row["value"]) if row else None

    def drop_pending(self, key: str) -> None:
        with self.transaction():
            self.db.execute("DELETE FROM meta WHERE key=?", (f"pending:{key}",))


def _integrity_problem(conn: sqlite3.Connection) -> str | None:
    """The first problem PRAGMA integrity_check reports (indexes against their tables included),
    or None."""
    problems = [row[0] for row in conn.execute("PRAGMA integrity_check(1)").fetchall()]
    if problems == ["ok"]:
        return None
    return " ".join(str(problems[0]).split())[:200]


def _filters(**values: str | None) -> tuple[str, tuple]:
    """A WHERE clause matching every value that is not None ('1' when none is)."""
    given = {name: value for name, value in values.items() if value is not None}
    return " AND ".join(f"{name}=?" for name in given) or "1", tuple(given.values())

