"""The storage contract's guarantees (bot/storage/base.py, docs/storage.md) and its repositories,
checked for every backend of test_contract.BACKENDS: the unit of work, compare-and-set on
attempts, the ratings lock, the retry policy, and every repository method with its typed writes."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from storage_helpers import give_back
from test_contract import BACKENDS, FEN, GROUP, HOUR, LINE, T0, P

from bot.rules import Color, ResultReason
from bot.storage import (
    ChatSettings,
    GameChange,
    NewChallenge,
    NewGame,
    NewMove,
    RetryPolicy,
    StaleGame,
    StorageContention,
    Store,
    in_transaction,
    retry_contention,
)
from bot.storage.records import AttemptRecord, RatingRecord


@pytest.fixture(params=[factory for _, factory in BACKENDS], ids=[name for name, _ in BACKENDS])
def store(request, tmp_path: Path):
    s = request.param(tmp_path)
    yield s
    give_back(s)


def a_game(**over) -> NewGame:
    values = dict(platform=P, chat_id=GROUP, variant="italian", white_id="1001", white_name="Ana", black_id="1002",
                  black_name="Bob", fen=FEN, move_seconds=HOUR, created_at=T0, deadline_at=T0 + HOUR)
    values.update(over)
    return NewGame(**values)


def no_wait() -> RetryPolicy:
    return RetryPolicy(attempts=3, rng=random.Random(0), sleep=lambda _s: None)


# -- the unit of work ----------------------------------------------------------------------------


def test_a_unit_of_work_rolls_back_everything_nested_blocks_included(store: Store):
    before = store.dump()
    with pytest.raises(RuntimeError), store.transaction():
        assert store.in_transaction()
        store.games.create(a_game())
        with store.transaction():                       # joins the outer one
            store.settings.set_pending("k", 1)
            assert store.settings.pending("k") == 1      # reads see the unit's own writes
        raise RuntimeError("undo")
    assert not store.in_transaction()
    assert store.dump() == before


def test_an_error_caught_inside_the_unit_keeps_what_was_written_before_it(store: Store):
    with store.transaction():
        store.settings.set_pending("kept", True)
        try:
            with store.transaction():
                raise ValueError
        except ValueError:
            pass
    assert store.settings.pending("kept") is True


# -- compare-and-set on attempts ---------------------------------------------------------------------


def new_attempt(post: int, user: str = "u1", **over) -> AttemptRecord:
    values = dict(post_id=post, user_id=user, user_name=user.title(), progress=(), misses=0, hints=0, started_at=T0,
                  solved_at=None, rated_score=None, rated_at=None, version=0)
    values.update(over)
    return AttemptRecord(**values)


def test_an_attempt_saved_from_a_stale_read_is_refused_and_changes_nothing(store: Store):
    post = store.puzzles.claim_daily_post(P, GROUP, "2024-01-01", "italian", "p1", T0)
    store.puzzles.save_attempt(new_attempt(post))
    with pytest.raises(StorageContention):
        store.puzzles.save_attempt(new_attempt(post, misses=5))          # "new", but there is one
    read = store.puzzles.attempt(post, "u1")
    assert read.version == 1 and read.misses == 0
    store.puzzles.save_attempt(AttemptRecord(**{**_fields(read), "hints": 1}))
    with pytest.raises(StorageContention):
        store.puzzles.save_attempt(AttemptRecord(**{**_fields(read), "misses": 1}))   # read before the hint
    now = store.puzzles.attempt(post, "u1")
    assert (now.hints, now.misses, now.version) == (1, 0, 2)
    # With no version given, the attempt is stored as it is.
    store.save_attempt(AttemptRecord(**{**_fields(now), "misses": 3, "version": None}))
    assert store.attempt(post, "u1").misses == 3


def _fields(record) -> dict:
    return {name: getattr(record, name) for name in record.__dataclass_fields__}


def test_retry_runs_the_unit_again_from_its_reads_until_it_wins(store: Store):
    post = store.puzzles.claim_daily_post(P, GROUP, "2024-01-01", "italian", "p1", T0)
    store.puzzles.save_attempt(new_attempt(post))
    # What a unit read just before another writer changed the row (on SQLite a unit holds the
    # lock from its first read, so the race is staged: the first run works from that old read).
    stale = store.puzzles.attempt(post, "u1")
    store.puzzles.save_attempt(AttemptRecord(**{**_fields(stale), "misses": 1}))
    runs = []

    def add_a_hint() -> int:
        read = stale if not runs else store.puzzles.attempt(post, "u1")
        runs.append(1)
        store.puzzles.save_attempt(AttemptRecord(**{**_fields(read), "hints": read.hints + 1}))
        return len(runs)

    assert in_transaction(store, add_a_hint, no_wait()) == 2
    final = store.puzzles.attempt(post, "u1")
    assert (final.misses, final.hints) == (1, 1)                        # neither update lost


def test_retry_gives_up_after_its_attempts_with_the_contention(store: Store):
    calls = []

    def always() -> None:
        calls.append(1)
        raise StorageContention("lost")

    with pytest.raises(StorageContention):
        retry_contention(always, no_wait())
    assert len(calls) == 3
    policy = RetryPolicy(base=0.01, cap=0.05, rng=random.Random(1))
    assert all(0.0 <= policy.pause(n) <= min(0.05, 0.01 * 2 ** n) for n in range(1, 8))


def test_the_ratings_lock_belongs_inside_a_unit_of_work(store: Store):
    with pytest.raises(RuntimeError):
        store.ratings.lock()
    with store.transaction():
        store.ratings.lock()
        store.ratings.save(RatingRecord(P, "ana", "italian", 1600.0, 200.0, 0.06, 1, T0), "game:1")
    assert store.ratings.get(P, "ana", "italian").rating == 1600.0
    assert store.ratings.pool(P, "italian") == [store.rating(P, "ana", "italian")]
    assert [e.source for e in store.ratings.history(P, "ana", "italian")] == ["game:1"]
    store.save_rating(RatingRecord(P, "bob", "italian", 1400.0, 200.0, 0.06, 1, T0), "game:1")
    assert [r.subject for r in store.rating_pool(P, "italian")] == ["ana", "bob"]
    assert len(store.rating_history(P, "bob", "italian")) == 1
    store.ratings.clear()
    assert store.ratings.pool(P, "italian") == [] and store.ratings.history(P, "ana", "italian") == []
    with store.transaction():
        store.lock_ratings()
        store.clear_ratings()


# -- repositories with typed writes ------------------------------------------------------------------


def test_players_repository(store: Store):
    players = store.players
    assert players.save(P, "1001", "Ana", "ana_h", "es", T0) is True
    assert players.get(P, "1001").name == "Ana"
    assert players.by_username(P, "ANA_H").user_id == "1001"
    assert store.player_by_username(P, "nobody") is None
    players.set_notify(P, "1001", True, T0)
    assert players.set_unreachable(P, "1001", True, T0) is True
    assert players.notify_setting(P, "1001").unreachable is True
    players.ensure_chat(P, GROUP, "group", T0)
    players.update_chat(P, GROUP, ChatSettings(variant="spanish"))
    players.update_chat(P, GROUP, ChatSettings(language="it"))
    assert (players.chat(P, GROUP).language, players.chat(P, GROUP).variant) == ("it", "spanish")
    with pytest.raises(TypeError):
        ChatSettings(colour="red")                                          # a typo fails where it is written
    players.move_chat(P, GROUP, "-100new")
    assert players.chat(P, GROUP) is None and players.chat(P, "-100new").variant == "spanish"


def test_challenges_repository(store: Store):
    challenges = store.challenges
    number = challenges.create(NewChallenge(platform=P, chat_id=GROUP, challenger_id="1001", challenger_name="Ana",
                                            variant="italian", color="white", move_seconds=HOUR, created_at=T0))
    assert challenges.get(number).target_username is None
    assert [c.id for c in challenges.open_in(P, GROUP)] == [number] == [c.id for c in store.find_challenges(P, GROUP)]
    assert challenges.next_lapse(P, 60) == T0 + HOUR
    assert challenges.lapsed(P, T0 + HOUR, 60)[0].id == number
    challenges.remember_message(P, GROUP, "m1", number)
    assert challenges.messages(number) == [(P, GROUP, "m1")]
    game_id = challenges.accept(number, a_game())
    assert game_id == number and store.games.get(game_id).status == "active"
    assert challenges.close(number, "cancelled") is False                    # no longer open


def test_games_repository(store: Store):
    games = store.games
    game_id = games.create(a_game(bot_level=2, white_id="bot:engine"))
    other = games.create(a_game())
    assert games.get(game_id).bot_level == 2 and [g.id for g in games.against_bot(P)] == [game_id]
    assert store.bot_games() == games.against_bot()
    row = games.get(other)
    notation, path, captured, fen_after = LINE[0]
    games.update(other, row.version, GameChange(fen=fen_after, ply=1, last_path=path, last_captured=captured),
                 NewMove(ply=1, notation=notation, fen_after=fen_after, by_user="1001", played_at=T0 + 1))
    with pytest.raises(StaleGame):
        games.update(other, row.version, GameChange(ply=5))
    assert games.moves(other)[0].notation == notation and games.recent_fens(other, 1) == [fen_after]
    assert games.get(other).last_path == path
    assert [g.id for g in games.active_in(P, GROUP)] == [game_id, other]
    assert games.recent(P, GROUP, "1001")[0].id == other and games.last(P, GROUP).id == other
    assert [g.id for g in games.find(P, GROUP, "active", user_id="1002")] == [other, game_id]
    assert [g.id for g in games.due(T0 + HOUR)] == [game_id, other]
    assert games.mark_reminded(game_id, 0) is True
    games.remember_message(P, GROUP, "b1", other)
    assert games.of_message(P, GROUP, "b1") == other and store.board_messages(P, GROUP) == [("b1", other)]
    finished = games.get(other)
    games.update(other, finished.version, GameChange(status="finished", result_score="1-0",
                                                     result_reason=ResultReason.RESIGN, winner=Color.WHITE,
                                                     finished_at=T0 + 2, deadline_at=None))
    assert games.get(other).winner == Color.WHITE


def test_puzzles_repository(store: Store):
    puzzles = store.puzzles
    puzzles.subscribe(P, GROUP, "09:00", "Europe/Rome", "italian", T0, "it")
    assert puzzles.subscription(P, GROUP).timezone == "Europe/Rome" and len(puzzles.subscriptions(P)) == 1
    assert store.subscriptions() == puzzles.subscriptions()
    daily = puzzles.claim_daily_post(P, GROUP, "2024-01-01", "italian", "p1", T0)
    assert puzzles.claim_daily_post(P, GROUP, "2024-01-01", "italian", "p2", T0) is None
    personal = puzzles.create_personal_post(P, GROUP, "1001", "italian", "p3", T0)
    assert puzzles.post(daily).puzzle_id == "p1" and puzzles.daily_posts(P, GROUP)[0].id == daily
    assert puzzles.personal_posts(P, "1001")[0].id == personal
    puzzles.remember_message(P, GROUP, "pm", daily)
    assert puzzles.of_message(P, GROUP, "pm") == daily
    puzzles.save_attempt(new_attempt(daily, "1001", solved_at=T0 + 5, rated_score=1.0, rated_at=T0 + 5))
    puzzles.save_attempt(new_attempt(personal, "1001", rated_score=0.0, rated_at=T0 + 6))
    assert puzzles.claim_first_solver(daily, "1001", "Ana") is True
    assert puzzles.claim_first_solver(daily, "1002", "Bob") is False
    assert [a.user_id for a in puzzles.attempts(daily)] == ["1001"]
    assert [p.id for p, _a in puzzles.chat_attempts(P, GROUP)] == [daily]
    assert [p.id for p, _a in puzzles.user_attempts(P, "1001")] == [daily]
    assert {p.id for p, _a in puzzles.user_attempts(P, "1001", daily_only=False)} == {daily, personal}
    assert [p.id for p, _a in puzzles.rated_attempts()] == [daily, personal]
    assert puzzles.unsubscribe(P, GROUP, T0) is True and puzzles.subscriptions(P) == []


def test_settings_repository(store: Store):
    settings = store.settings
    settings.beat("tg", T0)
    assert store.last_beat("tg") == T0
    assert settings.resume_after_downtime("tg", T0 + 30, threshold=60) == 0.0
    assert settings.resume_after_downtime("tg", T0 + 1000, threshold=60, limit=500) == 500
    secret = settings.link_secret()
    assert len(secret) == 32 and store.link_secret() == secret
    settings.set_pending("q", {"a": 1})
    assert settings.pending("q") == {"a": 1}
    settings.drop_pending("q")
    assert settings.pending("q") is None


def test_games_repository_keeps_an_analysis(store: Store):
    games = store.games
    game_id = games.create(a_game())
    assert games.analysis(game_id, 4) is None
    games.save_analysis(game_id, 4, [{"ply": 1, "eval": 0.5}], T0)
    games.save_analysis(game_id, 4, [{"ply": 2, "eval": -1.0}], T0 + 1)          # the later one replaces it
    kept = games.analysis(game_id, 4)
    assert (kept.notes, kept.created_at) == (({"ply": 2, "eval": -1.0},), T0 + 1)
    assert store.analysis(game_id, 4) == kept


def test_outbox_repository(store: Store):
    outbox = store.outbox
    first = outbox.enqueue(P, GROUP, "one", T0)
    second = outbox.enqueue(P, "-100other", "two", T0 + 1)
    assert outbox.platforms() == [P] and outbox.next_wakeup(P) == T0
    assert [m.id for m in outbox.due(P, T0 + 1)] == [first, second]
    assert [m.id for m in outbox.due(P, T0 + 1, exclude=[GROUP])] == [second]
    assert [m.id for m in outbox.claim(P, "a", T0 + 1, T0 + 100)] == [first, second]
    assert outbox.claim(P, "b", T0 + 2, T0 + 100) == []                            # held by a
    assert outbox.hold([first, second], "a", T0 + 200) == {first, second}
    outbox.set_delivered(first, 1, owner="a", lease_until=T0 + 300)
    assert outbox.mark_sent(first, T0 + 3, owner="a") is True
    outbox.retry_later(second, T0 + 50, "flood", owner="a")
    assert (outbox.get(second).attempts, outbox.get(second).next_attempt_at) == (1, T0 + 50)
    assert [m.id for m in outbox.claim(P, "b", T0 + 60, T0 + 100)] == [second]
    assert outbox.release("b") == 1
    outbox.drop(second, "gone")
    assert [m.status for m in outbox.find(P)] == ["sent", "dropped"] and outbox.find(status="pending") == []
    assert outbox.prune(T0 + 10) == 2 and store.find_outbox() == []


def test_sends_repository(store: Store):
    sends = store.sends
    assert sends.reserve([("chat", 1.0, 0.0)], T0, max_wait=5.0) == T0
    assert sends.reserve([("chat", 1.0, 0.0)], T0, max_wait=5.0) == T0 + 1       # spaced by its interval
    sends.hold("chat", T0 + 30)
    assert sends.reserve([("chat", 1.0, 0.0)], T0, max_wait=5.0) == T0 + 30       # refused: past max_wait
    assert sends.prune(T0 + 31) == 1
    assert store.reserve_sends([("chat", 1.0, 0.0)], T0, max_wait=5.0) == T0


def test_lifetime_methods(store: Store):
    store.check_file()
    store.verify()
    assert "games" in store.dump()


def test_an_outbox_reply_partly_delivered_resumes_after_its_delivered_part(store: Store):
    item = store.enqueue(P, GROUP, "{}", T0)
    store.set_delivered(item, 2)
    assert store.outbox_message(item).delivered == 2
    store.mark_sent(item, T0)
    store.set_delivered(item, 3)                     # no longer pending: nothing changes
    assert store.outbox_message(item).delivered == 2
