"""The rows the service reads, as typed records.

One frozen dataclass per table; field names are the column names (the service's updates are
keyed by them), values are decoded: ``reminded`` is a bool, a last move's squares a tuple.
A backend returns these and nothing else, so the service never sees how a value is stored.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from bot.rules import Color, ResultReason


@dataclass(frozen=True, slots=True)
class PlayerRecord:
    """A player as last seen on a platform."""

    platform: str
    user_id: str
    name: str
    username: str | None
    language: str | None
    updated_at: float


@dataclass(frozen=True, slots=True)
class ChatRecord:
    """A chat and its settings (None: not chosen, the service's default applies)."""

    platform: str
    chat_id: str
    kind: str
    language: str | None
    variant: str | None
    created_at: float


@dataclass(frozen=True, slots=True)
class ChallengeRecord:
    """A challenge; ``status`` is open, accepted, declined, cancelled or expired."""

    id: int
    platform: str
    chat_id: str
    challenger_id: str
    challenger_name: str
    target_username: str | None
    variant: str
    color: str
    move_seconds: int
    status: str
    created_at: float
    game_id: int | None


@dataclass(frozen=True, slots=True)
class GameRecord:
    """A game as of its ``version`` (every change bumps it); ``status`` is active or finished."""

    id: int
    platform: str
    chat_id: str
    variant: str
    start_fen: str | None
    white_id: str
    white_name: str
    black_id: str
    black_name: str
    fen: str
    ply: int
    quiet_plies: int
    version: int
    status: str
    result_score: str | None
    result_reason: ResultReason | None
    winner: Color | None
    draw_offer: Color | None          # the side whose draw offer stands
    move_seconds: int
    deadline_at: float | None
    reminded: bool
    last_path: tuple[int, ...]        # the squares of the last move, () before the first
    last_captured: tuple[int, ...]    # the squares it captured on
    created_at: float
    finished_at: float | None
    bot_level: int | None = None      # a game against the bot: its level (the bot plays as BOT_ID)


# A finished game of fewer plies than this is 'short' in its count (the ratings do not rate one
# that was resigned or lost on time).
SHORT_PLIES = 2


@dataclass(frozen=True, slots=True)
class GameCountRecord:
    """How many finished games of a chat share one outcome (``Store.count_finished_games``): the
    same two players in the same seats, variant, bot level, winner (None: a draw) and reason;
    ``short``: ended before SHORT_PLIES plies."""

    chat_id: str
    white_id: str
    black_id: str
    variant: str
    bot_level: int | None
    winner: Color | None
    result_reason: ResultReason | None
    short: bool
    games: int


@dataclass(frozen=True, slots=True)
class MoveRecord:
    """One move of a game; ``fen_after`` is the position it led to."""

    game_id: int
    ply: int
    notation: str
    fen_after: str
    by_user: str
    played_at: float


@dataclass(frozen=True, slots=True)
class OutboxRecord:
    """A message the service sends on its own; ``status`` is pending, sent or dropped."""

    id: int
    platform: str
    chat_id: str
    payload: str
    status: str
    attempts: int
    next_attempt_at: float
    created_at: float
    sent_at: float | None
    error: str | None
    delivered: int = 0          # how many platform messages of the reply are out already
    claimed_by: str | None = None       # the process sending it (an owner id), None when nobody is
    lease_until: float | None = None    # until when that claim holds


@dataclass(frozen=True, slots=True)
class AnalysisRecord:
    """The engine's notes on game ``game_id`` as it stood at ``ply`` (a finished game's last ply):
    one dict per ply analysed (ply, move, best, best_score, played_score, forced)."""

    game_id: int
    ply: int
    notes: tuple[dict[str, Any], ...]
    created_at: float


@dataclass(frozen=True, slots=True)
class NotifyRecord:
    """How a user is told it is their turn: ``private`` (they asked for /notify on) sends it to their
    private chat with the bot instead of pinging them in the group; ``unreachable`` notes that a
    private message failed for good (never started the bot, DMs closed), so the group is pinged
    until they next write to the bot privately."""

    platform: str
    user_id: str
    private: bool
    unreachable: bool
    updated_at: float


@dataclass(frozen=True, slots=True)
class TournamentRecord:
    """A tournament of a chat as of its ``version`` (every save bumps it): ``state`` is the pure
    core's tournament as JSON text (``bot.tournaments.codec``); ``status`` registering, running or
    finished; ``place`` unused, always None (a tournament's own place, a forum topic or a thread,
    is its chat; the column stays since dropping it would take a migration);
    ``round_deadline`` when the current round ends by rule (None: no round running)."""

    id: int
    platform: str
    chat_id: str
    place: str | None
    variant: str
    move_seconds: int
    round_seconds: int
    status: str
    state: str
    version: int
    round_deadline: float | None
    created_by: str
    created_at: float
    finished_at: float | None


@dataclass(frozen=True, slots=True)
class TournamentGameRecord:
    """A game of a tournament's round (``round`` 1-based)."""

    game_id: int
    tournament_id: int
    round: int
    white_id: str
    black_id: str


@dataclass(frozen=True, slots=True)
class PuzzleRunRecord:
    """One player's run of puzzles one after another (``mode`` streak or storm) as of its
    ``version`` (every save bumps it): ``chat_id`` the chat it was started from (its record goes
    there), ``post_id`` the puzzle being solved now (None between two), ``score`` the puzzles solved,
    ``skips`` those skipped, ``state`` the mode's own JSON (ratings reached, puzzles seen);
    ``status`` running or ended."""

    id: int
    platform: str
    user_id: str
    chat_id: str
    mode: str
    variant: str
    status: str
    score: int
    skips: int
    post_id: int | None
    state: str
    version: int
    started_at: float
    ended_at: float | None


@dataclass(frozen=True, slots=True)
class ChatBestRecord:
    """A chat's best score in one mode and variant, who made it, and the message that shows it
    (edited in place when it is beaten; None until the adapter said which message it is)."""

    platform: str
    chat_id: str
    mode: str
    variant: str
    score: int
    user_id: str
    name: str
    at: float
    message_id: str | None


@dataclass(frozen=True, slots=True)
class GameScanRecord:
    """A finished game queued to be searched for its players' puzzles: ``status`` pending, done or
    failed; a process works on it under a lease (``claimed_by`` until ``lease_until``), so each
    game is scanned once whatever processes share the database; ``found`` the puzzles it gave."""

    game_id: int
    platform: str
    queued_at: float
    status: str
    claimed_by: str | None
    lease_until: float | None
    attempts: int
    done_at: float | None
    found: int


@dataclass(frozen=True, slots=True)
class OwnPuzzleRecord:
    """A puzzle from one of a player's own games (``puzzle`` the bank record as JSON text),
    reviewed in Leitner boxes: due at ``due_at``; ``box`` the number of clean solves in a row;
    ``retired`` once it came back for the last time."""

    id: int
    platform: str
    user_id: str
    variant: str
    puzzle: str
    game_id: int
    ply: int
    move_number: int
    opponent: str
    kind: str
    box: int
    due_at: float
    created_at: float
    reviews: int
    lapses: int
    retired: bool


@dataclass(frozen=True, slots=True)
class OwnReminderRecord:
    """A player's reminder of their due puzzles, in the chat where they turned it on, at most one
    a day (``last_at``: when the last one was written)."""

    platform: str
    user_id: str
    chat_id: str
    language: str
    active: bool
    last_at: float | None
    updated_at: float


@dataclass(frozen=True, slots=True)
class StormRunRecord:
    """One storm run (as many puzzles as possible before ``ends_at``) as of its ``version`` (every
    answer bumps it): ``user_id`` plays it on the web board, ``chat_id`` is where /storm was asked
    (its result goes there, in ``lang``); ``puzzles`` the bank ids in the order played (JSON list),
    ``current`` the index of the one being played and ``moves`` what was played in it (JSON list);
    ``status`` running or finished; ``opened_at`` when its player first opened it (None: not yet,
    and ``ends_at`` is when the unopened run lapses)."""

    id: int
    platform: str
    chat_id: str
    user_id: str
    name: str
    lang: str
    variant: str
    puzzles: str
    started_at: float
    ends_at: float
    current: int
    moves: str
    solved: int
    missed: int
    status: str
    version: int
    finished_at: float | None
    opened_at: float | None


def field_names(record: type) -> tuple[str, ...]:
    """The fields of a record class, in column order."""
    return tuple(f.name for f in fields(record))


@dataclass(frozen=True, slots=True)
class SubscriptionRecord:
    """A chat's daily puzzle: when (``time`` HH:MM in ``timezone``) and which variant."""

    platform: str
    chat_id: str
    time: str
    timezone: str
    variant: str
    language: str | None              # for a chat without a language of its own
    active: bool
    created_at: float
    updated_at: float


@dataclass(frozen=True, slots=True)
class PuzzlePostRecord:
    """A puzzle put to a chat: the day's (``kind`` daily, one per chat and local ``day``) or one
    a user asked for (``kind`` personal, for ``user_id``)."""

    id: int
    platform: str
    chat_id: str
    kind: str
    day: str | None
    user_id: str | None
    variant: str
    puzzle_id: str
    posted_at: float
    first_solver_id: str | None
    first_solver_name: str | None


@dataclass(frozen=True, slots=True)
class AttemptRecord:
    """One user's way through one posted puzzle: the moves accepted so far (theirs and the
    forced replies), wrong tries, hints, when solved, and the score it was rated with (1 solved
    cleanly, 0.5 with a hint, 0 after a wrong try; None until its first outcome); ``version`` goes
    up by one with every save."""

    post_id: int
    user_id: str
    user_name: str
    progress: tuple[str, ...]
    misses: int
    hints: int
    started_at: float
    solved_at: float | None
    rated_score: float | None
    rated_at: float | None
    # Compare-and-set: as read, the stored version (a save must find it unchanged); 0 for a new
    # attempt (a save must find none); None saves whatever is there (no concurrency check).
    version: int | None = None


@dataclass(frozen=True, slots=True)
class RatingRecord:
    """A Glicko-2 rating in one pool (a variant; 'puzzles'; '<variant>:bot' for games against the
    bot) of a subject (a user id, or 'puzzle:<id>' on platform '*')."""

    platform: str
    subject: str
    pool: str
    rating: float
    deviation: float
    volatility: float
    games: int
    updated_at: float


@dataclass(frozen=True, slots=True)
class RatingEventRecord:
    """A rating as it was right after one game or puzzle (``source`` 'game:<id>' or 'post:<id>')."""

    platform: str
    subject: str
    pool: str
    source: str
    at: float
    rating: float
    deviation: float
