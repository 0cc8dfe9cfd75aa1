"""Players, chats, challenges, games and moves in one SQLite file.

WAL mode, one connection per Storage, every change to a game in one
transaction guarded by the game's version number (optimistic concurrency):
of two writers that read the same version, exactly one wins.

Challenges and games share one numbering (``#N`` names one thing): a game
started from a challenge takes the challenge's number, and every new number
comes from one counter above every id in use.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlite_utils

# Each migration is a list of statements, applied in order; PRAGMA user_version records how
# many have run.  Append new ones; never edit one that has shipped.
MIGRATIONS: list[list[str]] = [
    [
        """CREATE TABLE players (
            platform TEXT NOT NULL, user_id TEXT NOT NULL, name TEXT NOT NULL,
            username TEXT, language TEXT, updated_at REAL NOT NULL,
            PRIMARY KEY (platform, user_id))""",
        """CREATE TABLE chats (
            platform TEXT NOT NULL, chat_id TEXT NOT NULL, kind TEXT NOT NULL,
            language TEXT, variant TEXT, created_at REAL NOT NULL,
            PRIMARY KEY (platform, chat_id))""",
        """CREATE TABLE challenges (
            id INTEGER PRIMARY KEY, platform TEXT NOT NULL, chat_id TEXT NOT NULL,
            challenger_id TEXT NOT NULL, challenger_name TEXT NOT NULL, target_username TEXT,
            variant TEXT NOT NULL, color TEXT NOT NULL, move_seconds INTEGER NOT NULL,
            status TEXT NOT NULL, created_at REAL NOT NULL, game_id INTEGER)""",
        "CREATE INDEX challenges_chat ON challenges (platform, chat_id, status)",
        """CREATE TABLE games (
            id INTEGER PRIMARY KEY, platform TEXT NOT NULL, chat_id TEXT NOT NULL,
            variant TEXT NOT NULL, start_fen TEXT,
            white_id TEXT NOT NULL, white_name TEXT NOT NULL,
            black_id TEXT NOT NULL, black_name TEXT NOT NULL,
            fen TEXT NOT NULL, ply INTEGER NOT NULL, quiet_plies INTEGER NOT NULL,
            version INTEGER NOT NULL, status TEXT NOT NULL,
            result_score TEXT, result_reason TEXT, winner TEXT,
            draw_offer TEXT, move_seconds INTEGER NOT NULL, deadline_at REAL,
            reminded INTEGER NOT NULL DEFAULT 0,
            last_path TEXT, last_captured TEXT,
            created_at REAL NOT NULL, finished_at REAL)""",
        "CREATE INDEX games_chat ON games (platform, chat_id, status)",
        "CREATE INDEX games_deadline ON games (status, deadline_at)",
        """CREATE TABLE moves (
            game_id INTEGER NOT NULL REFERENCES games(id), ply INTEGER NOT NULL,
            notation TEXT NOT NULL, fen_after TEXT NOT NULL, by_user TEXT NOT NULL,
            played_at REAL NOT NULL, PRIMARY KEY (game_id, ply))""",
        """CREATE TABLE messages (
            platform TEXT NOT NULL, chat_id TEXT NOT NULL, message_id TEXT NOT NULL,
            game_id INTEGER NOT NULL, PRIMARY KEY (platform, chat_id, message_id))""",
    ],
    [
        # Small named values: the shared challenge/game number counter, heartbeats.
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value)",
        # Old rows keep their ids (players refer to them); new numbers start above both.
        """INSERT INTO meta (key, value) SELECT 'last_number',
            max(coalesce((SELECT max(id) FROM challenges), 0), coalesce((SELECT max(id) FROM games), 0))""",
    ],
    [
        # What the service says on its own, written in the transaction of the change that caused
        # it and delivered by the platform's adapter (status pending -> sent, or dropped).
        """CREATE TABLE outbox (
            id INTEGER PRIMARY KEY, platform TEXT NOT NULL, chat_id TEXT NOT NULL,
            payload TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'pending',
            attempts INTEGER NOT NULL DEFAULT 0, next_attempt_at REAL NOT NULL,
            created_at REAL NOT NULL, sent_at REAL, error TEXT)""",
        "CREATE INDEX outbox_due ON outbox (platform, status, next_attempt_at)",
    ],
]

DEFAULT_BUSY_TIMEOUT = 5.0
PLAYER_WAIT = 0.2

# SQLite primary result codes (the low byte of an extended code).
_BUSY, _LOCKED, _READONLY, _IOERR, _CORRUPT, _FULL, _CANTOPEN, _NOTADB = 5, 6, 8, 10, 11, 13, 14, 26


class StorageError(Exception):
    """The database cannot be used; the message is one line for whoever runs the bot."""


class StorageBusy(StorageError):
    """Another connection held the write lock for longer than the busy timeout."""


def _code(err: sqlite3.Error) -> int:
    return (getattr(err, "sqlite_errorcode", None) or 0) & 0xFF


def _is_busy(err: sqlite3.Error) -> bool:
    if _code(err) in (_BUSY, _LOCKED):
        return True
    return isinstance(err, sqlite3.OperationalError) and "database is locked" in str(err)


class StaleGame(Exception):
    """The game changed since it was read (another move or action won the race)."""


class Storage:
    """The database; every method is one short transaction.

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
        self.db: sqlite_utils.Database | None = None
        try:
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            # isolation_level=None: we issue BEGIN IMMEDIATE ourselves, so a write
            # transaction takes the lock before it reads what it will change.
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                                   timeout=busy_timeout)
            self.db = sqlite_utils.Database(conn)
            self._open(conn)
            if self.path != ":memory:":
                self._reader = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                                               timeout=busy_timeout)
                self._reader.execute("PRAGMA query_only=ON")
        except StorageBusy as err:
            self.close()
            raise StorageBusy(self._explain(err.__cause__)) from None
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

    def _open(self, conn: sqlite3.Connection) -> None:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        problems = [row[0] for row in conn.execute("PRAGMA quick_check").fetchall()]
        if problems != ["ok"]:
            first = " ".join(str(problems[0]).split())[:200]
            raise StorageError(f"database {self.path} is damaged (integrity check: {first})")
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

    def _migrate(self) -> None:
        with self.transaction():
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
            for number, statements in enumerate(MIGRATIONS[version:], start=version + 1):
                for statement in statements:
                    self.db.execute(statement)
                self.db.execute(f"PRAGMA user_version = {number}")
            # A write on every start: a read-only file or folder shows up now, not at the first move.
            self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('opened_at', ?)", (time.time(),))

    @property
    def schema_version(self) -> int:
        """How many migrations this file has had."""
        return self.db.execute("PRAGMA user_version").fetchone()[0]

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
                raise
            finally:
                self._depth, self._writer = 0, None
        finally:
            self._lock.release()

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

    def close(self) -> None:
        """Close the connections."""
        if self._reader is not None:
            self._reader.close()
        if self.db is not None:
            self.db.conn.close()

    def _next_number(self) -> int:
        """The next challenge/game number (inside a transaction): above the counter and every id
        in use, so a number never names two things."""
        row = self.db.execute(
            "SELECT max(coalesce((SELECT value FROM meta WHERE key='last_number'), 0),"
            " coalesce((SELECT max(id) FROM challenges), 0), coalesce((SELECT max(id) FROM games), 0))"
        ).fetchone()
        number = int(row[0]) + 1
        self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('last_number', ?)", (number,))
        return number

    # -- players and chats ---------------------------------------------------------------

    def save_player(self, platform: str, user_id: str, name: str, username: str | None,
                    language: str | None, now: float) -> bool:
        """Note how a player is called now; False (and no write lock taken) when nothing changed."""
        known = self.player(platform, user_id)
        if known and (known["name"], known["username"], known["language"]) == (name, username, language):
            return False
        # A name refresh never makes a command wait: under a held lock it waits for the next message.
        with self.transaction(wait=min(self.busy_timeout, PLAYER_WAIT)):
            self.db["players"].upsert(
                {"platform": platform, "user_id": user_id, "name": name, "username": username,
                 "language": language, "updated_at": now},
                pk=("platform", "user_id"))
        return True

    def player(self, platform: str, user_id: str) -> dict[str, Any] | None:
        """A player as last seen, or None."""
        return self._one("SELECT * FROM players WHERE platform=? AND user_id=?", (platform, user_id))

    def chat(self, platform: str, chat_id: str) -> dict[str, Any] | None:
        """A chat and its settings, or None."""
        return self._one("SELECT * FROM chats WHERE platform=? AND chat_id=?", (platform, chat_id))

    def ensure_chat(self, platform: str, chat_id: str, kind: str, now: float) -> dict[str, Any]:
        """The chat, created with no settings on first sight (a chat already known costs no write)."""
        known = self.chat(platform, chat_id)
        if known is not None:
            return known
        with self.transaction():
            self.db.execute(
                "INSERT OR IGNORE INTO chats (platform, chat_id, kind, created_at) VALUES (?,?,?,?)",
                (platform, chat_id, kind, now))
        return self.chat(platform, chat_id)

    def set_chat(self, platform: str, chat_id: str, **fields: Any) -> None:
        """Change a chat's settings (language, variant)."""
        allowed = {"language", "variant"}
        if not set(fields) <= allowed:
            raise ValueError(f"unknown chat settings {set(fields) - allowed}")
        with self.transaction():
            for name, value in fields.items():
                self.db.execute(f"UPDATE chats SET {name}=? WHERE platform=? AND chat_id=?",
                                (value, platform, chat_id))

    def move_chat(self, platform: str, old_chat_id: str, new_chat_id: str) -> None:
        """A chat got a new id (a Telegram group became a supergroup): carry everything over."""
        with self.transaction():
            # The new chat may already have a row (someone typed there first): it keeps its own
            # settings, and the old row goes.
            for table in ("chats", "messages"):
                self.db.execute(f"UPDATE OR IGNORE {table} SET chat_id=? WHERE platform=? AND chat_id=?",
                                (new_chat_id, platform, old_chat_id))
                self.db.execute(f"DELETE FROM {table} WHERE platform=? AND chat_id=?", (platform, old_chat_id))
            for table in ("challenges", "games"):
                self.db.execute(f"UPDATE {table} SET chat_id=? WHERE platform=? AND chat_id=?",
                                (new_chat_id, platform, old_chat_id))

    # -- challenges -------------------------------------------------------------------------

    def create_challenge(self, **fields: Any) -> int:
        """Store an open challenge; its number (which the game it may become will keep)."""
        with self.transaction():
            number = self._next_number()
            self.db["challenges"].insert(dict(fields, id=number, status="open"))
            return number

    def challenge(self, challenge_id: int) -> dict[str, Any] | None:
        """A challenge by id, or None."""
        return self._one("SELECT * FROM challenges WHERE id=?", (challenge_id,))

    def open_challenges(self, platform: str, chat_id: str) -> list[dict[str, Any]]:
        """The open challenges of a chat, oldest first."""
        return self._all("SELECT * FROM challenges WHERE platform=? AND chat_id=? AND status='open' ORDER BY id",
                         (platform, chat_id))

    def close_challenge(self, challenge_id: int, status: str) -> bool:
        """Mark an open challenge declined or cancelled; False if it was no longer open."""
        with self.transaction():
            cur = self.db.execute("UPDATE challenges SET status=? WHERE id=? AND status='open'",
                                  (status, challenge_id))
            return cur.rowcount == 1

    def accept_challenge(self, challenge_id: int, game: dict[str, Any]) -> int | None:
        """Turn an open challenge into a game atomically; None if someone else got there first."""
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
        """Start a game that no challenge led to (e.g. against the bot); its new number."""
        with self.transaction():
            game_id = self._next_number()
            self._insert_game(game_id, game)
            return game_id

    def _insert_game(self, game_id: int, game: dict[str, Any]) -> None:
        self.db["games"].insert(dict(game, id=game_id, version=0, ply=0, quiet_plies=0, status="active",
                                     reminded=0))

    # -- games --------------------------------------------------------------------------------

    def game(self, game_id: int) -> dict[str, Any] | None:
        """A game by id, or None."""
        return self._one("SELECT * FROM games WHERE id=?", (game_id,))

    def active_games(self, platform: str, chat_id: str) -> list[dict[str, Any]]:
        """The games still being played in a chat, oldest first."""
        return self._all("SELECT * FROM games WHERE platform=? AND chat_id=? AND status='active' ORDER BY id",
                         (platform, chat_id))

    def recent_games(self, platform: str, chat_id: str, user_id: str, limit: int = 1) -> list[dict[str, Any]]:
        """A player's latest games in a chat, newest first, finished or not."""
        return self._all(
            "SELECT * FROM games WHERE platform=? AND chat_id=? AND (white_id=? OR black_id=?) "
            "ORDER BY id DESC LIMIT ?", (platform, chat_id, user_id, user_id, limit))

    def recent_fens(self, game_id: int, count: int) -> list[str]:
        """The FENs after the last ``count`` moves, oldest first."""
        rows = self._all("SELECT fen_after FROM moves WHERE game_id=? ORDER BY ply DESC LIMIT ?", (game_id, count))
        return [r["fen_after"] for r in reversed(rows)]

    def moves(self, game_id: int) -> list[dict[str, Any]]:
        """Every move of a game in order."""
        return self._all("SELECT * FROM moves WHERE game_id=? ORDER BY ply", (game_id,))

    def update_game(self, game_id: int, version: int, fields: dict[str, Any],
                    move: dict[str, Any] | None = None) -> None:
        """Change a game (and record a move) if it is still at ``version``; StaleGame otherwise."""
        fields = dict(fields, version=version + 1)
        for key in ("last_path", "last_captured"):
            if isinstance(fields.get(key), list | tuple):
                fields[key] = json.dumps(list(fields[key]))
        names = ", ".join(f"{k}=?" for k in fields)
        with self.transaction():
            cur = self.db.execute(f"UPDATE games SET {names} WHERE id=? AND version=?",
                                  (*fields.values(), game_id, version))
            if cur.rowcount != 1:
                raise StaleGame(game_id)
            if move is not None:
                self.db["moves"].insert(dict(move, game_id=game_id))

    def mark_reminded(self, game_id: int, version: int) -> bool:
        """Note that the reminder went out, without changing the game's version (a reminder
        must not make a move sent at the same moment stale); False if the game moved on."""
        with self.transaction():
            cur = self.db.execute("UPDATE games SET reminded=1 WHERE id=? AND version=? AND reminded=0",
                                  (game_id, version))
            return cur.rowcount == 1

    def due_games(self, now: float, platform: str | None = None) -> list[dict[str, Any]]:
        """Active games (of one platform, or all) whose clock has run out or whose reminder is due."""
        where = "AND platform=?" if platform is not None else ""
        params = (now, now, platform) if platform is not None else (now, now)
        return self._all(
            "SELECT * FROM games WHERE status='active' AND deadline_at IS NOT NULL AND "
            f"(deadline_at <= ? OR (reminded=0 AND deadline_at - move_seconds / 10.0 <= ?)) {where} "
            "ORDER BY deadline_at", params)

    # -- board messages --------------------------------------------------------------------------

    def remember_message(self, platform: str, chat_id: str, message_id: str, game_id: int) -> None:
        """Note that a message shows a game's board (so a reply to it names the game)."""
        with self.transaction():
            self.db["messages"].upsert(
                {"platform": platform, "chat_id": chat_id, "message_id": message_id, "game_id": game_id},
                pk=("platform", "chat_id", "message_id"))

    def game_of_message(self, platform: str, chat_id: str, message_id: str) -> int | None:
        """The game whose board a message shows, or None."""
        row = self._one("SELECT game_id FROM messages WHERE platform=? AND chat_id=? AND message_id=?",
                        (platform, chat_id, message_id))
        return row["game_id"] if row else None

    # -- heartbeat and downtime -------------------------------------------------------------------

    def beat(self, platform: str | None, now: float) -> None:
        """Note that a process serving ``platform`` (None: every platform) is running at ``now``."""
        with self.transaction():
            self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (_beat_key(platform), now))

    def last_beat(self, platform: str | None) -> float | None:
        """When a process serving ``platform`` last noted it was running, or None."""
        row = self._one("SELECT value FROM meta WHERE key=?", (_beat_key(platform),))
        return float(row["value"]) if row else None

    def resume_after_downtime(self, platform: str | None, now: float, threshold: float) -> float:
        """At start-up: if the last heartbeat is more than ``threshold`` s old, push every active
        game's deadline (of ``platform``, or all) forward by the gap; the seconds added (0 if none).

        Reading and renewing the heartbeat in the same write transaction makes it happen once:
        a second process starting right after finds a fresh heartbeat."""
        with self.transaction():
            row = self.db.execute("SELECT value FROM meta WHERE key=?", (_beat_key(platform),)).fetchone()
            self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (_beat_key(platform), now))
            gap = now - float(row[0]) if row else 0.0
            if gap <= threshold:
                return 0.0
            where = " AND platform=?" if platform is not None else ""
            self.db.execute("UPDATE games SET deadline_at = deadline_at + ? "
                            f"WHERE status='active' AND deadline_at IS NOT NULL{where}",
                            (gap, platform) if platform is not None else (gap,))
            return gap

    # -- questions waiting for a confirmation (service: /resign) ------------------------------------

    def set_pending(self, key: str, value: Any) -> None:
        """Remember a question put to a user (a JSON value in meta), until answered or replaced."""
        with self.transaction():
            self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                            (f"pending:{key}", json.dumps(value)))

    def pending(self, key: str) -> Any:
        """The value of a question still waiting, or None."""
        row = self._one("SELECT value FROM meta WHERE key=?", (f"pending:{key}",))
        return json.loads(row["value"]) if row else None

    def drop_pending(self, key: str) -> None:
        """Forget a question (answered, or no longer relevant)."""
        with self.transaction():
            self.db.execute("DELETE FROM meta WHERE key=?", (f"pending:{key}",))

    def last_game(self, platform: str, chat_id: str) -> dict[str, Any] | None:
        """The chat's most recent game, finished or not, or None."""
        return self._one("SELECT * FROM games WHERE platform=? AND chat_id=? ORDER BY id DESC LIMIT 1",
                         (platform, chat_id))

    # -- outbox -------------------------------------------------------------------------------------

    def enqueue(self, platform: str, chat_id: str, payload: str, now: float) -> int:
        """Add a message to the outbox (inside the caller's transaction when there is one)."""
        with self.transaction():
            cur = self.db.execute(
                "INSERT INTO outbox (platform, chat_id, payload, next_attempt_at, created_at) VALUES (?,?,?,?,?)",
                (platform, chat_id, payload, now, now))
            return int(cur.lastrowid)

    def due_messages(self, platform: str, now: float, limit: int = 50) -> list[dict[str, Any]]:
        """Pending outbox messages of a platform whose time has come, oldest first."""
        return self._all("SELECT * FROM outbox WHERE platform=? AND status='pending' AND next_attempt_at<=? "
                         "ORDER BY id LIMIT ?", (platform, now, limit))

    def outbox_message(self, message_id: int) -> dict[str, Any] | None:
        """One outbox message, whatever its status."""
        return self._one("SELECT * FROM outbox WHERE id=?", (message_id,))

    def mark_sent(self, message_id: int, now: float) -> bool:
        """A pending message was delivered; False if it was not pending (delivered or dropped)."""
        with self.transaction():
            cur = self.db.execute("UPDATE outbox SET status='sent', sent_at=? WHERE id=? AND status='pending'",
                                  (now, message_id))
            return cur.rowcount == 1

    def retry_later(self, message_id: int, at: float, error: str) -> None:
        """A delivery failed for now: count the attempt and try again at ``at``."""
        with self.transaction():
            self.db.execute("UPDATE outbox SET attempts=attempts+1, next_attempt_at=?, error=? "
                            "WHERE id=? AND status='pending'", (at, error[:500], message_id))

    def drop_message(self, message_id: int, error: str) -> None:
        """A message that can never be delivered: keep it, marked dropped, for the record."""
        with self.transaction():
            self.db.execute("UPDATE outbox SET status='dropped', attempts=attempts+1, error=? "
                            "WHERE id=? AND status='pending'", (error[:500], message_id))

    def outbox_platforms(self) -> list[str]:
        """The platforms that have pending outbox messages."""
        return [r["platform"] for r in self._all("SELECT DISTINCT platform FROM outbox WHERE status='pending'")]

    def next_wakeup(self, platform: str | None) -> float | None:
        """The earliest time something of ``platform`` (None: all) is due: an outbox message, a
        reminder (a tenth of the move time before the deadline) or a deadline."""
        where = " AND platform=?" if platform is not None else ""
        params = (platform,) if platform is not None else ()
        outbox = self._one(f"SELECT min(next_attempt_at) AS t FROM outbox WHERE status='pending'{where}", params)
        clocks = self._one(
            "SELECT min(CASE WHEN reminded=0 THEN deadline_at - move_seconds / 10.0 ELSE deadline_at END) AS t "
            f"FROM games WHERE status='active' AND deadline_at IS NOT NULL{where}", params)
        times = [row["t"] for row in (outbox, clocks) if row and row["t"] is not None]
        return min(times) if times else None


def _beat_key(platform: str | None) -> str:
    return f"heartbeat:{platform or '*'}"
