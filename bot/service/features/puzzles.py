"""The daily puzzle: a proven golpe posted in each subscribed chat at the time it chose, answered
in the chat (typed, as a reply to the post, or with the buttons), with streaks and a leaderboard;
and /puzzle, a puzzle for one person.

Posting is timed work (``_post_dailies``, called from ``run_due``): a chat's day is claimed in
storage and its messages written to the outbox in the same transaction, so a day is posted once
whatever restarts or processes there are, and the most recent day missed while the bot was down is
posted at start-up (yesterday's, when the restart is before today's time; one post, no backlog).
Days are the chat's local days (``zoneinfo``): a daylight-saving change neither skips nor doubles
one.

Each user has their own way through a post (an attempt): the moves accepted so far, wrong tries,
hints.  The answers to one user are private where the platform allows (``Where.whisper``); only
the first solver is announced to the chat.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Protocol
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bot.puzzles import bank
from bot.puzzles.solve import (
    Verdict,
    hint,
    judge,
    position_after,
    puzzle_of_day,
    refutation,
    reply_is_forced,
)
from bot.rules import IllegalMove, Move, Position
from bot.service.domain import AttemptScored, EventBus
from bot.service.features.base import Outlet, Runtime, UseCase
from bot.service.features.common import own_number
from bot.service.features.games import Games
from bot.service.features.identity import Caller
from bot.service.features.ratings import Ratings
from bot.service.features.results_puzzles import (
    Acted,
    AnswerIllegal,
    AnswerRight,
    AnswerWrong,
    Board,
    DailyOff,
    DailyOn,
    DailyRequest,
    DailyResult,
    DailySetting,
    Drawn,
    GaveUp,
    HintGiven,
    HistoryEntry,
    HistoryOutcome,
    PathToChoose,
    PieceSelected,
    PuzzleGiven,
    PuzzleHistory,
    PuzzleInPrivate,
    PuzzleOpened,
    PuzzleRequest,
    PuzzleResult,
    RatingChange,
    Reaction,
    Refusal,
    Refused,
    Solved,
    Solvers,
    Step,
    ThemeCounts,
    ThemeEmpty,
    YourPosition,
)
from bot.service.notifications import DailyPosted, DaySummary, FirstSolver
from bot.storage import StorageBusy, StorageFull, StorageGone, in_transaction
from bot.storage.records import AttemptRecord, PuzzlePostRecord, SubscriptionRecord

log = logging.getLogger("bot.service")

DEFAULT_TIMEZONE = "Europe/Madrid"
# /top puzzles: a daily solved is worth SOLVE_POINTS, the first solvers of the day get
# FIRST_BONUS more (first, second, third); each wrong try costs MISS_COST; a hint halves what
# is left; a solve is worth at least MIN_POINTS (halved with a hint).  Equal points: the one
# who solved sooner after the posts (the sum of the times) ranks first.
SOLVE_POINTS = 3.0
FIRST_BONUS = (3.0, 2.0, 1.0)
MISS_COST = 1.0
MIN_POINTS = 1.0
HISTORY_SIZE = 10
LEADERBOARD_SIZE = 10
# How long the time of the next daily post is trusted before the subscriptions are read again.
DAILY_RECHECK_SECONDS = 60.0


class RunHook(Protocol):
    """A run of puzzles that personal posts belong to (``features.puzzle_runs``), asked by the
    answers: whether a post's run has left it, whether hints are refused on it, and what follows an
    answer's step (shown after it; None: nothing)."""

    def left(self, post: PuzzlePostRecord) -> bool: ...

    def no_hints(self, post: PuzzlePostRecord) -> bool: ...

    def unrated(self, post: PuzzlePostRecord) -> bool: ...

    def follow(self, caller: Caller, post: PuzzlePostRecord, step: Step) -> Any: ...


# What a move button of a puzzle board does with the caller's board (``Puzzles._on_board``): the post,
# the board, its legal moves, whether to answer the caller alone.
_BoardAct = Callable[[PuzzlePostRecord, Board, list[Move], bool], Acted | Refused]


def puzzle_by_id(variant: str, puzzle_id: str) -> dict[str, Any] | None:
    return bank.by_id(variant, puzzle_id)


def streaks(days: list[str]) -> tuple[int, int]:
    """(current, best) runs of consecutive days among ISO day strings; the current run is the one
    ending on the latest day."""
    dates = sorted({dt.date.fromisoformat(d) for d in days})
    best = current = 0
    previous = None
    for day in dates:
        current = current + 1 if previous is not None and (day - previous).days == 1 else 1
        best = max(best, current)
        previous = day
    return current, best


def posted_streaks(posted: list[str], solved: list[str], today: str | None = None) -> tuple[int, int]:
    """(current, best) runs of solved days among the days that had a post (ISO day strings): a
    day without a post (the bot was down) breaks no run; a posted day not solved does, except
    ``today``'s, which may still be solved."""
    solved_set = set(solved)
    best = current = 0
    for day in sorted(set(posted) | solved_set):
        if day in solved_set:
            current += 1
            best = max(best, current)
        elif day != today:
            current = 0
    return current, best


def solve_points(attempt: AttemptRecord, rank: int) -> float:
    """The /top puzzles points of a solved daily (``rank`` 1 for the first solver)."""
    bonus = FIRST_BONUS[rank - 1] if 1 <= rank <= len(FIRST_BONUS) else 0.0
    points = max(MIN_POINTS, SOLVE_POINTS + bonus - MISS_COST * attempt.misses)
    return points / 2 if attempt.hints else points


class PuzzleRecords(UseCase):
    """What the stored attempts say about solvers: streaks and a chat's leaderboard (read only)."""

    def puzzle_streaks(self, platform: str, user_id: str) -> tuple[int, int]:
        """A user's (current, best) streaks of daily puzzles solved, counted over the days the
        chats they solved in had a post (a day the bot never posted breaks nothing); the latest
        post, still open, does not break the current one."""
        solved = [post for post, attempt in self.storage.puzzles.user_attempts(platform, user_id)
                  if attempt.solved_at is not None and post.day]
        if not solved:
            return 0, 0
        posted: set[str] = set()
        latest: set[str] = set()
        for chat_id in {post.chat_id for post in solved}:
            days = [p.day for p in self.storage.puzzles.daily_posts(platform, chat_id, 100_000) if p.day]
            posted.update(days)
            if days:
                latest.add(max(days))
        # The latest post of a chat may still be solved: until the next post it breaks nothing.
        today = max(latest) if latest else None
        return posted_streaks(sorted(posted), [post.day for post in solved if post.day], today)

    def puzzle_leaderboard(self, platform: str, chat_id: str) -> list[dict[str, Any]]:
        """The chat's solvers: points (see SOLVE_POINTS), solves, current streak; equal points
        ranked by the total time their solves took after the posts."""
        table: dict[str, dict[str, Any]] = {}
        solvers: dict[int, list[AttemptRecord]] = {}
        posted_at: dict[int, float] = {}
        first_id: dict[int, str | None] = {}
        for post, attempt in self.storage.puzzles.chat_attempts(platform, chat_id):
            row = table.setdefault(attempt.user_id, {"user_id": attempt.user_id, "name": attempt.user_name,
                                                     "points": 0.0, "solved": 0, "seconds": 0.0})
            row["name"] = attempt.user_name
            if attempt.solved_at is not None:
                solvers.setdefault(post.id, []).append(attempt)
                posted_at[post.id] = post.posted_at
                first_id[post.id] = post.first_solver_id
        for post_id, attempts in solvers.items():
            # The announced first solver is first even within one second.
            attempts.sort(key=lambda a: (a.user_id != first_id[post_id], a.solved_at or 0.0, a.user_id))
            for rank, attempt in enumerate(attempts, 1):
                row = table[attempt.user_id]
                row["solved"] += 1
                row["points"] += solve_points(attempt, rank)
                row["seconds"] += max(0.0, (attempt.solved_at or 0.0) - posted_at[post_id])
        rows = sorted((r for r in table.values() if r["solved"]),
                      key=lambda r: (-r["points"], r["seconds"], r["name"].lower()))[:LEADERBOARD_SIZE]
        for row in rows:
            row["streak"] = self.puzzle_streaks(platform, row["user_id"])[0]
        return rows


class Puzzles(UseCase):
    """Daily puzzles and personal ones.  An attempt's one rated outcome is published as
    AttemptScored (ratings follow it); ``ratings`` only shows the solver their rating.  What it
    answers are typed results (``results_puzzles``); what it puts in the outbox on its own are
    notifications (``bot.service.notifications``)."""

    def __init__(self, runtime: Runtime, outlet: Outlet, games: Games, records: PuzzleRecords, ratings: Ratings,
                 bus: EventBus) -> None:
        super().__init__(runtime, outlet)
        self.games = games
        self.records = records
        self.ratings = ratings
        self.bus = bus
        # The runs personal posts may belong to (set by the composition; None: none).
        self.runs: RunHook | None = None
        # The next daily post's time per platform, and when it was found (see next_daily_wakeup).
        self._daily_wakeup_cache: dict[str | None, tuple[float | None, float]] = {}

    def _score(self, post: PuzzlePostRecord, attempt: AttemptRecord) -> float | None:
        """Publish an attempt's rated outcome (inside the caller's transaction); the solver's
        rating change it caused (None for a puzzle of the player's own game: it comes back until it
        is learnt, so it is a review, not rated; None for a run's puzzle, which has no rated outcome
        at all: a streak is unrated, as on lichess)."""
        if self.runs is not None and self.runs.unrated(post):
            return None
        if own_number(post.puzzle_id) is not None:
            self.bus.publish(AttemptScored(post, attempt))
            return None
        before = self.ratings.puzzle_rating(post.platform, attempt.user_id)
        self.bus.publish(AttemptScored(post, attempt))
        return self.ratings.puzzle_rating(post.platform, attempt.user_id) - before

    def _puzzle_of(self, post: PuzzlePostRecord) -> dict[str, Any] | None:
        """A post's puzzle: the bank's, or one of the player's own games (kept in storage)."""
        number = own_number(post.puzzle_id)
        if number is None:
            return puzzle_by_id(post.variant, post.puzzle_id)
        row = self.storage.own_puzzles.get(number)
        if row is None or row.variant != post.variant:
            return None
        puzzle: dict[str, Any] = json.loads(row.puzzle)
        return puzzle

    # -- /daily ------------------------------------------------------------------------------------

    def daily(self, caller: Caller, request: DailyRequest) -> DailyResult:
        """/daily: the setting; on (admins) at a time, in a zone, of a variant; off (admins)."""
        if request.action == "off":
            if not self.storage.puzzles.unsubscribe(*caller.key, caller.at):
                return DailyOff(was_on=False)
            self.daily_changed()
            return DailyOff(was_on=True)
        if request.action != "on":
            sub = self.storage.puzzles.subscription(*caller.key)
            return DailySetting(sub if sub is not None and sub.active else None)
        # The posts' language is the chat's: it guesses the variant when nothing else says it.
        variant = request.variant or self.games.default_variant(caller, request.language)
        old = self.storage.puzzles.subscription(*caller.key)
        zone = request.zone or (old.timezone if old else DEFAULT_TIMEZONE)
        self.storage.puzzles.subscribe(*caller.key, request.time, zone, variant, caller.at, language=request.language)
        self.daily_changed()
        return DailyOn(request.time, zone, variant)

    def daily_changed(self) -> None:
        self._daily_wakeup_cache = {}

    # -- posting -------------------------------------------------------------------------------------

    def _local_day(self, sub: SubscriptionRecord, now: float) -> tuple[dt.date, float]:
        """The chat's local day at ``now`` and when that day's post is due (epoch seconds)."""
        day = dt.datetime.fromtimestamp(now, ZoneInfo(sub.timezone)).date()
        return day, self._due_on(sub, day)

    def _due_on(self, sub: SubscriptionRecord, day: dt.date) -> float:
        """When a chat's post of a local day is due (epoch seconds)."""
        hour, minute = map(int, sub.time.split(":"))
        return dt.datetime.combine(day, dt.time(hour, minute), ZoneInfo(sub.timezone)).timestamp()

    def _last_due(self, sub: SubscriptionRecord, now: float) -> tuple[dt.date, float]:
        """The chat's most recent post time at or before ``now``: today's once its time has come,
        else yesterday's (a post missed while the bot was down is still made after midnight)."""
        day, due = self._local_day(sub, now)
        if due > now:
            day -= dt.timedelta(days=1)
            due = self._due_on(sub, day)
        return day, due

    def _next_daily(self, sub: SubscriptionRecord, now: float) -> float:
        """When the chat's next post is due: the most recent one if it is not out yet (then it is
        due now), else the one after it."""
        day, due = self._last_due(sub, now)
        latest = self.storage.puzzles.daily_posts(sub.platform, sub.chat_id, 1)
        posted = bool(latest) and (latest[0].day or "") >= day.isoformat()
        if not posted and due >= sub.created_at:
            return due
        return self._due_on(sub, day + dt.timedelta(days=1))

    def next_daily_wakeup(self, platform: str | None) -> float | None:
        """The earliest time a daily post of ``platform`` is due, or None without subscriptions.

        Remembered until it is due, until this process changes a subscription or posts, and at
        most DAILY_RECHECK_SECONDS (another process may have subscribed a chat meanwhile)."""
        cache_ = self._daily_wakeup_cache
        now = self.clock()
        known = cache_.get(platform)
        if known is not None:
            value, found_at = known
            if 0 <= now - found_at < DAILY_RECHECK_SECONDS and (value is None or value > now):
                return value
        times = []
        for sub in self.storage.puzzles.subscriptions(platform):
            try:
                times.append(self._next_daily(sub, now))
            except (ZoneInfoNotFoundError, ValueError):
                continue
        value = min(times) if times else None
        cache_[platform] = (value, now)
        return value

    def post_dailies(self, platform: str | None, now: float) -> int:
        """Post every daily puzzle that is due (once per chat and local day); how many were posted."""
        wakeup = self.next_daily_wakeup(platform)
        if wakeup is None or wakeup > now:
            return 0                    # the usual round: nothing due, no chat looked at
        posted = 0
        for sub in self.storage.puzzles.subscriptions(platform):
            try:
                posted += self._post_daily(sub, now)
            except (StorageBusy, StorageFull, StorageGone):
                raise
            except (ZoneInfoNotFoundError, ValueError):
                log.warning("daily puzzle of %s chat %s: unusable time zone %r", sub.platform, sub.chat_id,
                            sub.timezone)
            except Exception:
                # One chat's broken post must not stop every other chat's.
                log.exception("daily puzzle of %s chat %s failed", sub.platform, sub.chat_id)
        return posted

    def _post_daily(self, sub: SubscriptionRecord, now: float) -> int:
        """Post a chat's most recent daily puzzle if it is not posted yet (one post: days missed
        before it are not caught up with); 1 if it was posted."""
        day, due = self._last_due(sub, now)
        if due < sub.created_at:
            return 0
        latest = self.storage.puzzles.daily_posts(sub.platform, sub.chat_id, 1)
        if latest and (latest[0].day or "") >= day.isoformat():
            return 0
        puzzles = bank.load(sub.variant)
        if not puzzles:
            return 0
        puzzle = puzzle_of_day(puzzles, day, sub.variant)
        def post() -> int | None:
            post_id = self.storage.puzzles.claim_daily_post(sub.platform, sub.chat_id, day.isoformat(), sub.variant,
                                                    puzzle["id"], now)
            if post_id is None:
                return None             # another process posted it a moment ago
            lang = self.games.chat_lang(sub.platform, sub.chat_id, sub.language)
            # Worded and drawn when delivered (the post holds its day and its puzzle).
            if latest:
                self.tell(sub.platform, sub.chat_id, DaySummary(latest[0].id, lang, now))
            self.tell(sub.platform, sub.chat_id, DailyPosted(post_id, lang))
            return post_id

        # Timed work: run again if it loses a race (a serialization failure on a server with row locks).
        if in_transaction(self.storage, post) is None:
            return 0
        self.daily_changed()
        self._notify(sub.platform)
        return 1

    def solvers(self, post: PuzzlePostRecord, until: float | None = None) -> Solvers:
        """A post's solvers (those who had solved it by ``until``, when given) and its solution."""
        puzzle = self._puzzle_of(post)
        names = tuple(a.user_name for a in self.storage.puzzles.attempts(post.id)
                      if a.solved_at is not None and (until is None or a.solved_at <= until))
        return Solvers(post, names, tuple(puzzle["solution"]) if puzzle else ())

    def post_record(self, post_id: int) -> PuzzlePostRecord:
        """A post known to exist (posts are never deleted)."""
        post = self.storage.puzzles.post(post_id)
        if post is None:
            raise LookupError(f"puzzle post {post_id} vanished")
        return post

    def post_position(self, post: PuzzlePostRecord) -> Position:
        """The position a post's puzzle starts from."""
        puzzle = self._puzzle_of(post)
        if puzzle is None:
            raise LookupError(f"puzzle {post.puzzle_id} of post {post.id} is not in the bank")
        return Position.from_fen(post.variant, puzzle["fen"])

    # -- who may answer a post -------------------------------------------------------------------------

    def _member_key(self, post: PuzzlePostRecord, user_id: str) -> str:
        return f"puzzle_member:{post.id}:{user_id}"

    def _note_member(self, caller: Caller, post: PuzzlePostRecord) -> None:
        """A user acting on a daily post in its own chat is a member there: remembered with the name
        that chat's platform showed, for their answers from a private chat (written only when new)."""
        if post.kind != "daily" or caller.key != (post.platform, post.chat_id):
            return
        key = self._member_key(post, caller.user_id)
        if self.storage.settings.pending(key) != caller.name:
            self.storage.settings.set_pending(key, caller.name)

    def _member_name(self, caller: Caller, post: PuzzlePostRecord) -> str | None:
        """The name a daily post's chat knows this user by, or None if they may not answer it from
        here: only in that chat, or in their private chat after acting on it in that chat.  (Any
        other post: the user's own name here.)"""
        if post.kind != "daily" or caller.key == (post.platform, post.chat_id):
            return caller.name
        if caller.platform != post.platform or not caller.where.private:
            return None
        name = self.storage.settings.pending(self._member_key(post, caller.user_id))
        return name if isinstance(name, str) else None

    # -- /puzzle ---------------------------------------------------------------------------------------

    def puzzle(self, caller: Caller, request: PuzzleRequest, lang: str) -> PuzzleResult:
        """/puzzle: a new one for you alone (no variant named: the chat's, ``lang`` - its
        language - the last guess), your history, or giving up."""
        if request.action == "history":
            return self.puzzle_history(caller)
        if request.action == "give_up":
            post = self.puzzle_for(caller, request.ref, giving_up=True)
            if post is None:
                return Refused(Refusal.NO_PUZZLE)
            return self.give_up(caller, post)
        variant = request.variant or self.games.default_variant(caller, lang)
        if request.action == "themes":
            return ThemeCounts(variant, tuple(bank.theme_counts(variant).items()))
        return self.new_puzzle(caller, variant, request.theme)

    def new_puzzle(self, caller: Caller, variant: str,
                   theme: str | None = None) -> PuzzleGiven | PuzzleInPrivate | Refused | ThemeEmpty:
        """A puzzle for you alone (one you have not been given before) of ``variant`` (whose line
        shows ``theme``, when given)."""
        puzzles = bank.with_theme(variant, theme) if theme is not None else bank.load(variant)
        if not puzzles and theme is not None and bank.load(variant):
            return ThemeEmpty(variant, theme)
        if not puzzles:
            return Refused(Refusal.NONE_LEFT)
        seen = {p.puzzle_id for p in self.storage.puzzles.personal_posts(caller.platform, caller.user_id, 10_000)}
        fresh = [p for p in puzzles if p["id"] not in seen] or puzzles
        puzzle = self.rng.choice(fresh)
        with self.storage.transaction():
            post_id = self.storage.puzzles.create_personal_post(caller.platform, caller.chat_id, caller.user_id,
                                                                variant, puzzle["id"], caller.at)
            if theme is not None:
                # Its Next puzzle button asks for the same theme again.
                self.storage.settings.set_pending(self._theme_key(post_id), theme)
        post = self.storage.puzzles.post(post_id)
        assert post is not None
        if not caller.where.whisper and caller.where.invites:
            # A group where nothing can be shown to one member: the puzzle waits in a private chat
            # (the chat layer makes the link that opens it there).
            return PuzzleInPrivate(caller.name, post.id)
        pos = Position.from_fen(variant, puzzle["fen"])
        return PuzzleGiven(Board(post, pos, 0, personal=True, private=self._whisper(caller)), puzzle["rating"], theme)

    def _whisper(self, caller: Caller) -> bool:
        """Answers about one user's puzzle go to them alone (a private chat is private already)."""
        return not caller.where.private

    def open_puzzle(self, caller: Caller, post_id: int, proven: bool) -> PuzzleOpened | Refused:
        """Post ``post_id`` opened from a link (one from a group): the user's own way through that
        post, here.  ``proven``: the link carried the caller's own pass for it (the chat layer
        checks it; ``bot.service.chat.signing``)."""
        post = self.storage.puzzles.post(post_id)
        if post is None or post.platform != caller.platform:
            return Refused(Refusal.UNKNOWN)
        # A link proves something only for the user it was signed for (an old unsigned one, a
        # number typed by hand or a link passed on proves nothing).
        if not proven:
            return Refused(Refusal.LINK_INVALID)
        found = self._attempt_at(caller, post, private=False)
        if isinstance(found, Refused):
            return found
        puzzle, attempt = found
        progress = list(attempt.progress)
        pos = position_after(puzzle, progress)
        self._note_opened(caller, post)
        return PuzzleOpened(Board(post, pos, len(progress), personal=True))

    # -- answering -----------------------------------------------------------------------------------

    def _opened_key(self, caller: Caller) -> str:
        return f"opened:{caller.platform}:{caller.chat_id}:{caller.user_id}"

    def _note_opened(self, caller: Caller, post: PuzzlePostRecord) -> None:
        """In a private chat, the puzzle the user works on there (opened from a group's link, say)
        is the one a typed answer there is for."""
        if caller.where.private and post.chat_id != caller.chat_id:
            self.storage.settings.set_pending(self._opened_key(caller), post.id)
    def puzzle_for(self, caller: Caller, ref: int | None = None, text: str | None = None,
                    giving_up: bool = False) -> PuzzlePostRecord | None:
        """The post a user's answer (``text``) is for: #``ref`` (typed, or the message replied to); else the
        first of the puzzle opened here (a private chat), the chat's daily, the user's open
        personal puzzle here where the answer's first move is legal in the user's position (an
        old puzzle must not capture answers meant for today's); if it fits none, the daily (its
        rules explain why), else the first of them."""
        if ref is not None:
            post = self.storage.puzzles.post(ref)
            return post if post is not None and post.platform == caller.platform else None
        user = caller.user_id
        candidates: list[PuzzlePostRecord] = []
        if caller.where.private:
            opened = self.storage.settings.pending(self._opened_key(caller))
            if isinstance(opened, int):
                post = self.storage.puzzles.post(opened)
                if post is not None and post.platform == caller.platform and self._is_open(post, user):
                    candidates.append(post)
            # The daily a member is working on in a group, whose steps came to this private chat.
            working = self._daily_in_progress(caller)
            if working is not None and working not in candidates:
                candidates.append(working)
        daily = self.storage.puzzles.daily_posts(*caller.key, 1)
        daily_post = daily[0] if daily else None
        if daily_post is not None and self._is_open(daily_post, user):
            candidates.append(daily_post)
        mine = self.storage.puzzles.personal_posts(caller.platform, user, 1)
        if mine and mine[0].chat_id == caller.chat_id and self._is_open(mine[0], user):
            candidates.append(mine[0])
        if text is not None:
            for post in candidates:
                if self._fits(post, user, text):
                    return post
            return daily_post or (candidates[0] if candidates else None)
        if giving_up:
            # Giving up: the puzzle of one's own first (the day's may be what others still solve).
            candidates.sort(key=lambda post: post.kind != "personal")
        return candidates[0] if candidates else daily_post

    def _daily_in_progress(self, caller: Caller) -> PuzzlePostRecord | None:
        """The latest daily post the user has begun (and not finished) that is still its chat's
        current one and that they may answer from here."""
        for post, attempt in reversed(self.storage.puzzles.user_attempts(caller.platform, caller.user_id)):
            if attempt.solved_at is not None or not attempt.progress:
                continue
            latest = self.storage.puzzles.daily_posts(post.platform, post.chat_id, 1)
            if (latest and latest[0].id == post.id and self._is_open(post, caller.user_id)
                    and self._member_name(caller, post) is not None):
                return post
        return None

    def _several_open(self, caller: Caller, post: PuzzlePostRecord) -> bool:
        """Whether the user has another open puzzle here besides ``post`` (their daily and their
        personal one, say)."""
        user = caller.user_id
        others = [p for p in (*self.storage.puzzles.daily_posts(*caller.key, 1),
                              *self.storage.puzzles.personal_posts(caller.platform, user, 1))
                  if p.id != post.id and p.chat_id == caller.chat_id and self._is_open(p, user)]
        return bool(others)

    def _fits(self, post: PuzzlePostRecord, user_id: str, text: str) -> bool:
        """Whether an answer's first move is legal in the user's position of a post."""
        puzzle = self._puzzle_of(post)
        words = text.replace(",", " ").split()
        if puzzle is None or not words:
            return False
        attempt = self.storage.puzzles.attempt(post.id, user_id)
        try:
            position_after(puzzle, list(attempt.progress) if attempt else []).parse_move(words[0])
        except IllegalMove:
            return False
        return True

    def find_post(self, post_id: int) -> PuzzlePostRecord | None:
        """Post ``post_id`` (the puzzle a message replied to, say), None when there is none."""
        return self.storage.puzzles.post(post_id)

    def _attempt_at(self, caller: Caller, post: PuzzlePostRecord,
                    private: bool) -> tuple[dict[str, Any], AttemptRecord] | Refused:
        """The puzzle and this user's attempt at a post (a fresh one if none yet), or why it is
        refused: someone else's puzzle, one no longer in the bank, a daily post that the next
        day's (with its solution) replaced, or one already solved or given up."""
        ev = caller
        if post.kind == "personal" and post.user_id != ev.user_id:
            return Refused(Refusal.NOT_YOURS, private=private)
        name = self._member_name(caller, post)
        if name is None:
            return Refused(Refusal.NOT_MEMBER, private=private)
        puzzle = self._puzzle_of(post)
        if puzzle is None:
            return Refused(Refusal.UNKNOWN, private=private)
        if self.runs is not None and self.runs.left(post):
            # A board of a run that ended or moved on: pressing or answering it changes nothing.
            return Refused(Refusal.STALE, private=True)
        if post.kind == "daily":
            latest = self.storage.puzzles.daily_posts(post.platform, post.chat_id, 1)
            if latest and latest[0].id != post.id:
                return Refused(Refusal.OVER, private=private, day=post.day)
        attempt = self.storage.puzzles.attempt(post.id, ev.user_id)
        attempt = (_replace(attempt, user_name=name) if attempt is not None
                   else AttemptRecord(post.id, ev.user_id, name, (), 0, 0, caller.at, None, None, None, version=0))
        if attempt.solved_at is not None:
            return Refused(Refusal.ALREADY, private=private)
        if self.storage.settings.pending(self._gave_up_key(post, ev.user_id)):
            return Refused(Refusal.GAVE_UP, private=private, solution=tuple(puzzle["solution"]))
        return puzzle, attempt

    def _gave_up_key(self, post: PuzzlePostRecord, user_id: str) -> str:
        return f"puzzle_gave_up:{post.id}:{user_id}"

    def _is_open(self, post: PuzzlePostRecord, user_id: str) -> bool:
        """Whether a user may still answer a post: not solved, not given up."""
        attempt = self.storage.puzzles.attempt(post.id, user_id)
        return ((attempt is None or attempt.solved_at is None)
                and not self.storage.settings.pending(self._gave_up_key(post, user_id))
                and not (self.runs is not None and self.runs.left(post)))


    def _acted(self, caller: Caller, post: PuzzlePostRecord, step: Step, reaction: Reaction = Reaction.OTHER,
               label: bool = False) -> Acted:
        return Acted(post, step, private=self._whisper(caller),
                     reaction=reaction, stand_in=not caller.where.private and not caller.where.whisper, label=label,
                     hints=not (self.runs is not None and self.runs.no_hints(post)))

    def give_up(self, caller: Caller, post: PuzzlePostRecord) -> Acted:
        """Show a user the solution of a post and close their attempt (a failure, if it was not
        rated yet)."""
        whisper = self._whisper(caller)
        with self.storage.transaction():
            found = self._attempt_at(caller, post, whisper)
            if isinstance(found, Refused):
                return self._acted(caller, post, found)
            puzzle, attempt = found
            if attempt.rated_score is None:
                attempt = _replace(attempt, rated_score=0.0, rated_at=caller.at)
                self._score(post, attempt)
            self.storage.puzzles.save_attempt(attempt)
            self.storage.settings.set_pending(self._gave_up_key(post, caller.user_id), 1)
        # The solution is for the one who gave up: in a group it goes to them alone.
        return self._followed(caller, self._acted(caller, post, GaveUp(post, tuple(puzzle["solution"]), whisper)))

    def give_up_post(self, caller: Caller, post_id: int) -> PuzzleResult:
        """The Give up button of post ``post_id``."""
        post = self._more_post(caller, post_id)
        return post if isinstance(post, Refused) else self.give_up(caller, post)

    def next_puzzle(self, caller: Caller, post_id: int) -> PuzzleResult:
        """The Next puzzle button of post ``post_id``: a personal one of that variant (and of the
        theme that post was asked with)."""
        post = self._more_post(caller, post_id)
        if isinstance(post, Refused):
            return post
        theme = self.storage.settings.pending(self._theme_key(post.id))
        return self.new_puzzle(caller, post.variant, theme if theme in bank.THEMES else None)

    @staticmethod
    def _theme_key(post_id: int) -> str:
        return f"puzzle_theme:{post_id}"

    def _more_post(self, caller: Caller, post_id: int) -> PuzzlePostRecord | Refused:
        post = self.storage.puzzles.post(post_id)
        if post is None or post.platform != caller.platform:
            return Refused(Refusal.UNKNOWN, private=True)
        if self._member_name(caller, post) is None:
            return Refused(Refusal.NOT_MEMBER, private=True)
        return post

    def puzzle_history(self, caller: Caller) -> PuzzleHistory:
        """/puzzle history: the user's last puzzles (personal and daily) and how each went."""
        ev = caller
        items: list[tuple[float, PuzzlePostRecord, AttemptRecord | None]] = []
        for post in self.storage.puzzles.personal_posts(ev.platform, ev.user_id, HISTORY_SIZE):
            items.append((post.posted_at, post, self.storage.puzzles.attempt(post.id, ev.user_id)))
        for daily, done in self.storage.puzzles.user_attempts(ev.platform, ev.user_id)[-HISTORY_SIZE:]:
            items.append((daily.posted_at, daily, done))
        items.sort(key=lambda item: (item[0], item[1].id), reverse=True)
        entries = []
        for _at, post, attempt in items[:HISTORY_SIZE]:
            puzzle = self._puzzle_of(post) if post.kind != "daily" else None
            outcome: HistoryOutcome
            if attempt is not None and attempt.solved_at is not None:
                outcome = "solved"
            elif self.storage.settings.pending(self._gave_up_key(post, ev.user_id)):
                outcome = "gave_up"
            elif attempt is not None and attempt.misses:
                outcome = "failed"
            else:
                outcome = "open"
            entries.append(HistoryEntry(post, puzzle["rating"] if puzzle else None, outcome,
                                        attempt.misses if attempt is not None else 0))
        whisper = self._whisper(caller)
        # An empty history is said to the user alone; a list only where it can be shown to them alone.
        return PuzzleHistory(tuple(entries), whisper and (not entries or caller.where.whisper))

    def answer_puzzle(self, caller: Caller, post: PuzzlePostRecord, answer: str | Move) -> Acted:
        """Judge an answer to a post for this user: typed text (one move or a whole line) or a move
        already read (a board's buttons).  The result is the same however the answer came in: how
        it is shown (a board replacing the pressed one, a label) is the chat layer's to decide."""
        # Acting on a post in its chat makes the user a member there: the private chat their
        # steps go to may then answer it too.
        self._note_member(caller, post)
        step, reaction = self._answer_puzzle(caller, post, answer)
        acted = self._acted(caller, post, step, reaction, self._several_open(caller, post))
        return self._followed(caller, acted)

    def _followed(self, caller: Caller, acted: Acted) -> Acted:
        """``acted`` with what the post's run says next, when it belongs to one."""
        follow = self.runs.follow(caller, acted.post, acted.step) if self.runs is not None else None
        return acted if follow is None else replace(acted, follow=follow)

    def _answer_puzzle(self, caller: Caller, post: PuzzlePostRecord, answer: str | Move) -> tuple[Step, Reaction]:
        """What an answer came to, and the reaction that says how it went where it cannot be
        shown to the user alone."""
        whisper = self._whisper(caller)
        # The attempt is read and written in one transaction: two answers of one user at once (in
        # the group and in a private chat, or in two processes) are judged one after the other.
        first = False
        delta: float | None = None
        with self.storage.transaction():
            found = self._attempt_at(caller, post, whisper)
            if isinstance(found, Refused):
                return found, Reaction.OTHER
            puzzle, attempt = found
            progress = list(attempt.progress)
            if isinstance(answer, Move) and answer not in position_after(puzzle, progress).legal_moves():
                # Pressed on a board of a position this attempt has left (an answer in between).
                return Refused(Refusal.STALE, private=True), Reaction.OTHER
            judged = judge(puzzle, progress, answer)
            accepted = [*progress, *judged.played]
            if judged.verdict is Verdict.WRONG:
                attempt = _replace(attempt, progress=tuple(accepted), misses=attempt.misses + 1)
                if attempt.rated_score is None:
                    attempt = _replace(attempt, rated_score=0.0, rated_at=caller.at)
                    delta = self._score(post, attempt)
                self.storage.puzzles.save_attempt(attempt)
            elif judged.verdict is Verdict.RIGHT:
                self.storage.puzzles.save_attempt(_replace(attempt, progress=tuple(accepted)))
            elif judged.verdict is Verdict.SOLVED:
                first, delta = self._record_solve(caller, post, attempt, accepted)
            name = attempt.user_name
        pos = judged.position or position_after(puzzle, progress)
        rating = self._rating_change(caller, delta)
        if judged.verdict is Verdict.ILLEGAL:
            if judged.error is None:
                return Refused(Refusal.MOVE_USAGE, private=whisper), Reaction.OTHER
            return AnswerIllegal(judged.error, pos, str(answer)[:40], whisper), Reaction.OTHER
        if judged.verdict is Verdict.WRONG:
            wrong = judged.wrong or str(answer).split()[0]
            try:
                wrong_move = str(pos.parse_move(wrong))
            except IllegalMove:
                wrong_move = wrong
            line = tuple(refutation(puzzle, accepted, wrong_move)[:3])
            return (AnswerWrong(tuple(judged.played), wrong[:40], line, rating, whisper,
                                Board(post, pos, len(accepted), personal=True, private=whisper)),
                    Reaction.WRONG)
        if judged.verdict is Verdict.RIGHT:
            # "Forced" only when the defender had no other move; else which side answered (the one
            # not to move now).
            return (AnswerRight(judged.played[-1], reply_is_forced(puzzle, accepted[:-1]),
                                "B" if pos.turn == "W" else "W",
                                Board(post, pos, len(accepted), personal=True, private=whisper,
                                      drawn=_drawn(puzzle, accepted, 2))),
                    Reaction.RIGHT)
        return self._solved(caller, post, accepted, first, name, puzzle, rating), Reaction.SOLVED

    def _rating_change(self, caller: Caller, delta: float | None) -> RatingChange | None:
        if delta is None:
            return None
        return RatingChange(self.ratings.puzzle_rating_now(caller.platform, caller.user_id), delta)

    def _record_solve(self, caller: Caller, post: PuzzlePostRecord, attempt: AttemptRecord,
                      accepted: list[str]) -> tuple[bool, float | None]:
        """Store a solve (inside the caller's transaction) and rate it: whether it was the post's
        first, and the solver's rating change (None when this attempt was rated before)."""
        ev = caller
        attempt = _replace(attempt, progress=tuple(accepted), solved_at=caller.at)
        delta = None
        if attempt.rated_score is None:
            attempt = _replace(attempt, rated_score=0.5 if attempt.hints else 1.0, rated_at=caller.at)
            delta = self._score(post, attempt)
        self.storage.puzzles.save_attempt(attempt)
        # The name announced is the one the post's chat knows the user by (see _member_name).
        first = post.kind == "daily" and self.storage.puzzles.claim_first_solver(post.id, ev.user_id, attempt.user_name)
        return first, delta

    def _solved(self, caller: Caller, post: PuzzlePostRecord, accepted: list[str], first: bool, name: str,
                puzzle: dict[str, Any], rating: RatingChange | None) -> Solved:
        ev = caller
        tags = dict(puzzle.get("tags") or {})
        line = tuple(accepted)
        if post.kind == "personal":
            return Solved(post, line, "personal", name, 0, 0, tags, rating)
        current, _best = self.records.puzzle_streaks(ev.platform, ev.user_id)
        if first:
            if (post.platform, post.chat_id) != caller.key:
                # Solved elsewhere (a private chat the group's buttons led to): the group hears of it.
                # Its chat's language, else the solver's (this chat's, else their own).
                lang = self.games.chat_lang(post.platform, post.chat_id, caller.chat.language or caller.by.language)
                self.tell(post.platform, post.chat_id, FirstSolver(post.id, lang, name, current))
                self._notify(post.platform)
                return Solved(post, line, "first_elsewhere", name, current, 1, tags, rating)
            return Solved(post, line, "first", name, current, 1, tags, rating)
        number = sum(1 for a in self.storage.puzzles.attempts(post.id) if a.solved_at is not None)
        return Solved(post, line, "nth", name, current, number, tags, rating)

    def hint(self, caller: Caller, ref: int | None = None) -> Acted | Refused:
        """/hint [#id]: which piece moves next in your puzzle (a hinted solve counts half)."""
        post = self.puzzle_for(caller, ref)
        if post is None:
            return Refused(Refusal.NO_PUZZLE)
        return self._hint(caller, post)

    def _hint(self, caller: Caller, post: PuzzlePostRecord) -> Acted:
        whisper = self._whisper(caller)
        with self.storage.transaction():
            found = self._attempt_at(caller, post, whisper)
            if isinstance(found, Refused):
                return self._acted(caller, post, found)
            puzzle, attempt = found
            if self.runs is not None and self.runs.no_hints(post):
                return self._acted(caller, post, Refused(Refusal.NO_HINTS, private=whisper))
            square = hint(puzzle, list(attempt.progress))
            self.storage.puzzles.save_attempt(_replace(attempt, hints=attempt.hints + 1))
        return self._acted(caller, post, HintGiven(square, whisper))

    # -- the buttons of a puzzle board (decoded by the chat layer) ------------------------------------

    def hint_button(self, caller: Caller, post_id: int) -> Acted | Refused:
        """The Hint button of a puzzle board."""
        post = self._pressed_post(caller, post_id)
        if isinstance(post, Refused):
            return post
        return self._hint(caller, post)

    def show_position(self, caller: Caller, post_id: int, step: int) -> Acted | Refused:
        """The Back button of a board drawn at ``step``: the caller's own position, with its pieces."""
        return self._on_board(caller, post_id, step, back=True)

    def pick_piece(self, caller: Caller, post_id: int, step: int, square: int) -> Acted | Refused:
        """The piece on ``square`` chosen on a board drawn at ``step``: where it can go."""
        def pick(post: PuzzlePostRecord, board: Board, legal: list[Move],
                 whisper: bool) -> Acted | Refused:
            ends = sorted({m.end for m in legal if m.start == square})
            if not ends:
                return Refused(Refusal.STALE, private=True)
            return Acted(post, PieceSelected(board, square, tuple(ends)), private=whisper)
        return self._on_board(caller, post_id, step, pick)

    def choose_destination(self, caller: Caller, post_id: int, step: int, start: int,
                           end: int) -> Acted | Refused:
        """The move from ``start`` to ``end`` on a board drawn at ``step``: the answer when only one
        move goes so, else its paths to choose from."""
        def choose(post: PuzzlePostRecord, board: Board, legal: list[Move],
                   whisper: bool) -> Acted | Refused:
            matching = [m for m in legal if (m.start, m.end) == (start, end)]
            if not matching:
                return Refused(Refusal.STALE, private=True)
            if len(matching) > 1:
                paths = tuple((legal.index(m), str(m), list(m.path)) for m in matching)
                return Acted(post, PathToChoose(board, paths, start, end), private=whisper)
            return self.answer_puzzle(caller, post, matching[0])
        return self._on_board(caller, post_id, step, choose)

    def choose_path(self, caller: Caller, post_id: int, step: int, index: int) -> Acted | Refused:
        """The legal move number ``index`` of a board drawn at ``step`` (one of several paths)."""
        def choose(post: PuzzlePostRecord, board: Board, legal: list[Move],
                   whisper: bool) -> Acted | Refused:
            if index >= len(legal):
                return Refused(Refusal.STALE, private=True)
            return self.answer_puzzle(caller, post, legal[index])
        return self._on_board(caller, post_id, step, choose)

    def _pressed_post(self, caller: Caller, post_id: int) -> PuzzlePostRecord | Refused:
        """The post a button names, when the caller may act on it from here (noted as a member of
        its chat and as working on it here); else why not, to the presser alone."""
        post = self.storage.puzzles.post(post_id)
        if post is None or post.platform != caller.platform:
            return Refused(Refusal.UNKNOWN, private=True)
        # A button pressed in one chat acts on a post of another only in the presser's private
        # chat, after they acted on it in its own chat (a hand-made callback from elsewhere: no).
        if self._member_name(caller, post) is None:
            return Refused(Refusal.NOT_MEMBER, private=True)
        self._note_member(caller, post)
        self._note_opened(caller, post)
        return post

    def _on_board(self, caller: Caller, post_id: int, step: int, act: _BoardAct | None = None,
                  back: bool = False) -> Acted | Refused:
        """A move button of a board drawn at ``step``: ``act`` with the caller's board, its legal
        moves and whether to answer alone, when the board is the caller's
        current one; else (or ``back``) the caller's own position."""
        post = self._pressed_post(caller, post_id)
        if isinstance(post, Refused):
            return post
        whisper = self._whisper(caller)
        found = self._attempt_at(caller, post, private=True)
        if isinstance(found, Refused):
            # One refusal names the solution (given up already): it stays with the presser.
            return self._acted(caller, post, found)
        puzzle, attempt = found
        progress = list(attempt.progress)
        pos = position_after(puzzle, progress)
        board = Board(post, pos, len(progress), personal=True, private=whisper)
        if step != len(progress) or back or act is None:
            # A board from another step (the shared post, or an older board): this user's own position.
            return Acted(post, YourPosition(board), private=whisper)
        return act(post, board, pos.legal_moves(), whisper)


def _drawn(puzzle: dict[str, Any], moves: list[str], count: int) -> Drawn:
    """How the last ``count`` of the accepted ``moves`` are drawn: the earlier ones' paths, the
    last one's path, and every square a piece was taken from by them."""
    pos = Position.from_fen(puzzle["variant"], puzzle["fen"])
    paths: list[list[int]] = []
    captured: list[int] = []
    for index, text in enumerate(moves):
        move = pos.parse_move(text)
        if index >= len(moves) - count:
            paths.append(list(move.path))
            captured.extend(move.captured)
        pos = pos.play(move)
    if not paths:
        return [], [], []
    return paths[:-1], paths[-1], captured


def _replace(attempt: AttemptRecord, **changes: Any) -> AttemptRecord:
    return replace(attempt, **changes)
