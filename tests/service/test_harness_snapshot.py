"""The "changes nothing" check of the service tests (``ChatHarness.snapshot``) sees a change in
every table of the database, including a table added after the check was written."""

from __future__ import annotations

import sqlite3

import pytest
from harness import NOTED_BY_EVERY_EVENT


def _tables(conn: sqlite3.Connection) -> list[str]:
    return [name for (name,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]


def _insert_a_row(conn: sqlite3.Connection, table: str) -> None:
    """One new row in ``table``, whatever its columns: a value of each declared type, unlikely to
    clash with a key in use (foreign keys are not checked on this connection)."""
    columns = conn.execute(f"PRAGMA table_info([{table}])").fetchall()
    values = []
    for _cid, _name, decl, _notnull, _default, _pk in columns:
        kind = (decl or "").upper()
        values.append(987_654_321 if "INT" in kind else 9.87654321e8 if ("REAL" in kind or "FLOA" in kind)
                      else "snapshot-probe")
    names = ", ".join(f"[{c[1]}]" for c in columns)
    marks = ", ".join("?" for _ in columns)
    conn.execute(f"INSERT INTO [{table}] ({names}) VALUES ({marks})", values)


def test_the_snapshot_sees_a_new_row_in_every_table(chat):
    game = chat.new_game()
    chat.play(game, ["22-18"])
    conn = sqlite3.connect(chat.db_path, isolation_level=None)
    try:
        conn.execute("CREATE TABLE added_later (key TEXT PRIMARY KEY, value INTEGER NOT NULL)")
        tables = _tables(conn)
        assert {"games", "moves", "outbox", "meta", "added_later"} <= set(tables)
        unseen = []
        for table in tables:
            before = chat.snapshot()
            _insert_a_row(conn, table)
            if chat.snapshot() == before:
                unseen.append(table)
        assert unseen == []
    finally:
        conn.close()


@pytest.mark.parametrize("table", NOTED_BY_EVERY_EVENT)
def test_the_snapshot_sees_a_changed_or_removed_player_or_chat(chat, table):
    chat.new_game()
    with sqlite3.connect(chat.db_path, isolation_level=None) as conn:
        before = chat.snapshot()
        conn.execute(f"UPDATE [{table}] SET language = 'xx' WHERE rowid = (SELECT min(rowid) FROM [{table}])")
        assert chat.snapshot() != before
        changed = chat.snapshot()
        conn.execute(f"DELETE FROM [{table}] WHERE rowid = (SELECT min(rowid) FROM [{table}])")
        assert chat.snapshot() != changed
    conn.close()


def test_a_sender_and_chat_noted_by_a_rejected_input_are_no_change(chat):
    game = chat.new_game()
    before = chat.snapshot()
    assert chat.say("carol", f"/m #{game} 22-18", chat=chat.chat_id, language="it")    # not her game
    chat.say("ana", "/m 23-19", chat="other-chat")                                     # no game there
    chat.say("bob", "/board", language="es")                                           # refreshes his language
    after = chat.snapshot()
    assert after == before
    assert {row[1] for row in after["players"]} - {row[1] for row in before["players"]} == {"carol"}
    assert ("test", "bob", "Bob", "bob", "es") in {row[:5] for row in after["players"]}


def test_the_snapshot_names_every_table(chat):
    chat.new_game()
    with sqlite3.connect(chat.db_path) as conn:
        tables = _tables(conn)
    conn.close()
    assert sorted(chat.snapshot()) == tables
