"""A full disk: every command that writes is answered "the bot's disk is full, try later" in the
user's language, with nothing changed and no traceback; the full disk is logged once a minute at
most, not once per event; and the bot works again by itself when there is room.

The disk is "filled" with PRAGMA max_page_count on the store's own write connection: SQLite then
refuses to grow the file with SQLITE_FULL, the error a full disk gives."""

from __future__ import annotations

import logging
import sqlite3

import pytest

import bot.storage.sqlite as sqlite_store
from bot.i18n import t
from bot.rules import Game

UNLIMITED = 1_073_741_823


def fill_the_disk(chat) -> None:
    """No room for one more page; the moves table's last pages filled up with another game's
    moves, so that the next move needs a new page."""
    game_id = chat.new_game("cid", "dan")
    db = chat.storage.db
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    db.execute(f"PRAGMA max_page_count = {pages}")
    for ply in range(1000, 100_000):
        try:
            db.execute("INSERT INTO moves (game_id, ply, notation, fen_after, by_user, played_at) "
                       "VALUES (?, ?, '21-17', 'W:W21:B1', 'dan', 0)", (game_id, ply))
        except sqlite3.OperationalError as err:
            assert "full" in str(err)
            return
    raise AssertionError("the database never filled up")


def test_a_full_disk_is_answered_in_the_users_language_logged_once_and_recovered_from(chat, bot_errors, caplog,
                                                                                    monkeypatch):
    caplog.set_level(logging.INFO, logger="bot")
    gid = chat.new_game()
    fill_the_disk(chat)
    full = t("es", "error.disk_full")
    # Moves fit in the pages the file has until one needs a new page: that one meets the full disk.
    for _ in range(200):
        row = chat.game(gid)
        assert row.status == "active", "the game ended before the disk was full"
        move = str(Game(row.variant, row.fen).position.legal_moves()[0])
        text = chat.text(chat.to_move(gid), f"/m {move}", language="es")
        if text == full:
            break
        assert chat.game(gid).ply == row.ply + 1, text
    else:
        pytest.fail("no move met the full disk")
    stuck = chat.game(gid)
    assert stuck.ply == row.ply and len(chat.moves(gid)) == row.ply          # nothing written
    # Every try meets the same full disk; reading still works.
    for _ in range(30):
        assert chat.text(chat.to_move(gid), f"/m {move}", language="it") == t("it", "error.disk_full")
    assert "#" in chat.text("ana", "/games")
    assert chat.text(chat.to_move(gid), f"/m {move}") == t("en", "error.disk_full")
    assert chat.game(gid).version == stuck.version
    full_lines = [r for r in bot_errors if "disk is full" in r.getMessage()]
    assert len(full_lines) == len(bot_errors) == 1, [r.getMessage() for r in bot_errors]
    assert not any(r.exc_info for r in caplog.records), "no traceback for a full disk"
    # A minute later it is logged again (once).
    monkeypatch.setattr(sqlite_store, "FULL_LOG_SECONDS", 0.0)
    chat.text(chat.to_move(gid), f"/m {move}")
    assert len(bot_errors) == 2
    bot_errors.clear()
    # Room again: the same move is played, with nothing to restart.
    chat.storage.db.execute(f"PRAGMA max_page_count = {UNLIMITED}")
    text = chat.text(chat.to_move(gid), f"/m {move}")
    assert text != t("en", "error.disk_full") and chat.game(gid).ply == stuck.ply + 1, text
    assert any("writes work again" in r.getMessage() for r in caplog.records)
    assert bot_errors == []


def test_the_deadline_round_waits_a_full_disk_out_without_a_traceback(chat, now, bot_errors, caplog):
    caplog.set_level(logging.INFO, logger="bot")
    gid = chat.new_game(extra="1d")
    fill_the_disk(chat)
    db = chat.storage.db
    with pytest.raises(sqlite3.OperationalError, match="full"):
        for n in range(100_000):       # the outbox too: a loss on time has nowhere to go
            db.execute("INSERT INTO outbox (platform, chat_id, payload, status, next_attempt_at, created_at) "
                       "VALUES ('elsewhere', ?, '{}', 'sent', 0, 0)", (str(n),))
    # Every round tries the clocks and gives up quietly; the next tries again.
    for _ in range(40):
        now[0] += 3600
        assert chat.service.run_due("test") == 0
    assert chat.game(gid).status == "active"
    assert not any(r.exc_info for r in caplog.records), "no traceback for a full disk"
    assert len(bot_errors) == 1
    bot_errors.clear()
    chat.storage.db.execute(f"PRAGMA max_page_count = {UNLIMITED}")
    assert chat.service.run_due("test") == 2          # both games' losses on time, each once
    assert chat.game(gid).status == "finished"


def test_the_bots_move_meets_a_full_disk_quietly_and_is_played_when_there_is_room(held, bot_errors, caplog):
    chat, executor = held
    caplog.set_level(logging.INFO, logger="bot")
    game = chat.say("ana", "/play italian black level 1")[0].game_id
    fill_the_disk(chat)
    assert executor.run_all() == 1                  # the engine answers; its move has nowhere to go
    assert chat.game(game).ply == 0
    assert not any(r.exc_info for r in caplog.records), "no traceback for a full disk"
    assert len(bot_errors) == 1 and "disk is full" in bot_errors[0].getMessage()
    bot_errors.clear()
    chat.storage.db.execute(f"PRAGMA max_page_count = {UNLIMITED}")
    chat.service.run_due("test")                    # the next round looks at the game again
    assert executor.run_all() == 1
    assert chat.game(game).ply == 1 and chat.moves(game)[0].by_user == "bot:engine"
