"""The PostgreSQL backend's own start: its migrations (the same history as SQLite's, number for
number), opening by URL, what it says when it cannot, and what a copy tool needs from it.

Everything here runs on the test process's throw-away server (tests/pg_server.py): skipped where
there is none, unless DRAUGHTS_REQUIRE_POSTGRES=1."""

from __future__ import annotations

import multiprocessing
import socket
import sys
import time
from pathlib import Path

import pytest
from test_contract import T0, P, populate

from bot.storage import SQLiteStore, StorageError
from bot.storage.migrations import migrations
from bot.storage.opening import open_store
from bot.storage.records import AttemptRecord, RatingRecord

psycopg = pytest.importorskip("psycopg")

from bot.storage.postgres import PostgresStore, redact_url  # noqa: E402


def versions(url: str) -> list[tuple[int, str, float]]:
    with psycopg.connect(url) as conn:
        return [tuple(row) for row in conn.execute("SELECT version, name, applied_at FROM schema_version "
                                                   "ORDER BY version")]


def test_the_postgresql_history_has_the_numbers_and_names_of_sqlites():
    assert [(m.number, m.name) for m in migrations("postgresql")] == [(m.number, m.name) for m in migrations("sqlite")]


def test_a_fresh_database_gets_every_version_and_a_second_open_changes_nothing(pg_url):
    store = PostgresStore(pg_url)
    try:
        assert store.schema_version == len(migrations("sqlite")) == 19
        secret = store.link_secret()
        dump = store.dump()
    finally:
        store.close()
    first = versions(pg_url)
    assert [(v, n) for v, n, _ in first] == [(m.number, m.name) for m in migrations("postgresql")]
    again = PostgresStore(pg_url)
    try:
        assert versions(pg_url) == first                   # no migration ran twice
        assert again.link_secret() == secret               # made once per database
        assert again.dump() == dump
    finally:
        again.close()


def test_a_database_from_a_newer_bot_is_refused_naming_both_versions(pg_url):
    PostgresStore(pg_url).close()
    ours = len(migrations("postgresql"))
    with psycopg.connect(pg_url) as conn:
        conn.execute("INSERT INTO schema_version (version, name, applied_at) VALUES (%s, 'future', 0)", (ours + 1,))
    with pytest.raises(StorageError) as refused:
        PostgresStore(pg_url)
    assert str(ours + 1) in str(refused.value) and str(ours) in str(refused.value)
    assert "newer bot" in str(refused.value)
    assert "\n" not in str(refused.value)


def _open_at(url: str, go_at: float) -> int:
    time.sleep(max(0.0, go_at - time.time()))
    store = PostgresStore(url, busy_timeout=30.0)
    try:
        return store.schema_version
    finally:
        store.close()


@pytest.mark.skipif(multiprocessing.get_all_start_methods()[0] != "fork", reason="the openers are forked")
def test_two_processes_opening_a_fresh_database_at_once_migrate_it_once(pg_url):
    from concurrent.futures import ProcessPoolExecutor

    go_at = time.time() + 0.5
    with ProcessPoolExecutor(3, mp_context=multiprocessing.get_context("fork")) as pool:
        opened = [f.result(timeout=120) for f in [pool.submit(_open_at, pg_url, go_at) for _ in range(3)]]
    ours = len(migrations("postgresql"))
    assert opened == [ours] * 3
    rows = versions(pg_url)
    assert [v for v, _n, _a in rows] == list(range(1, ours + 1))    # each once (and no error on the key)


def test_both_url_schemes_open_the_postgresql_backend(pg_url):
    with psycopg.connect(pg_url) as conn:
        default_mem = conn.execute("SHOW work_mem").fetchone()[0]
    with_options = "postgres://" + pg_url.split("://", 1)[1] + "?pool_max=3&options=-c%20work_mem%3D7MB"
    for url, mem in ((pg_url, default_mem), (with_options, "7MB")):
        store = open_store(url, 2.0)
        try:
            assert isinstance(store, PostgresStore) and store.busy_timeout == 2.0
            assert store.ensure_chat(P, "c", "group", T0).chat_id == "c"
            # Our lock timeout and the URL's own libpq options, both in force.
            [settings] = store._all("SELECT current_setting('lock_timeout') AS lock, "
                                    "current_setting('work_mem') AS mem")
            assert (settings["lock"], settings["mem"]) == ("2s", mem)
        finally:
            store.close()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_server_that_refuses_is_one_line_without_the_password():
    url = f"postgresql://draughts:s3cretpassw0rd@127.0.0.1:{_closed_port()}/nowhere"
    with pytest.raises(StorageError) as refused:
        open_store(url)
    message = str(refused.value)
    assert "s3cretpassw0rd" not in message and "\n" not in message
    assert "postgresql://draughts@127.0.0.1:" in message
    assert redact_url(url).startswith("postgresql://draughts@127.0.0.1:") and "s3cret" not in redact_url(url)


def test_without_psycopg_a_postgresql_url_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "psycopg", None)           # import psycopg raises ImportError
    with pytest.raises(StorageError) as missing:
        open_store("postgresql://nobody@127.0.0.1/none")
    assert "pip install '.[postgres]'" in str(missing.value)


def test_explicit_ids_then_reset_sequences_continue_above_them(pg_url):
    store = PostgresStore(pg_url)
    try:
        with psycopg.connect(pg_url) as conn:
            conn.execute("INSERT INTO outbox (id, platform, chat_id, payload, next_attempt_at, created_at) "
                         "VALUES (100, 'test', 'g', 'copied', 0, 0)")
            conn.execute("INSERT INTO puzzle_posts (id, platform, chat_id, kind, variant, puzzle_id, posted_at) "
                         "VALUES (40, 'test', 'g', 'personal', 'italian', 'p', 0)")
        store.reset_sequences()
        assert store.enqueue(P, "g", "new", T0) == 101
        assert store.create_personal_post(P, "g", "u", "italian", "p2", T0) == 41
    finally:
        store.close()


def test_the_same_calls_dump_the_same_on_both_backends(pg_url, tmp_path: Path):
    """dump() has one shape for both backends (tables, column order, values as SQLite holds them:
    0/1 booleans, JSON square lists, meta values typed), so two databases can be compared."""
    stores = [SQLiteStore(tmp_path / "same.db"), PostgresStore(pg_url)]
    try:
        for store in stores:
            populate(store)
            store.subscribe(P, "g", "09:00", "Europe/Rome", "italian", T0)
            post = store.claim_daily_post(P, "g", "2024-01-01", "italian", "p1", T0)
            store.remember_post_message(P, "g", "m", post)
            store.set_notify(P, "1001", True, T0)
            store.remember_challenge_message(P, "g", "c1", 1)
            store.save_rating(RatingRecord(P, "1001", "italian", 1612.5, 180.25, 0.06, 3, T0), "game:1")
            store.save_attempt(AttemptRecord(post, "1001", "Ana", (22, 18), 1, 0, T0, T0 + 5, 0.5, T0 + 5, 0))
        sqlite, postgres = (store.dump() for store in stores)
        assert list(sqlite) == list(postgres)
        assert sqlite == postgres
    finally:
        for store in stores:
            store.close()


def test_every_identity_column_of_the_migrations_is_reset_after_a_copy():
    """A copy inserts explicit ids; a table left out of IDENTITY_COLUMNS would hand out ids from 1
    again after it and collide with the copied rows (tournaments and storm runs were, once)."""
    import re

    from bot.storage.postgres import IDENTITY_COLUMNS

    folder = Path(__file__).resolve().parents[2] / "bot" / "storage" / "migrations" / "postgresql"
    declared = set()
    for sql in sorted(folder.glob("*.sql")):
        for table, body in re.findall(r"CREATE TABLE (?:IF NOT EXISTS )?(\w+)\s*\((.*?)\);", sql.read_text(), re.S):
            identities = re.findall(r"(\w+) bigint GENERATED BY DEFAULT AS IDENTITY", body)
            declared |= {(table, column) for column in identities}
    assert declared and declared == set(IDENTITY_COLUMNS)
