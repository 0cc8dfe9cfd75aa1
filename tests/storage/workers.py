"""What the concurrency tests run in other OS processes (forked), each on its own connection to
one database (an SQLite file or a PostgreSQL URL): finishing games, rebuilding ratings, playing
racing moves, answering a daily puzzle, running the clocks.  Every function opens its own store
and returns plain values.

A unit of work that loses a race raises StorageContention and kept nothing; as the contract says,
its caller runs the whole unit again (``retry_contention``).  On SQLite the write lock taken at
BEGIN makes that rare; on PostgreSQL (serializable, row locks) it is the normal way two units that
touch the same rows at once are put in order, so the units below are retried as the service's are."""

from __future__ import annotations

import random
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from bot.rules import Color, Position, Result, ResultReason
from bot.service import GameService
from bot.storage import RetryPolicy, StaleGame, Store, retry_contention
from bot.storage.opening import open_store as open_database
from bot.storage.records import AttemptRecord
from bot.storage.repositories import GameChange, NewGame, NewMove

T0 = 1_700_000_000.0
P = "test"
GROUP = "-100123"
START = Position.start("italian")
HOUR = 3600


# Many runs: a rebuild holds the ratings lock for a while, and every game finished meanwhile loses
# its race to it once.
PATIENT = RetryPolicy(attempts=50, base=0.005, cap=0.2)


def open_store(path: str | Path) -> Store:
    """The store of a database setting (an SQLite file's path or a PostgreSQL URL)."""
    return open_database(str(path), 30.0)


def new_game(store: Store, white: str, black: str, at: float) -> int:
    return store.games.create(NewGame(platform=P, chat_id=GROUP, variant="italian", white_id=white,
                                      white_name=white.title(), black_id=black, black_name=black.title(),
                                      fen=START.fen(), move_seconds=HOUR, created_at=at, deadline_at=at + HOUR))


def finish(service: GameService, game_id: int, white_wins: bool | None, at: float) -> None:
    """Finish a game the way the service does (two plies played, so it is rated); the finishing
    unit (its read of the game included) is run again when it loses a race."""
    store = service.storage
    row = store.games.get(game_id)
    store.games.update(game_id, row.version, GameChange(ply=2))
    winner = None if white_wins is None else (Color.WHITE if white_wins else Color.BLACK)
    score = "1/2-1/2" if winner is None else ("1-0" if white_wins else "0-1")
    reason = ResultReason.RESIGN if winner else ResultReason.AGREEMENT

    def unit() -> None:
        with store.transaction():
            service.app.games.finish_game(store.games.get(game_id), Result(score, reason, winner), at)
    retry_contention(unit, PATIENT)


def finish_games(path: str, players: list[str], count: int, seed: int, start: float) -> int:
    """Start and finish ``count`` rated games among ``players`` (clock: start + 1 s a game)."""
    store = open_store(path)
    rng = random.Random(seed)
    service = GameService(store, clock=lambda: start, rng=rng)
    try:
        for n in range(count):
            at = start + n
            white, black = rng.sample(players, 2)
            game_id = new_game(store, white, black, at)
            finish(service, game_id, rng.choice([True, False, None]), at)
        return count
    finally:
        store.close()


def rebuild_until(path: str, stop_file: str) -> int:
    """Rebuild the ratings again and again until ``stop_file`` exists; how many rebuilds ran."""
    store = open_store(path)
    service = GameService(store, clock=lambda: T0)
    runs = 0
    try:
        while not Path(stop_file).exists() or runs == 0:
            retry_contention(service.rebuild_ratings, PATIENT)
            runs += 1
            # A breath between rebuilds: the rebuild holds the write lock throughout, and SQLite's
            # busy handler backs off, so back-to-back rebuilds would starve the games.
            time.sleep(0.01)
        return runs
    finally:
        store.close()


def finish_one(path: str, game_id: int, white_wins: bool, at: float, go_at: float) -> str:
    """Finish one game at wall time ``go_at`` (so two processes finish theirs at once)."""
    store = open_store(path)
    service = GameService(store, clock=lambda: at)
    try:
        time.sleep(max(0.0, go_at - time.time()))
        finish(service, game_id, white_wins, at)
        return "finished"
    finally:
        store.close()


def play_move(path: str, game_id: int, version: int, by_user: str, go_at: float) -> str:
    """Play the first legal move on the game as read at ``version``; 'won' or 'stale'."""
    store = open_store(path)
    try:
        move = START.legal_moves()[0]
        after = START.play(move).fen()
        time.sleep(max(0.0, go_at - time.time()))
        try:
            store.games.update(game_id, version, GameChange(fen=after, ply=1),
                               NewMove(ply=1, notation=str(move), fen_after=after, by_user=by_user,
                                       played_at=T0 + 1))
        except StaleGame:
            return "stale"
        return "won"
    finally:
        store.close()


def solve_daily(path: str, post_id: int, users: list[str], go_at: float) -> list[dict[str, Any]]:
    """Each user starts an attempt and solves it (read, then compare-and-set, retried on
    contention), then claims first solver; what each got."""
    store = open_store(path)
    out = []
    try:
        time.sleep(max(0.0, go_at - time.time()))
        for user in users:
            def unit(user: str = user) -> dict[str, Any]:
                with store.transaction():
                    found = store.puzzles.attempt(post_id, user)
                    attempt = found or AttemptRecord(post_id, user, user.title(), (), 0, 0, T0, None, None, None,
                                                     version=0)
                    store.puzzles.save_attempt(replace(attempt, progress=("22-18",), solved_at=T0 + 5,
                                                       rated_score=1.0, rated_at=T0 + 5))
                    first = store.puzzles.claim_first_solver(post_id, user, user.title())
                    return {"user": user, "first": first}
            out.append(retry_contention(unit))
        return out
    finally:
        store.close()


def run_clocks(path: str, now: float, go_at: float) -> int:
    """A scheduler's rounds (the service's run_due): every game whose deadline passed is lost on
    time, each by a compare-and-set on its version; how many messages this process wrote.  A game
    whose unit lost a race (PostgreSQL) is left to the next round, as the scheduler's next run
    would: rounds run until nothing is due."""
    store = open_store(path)
    service = GameService(store, clock=lambda: now)
    try:
        time.sleep(max(0.0, go_at - time.time()))
        written = service.run_due(P, now)
        for _ in range(20):
            if not store.due_games(now, P):
                break
            written += service.run_due(P, now)
        return written
    finally:
        store.close()


def resume(path: str, now: float, go_at: float) -> float:
    store = open_store(path)
    try:
        time.sleep(max(0.0, go_at - time.time()))
        return store.settings.resume_after_downtime(None, now, threshold=60.0)
    finally:
        store.close()



def take_numbers(path: str, count: int, go_at: float) -> list[int]:
    """Numbers for ``count`` new games (the shared #N sequence)."""
    store = open_store(path)
    try:
        time.sleep(max(0.0, go_at - time.time()))
        return [new_game(store, "a", "b", T0) for _ in range(count)]
    finally:
        store.close()


def claim_until_empty(path: str, owner: str, go_at: float) -> list[tuple[int, str]]:
    """Claim the due outbox rows for ``owner`` (never marking them sent, so every claim holds) until
    a claim brings nothing new (a claim returns the owner's own rows again); (id, chat) of every
    row claimed."""
    store = open_store(path)
    claimed: dict[int, str] = {}
    try:
        time.sleep(max(0.0, go_at - time.time()))
        for _ in range(100):
            rows = store.claim_messages(P, owner, T0 + 10, T0 + 3600, limit=1000)
            if not {row.id for row in rows} - set(claimed):
                break
            claimed.update((row.id, row.chat_id) for row in rows)
        return sorted(claimed.items())
    finally:
        store.close()
