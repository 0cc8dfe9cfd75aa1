"""Puzzle runs, personal bests and the chats' records in storage (``store.puzzle_runs``), checked
against every backend of the contract suite (test_contract.BACKENDS): one running run a player and
mode, the compare-and-set that keeps two answers from advancing a run twice, a run found by its
post, bests that only rise (a single conditional write), and a record's message kept when the
record is beaten (it is edited in place) and moved with its chat."""

from __future__ import annotations

from pathlib import Path

import pytest
from storage_helpers import give_back
from test_contract import BACKENDS, GROUP, GROUP2, OTHER, T0, P

from bot.storage import StorageContention, Store
from bot.storage.repositories import RunChange


@pytest.fixture(params=[factory for _, factory in BACKENDS], ids=[name for name, _ in BACKENDS])
def store(request, tmp_path: Path):
    s = request.param(tmp_path)
    yield s
    give_back(s)


def _start(store: Store, user: str = "u1", mode: str = "streak", platform: str = P) -> int | None:
    return store.puzzle_runs.start(platform, user, GROUP, mode, "italian", '{"r":900}', T0)


def test_a_new_run_is_running_at_version_0(store: Store) -> None:
    rid = _start(store)
    assert rid is not None
    run = store.puzzle_runs.get(rid)
    assert run is not None
    assert (run.platform, run.user_id, run.chat_id, run.mode, run.variant) == (P, "u1", GROUP, "streak", "italian")
    assert (run.status, run.score, run.skips, run.post_id, run.state, run.version) == ("running", 0, 0, None,
                                                                                        '{"r":900}', 0)
    assert (run.started_at, run.ended_at) == (T0, None)
    assert store.puzzle_runs.running(P, "u1", "streak") == run
    assert store.puzzle_runs.get(rid + 1000) is None


def test_a_player_has_one_running_run_a_mode_and_a_second_writes_nothing(store: Store) -> None:
    first = _start(store)
    before = store.dump()
    assert _start(store) is None
    assert store.dump() == before
    # Another mode, player or platform has its own.
    assert _start(store, mode="storm") is not None
    assert _start(store, user="u2") is not None
    assert _start(store, platform=OTHER) is not None
    assert store.puzzle_runs.running(P, "u1", "streak").id == first  # type: ignore[union-attr]


def test_save_is_a_compare_and_set_and_an_ended_run_leaves_room(store: Store) -> None:
    rid = _start(store)
    assert rid is not None
    saved = store.puzzle_runs.save(rid, 0, RunChange("running", 1, 0, 7, '{"r":950}'))
    assert (saved.version, saved.score, saved.post_id, saved.state) == (1, 1, 7, '{"r":950}')
    with pytest.raises(StorageContention):
        store.puzzle_runs.save(rid, 0, RunChange("running", 5, 0, 8, "{}"))
    assert store.puzzle_runs.get(rid).score == 1  # type: ignore[union-attr]
    assert store.puzzle_runs.of_post(7).id == rid  # type: ignore[union-attr]
    assert store.puzzle_runs.of_post(8) is None
    # A puzzle the run moved on from (skipped, say) still names its run.
    store.puzzle_runs.save(rid, 1, RunChange("running", 1, 1, 9, "{}"))
    assert store.puzzle_runs.of_post(7).id == rid  # type: ignore[union-attr]
    ended = store.puzzle_runs.save(rid, 2, RunChange("ended", 1, 1, 9, "{}", T0 + 60))
    assert (ended.status, ended.skips, ended.ended_at) == ("ended", 1, T0 + 60)
    assert store.puzzle_runs.running(P, "u1", "streak") is None
    # The ended run is still found by its post (a stale button of it changes nothing).
    assert store.puzzle_runs.of_post(7).status == "ended"  # type: ignore[union-attr]
    assert store.puzzle_runs.of_post(9).status == "ended"  # type: ignore[union-attr]
    assert _start(store) not in (None, rid)


def test_a_personal_best_only_rises(store: Store) -> None:
    assert store.puzzle_runs.personal_best(P, "u1", "streak", "italian") is None
    assert store.puzzle_runs.raise_personal_best(P, "u1", "streak", "italian", 5, T0)
    assert not store.puzzle_runs.raise_personal_best(P, "u1", "streak", "italian", 5, T0 + 1)
    assert not store.puzzle_runs.raise_personal_best(P, "u1", "streak", "italian", 3, T0 + 2)
    assert store.puzzle_runs.personal_best(P, "u1", "streak", "italian") == 5
    assert store.puzzle_runs.raise_personal_best(P, "u1", "streak", "italian", 6, T0 + 3)
    assert store.puzzle_runs.personal_best(P, "u1", "streak", "italian") == 6
    # Per mode and variant.
    assert store.puzzle_runs.personal_best(P, "u1", "storm", "italian") is None
    assert store.puzzle_runs.personal_best(P, "u1", "streak", "spanish") is None


def test_a_chat_record_keeps_its_message_when_beaten(store: Store) -> None:
    runs = store.puzzle_runs
    assert runs.chat_best(P, GROUP, "streak", "italian") is None
    assert not runs.set_chat_best_message(P, GROUP, "streak", "italian", "m1")
    assert runs.raise_chat_best(P, GROUP, "streak", "italian", 4, "u1", "Ana", T0)
    assert runs.set_chat_best_message(P, GROUP, "streak", "italian", "m1")
    assert not runs.raise_chat_best(P, GROUP, "streak", "italian", 4, "u2", "Luca", T0 + 1)
    assert runs.raise_chat_best(P, GROUP, "streak", "italian", 7, "u2", "Luca", T0 + 2)
    best = runs.chat_best(P, GROUP, "streak", "italian")
    assert best is not None
    assert (best.score, best.user_id, best.name, best.at, best.message_id) == (7, "u2", "Luca", T0 + 2, "m1")
    assert runs.raise_chat_best(P, GROUP, "storm", "italian", 12, "u1", "Ana", T0 + 3)
    assert [(b.mode, b.score) for b in runs.chat_bests(P, GROUP)] == [("storm", 12), ("streak", 7)]
    assert runs.chat_bests(P, GROUP2) == []


def test_a_moved_chat_takes_its_records_and_forgets_their_message(store: Store) -> None:
    runs = store.puzzle_runs
    runs.raise_chat_best(P, GROUP, "streak", "italian", 4, "u1", "Ana", T0)
    runs.set_chat_best_message(P, GROUP, "streak", "italian", "m1")
    runs.raise_chat_best(P, GROUP2, "storm", "italian", 9, "u3", "Eva", T0)
    runs.raise_chat_best(P, GROUP, "storm", "italian", 2, "u1", "Ana", T0)
    store.move_chat(P, GROUP, GROUP2)
    assert runs.chat_bests(P, GROUP) == []
    moved = {(b.mode, b.score, b.message_id) for b in runs.chat_bests(P, GROUP2)}
    assert moved == {("streak", 4, None), ("storm", 9, None)}
