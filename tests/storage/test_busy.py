"""A database that stays locked by another process: every event still gets an answer.

Every test runs on both backends (the ``database`` and ``bot`` fixtures).  Another real connection
holds the write lock (SQLite: BEGIN IMMEDIATE; PostgreSQL: every table locked IN EXCLUSIVE MODE,
see storage_helpers.write_lock_held); the Storage under test waits its (short) busy
timeout and the service answers "busy, try again" instead of raising.  Commands that only read
take no write lock at all, so they answer normally while the lock is held.
"""

from __future__ import annotations

import logging
import threading
import time

import pytest
from catalog_text import says, to_move, tr
from storage_helpers import GROUP, PLATFORM, Bot, event, open_db, write_lock_held

from bot.i18n import t
from bot.storage import StorageBusy


def test_storage_raises_storage_busy_after_its_timeout(database):
    storage = open_db(database, busy_timeout=0.3)
    try:
        with write_lock_held(database):
            with pytest.raises(StorageBusy):
                storage.create_challenge(platform="p", chat_id="c", challenger_id="a", challenger_name="A",
                                         target_username=None, variant="italian", color="white",
                                         move_seconds=60, created_at=1.0)
        # The connection is usable again once the lock is gone.
        assert storage.ensure_chat("p", "c", "group", 1.0).chat_id == "c"
    finally:
        storage.close()


def test_a_write_waits_for_a_lock_let_go_within_its_busy_timeout(database):
    """It waits (rather than failing at once): the lock goes while the write waits, and it is done."""
    storage = open_db(database, busy_timeout=30.0)
    done: list = []
    try:
        with write_lock_held(database):
            writer = threading.Thread(target=lambda: done.append(storage.ensure_chat("p", "c", "group", 1.0)))
            writer.start()
            time.sleep(0.2)                      # the write is now waiting for the lock
            waited = writer.is_alive() and not done
        writer.join(timeout=30)
        assert waited
        assert [chat.chat_id for chat in done] == ["c"]
    finally:
        storage.close()


def test_known_chat_and_unchanged_player_take_no_write_lock(database):
    storage = open_db(database, busy_timeout=0.2)
    try:
        storage.ensure_chat("p", "c", "group", 1.0)
        storage.save_player("p", "u", "Ana", "ana", "en", 1.0)
        with write_lock_held(database):
            assert storage.ensure_chat("p", "c", "group", 2.0).created_at == 1.0
            assert storage.save_player("p", "u", "Ana", "ana", "en", 2.0) is False
            with pytest.raises(StorageBusy):
                storage.save_player("p", "u", "Ana Maria", "ana", "en", 2.0)
            with pytest.raises(StorageBusy):
                storage.ensure_chat("p", "new", "group", 2.0)
        assert storage.save_player("p", "u", "Ana Maria", "ana", "en", 3.0) is True
        assert storage.player("p", "u").name == "Ana Maria"
    finally:
        storage.close()


def test_read_only_commands_answer_normally_while_the_lock_is_held(database, now):
    bot = Bot(database, now, busy_timeout=2.0)
    try:
        game = bot.new_game()
        bot.say("ana", "/games")
        with write_lock_held(bot.path):
            for text in ("/games", f"/board #{game}", "/help", "/rules", f"/pdn #{game}"):
                # No write attempted: one would have waited out the busy timeout and answered busy.
                answer = bot.text("ana", text)
                assert t("en", "error.busy") not in answer and answer, text
            listed = bot.text("bob", "/games")
            assert says(listed, "en", "games.line", id=game, variant=tr("en", "variant.italian"), white="Ana",
                        black="Bob"), listed
    finally:
        bot.storage.close()


def test_a_write_while_locked_answers_busy_and_changes_nothing(bot):
    game = bot.new_game()
    with write_lock_held(bot.path):
        [reply] = bot.say("ana", "/m 22-18")
        assert reply.text == t("en", "error.busy") and not reply.private
        [reply] = bot.say("carol", "/new spanish")
        assert reply.text == t("en", "error.busy")
    assert bot.storage.game(game).ply == 0
    assert bot.storage.open_challenges(PLATFORM, GROUP) == []
    # Once the lock is gone the same messages work.
    played = bot.text("ana", "/m 22-18")
    assert says(played, "en", "move.played", name="Ana", move="22-18", id=game), played
    created = bot.text("carol", "/new spanish")
    [challenge] = bot.storage.open_challenges(PLATFORM, GROUP)
    assert says(created, "en", "new.open", id=challenge.id, name="Carol", variant=tr("en", "variant.spanish")), created


def test_a_button_press_while_locked_gets_a_private_busy_answer(bot):
    game = bot.new_game()
    row = bot.storage.game(game)
    with write_lock_held(bot.path):
        replies = bot.service.handle(event("ana", action=f"d:{game}:{row.ply}:22:18"))
    assert [(r.text, r.private) for r in replies] == [(t("en", "error.busy"), True)]
    assert bot.storage.game(game).ply == 0


def test_the_busy_answer_is_in_the_users_language(bot):
    with write_lock_held(bot.path):
        assert bot.text("ana", "/new", language="es-ES", chat="nuevo") == t("es", "error.busy")
        assert bot.text("ana", "/new", language="it", chat="nuovo") == t("it", "error.busy")
    assert t("es", "error.busy") != t("en", "error.busy") != t("it", "error.busy")


def test_a_new_chat_while_locked_gets_the_busy_answer(bot):
    with write_lock_held(bot.path):
        assert bot.text("ana", "/games", chat="never-seen") == t("en", "error.busy")
    assert bot.text("ana", "/games", chat="never-seen") == tr("en", "games.empty")


def test_tick_survives_a_held_lock_and_does_the_work_afterwards(bot, now, caplog):
    game = bot.new_game(extra="1h")
    now[0] += 2 * 3600
    with write_lock_held(bot.path), caplog.at_level(logging.WARNING, logger="bot"):
        assert bot.service.tick(platform=PLATFORM) == []
    assert any("busy" in r.getMessage() for r in caplog.records)
    assert bot.storage.game(game).status == "active"
    [out] = bot.service.tick(platform=PLATFORM)
    assert says(out.reply.text, "en", "result.win.time", winner="Bob", loser="Ana"), out.reply.text
    assert bot.storage.game(game).status == "finished"


def test_a_chat_id_that_cannot_be_stored_still_gets_an_answer(bot, bot_errors, monkeypatch):
    # The record holds the unencodable chat id: pytest's own log capture (on the root logger) would
    # put it in the test's report, which xdist cannot send to its controller (the worker crashed).
    # bot_errors listens on "bot" itself and still gets it.
    monkeypatch.setattr(logging.getLogger("bot"), "propagate", False)
    replies = bot.service.handle(event("ana", text="/games", chat="bad\udcffid"))
    assert [r.text for r in replies] == [t("en", "error.internal")]
    # The bug is logged for us (and this test expects exactly that one record).
    assert len(bot_errors) == 1 and "handler failed" in bot_errors[0].getMessage()
    bot_errors.clear()
    assert bot.text("ana", "/games") == tr("en", "games.empty")


def test_reads_do_not_queue_behind_a_write_waiting_for_the_lock(database, now):
    """Adapters run the service on several threads: while one event's write waits for the lock,
    another chat's read-only command must not wait with it."""
    bot = Bot(database, now, busy_timeout=30.0)
    try:
        game = bot.new_game()
        bot.say("carol", "/games")
        with write_lock_held(bot.path):
            waiting = threading.Thread(target=bot.say, args=("ana", "/m 22-18"))
            waiting.start()
            time.sleep(0.2)                      # the move is now waiting for the lock
            answer = bot.text("carol", f"/board #{game}")
            # Answered while the move still waits (it waits until the lock goes, up to 30 s).
            still_waiting = waiting.is_alive()
        waiting.join(timeout=30)
        assert to_move("en", "Ana", "white").search(answer), answer
        assert still_waiting
        assert bot.storage.game(game).ply == 1            # the move went through once the lock was gone
    finally:
        bot.storage.close()


def test_concurrent_writes_under_a_held_lock_each_answer_within_one_timeout(database, now):
    """Four new players open challenges at once while the lock is held: each hears "busy" after
    about one busy timeout, not after the timeouts of every event queued ahead of it (nor after a
    second wait for refreshing the player's name)."""
    bot = Bot(database, now, busy_timeout=1.0)
    spans: dict[str, tuple[float, float]] = {}
    answers: dict[str, str] = {}

    def challenge(user: str) -> None:
        started = time.monotonic()
        answers[user] = bot.text(user, "/new spanish")
        spans[user] = (started, time.monotonic())

    try:
        with write_lock_held(bot.path):
            threads = [threading.Thread(target=challenge, args=(u,)) for u in ("ana", "bob", "carol", "dan")]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=30)
        assert set(answers.values()) == {t("en", "error.busy")}
        # Side by side: every wait began before any ended (queued one behind another, the last
        # would begin only when the one ahead gave up).
        assert max(start for start, _ in spans.values()) < min(end for _, end in spans.values()), spans
        # One wait each, not a second one for the player's name: under two busy timeouts.
        assert max(end - start for start, end in spans.values()) < 2 * 1.0, spans
    finally:
        bot.storage.close()


def test_a_command_that_lost_a_compare_and_set_runs_again_and_answers_as_usual(bot, monkeypatch):
    """StorageContention means the unit of work kept nothing: the service runs the command again
    (the contention is injected below the service, in the store, once)."""
    from bot.storage import StorageContention

    real = bot.storage.set_notify
    runs = []

    def contended_once(*args, **kwargs):
        runs.append(1)
        if len(runs) == 1:
            raise StorageContention("lost a compare-and-set")
        return real(*args, **kwargs)

    monkeypatch.setattr(bot.storage, "set_notify", contended_once)
    assert bot.text("ana", "/notify on") == t("en", "notify.on")
    assert len(runs) == 2 and bot.storage.notify_setting(PLATFORM, "ana").private is True
