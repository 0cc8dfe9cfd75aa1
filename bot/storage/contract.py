"""The storage contract: the flat methods every backend implements, whichever database it is
(``base.Store`` adds the repositories the service reaches them through).

Players, chats, challenges, games and moves, board messages, heartbeats, pending questions and
the outbox.  Every method is one short transaction of its own, or joins the caller's
``transaction()`` (the unit of work: its isolation, nesting and rollback are documented there).

Every read-modify-write the service does is safe without a global write lock (docs/storage.md):
a change to a game is guarded by the game's version (of two writers that read the same version,
exactly one wins, the other gets StaleGame); an attempt is saved by compare-and-set on its version
(StorageContention); ratings are read and written under the ratings lock (``lock_ratings``);
downtime is resumed by compare-and-set on the heartbeat read; claims (a challenge accepted or
closed, a daily post, a first solver, a reminder) are single conditional writes.

Challenges and games share one numbering (``#N`` names one thing), taken from one counter by a
single atomic update: a game started from a challenge takes the challenge's number, and every new
number is above every id in use.

Rows come back as the records of ``records.py``.  The repositories (``store.games``,
``store.players``, ... see repositories.py) take typed writes; the flat methods below take
changes as ``{column: value}`` dicts, where a name that is not a column the caller may set raises
ValueError and changes nothing.  tests/storage/test_contract*.py and test_concurrency.py check
every backend against this, and fail when a public method is never called.
"""

from __future__ import annotations

import abc
from collections.abc import Collection, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any

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
    field_names,
)

# What a caller may set; the rest (ids, status, version, counters) the store assigns.
CHAT_SETTINGS = frozenset({"language", "variant"})
NEW_CHALLENGE_FIELDS = frozenset(field_names(ChallengeRecord)) - {"id", "status", "game_id"}
NEW_CHALLENGE_OPTIONAL = frozenset({"target_username"})
NEW_GAME_FIELDS = frozenset(field_names(GameRecord)) - {"id", "version", "ply", "quiet_plies", "status", "reminded"}
NEW_GAME_OPTIONAL = frozenset({"start_fen", "result_score", "result_reason", "winner", "draw_offer", "deadline_at",
                               "last_path", "last_captured", "finished_at", "bot_level"})
# The player id of the bot in games against it (no platform gives a user this id).
BOT_ID = "bot:engine"
GAME_UPDATE_FIELDS = frozenset(field_names(GameRecord)) - {"id", "version"}
MOVE_FIELDS = frozenset(field_names(MoveRecord)) - {"game_id"}


def check_fields(what: str, given: Iterable[str], allowed: Collection[str],
                 optional: Collection[str] | None = None) -> None:
    """ValueError unless every name in ``given`` is allowed and, when ``optional`` is given,
    every allowed name that is not optional is there (a typo must not become a silent no-op)."""
    names = set(given)
    unknown = names - set(allowed)
    if unknown:
        raise ValueError(f"unknown {what} fields: {', '.join(sorted(unknown))}")
    if optional is not None:
        missing = set(allowed) - set(optional) - names
        if missing:
            raise ValueError(f"missing {what} fields: {', '.join(sorted(missing))}")


class Contract(abc.ABC):
    """A database for the service; see the module docstring for what every backend promises.

    Opening a store checks the database and raises StorageError with a one-line reason if it
    cannot be used; a write that cannot get its lock in time raises StorageBusy."""

    # -- transactions and lifetime -------------------------------------------------------------

    @abc.abstractmethod
    def transaction(self, wait: float | None = None) -> AbstractContextManager[None]:
        """The unit of work: everything inside commits together or not at all (``wait``: at most
        this many seconds for the lock, when shorter than the busy timeout).

        Isolation: serializable.  What the block reads cannot be changed by another writer before
        it commits (SQLite: the database's write lock is taken at the start, ``BEGIN IMMEDIATE``;
        a backend with row locks must take locks or compare versions so the outcome is one some
        serial order would give, and raise StorageContention when it cannot).

        Nesting: a ``transaction()`` inside another (including the store's own methods called
        inside) joins the outer one; reads inside see its writes so far; nothing is committed
        until the outermost block ends.

        Rollback: an exception leaving the outermost block undoes everything the unit of work
        wrote, nested blocks included.  There are no savepoints: an exception caught inside the
        block does not undo what the block wrote before it.

        Waiting for the lock longer than the busy timeout raises StorageBusy (not retried: the
        database is held by something slow); losing a compare-and-set raises StorageContention
        (retryable: run the whole block again, e.g. with ``retry.retry_contention``)."""

    @abc.abstractmethod
    def in_transaction(self) -> bool:
        """Whether the calling thread is inside this store's ``transaction()`` (a retry must wrap
        the outermost unit of work only)."""

    @abc.abstractmethod
    def close(self) -> None:
        """Close the connections."""

    # Not abstract: a backend without a file to lose, or without a check, keeps these defaults.
    def check_file(self) -> None:  # noqa: B027
        """StorageGone when the database is no longer the one that was opened (a backend
        without a file has nothing to check)."""

    def verify(self) -> None:  # noqa: B027
        """StorageDamaged when a full integrity check of the database fails (slow: seconds on a
        big file; for a schedule, not for every event)."""

    @abc.abstractmethod
    def dump(self) -> dict[str, list[tuple]]:
        """Everything stored, table by table, each row as a tuple in a stable order (for tests that
        check an input changed nothing, and for comparing two databases)."""

    # -- players and chats ---------------------------------------------------------------------

    @abc.abstractmethod
    def save_player(self, platform: str, user_id: str, name: str, username: str | None,
                    language: str | None, now: float) -> bool:
        """Note how a player is called now; False (and no write) when nothing changed.

        A name refresh never makes a command wait long: under contention it gives up quickly
        (StorageBusy) and the next message tries again."""

    @abc.abstractmethod
    def player(self, platform: str, user_id: str) -> PlayerRecord | None:
        """A player as last seen, or None."""

    @abc.abstractmethod
    def player_by_username(self, platform: str, username: str) -> PlayerRecord | None:
        """The player last seen with this @handle (any case), or None."""

    @abc.abstractmethod
    def notify_setting(self, platform: str, user_id: str) -> NotifyRecord | None:
        """How a user wants to be told it is their turn, or None (never set: pinged in the group)."""

    @abc.abstractmethod
    def set_notify(self, platform: str, user_id: str, private: bool, now: float) -> None:
        """Turn a user's private notifications on or off; either way they count as reachable again
        (``unreachable`` false): the next private message is tried."""

    @abc.abstractmethod
    def set_unreachable(self, platform: str, user_id: str, unreachable: bool, now: float) -> bool:
        """Note whether a private message can reach a user with private notifications (no row: no
        change); whether anything changed."""

    @abc.abstractmethod
    def chat(self, platform: str, chat_id: str) -> ChatRecord | None:
        """A chat and its settings, or None."""

    @abc.abstractmethod
    def ensure_chat(self, platform: str, chat_id: str, kind: str, now: float) -> ChatRecord:
        """The chat, created with no settings on first sight (a chat already known costs no write)."""

    @abc.abstractmethod
    def set_chat(self, platform: str, chat_id: str, **fields: Any) -> None:
        """Change a chat's settings (language, variant); ValueError for any other name."""

    @abc.abstractmethod
    def move_chat(self, platform: str, old_chat_id: str, new_chat_id: str) -> None:
        """A chat got a new id (a Telegram group became a supergroup): carry everything over.

        If the new id already has a chat (someone typed there first), it keeps its own settings
        and, for a board message known under both ids, its own game; the old chat goes."""

    # -- challenges ------------------------------------------------------------------------------

    @abc.abstractmethod
    def create_challenge(self, **fields: Any) -> int:
        """Store an open challenge; its number (which the game it may become will keep).

        ``fields``: every ChallengeRecord field but id, status and game_id (target_username may
        be left out)."""

    @abc.abstractmethod
    def challenge(self, challenge_id: int) -> ChallengeRecord | None:
        """A challenge by id, or None."""

    @abc.abstractmethod
    def open_challenges(self, platform: str, chat_id: str) -> list[ChallengeRecord]:
        """The open challenges of a chat, oldest first."""

    @abc.abstractmethod
    def find_challenges(self, platform: str | None = None, chat_id: str | None = None,
                        status: str | None = None) -> list[ChallengeRecord]:
        """Challenges of a platform and chat (None: any), with a status (None: any), oldest first."""

    @abc.abstractmethod
    def lapsed_challenges(self, platform: str | None, now: float, lifetime: float) -> list[ChallengeRecord]:
        """Open challenges (of ``platform``; None: all) that lapsed by ``now``: each lapses
        ``max(lifetime, its move time)`` seconds after it was made.  Oldest first."""

    @abc.abstractmethod
    def next_challenge_lapse(self, platform: str | None, lifetime: float) -> float | None:
        """When the next open challenge lapses (as ``lapsed_challenges`` counts), or None."""

    @abc.abstractmethod
    def remember_challenge_message(self, platform: str, chat_id: str, message_id: str, challenge_id: int) -> None:
        """Note that a message shows a challenge (with its buttons)."""

    @abc.abstractmethod
    def challenge_messages(self, challenge_id: int) -> list[tuple[str, str, str]]:
        """(platform, chat id, message id) of every message that shows a challenge, oldest first."""

    @abc.abstractmethod
    def close_challenge(self, challenge_id: int, status: str) -> bool:
        """Mark an open challenge declined, cancelled or expired; False if it was no longer open."""

    @abc.abstractmethod
    def accept_challenge(self, challenge_id: int, game: dict[str, Any]) -> int | None:
        """Turn an open challenge into a game atomically; the game's number (the challenge's,
        unless a game from before the shared numbering has it), or None if the challenge was no
        longer open (someone else got there first).  ``game`` as for create_game."""

    @abc.abstractmethod
    def create_game(self, game: dict[str, Any]) -> int:
        """Start a game that no challenge led to (e.g. against the bot); its new number.

        ``game``: every GameRecord field but id, version, ply, quiet_plies, status and reminded
        (the game starts active at ply 0, version 0); the nullable ones may be left out."""

    # -- games -------------------------------------------------------------------------------------

    @abc.abstractmethod
    def game(self, game_id: int) -> GameRecord | None:
        """A game by id, or None."""

    @abc.abstractmethod
    def active_games(self, platform: str, chat_id: str) -> list[GameRecord]:
        """The games still being played in a chat, oldest first."""

    @abc.abstractmethod
    def recent_games(self, platform: str, chat_id: str, user_id: str, limit: int = 1) -> list[GameRecord]:
        """A player's latest games in a chat, newest first, finished or not."""

    @abc.abstractmethod
    def last_game(self, platform: str, chat_id: str) -> GameRecord | None:
        """The chat's most recent game, finished or not, or None."""

    @abc.abstractmethod
    def find_games(self, platform: str | None = None, chat_id: str | None = None, status: str | None = None,
                   limit: int | None = None, user_id: str | None = None) -> list[GameRecord]:
        """Games of a platform and chat (None: any), with a status (None: any), that ``user_id``
        played in (None: anyone's), newest first."""

    @abc.abstractmethod
    def count_finished_games(self, platform: str, chat_id: str | None = None, user_id: str | None = None,
                             opponent_id: str | None = None) -> list[GameCountRecord]:
        """The finished games of a platform, counted per chat and outcome (GameCountRecord: players
        and seats, variant, bot level, winner, reason, whether it was short), in no order: of one chat
        (``chat_id``), of one player in either seat (``user_id``), of that player against
        ``opponent_id`` (either seat; needs ``user_id``).  The counts are kept as games finish
        (``update_game``, ``move_chat`` keep them right), so reading them costs what the outcomes
        do, never what the games would; a game of a player against themself is counted once."""

    @abc.abstractmethod
    def bot_games(self, platform: str | None = None) -> list[GameRecord]:
        """Active games against the bot (of one platform, or all), oldest first."""

    @abc.abstractmethod
    def recent_fens(self, game_id: int, count: int) -> list[str]:
        """The FENs after the last ``count`` moves, oldest first."""

    @abc.abstractmethod
    def moves(self, game_id: int) -> list[MoveRecord]:
        """Every move of a game in order."""

    @abc.abstractmethod
    def update_game(self, game_id: int, version: int, fields: dict[str, Any],
                    move: dict[str, Any] | None = None) -> GameRecord:
        """Change a game (and record a move, in the same transaction) if it is still at
        ``version``, which then goes up by one; StaleGame otherwise, and nothing changes.  The
        game as it now is (what ``game(game_id)`` reads inside the same unit of work).

        ``fields``: GameRecord fields but id and version (last_path and last_captured as
        sequences of squares); ``move``: every MoveRecord field but game_id."""

    @abc.abstractmethod
    def mark_reminded(self, game_id: int, version: int) -> bool:
        """Note that the reminder went out, without changing the game's version (a reminder
        must not make a move sent at the same moment stale); False if the game moved on or
        was already reminded."""

    @abc.abstractmethod
    def due_games(self, now: float, platform: str | None = None) -> list[GameRecord]:
        """Active games (of one platform, or all) whose clock has run out or whose reminder is
        due (a tenth of the move time before the deadline, until reminded), earliest deadline first."""

    # -- analyses ------------------------------------------------------------------------------------

    @abc.abstractmethod
    def save_analysis(self, game_id: int, ply: int, notes: Sequence[dict[str, Any]], at: float) -> None:
        """Keep the engine's notes on a game as it stood at ``ply``; the notes of an earlier
        analysis of the same game and ply are replaced."""

    @abc.abstractmethod
    def analysis(self, game_id: int, ply: int) -> AnalysisRecord | None:
        """The notes kept for a game at ``ply``, or None."""

    # -- board messages ------------------------------------------------------------------------------

    @abc.abstractmethod
    def remember_message(self, platform: str, chat_id: str, message_id: str, game_id: int) -> None:
        """Note that a message shows a game's board (so a reply to it names the game)."""

    @abc.abstractmethod
    def game_of_message(self, platform: str, chat_id: str, message_id: str) -> int | None:
        """The game whose board a message shows, or None."""

    @abc.abstractmethod
    def board_messages(self, platform: str, chat_id: str) -> list[tuple[str, int]]:
        """Every (message id, game id) remembered in a chat, in the order they were noted."""

    @abc.abstractmethod
    def remember_post_message(self, platform: str, chat_id: str, message_id: str, post_id: int) -> None:
        """Note that a message shows a posted puzzle (so a reply to it answers the puzzle)."""

    @abc.abstractmethod
    def post_of_message(self, platform: str, chat_id: str, message_id: str) -> int | None:
        """The puzzle post a message shows, or None."""

    # -- send budget (flood control shared by the processes of one bot) ---------------------------

    @abc.abstractmethod
    def reserve_sends(self, scopes: Sequence[tuple[str, float, float]], now: float, max_wait: float) -> float:
        """Reserve one send in every scope, ``(key, interval, tolerance)`` each: a GCRA whose
        theoretical arrival time is stored per key (wall-clock seconds, shared by every process).
        The answer is the earliest time, not before ``now``, at which every scope allows the send;
        when that is at most ``max_wait`` after ``now`` the send is reserved at that time (each
        scope moves on by its interval), else nothing changes.  Atomic against other processes."""

    @abc.abstractmethod
    def hold_sends(self, key: str, until: float) -> None:
        """Nothing is reserved in scope ``key`` before ``until`` minus the scope's tolerance (the
        platform asked for a wait: its theoretical arrival time moves on to ``until``, never back)."""

    @abc.abstractmethod
    def prune_sends(self, before: float) -> int:
        """Forget the scopes whose last reservation ran out before ``before`` (a scope not
        stored is free); how many."""

    # -- heartbeat and downtime -------------------------------------------------------------------

    @abc.abstractmethod
    def beat(self, platform: str | None, now: float) -> None:
        """Note that a process serving ``platform`` (None: every platform) is running at ``now``."""

    @abc.abstractmethod
    def last_beat(self, platform: str | None) -> float | None:
        """When a process serving ``platform`` last noted it was running, or None."""

    @abc.abstractmethod
    def resume_after_downtime(self, platform: str | None, now: float, threshold: float,
                              limit: float | None = None) -> float:
        """At start-up: if the last heartbeat is more than ``threshold`` s old, push every active
        game's deadline (of ``platform``, or all) forward by the gap (at most ``limit`` s, when
        given: a running process that knows how long it was really away); the seconds added (0 if none).

        Reading and renewing the heartbeat in the same write transaction makes it happen once:
        a second process starting right after finds a fresh heartbeat."""

    @abc.abstractmethod
    def link_secret(self) -> bytes:
        """A random key made once per database (never shown): it signs what the bot hands one user
        (a puzzle's private-chat link), so a signature holds across restarts and processes."""

    # -- questions waiting for a confirmation (service: /resign) ------------------------------------

    @abc.abstractmethod
    def set_pending(self, key: str, value: Any) -> None:
        """Remember a question put to a user (any JSON value), until answered or replaced."""

    @abc.abstractmethod
    def pending(self, key: str) -> Any:
        """The value of a question still waiting, or None."""

    @abc.abstractmethod
    def drop_pending(self, key: str) -> None:
        """Forget a question (answered, or no longer relevant)."""

    # -- outbox ---------------------------------------------------------------------------------------

    @abc.abstractmethod
    def enqueue(self, platform: str, chat_id: str, payload: str, now: float) -> int:
        """Add a message to the outbox, due at ``now`` (inside the caller's transaction when there
        is one, so it goes out only if the change that caused it is kept); its id."""

    @abc.abstractmethod
    def due_messages(self, platform: str, now: float, limit: int = 50,
                     exclude: Sequence[str] = ()) -> list[OutboxRecord]:
        """Pending outbox messages of a platform whose time has come, oldest first (none of the
        chats in ``exclude``: their delivery is under way).  A look only: to send them, a process
        claims them (``claim_messages``)."""

    @abc.abstractmethod
    def outbox_message(self, message_id: int) -> OutboxRecord | None:
        """One outbox message, whatever its status."""

    @abc.abstractmethod
    def find_outbox(self, platform: str | None = None, status: str | None = None) -> list[OutboxRecord]:
        """Outbox messages of a platform (None: any) with a status (None: any), oldest first."""

    @abc.abstractmethod
    def claim_messages(self, platform: str, owner: str, now: float, lease_until: float, limit: int = 50,
                       exclude: Sequence[str] = ()) -> list[OutboxRecord]:
        """Claim for ``owner`` (a process's id) the pending messages of a platform whose time has
        come, oldest first, until ``lease_until``; the claimed rows.  Atomic: of processes claiming
        at once, each row goes to one.  A row another owner holds is left alone until its lease
        has run out, and so are the other rows of its chat (a chat's messages keep their order);
        rows this owner holds already are claimed again.  None of the chats in ``exclude``."""

    @abc.abstractmethod
    def hold_messages(self, message_ids: Collection[int], owner: str, lease_until: float) -> set[int]:
        """Extend ``owner``'s claim on these pending messages to ``lease_until``; the ids it still
        holds (a row whose lease ran out and another owner claimed is not among them)."""

    @abc.abstractmethod
    def release_messages(self, owner: str) -> int:
        """Give up every claim of ``owner`` on pending messages (a process stopping); how many."""

    @abc.abstractmethod
    def mark_sent(self, message_id: int, now: float, owner: str | None = None) -> bool:
        """A pending message was delivered; False if it was not pending (delivered or dropped) or
        is not ``owner``'s (None: only a message nobody claimed).  The claim ends."""

    @abc.abstractmethod
    def retry_later(self, message_id: int, at: float, error: str, owner: str | None = None) -> None:
        """A delivery failed for now: count the attempt and try again at ``at`` (the error is
        kept, cut to 500 characters; the claim ends); nothing if the message is no longer pending
        or not ``owner``'s (None: only a message nobody claimed)."""

    @abc.abstractmethod
    def set_delivered(self, message_id: int, delivered: int, owner: str | None = None,
                      lease_until: float | None = None) -> None:
        """The first ``delivered`` platform messages of a pending reply are out: a retry sends only
        the rest (nothing if the message is no longer pending or not ``owner``'s); the claim is
        extended to ``lease_until`` when given."""

    @abc.abstractmethod
    def drop_message(self, message_id: int, error: str, owner: str | None = None) -> None:
        """A message that can never be delivered: keep it, marked dropped, for the record
        (attempt counted, error cut to 500 characters); nothing if it is no longer pending or not
        ``owner``'s (None: only a message nobody claimed)."""

    @abc.abstractmethod
    def prune_outbox(self, before: float, limit: int = 500) -> int:
        """Delete at most ``limit`` sent or dropped messages written before ``before``, oldest
        first; how many (pending ones are never deleted)."""

    @abc.abstractmethod
    def outbox_platforms(self) -> list[str]:
        """The platforms that have pending outbox messages."""

    @abc.abstractmethod
    def next_wakeup(self, platform: str | None) -> float | None:
        """The earliest time something of ``platform`` (None: all) is due: an outbox message (one
        another process holds: when its lease runs out), a reminder (a tenth of the move time
        before the deadline), a deadline or a running tournament round's deadline; None if nothing is."""

    # -- daily puzzles -------------------------------------------------------------------------------

    @abc.abstractmethod
    def subscribe(self, platform: str, chat_id: str, time: str, timezone: str, variant: str, now: float,
                  language: str | None = None) -> None:
        """Post the daily puzzle in a chat at ``time`` (HH:MM) in ``timezone``, in ``language`` when the
        chat has none of its own (the one who subscribed it speaks it); replaces its setting."""

    @abc.abstractmethod
    def unsubscribe(self, platform: str, chat_id: str, now: float) -> bool:
        """End a chat's daily puzzle; False if it had none."""

    @abc.abstractmethod
    def subscription(self, platform: str, chat_id: str) -> SubscriptionRecord | None:
        """A chat's daily-puzzle setting (active or ended), or None."""

    @abc.abstractmethod
    def subscriptions(self, platform: str | None = None) -> list[SubscriptionRecord]:
        """The active subscriptions (of one platform, or all)."""

    @abc.abstractmethod
    def claim_daily_post(self, platform: str, chat_id: str, day: str, variant: str, puzzle_id: str,
                         now: float) -> int | None:
        """Record the chat's puzzle of ``day``; its post id, or None if that day already has one
        (whoever got there first posts it: a day is posted once, by one process)."""

    @abc.abstractmethod
    def create_personal_post(self, platform: str, chat_id: str, user_id: str, variant: str, puzzle_id: str,
                             now: float) -> int:
        """Record a puzzle put to one user; its post id."""

    @abc.abstractmethod
    def puzzle_post(self, post_id: int) -> PuzzlePostRecord | None:
        """A post by id, or None."""

    @abc.abstractmethod
    def daily_posts(self, platform: str, chat_id: str, limit: int = 1) -> list[PuzzlePostRecord]:
        """A chat's daily posts, the latest day first."""

    @abc.abstractmethod
    def personal_posts(self, platform: str, user_id: str, limit: int = 1) -> list[PuzzlePostRecord]:
        """The puzzles a user asked for (any chat), newest first."""

    @abc.abstractmethod
    def claim_first_solver(self, post_id: int, user_id: str, name: str) -> bool:
        """Name the post's first solver unless it has one; whether this user is it."""

    @abc.abstractmethod
    def attempt(self, post_id: int, user_id: str) -> AttemptRecord | None:
        """A user's attempt at a post, or None."""

    @abc.abstractmethod
    def save_attempt(self, attempt: AttemptRecord) -> None:
        """Store a user's attempt as it now is (created or replaced), by its ``version``: as read
        from the store, it must still be stored at that version; 0, there must be none yet; None,
        no check.  StorageContention otherwise, and nothing changes.  The stored version goes up
        by one."""

    @abc.abstractmethod
    def attempts(self, post_id: int) -> list[AttemptRecord]:
        """Every attempt at a post, in the order they were started."""

    @abc.abstractmethod
    def chat_attempts(self, platform: str, chat_id: str) -> list[tuple[PuzzlePostRecord, AttemptRecord]]:
        """Every attempt at the chat's daily posts, with its post, oldest post first."""

    @abc.abstractmethod
    def user_attempts(self, platform: str, user_id: str,
                      daily_only: bool = True) -> list[tuple[PuzzlePostRecord, AttemptRecord]]:
        """Every attempt of a user at daily posts (any chat of the platform), oldest post first;
        with ``daily_only`` False, at personal puzzles (/puzzle) too."""

    @abc.abstractmethod
    def rated_attempts(self) -> list[tuple[PuzzlePostRecord, AttemptRecord]]:
        """Every attempt that was rated, in the order it was rated (ratings rebuild)."""

    # -- ratings ---------------------------------------------------------------------------------------

    @abc.abstractmethod
    def rating(self, platform: str, subject: str, pool: str) -> RatingRecord | None:
        """A subject's rating in a pool, or None (never rated)."""

    @abc.abstractmethod
    def rating_pool(self, platform: str, pool: str) -> list[RatingRecord]:
        """Every rating of a pool on a platform, best first."""

    @abc.abstractmethod
    def save_rating(self, rating: RatingRecord, source: str) -> None:
        """Store a rating as it is after ``source`` (a game or a post), and note it in its history."""

    @abc.abstractmethod
    def rating_history(self, platform: str, subject: str, pool: str,
                       limit: int | None = None) -> list[RatingEventRecord]:
        """How a subject's rating in a pool went, oldest first; with ``limit`` (at least 2), all of
        it when it has at most that many events, else the events first reached at ``limit`` times
        spread evenly from its first event to its last (both among them; at most ``limit`` events
        but for events at the very same time): a chart's points, read in the same time however
        long the history."""

    @abc.abstractmethod
    def lock_ratings(self) -> None:
        """Take the ratings lock until the caller's transaction ends (RuntimeError outside one).

        Every read-modify-write of ratings takes it first (a game or attempt rated, a rebuild), so
        a rebuild and a result being rated happen one after the other: the result is either in
        the rebuild's reading of the games, or rated on top of what the rebuild wrote."""

    @abc.abstractmethod
    def clear_ratings(self) -> None:
        """Forget every rating and its history (before recomputing them from the games)."""

    # -- tournaments ------------------------------------------------------------------------------

    # -- storm runs (issue 33) ---------------------------------------------------------------

    @abc.abstractmethod
    def create_storm_run(self, platform: str, chat_id: str, user_id: str, name: str, lang: str, variant: str,
                         puzzles: str, started_at: float, ends_at: float) -> int | None:
        """A new storm run, running at its first puzzle; its number.  None (nothing written) when
        the player already has a running run on that platform (one at a time)."""

    @abc.abstractmethod
    def running_storm_run(self, platform: str, user_id: str) -> StormRunRecord | None:
        """The player's running storm run (at most one), or None."""

    @abc.abstractmethod
    def storm_run(self, run_id: int) -> StormRunRecord | None:
        """A storm run by number, or None."""

    @abc.abstractmethod
    def save_storm_run(self, run_id: int, version: int, changes: dict[str, Any]) -> StormRunRecord:
        """Store a run's next state (``current``, ``moves``, ``solved``, ``missed``, ``ends_at``,
        ``status``, ``finished_at``, ``opened_at``): a compare-and-set on ``version``; StorageContention (nothing
        written) when another answer came first.  The run as it is now."""

    @abc.abstractmethod
    def storm_runs_over(self, now: float, platform: str | None = None, limit: int = 50) -> list[StormRunRecord]:
        """Runs still running whose time ended at or before ``now`` (of ``platform`` only, when
        given: chosen before the limit, so another platform's never crowd them out), oldest end
        first."""

    @abc.abstractmethod
    def create_tournament(self, platform: str, chat_id: str, variant: str, move_seconds: int, round_seconds: int,
                          state: str, created_by: str, created_at: float) -> int | None:
        """A new tournament of a chat, registering; its number, or None (nothing written) when the
        chat already has one that is not finished."""

    @abc.abstractmethod
    def tournament(self, tournament_id: int) -> TournamentRecord | None:
        """A tournament by number, or None."""

    @abc.abstractmethod
    def chat_tournament(self, platform: str, chat_id: str) -> TournamentRecord | None:
        """The tournament of a chat that is not finished."""

    @abc.abstractmethod
    def find_tournaments(self, platform: str | None = None, chat_id: str | None = None,
                         status: str | None = None, limit: int | None = None) -> list[TournamentRecord]:
        """Tournaments, newest first, filtered by platform, chat and status."""

    @abc.abstractmethod
    def save_tournament(self, tournament_id: int, version: int, state: str, status: str,
                        round_deadline: float | None, finished_at: float | None) -> TournamentRecord:
        """Store a tournament's next state: a compare-and-set on ``version``; StorageContention
        (nothing written) when another change came first.  The tournament as it is now."""

    @abc.abstractmethod
    def add_tournament_game(self, game: TournamentGameRecord) -> None:
        """Note a game of a tournament's round."""

    @abc.abstractmethod
    def tournament_game(self, game_id: int) -> TournamentGameRecord | None:
        """The tournament round a game belongs to, or None (not a tournament game)."""

    @abc.abstractmethod
    def tournament_games(self, tournament_id: int) -> list[TournamentGameRecord]:
        """A tournament's games, by round and game number."""

    @abc.abstractmethod
    def due_tournaments(self, now: float, platform: str | None = None) -> list[TournamentRecord]:
        """Running tournaments whose round deadline is past, oldest deadline first."""

    # -- puzzle runs (streak), personal bests and the chats' records --------------------------------

    @abc.abstractmethod
    def start_puzzle_run(self, platform: str, user_id: str, chat_id: str, mode: str, variant: str, state: str,
                         now: float) -> int | None:
        """A new running run of ``mode`` for a player, started from ``chat_id`` at version 0 (score
        and skips 0, no post); its id, or None (nothing written) when the player has one running."""

    @abc.abstractmethod
    def puzzle_run(self, run_id: int) -> PuzzleRunRecord | None:
        """A run by id, or None."""

    @abc.abstractmethod
    def running_puzzle_run(self, platform: str, user_id: str, mode: str) -> PuzzleRunRecord | None:
        """The player's running run of ``mode``, or None."""

    @abc.abstractmethod
    def puzzle_run_of_post(self, post_id: int) -> PuzzleRunRecord | None:
        """The run (running or ended) that gave post ``post_id`` as one of its puzzles (the post of a
        save), or None."""

    @abc.abstractmethod
    def save_puzzle_run(self, run_id: int, version: int, status: str, score: int, skips: int, post_id: int | None,
                        state: str, ended_at: float | None) -> PuzzleRunRecord:
        """Store a run's next state: a compare-and-set on ``version``; StorageContention (nothing
        written) when another change came first.  The run as it is now."""

    @abc.abstractmethod
    def personal_best(self, platform: str, user_id: str, mode: str, variant: str) -> int | None:
        """A player's best score in a mode and variant, or None (none yet)."""

    @abc.abstractmethod
    def raise_personal_best(self, platform: str, user_id: str, mode: str, variant: str, score: int,
                            at: float) -> bool:
        """Make ``score`` the player's best when it beats the stored one (or there is none); whether it
        did.  A single conditional write: of two at once, the higher stays."""

    @abc.abstractmethod
    def chat_best(self, platform: str, chat_id: str, mode: str, variant: str) -> ChatBestRecord | None:
        """A chat's record in a mode and variant, or None."""

    @abc.abstractmethod
    def chat_bests(self, platform: str, chat_id: str) -> list[ChatBestRecord]:
        """A chat's records, by mode and variant."""

    @abc.abstractmethod
    def raise_chat_best(self, platform: str, chat_id: str, mode: str, variant: str, score: int, user_id: str,
                        name: str, at: float) -> bool:
        """Make this the chat's record when ``score`` beats it (or there is none); whether it did.  The
        record's message stays the one known (it is edited in place).  A single conditional write."""

    @abc.abstractmethod
    def set_chat_best_message(self, platform: str, chat_id: str, mode: str, variant: str, message_id: str) -> bool:
        """Note the message that shows a chat's record; False when the chat has no such record."""

    # -- puzzles from the players' own games ----------------------------------------------------

    @abc.abstractmethod
    def queue_game_scan(self, game_id: int, platform: str, now: float) -> bool:
        """Queue a finished game to be scanned for its players' puzzles; False (nothing written)
        when it was queued before."""

    @abc.abstractmethod
    def claim_game_scans(self, owner: str, now: float, lease_until: float, limit: int = 1,
                         platform: str | None = None) -> list[GameScanRecord]:
        """Claim up to ``limit`` pending scans, oldest game first, for ``owner`` until ``lease_until``:
        those nobody holds and those whose lease ran out.  Each claim is a single conditional write,
        so of several processes claiming at once one gets each game; a claim counts an attempt."""

    @abc.abstractmethod
    def finish_game_scan(self, game_id: int, owner: str, now: float, found: int, failed: bool = False) -> bool:
        """Mark a scan ``owner`` holds done (or failed); False, and nothing written, when it holds it
        no more (its lease ran out and another process took it)."""

    @abc.abstractmethod
    def release_game_scan(self, game_id: int, owner: str) -> bool:
        """Give a claimed scan back, still pending (the engine had no worker for it now)."""

    @abc.abstractmethod
    def game_scan(self, game_id: int) -> GameScanRecord | None:
        """A game's scan, or None when it was never queued."""

    @abc.abstractmethod
    def add_own_puzzle(self, platform: str, user_id: str, variant: str, puzzle: str, game_id: int, ply: int,
                       move_number: int, opponent: str, kind: str, now: float) -> int | None:
        """A player's new puzzle from one of their games (``puzzle`` the bank record as JSON), due
        at ``now`` in the first box; its number, or None (nothing written) when that player already
        has the puzzle of that game and ply."""

    @abc.abstractmethod
    def own_puzzle(self, puzzle_id: int) -> OwnPuzzleRecord | None:
        """A player's puzzle by number, or None."""

    @abc.abstractmethod
    def player_own_puzzles(self, platform: str, user_id: str, include_retired: bool = False) -> list[OwnPuzzleRecord]:
        """A player's puzzles, the soonest due first (then by number)."""

    @abc.abstractmethod
    def due_own_puzzles(self, platform: str, user_id: str, now: float, limit: int = 1) -> list[OwnPuzzleRecord]:
        """A player's puzzles due at ``now`` (not retired), the longest due first."""

    @abc.abstractmethod
    def review_own_puzzle(self, puzzle_id: int, reviews: int, box: int, due_at: float, lapses: int,
                          retired: bool) -> bool:
        """Store a review's outcome: a compare-and-set on ``reviews`` (the count it was read at,
        stored one more); False, and nothing written, when another review came first."""

    @abc.abstractmethod
    def set_own_reminder(self, platform: str, user_id: str, chat_id: str, language: str, active: bool,
                         now: float) -> None:
        """Turn a player's daily reminder on (in ``chat_id``, in ``language``) or off."""

    @abc.abstractmethod
    def own_reminder(self, platform: str, user_id: str) -> OwnReminderRecord | None:
        """A player's reminder setting, or None."""

    @abc.abstractmethod
    def own_reminders(self, platform: str | None, before: float) -> list[OwnReminderRecord]:
        """The reminders turned on whose last one was written before ``before`` (or never)."""

    @abc.abstractmethod
    def claim_own_reminder(self, platform: str, user_id: str, last_at: float | None, now: float) -> bool:
        """Note that a reminder is written now: a single conditional write on the ``last_at`` it was
        read with, so of two processes one writes it."""
