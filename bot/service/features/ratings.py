"""Ratings, stats and leaderboards.

Glicko-2 (bot/ratings) per variant for games between people; games against the bot go to a pool
of their own ('<variant>:bot', the bot's levels at fixed ratings) and never move the rating
between people; a game that ends in its first two moves by resignation or time is not rated.
Puzzles have their own pool ('puzzles'), and each puzzle is rated too, moving with its solvers.

Every rating is derived from what is stored (finished games, rated attempts) by the same
functions, live at the end of each game or attempt and all at once by ``rebuild_ratings``
(``python -m bot ratings rebuild``), so both give the same numbers.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any, Protocol

from bot.puzzles import bank
from bot.ratings import LICHESS, Outcome, Rating, Settings, periods_between, update
from bot.rules import VARIANTS, Color
from bot.service.domain import AttemptScored, EventBus, GameFinished
from bot.service.features.base import Outlet, Runtime, UseCase
from bot.service.features.common import own_number
from bot.service.features.games import Games
from bot.service.features.identity import Caller
from bot.service.features.results_stats import (
    HeadToHead,
    PlayerStats,
    PoolStats,
    PuzzleRanking,
    PuzzleSolver,
    PuzzleStats,
    RankedPlayer,
    Record,
    StatsOutcome,
    StatsRequest,
    TopOutcome,
    TopRequest,
    UnknownPlayer,
    Usage,
    VariantRanking,
)
from bot.storage import BOT_ID, in_transaction
from bot.storage.records import (
    SHORT_PLIES,
    AttemptRecord,
    GameCountRecord,
    GameRecord,
    PuzzlePostRecord,
    RatingRecord,
)

log = logging.getLogger("bot.service")

PUZZLE_POOL = "puzzles"
PUZZLE_PLATFORM = "*"          # a puzzle's own rating is the same on every platform
# The bot's levels as opponents in the '<variant>:bot' pools: fixed, sure ratings.
BOT_RATINGS = {1: 800.0, 2: 1100.0, 3: 1400.0, 4: 1700.0, 5: 2000.0}
BOT_DEVIATION = 60.0
# A puzzle starts from the bank's difficulty with this deviation.
PUZZLE_START_DEVIATION = 300.0
MIN_LEADERBOARD_GAMES = 5
UNRATED_REASONS = ("resign", "time")
# A tournament withdrawal's game: the tournament scores it as a forfeit, so it counts for no rating
# however far it went.
FORFEIT = "forfeit"
TOP_SIZE = 10
# The most points of one pool's rating chart: a long history is drawn from events spread over it
# (the first and the last among them), so /stats reads the same amount however long it is.
CHART_POINTS = 240


def game_pool(game: GameRecord) -> str:
    return game.variant if game.bot_level is None else f"{game.variant}:bot"


def is_rated(game: GameRecord) -> bool:
    """Whether a finished game counts for ratings: it did not end in its first two moves by a
    resignation or on time (a misclick or a challenge nobody meant to play), nor by a tournament
    player's withdrawal (a forfeit)."""
    return game.status == "finished" and game.result_reason != FORFEIT and not (
        game.ply < SHORT_PLIES and game.result_reason in UNRATED_REASONS)


def _counts_rated(count: GameCountRecord) -> bool:
    """``is_rated`` of the finished games a count groups."""
    return count.result_reason != FORFEIT and not (count.short and count.result_reason in UNRATED_REASONS)


def _white_score(game: GameRecord) -> float:
    if game.winner == Color.WHITE:
        return 1.0
    if game.winner == Color.BLACK:
        return 0.0
    return 0.5


class SolverRecords(Protocol):
    """What ratings read of the puzzle solvers (``PuzzleRecords``): a protocol, so the puzzles use
    case, which shows its solvers their ratings, is the one that imports the other."""

    def puzzle_streaks(self, platform: str, user_id: str) -> tuple[int, int]: ...

    def puzzle_leaderboard(self, platform: str, chat_id: str) -> list[dict[str, Any]]: ...


class Ratings(UseCase):
    """Ratings at the end of games and puzzles (it follows GameFinished and AttemptScored on
    ``bus``); /stats and /top."""

    rating_settings: Settings = LICHESS

    def __init__(self, runtime: Runtime, outlet: Outlet, games: Games, records: SolverRecords,
                 bus: EventBus) -> None:
        super().__init__(runtime, outlet)
        self.games = games
        self.records = records
        bus.subscribe(GameFinished, lambda event: self._rate_game(event.game))
        bus.subscribe(AttemptScored, self._attempt_scored)

    # -- updating ------------------------------------------------------------------------------------

    def _attempt_scored(self, event: AttemptScored) -> None:
        self._rate_puzzle(event.post, event.attempt)

    def _current(self, platform: str, subject: str, pool: str,
                 start: Rating | None = None) -> tuple[Rating, int, float | None]:
        stored = self.storage.ratings.get(platform, subject, pool)
        if stored is None:
            return start or Rating(self.rating_settings.rating, self.rating_settings.deviation,
                                   self.rating_settings.volatility), 0, None
        return Rating(stored.rating, stored.deviation, stored.volatility), stored.games, stored.updated_at

    def _rate_game(self, game: GameRecord) -> None:
        """Update both players' ratings for a finished game (inside its transaction)."""
        if not is_rated(game):
            return
        self.storage.ratings.lock()
        at = game.finished_at if game.finished_at is not None else game.created_at
        pool = game_pool(game)
        sides = [(game.white_id, _white_score(game)), (game.black_id, 1.0 - _white_score(game))]
        before: dict[str, tuple[Rating, int, float | None]] = {}
        for user_id, _score in sides:
            if user_id == BOT_ID:
                level = game.bot_level or 3
                before[user_id] = (Rating(BOT_RATINGS.get(level, 1400.0), BOT_DEVIATION, 0.06), 0, None)
            else:
                before[user_id] = self._current(game.platform, user_id, pool)
        (white_id, white_score), (black_id, black_score) = sides
        for user_id, score, other in ((white_id, white_score, black_id), (black_id, black_score, white_id)):
            if user_id == BOT_ID:
                continue            # the bot's levels keep their ratings
            mine, games, last = before[user_id]
            theirs = before[other][0]
            new = update(mine, [Outcome(theirs, score)], self.rating_settings,
                         periods=periods_between(last, at, self.rating_settings))
            self.storage.ratings.save(RatingRecord(game.platform, user_id, pool, new.rating, new.deviation,
                                                  new.volatility, games + 1, at), f"game:{game.id}")

    def puzzle_rating(self, platform: str, user_id: str) -> float:
        """A user's puzzle rating as stored (the starting rating before their first attempt)."""
        return self._current(platform, user_id, PUZZLE_POOL)[0].rating

    def _rate_puzzle(self, post: PuzzlePostRecord, attempt: AttemptRecord) -> float | None:
        if attempt.rated_score is None or attempt.rated_at is None:
            return None
        if own_number(post.puzzle_id) is not None:
            return None         # a puzzle of the player's own game is reviewed until learnt, not rated
        self.storage.ratings.lock()
        puzzle = bank.by_id(post.variant, post.puzzle_id)
        start = Rating(float(puzzle["rating"]) if puzzle else 1500.0, PUZZLE_START_DEVIATION,
                       self.rating_settings.volatility)
        subject = f"puzzle:{post.puzzle_id}"
        player, games, last = self._current(post.platform, attempt.user_id, PUZZLE_POOL)
        item, tries, item_last = self._current(PUZZLE_PLATFORM, subject, PUZZLE_POOL, start)
        at = attempt.rated_at
        score = attempt.rated_score
        new_player = update(player, [Outcome(item, score)], self.rating_settings,
                            periods=periods_between(last, at, self.rating_settings))
        new_item = update(item, [Outcome(player, 1.0 - score)], self.rating_settings,
                          periods=periods_between(item_last, at, self.rating_settings))
        source = f"post:{post.id}"
        self.storage.ratings.save(RatingRecord(post.platform, attempt.user_id, PUZZLE_POOL, new_player.rating,
                                              new_player.deviation, new_player.volatility, games + 1, at), source)
        self.storage.ratings.save(RatingRecord(PUZZLE_PLATFORM, subject, PUZZLE_POOL, new_item.rating,
                                              new_item.deviation, new_item.volatility, tries + 1, at), source)
        return new_player.rating - player.rating

    def puzzle_rating_now(self, platform: str, user_id: str) -> str:
        return self._shown(self.storage.ratings.get(platform, user_id, PUZZLE_POOL))

    def rebuild_ratings(self) -> dict[str, int]:
        """Forget every rating and compute them again from the stored games and attempts, in the
        order they happened; how many games and attempts were rated.  Run again if it loses a race
        (a serialization failure on a server with row locks)."""
        return in_transaction(self.storage, self._rebuild)

    def _rebuild(self) -> dict[str, int]:
        # Read under the ratings lock, in the transaction that writes: a game finishing meanwhile
        # is either read here or rated after this commits, on top of what it wrote.
        self.storage.ratings.lock()
        games = [g for g in self.storage.games.find(status="finished") if is_rated(g)]
        attempts = self.storage.puzzles.rated_attempts()
        events: list[tuple[float, int, int, Any]] = []
        for game in games:
            events.append((game.finished_at if game.finished_at is not None else game.created_at, 0, game.id,
                           game))
        for index, (post, attempt) in enumerate(attempts):
            events.append((attempt.rated_at or 0.0, 1, index, (post, attempt)))
        events.sort(key=lambda e: e[:3])
        self.storage.ratings.clear()
        for _at, kind, _n, item in events:
            if kind == 0:
                self._rate_game(item)
            else:
                self._rate_puzzle(*item)
        return {"games": len(games), "attempts": len(attempts)}

    # -- /stats ----------------------------------------------------------------------------------------

    def _as_of_now(self, record: RatingRecord) -> Rating:
        """The rating as it stands today: an idle player's deviation has grown since the last
        rated result (lichess shows it the same way), so a long-idle player turns provisional."""
        stored = Rating(record.rating, record.deviation, record.volatility)
        if record.updated_at is None:
            return stored
        return update(stored, [], self.rating_settings,
                      periods=periods_between(record.updated_at, self.clock(), self.rating_settings))

    def _shown(self, record: RatingRecord | None) -> str:
        if record is None:
            return "-"
        return self._as_of_now(record).shown(self.rating_settings)

    def _who(self, caller: Caller, word: str) -> tuple[str, str] | None:
        """(user id, name) of an @handle seen on this platform."""
        handle = word.lstrip("@")
        if not handle:
            return None
        if caller.by.username and handle.lower() == caller.by.username.lower():
            return caller.user_id, caller.name
        player = self.storage.players.by_username(caller.platform, handle)
        return (player.user_id, player.name) if player else None

    def _record(self, counts: list[GameCountRecord], user_id: str) -> dict[str, Record]:
        """Per pool: games, wins, draws, losses of a user among counted finished games."""
        tally: dict[str, Counter[str]] = {}
        for count in counts:
            if user_id not in (count.white_id, count.black_id):
                continue
            pool = count.variant if count.bot_level is None else f"{count.variant}:bot"
            c = tally.setdefault(pool, Counter())
            color = Color.WHITE if count.white_id == user_id else Color.BLACK
            c["games"] += count.games
            c["wins" if count.winner == color else "draws" if count.winner is None else "losses"] += count.games
        return {pool: Record(c["games"], c["wins"], c["draws"], c["losses"]) for pool, c in tally.items()}

    def stats(self, caller: Caller, request: StatsRequest) -> StatsOutcome:
        """/stats [@user]: ratings, results and puzzle streaks; /stats @a @b: their games together."""
        if len(request.handles) > 2:
            return Usage("stats")
        people = []
        for word in request.handles:
            who = self._who(caller, word)
            if who is None:
                return UnknownPlayer(word[:40])
            people.append(who)
        if len(people) == 2:
            return self._head_to_head(caller, people[0], people[1])
        user_id, name = people[0] if people else (caller.user_id, caller.name)
        platform = caller.platform
        results = self._record(self.storage.games.count_finished(platform, user_id=user_id), user_id)
        pools = []
        series = []
        for variant in VARIANTS:
            for pool, vs_bot in ((variant, False), (f"{variant}:bot", True)):
                rating = self.storage.ratings.get(platform, user_id, pool)
                record = results.get(pool)
                if rating is None and record is None:
                    continue
                # Games that never counted for a rating (over in their first two moves) show no "-".
                pools.append(PoolStats(variant, vs_bot, self._shown(rating) if rating is not None else None,
                                       round(self._as_of_now(rating).deviation) if rating is not None else None,
                                       record or Record()))
                history = [] if vs_bot else self.storage.ratings.history(platform, user_id, pool, CHART_POINTS)
                if history:
                    # One point per rated game, at its date (no made-up starting point); a long
                    # history gives CHART_POINTS of them, spread from its first game to its last.
                    series.append((variant, [(h.at, h.rating) for h in history]))
        puzzle = self.storage.ratings.get(platform, user_id, PUZZLE_POOL)
        current, best = self.records.puzzle_streaks(platform, user_id)
        # Every solve counts, /puzzle ones too; streaks stay about the puzzle of the day.
        solved = sum(1 for _p, a in self.storage.puzzles.user_attempts(platform, user_id, daily_only=False)
                     if a.solved_at is not None)
        puzzles = PuzzleStats(self._shown(puzzle), solved, current, best) if puzzle is not None or solved else None
        return PlayerStats(name, pools, puzzles, series[:4])

    def _head_to_head(self, caller: Caller, a: tuple[str, str], b: tuple[str, str]) -> HeadToHead:
        counts = [] if a[0] == b[0] else self.storage.games.count_finished(
            caller.platform, user_id=a[0], opponent_id=b[0])
        results = self._record(counts, a[0])
        return HeadToHead(a[1], b[1], sorted(results.items()))

    # -- /top ------------------------------------------------------------------------------------------

    def top(self, caller: Caller, request: TopRequest, lang: str) -> TopOutcome:
        """/top [variant] (this chat), /top global [variant], /top puzzles (``lang``: the chat's
        language, which guesses its own variant when nothing else says it)."""
        if request.scope == "puzzles":
            return self._top_puzzles(caller)
        everywhere = request.scope == "global"
        # The chat's games counted once for every board (the global boards count rated games from
        # the ratings themselves).
        counts = [] if everywhere else self.storage.games.count_finished(caller.platform, caller.chat_id)
        if request.variant is not None:
            return [self._top_variant(caller, request.variant, everywhere, counts)]
        # No variant named: every variant that has ranked players, the chat's own first.
        first = self.games.default_variant(caller, lang)
        boards = [self._top_variant(caller, variant, everywhere, counts)
                  for variant in sorted(VARIANTS, key=lambda v: v != first)]
        return [b for b in boards if b.entries] or [b for b in boards if b.variant == first]

    def _top_variant(self, caller: Caller, variant: str, everywhere: bool,
                     counts: list[GameCountRecord]) -> VariantRanking:
        """The leaderboard of one variant (an empty one says who would be on it); ``counts``: the
        chat's finished games counted (for a board of this chat)."""
        platform = caller.platform
        ratings = {r.subject: r for r in self.storage.ratings.pool(platform, variant)}
        rated: Counter[str] = Counter()
        if everywhere:
            rated.update({subject: r.games for subject, r in ratings.items()})
        else:
            for count in counts:
                if count.variant == variant and count.bot_level is None and _counts_rated(count):
                    rated[count.white_id] += count.games
                    rated[count.black_id] += count.games
        rows = [(ratings[s], n) for s, n in rated.items() if n >= MIN_LEADERBOARD_GAMES and s in ratings]
        rows.sort(key=lambda item: (-item[0].rating, item[0].subject))
        entries = [RankedPlayer(self._player_name(r.platform, r.subject), self._shown(r), n)
                   for r, n in rows[:TOP_SIZE]]
        return VariantRanking(variant, everywhere, entries, MIN_LEADERBOARD_GAMES)

    def _player_name(self, platform: str, user_id: str) -> str:
        """The name a player was last seen with."""
        player = self.storage.players.get(platform, user_id)
        return player.name if player else user_id

    def _top_puzzles(self, caller: Caller) -> PuzzleRanking:
        entries = []
        for row in self.records.puzzle_leaderboard(*caller.key):
            rating = self.storage.ratings.get(caller.platform, row["user_id"], PUZZLE_POOL)
            entries.append(PuzzleSolver(row["name"], row["points"], row["solved"], row["streak"], self._shown(rating)))
        return PuzzleRanking(entries)
