"""Storm runs in storage (``store.storm_runs``; issue 33), checked against every backend of the
contract suite (test_contract.BACKENDS): a new run at its first puzzle, the compare-and-set that
keeps two answers from counting twice, the columns a save may not touch, and the runs whose time
is over."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from storage_helpers import give_back
from test_contract import BACKENDS, GROUP, GROUP2, OTHER, T0, P

from bot.storage import SQLiteStore, StorageContention, Store
from bot.storage.repositories import NewStormRun, StormChange


@pytest.fixture(params=[factory for _, factory in BACKENDS], ids=[name for name, _ in BACKENDS])
def store(request, tmp_path: Path):
    s = request.param(tmp_path)
    yield s
    give_back(s)


def _new(user: str = "u1", at: float = T0, platform: str = P) -> NewStormRun:
    return NewStormRun(platform=platform, chat_id=GROUP, user_id=user, name="Ana", lang="es", variant="italian",
                       puzzles='["it-1","it-2"]', started_at=at, ends_at=at + 180)


def test_a_new_run_is_running_at_its_first_puzzle(store: Store) -> None:
    run_id = store.storm_runs.create(_new())
    row = store.storm_runs.get(run_id)
    assert row is not None
    assert (row.platform, row.chat_id, row.user_id, row.name, row.lang, row.variant) == (
        P, GROUP, "u1", "Ana", "es", "italian")
    assert (row.puzzles, row.started_at, row.ends_at) == ('["it-1","it-2"]', T0, T0 + 180)
    assert (row.current, row.moves, row.solved, row.missed, row.status, row.version, row.finished_at) == (
        0, "[]", 0, 0, "running", 0, None)
    assert store.storm_runs.get(run_id + 1000) is None
    assert store.storm_runs.create(_new("u2")) != run_id


def test_a_save_is_a_compare_and_set_on_the_version(store: Store) -> None:
    run_id = store.storm_runs.create(_new())
    saved = store.storm_runs.save(run_id, 0, StormChange(1, "[]", 1, 0, T0 + 180))
    assert (saved.current, saved.solved, saved.version) == (1, 1, 1)
    with pytest.raises(StorageContention):
        store.storm_runs.save(run_id, 0, StormChange(1, "[]", 0, 1, T0 + 170))
    row = store.storm_runs.get(run_id)
    assert row is not None and (row.solved, row.missed, row.ends_at, row.version) == (1, 0, T0 + 180, 1)
    ended = store.storm_runs.save(run_id, 1, StormChange(1, '["6-10"]', 1, 1, T0 + 170, "finished", T0 + 175))
    assert (ended.moves, ended.missed, ended.ends_at, ended.status, ended.finished_at, ended.version) == (
        '["6-10"]', 1, T0 + 170, "finished", T0 + 175, 2)


def test_a_save_of_a_column_one_may_not_set_writes_nothing(store: Store) -> None:
    run_id = store.storm_runs.create(_new())
    with pytest.raises(ValueError):
        store.save_storm_run(run_id, 0, {"user_id": "u2"})
    row = store.storm_runs.get(run_id)
    assert row is not None and (row.user_id, row.version) == ("u1", 0)


def test_the_runs_over_are_the_running_ones_whose_time_ended(store: Store) -> None:
    early = store.storm_runs.create(_new("u1", T0))
    later = store.storm_runs.create(_new("u2", T0 + 60, OTHER))
    done = store.storm_runs.create(_new("u3", T0))
    store.storm_runs.save(done, 0, StormChange(0, "[]", 0, 0, T0 + 180, "finished", T0 + 180))
    assert store.storm_runs.over(T0 + 179) == []
    assert [r.id for r in store.storm_runs.over(T0 + 180)] == [early]
    assert [r.id for r in store.storm_runs.over(T0 + 300)] == [early, later]
    assert [r.id for r in store.storm_runs.over(T0 + 300, limit=1)] == [early]


def test_two_answers_at_once_count_once(tmp_path: Path) -> None:
    path = tmp_path / "storm.db"
    first = SQLiteStore(path, busy_timeout=5.0)
    run_id = first.storm_runs.create(_new())
    outcomes: list[str] = []
    barrier = threading.Barrier(2)

    def answer() -> None:
        store = SQLiteStore(path, busy_timeout=5.0)
        try:
            barrier.wait()
            store.storm_runs.save(run_id, 0, StormChange(1, "[]", 1, 0, T0 + 180))
            outcomes.append("saved")
        except StorageContention:
            outcomes.append("lost")
        finally:
            store.close()

    threads = [threading.Thread(target=answer) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["lost", "saved"]
    row = first.storm_runs.get(run_id)
    assert row is not None and (row.solved, row.version) == (1, 1)
    first.close()


def test_a_player_has_at_most_one_running_run(store: Store) -> None:
    first = store.storm_runs.create(_new("u1"))
    assert first is not None
    assert store.storm_runs.create(_new("u1", T0 + 5)) is None
    row = store.storm_runs.running(P, "u1")
    assert row is not None and row.id == first
    assert store.storm_runs.running(P, "u2") is None and store.storm_runs.running(OTHER, "u1") is None
    # Another player, or the same id on another platform, has runs of their own.
    elsewhere = store.storm_runs.create(_new("u1", platform=OTHER))
    assert elsewhere is not None and elsewhere != first
    store.storm_runs.save(first, 0, StormChange(0, "[]", 0, 0, T0 + 180, "finished", T0 + 180))
    assert store.storm_runs.running(P, "u1") is None
    second = store.storm_runs.create(_new("u1", T0 + 200))
    assert second is not None and second not in (first, elsewhere)
    running = store.storm_runs.running(P, "u1")
    assert running is not None and running.id == second


def test_opening_a_run_is_saved_with_its_clock(store: Store) -> None:
    run_id = store.storm_runs.create(_new())
    assert run_id is not None
    row = store.storm_runs.get(run_id)
    assert row is not None and row.opened_at is None
    opened = store.storm_runs.save(run_id, 0, StormChange(0, "[]", 0, 0, T0 + 250, opened_at=T0 + 70))
    assert (opened.opened_at, opened.ends_at, opened.version) == (T0 + 70, T0 + 250, 1)
    # A later save that does not name it keeps it.
    later = store.storm_runs.save(run_id, 1, StormChange(1, "[]", 1, 0, T0 + 250))
    assert later.opened_at == T0 + 70


def test_the_runs_over_of_one_platform_are_picked_in_the_query(store: Store) -> None:
    others = [store.storm_runs.create(_new(f"o{n}", T0 - 1000, OTHER)) for n in range(3)]
    mine = store.storm_runs.create(_new("u1", T0))
    assert [r.id for r in store.storm_runs.over(T0 + 300, limit=3)] == others
    assert [r.id for r in store.storm_runs.over(T0 + 300, P, limit=3)] == [mine]
    assert [r.id for r in store.storm_runs.over(T0 + 300, OTHER, limit=2)] == others[:2]


def test_a_group_becoming_a_supergroup_takes_its_storm_runs(store: Store) -> None:
    run_id = store.storm_runs.create(_new())
    elsewhere = store.storm_runs.create(_new("u2", platform=OTHER))
    assert run_id is not None and elsewhere is not None
    store.move_chat(P, GROUP, GROUP2)
    row = store.storm_runs.get(run_id)
    assert row is not None and row.chat_id == GROUP2
    other = store.storm_runs.get(elsewhere)
    assert other is not None and other.chat_id == GROUP
