"""How the PostgreSQL backend keeps ``transaction()`` serializable with row locks (docs/storage.md):
the races a unit can lose there, staged deterministically with two stores (two connection pools,
as two processes would have) on one database.

A unit on PostgreSQL reads from a snapshot taken at its first statement; a row another unit
changed and committed after that cannot be written by it.  That is a lost race: StorageContention
(run the unit again), or StaleGame when a move lost to another move.  Runs on the test process's
throw-away server (tests/pg_server.py)."""

from __future__ import annotations

import threading
import time

import pytest
from test_contract import T0, P, game_fields

from bot.storage import StaleGame, StorageBusy, StorageContention, in_transaction
from bot.storage.records import AttemptRecord

pytest.importorskip("psycopg")

from bot.storage.postgres import PostgresStore  # noqa: E402


@pytest.fixture
def two(pg_url):
    first, second = PostgresStore(pg_url, busy_timeout=2.0), PostgresStore(pg_url, busy_timeout=2.0)
    yield first, second
    first.close()
    second.close()


def test_a_move_that_lost_to_another_move_inside_a_unit_is_a_stale_game(two):
    mine, theirs = two
    game = mine.game(mine.create_game(game_fields()))
    with pytest.raises(StaleGame), mine.transaction():
        assert mine.game(game.id).version == 0              # the unit's snapshot
        theirs.update_game(game.id, 0, {"ply": 1})          # another process's move, committed
        mine.update_game(game.id, 0, {"ply": 1})
    assert (mine.game(game.id).version, mine.game(game.id).ply) == (1, 1)


def test_a_change_that_kept_the_version_is_a_contention_and_the_unit_wins_when_run_again(two):
    mine, theirs = two
    game_id = mine.create_game(game_fields())
    runs = []

    def move() -> None:
        runs.append(1)
        read = mine.game(game_id)
        if len(runs) == 1:
            assert theirs.mark_reminded(game_id, read.version) is True     # the reminder goes out meanwhile
        mine.update_game(game_id, read.version, {"ply": 1})

    in_transaction(mine, move)
    assert len(runs) == 2
    after = mine.game(game_id)
    assert (after.version, after.ply, after.reminded) == (1, 1, True)


def test_an_attempt_written_after_the_units_snapshot_is_a_contention(two):
    mine, theirs = two
    post = mine.claim_daily_post(P, "g", "2024-01-01", "italian", "p1", T0)
    mine.save_attempt(AttemptRecord(post, "u", "U", (), 0, 0, T0, None, None, None, 0))
    with pytest.raises(StorageContention), mine.transaction():
        read = mine.attempt(post, "u")
        theirs.save_attempt(AttemptRecord(post, "u", "U", (), 1, 0, T0, None, None, None, None))
        mine.save_attempt(AttemptRecord(post, "u", "U", (), 0, 1, T0, None, None, None, read.version))
    assert (mine.attempt(post, "u").misses, mine.attempt(post, "u").hints) == (1, 0)


def test_a_method_outside_any_unit_runs_again_by_itself(two):
    mine, theirs = two
    game_id = mine.create_game(game_fields())
    # A lost race outside a unit is retried inside the store: the caller sees the method's answer.
    assert mine.mark_reminded(game_id, 0) is True
    assert theirs.mark_reminded(game_id, 0) is False


def test_the_ratings_lock_is_held_to_the_end_of_the_unit(two):
    mine, theirs = two
    holding, order = threading.Event(), []

    def hold() -> None:
        with mine.transaction():
            mine.lock_ratings()
            holding.set()
            time.sleep(0.5)                     # the other unit is waiting for the lock by now
            order.append("holder ends")         # before its COMMIT, which lets the lock go

    thread = threading.Thread(target=hold)
    thread.start()
    holding.wait(5)
    with theirs.transaction():
        theirs.lock_ratings()
        order.append("waiter has it")
    thread.join(5)
    assert order == ["holder ends", "waiter has it"]


def test_a_ratings_lock_held_longer_than_the_busy_timeout_is_busy(pg_url):
    holder, waiter = PostgresStore(pg_url), PostgresStore(pg_url, busy_timeout=0.3)
    try:
        with holder.transaction():
            holder.lock_ratings()
            with pytest.raises(StorageBusy), waiter.transaction():
                waiter.lock_ratings()
        with waiter.transaction():
            waiter.lock_ratings()               # free again
    finally:
        holder.close()
        waiter.close()
