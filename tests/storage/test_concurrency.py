"""Two or more OS processes on one database, each with its own store: the read-modify-write
sequences of the service keep their guarantees (docs/storage.md).

Written against ``Store`` and its repositories only, and run on both backends (an SQLite file; a
PostgreSQL database on the test server).  The processes are forked and start their work at one
wall-clock instant.
"""

from __future__ import annotations

import multiprocessing
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
import workers
from workers import GROUP, HOUR, T0, P

from bot.service import GameService

pytestmark = pytest.mark.skipif(multiprocessing.get_all_start_methods()[0] != "fork",
                                reason="the workers are forked")


@pytest.fixture(params=["sqlite", "postgres"])
def path(request, tmp_path: Path) -> str:
    """The shared database: an SQLite file's path or a PostgreSQL URL."""
    if request.param == "postgres":
        from pg_server import new_database_url

        db = new_database_url()
    else:
        db = str(tmp_path / "shared.db")
    workers.open_store(db).close()          # migrated once, before the processes race
    return db


def run_at_once(calls: list[tuple]) -> list:
    """Run each (function, *args) in its own process; every function gets a start time, 0.5 s
    away, as its last argument."""
    go_at = time.time() + 0.5
    with ProcessPoolExecutor(len(calls), mp_context=multiprocessing.get_context("fork")) as pool:
        futures = [pool.submit(fn, *args, go_at) for fn, *args in calls]
        return [f.result(timeout=120) for f in futures]


def test_racing_moves_on_one_game_exactly_one_wins(path):
    store = workers.open_store(path)
    try:
        for _ in range(3):
            game = store.games.get(workers.new_game(store, "ana", "bob", T0))
            results = run_at_once([(workers.play_move, path, game.id, game.version, "ana"),
                                   (workers.play_move, path, game.id, game.version, "ana")])
            assert sorted(results) == ["stale", "won"]
            after = store.games.get(game.id)
            assert (after.ply, after.version, len(store.games.moves(game.id))) == (1, game.version + 1, 1)
    finally:
        store.close()


def test_two_games_of_one_player_ending_at_once_are_both_rated(path):
    store = workers.open_store(path)
    try:
        first = workers.new_game(store, "ana", "bob", T0)
        second = workers.new_game(store, "ana", "carl", T0)
        assert run_at_once([(workers.finish_one, path, first, True, T0 + 10),
                            (workers.finish_one, path, second, True, T0 + 10)]) == ["finished", "finished"]
        # A lost update would leave games == 1: both would have read the rating before either wrote.
        ana = store.ratings.get(P, "ana", "italian")
        assert ana.games == 2
        history = store.ratings.history(P, "ana", "italian")
        assert sorted(e.source for e in history) == [f"game:{first}", f"game:{second}"]
        assert ana.rating == history[-1].rating
    finally:
        store.close()


def test_many_solvers_of_one_daily_record_every_attempt_once_and_one_first_solver(path):
    store = workers.open_store(path)
    try:
        post = store.puzzles.claim_daily_post(P, GROUP, "2024-01-01", "italian", "p1", T0)
        users = [f"user{i}" for i in range(8)]
        # Four processes, each saving an attempt of every user (in its own order).
        calls = [(workers.solve_daily, path, post, users[k:] + users[:k]) for k in range(0, 8, 2)]
        results = [row for rows in run_at_once(calls) for row in rows]
        attempts = store.puzzles.attempts(post)
        assert sorted(a.user_id for a in attempts) == users              # one row each
        # Every save built on the one before it: none was lost to a concurrent one.
        assert {a.version for a in attempts} == {len(calls)}
        assert sum(r["first"] for r in results) == 1
        winner = next(r["user"] for r in results if r["first"])
        assert store.puzzles.post(post).first_solver_id == winner
    finally:
        store.close()


def test_two_schedulers_end_each_deadline_once(path):
    store = workers.open_store(path)
    try:
        games = [workers.new_game(store, f"p{i}", f"q{i}", T0) for i in range(12)]
        for game_id in games:
            row = store.games.get(game_id)
            store.games.update(game_id, row.version, workers.GameChange(ply=2))
        written = run_at_once([(workers.run_clocks, path, T0 + 2 * HOUR), (workers.run_clocks, path, T0 + 2 * HOUR)])
        assert sum(written) == len(games)                               # each loss told once, by one of them
        assert all(store.games.get(g).result_reason == "time" for g in games)
        assert len(store.find_outbox(P)) == len(games)
        counted = Counter(e.source for p in range(12) for e in store.ratings.history(P, f"p{p}", "italian"))
        assert counted == Counter({f"game:{g}": 1 for g in games})      # each rated once
    finally:
        store.close()


def test_two_processes_resuming_after_downtime_move_the_clocks_once(path):
    store = workers.open_store(path)
    try:
        game = workers.new_game(store, "ana", "bob", T0)
        store.settings.beat(None, T0)
        gaps = run_at_once([(workers.resume, path, T0 + 1000), (workers.resume, path, T0 + 1000)])
        assert sorted(gaps) == [0.0, 1000.0]
        assert store.games.get(game).deadline_at == T0 + HOUR + 1000
    finally:
        store.close()


def test_numbers_taken_by_two_processes_never_repeat(path):
    numbers = run_at_once([(workers.take_numbers, path, 40), (workers.take_numbers, path, 40)])
    taken = numbers[0] + numbers[1]
    assert len(set(taken)) == 80 and sorted(taken) == list(range(1, 81))


def test_ratings_rebuilt_during_play_match_a_fresh_rebuild(path, tmp_path):
    stop = tmp_path / "stop"
    players = [f"u{i}" for i in range(10)]
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as pool:
        rebuilds = pool.submit(workers.rebuild_until, path, str(stop))
        played = pool.submit(workers.finish_games, path, players, 80, 3, T0)
        assert played.result(timeout=120) == 80
        stop.touch()
        assert rebuilds.result(timeout=120) >= 1
    store = workers.open_store(path)
    try:
        live = store.dump()
        GameService(store, clock=lambda: T0).rebuild_ratings()
        fresh = store.dump()
        assert len(fresh["rating_history"]) == 160
        assert live["ratings"] == fresh["ratings"]
        assert live["rating_history"] == fresh["rating_history"]
    finally:
        store.close()


def test_a_game_finished_while_a_rebuild_waits_for_the_lock_is_in_the_ratings(path):
    """The window the rebuild had: it read the finished games, then waited for the write lock
    while another process finished (and rated) one more game; its rewrite then dropped that game."""
    import threading

    playing, rebuilding = workers.open_store(path), workers.open_store(path)
    try:
        first = workers.new_game(playing, "ana", "bob", T0)
        workers.finish(GameService(playing, clock=lambda: T0), first, True, T0 + 1)
        late = workers.new_game(playing, "ana", "bob", T0)
        row = playing.games.get(late)
        playing.games.update(late, row.version, workers.GameChange(ply=2))
        holding, done = threading.Event(), threading.Event()

        def finish_while_holding_the_lock() -> None:
            service = GameService(playing, clock=lambda: T0 + 2)
            with playing.transaction():
                holding.set()
                time.sleep(0.5)                    # the rebuild reaches its wait for the lock
                service.app.games.finish_game(playing.games.get(late),
                                    workers.Result("1-0", workers.ResultReason.RESIGN, workers.Color.WHITE), T0 + 2)
            done.set()

        thread = threading.Thread(target=finish_while_holding_the_lock)
        thread.start()
        holding.wait(5)
        counts = GameService(rebuilding, clock=lambda: T0).rebuild_ratings()
        thread.join(10)
        assert done.is_set()
        ana = rebuilding.ratings.get(P, "ana", "italian")
        assert ana.games == 2, counts
    finally:
        playing.close()
        rebuilding.close()


def test_two_processes_claiming_the_outbox_split_it_by_chat(path):
    """Each row goes to one owner, and a chat stays with the process that holds any of its rows
    (its messages keep their order), however the two claims interleave."""
    store = workers.open_store(path)
    try:
        queued = {store.enqueue(P, f"chat{n % 7}", f"m{n}", T0 + n / 100) for n in range(60)}
        owners = run_at_once([(workers.claim_until_empty, path, "host:a"),
                              (workers.claim_until_empty, path, "host:b")])
        ids = [row_id for claimed in owners for row_id, _chat in claimed]
        assert sorted(ids) == sorted(queued)                            # every row claimed, once
        chats = [{chat for _id, chat in claimed} for claimed in owners]
        assert not chats[0] & chats[1]                                  # no chat split between them
    finally:
        store.close()
