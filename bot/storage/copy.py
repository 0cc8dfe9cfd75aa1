"""Copying a SQLite database into PostgreSQL (``python -m bot db copy --to postgresql://...``).

Both databases are first brought to the same schema version by opening them as stores (each
runs its own numbered migrations, which share their numbers across dialects).  Then every table
is copied in one PostgreSQL transaction: either the whole database arrives or nothing does.  The
key that signs users' links and the ``#N`` counter travel with the data (they are rows of
``meta``), so links handed out and numbers shown before the move stay valid.

The copy checks itself: it counts the rows of every table on both sides and fails (rolling back)
when a count differs.  It refuses a target that already holds data unless told to replace it;
a target that holds exactly this copy already is reported as such and left alone, so running the
same copy twice is harmless.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .base import StorageError

# Written by every store on opening (not data): left out of the "is the target empty" question.
_OWN_META = ("opened_at", "link_secret", "last_number")
_SKIP = ("schema_version",)


@dataclass(frozen=True)
class TableCount:
    """One table's rows on both sides after a copy."""

    table: str
    source: int
    target: int


@dataclass(frozen=True)
class CopyResult:
    """What ``copy_sqlite_to_postgres`` did: ``copied`` False when the target already held this copy."""

    copied: bool
    tables: tuple[TableCount, ...]


class TargetNotEmpty(StorageError):
    """The target database holds data of its own (``replace`` not given)."""


def _source_tables(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' "
                        "ORDER BY name").fetchall()
    return [str(r[0]) for r in rows if r[0] not in _SKIP]


def _source_columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [str(r[1]) for r in conn.execute(f'PRAGMA table_info("{table}")').fetchall()]


def _target_columns(pg: Any, table: str) -> list[str]:
    rows = pg.execute("SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
                      "AND table_name = %s ORDER BY ordinal_position", (table,)).fetchall()
    return [str(r[0]) for r in rows]


def _target_data_rows(pg: Any, tables: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for table in tables:
        if table == "meta":
            count = pg.execute("SELECT count(*) FROM meta WHERE key <> ALL(%s)", (list(_OWN_META),)).fetchone()[0]
        else:
            count = pg.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
        counts[table] = int(count)
    return counts


def _count(pg: Any, sql: str) -> int:
    row = pg.execute(sql).fetchone()
    return int(row[0]) if row is not None else 0


def _value(value: Any) -> Any:
    # PostgreSQL's text COPY takes every value as text; bytes (none of ours, but a hand-edited
    # file may have one) as hex so nothing is lost silently.
    if isinstance(value, bytes):
        return "\\x" + value.hex()
    return value


def copy_sqlite_to_postgres(source: str | Path, target_url: str, replace: bool = False,
                            progress: Callable[[str, int], None] | None = None) -> CopyResult:
    """Copy the SQLite file ``source`` into the PostgreSQL database ``target_url``.

    TargetNotEmpty when the target holds other data and ``replace`` is False; StorageError (one
    line) when either side cannot be opened, their schemas differ, or a row count differs after
    the copy (nothing is kept then)."""
    from .postgres import IDENTITY_COLUMNS, PostgresStore, redact_url, split_url
    from .sqlite import SQLiteStore

    path = Path(source)
    if not path.exists():
        raise StorageError(f"there is no database {path}")
    # Opening migrates each side to the newest schema this bot knows (and checks the file).
    SQLiteStore(path).close()
    target = PostgresStore(target_url)
    try:
        target_version = target.schema_version
    finally:
        target.close()
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        source_version = int(conn.execute("SELECT max(version) FROM schema_version").fetchone()[0])
        if source_version != target_version:
            raise StorageError(f"schema versions differ: {path} has {source_version}, the target {target_version}")
        tables = _source_tables(conn)
        import psycopg

        try:
            pg_conn = psycopg.connect(split_url(target_url)[0], autocommit=True)
        except psycopg.Error as err:
            raise StorageError(f"database {redact_url(target_url)} cannot be reached: "
                               f"{' '.join(str(err).split())[:200]}") from None
        with pg_conn as pg, pg.transaction():
            source_counts = {t: int(conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]) for t in tables}
            held = _target_data_rows(pg, tables)
            if any(held.values()):
                if _same_copy(conn, pg, tables, source_counts):
                    return CopyResult(False, tuple(TableCount(t, source_counts[t], source_counts[t]) for t in tables))
                if not replace:
                    busy = ", ".join(f"{t} ({n})" for t, n in held.items() if n)
                    raise TargetNotEmpty(f"the target database is not empty: {busy}; "
                                         "use --replace to overwrite it with the copy")
            pg.execute("TRUNCATE " + ", ".join(f'"{t}"' for t in tables))
            for table in tables:
                columns = _source_columns(conn, table)
                missing = [c for c in columns if c not in _target_columns(pg, table)]
                if missing:
                    raise StorageError(f"table {table}: the target has no column {', '.join(missing)}")
                names = ", ".join(f'"{c}"' for c in columns)
                rows = conn.execute(f'SELECT {names} FROM "{table}" ORDER BY rowid')
                count = 0
                with pg.cursor().copy(f'COPY "{table}" ({names}) FROM STDIN') as copy:
                    for row in rows:
                        copy.write_row([_value(v) for v in row])
                        count += 1
                if progress is not None:
                    progress(table, count)
            # Rows came with their ids: identities continue above them.
            for table, column in IDENTITY_COLUMNS:
                pg.execute(f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), "
                           f"coalesce((SELECT max({column}) FROM {table}), 0) + 1, false)")
            counts = []
            for table in tables:
                copied = _count(pg, f'SELECT count(*) FROM "{table}"')
                counts.append(TableCount(table, source_counts[table], copied))
            wrong = [c for c in counts if c.source != c.target]
            if wrong:
                raise StorageError("row counts differ after the copy (nothing was kept): "
                                   + ", ".join(f"{c.table} {c.source} -> {c.target}" for c in wrong))
            return CopyResult(True, tuple(counts))
    finally:
        conn.close()


def _same_copy(conn: sqlite3.Connection, pg: Any, tables: list[str], counts: dict[str, int]) -> bool:
    """Whether the target holds exactly the source's rows already (an earlier run of this copy)."""
    for table in tables:
        if int(pg.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]) != counts[table]:
            return False
    for table in tables:
        columns = _source_columns(conn, table)
        if table == "meta":
            columns = [c for c in columns if c == "key"]      # opened_at changes on every start
        names = ", ".join(f'"{c}"' for c in columns)
        mine = sorted((tuple(_text(v) for v in row) for row in conn.execute(f'SELECT {names} FROM "{table}"')),
                      key=repr)
        theirs = sorted((tuple(_text(v) for v in row) for row in pg.execute(f'SELECT {names} FROM "{table}"')),
                        key=repr)
        if mine != theirs:
            return False
    return True


def _text(value: Any) -> Any:
    """A value compared across the two databases (a REAL column may hold 3 in one and 3.0 in the other)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
