"""Puzzles from the players' own games in storage (``store.own_puzzles``; issue 33), checked against
every backend of the contract suite (test_contract.BACKENDS): the queue of finished games to scan,
claimed with a lease so each game is scanned once by one process, the puzzles found with their
Leitner boxes (a review is a compare-and-set), and the reminders (one claim per day)."""

from __future__ import annotations

import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from storage_helpers import give_back
from test_contract import BACKENDS, OTHER, T0, P

from bot.storage import Store
from bot.storage.opening import open_store
from bot.storage.repositories import NewOwnPuzzle, OwnReview

DAY = 86400.0


@pytest.fixture(params=[factory for _, factory in BACKENDS], ids=[name for name, _ in BACKENDS])
def store(request, tmp_path: Path):
    s = request.param(tmp_path)
    yield s
    give_back(s)


def _puzzle(user: str = "ana", game: int = 7, ply: int = 12, at: float = T0, platform: str = P) -> NewOwnPuzzle:
    return NewOwnPuzzle(platform=platform, user_id=user, variant="italian", puzzle='{"id":"x"}', game_id=game,
                        ply=ply, move_number=7, opponent="Bob", kind="missed", now=at)


def test_a_game_is_queued_once_and_claimed_by_one_owner_until_its_lease_ends(store: Store) -> None:
    scans = store.own_puzzles
    assert scans.queue_scan(7, P, T0)
    assert not scans.queue_scan(7, P, T0 + 5)          # finished once, queued once
    row = scans.scan(7)
    assert row is not None and (row.status, row.claimed_by, row.attempts, row.queued_at) == ("pending", None, 0, T0)
    assert scans.scan(8) is None
    [claimed] = scans.claim_scans("a", T0 + 1, T0 + 100)
    assert (claimed.game_id, claimed.claimed_by, claimed.lease_until, claimed.attempts) == (7, "a", T0 + 100, 1)
    assert scans.claim_scans("b", T0 + 50, T0 + 150) == []
    # The lease ran out (the process died): the next claimer takes it.
    [again] = scans.claim_scans("b", T0 + 100, T0 + 200)
    assert (again.claimed_by, again.attempts) == ("b", 2)
    # The first owner's late result is refused; the holder's is kept.
    assert not scans.finish_scan(7, "a", T0 + 101, 3)
    assert scans.finish_scan(7, "b", T0 + 102, 2)
    done = scans.scan(7)
    assert done is not None and (done.status, done.found, done.done_at, done.claimed_by) == ("done", 2, T0 + 102, None)
    assert scans.claim_scans("c", T0 + 1000, T0 + 2000) == []
    assert not scans.finish_scan(7, "b", T0 + 103, 5)


def test_claims_take_the_oldest_games_of_the_platform_and_a_release_puts_one_back(store: Store) -> None:
    scans = store.own_puzzles
    for game in (9, 3, 5):
        scans.queue_scan(game, P, T0)
    scans.queue_scan(4, OTHER, T0)
    assert [r.game_id for r in scans.claim_scans("a", T0, T0 + 60, limit=2, platform=P)] == [3, 5]
    assert scans.release_scan(3, "a")
    assert not scans.release_scan(3, "a")
    assert not scans.release_scan(9, "a")                # never held
    row = scans.scan(3)
    assert row is not None and (row.claimed_by, row.attempts, row.status) == (None, 0, "pending")
    assert [r.game_id for r in scans.claim_scans("b", T0, T0 + 60, limit=5)] == [3, 4, 9]
    assert scans.finish_scan(4, "b", T0 + 1, 0, failed=True)
    failed = scans.scan(4)
    assert failed is not None and failed.status == "failed"


def test_a_players_puzzle_is_kept_once_per_game_and_ply_and_due_at_once(store: Store) -> None:
    own = store.own_puzzles
    first = own.add(_puzzle())
    assert first is not None
    assert own.add(_puzzle(at=T0 + 9)) is None          # the same game scanned again adds nothing
    other = own.add(_puzzle("bob", ply=13))
    assert other is not None and other != first
    row = own.get(first)
    assert row is not None
    assert (row.user_id, row.variant, row.puzzle, row.game_id, row.ply, row.move_number, row.opponent, row.kind) == (
        "ana", "italian", '{"id":"x"}', 7, 12, 7, "Bob", "missed")
    assert (row.box, row.due_at, row.created_at, row.reviews, row.lapses, row.retired) == (0, T0, T0, 0, 0, False)
    assert own.get(first + 1000) is None
    assert [r.id for r in own.due(P, "ana", T0)] == [first]
    assert own.due(P, "ana", T0 - 1) == []
    assert own.due(OTHER, "ana", T0) == []


def test_a_review_is_a_compare_and_set_and_moves_the_puzzle_out_of_the_due_list(store: Store) -> None:
    own = store.own_puzzles
    first = own.add(_puzzle(ply=10))
    second = own.add(_puzzle(ply=20, at=T0 + 5))
    assert first is not None and second is not None
    assert [r.id for r in own.due(P, "ana", T0 + 10, limit=5)] == [first, second]
    assert [r.id for r in own.due(P, "ana", T0 + 10)] == [first]
    assert own.review(first, OwnReview(reviews=0, box=1, due_at=T0 + DAY, lapses=0, retired=False))
    # A second review read at the same count (another process, a double press) writes nothing.
    assert not own.review(first, OwnReview(reviews=0, box=1, due_at=T0 + 2 * DAY, lapses=0, retired=False))
    row = own.get(first)
    assert row is not None and (row.reviews, row.box, row.due_at) == (1, 1, T0 + DAY)
    assert [r.id for r in own.due(P, "ana", T0 + 10, limit=5)] == [second]
    assert [r.id for r in own.of_player(P, "ana")] == [second, first]      # the soonest due first
    assert own.review(second, OwnReview(reviews=0, box=4, due_at=T0 + 9, lapses=2, retired=True))
    assert [r.id for r in own.of_player(P, "ana")] == [first]
    assert [r.id for r in own.of_player(P, "ana", include_retired=True)] == [second, first]
    assert own.due(P, "ana", T0 + 100 * DAY, limit=5)[0].id == first      # a retired one is never due


def test_a_reminder_is_turned_on_and_off_and_claimed_once_per_send(store: Store) -> None:
    own = store.own_puzzles
    assert own.reminder(P, "ana") is None
    own.set_reminder(P, "ana", "chat-1", "es", True, T0)
    row = own.reminder(P, "ana")
    assert row is not None and (row.chat_id, row.language, row.active, row.last_at, row.updated_at) == (
        "chat-1", "es", True, None, T0)
    assert [r.user_id for r in own.reminders(P, T0)] == ["ana"]
    assert own.reminders(OTHER, T0) == []
    assert own.claim_reminder(P, "ana", None, T0 + 10)
    assert not own.claim_reminder(P, "ana", None, T0 + 11)        # another process wrote it
    assert own.reminders(P, T0 + 10) == []                         # not again before a day passed
    assert [r.user_id for r in own.reminders(None, T0 + 11)] == ["ana"]
    assert own.claim_reminder(P, "ana", T0 + 10, T0 + 11 + DAY)
    # Turned on again elsewhere: the new chat and language, the last reminder kept.
    own.set_reminder(P, "ana", "chat-2", "it", True, T0 + 20)
    moved = own.reminder(P, "ana")
    assert moved is not None and (moved.chat_id, moved.language, moved.last_at) == ("chat-2", "it", T0 + 11 + DAY)
    own.set_reminder(P, "ana", "chat-2", "it", False, T0 + 30)
    off = own.reminder(P, "ana")
    assert off is not None and not off.active
    assert own.reminders(P, T0 + 100 * DAY) == []
    assert not own.claim_reminder(P, "ana", T0 + 11 + DAY, T0 + 40 * DAY)   # off: nothing is claimed



def test_a_reminder_follows_its_chat_when_the_chat_moves(store: Store) -> None:
    """A Telegram group that became a supergroup has a new id: the reminders set there go along."""
    store.own_puzzles.set_reminder(P, "ana", "chat-1", "es", True, T0)
    store.own_puzzles.set_reminder(P, "bob", "chat-2", "en", True, T0)
    store.players.move_chat(P, "chat-1", "chat-9")
    ana, bob = store.own_puzzles.reminder(P, "ana"), store.own_puzzles.reminder(P, "bob")
    assert ana is not None and bob is not None and (ana.chat_id, bob.chat_id) == ("chat-9", "chat-2")


# -- two processes ---------------------------------------------------------------------------------


def _claim_all(url: str, owner: str, go_at: float) -> list[int]:
    """Claim scans one at a time until none is left, as a bot's loop does; the games claimed."""
    store = open_store(url, 30.0)
    try:
        time.sleep(max(0.0, go_at - time.time()))
        mine: list[int] = []
        while True:
            got = store.own_puzzles.claim_scans(owner, T0, T0 + 600)
            if not got:
                return mine
            for row in got:
                assert store.own_puzzles.finish_scan(row.game_id, owner, T0 + 1, 0)
                mine.append(row.game_id)
    finally:
        store.close()


@pytest.mark.skipif(multiprocessing.get_all_start_methods()[0] != "fork", reason="the workers are forked")
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_two_processes_claiming_at_once_scan_each_game_once(backend: str, tmp_path: Path) -> None:
    if backend == "postgres":
        from pg_server import new_database_url

        url = new_database_url()
    else:
        url = str(tmp_path / "shared.db")
    store = open_store(url, 30.0)
    try:
        for game in range(1, 41):
            store.own_puzzles.queue_scan(game, P, T0)
    finally:
        store.close()
    go_at = time.time() + 0.5
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as pool:
        futures = [pool.submit(_claim_all, url, owner, go_at) for owner in ("one", "two")]
        results = [f.result(timeout=120) for f in futures]
    assert sorted(results[0] + results[1]) == list(range(1, 41))


def test_a_copy_that_wrote_explicit_ids_continues_above_them_on_postgresql(tmp_path: Path) -> None:
    pytest.importorskip("psycopg")
    import psycopg
    from pg_server import new_database_url

    from bot.storage.postgres import PostgresStore

    url = new_database_url()
    store = PostgresStore(url)
    try:
        with psycopg.connect(url) as conn:
            conn.execute("INSERT INTO own_puzzles (id, platform, user_id, variant, puzzle, game_id, ply, move_number, "
                         "opponent, kind, due_at, created_at) VALUES (50, 'test', 'ana', 'italian', '{}', 1, 2, 2, "
                         "'Bob', 'missed', 0, 0)")
        store.reset_sequences()
        assert store.own_puzzles.add(_puzzle(game=2)) == 51
    finally:
        give_back(store)
