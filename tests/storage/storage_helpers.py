"""Helpers for the storage tests: a second real connection that can hold the write lock the way
another process would, and a service on a database (an SQLite file or a PostgreSQL URL) with a
short busy timeout."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bot.service import ChatEvent, GameService
from bot.storage import Store
from bot.storage.opening import POSTGRES_SCHEMES, open_store

T0 = 1_700_000_000.0
PLATFORM = "test"
GROUP = "group-1"


def is_postgres(database: str | Path) -> bool:
    return str(database).startswith(POSTGRES_SCHEMES)


def open_db(database: str | Path, busy_timeout: float) -> Store:
    """The store of a database setting (a path or a URL), as the bot opens it."""
    return open_store(str(database), busy_timeout)


@contextmanager
def write_lock_held(database: str | Path) -> Iterator[object]:
    """Another connection holding the write lock until the block ends.  SQLite: inside BEGIN
    IMMEDIATE with a write done.  PostgreSQL, which has no database-wide write lock: every table
    locked IN EXCLUSIVE MODE, which blocks every write and lets plain reads through (the same
    thing for the store: writes wait their busy timeout, reads answer)."""
    if is_postgres(database):
        import psycopg

        with psycopg.connect(str(database)) as conn:
            tables = [row[0] for row in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = "
                                                     "current_schema() ORDER BY tablename")]
            conn.execute(f"LOCK TABLE {', '.join(tables)} IN EXCLUSIVE MODE")
            yield conn
            conn.rollback()
        return
    other = sqlite3.connect(database, isolation_level=None, timeout=5)
    try:
        other.execute("BEGIN IMMEDIATE")
        other.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('held', 1)")
        yield other
        other.execute("ROLLBACK")
    finally:
        other.close()


def event(user: str, text: str | None = None, action: str | None = None, chat: str = GROUP,
          language: str | None = "en") -> ChatEvent:
    return ChatEvent(platform=PLATFORM, chat_id=chat, user_id=user, user_name=user.capitalize(),
                     username=user, language=language, text=text, action=action)


class Bot:
    """A service on a database (file path or URL) with a short busy timeout and a clock the test moves."""

    def __init__(self, path: str | Path, now: list[float], busy_timeout: float = 0.2) -> None:
        self.path = path
        self.now = now
        self.storage = open_db(path, busy_timeout)
        self.service = GameService(self.storage, clock=lambda: self.now[0], rng=random.Random(1))

    def say(self, user: str, text: str, **kw) -> list:
        return self.service.handle(event(user, text=text, **kw))

    def text(self, user: str, text: str, **kw) -> str:
        return "\n".join(r.text for r in self.say(user, text, **kw))

    def new_game(self, white: str = "ana", black: str = "bob", extra: str = "") -> int:
        self.say(white, f"/new italian white {extra}".strip())
        cid = self.storage.open_challenges(PLATFORM, GROUP)[-1].id
        self.say(black, f"/accept #{cid}")
        game_id = self.storage.challenge(cid).game_id
        assert game_id is not None
        return game_id
