"""/top and /stats read kept counts of finished games (issue 30); what they answer must be what a
straightforward recount from the finished games themselves gives: every board of /top (this chat,
one variant or all of them, every chat), the 5-rated-games threshold, a player's record per pool,
two players' games together, and the rating chart's points (a long history cut to at most
CHART_POINTS, first and last kept).

A real service on SQLite and on PostgreSQL (tests/pg_server.py; skipped where no server can run,
unless DRAUGHTS_REQUIRE_POSTGRES=1); games end through the chat (moves, /resign, /draw) and,
to have hundreds of them, through the service's own result path (``Games.finish_game``, which
rates them as the chat's games are)."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from catalog_text import says

from bot.rules import VARIANTS, Color, Position, Result, ResultReason
from bot.service import ChatEvent, GameService
from bot.service.chat.layer import Ctx
from bot.service.features.identity import Caller
from bot.service.features.ratings import CHART_POINTS, MIN_LEADERBOARD_GAMES, TOP_SIZE, game_pool, is_rated
from bot.service.features.results_stats import (
    HeadToHead,
    PlayerStats,
    Record,
    StatsRequest,
    TopRequest,
    VariantRanking,
)
from bot.storage import BOT_ID, SQLiteStore, Store
from bot.storage.repositories import NewGame

T0 = 1_700_000_000.0
PLATFORM = "test"
GROUP, OTHER_GROUP = "group-1", "group-2"
PEOPLE = ["ana", "bob", "cai", "dan", "eva", "fay", "gus"]


class Bench:
    """A service on one database, a clock the test moves, and games ended at will."""

    def __init__(self, storage: Store) -> None:
        self.storage = storage
        self.now = [T0]
        self.service = GameService(storage, clock=lambda: self.now[0], rng=random.Random(1))
        for user in PEOPLE:                   # seen on the platform: their @handles resolve
            for chat in (GROUP, OTHER_GROUP):
                self.say(user, "/help", chat)

    def say(self, user: str, text: str, chat: str = GROUP) -> str:
        replies = self.service.handle(ChatEvent(platform=PLATFORM, chat_id=chat, user_id=user,
                                                user_name=user.capitalize(), username=user, language="en",
                                                chat_kind="group", text=text))
        return "\n".join(r.text for r in replies)

    def ctx(self, user: str = "ana", chat: str = GROUP) -> Caller:
        event = ChatEvent(platform=PLATFORM, chat_id=chat, user_id=user, user_name=user.capitalize(),
                          username=user, language="en", chat_kind="group", text="")
        return Ctx(event, "en", self.storage.ensure_chat(PLATFORM, chat, "group", self.now[0]), self.now[0]).caller

    def end(self, white: str, black: str, variant: str = "italian", chat: str = GROUP, winner: Color | None = None,
            reason: ResultReason = ResultReason.NO_MOVES, ply: int = 30, level: int | None = None) -> None:
        """A game stored as the service starts one, ended through the service's result path."""
        self.now[0] += 600.0
        game_id = self.storage.games.create(NewGame(
            platform=PLATFORM, chat_id=chat, variant=variant, white_id=white, white_name=white.capitalize(),
            black_id=black, black_name=black.capitalize(), fen=Position.start(variant).fen(), move_seconds=86400,
            created_at=self.now[0] - 300, deadline_at=self.now[0] + 86400, bot_level=level))
        row = self.storage.games.get(game_id)
        assert row is not None
        score = {Color.WHITE: "1-0", Color.BLACK: "0-1", None: "1/2-1/2"}[winner]
        self.service.app.games.finish_game(row, Result(score, reason, winner), self.now[0], fields={"ply": ply})

    def play_in_chat(self, white: str, black: str, plies: int, end: str) -> None:
        """A game between two people in the group, through the chat: a challenge, moves, then
        ``end`` ('resign' by white, 'draw' agreed)."""
        self.say(white, f"/new italian white @{black}")
        self.say(black, "/accept")
        position = Position.start("italian")
        for ply in range(plies):
            move = position.legal_moves()[0]
            self.now[0] += 60
            assert says(self.say((white, black)[ply % 2], f"/m {move}"), "en", "move.played", move=move)
            position = position.play(move)
        if end == "resign":
            self.say(white, "/resign")
            assert says(self.say(white, "/resign"), "en", "result.win.resign")
        else:
            self.say(white, "/draw")
            self.say(black, "/draw")


@pytest.fixture(params=["sqlite", "postgres"])
def bench(request, tmp_path: Path) -> Iterator[Bench]:
    if request.param == "postgres":
        from pg_server import new_database_url

        from bot.storage.postgres import PostgresStore

        storage: Store = PostgresStore(new_database_url())
    else:
        storage = SQLiteStore(tmp_path / "stats.db")
    b = Bench(storage)
    yield b
    b.service.close()
    storage.close()


def fill(b: Bench, games: int, seed: int) -> None:
    """Games of every kind: three variants, two chats, people and the bot, every result, some
    over in their first two plies (unrated when resigned or lost on time, rated when agreed)."""
    rng = random.Random(seed)
    for _ in range(games):
        white, black = rng.sample(PEOPLE[:5], 2)
        level = None
        if rng.random() < 0.15:
            level, white = rng.randint(1, 5), BOT_ID
        reason = rng.choice([ResultReason.NO_MOVES, ResultReason.RESIGN, ResultReason.TIME, ResultReason.AGREEMENT])
        winner = None if reason == ResultReason.AGREEMENT else rng.choice([Color.WHITE, Color.BLACK])
        b.end(white, black, rng.choice(list(VARIANTS)), rng.choice([GROUP, GROUP, OTHER_GROUP]), winner, reason,
              rng.choice([0, 1, 2, 25, 60]), level)


# -- the straightforward recount -------------------------------------------------------------------------


def finished(b: Bench, chat: str | None = None, user: str | None = None) -> list:
    games = b.storage.find_games(PLATFORM, chat, status="finished")
    return [g for g in games if user is None or user in (g.white_id, g.black_id)]


def record_of(games: list, user: str) -> dict[str, Record]:
    tally: dict[str, Counter[str]] = {}
    for g in games:
        c = tally.setdefault(game_pool(g), Counter())
        color = Color.WHITE if g.white_id == user else Color.BLACK
        c["games"] += 1
        c["wins" if g.winner == color else "draws" if g.winner is None else "losses"] += 1
    return {pool: Record(c["games"], c["wins"], c["draws"], c["losses"]) for pool, c in tally.items()}


def board_of(b: Bench, variant: str, everywhere: bool, chat: str = GROUP) -> list[tuple[str, int]]:
    """(name, rated games) of a leaderboard as it is recounted from every finished game."""
    ratings = {r.subject: r for r in b.storage.ratings.pool(PLATFORM, variant)}
    counts: Counter[str] = Counter()
    if everywhere:
        counts.update({s: r.games for s, r in ratings.items()})
    else:
        for g in finished(b, chat):
            if g.variant == variant and g.bot_level is None and is_rated(g):
                counts[g.white_id] += 1
                counts[g.black_id] += 1
    rows = sorted(((ratings[s], n) for s, n in counts.items() if n >= MIN_LEADERBOARD_GAMES and s in ratings),
                  key=lambda item: (-item[0].rating, item[0].subject))
    return [(r.subject.capitalize(), n) for r, n in rows[:TOP_SIZE]]


def entries(board: VariantRanking) -> list[tuple[str, int]]:
    return [(e.name, e.games) for e in board.entries]


def check_everything(b: Bench) -> None:
    ratings = b.service.app.ratings
    for chat in (GROUP, OTHER_GROUP):
        for everywhere in (False, True):
            scope = "global" if everywhere else "chat"
            for variant in VARIANTS:
                [board] = ratings.top(b.ctx(chat=chat), TopRequest(scope, variant), "en")
                assert entries(board) == board_of(b, variant, everywhere, chat), (chat, scope, variant)
            # No variant named: every variant with ranked players, the chat's own first.
            first = b.service.app.games.default_variant(b.ctx(chat=chat), "en")
            boards = ratings.top(b.ctx(chat=chat), TopRequest(scope, None), "en")
            order = sorted(VARIANTS, key=lambda v: v != first)
            expected = [(v, board_of(b, v, everywhere, chat)) for v in order]
            expected = [e for e in expected if e[1]] or [e for e in expected if e[0] == first]
            assert [(board.variant, entries(board)) for board in boards] == expected
    for user in PEOPLE:
        stats = ratings.stats(b.ctx(user), StatsRequest())
        assert isinstance(stats, PlayerStats)
        shown = {(f"{p.variant}:bot" if p.vs_bot else p.variant): p.record for p in stats.pools}
        assert shown == record_of(finished(b, user=user), user), user
        for other in PEOPLE:
            h2h = ratings.stats(b.ctx(user), StatsRequest((f"@{user}", f"@{other}")))
            assert isinstance(h2h, HeadToHead)
            together = [g for g in finished(b, user=user) if other in (g.white_id, g.black_id) and user != other]
            assert h2h.pools == sorted(record_of(together, user).items()), (user, other)


def test_top_and_stats_are_what_the_finished_games_give(bench: Bench):
    # Through the chat: a rated game resigned after four plies, a draw agreed, a resignation
    # before any move (not rated: it counts in the record, not on the board).
    bench.play_in_chat("ana", "bob", 4, "resign")
    bench.play_in_chat("bob", "cai", 2, "draw")
    bench.play_in_chat("cai", "ana", 0, "resign")
    fill(bench, 150, seed=7)
    check_everything(bench)


def test_the_leaderboard_needs_five_rated_games_in_the_chat(bench: Bench):
    # Fay: four rated games and two over at once by resignation or time (not rated); Gus: five.
    for _ in range(4):
        bench.end("fay", "ana", winner=Color.WHITE)
    bench.end("fay", "ana", winner=Color.BLACK, reason=ResultReason.RESIGN, ply=1)
    bench.end("ana", "fay", winner=Color.WHITE, reason=ResultReason.TIME, ply=0)
    for _ in range(5):
        bench.end("gus", "bob", winner=Color.WHITE)
    # Elsewhere, Fay's fifth rated game: not this chat's.
    bench.end("fay", "bob", chat=OTHER_GROUP, winner=Color.WHITE)
    [board] = bench.service.app.ratings.top(bench.ctx(), TopRequest("chat", "italian"), "en")
    # Ana played Fay's games too: four rated, not enough either.
    assert sorted(entries(board)) == [("Bob", 5), ("Gus", 5)]
    check_everything(bench)
    # One more rated game in the chat puts Fay on it.
    bench.end("fay", "cai", winner=None, reason=ResultReason.AGREEMENT, ply=1)    # agreed: rated however short
    [board] = bench.service.app.ratings.top(bench.ctx(), TopRequest("chat", "italian"), "en")
    assert ("Fay", 5) in entries(board)
    check_everything(bench)


def test_a_long_rating_history_gives_the_chart_its_points_spread_first_and_last_kept(bench: Bench):
    for n in range(CHART_POINTS + 40):
        bench.end("ana", "bob", winner=Color.WHITE if n % 3 else Color.BLACK, ply=20 + n % 7)
    bench.end("ana", "cai", variant="spanish", winner=Color.WHITE)
    stats = bench.service.app.ratings.stats(bench.ctx("ana"), StatsRequest())
    assert isinstance(stats, PlayerStats)
    series = dict(stats.series)
    full = [(h.at, h.rating) for h in bench.storage.rating_history(PLATFORM, "ana", "italian")]
    assert len(full) == CHART_POINTS + 40
    points = series["italian"]
    assert len(points) <= CHART_POINTS and points[0] == full[0] and points[-1] == full[-1]
    assert set(points) <= set(full) and points == sorted(points)
    assert series["spanish"] == [(h.at, h.rating) for h in bench.storage.rating_history(PLATFORM, "ana", "spanish")]
    # The record counts every game, whatever the chart shows.
    [italian] = [p for p in stats.pools if p.variant == "italian" and not p.vs_bot]
    assert italian.record.games == CHART_POINTS + 40
