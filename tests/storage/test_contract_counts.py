"""The kept counts of finished games (``Store.count_finished_games``) and a rating history cut to a
chart's points (``rating_history(..., limit)``), checked against every backend of the contract
suite (test_contract.BACKENDS): each count against the same count made from the games themselves
(``find_games``), after games finish, change, move chat, or lose a race; and a database from before
the counts (migration 14 not run) gets them counted when it opens."""

from __future__ import annotations

import random
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from storage_helpers import give_back
from test_contract import BACKENDS, GROUP, GROUP2, OTHER, T0, P, new_game

from bot.rules import Color, ResultReason
from bot.storage import SQLiteStore, StaleGame, Store
from bot.storage.records import SHORT_PLIES, GameCountRecord, GameRecord, RatingRecord


@pytest.fixture(params=[factory for _, factory in BACKENDS], ids=[name for name, _ in BACKENDS])
def store(request, tmp_path: Path):
    s = request.param(tmp_path)
    yield s
    give_back(s)


PEOPLE = ["1001", "1002", "1003", "1004"]
REASONS = [ResultReason.NO_MOVES, ResultReason.RESIGN, ResultReason.TIME, ResultReason.AGREEMENT]


def finish(store: Store, game: GameRecord, winner: Color | None, reason: ResultReason, ply: int,
           at: float = T0) -> GameRecord:
    score = {Color.WHITE: "1-0", Color.BLACK: "0-1", None: "1/2-1/2"}[winner]
    return store.update_game(game.id, game.version, {"status": "finished", "winner": winner, "result_reason": reason,
                                                     "result_score": score, "ply": ply, "finished_at": at})


def key(chat_id: str, white: str, black: str, variant: str, bot_level: int | None, winner: Color | None,
        reason: ResultReason | None, short: bool) -> tuple:
    return (chat_id, white, black, variant, bot_level, winner, reason, short)


def counted(records: list[GameCountRecord]) -> Counter:
    """The counts as one Counter (a key read twice would show as a sum, so the test sees it)."""
    out: Counter = Counter()
    for r in records:
        assert r.games > 0
        k = key(r.chat_id, r.white_id, r.black_id, r.variant, r.bot_level, r.winner, r.result_reason, r.short)
        assert k not in out, f"one outcome counted in two records: {k}"
        out[k] += r.games
    return out


def recounted(store: Store, platform: str, chat_id: str | None = None, user_id: str | None = None,
              opponent_id: str | None = None) -> Counter:
    """The same counts made the straightforward way: every finished game read and counted."""
    out: Counter = Counter()
    for g in store.find_games(platform, chat_id, status="finished"):
        if user_id is not None and user_id not in (g.white_id, g.black_id):
            continue
        if opponent_id is not None and {g.white_id, g.black_id} != {user_id, opponent_id}:
            continue
        out[key(g.chat_id, g.white_id, g.black_id, g.variant, g.bot_level, g.winner, g.result_reason,
                g.ply < SHORT_PLIES)] += 1
    return out


def assert_counts_right(store: Store) -> None:
    for platform in (P, OTHER):
        for chat_id in (None, GROUP, GROUP2):
            assert counted(store.count_finished_games(platform, chat_id)) == recounted(store, platform, chat_id)
            for user in [*PEOPLE, "bot:engine"]:
                assert (counted(store.count_finished_games(platform, chat_id, user_id=user))
                        == recounted(store, platform, chat_id, user))
                for other in PEOPLE:
                    if other != user:
                        assert (counted(store.count_finished_games(platform, chat_id, user, other))
                                == recounted(store, platform, chat_id, user, other))


def play_many(store: Store, count: int, seed: int) -> list[GameRecord]:
    """``count`` games of every kind: people and the bot, three variants, two chats and two
    platforms, every result and reason, some over in their first plies; a few left active."""
    rng = random.Random(seed)
    games = []
    for n in range(count):
        white, black = rng.sample(PEOPLE, 2)
        level = None
        if rng.random() < 0.2:
            level = rng.randint(1, 5)
            white = "bot:engine"
        game = new_game(store, platform=rng.choice((P, P, OTHER)), chat_id=rng.choice((GROUP, GROUP2)),
                        variant=rng.choice(("italian", "spanish", "triestina")), white_id=white, black_id=black,
                        bot_level=level)
        if n % 7 == 6:
            games.append(game)              # still being played: never counted
            continue
        games.append(finish(store, game, rng.choice((Color.WHITE, Color.BLACK, None)), rng.choice(REASONS),
                            rng.choice((0, 1, 2, 3, 40))))
    return games


def test_every_finished_game_is_counted_once_under_its_outcome(store):
    play_many(store, 60, seed=1)
    assert_counts_right(store)
    everything = counted(store.count_finished_games(P))
    assert sum(everything.values()) == len(store.find_games(P, status="finished"))
    assert any(k[7] for k in everything) and not all(k[7] for k in everything)     # short and long games


def test_the_counts_of_an_unknown_platform_chat_or_player_are_empty(store):
    play_many(store, 10, seed=2)
    assert store.count_finished_games("nowhere") == []
    assert store.count_finished_games(P, "no-such-chat") == []
    assert store.count_finished_games(P, user_id="nobody") == []
    assert store.count_finished_games(P, user_id="1001", opponent_id="nobody") == []


def test_a_count_read_whole_is_a_game_counted_record(store):
    game = new_game(store, bot_level=3, white_id="bot:engine")
    finish(store, game, Color.BLACK, ResultReason.TIME, 1)
    assert store.count_finished_games(P) == [GameCountRecord(GROUP, "bot:engine", "1002", "italian", 3, Color.BLACK,
                                                             ResultReason.TIME, True, 1)]
    draw = finish(store, new_game(store), None, ResultReason.AGREEMENT, 30)
    assert GameCountRecord(GROUP, draw.white_id, draw.black_id, "italian", None, None, ResultReason.AGREEMENT, False,
                           1) in store.count_finished_games(P, GROUP, "1001", "1002")


def test_a_players_games_are_counted_from_either_seat_and_against_an_opponent_either_way(store):
    finish(store, new_game(store, white_id="1001", black_id="1002"), Color.WHITE, ResultReason.NO_MOVES, 30)
    finish(store, new_game(store, white_id="1002", black_id="1001"), Color.WHITE, ResultReason.NO_MOVES, 30)
    finish(store, new_game(store, white_id="1003", black_id="1001"), None, ResultReason.AGREEMENT, 30)
    assert sum(r.games for r in store.count_finished_games(P, user_id="1001")) == 3
    assert sum(r.games for r in store.count_finished_games(P, user_id="1001", opponent_id="1002")) == 2
    assert sum(r.games for r in store.count_finished_games(P, user_id="1002", opponent_id="1001")) == 2
    assert sum(r.games for r in store.count_finished_games(P, user_id="1002", opponent_id="1003")) == 0
    # The repository's method is the same read.
    assert store.games.count_finished(P, GROUP, "1001", "1002") == store.count_finished_games(P, GROUP, "1001", "1002")


def test_a_game_against_oneself_is_counted_once(store):
    finish(store, new_game(store, white_id="1001", black_id="1001"), Color.WHITE, ResultReason.NO_MOVES, 30)
    assert sum(r.games for r in store.count_finished_games(P, user_id="1001")) == 1
    assert sum(r.games for r in store.count_finished_games(P, user_id="1001", opponent_id="1001")) == 1


def test_an_opponent_without_a_player_is_refused(store):
    with pytest.raises(ValueError):
        store.count_finished_games(P, opponent_id="1002")


def test_a_finished_game_changed_again_counts_under_what_it_now_is(store):
    game = finish(store, new_game(store), Color.WHITE, ResultReason.RESIGN, 1)
    before = store.count_finished_games(P)
    assert [(r.winner, r.short, r.games) for r in before] == [(Color.WHITE, True, 1)]
    # The same result written again changes no count.
    game = store.update_game(game.id, game.version, {"white_name": "Ana María", "ply": 1})
    assert store.count_finished_games(P) == before
    game = store.update_game(game.id, game.version, {"winner": None, "result_reason": ResultReason.AGREEMENT,
                                                     "ply": 12})
    assert [(r.winner, r.result_reason, r.short, r.games) for r in store.count_finished_games(P)] == [
        (None, ResultReason.AGREEMENT, False, 1)]
    # A game that is no longer finished is no longer counted (and leaves no empty count behind).
    store.update_game(game.id, game.version, {"status": "active"})
    assert store.count_finished_games(P) == []
    assert_counts_right(store)


def test_moves_of_a_game_being_played_count_nothing(store):
    game = new_game(store)
    for ply in range(1, 6):
        game = store.update_game(game.id, game.version, {"ply": ply, "fen": game.fen},
                                 {"ply": ply, "notation": "1-2", "fen_after": game.fen, "by_user": "1001",
                                  "played_at": T0 + ply})
    assert store.count_finished_games(P) == []
    finish(store, game, Color.BLACK, ResultReason.NO_MOVES, 6)
    assert sum(r.games for r in store.count_finished_games(P)) == 1


def test_a_result_that_lost_the_race_counts_nothing(store):
    game = new_game(store)
    finish(store, game, Color.WHITE, ResultReason.RESIGN, 10)
    with pytest.raises(StaleGame):
        finish(store, game, Color.BLACK, ResultReason.TIME, 10)       # the version it read is gone
    assert [(r.winner, r.games) for r in store.count_finished_games(P)] == [(Color.WHITE, 1)]


def test_a_result_undone_with_its_transaction_leaves_the_counts_as_they_were(store):
    game = new_game(store)
    with pytest.raises(RuntimeError), store.transaction():
        finish(store, game, Color.WHITE, ResultReason.NO_MOVES, 30)
        assert len(store.count_finished_games(P)) == 1                # seen inside its unit of work
        raise RuntimeError("undo")
    assert store.count_finished_games(P) == []


def test_move_chat_carries_the_counts_over_adding_them_to_the_new_chats(store):
    finish(store, new_game(store, chat_id=GROUP), Color.WHITE, ResultReason.NO_MOVES, 30)
    finish(store, new_game(store, chat_id=GROUP), Color.WHITE, ResultReason.NO_MOVES, 31)
    finish(store, new_game(store, chat_id=GROUP2), Color.WHITE, ResultReason.NO_MOVES, 30)
    finish(store, new_game(store, chat_id=GROUP2), None, ResultReason.AGREEMENT, 30)
    finish(store, new_game(store, chat_id=GROUP, platform=OTHER), Color.WHITE, ResultReason.NO_MOVES, 30)
    store.move_chat(P, GROUP, GROUP2)
    assert store.count_finished_games(P, GROUP) == []
    assert sorted((r.winner or "", r.games) for r in store.count_finished_games(P, GROUP2)) == [("", 1), ("W", 3)]
    assert sum(r.games for r in store.count_finished_games(OTHER, GROUP)) == 1   # another platform's stay
    store.move_chat(P, GROUP2, GROUP2)                                           # the same id: nothing moves
    assert sum(r.games for r in store.count_finished_games(P, GROUP2)) == 4
    assert_counts_right(store)


# -- a rating history cut to a chart's points ---------------------------------------------------------


def rate(store: Store, times: list[float], subject: str = "1001", pool: str = "italian") -> None:
    for n, at in enumerate(times):
        store.save_rating(RatingRecord(P, subject, pool, 1500.0 + n, 300.0, 0.06, n + 1, at), f"game:{n}")


def test_a_history_within_the_limit_is_read_whole(store):
    rate(store, [T0 + n * 60 for n in range(10)])
    rate(store, [T0 + 5], subject="1002")
    assert store.rating_history(P, "1001", "italian", 10) == store.rating_history(P, "1001", "italian")
    assert len(store.rating_history(P, "1001", "italian", 10)) == 10
    assert store.rating_history(P, "1002", "italian", 3) == store.rating_history(P, "1002", "italian")
    assert store.rating_history(P, "nobody", "italian", 5) == []
    assert store.ratings.history(P, "1001", "italian", 4) == store.rating_history(P, "1001", "italian", 4)


@pytest.mark.parametrize("limit", [2, 5, 40])
def test_a_long_history_gives_at_most_the_limit_spread_from_its_first_event_to_its_last(store, limit):
    rng = random.Random(limit)
    # Uneven: a burst of games, a long pause, then a game a day.
    times = sorted([T0 + rng.uniform(0, 3600) for _ in range(150)] + [T0 + 86400 * (10 + d) for d in range(50)])
    rate(store, times)
    rate(store, [T0 + 30.0], subject="1002")                        # another player's history stays apart
    full = store.rating_history(P, "1001", "italian")
    cut = store.rating_history(P, "1001", "italian", limit)
    assert 2 <= len(cut) <= limit
    assert cut[0] == full[0] and cut[-1] == full[-1]
    assert all(event in full for event in cut)
    assert [e.at for e in cut] == sorted(e.at for e in cut) and len({e.at for e in cut}) == len(cut)
    if limit == 40:
        # Spread over the time: the daily games after the pause are not crowded out by the burst.
        assert sum(1 for e in cut if e.at > T0 + 86400) >= limit // 3


def test_a_history_limit_below_two_is_refused(store):
    rate(store, [T0, T0 + 1, T0 + 2])
    with pytest.raises(ValueError):
        store.rating_history(P, "1001", "italian", 1)


# -- a database from before the counts ------------------------------------------------------------------


def _before_the_counts(store: Store) -> None:
    """Take the database back to schema version 13, as a bot before the counts left it."""
    statements = ["DROP TABLE game_counts", "DROP INDEX games_chat_latest", "DROP INDEX rating_history_chart",
                  "CREATE INDEX rating_history_subject ON rating_history (platform, subject, pool)",
                  "DELETE FROM schema_version WHERE version = 14",
                  # and what came after it (migration 15: the send budget)
                  "DROP TABLE send_budget", "DELETE FROM schema_version WHERE version = 15",
                  # (migration 16: tournaments)
                  "DROP TABLE tournaments", "DROP TABLE tournament_games",
                  "DELETE FROM schema_version WHERE version = 16",
                  # (migrations 17-19: own puzzles, puzzle runs and records, storm runs)
                  "DROP TABLE game_scans", "DROP TABLE own_puzzles", "DROP TABLE own_reminders",
                  "DELETE FROM schema_version WHERE version = 17",
                  "DROP TABLE puzzle_runs", "DROP TABLE puzzle_run_posts", "DROP TABLE personal_bests",
                  "DROP TABLE chat_records", "DELETE FROM schema_version WHERE version = 18",
                  "DROP TABLE storm_runs", "DELETE FROM schema_version WHERE version = 19"]
    if isinstance(store, SQLiteStore):
        path = store.path
        store.close()
        conn = sqlite3.connect(path, isolation_level=None)
        for statement in [*statements, "PRAGMA user_version = 13"]:
            conn.execute(statement)
        conn.close()
        return
    import psycopg

    url = store.url                                               # type: ignore[attr-defined]
    store.close()
    with psycopg.connect(url) as conn:
        for statement in statements:
            conn.execute(statement)


def test_a_database_from_before_the_counts_gets_its_finished_games_counted_on_opening(store):
    play_many(store, 40, seed=3)
    expected = {platform: recounted(store, platform) for platform in (P, OTHER)}
    _before_the_counts(store)
    reopened = SQLiteStore(store.path) if isinstance(store, SQLiteStore) else type(store)(store.url)  # type: ignore
    try:
        assert reopened.schema_version == 19
        for platform in (P, OTHER):
            assert counted(reopened.count_finished_games(platform)) == expected[platform]
        assert_counts_right(reopened)
    finally:
        reopened.close()
