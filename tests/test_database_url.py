"""Choosing the database (DATABASE_URL before DRAUGHTS_DB) and moving a SQLite database into
PostgreSQL with ``python -m bot db copy`` (issue 19), against a real throw-away PostgreSQL server.

The SQLite side is filled by the real service (typed commands, a fixed clock); the copy runs as an
operator runs it, in a subprocess; the copy is then checked row by row (``dump()`` of both stores)
and the bot goes on on PostgreSQL where it stopped on SQLite (the next ``#N``, the same key for
the links it handed out).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

from catalog_text import says

from bot.app import database_path, database_secrets
from bot.rules import Position
from bot.service import ChatEvent, GameService
from bot.storage import SQLiteStore

REPO = Path(__file__).resolve().parents[1]
T0 = 1_700_000_000.0


def test_database_url_comes_before_the_sqlite_file(monkeypatch):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("DRAUGHTS_DB", raising=False)
    assert database_path() == "draughts.db"
    monkeypatch.setenv("DRAUGHTS_DB", "/data/bot.db")
    assert database_path() == "/data/bot.db"
    monkeypatch.setenv("DATABASE_URL", "postgresql://bot@db.example/draughts")
    assert database_path() == "postgresql://bot@db.example/draughts"
    assert database_path("other.db") == "other.db"           # --db names it outright
    monkeypatch.setenv("DATABASE_URL", "  ")
    assert database_path() == "/data/bot.db"                 # set but empty: not a choice


def test_a_database_password_is_a_secret_in_every_form():
    assert set(database_secrets("postgresql://bot:s3cret%2Fpw@db:5432/x")) == {"s3cret%2Fpw", "s3cret/pw"}
    assert database_secrets("postgresql://bot@db/x") == []
    assert database_secrets("/var/lib/bot.db") == []


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_BOT_TOKEN") and k not in ("DATABASE_URL",
                                                                                          "DRAUGHTS_DB")}
    env.update(PYTHONPATH=str(REPO), **extra)
    return env


def bot(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bot", *args], capture_output=True, text=True, env=_env(**env),
                          cwd=REPO, timeout=120)


def test_an_unreachable_server_is_one_line_without_the_password(tmp_path):
    import socket

    with socket.socket() as sock:            # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"postgresql://bot:Hunter2Secret@127.0.0.1:{port}/draughts"
    done = bot("games", "list", DATABASE_URL=url)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), done.stderr
    assert "Hunter2Secret" not in done.stderr + done.stdout


class Chat:
    """The real service on a SQLite file, with a fixed clock."""

    def __init__(self, path: Path) -> None:
        self.now = [T0]
        self.storage = SQLiteStore(path)
        self.service = GameService(self.storage, clock=lambda: self.now[0], rng=random.Random(3))

    def say(self, user: str, text: str, chat: str = "g1") -> list:
        self.now[0] += 20
        return self.service.handle(ChatEvent(platform="test", chat_id=chat, user_id=user, user_name=user.title(),
                                             username=user, chat_kind="group", language="en", text=text,
                                             is_admin=True))

    def close(self) -> None:
        self.service.close()
        self.storage.close()


def filled_sqlite(path: Path) -> None:
    chat = Chat(path)
    try:
        chat.say("ana", "/new italian white")
        chat.say("bob", "/accept")
        for user, move in (("ana", "21-17"), ("bob", "10-13"), ("ana", "22-18")):
            chat.say(user, f"/m {move}")
        chat.say("cid", "/new spanish black", chat="g2")        # an open challenge
        chat.say("ana", "/new triestina white", chat="g3")
        chat.say("dan", "/accept", chat="g3")
        position = Position.start("triestina")
        for user in ("ana", "dan"):             # two plies: a game that counts for the ratings
            move = position.legal_moves()[0]
            chat.say(user, f"/m {move}", chat="g3")
            position = position.play(move)
        chat.say("ana", "/resign", chat="g3")
        chat.say("ana", "/resign", chat="g3")                    # confirmed: a finished, rated game
        chat.say("ana", "/daily on 08:00 Europe/Madrid italian", chat="g4")
        chat.say("ana", "/settings", chat="g1")
    finally:
        chat.close()


def _normal(value):
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def normalised(dump: dict[str, list[tuple]]) -> dict[str, list[tuple]]:
    skip_meta = {"opened_at"}
    out = {}
    for table, rows in dump.items():
        rows = [tuple(_normal(v) for v in row) for row in rows]
        if table == "meta":
            rows = [row for row in rows if row[0] not in skip_meta]
            rows = [(row[0], str(row[1])) for row in rows]
        out[table] = sorted(rows, key=repr)
    return out


def test_db_copy_moves_everything_checks_counts_and_is_safe_to_repeat(tmp_path, pg_url):
    from bot.storage.postgres import PostgresStore

    source = tmp_path / "bot.db"
    filled_sqlite(source)
    sqlite = SQLiteStore(source)
    before = sqlite.dump()
    secret = sqlite.link_secret()
    sqlite.close()

    done = bot("db", "copy", "--to", pg_url, "--from", str(source))
    assert done.returncode == 0, done.stderr
    assert "every count matches" in done.stdout
    for table in ("games", "moves", "challenges", "subscriptions", "ratings"):
        line = next(line for line in done.stdout.splitlines() if line.split()[:1] == [table])
        _, source_rows, target_rows = line.split()
        assert source_rows == target_rows and int(source_rows) > 0, line

    target = PostgresStore(pg_url)
    try:
        assert normalised(target.dump()) == normalised(before)
        assert target.link_secret() == secret            # links handed out before the move stay valid
    finally:
        target.close()

    # The same copy again: recognised, nothing done.
    again = bot("db", "copy", "--to", pg_url, "--from", str(source))
    assert again.returncode == 0, again.stderr
    assert "already holds this copy" in again.stdout

    # The bot goes on on PostgreSQL: the game continues, the next number is above every old one.
    store = PostgresStore(pg_url)
    service = GameService(store, clock=lambda: T0 + 10_000, rng=random.Random(1))
    try:
        def say(user: str, text: str, chat: str = "g1") -> str:
            return "\n".join(r.text for r in service.handle(ChatEvent(
                platform="test", chat_id=chat, user_id=user, user_name=user.title(), username=user,
                chat_kind="group", language="en", text=text)))
        row = store.active_games("test", "g1")[0]
        position = Position.from_fen("italian", row.fen)
        user = row.white_id if position.turn.name.startswith("W") else row.black_id
        move = position.legal_moves()[0]
        assert says(say(user, f"/m {move}"), "en", "move.played", move=move)
        assert len(store.moves(row.id)) == row.ply + 1
        highest = max([g.id for g in store.find_games()] + [c.id for c in store.find_challenges()])
        say("eve", "/new italian white", chat="g5")
        newest = max(c.id for c in store.find_challenges())
        assert newest == highest + 1
    finally:
        service.close()
        store.close()

    # Now the target has data of its own: refused without --replace, replaced with it.
    refused = bot("db", "copy", "--to", pg_url, "--from", str(source))
    assert refused.returncode == 1 and "not empty" in refused.stderr, refused.stderr + refused.stdout
    replaced = bot("db", "copy", "--to", pg_url, "--from", str(source), "--replace")
    assert replaced.returncode == 0, replaced.stderr
    target = PostgresStore(pg_url)
    try:
        assert normalised(target.dump()) == normalised(before)
    finally:
        target.close()


def test_db_copy_refuses_what_it_cannot_copy(tmp_path, pg_url):
    missing = bot("db", "copy", "--to", pg_url, "--from", str(tmp_path / "nothing.db"))
    assert missing.returncode == 2 and "there is no database" in missing.stderr
    not_pg = bot("db", "copy", "--to", str(tmp_path / "x.db"), "--from", str(tmp_path / "nothing.db"))
    assert not_pg.returncode == 2 and "postgresql://" in not_pg.stderr
