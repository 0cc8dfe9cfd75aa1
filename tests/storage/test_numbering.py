"""Challenges and games share one numbering: #N names one thing.

A game started from a challenge takes the challenge's number; a game started without one draws
from the same counter; a database from before keeps its old ids and numbers new things above both.
"""

from __future__ import annotations

import sqlite3

from catalog_text import says, tr
from storage_helpers import GROUP, PLATFORM, open_db

from bot.storage import MIGRATIONS, Storage

CHALLENGE = dict(platform=PLATFORM, chat_id=GROUP, challenger_id="ana", challenger_name="Ana",
                 target_username=None, variant="italian", color="white", move_seconds=3600, created_at=1.0)


def game_fields(white: str = "ana", black: str = "bob") -> dict:
    return {"platform": PLATFORM, "chat_id": GROUP, "variant": "italian", "start_fen": None,
            "white_id": white, "white_name": white.title(), "black_id": black, "black_name": black.title(),
            "fen": "W:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12", "move_seconds": 3600,
            "deadline_at": 3601.0, "created_at": 1.0}


def test_resign_hash_n_ends_the_game_that_came_from_challenge_n(bot):
    bot.say("ana", "/new italian white")          # challenge #1, withdrawn
    bot.say("ana", "/cancel #1")
    bot.say("ana", "/new italian white")          # challenge #2 -> the game Ana and Bob play
    started = bot.text("bob", "/accept #2")
    italian = tr("en", "variant.italian")
    assert says(started, "en", "game.started", id=2, variant=italian, white="Ana", black="Bob"), started
    bot.say("carol", "/new italian white")        # challenge #3 -> Carol and Dave
    started = bot.text("dave", "/accept #3")
    assert says(started, "en", "game.started", id=3, variant=italian, white="Carol", black="Dave"), started
    assert "#2" in bot.text("bob", "/resign #2")
    bot.say("bob", "/resign #2")                  # resigning asks to confirm: the second one does it
    assert bot.storage.game(2).status == "finished" and {bot.storage.game(2).white_id,
                                                            bot.storage.game(2).black_id} == {"ana", "bob"}
    assert bot.storage.game(3).status == "active"
    assert bot.storage.game(1) is None


def test_a_game_without_a_challenge_draws_from_the_same_numbers(database):
    storage = open_db(database, busy_timeout=5.0)
    try:
        first = storage.create_challenge(**CHALLENGE)
        game = storage.create_game(game_fields())
        second = storage.create_challenge(**CHALLENGE)
        assert (first, game, second) == (1, 2, 3)
        assert storage.challenge(game) is None and storage.game(game).white_id == "ana"
        assert storage.accept_challenge(second, game_fields("ana", "carol")) == second
        assert storage.create_game(game_fields()) == 4
    finally:
        storage.close()


# SQLite only from here: a file as the first release left it (before the shared numbering), which
# only SQLite databases can be (the PostgreSQL backend came later and starts at the full schema).
def old_database(path) -> None:
    """A database as the first release left it: ids of challenges and games overlap."""
    conn = sqlite3.connect(path)
    for statement in MIGRATIONS[0]:
        conn.execute(statement)
    conn.execute("PRAGMA user_version = 1")
    for cid, status, game_id in [(1, "accepted", 1), (2, "declined", None), (3, "accepted", 2),
                                 (4, "open", None), (9, "open", None)]:
        conn.execute("INSERT INTO challenges (id, platform, chat_id, challenger_id, challenger_name, variant, "
                     "color, move_seconds, status, created_at, game_id) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                     (cid, PLATFORM, GROUP, "ana", "Ana", "italian", "white", 3600, status, 1.0, game_id))
    for gid in (1, 2, 3, 4, 5):
        fields = dict(game_fields(), id=gid, version=0, ply=0, quiet_plies=0, status="active", reminded=0)
        names = ", ".join(fields)
        conn.execute(f"INSERT INTO games ({names}) VALUES ({', '.join('?' * len(fields))})", tuple(fields.values()))
    conn.commit()
    conn.close()


def test_migration_keeps_old_ids_and_numbers_new_things_above_both(tmp_path):
    path = tmp_path / "old.db"
    old_database(path)
    before = sqlite3.connect(path)
    old_rows = (before.execute("SELECT * FROM challenges ORDER BY id").fetchall(),
                before.execute("SELECT * FROM games ORDER BY id").fetchall())
    before.close()
    storage = Storage(path)
    try:
        assert storage.schema_version == len(MIGRATIONS)
        # Every old column keeps its value (later migrations only add columns after them).
        width = len(old_rows[1][0])
        assert ([tuple(r.values()) for r in storage.db.query("SELECT * FROM challenges ORDER BY id")],
                [tuple(r.values())[:width] for r in storage.db.query("SELECT * FROM games ORDER BY id")]) == old_rows
        # Above both maxima (challenges up to 9, games up to 5).
        assert storage.create_challenge(**CHALLENGE) == 10
        assert storage.create_game(game_fields()) == 11
        # An old open challenge whose number no game has keeps it...
        assert storage.accept_challenge(9, game_fields("ana", "bob")) == 9
        # ...and one whose number an old game already has gets a new number, never a clash.
        assert storage.accept_challenge(4, game_fields("ana", "carol")) == 12
        assert storage.game(4).white_id == "ana" and storage.game(12).black_id == "carol"
        assert storage.challenge(4).game_id == 12
    finally:
        storage.close()
    # Reopening runs no migration twice and keeps the counter.
    storage = Storage(path)
    try:
        assert storage.create_challenge(**CHALLENGE) == 13
    finally:
        storage.close()
