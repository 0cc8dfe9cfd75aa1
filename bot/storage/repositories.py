"""Repositories per aggregate, on any ``Store``: ``store.players``, ``store.challenges``,
``store.games``, ``store.puzzles``, ``store.ratings``, ``store.settings``, ``store.outbox``,
``store.sends``, ``store.tournaments``.

Writes take typed values (``NewChallenge``, ``NewGame``, ``GameChange``, ``NewMove``,
``ChatSettings``) instead of ``{column: value}`` dicts: a misspelt field is a TypeError where it is
written, not a ValueError at run time.  Each repository method is one call of the flat ``Store``
method of the same meaning (which every backend implements), so a backend gets the repositories
for free and both ways stay the same contract.  Together they cover every storage operation the
service uses; the unit of work (``store.transaction()``) and the store's lifetime stay on the store.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, fields
from typing import Any

from bot.rules import Color, ResultReason

from .contract import Contract
from .records import (
    AnalysisRecord,
    AttemptRecord,
    ChallengeRecord,
    ChatBestRecord,
    ChatRecord,
    GameCountRecord,
    GameRecord,
    GameScanRecord,
    MoveRecord,
    NotifyRecord,
    OutboxRecord,
    OwnPuzzleRecord,
    OwnReminderRecord,
    PlayerRecord,
    PuzzlePostRecord,
    PuzzleRunRecord,
    RatingEventRecord,
    RatingRecord,
    StormRunRecord,
    SubscriptionRecord,
    TournamentGameRecord,
    TournamentRecord,
)


class _Unset:
    """A field a change leaves as it is."""

    _instance: _Unset | None = None

    def __new__(cls) -> _Unset:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()


def _given(value: Any) -> dict[str, Any]:
    """The fields of a typed write that are set (UNSET ones left out)."""
    return {f.name: getattr(value, f.name) for f in fields(value) if getattr(value, f.name) is not UNSET}


# -- typed writes ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NewChallenge:
    """An open challenge to store (the store gives it its number)."""

    platform: str
    chat_id: str
    challenger_id: str
    challenger_name: str
    variant: str
    color: str
    move_seconds: int
    created_at: float
    target_username: str | None = None


@dataclass(frozen=True, slots=True)
class NewGame:
    """A game to start (active, ply 0, version 0)."""

    platform: str
    chat_id: str
    variant: str
    white_id: str
    white_name: str
    black_id: str
    black_name: str
    fen: str
    move_seconds: int
    created_at: float
    start_fen: str | None = None
    deadline_at: float | None = None
    bot_level: int | None = None
    result_score: str | None = None
    result_reason: ResultReason | None = None
    winner: Color | None = None
    draw_offer: Color | None = None
    last_path: tuple[int, ...] | None = None
    last_captured: tuple[int, ...] | None = None
    finished_at: float | None = None


@dataclass(frozen=True, slots=True)
class GameChange:
    """What a write changes in a game; every field left UNSET stays as it is."""

    fen: str = UNSET
    ply: int = UNSET
    quiet_plies: int = UNSET
    status: str = UNSET
    result_score: str | None = UNSET
    result_reason: ResultReason | None = UNSET
    winner: Color | None = UNSET
    draw_offer: Color | None = UNSET
    deadline_at: float | None = UNSET
    reminded: bool = UNSET
    last_path: tuple[int, ...] = UNSET
    last_captured: tuple[int, ...] = UNSET
    finished_at: float | None = UNSET
    move_seconds: int = UNSET
    white_name: str = UNSET
    black_name: str = UNSET


@dataclass(frozen=True, slots=True)
class NewMove:
    """A move to record with a game change."""

    ply: int
    notation: str
    fen_after: str
    by_user: str
    played_at: float


@dataclass(frozen=True, slots=True)
class ChatSettings:
    """A chat's settings to change; UNSET ones stay, None clears one."""

    language: str | None = UNSET
    variant: str | None = UNSET


# -- repositories ------------------------------------------------------------------------------------


class _Repository:
    def __init__(self, store: Contract) -> None:
        self._store = store


class PlayersRepository(_Repository):
    """Players, their notification settings, and chats."""

    def save(self, platform: str, user_id: str, name: str, username: str | None, language: str | None,
             now: float) -> bool:
        return self._store.save_player(platform, user_id, name, username, language, now)

    def get(self, platform: str, user_id: str) -> PlayerRecord | None:
        return self._store.player(platform, user_id)

    def by_username(self, platform: str, username: str) -> PlayerRecord | None:
        return self._store.player_by_username(platform, username)

    def notify_setting(self, platform: str, user_id: str) -> NotifyRecord | None:
        return self._store.notify_setting(platform, user_id)

    def set_notify(self, platform: str, user_id: str, private: bool, now: float) -> None:
        self._store.set_notify(platform, user_id, private, now)

    def set_unreachable(self, platform: str, user_id: str, unreachable: bool, now: float) -> bool:
        return self._store.set_unreachable(platform, user_id, unreachable, now)

    def chat(self, platform: str, chat_id: str) -> ChatRecord | None:
        return self._store.chat(platform, chat_id)

    def ensure_chat(self, platform: str, chat_id: str, kind: str, now: float) -> ChatRecord:
        return self._store.ensure_chat(platform, chat_id, kind, now)

    def update_chat(self, platform: str, chat_id: str, settings: ChatSettings) -> None:
        self._store.set_chat(platform, chat_id, **_given(settings))

    def move_chat(self, platform: str, old_chat_id: str, new_chat_id: str) -> None:
        self._store.move_chat(platform, old_chat_id, new_chat_id)


class ChallengesRepository(_Repository):
    """Challenges, the messages that show them, and turning one into a game."""

    def create(self, challenge: NewChallenge) -> int:
        return self._store.create_challenge(**_given(challenge))

    def get(self, challenge_id: int) -> ChallengeRecord | None:
        return self._store.challenge(challenge_id)

    def open_in(self, platform: str, chat_id: str) -> list[ChallengeRecord]:
        return self._store.open_challenges(platform, chat_id)

    def lapsed(self, platform: str | None, now: float, lifetime: float) -> list[ChallengeRecord]:
        return self._store.lapsed_challenges(platform, now, lifetime)

    def next_lapse(self, platform: str | None, lifetime: float) -> float | None:
        return self._store.next_challenge_lapse(platform, lifetime)

    def remember_message(self, platform: str, chat_id: str, message_id: str, challenge_id: int) -> None:
        self._store.remember_challenge_message(platform, chat_id, message_id, challenge_id)

    def messages(self, challenge_id: int) -> list[tuple[str, str, str]]:
        return self._store.challenge_messages(challenge_id)

    def close(self, challenge_id: int, status: str) -> bool:
        return self._store.close_challenge(challenge_id, status)

    def accept(self, challenge_id: int, game: NewGame) -> int | None:
        return self._store.accept_challenge(challenge_id, _new_game(game))


def _new_game(game: NewGame) -> dict[str, Any]:
    """A NewGame as create_game's dict: the nullable fields left out when None."""
    required = {"platform", "chat_id", "variant", "white_id", "white_name", "black_id", "black_name", "fen",
                "move_seconds", "created_at"}
    return {name: value for name, value in _given(game).items() if name in required or value is not None}


class GamesRepository(_Repository):
    """Games, their moves, their clocks, and the messages that show a board."""

    def create(self, game: NewGame) -> int:
        return self._store.create_game(_new_game(game))

    def get(self, game_id: int) -> GameRecord | None:
        return self._store.game(game_id)

    def active_in(self, platform: str, chat_id: str) -> list[GameRecord]:
        return self._store.active_games(platform, chat_id)

    def recent(self, platform: str, chat_id: str, user_id: str, limit: int = 1) -> list[GameRecord]:
        return self._store.recent_games(platform, chat_id, user_id, limit)

    def last(self, platform: str, chat_id: str) -> GameRecord | None:
        return self._store.last_game(platform, chat_id)

    def find(self, platform: str | None = None, chat_id: str | None = None, status: str | None = None,
             limit: int | None = None, user_id: str | None = None) -> list[GameRecord]:
        return self._store.find_games(platform, chat_id, status, limit, user_id)

    def count_finished(self, platform: str, chat_id: str | None = None, user_id: str | None = None,
                       opponent_id: str | None = None) -> list[GameCountRecord]:
        return self._store.count_finished_games(platform, chat_id, user_id, opponent_id)

    def against_bot(self, platform: str | None = None) -> list[GameRecord]:
        return self._store.bot_games(platform)

    def recent_fens(self, game_id: int, count: int) -> list[str]:
        return self._store.recent_fens(game_id, count)

    def moves(self, game_id: int) -> list[MoveRecord]:
        return self._store.moves(game_id)

    def update(self, game_id: int, version: int, change: GameChange, move: NewMove | None = None) -> GameRecord:
        """Compare-and-set on the game's version: StaleGame when another write got there first;
        the game as changed."""
        return self._store.update_game(game_id, version, _given(change), None if move is None else _given(move))

    def mark_reminded(self, game_id: int, version: int) -> bool:
        return self._store.mark_reminded(game_id, version)

    def due(self, now: float, platform: str | None = None) -> list[GameRecord]:
        return self._store.due_games(now, platform)

    def remember_message(self, platform: str, chat_id: str, message_id: str, game_id: int) -> None:
        self._store.remember_message(platform, chat_id, message_id, game_id)

    def of_message(self, platform: str, chat_id: str, message_id: str) -> int | None:
        return self._store.game_of_message(platform, chat_id, message_id)

    def save_analysis(self, game_id: int, ply: int, notes: Sequence[dict[str, Any]], at: float) -> None:
        self._store.save_analysis(game_id, ply, notes, at)

    def analysis(self, game_id: int, ply: int) -> AnalysisRecord | None:
        return self._store.analysis(game_id, ply)


class PuzzlesRepository(_Repository):
    """Daily-puzzle subscriptions, posted puzzles and every user's attempt at them."""

    def subscribe(self, platform: str, chat_id: str, time: str, timezone: str, variant: str, now: float,
                  language: str | None = None) -> None:
        self._store.subscribe(platform, chat_id, time, timezone, variant, now, language)

    def unsubscribe(self, platform: str, chat_id: str, now: float) -> bool:
        return self._store.unsubscribe(platform, chat_id, now)

    def subscription(self, platform: str, chat_id: str) -> SubscriptionRecord | None:
        return self._store.subscription(platform, chat_id)

    def subscriptions(self, platform: str | None = None) -> list[SubscriptionRecord]:
        return self._store.subscriptions(platform)

    def claim_daily_post(self, platform: str, chat_id: str, day: str, variant: str, puzzle_id: str,
                         now: float) -> int | None:
        return self._store.claim_daily_post(platform, chat_id, day, variant, puzzle_id, now)

    def create_personal_post(self, platform: str, chat_id: str, user_id: str, variant: str, puzzle_id: str,
                             now: float) -> int:
        return self._store.create_personal_post(platform, chat_id, user_id, variant, puzzle_id, now)

    def post(self, post_id: int) -> PuzzlePostRecord | None:
        return self._store.puzzle_post(post_id)

    def daily_posts(self, platform: str, chat_id: str, limit: int = 1) -> list[PuzzlePostRecord]:
        return self._store.daily_posts(platform, chat_id, limit)

    def personal_posts(self, platform: str, user_id: str, limit: int = 1) -> list[PuzzlePostRecord]:
        return self._store.personal_posts(platform, user_id, limit)

    def remember_message(self, platform: str, chat_id: str, message_id: str, post_id: int) -> None:
        self._store.remember_post_message(platform, chat_id, message_id, post_id)

    def of_message(self, platform: str, chat_id: str, message_id: str) -> int | None:
        return self._store.post_of_message(platform, chat_id, message_id)

    def claim_first_solver(self, post_id: int, user_id: str, name: str) -> bool:
        return self._store.claim_first_solver(post_id, user_id, name)

    def attempt(self, post_id: int, user_id: str) -> AttemptRecord | None:
        return self._store.attempt(post_id, user_id)

    def save_attempt(self, attempt: AttemptRecord) -> None:
        """Compare-and-set on the attempt's version (see Store.save_attempt): StorageContention."""
        self._store.save_attempt(attempt)

    def attempts(self, post_id: int) -> list[AttemptRecord]:
        return self._store.attempts(post_id)

    def chat_attempts(self, platform: str, chat_id: str) -> list[tuple[PuzzlePostRecord, AttemptRecord]]:
        return self._store.chat_attempts(platform, chat_id)

    def user_attempts(self, platform: str, user_id: str,
                      daily_only: bool = True) -> list[tuple[PuzzlePostRecord, AttemptRecord]]:
        return self._store.user_attempts(platform, user_id, daily_only)

    def rated_attempts(self) -> list[tuple[PuzzlePostRecord, AttemptRecord]]:
        return self._store.rated_attempts()


class RatingsRepository(_Repository):
    """Ratings and their history; every read-modify-write takes ``lock()`` first."""

    def lock(self) -> None:
        self._store.lock_ratings()

    def get(self, platform: str, subject: str, pool: str) -> RatingRecord | None:
        return self._store.rating(platform, subject, pool)

    def pool(self, platform: str, pool: str) -> list[RatingRecord]:
        return self._store.rating_pool(platform, pool)

    def save(self, rating: RatingRecord, source: str) -> None:
        self._store.save_rating(rating, source)

    def history(self, platform: str, subject: str, pool: str, limit: int | None = None) -> list[RatingEventRecord]:
        return self._store.rating_history(platform, subject, pool, limit)

    def clear(self) -> None:
        self._store.clear_ratings()


class SettingsRepository(_Repository):
    """Small named values: heartbeats and downtime, the link secret, questions awaiting an answer."""

    def beat(self, platform: str | None, now: float) -> None:
        self._store.beat(platform, now)

    def resume_after_downtime(self, platform: str | None, now: float, threshold: float,
                              limit: float | None = None) -> float:
        return self._store.resume_after_downtime(platform, now, threshold, limit)

    def link_secret(self) -> bytes:
        return self._store.link_secret()

    def set_pending(self, key: str, value: Any) -> None:
        self._store.set_pending(key, value)

    def pending(self, key: str) -> Any:
        return self._store.pending(key)

    def drop_pending(self, key: str) -> None:
        self._store.drop_pending(key)


class OutboxRepository(_Repository):
    """Messages waiting for delivery, claimed with a lease by the process that sends them."""

    def enqueue(self, platform: str, chat_id: str, payload: str, now: float) -> int:
        return self._store.enqueue(platform, chat_id, payload, now)

    def due(self, platform: str, now: float, limit: int = 50, exclude: Sequence[str] = ()) -> list[OutboxRecord]:
        return self._store.due_messages(platform, now, limit, exclude)

    def get(self, message_id: int) -> OutboxRecord | None:
        return self._store.outbox_message(message_id)

    def find(self, platform: str | None = None, status: str | None = None) -> list[OutboxRecord]:
        return self._store.find_outbox(platform, status)

    def claim(self, platform: str, owner: str, now: float, lease_until: float, limit: int = 50,
              exclude: Sequence[str] = ()) -> list[OutboxRecord]:
        return self._store.claim_messages(platform, owner, now, lease_until, limit, exclude)

    def hold(self, message_ids: Collection[int], owner: str, lease_until: float) -> set[int]:
        return self._store.hold_messages(message_ids, owner, lease_until)

    def release(self, owner: str) -> int:
        return self._store.release_messages(owner)

    def mark_sent(self, message_id: int, now: float, owner: str | None = None) -> bool:
        return self._store.mark_sent(message_id, now, owner)

    def retry_later(self, message_id: int, at: float, error: str, owner: str | None = None) -> None:
        self._store.retry_later(message_id, at, error, owner)

    def set_delivered(self, message_id: int, delivered: int, owner: str | None = None,
                      lease_until: float | None = None) -> None:
        self._store.set_delivered(message_id, delivered, owner, lease_until)

    def drop(self, message_id: int, error: str, owner: str | None = None) -> None:
        self._store.drop_message(message_id, error, owner)

    def prune(self, before: float, limit: int = 500) -> int:
        return self._store.prune_outbox(before, limit)

    def platforms(self) -> list[str]:
        return self._store.outbox_platforms()

    def next_wakeup(self, platform: str | None) -> float | None:
        return self._store.next_wakeup(platform)


class SendsRepository(_Repository):
    """The send budget the processes of one bot share (flood control per scope)."""

    def reserve(self, scopes: Sequence[tuple[str, float, float]], now: float, max_wait: float) -> float:
        return self._store.reserve_sends(scopes, now, max_wait)

    def hold(self, key: str, until: float) -> None:
        self._store.hold_sends(key, until)

    def prune(self, before: float) -> int:
        return self._store.prune_sends(before)


@dataclass(frozen=True)
class NewStormRun:
    """A storm run to start: ``puzzles`` the bank ids in the order played (JSON list), ``ends_at``
    when its time is up unless a miss brings it earlier."""

    platform: str
    chat_id: str
    user_id: str
    name: str
    lang: str
    variant: str
    puzzles: str
    started_at: float
    ends_at: float


@dataclass(frozen=True)
class StormChange:
    """A storm run's next state, saved by compare-and-set on the version it was read at."""

    current: int
    moves: str
    solved: int
    missed: int
    ends_at: float
    status: str = "running"
    finished_at: float | None = None
    # Set once, when the player first opens the run (UNSET: left as stored).
    opened_at: float | None = UNSET


class StormRunsRepository(_Repository):
    """Storm runs: each answer and the run's end are a compare-and-set on its version."""

    def create(self, run: NewStormRun) -> int | None:
        """The new run's number; None when the player already has a running run."""
        return self._store.create_storm_run(**_given(run))

    def running(self, platform: str, user_id: str) -> StormRunRecord | None:
        return self._store.running_storm_run(platform, user_id)

    def get(self, run_id: int) -> StormRunRecord | None:
        return self._store.storm_run(run_id)

    def save(self, run_id: int, version: int, change: StormChange) -> StormRunRecord:
        return self._store.save_storm_run(run_id, version, _given(change))

    def over(self, now: float, platform: str | None = None, limit: int = 50) -> list[StormRunRecord]:
        return self._store.storm_runs_over(now, platform, limit)


@dataclass(frozen=True)
class NewTournament:
    """A tournament to open in a chat: ``state`` the core's tournament as JSON text."""

    platform: str
    chat_id: str
    variant: str
    move_seconds: int
    round_seconds: int
    state: str
    created_by: str
    created_at: float


@dataclass(frozen=True)
class TournamentChange:
    """A tournament's next state, saved by compare-and-set on the version it was read at."""

    state: str
    status: str
    round_deadline: float | None
    finished_at: float | None = None


class TournamentsRepository(_Repository):
    """Tournaments of the chats and the games of their rounds."""

    def create(self, tournament: NewTournament) -> int | None:
        return self._store.create_tournament(**_given(tournament))

    def get(self, tournament_id: int) -> TournamentRecord | None:
        return self._store.tournament(tournament_id)

    def in_chat(self, platform: str, chat_id: str) -> TournamentRecord | None:
        return self._store.chat_tournament(platform, chat_id)

    def find(self, platform: str | None = None, chat_id: str | None = None, status: str | None = None,
             limit: int | None = None) -> list[TournamentRecord]:
        return self._store.find_tournaments(platform, chat_id, status, limit)

    def save(self, tournament_id: int, version: int, change: TournamentChange) -> TournamentRecord:
        return self._store.save_tournament(tournament_id, version, **_given(change))

    def add_game(self, game: TournamentGameRecord) -> None:
        self._store.add_tournament_game(game)

    def of_game(self, game_id: int) -> TournamentGameRecord | None:
        return self._store.tournament_game(game_id)

    def games(self, tournament_id: int) -> list[TournamentGameRecord]:
        return self._store.tournament_games(tournament_id)

    def due(self, now: float, platform: str | None = None) -> list[TournamentRecord]:
        return self._store.due_tournaments(now, platform)


@dataclass(frozen=True)
class RunChange:
    """A run's next state, saved by compare-and-set on the version it was read at."""

    status: str
    score: int
    skips: int
    post_id: int | None
    state: str
    ended_at: float | None = None


class PuzzleRunsRepository(_Repository):
    """Puzzle runs (streak), the players' personal bests and the chats' records with their message."""

    def start(self, platform: str, user_id: str, chat_id: str, mode: str, variant: str, state: str,
              now: float) -> int | None:
        return self._store.start_puzzle_run(platform, user_id, chat_id, mode, variant, state, now)

    def get(self, run_id: int) -> PuzzleRunRecord | None:
        return self._store.puzzle_run(run_id)

    def running(self, platform: str, user_id: str, mode: str) -> PuzzleRunRecord | None:
        return self._store.running_puzzle_run(platform, user_id, mode)

    def of_post(self, post_id: int) -> PuzzleRunRecord | None:
        return self._store.puzzle_run_of_post(post_id)

    def save(self, run_id: int, version: int, change: RunChange) -> PuzzleRunRecord:
        return self._store.save_puzzle_run(run_id, version, **_given(change))

    def personal_best(self, platform: str, user_id: str, mode: str, variant: str) -> int | None:
        return self._store.personal_best(platform, user_id, mode, variant)

    def raise_personal_best(self, platform: str, user_id: str, mode: str, variant: str, score: int,
                            at: float) -> bool:
        return self._store.raise_personal_best(platform, user_id, mode, variant, score, at)

    def chat_best(self, platform: str, chat_id: str, mode: str, variant: str) -> ChatBestRecord | None:
        return self._store.chat_best(platform, chat_id, mode, variant)

    def chat_bests(self, platform: str, chat_id: str) -> list[ChatBestRecord]:
        return self._store.chat_bests(platform, chat_id)

    def raise_chat_best(self, platform: str, chat_id: str, mode: str, variant: str, score: int, user_id: str,
                        name: str, at: float) -> bool:
        return self._store.raise_chat_best(platform, chat_id, mode, variant, score, user_id, name, at)

    def set_chat_best_message(self, platform: str, chat_id: str, mode: str, variant: str, message_id: str) -> bool:
        return self._store.set_chat_best_message(platform, chat_id, mode, variant, message_id)


@dataclass(frozen=True)
class NewOwnPuzzle:
    """A puzzle found in a player's game: ``puzzle`` the bank record as JSON text, ``ply`` where in
    the game it stands, ``move_number`` how the game's PDN numbers that move."""

    platform: str
    user_id: str
    variant: str
    puzzle: str
    game_id: int
    ply: int
    move_number: int
    opponent: str
    kind: str
    now: float


@dataclass(frozen=True)
class OwnReview:
    """A review's outcome, stored by compare-and-set on the ``reviews`` count it was read at."""

    reviews: int
    box: int
    due_at: float
    lapses: int
    retired: bool


class OwnPuzzlesRepository(_Repository):
    """Puzzles from the players' own games: the queue of finished games to scan, the puzzles
    found with their Leitner boxes, and the players' reminders."""

    def queue_scan(self, game_id: int, platform: str, now: float) -> bool:
        return self._store.queue_game_scan(game_id, platform, now)

    def claim_scans(self, owner: str, now: float, lease_until: float, limit: int = 1,
                    platform: str | None = None) -> list[GameScanRecord]:
        return self._store.claim_game_scans(owner, now, lease_until, limit, platform)

    def finish_scan(self, game_id: int, owner: str, now: float, found: int, failed: bool = False) -> bool:
        return self._store.finish_game_scan(game_id, owner, now, found, failed)

    def release_scan(self, game_id: int, owner: str) -> bool:
        return self._store.release_game_scan(game_id, owner)

    def scan(self, game_id: int) -> GameScanRecord | None:
        return self._store.game_scan(game_id)

    def add(self, puzzle: NewOwnPuzzle) -> int | None:
        return self._store.add_own_puzzle(**_given(puzzle))

    def get(self, puzzle_id: int) -> OwnPuzzleRecord | None:
        return self._store.own_puzzle(puzzle_id)

    def of_player(self, platform: str, user_id: str, include_retired: bool = False) -> list[OwnPuzzleRecord]:
        return self._store.player_own_puzzles(platform, user_id, include_retired)

    def due(self, platform: str, user_id: str, now: float, limit: int = 1) -> list[OwnPuzzleRecord]:
        return self._store.due_own_puzzles(platform, user_id, now, limit)

    def review(self, puzzle_id: int, review: OwnReview) -> bool:
        return self._store.review_own_puzzle(puzzle_id, **_given(review))

    def set_reminder(self, platform: str, user_id: str, chat_id: str, language: str, active: bool,
                     now: float) -> None:
        self._store.set_own_reminder(platform, user_id, chat_id, language, active, now)

    def reminder(self, platform: str, user_id: str) -> OwnReminderRecord | None:
        return self._store.own_reminder(platform, user_id)

    def reminders(self, platform: str | None, before: float) -> list[OwnReminderRecord]:
        return self._store.own_reminders(platform, before)

    def claim_reminder(self, platform: str, user_id: str, last_at: float | None, now: float) -> bool:
        return self._store.claim_own_reminder(platform, user_id, last_at, now)


REPOSITORIES: dict[str, Callable[[Contract], _Repository]] = {
    "players": PlayersRepository, "challenges": ChallengesRepository, "games": GamesRepository,
    "puzzles": PuzzlesRepository, "ratings": RatingsRepository, "settings": SettingsRepository,
    "outbox": OutboxRepository, "sends": SendsRepository, "tournaments": TournamentsRepository,
    "storm_runs": StormRunsRepository,
    "puzzle_runs": PuzzleRunsRepository, "own_puzzles": OwnPuzzlesRepository,
}
