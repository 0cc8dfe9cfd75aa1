"""Players, chats, challenges, games and moves in one SQLite file.

WAL mode, one connection per Storage, every change to a game in one
transaction guarded by the game's version number (optimistic concurrency):
of two writers that read the same version, exactly one wins.
"""

from __future__ import annotations

import json
import sqlite3
import threading
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
]


class StaleGame(Exception):
    """The game changed since it was read (another move or action won the race)."""


class Storage:
    """The database; every method is one short transaction."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: we issue BEGIN IMMEDIATE ourselves, so a write
        # transaction takes the lock before it reads what it will change.
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=10)
        self.db = sqlite_utils.Database(conn)
        self._lock = threading.RLock()
        self._depth = 0
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        self._migrate()

    # -- plumbing ---------------------------------------------------------------------

    def _migrate(self) -> None:
        with self.transaction():
            version = self.db.execute("PRAGMA user_version").fetchone()[0]
            for number, statements in enumerate(MIGRATIONS[version:], start=version + 1):
                for statement in statements:
                    self.db.execute(statement)
                self.db.execute(f"PRAGMA user_version = {number}")

    @property
    def schema_version(self) -> int:
        """How many migrations this file has had."""
        return self.db.execute("PRAGMA user_version").fetchone()[0]

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction (nested calls join the outer one)."""
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            self.db.execute("BEGIN IMMEDIATE")
            self._depth = 1
            try:
                yield
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            else:
                self.db.execute("COMMIT")
            finally:
                self._depth = 0

    def _one(self, sql: str, params: tuple = ()) -> dict[str, Any] | None:
        with self._lock:
            cursor = self.db.execute(sql, params)
            row = cursor.fetchone()
            if row is None:
                return None
            return dict(zip([c[0] for c in cursor.description], row, strict=True))

    def _all(self, sql: str, params: tuple = ()) -> list[dict[str, Any]]:
        with self._lock:
            cursor = self.db.execute(sql, params)
            names = [c[0] for c in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def close(self) -> None:
        """Close the connection."""
        self.db.conn.close()

    # -- players and chats ---------------------------------------------------------------

    def save_player(self, platform: str, user_id: str, name: str, username: str | None,
                    language: str | None, now: float) -> None:
        with self.transaction():
            self.db["players"].upsert(
                {"platform": platform, "user_id": user_id, "name": name, "username": username,
                 "language": language, "updated_at": now},
                pk=("platform", "user_id"))

    def player(self, platform: str, user_id: str) -> dict[str, Any] | None:
        """A player as last seen, or None."""
        return self._one("SELECT * FROM players WHERE platform=? AND user_id=?", (platform, user_id))

    def chat(self, platform: str, chat_id: str) -> dict[str, Any] | None:
        """A chat and its settings, or None."""
        return self._one("SELECT * FROM chats WHERE platform=? AND chat_id=?", (platform, chat_id))

    def ensure_chat(self, platform: str, chat_id: str, kind: str, now: float) -> dict[str, Any]:
        """The chat, created with no settings on first sight."""
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
        """Store an open challenge; its id."""
        with self.transaction():
            return self.db["challenges"].insert(dict(fields, status="open")).last_pk

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
            game_id = self.db["games"].insert(dict(game, version=0, ply=0, quiet_plies=0, status="active",
                                                   reminded=0)).last_pk
            self.db.execute("UPDATE challenges SET game_id=? WHERE id=?", (game_id, challenge_id))
            return game_id

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
