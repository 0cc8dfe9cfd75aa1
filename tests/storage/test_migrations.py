"""Migrations as numbered files: a database made by the bot before them (ten migrations in a
Python list, counted by PRAGMA user_version) is upgraded in place, its rows kept.

SQLite only: such databases are SQLite files (PRAGMA user_version); the PostgreSQL history, which
starts at the numbered files, is checked in test_postgres_migrations.py."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from legacy_schema import LEGACY_MIGRATIONS

from bot.storage import MIGRATIONS, Storage, StorageError
from bot.storage.migrations import migrations, split_statements

T0 = 1_700_000_000.0


def legacy_database(path: Path) -> None:
    """A file as the bot of commit ec0b6d3 left it, with a game, an attempt and a heartbeat."""
    conn = sqlite3.connect(path, isolation_level=None)
    for statement in (s for migration in LEGACY_MIGRATIONS for s in migration):
        conn.execute(statement)
    conn.execute(f"PRAGMA user_version = {len(LEGACY_MIGRATIONS)}")
    conn.execute("INSERT INTO games (id, platform, chat_id, variant, white_id, white_name, black_id, black_name, fen,"
                 " ply, quiet_plies, version, status, move_seconds, created_at) VALUES (7, 'tg', 'g', 'italian',"
                 " 'a', 'A', 'b', 'B', 'W:W21:B10', 0, 0, 3, 'active', 3600, ?)", (T0,))
    conn.execute("UPDATE meta SET value=7 WHERE key='last_number'")
    conn.execute("INSERT INTO puzzle_posts (id, platform, chat_id, kind, day, variant, puzzle_id, posted_at)"
                 " VALUES (1, 'tg', 'g', 'daily', '2024-01-01', 'italian', 'p1', ?)", (T0,))
    conn.execute("INSERT INTO attempts (post_id, user_id, user_name, progress, misses, hints, started_at)"
                 " VALUES (1, 'a', 'A', '[]', 2, 0, ?)", (T0,))
    conn.close()


def test_the_files_are_the_schema_the_list_had_then_the_new_ones():
    files = migrations("sqlite")
    assert [m.number for m in files] == list(range(1, len(files) + 1))
    norm = [[" ".join(s.split()) for s in m.statements] for m in files]
    assert norm[:len(LEGACY_MIGRATIONS)] == [[" ".join(s.split()) for s in m] for m in LEGACY_MIGRATIONS]
    assert len(MIGRATIONS) == len(files) > len(LEGACY_MIGRATIONS)


def test_a_database_from_before_the_files_is_upgraded_in_place(tmp_path):
    path = tmp_path / "old.db"
    legacy_database(path)
    store = Storage(path)
    try:
        assert store.schema_version == len(MIGRATIONS)
        assert store.game(7).version == 3                               # rows kept
        attempt = store.attempt(1, "a")
        assert (attempt.misses, attempt.version) == (2, 1)             # the new column, filled in
        rows = store.db.execute("SELECT version, name FROM schema_version ORDER BY version").fetchall()
        assert [r[0] for r in rows] == list(range(1, len(MIGRATIONS) + 1)) and rows[0][1] == "initial"
        assert store.games.create(_new()) == 8                          # numbering continues
    finally:
        store.close()
    again = Storage(path)                                               # opening again changes nothing
    try:
        assert again.schema_version == len(MIGRATIONS)
    finally:
        again.close()


def _new():
    from bot.storage import NewGame
    return NewGame(platform="tg", chat_id="g", variant="italian", white_id="a", white_name="A", black_id="b",
                   black_name="B", fen="W:W21:B10", move_seconds=3600, created_at=T0)


def test_a_file_from_a_newer_bot_is_refused(tmp_path):
    path = tmp_path / "new.db"
    Storage(path).close()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("INSERT INTO schema_version (version, name, applied_at) VALUES (?, 'future', 0)",
                 (len(MIGRATIONS) + 1,))
    conn.close()
    with pytest.raises(StorageError, match="newer"):
        Storage(path)


def test_statements_are_split_at_line_ends_and_comments_dropped():
    assert split_statements("-- why\nCREATE TABLE a (x);\nINSERT INTO a\n  VALUES (1);\n") == (
        "CREATE TABLE a (x)", "INSERT INTO a\n  VALUES (1)")
