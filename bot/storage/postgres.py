"""The PostgreSQL backend of the storage contract (psycopg 3 and its connection pool).

Isolation.  A ``transaction()`` is a SERIALIZABLE transaction on one pooled connection, bound to
the calling thread until it ends (nested blocks join it).  PostgreSQL's serializable snapshot
isolation undoes a transaction whose outcome no serial order would give (SQLSTATE 40001) and
breaks deadlocks (40P01): both become StorageContention, which the caller's outermost unit of work
runs again (``retry.retry_contention``).  A store method called outside any ``transaction()`` is a
whole unit itself and is retried here.

The contention points of the contract are explicit, as on SQLite, so they hold under row locks:
the ``#N`` counter is one atomic ``UPDATE meta ... RETURNING``; a game and an attempt change by
compare-and-set on their version; the ratings lock is a lock on the ratings table that only its
writers conflict on, held to the end of the transaction; claims
(a challenge, a daily post, a first solver, a reminder, downtime) are single conditional writes;
outbox rows are claimed ``FOR UPDATE SKIP LOCKED`` under per-chat advisory locks.  A method that is
a single statement and is called outside a transaction runs as that one statement in autocommit
(READ COMMITTED: its condition is checked again on the newest row version after a lock wait, which
is the compare-and-set the contract describes), without BEGIN/COMMIT round trips.

Reads outside a transaction take any pooled connection in autocommit mode.  A lock waited for
longer than the busy timeout (``lock_timeout``, 55P03) raises StorageBusy; a full disk (53100)
StorageFull; a lost or refused connection StorageUnavailable with one line (the URL without its password).

A server that went away (stopped, restarting, unreachable).  The command that meets it gets
StorageUnavailable, and so does every use while it stays away, at once (no wait for a pool that
cannot connect): the store then tries one plain connection at most every PROBE_SECONDS, and the
first that succeeds brings a new pool (the old one, its dead connections and its own reconnection
backoff, which grows to minutes, is closed).  So the first use after the server's return works.  An
idle connection the server closed meanwhile (a restart between two commands) is noticed before
it is used, at the cost of one poll of its socket.  The outage is logged when it starts, at most once
a minute while it lasts and when it ends.

psycopg is imported only when a PostgreSQL URL is opened: the bot runs on SQLite without it.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import re
import secrets
import select
import threading
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from bot.redact import redact

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
    StorageError,
    StorageFull,
    StorageUnavailable,
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
    OutboxRecord,
    PlayerRecord,
    PuzzlePostRecord,
    RatingEventRecord,
    RatingRecord,
    SubscriptionRecord,
    field_names,
)
from .retry import RetryPolicy, retry_contention
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
from .rows import decode as _decode
from .rows import decode_count as _decode_count
from .rows import encode_game as _encode_game
from .rows import history_params as _history_params
from .rows import history_query as _history_query
from .sqlite_outbox import ERROR_CHARS

log = logging.getLogger(__name__)

DEFAULT_BUSY_TIMEOUT = 5.0
POOL_MIN, POOL_MAX = 1, 10
# psycopg prepares a statement on a connection once it ran this many times there.
PREPARE_THRESHOLD = 1
FULL_LOG_SECONDS = 60.0
# A server that went away: one plain connection tried at most this often (the first use after its
# return waits at most this long), its connect timeout (libpq's shortest), and how often the
# outage is logged while it lasts.
PROBE_SECONDS = 0.5
PROBE_CONNECT_TIMEOUT = 2
# The channel a game's committed change is announced on (its number as the payload), and how soon a
# listener whose connection broke tries again.
GAME_CHANNEL = "draughts_game"
LISTEN_RETRY_SECONDS = 1.0
# How long a use waits for another thread's look at the server (a refused connection takes a
# millisecond; one that hangs is left to that thread).
PROBE_WAIT_SECONDS = 0.25
DOWN_LOG_SECONDS = 60.0
# Advisory lock keys (per database): migrating at open (one-key space); an outbox chat is locked
# under (OUTBOX_CHAT_SPACE, hashtext(platform:chat)) in the two-key space, which never overlaps it.
MIGRATE_KEY = 0x6472_6175_6768_0001
OUTBOX_CHAT_SPACE = 0x6472_0001
# Columns PostgreSQL needs to keep SQLite's rowid order; not part of the data (left out of dump()).
HELPER_COLUMNS = {"messages": "seq", "challenge_messages": "seq", "rating_history": "seq"}
# Identity columns (SQLite rowids); a copy that inserted explicit ids resets them (reset_sequences).
IDENTITY_COLUMNS = (("outbox", "id"), ("puzzle_posts", "id"), *HELPER_COLUMNS.items())
# Our own settings in a URL's query (the rest goes to libpq; libpq's ``options`` is merged with ours).
URL_OPTIONS = ("pool_min", "pool_max", "prepare_threshold", "options")

_OUTBOX_RETURNING = ", ".join(field_names(OutboxRecord))

# SQLSTATEs (https://www.postgresql.org/docs/current/errcodes-appendix.html).
_CONTENTION = frozenset({"40001", "40P01"})
_LOCK_TIMEOUT = "55P03"
_DISK_FULL = "53100"
_ABORTED = "25P02"
_TOO_MANY_CONNECTIONS = "53300"

T = TypeVar("T")


def redact_url(url: str) -> str:
    """A database URL fit for a log line or an error: no password, no query."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        netloc = (f"{parts.username}@" if parts.username else "") + host + (f":{parts.port}" if parts.port else "")
        return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    except ValueError:
        return re.sub(r"//[^@/]*@", "//", url.split("?", 1)[0])


def split_url(url: str) -> tuple[str, dict[str, str]]:
    """The URL libpq gets (``postgres://`` normalised, our options taken out) and our options."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    ours = {key: value for key, value in query if key in URL_OPTIONS}
    rest = [(key, value) for key, value in query if key not in URL_OPTIONS]
    return urlunsplit(("postgresql", parts.netloc, parts.path, urlencode(rest), parts.fragment)), ours


def _driver() -> Any:
    """The psycopg package, or StorageError saying how to install it."""
    try:
        import psycopg
        import psycopg_pool  # noqa: F401
    except ImportError:
        raise StorageError("a postgresql:// database needs psycopg: install with pip install '.[postgres]'") from None
    return psycopg


def _unit(method: Callable[..., T]) -> Callable[..., T]:
    """A write method: outside a caller's transaction it is a whole unit of work, run again when it
    loses a race (inside one, the contention goes up to the caller's outermost unit)."""
    @functools.wraps(method)
    def run(self: PostgresStore, *args: Any, **kwargs: Any) -> T:
        if self.in_transaction():
            return method(self, *args, **kwargs)
        return retry_contention(lambda: method(self, *args, **kwargs), self.retry_policy)
    return run


def _filters(**values: str | None) -> tuple[str, tuple]:
    """A WHERE clause matching every value that is not None ('TRUE' when none is)."""
    given = {name: value for name, value in values.items() if value is not None}
    return " AND ".join(f"{name}=%s" for name in given) or "TRUE", tuple(given.values())


def _meta_value(key: str, value: Any) -> Any:
    """A meta value as SQLite holds it (its column has no type; ours is text)."""
    if value is None:
        return None
    if key == "last_number":
        return int(value)
    if key.startswith("heartbeat:") or key == "opened_at":
        return float(value)
    return value


class _Bound(threading.local):
    """The connection of this thread's transaction, how deep its blocks are nested, and the
    statements that open it, not sent yet (they go with the unit's first statement)."""

    conn: Any = None
    depth: int = 0
    opening: tuple[str, ...] = ()


class PostgresStore(Store):
    """The database on a PostgreSQL server, reached by URL (``postgresql://user@host/db``).

    Opening connects, applies the migrations this database has not had (refusing one written by a
    newer bot) and raises StorageError with a one-line reason when it cannot.  A lock waited for
    longer than ``busy_timeout`` seconds raises StorageBusy.  The pool keeps ``pool_min`` to
    ``pool_max`` connections (constructor, or the URL's query: ``?pool_max=20``)."""

    def __init__(self, url: str, busy_timeout: float = DEFAULT_BUSY_TIMEOUT, pool_min: int | None = None,
                 pool_max: int | None = None, retry_policy: RetryPolicy | None = None) -> None:
        self._pg = _driver()
        from psycopg.rows import dict_row
        from psycopg_pool import ConnectionPool

        self.url = url
        self.name = redact_url(url)
        self.busy_timeout = busy_timeout
        self.retry_policy = retry_policy or RetryPolicy()
        self._local = _Bound()
        self._full = False
        self._full_logged: float | None = None
        # The server's outage: since when (monotonic; None: it answers), the next plain connection
        # to try, when it was last logged (None: not yet), one thread trying at a time.
        self._down: float | None = None
        self._probe_at = 0.0
        self._down_logged: float | None = None
        self._down_reason = ""
        self._state = threading.Lock()
        self._recovering = threading.Lock()
        # The pool each lent connection came from (after a renewal, an older one takes it back and closes it).
        self._lent: dict[int, Any] = {}
        conninfo, options = split_url(url)
        try:
            low = int(options.get("pool_min", pool_min or POOL_MIN))
            high = int(options.get("pool_max", pool_max or POOL_MAX))
            prepare = int(options.get("prepare_threshold", PREPARE_THRESHOLD))
        except ValueError:
            raise StorageError(f"database {self.name}: pool_min, pool_max and prepare_threshold must be "
                               "whole numbers") from None
        high = max(high, low, 1)
        # Every connection: autocommit (reads and one-statement writes need no BEGIN), our lock
        # timeout (the busy timeout), statements prepared on their first use.
        self._kwargs: dict[str, Any] = {
            "autocommit": True, "prepare_threshold": prepare, "row_factory": dict_row,
            "options": f"-c lock_timeout={max(1, int(busy_timeout * 1000))} -c application_name=draughts-bot "
                       + options.get("options", "")}
        self._pool: Any = None
        self._conninfo = conninfo

        def new_pool() -> Any:
            return ConnectionPool(conninfo, min_size=low, max_size=high, kwargs=self._kwargs, open=False,
                                  timeout=busy_timeout, name="draughts-storage")
        self._new_pool = new_pool
        try:
            self._migrate(conninfo)
            self._pool = new_pool()
            self._pool.open(wait=True, timeout=max(busy_timeout, 5.0))
        except StorageError:
            self.close()
            raise
        except self._pg.Error as err:
            self.close()
            raise self._mapped(err) or StorageError(f"database {self.name}: {_line(err)}") from None
        except Exception as err:          # the pool's PoolTimeout: no connection in time
            self.close()
            raise StorageError(f"database {self.name} cannot be reached: {_line(err)}") from None

    # -- plumbing ------------------------------------------------------------------------------

    def _migrate(self, conninfo: str) -> None:
        """Apply the migrations this database has not had, in one transaction, under an advisory
        lock (of two processes opening a fresh database at once, one migrates, the other then finds
        it migrated).  READ COMMITTED: what the lock holder committed is seen once the lock is ours."""
        try:
            conn = self._pg.connect(conninfo, connect_timeout=max(2, int(self.busy_timeout) + 1), **self._kwargs)
        except self._pg.Error as err:
            raise StorageError(f"database {self.name} cannot be reached: {_line(err)}") from None
        known = migrations("postgresql")
        # Explicitly, whatever the server's default: a serializable snapshot would be taken before
        # the lock is ours and miss what the other process migrated meanwhile.
        conn.isolation_level = self._pg.IsolationLevel.READ_COMMITTED
        try:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATE_KEY,))
                conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version bigint PRIMARY KEY, "
                             "name text NOT NULL, applied_at double precision NOT NULL)")
                row = conn.execute("SELECT coalesce(max(version), 0) AS v FROM schema_version").fetchone()
                version = int(row["v"])
                if version > len(known):
                    raise StorageError(
                        f"database {self.name} has schema version {version}, but this bot knows only up to "
                        f"version {len(known)}: it was written by a newer bot; run that version or use "
                        "another database")
                for migration in known[version:]:
                    for statement in migration.statements:
                        conn.execute(statement, prepare=False)
                    conn.execute("INSERT INTO schema_version (version, name, applied_at) VALUES (%s, %s, %s)",
                                 (migration.number, migration.name, time.time()))
                # A write on every start: a database the bot may not write to shows up now.
                conn.execute("INSERT INTO meta (key, value) VALUES ('opened_at', %s) ON CONFLICT (key) "
                             "DO UPDATE SET value=excluded.value", (repr(time.time()),))
                # The key that signs links handed to one user (made once per database).
                conn.execute("INSERT INTO meta (key, value) VALUES ('link_secret', %s) ON CONFLICT (key) DO NOTHING",
                             (secrets.token_hex(32),))
        except self._pg.Error as err:
            if getattr(err, "sqlstate", None) == _LOCK_TIMEOUT:
                raise StorageBusy(f"database {self.name} is locked by another process (waited "
                                  f"{self.busy_timeout:g} s); stop the other process or try again") from None
            raise self._mapped(err) or StorageError(f"database {self.name}: {_line(err)}") from None
        finally:
            conn.close()

    @property
    def schema_version(self) -> int:
        """The number of the last migration this database has had."""
        rows = self._all("SELECT coalesce(max(version), 0) AS v FROM schema_version")
        return int(rows[0]["v"])

    def _mapped(self, err: Exception) -> StorageError | None:
        """The storage error for a database error, or None for one that is a bug of ours."""
        state = getattr(err, "sqlstate", None)
        if state in _CONTENTION:
            return StorageContention(f"database {self.name}: {_line(err)}")
        if state == _LOCK_TIMEOUT:
            return StorageBusy(f"database {self.name} stayed locked for {self.busy_timeout:g} s")
        if state == _DISK_FULL:
            return self._disk_full()
        if state == _ABORTED:
            # A statement after an error the caller caught inside its unit (PostgreSQL undoes the
            # whole transaction at an error): the unit is lost, as after a lost race.
            return StorageContention(f"database {self.name}: the transaction was undone by an earlier error")
        if (state or "").startswith(("08", "57P")) or state == _TOO_MANY_CONNECTIONS or (
                state is None and isinstance(err, self._pg.OperationalError)
                and not isinstance(err, self._pg.errors.PipelineAborted)):
            # The connection was lost or refused (no SQLSTATE: the socket closed under us).
            return self._went_away(_line(err))
        if isinstance(err, self._pg.OperationalError):
            return StorageError(f"database {self.name}: {_line(err)}")
        return None

    # -- a server that went away ---------------------------------------------------------------

    def _went_away(self, reason: str) -> StorageUnavailable:
        """The server stopped answering: every use says so at once until a plain connection works
        again (``_reconnect``).  The pool is closed now: its reconnection attempts would back off to
        minutes (and log every one of them); its connections are dead anyway."""
        with self._state:
            if self._down is None:
                self._down = time.monotonic()
                self._probe_at = self._down       # the next use looks at once: a restart may be over
                self._down_reason = reason
                pool = self._pool
                if pool is not None:
                    threading.Thread(target=_close_pool, args=(pool,), name="draughts-storage-close",
                                     daemon=True).start()
        return StorageUnavailable(f"database {self.name} cannot be reached: {reason}")

    def _reconnect(self) -> Any:
        """The pool to use once the server answers again (a new one); StorageUnavailable at once
        while it does not, trying one plain connection at most every PROBE_SECONDS."""
        if time.monotonic() < self._probe_at or not self._recovering.acquire(timeout=PROBE_WAIT_SECONDS):
            raise StorageUnavailable(f"database {self.name} cannot be reached: {self._down_reason}")
        try:
            down = self._down
            if down is None:
                return self._pool               # another thread brought it back meanwhile
            now = time.monotonic()
            if now < self._probe_at:            # another thread looked a moment ago, in vain
                raise StorageUnavailable(f"database {self.name} cannot be reached: {self._down_reason}")
            self._probe_at = now + PROBE_SECONDS
            pool = None
            try:
                self._pg.connect(self._conninfo, connect_timeout=PROBE_CONNECT_TIMEOUT, **self._kwargs).close()
                pool = self._new_pool()
                pool.open(wait=True, timeout=float(PROBE_CONNECT_TIMEOUT))
            except Exception as err:            # psycopg's errors, the pool's PoolTimeout
                if pool is not None:
                    _close_pool(pool)
                self._down_reason = _line(err)
                if self._down_logged is None or now - self._down_logged >= DOWN_LOG_SECONDS:
                    log.error("database %s cannot be reached (for %.0f s so far: %s); commands that need it are "
                              "answered that the storage is unavailable", self.name, now - down,
                              self._down_reason)
                    self._down_logged = now
                raise StorageUnavailable(f"database {self.name} cannot be reached: {self._down_reason}") from None
            with self._state:
                if self._pool is None:          # the store was closed meanwhile (the bot is stopping)
                    _close_pool(pool)
                    raise StorageError(f"database {self.name} is not open")
                self._pool = pool
                if self._down_logged is not None:
                    log.warning("database %s answers again after %.1f s", self.name, time.monotonic() - down)
                self._down, self._down_logged = None, None
            return pool
        finally:
            self._recovering.release()

    def _stale(self, conn: Any) -> bool:
        """Whether the server closed this idle connection (it restarted, or stopped): an idle
        connection has nothing to read unless the server said goodbye or hung up."""
        if conn.closed or conn.broken:
            return True
        try:
            readable, _, _ = select.select([conn.fileno()], [], [], 0)
        except (OSError, ValueError):
            return True
        if not readable:
            return False
        try:
            conn.execute("", prepare=False)      # reads what came: a notice is harmless, a goodbye is not
        except self._pg.Error:
            return True
        return False

    def _disk_full(self) -> StorageFull:
        self._full = True
        now = time.monotonic()
        if self._full_logged is None or now - self._full_logged >= FULL_LOG_SECONDS:
            self._full_logged = now
            log.error("database %s: the disk is full; commands that write are refused until there is room",
                      self.name)
        return StorageFull(f"database {self.name}: the disk is full")

    def _getconn(self, wait: float | None = None) -> Any:
        pool = self._pool
        if pool is None:
            raise StorageError(f"database {self.name} is not open")
        if self._down is not None:
            pool = self._reconnect()
        limit = self.busy_timeout if wait is None else wait
        try:
            conn = pool.getconn(timeout=limit)
        except self._pg.Error as err:
            raise self._mapped(err) or StorageError(f"database {self.name}: {_line(err)}") from None
        except Exception as err:
            if type(err).__name__ == "PoolClosed" and self._pool is not None:
                # Closed by another thread that met the outage a moment ago.
                raise StorageUnavailable(f"database {self.name} cannot be reached") from None
            if type(err).__name__ == "PoolTimeout":
                if self._probe_fails():
                    raise self._went_away("no connection could be made") from None
                raise StorageBusy(f"database {self.name}: no free connection for {limit:g} s") from None
            raise
        self._lent[id(conn)] = pool
        if self._stale(conn):
            # Its pool holds only such connections (the server restarted or stopped since they were
            # used): a new pool if the server answers, else the outage.
            failure = self._went_away("the server closed the connection")
            self._putconn(conn)
            try:
                pool = self._reconnect()
            except StorageUnavailable:
                raise failure from None
            conn = pool.getconn(timeout=limit)
            self._lent[id(conn)] = pool
        return conn

    def _probe_fails(self) -> bool:
        """Whether a plain connection to the server fails (the pool had none to give in time)."""
        try:
            self._pg.connect(self._conninfo, connect_timeout=PROBE_CONNECT_TIMEOUT, **self._kwargs).close()
        except self._pg.Error:
            return True
        return False

    def _exec(self, conn: Any, sql: str, params: Sequence[Any] = (), prepare: bool | None = None) -> Any:
        """Run one statement, its errors as storage errors; the cursor."""
        local = self._local
        try:
            if local.opening and conn is local.conn:
                # The unit's first statement: BEGIN goes in the same round trip (a pipeline).
                opening, local.opening = local.opening, ()
                with conn.pipeline():
                    for statement in opening:
                        conn.execute(statement, prepare=False)
                    cursor = conn.execute(sql, params, prepare=prepare)
                return cursor
            return conn.execute(sql, params, prepare=prepare)
        except self._pg.Error as err:
            mapped = self._mapped(err)
            if mapped is None:
                raise
            raise mapped from err

    def in_transaction(self) -> bool:
        return self._local.conn is not None

    @contextmanager
    def transaction(self, wait: float | None = None, isolation: str = "SERIALIZABLE") -> Iterator[None]:
        """One SERIALIZABLE transaction on a connection bound to this thread (nested calls join the
        outer one).  ``wait``: a shorter lock timeout for this unit (seconds)."""
        local = self._local
        if local.conn is not None:
            local.depth += 1
            try:
                yield
            finally:
                local.depth -= 1
            return
        conn = self._getconn(wait)
        opening = [f"BEGIN ISOLATION LEVEL {isolation}"]
        if wait is not None and wait < self.busy_timeout:
            opening.append(f"SET LOCAL lock_timeout = {max(1, int(wait * 1000))}")
        # Sent with the unit's first statement (one round trip less); a unit that ran none sends nothing.
        local.conn, local.depth, local.opening = conn, 1, tuple(opening)
        try:
            yield
            if not local.opening:
                self._exec(conn, "COMMIT", prepare=False)
            if self._full:
                self._full = False
                log.warning("database %s: writes work again (there is room on the disk)", self.name)
        except BaseException:
            self._rollback(conn)
            raise
        finally:
            local.conn, local.depth, local.opening = None, 0, ()
            self._putconn(conn)

    def _rollback(self, conn: Any) -> None:
        if conn.closed or conn.info.transaction_status == self._pg.pq.TransactionStatus.IDLE:
            return
        try:
            conn.execute("ROLLBACK", prepare=False)
        except self._pg.Error:
            pass            # a broken connection: the pool drops it

    def _putconn(self, conn: Any) -> None:
        # To the pool it came from: one closed since (after an outage, or the store's close) closes it.
        pool = self._lent.pop(id(conn), None) or self._pool
        if self._down is not None:
            # Its pool is being closed (the server went away): closed here, quietly (the pool would
            # log every dead connection and try to replace it).
            with contextlib.suppress(Exception):
                conn.close()
            return
        if pool is not None:
            pool.putconn(conn)

    @contextmanager
    def _conn(self) -> Iterator[Any]:
        """This thread's transaction connection, or a pooled one in autocommit for one statement."""
        bound = self._local.conn
        if bound is not None:
            yield bound
            return
        conn = self._getconn()
        try:
            yield conn
        finally:
            self._putconn(conn)

    def _all(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        with self._conn() as conn:
            return list(self._exec(conn, sql, params).fetchall())

    def _one(self, sql: str, params: Sequence[Any] = ()) -> dict[str, Any] | None:
        rows = self._all(sql, params)
        return rows[0] if rows else None

    def _write(self, sql: str, params: Sequence[Any] = ()) -> int:
        """One statement that writes (its own unit outside a transaction); the rows it changed."""
        with self._conn() as conn:
            return int(self._exec(conn, sql, params).rowcount)

    def _records(self, cls: type, where: str, params: Sequence[Any] = ()) -> list[Any]:
        rows = self._all(f"SELECT {_COLUMNS[cls]} FROM {_TABLES[cls]} WHERE {where}", params)
        return [_decode(cls, row) for row in rows]

    def _record(self, cls: type, where: str, params: Sequence[Any] = ()) -> Any:
        rows = self._records(cls, f"{where} LIMIT 1" if "LIMIT" not in where else where, params)
        return rows[0] if rows else None

    def dump(self) -> dict[str, list[tuple]]:
        from psycopg.rows import tuple_row

        out: dict[str, list[tuple]] = {}
        with self._conn() as conn:
            columns: dict[str, list[str]] = {}
            for row in self._exec(conn, "SELECT table_name, column_name FROM information_schema.columns WHERE "
                                  "table_schema = current_schema() ORDER BY table_name, ordinal_position"):
                if HELPER_COLUMNS.get(row["table_name"]) != row["column_name"]:
                    columns.setdefault(row["table_name"], []).append(row["column_name"])
            for table in sorted(columns):
                names = columns[table]
                if table == "schema_version":
                    # Which migrations ran is state; when they ran is not.
                    names = [n for n in names if n != "applied_at"]
                cur = conn.cursor(row_factory=tuple_row)
                try:
                    quoted = ", ".join(f'"{name}"' for name in names)
                    cur.execute(f'SELECT {quoted} FROM "{table}"')
                    rows = cur.fetchall()
                except self._pg.Error as err:
                    raise self._mapped(err) or err from None
                if table == "meta":
                    # When the database was last opened, and its secret, are not state; values as SQLite's.
                    rows = [(key, _meta_value(key, value)) for key, value in rows
                            if key not in ("opened_at", "link_secret")]
                out[table] = sorted(rows, key=repr)
        return out

    def close(self) -> None:
        with self._state:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()

    def reset_sequences(self) -> None:
        """Set every identity column to continue above the largest id in its table (after a copy
        inserted rows with explicit ids)."""
        with self.transaction():
            for table, column in IDENTITY_COLUMNS:
                self._all(f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), "
                          f"coalesce((SELECT max({column}) FROM {table}), 0) + 1, false)")

    def verify(self) -> None:
        """A cheap check that the server answers (PostgreSQL checks its own pages)."""
        self._all("SELECT 1 AS ok")

    # -- the #N counter ----------------------------------------------------------------------

    # One atomic UPDATE ... RETURNING: two writers never get the same number (the second waits for
    # the row and sees the first one's value); never at or below an id in use.
    _NEXT_NUMBER = ("UPDATE meta SET value = (greatest(value::bigint, coalesce((SELECT max(id) FROM challenges), 0), "
                    "coalesce((SELECT max(id) FROM games), 0)) + 1)::text WHERE key='last_number' "
                    "RETURNING value::bigint AS id")

    def _next_number(self) -> int:
        row = self._one(self._NEXT_NUMBER)
        if row is None:
            raise StorageError(f"database {self.name} has no number counter")
        return int(row["id"])

    # -- players and chats ---------------------------------------------------------------------

    def save_player(self, platform: str, user_id: str, name: str, username: str | None,
                    language: str | None, now: float) -> bool:
        known = self.player(platform, user_id)
        if known and (known.name, known.username, known.language) == (name, username, language):
            return False
        sql = ("INSERT INTO players (platform, user_id, name, username, language, updated_at) "
               "VALUES (%s,%s,%s,%s,%s,%s) "
               "ON CONFLICT (platform, user_id) DO UPDATE SET name=excluded.name, username=excluded.username, "
               "language=excluded.language, updated_at=excluded.updated_at")
        params = (platform, user_id, name, username, language, now)
        if self.in_transaction():
            self._write(sql, params)
            return True

        def unit() -> None:
            # A name refresh never makes a command wait: under a held lock it waits for the next message.
            with self.transaction(wait=min(self.busy_timeout, PLAYER_WAIT)):
                self._write(sql, params)
        retry_contention(unit, self.retry_policy)
        return True

    def player(self, platform: str, user_id: str) -> PlayerRecord | None:
        return self._record(PlayerRecord, "platform=%s AND user_id=%s", (platform, user_id))

    def player_by_username(self, platform: str, username: str) -> PlayerRecord | None:
        return self._record(PlayerRecord, "platform=%s AND lower(username)=lower(%s) ORDER BY updated_at DESC "
                            "LIMIT 1", (platform, username))

    def notify_setting(self, platform: str, user_id: str) -> NotifyRecord | None:
        return self._record(NotifyRecord, "platform=%s AND user_id=%s", (platform, user_id))

    @_unit
    def set_notify(self, platform: str, user_id: str, private: bool, now: float) -> None:
        self._write("INSERT INTO notify_settings (platform, user_id, private, unreachable, updated_at) "
                    "VALUES (%s, %s, %s, 0, %s) ON CONFLICT (platform, user_id) DO UPDATE SET "
                    "private=excluded.private, unreachable=0, updated_at=excluded.updated_at",
                    (platform, user_id, int(private), now))

    @_unit
    def set_unreachable(self, platform: str, user_id: str, unreachable: bool, now: float) -> bool:
        return self._write("UPDATE notify_settings SET unreachable=%s, updated_at=%s "
                           "WHERE platform=%s AND user_id=%s AND unreachable<>%s",
                           (int(unreachable), now, platform, user_id, int(unreachable))) > 0

    def chat(self, platform: str, chat_id: str) -> ChatRecord | None:
        return self._record(ChatRecord, "platform=%s AND chat_id=%s", (platform, chat_id))

    @_unit
    def ensure_chat(self, platform: str, chat_id: str, kind: str, now: float) -> ChatRecord:
        known = self.chat(platform, chat_id)
        if known is not None:
            return known
        made = self._all(f"INSERT INTO chats (platform, chat_id, kind, created_at) VALUES (%s,%s,%s,%s) "
                         f"ON CONFLICT (platform, chat_id) DO NOTHING RETURNING {_COLUMNS[ChatRecord]}",
                         (platform, chat_id, kind, now))
        if made:
            return _decode(ChatRecord, made[0])
        # Another process made it meanwhile (committed: this statement saw it).
        found = self.chat(platform, chat_id)
        if found is None:
            raise StorageContention(f"chat {chat_id} was being created by another transaction")
        return found

    @_unit
    def set_chat(self, platform: str, chat_id: str, **fields: Any) -> None:
        check_fields("chat setting", fields, CHAT_SETTINGS)
        if not fields:
            return
        names = ", ".join(f"{name}=%s" for name in fields)
        self._write(f"UPDATE chats SET {names} WHERE platform=%s AND chat_id=%s", (*fields.values(), platform, chat_id))

    @_unit
    def move_chat(self, platform: str, old_chat_id: str, new_chat_id: str) -> None:
        keys = {"chats": (), "messages": ("message_id",), "post_messages": ("message_id",), "subscriptions": ()}
        with self.transaction():
            # The new chat may already have a row (someone typed there first): it keeps its own
            # settings, and the old row goes (SQLite's UPDATE OR IGNORE, then DELETE).
            for table, extra in keys.items():
                same = "".join(f" AND n.{key}=o.{key}" for key in extra)
                self._write(f"UPDATE {table} o SET chat_id=%s WHERE o.platform=%s AND o.chat_id=%s AND NOT EXISTS "
                            f"(SELECT 1 FROM {table} n WHERE n.platform=o.platform AND n.chat_id=%s{same})",
                            (new_chat_id, platform, old_chat_id, new_chat_id))
                self._write(f"DELETE FROM {table} WHERE platform=%s AND chat_id=%s", (platform, old_chat_id))
            # Messages still to be sent follow the chat too (the old id no longer takes any).
            for table in ("challenges", "games", "outbox"):
                self._write(f"UPDATE {table} SET chat_id=%s WHERE platform=%s AND chat_id=%s",
                            (new_chat_id, platform, old_chat_id))
            # The games' counts follow them, added to any the new id has already.
            if new_chat_id != old_chat_id:
                self._write(_count_merge("%s"), (new_chat_id, platform, old_chat_id))
                self._write("DELETE FROM game_counts WHERE platform=%s AND chat_id=%s", (platform, old_chat_id))
            # A day the new id already has a post for keeps that one.
            self._write("UPDATE puzzle_posts o SET chat_id=%s WHERE o.platform=%s AND o.chat_id=%s AND NOT "
                        "(o.kind='daily' AND EXISTS (SELECT 1 FROM puzzle_posts n WHERE n.platform=o.platform "
                        "AND n.chat_id=%s AND n.kind='daily' AND n.day=o.day))",
                        (new_chat_id, platform, old_chat_id, new_chat_id))

    # -- challenges ------------------------------------------------------------------------------

    @_unit
    def create_challenge(self, **fields: Any) -> int:
        check_fields("challenge", fields, NEW_CHALLENGE_FIELDS, NEW_CHALLENGE_OPTIONAL)
        names = list(fields)
        row = self._one(f"WITH n AS ({self._NEXT_NUMBER}) INSERT INTO challenges (id, status, {', '.join(names)}) "
                        f"VALUES ((SELECT id FROM n), 'open', {', '.join(['%s'] * len(names))}) RETURNING id",
                        tuple(fields.values()))
        if row is None:
            raise StorageError(f"database {self.name} has no number counter")
        return int(row["id"])

    def challenge(self, challenge_id: int) -> ChallengeRecord | None:
        return self._record(ChallengeRecord, "id=%s", (challenge_id,))

    def open_challenges(self, platform: str, chat_id: str) -> list[ChallengeRecord]:
        return self._records(ChallengeRecord, "platform=%s AND chat_id=%s AND status='open' ORDER BY id",
                             (platform, chat_id))

    def find_challenges(self, platform: str | None = None, chat_id: str | None = None,
                        status: str | None = None) -> list[ChallengeRecord]:
        where, params = _filters(platform=platform, chat_id=chat_id, status=status)
        return self._records(ChallengeRecord, f"{where} ORDER BY id", params)

    def lapsed_challenges(self, platform: str | None, now: float, lifetime: float) -> list[ChallengeRecord]:
        where, params = _filters(platform=platform)
        return self._records(ChallengeRecord, f"{where} AND status='open' AND created_at + "
                             "greatest(%s::double precision, move_seconds) <= %s ORDER BY id",
                             (*params, lifetime, now))

    def next_challenge_lapse(self, platform: str | None, lifetime: float) -> float | None:
        where, params = _filters(platform=platform)
        row = self._one(f"SELECT min(created_at + greatest(%s::double precision, move_seconds)) AS t FROM challenges "
                        f"WHERE {where} AND status='open'", (lifetime, *params))
        return row["t"] if row else None

    @_unit
    def remember_challenge_message(self, platform: str, chat_id: str, message_id: str, challenge_id: int) -> None:
        # Replaced rows go to the end (SQLite's INSERT OR REPLACE gives them a new rowid).
        self._write("INSERT INTO challenge_messages (platform, chat_id, message_id, challenge_id) VALUES (%s,%s,%s,%s) "
                    "ON CONFLICT (platform, chat_id, message_id) DO UPDATE SET challenge_id=excluded.challenge_id, "
                    "seq=DEFAULT", (platform, chat_id, message_id, challenge_id))

    def challenge_messages(self, challenge_id: int) -> list[tuple[str, str, str]]:
        rows = self._all("SELECT platform, chat_id, message_id FROM challenge_messages WHERE challenge_id=%s "
                         "ORDER BY seq", (challenge_id,))
        return [(r["platform"], r["chat_id"], r["message_id"]) for r in rows]

    @_unit
    def close_challenge(self, challenge_id: int, status: str) -> bool:
        if status not in _CLOSED:
            raise ValueError(f"a challenge cannot be closed as {status!r}")
        return self._write("UPDATE challenges SET status=%s WHERE id=%s AND status='open'", (status, challenge_id)) == 1

    @_unit
    def accept_challenge(self, challenge_id: int, game: dict[str, Any]) -> int | None:
        check_fields("game", game, NEW_GAME_FIELDS, NEW_GAME_OPTIONAL)
        with self.transaction():
            # The claim: one conditional write, which of two accepting at once only one makes.
            row = self._one("UPDATE challenges c SET status='accepted' WHERE id=%s AND status='open' RETURNING "
                            "EXISTS (SELECT 1 FROM games g WHERE g.id=c.id) AS taken", (challenge_id,))
            if row is None:
                return None
            # A challenge from before the shared numbering whose number an old game has.
            game_id = self._next_number() if row["taken"] else challenge_id
            self._insert_game(game_id, game)
            self._write("UPDATE challenges SET game_id=%s WHERE id=%s", (game_id, challenge_id))
            return game_id

    @_unit
    def create_game(self, game: dict[str, Any]) -> int:
        check_fields("game", game, NEW_GAME_FIELDS, NEW_GAME_OPTIONAL)
        values = self._game_values(game)
        row = self._one(f"WITH n AS ({self._NEXT_NUMBER}) INSERT INTO games (id, {', '.join(values)}) "
                        f"VALUES ((SELECT id FROM n), {', '.join(['%s'] * len(values))}) RETURNING id",
                        tuple(values.values()))
        if row is None:
            raise StorageError(f"database {self.name} has no number counter")
        return int(row["id"])

    @staticmethod
    def _game_values(game: dict[str, Any]) -> dict[str, Any]:
        return dict(_encode_game(game), version=0, ply=0, quiet_plies=0, status="active", reminded=0)

    def _insert_game(self, game_id: int, game: dict[str, Any]) -> None:
        values = dict(self._game_values(game), id=game_id)
        self._write(f"INSERT INTO games ({', '.join(values)}) VALUES ({', '.join(['%s'] * len(values))})",
                    tuple(values.values()))

    # -- games --------------------------------------------------------------------------------

    def game(self, game_id: int) -> GameRecord | None:
        return self._record(GameRecord, "id=%s", (game_id,))

    def active_games(self, platform: str, chat_id: str) -> list[GameRecord]:
        return self._records(GameRecord, "platform=%s AND chat_id=%s AND status='active' ORDER BY id",
                             (platform, chat_id))

    def recent_games(self, platform: str, chat_id: str, user_id: str, limit: int = 1) -> list[GameRecord]:
        return self._records(GameRecord, "platform=%s AND chat_id=%s AND (white_id=%s OR black_id=%s) "
                             "ORDER BY id DESC LIMIT %s", (platform, chat_id, user_id, user_id, limit))

    def last_game(self, platform: str, chat_id: str) -> GameRecord | None:
        return self._record(GameRecord, "platform=%s AND chat_id=%s ORDER BY id DESC LIMIT 1", (platform, chat_id))

    def find_games(self, platform: str | None = None, chat_id: str | None = None, status: str | None = None,
                   limit: int | None = None, user_id: str | None = None) -> list[GameRecord]:
        where, params = _filters(platform=platform, chat_id=chat_id, status=status)
        if user_id is not None:
            where, params = f"{where} AND (white_id=%s OR black_id=%s)", (*params, user_id, user_id)
        return self._records(GameRecord, f"{where} ORDER BY id DESC LIMIT %s", (*params, limit))

    def count_finished_games(self, platform: str, chat_id: str | None = None, user_id: str | None = None,
                             opponent_id: str | None = None) -> list[GameCountRecord]:
        sql, params = _count_games_query("%s", platform, chat_id, user_id, opponent_id)
        return [_decode_count(row) for row in self._all(sql, params)]

    def bot_games(self, platform: str | None = None) -> list[GameRecord]:
        where, params = _filters(platform=platform)
        return self._records(GameRecord, f"status='active' AND bot_level IS NOT NULL AND {where} ORDER BY id", params)

    def recent_fens(self, game_id: int, count: int) -> list[str]:
        rows = self._all("SELECT fen_after FROM moves WHERE game_id=%s ORDER BY ply DESC LIMIT %s", (game_id, count))
        return [r["fen_after"] for r in reversed(rows)]

    def moves(self, game_id: int) -> list[MoveRecord]:
        return self._records(MoveRecord, "game_id=%s ORDER BY ply", (game_id,))

    @_unit
    def update_game(self, game_id: int, version: int, fields: dict[str, Any],
                    move: dict[str, Any] | None = None) -> GameRecord:
        check_fields("game update", fields, GAME_UPDATE_FIELDS)
        if move is not None:
            check_fields("move", move, MOVE_FIELDS, ())
        counted = not _COUNTED_FIELDS.isdisjoint(fields)
        if counted and not self.in_transaction():
            # The change and the count it may move commit together.
            with self.transaction():
                return self.update_game(game_id, version, fields, move)
        values = dict(_encode_game(fields), version=version + 1)
        # The changed row comes back with the change: the caller reads no game after it.
        update = (f"UPDATE games SET {', '.join(f'{k}=%s' for k in values)} WHERE id=%s AND version=%s "
                  f"RETURNING {_COLUMNS[GameRecord]}")
        params: tuple[Any, ...] = (*values.values(), game_id, version)
        extra: tuple[Any, ...] = ()
        if move is not None or counted:
            # The change, its move and what the row was (for its count: every part of one
            # statement reads the same snapshot) in one statement: one round trip, all or nothing.
            parts: list[str] = [f"g AS ({update})"]
            old_columns = ""
            if move is not None:
                names = list(move)
                parts.append(f"m AS (INSERT INTO moves (game_id, {', '.join(names)}) "
                             f"SELECT g.id, {', '.join(['%s'] * len(names))} FROM g RETURNING game_id)")
                params = (*params, *move.values())
            if counted:
                parts.insert(0, f"b AS (SELECT {_COUNTED_COLUMNS} FROM games WHERE id=%s)")
                old_columns = ", " + ", ".join(f"b.{name} AS before_{name}" for name in _COUNTED_FIELDS)
                extra = (game_id,)
            update = f"WITH {', '.join(parts)} SELECT g.*{old_columns} FROM g{', b' if counted else ''}"
            params = (*extra, *params)
        try:
            rows = self._all(update, params)
        except StorageContention:
            # Serializable: the row changed after this unit's snapshot.  A move that lost to
            # another move is a StaleGame (told to the user); any other change (a reminder noted)
            # is a race the unit wins when run again.
            if self._current_version(game_id) != version:
                raise StaleGame(game_id) from None
            raise
        if len(rows) != 1:
            raise StaleGame(game_id)
        # Told to every listener (web board streams in any process) when the change commits.
        self._write("SELECT pg_notify(%s, %s)", (GAME_CHANNEL, str(game_id)))
        row = dict(rows[0])
        before = {name: row.pop(f"before_{name}") for name in _COUNTED_FIELDS} if counted else None
        changed: GameRecord = _decode(GameRecord, row)
        if before is not None:
            old, new = _count_key(before), _count_key(_counted(changed))
            if old != new:
                # A game counts once, under what it is now (a result is written once: one more
                # statement at the end of a game, none for a move).
                if old is not None:
                    self._write(_count_upsert("%s"), (*old, -1))
                    self._write(_count_prune("%s"), old)
                if new is not None:
                    self._write(_count_upsert("%s"), (*new, 1))
        return changed

    def _current_version(self, game_id: int) -> int | None:
        """The game's committed version, read apart from this thread's transaction."""
        conn = self._getconn()
        try:
            row = self._exec(conn, "SELECT version FROM games WHERE id=%s", (game_id,)).fetchone()
        finally:
            self._putconn(conn)
        return None if row is None else int(row["version"])

    @_unit
    def mark_reminded(self, game_id: int, version: int) -> bool:
        return self._write("UPDATE games SET reminded=1 WHERE id=%s AND version=%s AND reminded=0",
                           (game_id, version)) == 1

    def due_games(self, now: float, platform: str | None = None) -> list[GameRecord]:
        where = "AND platform=%s" if platform is not None else ""
        params = (now, now, platform) if platform is not None else (now, now)
        return self._records(
            GameRecord, "status='active' AND deadline_at IS NOT NULL AND (deadline_at <= %s OR (reminded=0 AND "
            f"deadline_at - move_seconds::double precision / 10 <= %s)) {where} ORDER BY deadline_at, id", params)

    # -- analyses and board messages ---------------------------------------------------------------

    @_unit
    def save_analysis(self, game_id: int, ply: int, notes: Sequence[dict[str, Any]], at: float) -> None:
        self._write("INSERT INTO analyses (game_id, ply, notes, created_at) VALUES (%s,%s,%s,%s) ON CONFLICT "
                    "(game_id, ply) DO UPDATE SET notes=excluded.notes, created_at=excluded.created_at",
                    (game_id, ply, json.dumps(list(notes), separators=(",", ":")), at))

    def analysis(self, game_id: int, ply: int) -> AnalysisRecord | None:
        row = self._one("SELECT game_id, ply, notes, created_at FROM analyses WHERE game_id=%s AND ply=%s",
                        (game_id, ply))
        if row is None:
            return None
        return AnalysisRecord(row["game_id"], row["ply"], tuple(json.loads(row["notes"])), row["created_at"])

    @_unit
    def remember_message(self, platform: str, chat_id: str, message_id: str, game_id: int) -> None:
        # An upsert keeps a known message's place (its seq), as sqlite-utils' upsert keeps its rowid.
        self._write("INSERT INTO messages (platform, chat_id, message_id, game_id) VALUES (%s,%s,%s,%s) "
                    "ON CONFLICT (platform, chat_id, message_id) DO UPDATE SET game_id=excluded.game_id",
                    (platform, chat_id, message_id, game_id))

    def game_of_message(self, platform: str, chat_id: str, message_id: str) -> int | None:
        row = self._one("SELECT game_id FROM messages WHERE platform=%s AND chat_id=%s AND message_id=%s",
                        (platform, chat_id, message_id))
        return row["game_id"] if row else None

    def board_messages(self, platform: str, chat_id: str) -> list[tuple[str, int]]:
        rows = self._all("SELECT message_id, game_id FROM messages WHERE platform=%s AND chat_id=%s ORDER BY seq",
                         (platform, chat_id))
        return [(r["message_id"], r["game_id"]) for r in rows]

    @_unit
    def remember_post_message(self, platform: str, chat_id: str, message_id: str, post_id: int) -> None:
        self._write("INSERT INTO post_messages (platform, chat_id, message_id, post_id) VALUES (%s,%s,%s,%s) "
                    "ON CONFLICT (platform, chat_id, message_id) DO UPDATE SET post_id=excluded.post_id",
                    (platform, chat_id, message_id, post_id))

    def post_of_message(self, platform: str, chat_id: str, message_id: str) -> int | None:
        row = self._one("SELECT post_id FROM post_messages WHERE platform=%s AND chat_id=%s AND message_id=%s",
                        (platform, chat_id, message_id))
        return row["post_id"] if row else None

    # -- send budget -------------------------------------------------------------------------------

    @_unit
    def reserve_sends(self, scopes: Sequence[tuple[str, float, float]], now: float, max_wait: float) -> float:
        ordered = sorted(scopes)            # rows locked in one order: two senders never deadlock
        keys = [key for key, _, _ in ordered]
        # READ COMMITTED with row locks: the upsert locks every scope's row (a new one is created
        # free) and reads it, so the rows read are the newest and stay ours until COMMIT.
        isolation = "SERIALIZABLE" if self.in_transaction() else "READ COMMITTED"
        with self.transaction(isolation=isolation):
            held = {row["key"]: float(row["tat"]) for row in self._all(
                "INSERT INTO send_budget (key, tat) SELECT k, '-Infinity' FROM unnest(%s::text[]) AS k "
                "ON CONFLICT (key) DO UPDATE SET tat=send_budget.tat RETURNING key, tat", (keys,))}
            start = max([now, *(held[key] - tolerance for key, _, tolerance in ordered)])
            if start - now <= max_wait:
                self._write("UPDATE send_budget b SET tat=GREATEST(b.tat, %s) + n.interval "
                            "FROM unnest(%s::text[], %s::float8[]) AS n(key, interval) WHERE b.key=n.key",
                            (start, keys, [interval for _, interval, _ in ordered]))
            return start

    @_unit
    def hold_sends(self, key: str, until: float) -> None:
        self._write("INSERT INTO send_budget (key, tat) VALUES (%s, %s) "
                    "ON CONFLICT (key) DO UPDATE SET tat=GREATEST(send_budget.tat, excluded.tat)", (key, until))

    @_unit
    def prune_sends(self, before: float) -> int:
        return self._write("DELETE FROM send_budget WHERE tat < %s", (before,))

    # -- heartbeat and downtime -------------------------------------------------------------------

    def _set_meta(self, key: str, value: str) -> None:
        self._write("INSERT INTO meta (key, value) VALUES (%s, %s) ON CONFLICT (key) "
                    "DO UPDATE SET value=excluded.value",
                    (key, value))

    @_unit
    def beat(self, platform: str | None, now: float) -> None:
        self._set_meta(_beat_key(platform), repr(float(now)))

    def last_beat(self, platform: str | None) -> float | None:
        row = self._one("SELECT value FROM meta WHERE key=%s", (_beat_key(platform),))
        return float(row["value"]) if row else None

    @_unit
    def resume_after_downtime(self, platform: str | None, now: float, threshold: float,
                              limit: float | None = None) -> float:
        key = _beat_key(platform)
        with self.transaction():
            row = self._one("SELECT value FROM meta WHERE key=%s", (key,))
            # Compare-and-set on the heartbeat read: of two processes starting at once, only the one
            # that renews the beat it read moves the clocks (the other finds it renewed: no gap, or
            # loses the race and, run again, finds it renewed).
            if row is None:
                changed = self._write("INSERT INTO meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO NOTHING",
                                      (key, repr(float(now))))
            else:
                changed = self._write("UPDATE meta SET value=%s WHERE key=%s AND value=%s",
                                      (repr(float(now)), key, row["value"]))
            if changed != 1:
                return 0.0
            gap = now - float(row["value"]) if row else 0.0
            if limit is not None:
                gap = min(gap, limit)
            if gap <= threshold:
                return 0.0
            where = " AND platform=%s" if platform is not None else ""
            self._write("UPDATE games SET deadline_at = deadline_at + %s "
                        f"WHERE status='active' AND deadline_at IS NOT NULL{where}",
                        (gap, platform) if platform is not None else (gap,))
            return gap

    def link_secret(self) -> bytes:
        row = self._one("SELECT value FROM meta WHERE key='link_secret'")
        if row is None:
            raise StorageError(f"database {self.name} has no link secret")
        return bytes.fromhex(str(row["value"]))

    # -- questions waiting for a confirmation ------------------------------------------------------

    @_unit
    def set_pending(self, key: str, value: Any) -> None:
        self._set_meta(f"pending:{key}", json.dumps(value))

    def pending(self, key: str) -> Any:
        row = self._one("SELECT value FROM meta WHERE key=%s", (f"pending:{key}",))
        return json.loads(row["value"]) if row else None

    @_unit
    def drop_pending(self, key: str) -> None:
        self._write("DELETE FROM meta WHERE key=%s", (f"pending:{key}",))

    # -- outbox ---------------------------------------------------------------------------------------

    @_unit
    def enqueue(self, platform: str, chat_id: str, payload: str, now: float) -> int:
        row = self._one("INSERT INTO outbox (platform, chat_id, payload, next_attempt_at, created_at) "
                        "VALUES (%s,%s,%s,%s,%s) RETURNING id", (platform, chat_id, payload, now, now))
        assert row is not None          # an INSERT ... RETURNING returns its row
        return int(row["id"])

    def due_messages(self, platform: str, now: float, limit: int = 50,
                     exclude: Sequence[str] = ()) -> list[OutboxRecord]:
        return self._records(OutboxRecord, "platform=%s AND status='pending' AND next_attempt_at<=%s "
                             "AND NOT (chat_id = ANY(%s)) ORDER BY id LIMIT %s", (platform, now, list(exclude), limit))

    @_unit
    def claim_messages(self, platform: str, owner: str, now: float, lease_until: float, limit: int = 50,
                       exclude: Sequence[str] = ()) -> list[OutboxRecord]:
        # The chats to claim in, each under an advisory lock held to the end of the transaction;
        # a chat another claimer is working on now is skipped (its lock is taken).  READ COMMITTED
        # on its own, so the claiming statement, which starts after the locks are ours, sees every
        # lease committed before: a chat stays with the process that holds any of its rows.
        due = ("o.platform=%s AND o.status='pending' AND o.next_attempt_at<=%s AND "
               "(o.claimed_by IS NULL OR o.claimed_by=%s OR o.lease_until<=%s) AND NOT (o.chat_id = ANY(%s)) "
               "AND NOT EXISTS (SELECT 1 FROM outbox h WHERE h.platform=o.platform AND h.chat_id=o.chat_id "
               "AND h.status='pending' AND h.claimed_by<>%s AND h.lease_until>%s)")
        due_params = (platform, now, owner, now, list(exclude), owner, now)
        isolation = "SERIALIZABLE" if self.in_transaction() else "READ COMMITTED"
        with self.transaction(isolation=isolation):
            chats = [row["chat_id"] for row in self._all(
                f"SELECT c.chat_id FROM (SELECT o.chat_id, min(o.id) AS first FROM outbox o WHERE {due} "
                "GROUP BY o.chat_id ORDER BY first LIMIT %s) c "
                "WHERE pg_try_advisory_xact_lock(%s::integer, hashtext(%s::text || ':' || c.chat_id)) "
                "ORDER BY c.first",
                (*due_params, limit, OUTBOX_CHAT_SPACE, platform))]
            if not chats:
                return []
            rows = self._all(
                f"UPDATE outbox SET claimed_by=%s, lease_until=%s WHERE id IN (SELECT o.id FROM outbox o WHERE {due} "
                "AND o.chat_id = ANY(%s) ORDER BY o.id LIMIT %s FOR UPDATE SKIP LOCKED) "
                f"RETURNING {_OUTBOX_RETURNING}", (owner, lease_until, *due_params, chats, limit))
        return sorted((_decode(OutboxRecord, row) for row in rows), key=lambda r: r.id)

    @_unit
    def hold_messages(self, message_ids: Collection[int], owner: str, lease_until: float) -> set[int]:
        ids = [int(i) for i in message_ids]
        if not ids:
            return set()
        rows = self._all("UPDATE outbox SET lease_until=%s WHERE id = ANY(%s) AND claimed_by=%s AND status='pending' "
                         "RETURNING id", (lease_until, ids, owner))
        return {int(row["id"]) for row in rows}

    @_unit
    def release_messages(self, owner: str) -> int:
        return self._write("UPDATE outbox SET claimed_by=NULL, lease_until=NULL WHERE claimed_by=%s AND "
                           "status='pending'", (owner,))

    def outbox_message(self, message_id: int) -> OutboxRecord | None:
        return self._record(OutboxRecord, "id=%s", (message_id,))

    def find_outbox(self, platform: str | None = None, status: str | None = None) -> list[OutboxRecord]:
        where, params = _filters(platform=platform, status=status)
        return self._records(OutboxRecord, f"{where} ORDER BY id", params)

    @staticmethod
    def _owned(owner: str | None) -> tuple[str, tuple[Any, ...]]:
        """The condition that a row is the caller's to change."""
        if owner is None:
            return "claimed_by IS NULL", ()
        return "claimed_by=%s", (owner,)

    @_unit
    def mark_sent(self, message_id: int, now: float, owner: str | None = None) -> bool:
        mine, params = self._owned(owner)
        return self._write("UPDATE outbox SET status='sent', sent_at=%s, claimed_by=NULL, lease_until=NULL "
                           f"WHERE id=%s AND status='pending' AND {mine}", (now, message_id, *params)) == 1

    @_unit
    def retry_later(self, message_id: int, at: float, error: str, owner: str | None = None) -> None:
        mine, params = self._owned(owner)
        self._write("UPDATE outbox SET attempts=attempts+1, next_attempt_at=%s, error=%s, claimed_by=NULL, "
                    f"lease_until=NULL WHERE id=%s AND status='pending' AND {mine}",
                    (at, redact(error)[:ERROR_CHARS], message_id, *params))

    @_unit
    def set_delivered(self, message_id: int, delivered: int, owner: str | None = None,
                      lease_until: float | None = None) -> None:
        mine, params = self._owned(owner)
        self._write("UPDATE outbox SET delivered=%s, lease_until=coalesce(%s, lease_until) "
                    f"WHERE id=%s AND status='pending' AND {mine}", (delivered, lease_until, message_id, *params))

    @_unit
    def drop_message(self, message_id: int, error: str, owner: str | None = None) -> None:
        mine, params = self._owned(owner)
        self._write("UPDATE outbox SET status='dropped', attempts=attempts+1, error=%s, claimed_by=NULL, "
                    f"lease_until=NULL WHERE id=%s AND status='pending' AND {mine}",
                    (redact(error)[:ERROR_CHARS], message_id, *params))

    @_unit
    def prune_outbox(self, before: float, limit: int = 500) -> int:
        return self._write("DELETE FROM outbox WHERE id IN (SELECT id FROM outbox WHERE status IN ('sent', 'dropped') "
                           "AND created_at<%s ORDER BY id LIMIT %s)", (before, limit))

    def outbox_platforms(self) -> list[str]:
        return [r["platform"] for r in self._all("SELECT DISTINCT platform FROM outbox WHERE status='pending' "
                                                 "ORDER BY platform")]

    def next_wakeup(self, platform: str | None) -> float | None:
        where = " AND platform=%s" if platform is not None else ""
        params = (platform, platform) if platform is not None else ()
        # A row another process holds is due again for us only when its lease runs out.
        row = self._one(
            "SELECT least((SELECT min(CASE WHEN claimed_by IS NOT NULL AND lease_until>next_attempt_at "
            f"THEN lease_until ELSE next_attempt_at END) FROM outbox WHERE status='pending'{where}), "
            "(SELECT min(CASE WHEN reminded=0 THEN deadline_at - move_seconds::double precision / 10 ELSE deadline_at "
            f"END) FROM games WHERE status='active' AND deadline_at IS NOT NULL{where})) AS t", params)
        return row["t"] if row else None

    # -- daily puzzles -------------------------------------------------------------------------------

    @_unit
    def subscribe(self, platform: str, chat_id: str, time: str, timezone: str, variant: str, now: float,
                  language: str | None = None) -> None:
        self._write(
            "INSERT INTO subscriptions (platform, chat_id, time, timezone, variant, language, active, created_at,"
            " updated_at) VALUES (%s,%s,%s,%s,%s,%s,1,%s,%s) ON CONFLICT (platform, chat_id) DO UPDATE SET"
            " time=excluded.time, timezone=excluded.timezone, variant=excluded.variant,"
            " language=excluded.language, active=1, updated_at=excluded.updated_at,"
            " created_at=CASE WHEN subscriptions.active=1 THEN subscriptions.created_at ELSE excluded.created_at END",
            (platform, chat_id, time, timezone, variant, language, now, now))

    @_unit
    def unsubscribe(self, platform: str, chat_id: str, now: float) -> bool:
        return self._write("UPDATE subscriptions SET active=0, updated_at=%s WHERE platform=%s AND chat_id=%s "
                           "AND active=1", (now, platform, chat_id)) == 1

    def subscription(self, platform: str, chat_id: str) -> SubscriptionRecord | None:
        return self._record(SubscriptionRecord, "platform=%s AND chat_id=%s", (platform, chat_id))

    def subscriptions(self, platform: str | None = None) -> list[SubscriptionRecord]:
        where, params = _filters(platform=platform)
        return self._records(SubscriptionRecord, f"active=1 AND {where} ORDER BY platform, chat_id", params)

    @_unit
    def claim_daily_post(self, platform: str, chat_id: str, day: str, variant: str, puzzle_id: str,
                         now: float) -> int | None:
        row = self._one("INSERT INTO puzzle_posts (platform, chat_id, kind, day, variant, puzzle_id, posted_at) "
                        "VALUES (%s,%s,'daily',%s,%s,%s,%s) ON CONFLICT (platform, chat_id, day) WHERE kind='daily' "
                        "DO NOTHING RETURNING id", (platform, chat_id, day, variant, puzzle_id, now))
        return int(row["id"]) if row else None

    @_unit
    def create_personal_post(self, platform: str, chat_id: str, user_id: str, variant: str, puzzle_id: str,
                             now: float) -> int:
        row = self._one("INSERT INTO puzzle_posts (platform, chat_id, kind, user_id, variant, puzzle_id, posted_at)"
                        " VALUES (%s,%s,'personal',%s,%s,%s,%s) RETURNING id",
                        (platform, chat_id, user_id, variant, puzzle_id, now))
        assert row is not None
        return int(row["id"])

    def puzzle_post(self, post_id: int) -> PuzzlePostRecord | None:
        return self._record(PuzzlePostRecord, "id=%s", (post_id,))

    def daily_posts(self, platform: str, chat_id: str, limit: int = 1) -> list[PuzzlePostRecord]:
        return self._records(PuzzlePostRecord, "platform=%s AND chat_id=%s AND kind='daily' ORDER BY day DESC, "
                             "id DESC LIMIT %s", (platform, chat_id, limit))

    def personal_posts(self, platform: str, user_id: str, limit: int = 1) -> list[PuzzlePostRecord]:
        return self._records(PuzzlePostRecord, "platform=%s AND user_id=%s AND kind='personal' ORDER BY id DESC "
                             "LIMIT %s", (platform, user_id, limit))

    @_unit
    def claim_first_solver(self, post_id: int, user_id: str, name: str) -> bool:
        return self._write("UPDATE puzzle_posts SET first_solver_id=%s, first_solver_name=%s "
                           "WHERE id=%s AND first_solver_id IS NULL", (user_id, name, post_id)) == 1

    def attempt(self, post_id: int, user_id: str) -> AttemptRecord | None:
        return self._record(AttemptRecord, "post_id=%s AND user_id=%s", (post_id, user_id))

    @_unit
    def save_attempt(self, attempt: AttemptRecord) -> None:
        values = {name: getattr(attempt, name) for name in field_names(AttemptRecord)}
        values["progress"] = json.dumps(list(attempt.progress))
        expected = values.pop("version")
        key = (attempt.post_id, attempt.user_id)
        names, marks = ", ".join(values), ", ".join(["%s"] * len(values))
        if expected is None:
            # No version known: stored as it is, whatever is there (a new row starts at 1).
            self._write(f"INSERT INTO attempts ({names}, version) VALUES ({marks}, 1) ON CONFLICT (post_id, user_id) "
                        "DO UPDATE SET " + ", ".join(f"{name}=excluded.{name}" for name in values)
                        + ", version=attempts.version+1", tuple(values.values()))
            return
        if expected == 0:
            changed = self._write(f"INSERT INTO attempts ({names}, version) VALUES ({marks}, 1) "
                                  "ON CONFLICT (post_id, user_id) DO NOTHING", tuple(values.values()))
        else:
            changed = self._write(f"UPDATE attempts SET {', '.join(f'{name}=%s' for name in values)}, "
                                  "version=version+1 WHERE post_id=%s AND user_id=%s AND version=%s",
                                  (*values.values(), *key, expected))
        if changed != 1:
            raise StorageContention(f"attempt {key} changed since it was read (version {expected})")

    def attempts(self, post_id: int) -> list[AttemptRecord]:
        return self._records(AttemptRecord, "post_id=%s ORDER BY started_at, user_id", (post_id,))

    def _post_attempts(self, where: str, params: Sequence[Any]) -> list[tuple[PuzzlePostRecord, AttemptRecord]]:
        rows = self._all(f"SELECT {_POST_COLUMNS}, {_ATTEMPT_COLUMNS} FROM attempts a JOIN puzzle_posts p "
                         f"ON p.id = a.post_id WHERE {where}", params)
        return [(_decode(PuzzlePostRecord, {name: row[f"p_{name}"] for name in field_names(PuzzlePostRecord)}),
                 _decode(AttemptRecord, {name: row[f"a_{name}"] for name in field_names(AttemptRecord)}))
                for row in rows]

    def chat_attempts(self, platform: str, chat_id: str) -> list[tuple[PuzzlePostRecord, AttemptRecord]]:
        return self._post_attempts("p.platform=%s AND p.chat_id=%s AND p.kind='daily' "
                                   "ORDER BY p.day, p.id, a.started_at, a.user_id", (platform, chat_id))

    def user_attempts(self, platform: str, user_id: str,
                      daily_only: bool = True) -> list[tuple[PuzzlePostRecord, AttemptRecord]]:
        kind = " AND p.kind='daily'" if daily_only else ""
        return self._post_attempts(f"p.platform=%s AND a.user_id=%s{kind} ORDER BY p.day, p.id", (platform, user_id))

    def rated_attempts(self) -> list[tuple[PuzzlePostRecord, AttemptRecord]]:
        return self._post_attempts("a.rated_at IS NOT NULL ORDER BY a.rated_at, a.post_id, a.user_id", ())

    # -- ratings ---------------------------------------------------------------------------------------

    def rating(self, platform: str, subject: str, pool: str) -> RatingRecord | None:
        return self._record(RatingRecord, "platform=%s AND subject=%s AND pool=%s", (platform, subject, pool))

    def rating_pool(self, platform: str, pool: str) -> list[RatingRecord]:
        return self._records(RatingRecord, "platform=%s AND pool=%s ORDER BY rating DESC, subject", (platform, pool))

    @_unit
    def save_rating(self, rating: RatingRecord, source: str) -> None:
        values = {name: getattr(rating, name) for name in field_names(RatingRecord)}
        # The rating and its history row in one statement.
        self._write(f"WITH r AS (INSERT INTO ratings ({', '.join(values)}) VALUES ({', '.join(['%s'] * len(values))}) "
                    "ON CONFLICT (platform, subject, pool) DO UPDATE SET "
                    + ", ".join(f"{name}=excluded.{name}" for name in values if name not in ("platform", "subject",
                                                                                               "pool"))
                    + ") INSERT INTO rating_history (platform, subject, pool, source, at, rating, deviation) "
                    "VALUES (%s,%s,%s,%s,%s,%s,%s)",
                    (*values.values(), rating.platform, rating.subject, rating.pool, source, rating.updated_at,
                     rating.rating, rating.deviation))

    def rating_history(self, platform: str, subject: str, pool: str,
                       limit: int | None = None) -> list[RatingEventRecord]:
        if limit is None:
            return self._records(RatingEventRecord, "platform=%s AND subject=%s AND pool=%s ORDER BY at, seq",
                                 (platform, subject, pool))
        if limit < 2:
            raise ValueError("a history limit below 2 cannot keep the first event and the last")
        # A history that fits is read whole; a longer one is picked from through the index.
        head = self._records(RatingEventRecord, "platform=%s AND subject=%s AND pool=%s "
                             "ORDER BY at, seq LIMIT %s", (platform, subject, pool, limit + 1))
        if len(head) <= limit:
            return head
        rows = self._all(_history_query("%s", "seq", _COLUMNS[RatingEventRecord]),
                         _history_params(platform, subject, pool, limit))
        return [_decode(RatingEventRecord, row) for row in rows]

    def lock_ratings(self) -> None:
        if not self.in_transaction():
            raise RuntimeError("lock_ratings() outside a transaction: the lock would end at once")
        # A table lock that only ratings writers conflict on (plain reads go on), held to the end of
        # the transaction; waits at most the lock timeout (then StorageBusy).  LOCK TABLE, unlike a
        # SELECT, takes no snapshot: a unit that locks first (a rebuild) reads what was committed
        # while it waited, and does not lose the race to the unit it waited for.
        with self._conn() as conn:
            self._exec(conn, "LOCK TABLE ratings IN SHARE ROW EXCLUSIVE MODE", prepare=False)

    @_unit
    def clear_ratings(self) -> None:
        self._write("WITH r AS (DELETE FROM ratings) DELETE FROM rating_history")

    def listen_games(self, on_change: Callable[[int | None], None]) -> GameListener:
        """Call ``on_change(game_id)`` (from a thread of its own) each time a game's change commits,
        in any process on this database, and ``on_change(None)`` each time listening (re)starts:
        anything may have changed meanwhile.  ``stop()`` the listener returned when done."""
        return GameListener(lambda: self._pg.connect(self._conninfo, connect_timeout=PROBE_CONNECT_TIMEOUT,
                                                     **self._kwargs), on_change)


class GameListener:
    """LISTEN on its own connection (outside the pool: it is held all along), reconnecting after
    an outage; ``live`` while it listens."""

    def __init__(self, connect: Callable[[], Any], on_change: Callable[[int | None], None]) -> None:
        self._connect = connect
        self._on_change = on_change
        self._stopping = threading.Event()
        self.live = False
        self._thread = threading.Thread(target=self._run, name="draughts-listen", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                conn = self._connect()
            except Exception:               # the server is away: the storage's outage logging says so
                self._stopping.wait(LISTEN_RETRY_SECONDS)
                continue
            try:
                conn.execute(f"LISTEN {GAME_CHANNEL}")
                self.live = True
                self._on_change(None)
                while not self._stopping.is_set():
                    for note in conn.notifies(timeout=0.5):
                        self._on_change(int(note.payload) if note.payload.isdigit() else None)
            except Exception as err:        # the connection broke: listen again on a new one
                log.debug("game listener: %s", _line(err))
            finally:
                self.live = False
                try:
                    conn.close()
                except Exception:
                    pass
            self._stopping.wait(LISTEN_RETRY_SECONDS)

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join(2.0)


def _close_pool(pool: Any) -> None:
    """Close a pool whose server went away (its connections are dead; a lent one is closed when
    it comes back)."""
    try:
        pool.close(timeout=PROBE_CONNECT_TIMEOUT)
    except Exception as err:
        log.debug("closing a pool of dead connections: %s", err)


def _line(err: BaseException) -> str:
    """An error's first line (libpq's messages run on with hints and context)."""
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__
