"""The PostgreSQL backend of the storage contract (psycopg 3 and its connection pool).

The queries are the shared ones (sql.py, with the POSTGRESQL dialect: ``?`` marks become ``%s``);
what is PostgreSQL's own stays here: the pool and the unit of work, which SQLSTATEs mean
contention, busy, full or gone, a server that went away, and the methods it does in one statement
or under row locks (the ``#N`` counter with its insert, a game's change with its move and count,
the send budget, outbox claims and leases, the ratings lock).

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

from .contract import GAME_UPDATE_FIELDS, MOVE_FIELDS, check_fields
from .errors import StaleGame, StorageBusy, StorageContention, StorageError, StorageFull, StorageUnavailable
from .migrations import migrations
from .records import GameRecord, OutboxRecord
from .retry import RetryPolicy, retry_contention
from .rows import COLUMNS, COUNTED_COLUMNS, COUNTED_FIELDS, count_key, counted, decode, encode_game
from .sql import POSTGRESQL, SqlStore, unit

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
IDENTITY_COLUMNS = (("outbox", "id"), ("puzzle_posts", "id"), ("puzzle_runs", "id"), ("own_puzzles", "id"),
                    ("tournaments", "id"), ("storm_runs", "id"), *HELPER_COLUMNS.items())
# Our own settings in a URL's query (the rest goes to libpq; libpq's ``options`` is merged with ours).
URL_OPTIONS = ("pool_min", "pool_max", "prepare_threshold", "options")

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


class PostgresStore(SqlStore):
    """The database on a PostgreSQL server, reached by URL (``postgresql://user@host/db``).

    Opening connects, applies the migrations this database has not had (refusing one written by a
    newer bot) and raises StorageError with a one-line reason when it cannot.  A lock waited for
    longer than ``busy_timeout`` seconds raises StorageBusy.  The pool keeps ``pool_min`` to
    ``pool_max`` connections (constructor, or the URL's query: ``?pool_max=20``)."""

    dialect = POSTGRESQL

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
            return list(self._exec(conn, self.dialect.sql(sql), params).fetchall())

    def _write(self, sql: str, params: Sequence[Any] = ()) -> int:
        """One statement that writes (in autocommit outside a unit: a unit of its own); the rows it changed."""
        with self._conn() as conn:
            return int(self._exec(conn, self.dialect.sql(sql), params).rowcount)

    def _insert_id(self, sql: str, params: Sequence[Any] = ()) -> int | None:
        row = self._one(f"{sql} RETURNING id", params)
        return None if row is None else int(row["id"])

    def _unit(self, work: Callable[[], T]) -> T:
        # A unit of its own, run again when PostgreSQL undid it to break a conflict.
        return retry_contention(work, self.retry_policy)

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

    # -- what PostgreSQL does in one statement, or under its own locks ------------------------------

    # The #N counter: one atomic UPDATE ... RETURNING: two writers never get the same number (the
    # second waits for the row and sees the first one's value); never at or below an id in use.
    _NEXT_NUMBER = ("UPDATE meta SET value = (greatest(value::bigint, coalesce((SELECT max(id) FROM challenges), 0), "
                    "coalesce((SELECT max(id) FROM games), 0)) + 1)::text WHERE key='last_number' "
                    "RETURNING value::bigint AS id")

    def _next_number(self) -> int:
        row = self._one(self._NEXT_NUMBER)
        if row is None:
            raise StorageError(f"database {self.name} has no number counter")
        return int(row["id"])

    def _insert_numbered(self, table: str, values: dict[str, Any]) -> int:
        # The number and the row in one statement (one round trip, no unit of work of its own).
        row = self._one(f"WITH n AS ({self._NEXT_NUMBER}) INSERT INTO {table} (id, {', '.join(values)}) "
                        f"VALUES ((SELECT id FROM n), {', '.join('?' * len(values))}) RETURNING id",
                        tuple(values.values()))
        if row is None:
            raise StorageError(f"database {self.name} has no number counter")
        return int(row["id"])

    @unit
    def update_game(self, game_id: int, version: int, fields: dict[str, Any],
                    move: dict[str, Any] | None = None) -> GameRecord:
        check_fields("game update", fields, GAME_UPDATE_FIELDS)
        if move is not None:
            check_fields("move", move, MOVE_FIELDS, ())
        recount = not COUNTED_FIELDS.isdisjoint(fields)
        if recount and not self.in_transaction():
            # The change and the count it may move commit together.
            with self.transaction():
                return self.update_game(game_id, version, fields, move)
        values = dict(encode_game(fields), version=version + 1)
        # The changed row comes back with the change: the caller reads no game after it.
        update = (f"UPDATE games SET {', '.join(f'{k}=?' for k in values)} WHERE id=? AND version=? "
                  f"RETURNING {COLUMNS[GameRecord]}")
        params: tuple[Any, ...] = (*values.values(), game_id, version)
        extra: tuple[Any, ...] = ()
        if move is not None or recount:
            # The change, its move and what the row was (for its count: every part of one
            # statement reads the same snapshot) in one statement: one round trip, all or nothing.
            parts: list[str] = [f"g AS ({update})"]
            old_columns = ""
            if move is not None:
                names = list(move)
                parts.append(f"m AS (INSERT INTO moves (game_id, {', '.join(names)}) "
                             f"SELECT g.id, {', '.join('?' * len(names))} FROM g RETURNING game_id)")
                params = (*params, *move.values())
            if recount:
                parts.insert(0, f"b AS (SELECT {COUNTED_COLUMNS} FROM games WHERE id=?)")
                old_columns = ", " + ", ".join(f"b.{name} AS before_{name}" for name in COUNTED_FIELDS)
                extra = (game_id,)
            update = f"WITH {', '.join(parts)} SELECT g.*{old_columns} FROM g{', b' if recount else ''}"
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
        self._write("SELECT pg_notify(?, ?)", (GAME_CHANNEL, str(game_id)))
        row = dict(rows[0])
        before = {name: row.pop(f"before_{name}") for name in COUNTED_FIELDS} if recount else None
        changed: GameRecord = decode(GameRecord, row)
        if before is not None:
            # A game counts once, under what it is now (a result is written once: one more
            # statement at the end of a game, none for a move).
            self._recount(count_key(before), count_key(counted(changed)))
        return changed

    def _current_version(self, game_id: int) -> int | None:
        """The game's committed version, read apart from this thread's transaction."""
        conn = self._getconn()
        try:
            row = self._exec(conn, "SELECT version FROM games WHERE id=%s", (game_id,)).fetchone()
        finally:
            self._putconn(conn)
        return None if row is None else int(row["version"])

    @unit
    def reserve_sends(self, scopes: Sequence[tuple[str, float, float]], now: float, max_wait: float) -> float:
        ordered = sorted(scopes)            # rows locked in one order: two senders never deadlock
        keys = [key for key, _, _ in ordered]
        # READ COMMITTED with row locks: the upsert locks every scope's row (a new one is created
        # free) and reads it, so the rows read are the newest and stay ours until COMMIT.
        isolation = "SERIALIZABLE" if self.in_transaction() else "READ COMMITTED"
        with self.transaction(isolation=isolation):
            held = {row["key"]: float(row["tat"]) for row in self._all(
                "INSERT INTO send_budget (key, tat) SELECT k, '-Infinity' FROM unnest(?::text[]) AS k "
                "ON CONFLICT (key) DO UPDATE SET tat=send_budget.tat RETURNING key, tat", (keys,))}
            start = max([now, *(held[key] - tolerance for key, _, tolerance in ordered)])
            if start - now <= max_wait:
                self._write("UPDATE send_budget b SET tat=GREATEST(b.tat, ?) + n.interval "
                            "FROM unnest(?::text[], ?::float8[]) AS n(key, interval) WHERE b.key=n.key",
                            (start, keys, [interval for _, interval, _ in ordered]))
            return start

    @unit
    def claim_messages(self, platform: str, owner: str, now: float, lease_until: float, limit: int = 50,
                       exclude: Sequence[str] = ()) -> list[OutboxRecord]:
        # The chats to claim in, each under an advisory lock held to the end of the transaction;
        # a chat another claimer is working on now is skipped (its lock is taken).  READ COMMITTED
        # on its own, so the claiming statement, which starts after the locks are ours, sees every
        # lease committed before: a chat stays with the process that holds any of its rows.
        due = f"{self._CLAIMABLE} AND NOT (o.chat_id = ANY(?))"
        due_params = (platform, now, owner, now, owner, now, list(exclude))
        isolation = "SERIALIZABLE" if self.in_transaction() else "READ COMMITTED"
        with self.transaction(isolation=isolation):
            chats = [row["chat_id"] for row in self._all(
                f"SELECT c.chat_id FROM (SELECT o.chat_id, min(o.id) AS first FROM outbox o WHERE {due} "
                "GROUP BY o.chat_id ORDER BY first LIMIT ?) c "
                "WHERE pg_try_advisory_xact_lock(?::integer, hashtext(?::text || ':' || c.chat_id)) "
                "ORDER BY c.first",
                (*due_params, limit, OUTBOX_CHAT_SPACE, platform))]
            if not chats:
                return []
            rows = self._all(
                f"UPDATE outbox SET claimed_by=?, lease_until=? WHERE id IN (SELECT o.id FROM outbox o WHERE {due} "
                "AND o.chat_id = ANY(?) ORDER BY o.id LIMIT ? FOR UPDATE SKIP LOCKED) "
                f"RETURNING {COLUMNS[OutboxRecord]}", (owner, lease_until, *due_params, chats, limit))
        return sorted((decode(OutboxRecord, row) for row in rows), key=lambda r: r.id)

    @unit
    def hold_messages(self, message_ids: Collection[int], owner: str, lease_until: float) -> set[int]:
        ids = [int(i) for i in message_ids]
        if not ids:
            return set()
        rows = self._all("UPDATE outbox SET lease_until=? WHERE id = ANY(?) AND claimed_by=? AND status='pending' "
                         "RETURNING id", (lease_until, ids, owner))
        return {int(row["id"]) for row in rows}

    def lock_ratings(self) -> None:
        if not self.in_transaction():
            raise RuntimeError("lock_ratings() outside a transaction: the lock would end at once")
        # A table lock that only ratings writers conflict on (plain reads go on), held to the end of
        # the transaction; waits at most the lock timeout (then StorageBusy).  LOCK TABLE, unlike a
        # SELECT, takes no snapshot: a unit that locks first (a rebuild) reads what was committed
        # while it waited, and does not lose the race to the unit it waited for.
        with self._conn() as conn:
            self._exec(conn, "LOCK TABLE ratings IN SHARE ROW EXCLUSIVE MODE", prepare=False)

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
