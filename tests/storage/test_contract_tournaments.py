"""Tournaments in storage (``store.tournaments``; issue 32), checked against every backend of the
contract suite (test_contract.BACKENDS): one unfinished tournament a chat, the compare-and-set
that keeps a round from being paired twice, a tournament found by its chat or its place, the
games of its rounds, and the due ones."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from storage_helpers import give_back
from test_contract import BACKENDS, GROUP, GROUP2, OTHER, T0, P

from bot.storage import SQLiteStore, StorageContention, Store
from bot.storage.records import TournamentGameRecord
from bot.storage.repositories import NewTournament, TournamentChange


@pytest.fixture(params=[factory for _, factory in BACKENDS], ids=[name for name, _ in BACKENDS])
def store(request, tmp_path: Path):
    s = request.param(tmp_path)
    yield s
    give_back(s)


def _new(chat: str = GROUP, platform: str = P, at: float = T0) -> NewTournament:
    return NewTournament(platform=platform, chat_id=chat, variant="italian", move_seconds=3600,
                         round_seconds=7 * 86400, state='{"v":1}', created_by="u1", created_at=at)


def test_a_new_tournament_is_registering_at_version_0(store: Store) -> None:
    tid = store.tournaments.create(_new())
    assert tid is not None
    row = store.tournaments.get(tid)
    assert row is not None
    assert (row.platform, row.chat_id, row.place, row.status, row.version) == (P, GROUP, None, "registering", 0)
    assert (row.variant, row.move_seconds, row.round_seconds, row.state) == ("italian", 3600, 7 * 86400, '{"v":1}')
    assert (row.round_deadline, row.created_by, row.created_at, row.finished_at) == (None, "u1", T0, None)
    assert store.tournaments.get(tid + 1000) is None


def test_a_chat_has_one_unfinished_tournament_and_a_second_writes_nothing(store: Store) -> None:
    first = store.tournaments.create(_new())
    assert store.tournaments.create(_new(at=T0 + 1)) is None
    assert [t.id for t in store.tournaments.find(P, GROUP)] == [first]
    # Another chat, or the same chat id on another platform, has its own.
    assert store.tournaments.create(_new(GROUP2)) is not None
    assert store.tournaments.create(_new(platform=OTHER)) is not None


def test_a_finished_tournament_leaves_room_for_the_next(store: Store) -> None:
    first = store.tournaments.create(_new())
    assert first is not None
    store.tournaments.save(first, 0, TournamentChange('{"v":2}', "finished", None, T0 + 9))
    second = store.tournaments.create(_new(at=T0 + 10))
    assert second is not None and second != first
    assert [t.id for t in store.tournaments.find(P, GROUP)] == [second, first]
    assert [t.id for t in store.tournaments.find(P, GROUP, status="finished")] == [first]
    assert [t.id for t in store.tournaments.find(limit=1)] == [second]
    assert store.tournaments.in_chat(P, GROUP).id == second  # type: ignore[union-attr]


def test_save_is_a_compare_and_set_on_the_version(store: Store) -> None:
    tid = store.tournaments.create(_new())
    assert tid is not None
    saved = store.tournaments.save(tid, 0, TournamentChange('{"v":2}', "running", T0 + 100))
    assert (saved.version, saved.state, saved.status, saved.round_deadline) == (1, '{"v":2}', "running", T0 + 100)
    with pytest.raises(StorageContention):
        store.tournaments.save(tid, 0, TournamentChange('{"v":3}', "running", T0 + 200))
    assert store.tournaments.get(tid).state == '{"v":2}'  # type: ignore[union-attr]


def test_a_failed_save_inside_a_transaction_keeps_nothing_of_it(store: Store) -> None:
    tid = store.tournaments.create(_new())
    assert tid is not None
    with pytest.raises(StorageContention), store.transaction():
        store.tournaments.add_game(TournamentGameRecord(41, tid, 1, "a", "b"))
        store.tournaments.save(tid, 5, TournamentChange('{"v":2}', "running", None))
    assert store.tournaments.games(tid) == []


def test_a_tournament_is_found_by_its_chat(store: Store) -> None:
    # A tournament's own place (a forum topic, a thread) is its chat: nothing else finds it.
    tid = store.tournaments.create(_new())
    assert tid is not None
    assert store.tournaments.in_chat(P, "thread-7") is None
    assert store.tournaments.get(tid).place is None  # type: ignore[union-attr]
    assert store.tournaments.in_chat(P, GROUP).id == tid  # type: ignore[union-attr]
    assert store.tournaments.in_chat(OTHER, GROUP) is None


def test_the_games_of_the_rounds(store: Store) -> None:
    tid = store.tournaments.create(_new())
    assert tid is not None
    for game in (TournamentGameRecord(12, tid, 2, "c", "a"), TournamentGameRecord(10, tid, 1, "a", "b"),
                 TournamentGameRecord(11, tid, 1, "c", "d")):
        store.tournaments.add_game(game)
    assert [(g.round, g.game_id) for g in store.tournaments.games(tid)] == [(1, 10), (1, 11), (2, 12)]
    assert store.tournaments.of_game(11) == TournamentGameRecord(11, tid, 1, "c", "d")
    assert store.tournaments.of_game(99) is None


def test_due_tournaments_are_the_running_ones_past_their_round_deadline(store: Store) -> None:
    a = store.tournaments.create(_new(GROUP))
    b = store.tournaments.create(_new(GROUP2))
    c = store.tournaments.create(_new(platform=OTHER))
    assert a is not None and b is not None and c is not None
    store.tournaments.save(a, 0, TournamentChange("{}", "running", T0 + 50))
    store.tournaments.save(b, 0, TournamentChange("{}", "running", T0 + 10))
    store.tournaments.save(c, 0, TournamentChange("{}", "running", T0 + 20))
    assert [t.id for t in store.tournaments.due(T0 + 5)] == []
    assert [t.id for t in store.tournaments.due(T0 + 60)] == [b, c, a]
    assert [t.id for t in store.tournaments.due(T0 + 60, P)] == [b, a]
    store.tournaments.save(b, 1, TournamentChange("{}", "finished", None, T0 + 30))
    assert [t.id for t in store.tournaments.due(T0 + 60, P)] == [a]


def test_two_stores_saving_one_version_at_once_only_one_wins(store: Store, tmp_path: Path) -> None:
    tid = store.tournaments.create(_new())
    assert tid is not None
    other = SQLiteStore(store.path) if isinstance(store, SQLiteStore) else type(store)(store.url)  # type: ignore
    won: list[int] = []
    lost: list[int] = []
    barrier = threading.Barrier(2)

    def save(s: Store, n: int) -> None:
        barrier.wait()
        try:
            s.tournaments.save(tid, 0, TournamentChange(f'{{"by":{n}}}', "running", None))
            won.append(n)
        except StorageContention:
            lost.append(n)

    try:
        threads = [threading.Thread(target=save, args=(s, n)) for n, s in enumerate((store, other))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        other.close()
    assert len(won) == 1 and len(lost) == 1
    row = store.tournaments.get(tid)
    assert row is not None and row.version == 1 and row.state == f'{{"by":{won[0]}}}'
