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
hints.  The answers to one user are private where the platform allows (the event's
``can_whisper``); only the first solver is announced to the chat.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import logging
import re
from dataclasses import replace
from functools import cache
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from bot.i18n import t, tn
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
from bot.rules import IllegalMove, Position
from bot.service import boards
from bot.service.commands import parse_variant
from bot.service.domain import AttemptScored, EventBus
from bot.service.events import Button, Reply
from bot.service.features.base import Outlet, Runtime, UseCase
from bot.service.features.common import Ctx, _name, _rows
from bot.service.features.games import Games
from bot.service.registry import DAILY_OFF_WORDS, DAILY_ON_WORDS, ButtonKind, action
from bot.service.wording import day_words, illegal_rule_text, ordinal, variant_name
from bot.storage import StorageBusy, StorageFull, StorageGone
from bot.storage.records import AttemptRecord, PuzzlePostRecord, SubscriptionRecord

if TYPE_CHECKING:
    from bot.service.features.ratings import Ratings

log = logging.getLogger("bot.service")

DEFAULT_TIME = "09:00"
DEFAULT_TIMEZONE = "Europe/Madrid"
SOLVED_REACTION = "🎉"
# Where a member's answer cannot be shown to them alone (a Telegram group), a reaction to their
# message says how it went; the steps themselves go to their private chat with the bot.
RIGHT_REACTION = "👍"
WRONG_REACTION = "👎"
OTHER_REACTION = "🤔"
# /top puzzles: a daily solved is worth SOLVE_POINTS, the first solvers of the day get
# FIRST_BONUS more (first, second, third); each wrong try costs MISS_COST; a hint halves what
# is left; a solve is worth at least MIN_POINTS (halved with a hint).  Equal points: the one
# who solved sooner after the posts (the sum of the times) ranks first.
SOLVE_POINTS = 3.0
FIRST_BONUS = (3.0, 2.0, 1.0)
MISS_COST = 1.0
MIN_POINTS = 1.0
HISTORY_SIZE = 10
GIVE_UP_WORDS = ("giveup", "give-up", "resign", "rendirse", "rindo", "abandonar", "arrendo", "arrendersi", "abbandona")
HISTORY_WORDS = ("history", "historial", "historia", "storia", "cronologia")
LEADERBOARD_SIZE = 10
# How long the time of the next daily post is trusted before the subscriptions are read again.
DAILY_RECHECK_SECONDS = 60.0
# ASCII digits only: the time is stored as typed ('09:0٥' would be kept as such).
_TIME = re.compile(r"([01]?\d|2[0-3])[:.h]([0-5]\d)", re.ASCII)
# '8am', '8:30pm', '12pm' (noon), '12am' (midnight).
_AMPM = re.compile(r"(1[0-2]|0?[1-9])(?:[:.]([0-5]\d))?\s*([ap])\.?m\.?", re.I | re.ASCII)


def read_time(word: str) -> str | None:
    """'08:30', '8.30', '8h30', '8am', '8:30pm' as HH:MM, or None."""
    match = _TIME.fullmatch(word)
    if match:
        return f"{int(match.group(1)):02d}:{match.group(2)}"
    match = _AMPM.fullmatch(word)
    if match:
        hour = int(match.group(1)) % 12 + (12 if match.group(3).lower() == "p" else 0)
        return f"{hour:02d}:{match.group(2) or '00'}"
    return None


def zones_of_city(word: str) -> list[str]:
    """The IANA zones whose city is this word ('London' -> ['Europe/London'])."""
    city = "/" + word.strip().lower().replace(" ", "_")
    return sorted(name for low, name in _zone_names().items() if low.endswith(city))


@cache
def _zone_names() -> dict[str, str]:
    return {name.lower(): name for name in available_timezones()}


def find_timezone(word: str) -> str | None:
    """The IANA name a typed time zone means ('europe/rome' -> 'Europe/Rome'), or None."""
    name = _zone_names().get(word.strip().lower())
    if name is None and word.upper() == "UTC":
        name = "UTC"
    return name


# ``/start`` payloads: p<post>_<signature>.  The signature binds the link to the one user it was
# handed to (Telegram allows 64 characters of [A-Za-z0-9_-]); a bare p<post> is an old link.
_START_PAYLOAD = re.compile(r"p(\d{1,9})(?:_([A-Za-z0-9_-]{16}))?")
_SIGNATURE_BYTES = 12


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


def theme_words(lang: str, puzzle: dict[str, Any]) -> list[str]:
    """A puzzle's tags in words (whatever tags the bank has; unknown ones are left out)."""
    tags = puzzle.get("tags") or {}
    words = []
    sacrifices = tags.get("sacrifices") or 0
    if isinstance(sacrifices, bool):
        sacrifices = int(sacrifices)
    if sacrifices == 1:
        words.append(t(lang, "theme.sacrifice"))
    elif isinstance(sacrifices, int) and sacrifices > 1:
        words.append(t(lang, "theme.sacrifices", n=sacrifices))
    longest = tags.get("longest_capture") or 0
    if isinstance(longest, int) and longest >= 2:
        words.append(t(lang, "theme.longest_capture", n=longest))
    # The bank names its themes in a list (tags.themes); older records had a flag per theme. The
    # sacrifice and the shot are already worded above, with their counts.
    named = tags.get("themes") if isinstance(tags.get("themes"), list) else []
    for flag in ("promotion", "king_capture", "quiet_move", "blockade", "endgame"):
        if tags.get(flag) is True or flag in named:
            words.append(t(lang, f"theme.{flag}"))
    moves = tags.get("moves")
    if isinstance(moves, int) and moves > 0:
        words.append(tn(lang, "theme.moves", moves))
    return words


def streak_text(lang: str, days: int) -> str:
    return t(lang, "streak.one") if days == 1 else t(lang, "streak.many", n=days)


class PuzzleRecords(UseCase):
    """What the stored attempts say about solvers: streaks and a chat's leaderboard (read only)."""

    def puzzle_streaks(self, platform: str, user_id: str) -> tuple[int, int]:
        """A user's (current, best) streaks of daily puzzles solved, counted over the days the
        chats they solved in had a post (a day the bot never posted breaks nothing); the latest
        post, still open, does not break the current one."""
        solved = [post for post, attempt in self.storage.user_attempts(platform, user_id)
                  if attempt.solved_at is not None and post.day]
        if not solved:
            return 0, 0
        posted: set[str] = set()
        latest: set[str] = set()
        for chat_id in {post.chat_id for post in solved}:
            days = [p.day for p in self.storage.daily_posts(platform, chat_id, 100_000) if p.day]
            posted.update(days)
            if days:
                latest.add(max(days))
        # The latest post of a chat may still be solved: until the next post it breaks nothing.
        today = max(latest) if latest else None
        return posted_streaks(sorted(posted), [post.day for post in solved], today)


    def puzzle_leaderboard(self, platform: str, chat_id: str) -> list[dict[str, Any]]:
        """The chat's solvers: points (see SOLVE_POINTS), solves, current streak; equal points
        ranked by the total time their solves took after the posts."""
        table: dict[str, dict[str, Any]] = {}
        solvers: dict[int, list[AttemptRecord]] = {}
        posted_at: dict[int, float] = {}
        first_id: dict[int, str | None] = {}
        for post, attempt in self.storage.chat_attempts(platform, chat_id):
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
    AttemptScored (ratings follow it); ``ratings`` only shows the solver their rating."""

    def __init__(self, runtime: Runtime, outlet: Outlet, games: Games, records: PuzzleRecords, ratings: Ratings,
                 bus: EventBus) -> None:
        super().__init__(runtime, outlet)
        self.games = games
        self.records = records
        self.ratings = ratings
        self.bus = bus
        # The next daily post's time per platform, and when it was found (see next_daily_wakeup).
        self._daily_wakeup_cache: dict[str | None, tuple[float | None, float]] = {}
        self._link_key: bytes | None = None

    def _score(self, post: PuzzlePostRecord, attempt: AttemptRecord) -> float:
        """Publish an attempt's rated outcome (inside the caller's transaction); the solver's
        rating change it caused."""
        before = self.ratings.puzzle_rating(post.platform, attempt.user_id)
        self.bus.publish(AttemptScored(post, attempt))
        return self.ratings.puzzle_rating(post.platform, attempt.user_id) - before

    # -- /daily ------------------------------------------------------------------------------------

    def cmd_daily(self, ctx: Ctx, args: list[str]) -> list[Reply]:
        """/daily: show the setting; /daily on [HH:MM] [time zone] [variant] and /daily off (admins)."""
        if not args:
            return [Reply(self._daily_setting_text(ctx))]
        word = args[0].lower()
        if word in DAILY_OFF_WORDS:
            if len(args) > 1:
                return [Reply(t(ctx.lang, "daily.usage"))]
            if not self.storage.unsubscribe(*ctx.key, ctx.now):
                return [Reply(t(ctx.lang, "daily.none"))]
            self.daily_changed()
            return [Reply(t(ctx.lang, "daily.off"))]
        if word not in DAILY_ON_WORDS:
            return [Reply(t(ctx.lang, "daily.usage"))]
        time_text, zone, variant_words = DEFAULT_TIME, None, []
        for arg in args[1:]:
            read = read_time(arg)
            if read:
                time_text = read
            elif ("/" in arg or arg.upper() == "UTC") and find_timezone(arg):
                # An IANA name, and UTC: 'UTC' also ends like Etc/UTC, which is no city to ask about.
                zone = find_timezone(arg)
            elif zones_of_city(arg) and not parse_variant([arg]):
                # A city alone ('London'): the zone it means is offered, not guessed silently.
                return [Reply(t(ctx.lang, "daily.zone_hint", zone=arg[:40], suggestion=zones_of_city(arg)[0]))]
            elif "/" in arg:
                return [Reply(t(ctx.lang, "daily.bad_zone", zone=arg[:40]))]
            else:
                variant_words.append(arg)
        variant = self.games.default_variant(ctx)
        if variant_words:
            variant = parse_variant(variant_words)
            if variant is None:
                return [Reply(t(ctx.lang, "daily.bad_word", word=" ".join(variant_words)[:30]) + " "
                              + t(ctx.lang, "daily.usage"))]
        old = self.storage.subscription(*ctx.key)
        zone = zone or (old.timezone if old else DEFAULT_TIMEZONE)
        self.storage.subscribe(*ctx.key, time_text, zone, variant, ctx.now, language=ctx.lang)
        self.daily_changed()
        return [Reply(t(ctx.lang, "daily.on", time=time_text, zone=zone, variant=variant_name(ctx.lang, variant)))]

    def _daily_setting_text(self, ctx: Ctx) -> str:
        sub = self.storage.subscription(*ctx.key)
        if sub is None or not sub.active:
            return t(ctx.lang, "daily.none")
        return t(ctx.lang, "daily.show", time=sub.time, zone=sub.timezone,
                 variant=variant_name(ctx.lang, sub.variant))

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
        latest = self.storage.daily_posts(sub.platform, sub.chat_id, 1)
        posted = bool(latest) and latest[0].day >= day.isoformat()
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
        for sub in self.storage.subscriptions(platform):
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
        for sub in self.storage.subscriptions(platform):
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
        latest = self.storage.daily_posts(sub.platform, sub.chat_id, 1)
        if latest and latest[0].day >= day.isoformat():
            return 0
        puzzles = bank.load(sub.variant)
        if not puzzles:
            return 0
        puzzle = puzzle_of_day(puzzles, day, sub.variant)
        # The board is drawn before the transaction that claims the day (only its buttons need the post).
        picture = self._picture(Position.from_fen(sub.variant, puzzle["fen"]))
        with self.storage.transaction():
            post_id = self.storage.claim_daily_post(sub.platform, sub.chat_id, day.isoformat(), sub.variant,
                                                    puzzle["id"], now)
            if post_id is None:
                return 0                # another process posted it a moment ago
            lang = self.games.chat_lang(sub.platform, sub.chat_id, sub.language)
            if latest:
                self.say(sub.platform, sub.chat_id, self._yesterday_reply(lang, latest[0]))
            post = self.storage.puzzle_post(post_id)
            assert post is not None
            self.say(sub.platform, sub.chat_id, self._post_reply(lang, post, puzzle, picture))
        self.daily_changed()
        self._notify(sub.platform)
        return 1

    def _yesterday_reply(self, lang: str, post: PuzzlePostRecord) -> Reply:
        puzzle = puzzle_by_id(post.variant, post.puzzle_id)
        solvers = [a.user_name for a in self.storage.attempts(post.id) if a.solved_at is not None]
        solvers_text = (t(lang, "daily.solved_by", names=", ".join(solvers[:20]), count=len(solvers))
                        if solvers else t(lang, "daily.nobody"))
        line = " ".join(puzzle["solution"]) if puzzle else "?"
        return Reply(t(lang, "daily.yesterday", day=day_words(lang, post.day)) + "\n" + solvers_text, spoiler=line)

    def _post_reply(self, lang: str, post: PuzzlePostRecord, puzzle: dict[str, Any],
                    picture: tuple[bytes, str] | None = None) -> Reply:
        pos = Position.from_fen(post.variant, puzzle["fen"])
        text = t(lang, "daily.post", day=day_words(lang, post.day, weekday=True),
                 variant=variant_name(lang, post.variant), side=t(lang, f"puzzle.to_win.{pos.turn}"))
        return self._puzzle_board(lang, post, pos, 0, text, picture=picture)

    def _picture(self, pos: Position, drawn: tuple[list[list[int]], list[int], list[int]] | None = None
                 ) -> tuple[bytes, str]:
        """A puzzle position drawn (PNG and text board), as _puzzle_board shows it."""
        earlier, last, captured = drawn or ([], [], [])
        view = boards.board_view(pos, last_path=last, captured=captured, flipped=not pos.white,
                                 earlier_paths=earlier)
        return boards.png(view), boards.text(view)

    def _puzzle_board(self, lang: str, post: PuzzlePostRecord, pos: Position, step: int, text: str,
                      replaces: bool = False, private: bool = False, user_id: str | None = None,
                      drawn: tuple[list[list[int]], list[int], list[int]] | None = None,
                      picture: tuple[bytes, str] | None = None) -> Reply:
        """A puzzle position with its buttons: the pieces that can move, a hint and (for one
        user's board) giving up; a board for one user carries the private-chat link signed for
        them.  ``drawn``: the moves just played (earlier paths, last path, captured squares);
        ``picture``: the position already drawn (see _picture)."""
        image, board_text = picture or self._picture(pos, drawn)
        starts = sorted({m.start for m in pos.legal_moves()})
        buttons = _rows([Button(str(sq), action(ButtonKind.PUZZLE_SELECT, post.id, step, sq)) for sq in starts],
                        reserve=1)
        extra = [Button(t(lang, "button.hint"), action(ButtonKind.PUZZLE_HINT, post.id, step),
                        f"/hint #{post.id}", style="back")]
        if step > 0 or user_id is not None:
            extra.append(Button(t(lang, "button.give_up"), action(ButtonKind.PUZZLE_GIVE_UP, post.id),
                                "/puzzle giveup", style="stop"))
        buttons.append(extra)
        return Reply(text, image=image, board_text=board_text, buttons=buttons, post_id=post.id,
                     replaces_board=replaces, private=private,
                     start_payload=self._start_payload(post, user_id) if user_id is not None else None)

    # -- who may answer a post -------------------------------------------------------------------------

    def _start_payload(self, post: PuzzlePostRecord, user_id: str) -> str:
        """The ``/start`` payload that opens a post in a private chat for this user alone (read back
        by open_puzzle)."""
        return f"p{post.id}_{self._signature(post, user_id)}"

    def _signature(self, post: PuzzlePostRecord, user_id: str) -> str:
        key = self._link_key
        if key is None:
            key = self._link_key = self.storage.link_secret()
        digest = hmac.new(key, f"{post.platform}\n{post.id}\n{user_id}".encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest[:_SIGNATURE_BYTES]).decode("ascii")

    def _member_key(self, post: PuzzlePostRecord, user_id: str) -> str:
        return f"puzzle_member:{post.id}:{user_id}"

    def _note_member(self, ctx: Ctx, post: PuzzlePostRecord) -> None:
        """A user acting on a daily post in its own chat is a member there: remembered with the name
        that chat's platform showed, for their answers from a private chat (written only when new)."""
        if post.kind != "daily" or ctx.key != (post.platform, post.chat_id):
            return
        key = self._member_key(post, ctx.event.user_id)
        if self.storage.pending(key) != _name(ctx.event):
            self.storage.set_pending(key, _name(ctx.event))

    def _member_name(self, ctx: Ctx, post: PuzzlePostRecord) -> str | None:
        """The name a daily post's chat knows this user by, or None if they may not answer it from
        here: only in that chat, or in their private chat after acting on it in that chat.  (Any
        other post: the user's own name here.)"""
        if post.kind != "daily" or ctx.key == (post.platform, post.chat_id):
            return _name(ctx.event)
        if ctx.event.platform != post.platform or ctx.event.chat_kind != "private":
            return None
        name = self.storage.pending(self._member_key(post, ctx.event.user_id))
        return name if isinstance(name, str) else None

    # -- /puzzle ---------------------------------------------------------------------------------------

    def cmd_puzzle(self, ctx: Ctx, args: list[str]) -> list[Reply]:
        """A puzzle for you alone: /puzzle [variant] (one you have not been given before)."""
        variant = self.games.default_variant(ctx)
        word = args[0].lower() if args else ""
        if word in HISTORY_WORDS:
            return self.puzzle_history(ctx)
        if word in GIVE_UP_WORDS:
            ref = int(args[1].lstrip("#")) if len(args) > 1 and re.fullmatch(r"#?\d{1,9}", args[1]) else None
            post = self.puzzle_for(ctx, ref, giving_up=True)
            if post is None:
                return [Reply(t(ctx.lang, "puzzle.none"))]
            return self.give_up(ctx, post)
        if args:
            variant = parse_variant(args)
            if variant is None:
                return [Reply(t(ctx.lang, "rules.unknown", word=" ".join(args)[:30]))]
        puzzles = bank.load(variant)
        if not puzzles:
            return [Reply(t(ctx.lang, "puzzle.none_left"))]
        seen = {p.puzzle_id for p in self.storage.personal_posts(ctx.event.platform, ctx.event.user_id, 10_000)}
        fresh = [p for p in puzzles if p["id"] not in seen] or puzzles
        puzzle = self.rng.choice(fresh)
        post_id = self.storage.create_personal_post(ctx.event.platform, ctx.event.chat_id, ctx.event.user_id,
                                                    variant, puzzle["id"], ctx.now)
        post = self.storage.puzzle_post(post_id)
        pos = Position.from_fen(variant, puzzle["fen"])
        text = t(ctx.lang, "puzzle.personal", variant=variant_name(ctx.lang, variant), rating=puzzle["rating"],
                 side=t(ctx.lang, f"puzzle.to_win.{pos.turn}"), id=post_id)
        if not ctx.event.can_whisper and ctx.event.private_link:
            # A group where nothing can be shown to one member: the puzzle waits in a private chat.
            link = ctx.event.private_link.format(payload=self._start_payload(post, ctx.event.user_id))
            return [Reply(t(ctx.lang, "puzzle.in_private", name=_name(ctx.event), link=link))]
        return [self._puzzle_board(ctx.lang, post, pos, 0, text, private=self._whisper(ctx), user_id=ctx.event.user_id)]

    def _whisper(self, ctx: Ctx) -> bool:
        """Answers about one user's puzzle go to them alone (a private chat is private already)."""
        return ctx.event.chat_kind != "private"

    def open_puzzle(self, ctx: Ctx, payload: str) -> list[Reply] | None:
        """``/start p<post>`` (a link from a group): the user's own way through that post, here."""
        match = _START_PAYLOAD.fullmatch(payload)
        if not match:
            return None
        post = self.storage.puzzle_post(int(match.group(1)))
        if post is None or post.platform != ctx.event.platform:
            return [Reply(t(ctx.lang, "puzzle.unknown"))]
        # A link proves something only for the user it was signed for (an old unsigned one, a
        # number typed by hand or a link passed on proves nothing).
        signature = match.group(2) or ""
        if not hmac.compare_digest(signature, self._signature(post, ctx.event.user_id)):
            return [Reply(t(ctx.lang, "puzzle.link_invalid"))]
        found = self._attempt_at(ctx, post, private=False)
        if isinstance(found, list):
            return found
        puzzle, attempt = found
        progress = list(attempt.progress)
        pos = position_after(puzzle, progress)
        self._note_opened(ctx, post)
        text = t(ctx.lang, "puzzle.resume", variant=variant_name(ctx.lang, post.variant),
                 side=t(ctx.lang, f"puzzle.to_win.{pos.turn}"), id=post.id)
        return [self._puzzle_board(ctx.lang, post, pos, len(progress), text, user_id=ctx.event.user_id)]

    # -- answering -----------------------------------------------------------------------------------

    def _opened_key(self, ctx: Ctx) -> str:
        return f"opened:{ctx.event.platform}:{ctx.event.chat_id}:{ctx.event.user_id}"

    def _note_opened(self, ctx: Ctx, post: PuzzlePostRecord) -> None:
        """In a private chat, the puzzle the user works on there (opened from a group's link, say)
        is the one a typed answer there is for."""
        if ctx.event.chat_kind == "private" and post.chat_id != ctx.event.chat_id:
            self.storage.set_pending(self._opened_key(ctx), post.id)

    def puzzle_for(self, ctx: Ctx, ref: int | None = None, text: str | None = None,
                    giving_up: bool = False) -> PuzzlePostRecord | None:
        """The post a user's answer (``text``) is for: #id or the message replied to; else the
        first of the puzzle opened here (a private chat), the chat's daily, the user's open
        personal puzzle here where the answer's first move is legal in the user's position (an
        old puzzle must not capture answers meant for today's); if it fits none, the daily (its
        rules explain why), else the first of them."""
        if ref is None and ctx.event.reply_to:
            ref = self.storage.post_of_message(ctx.event.platform, ctx.event.chat_id, str(ctx.event.reply_to))
        if ref is not None:
            post = self.storage.puzzle_post(ref)
            return post if post is not None and post.platform == ctx.event.platform else None
        user = ctx.event.user_id
        candidates: list[PuzzlePostRecord] = []
        if ctx.event.chat_kind == "private":
            opened = self.storage.pending(self._opened_key(ctx))
            if isinstance(opened, int):
                post = self.storage.puzzle_post(opened)
                if post is not None and post.platform == ctx.event.platform and self._is_open(post, user):
                    candidates.append(post)
            # The daily a member is working on in a group, whose steps came to this private chat.
            working = self._daily_in_progress(ctx)
            if working is not None and working not in candidates:
                candidates.append(working)
        daily = self.storage.daily_posts(*ctx.key, 1)
        daily_post = daily[0] if daily else None
        if daily_post is not None and self._is_open(daily_post, user):
            candidates.append(daily_post)
        mine = self.storage.personal_posts(ctx.event.platform, user, 1)
        if mine and mine[0].chat_id == ctx.event.chat_id and self._is_open(mine[0], user):
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

    def _daily_in_progress(self, ctx: Ctx) -> PuzzlePostRecord | None:
        """The latest daily post the user has begun (and not finished) that is still its chat's
        current one and that they may answer from here."""
        for post, attempt in reversed(self.storage.user_attempts(ctx.event.platform, ctx.event.user_id)):
            if attempt.solved_at is not None or not attempt.progress:
                continue
            latest = self.storage.daily_posts(post.platform, post.chat_id, 1)
            if (latest and latest[0].id == post.id and self._is_open(post, ctx.event.user_id)
                    and self._member_name(ctx, post) is not None):
                return post
        return None

    def _several_open(self, ctx: Ctx, post: PuzzlePostRecord) -> bool:
        """Whether the user has another open puzzle here besides ``post`` (their daily and their
        personal one, say)."""
        user = ctx.event.user_id
        others = [p for p in (*self.storage.daily_posts(*ctx.key, 1),
                              *self.storage.personal_posts(ctx.event.platform, user, 1))
                  if p.id != post.id and p.chat_id == ctx.event.chat_id and self._is_open(p, user)]
        return bool(others)

    def _fits(self, post: PuzzlePostRecord, user_id: str, text: str) -> bool:
        """Whether an answer's first move is legal in the user's position of a post."""
        puzzle = puzzle_by_id(post.variant, post.puzzle_id)
        words = text.replace(",", " ").split()
        if puzzle is None or not words:
            return False
        attempt = self.storage.attempt(post.id, user_id)
        try:
            position_after(puzzle, list(attempt.progress) if attempt else []).parse_move(words[0])
        except IllegalMove:
            return False
        return True

    def puzzle_reply_target(self, ctx: Ctx) -> PuzzlePostRecord | None:
        """The post a message replies to, if it replies to a puzzle."""
        if not ctx.event.reply_to:
            return None
        post_id = self.storage.post_of_message(ctx.event.platform, ctx.event.chat_id, str(ctx.event.reply_to))
        return self.storage.puzzle_post(post_id) if post_id is not None else None

    def _attempt_at(self, ctx: Ctx, post: PuzzlePostRecord,
                    private: bool) -> tuple[dict[str, Any], AttemptRecord] | list[Reply]:
        """The puzzle and this user's attempt at a post (a fresh one if none yet), or the answer
        that refuses it: someone else's puzzle, one no longer in the bank, a daily post that the
        next day's (with its solution) replaced, or one already solved."""
        ev = ctx.event
        if post.kind == "personal" and post.user_id != ev.user_id:
            return [Reply(t(ctx.lang, "puzzle.not_yours"), private=private)]
        name = self._member_name(ctx, post)
        if name is None:
            return [Reply(t(ctx.lang, "puzzle.not_member"), private=private)]
        puzzle = puzzle_by_id(post.variant, post.puzzle_id)
        if puzzle is None:
            return [Reply(t(ctx.lang, "puzzle.unknown"), private=private)]
        if post.kind == "daily":
            latest = self.storage.daily_posts(post.platform, post.chat_id, 1)
            if latest and latest[0].id != post.id:
                return [Reply(t(ctx.lang, "puzzle.over", day=day_words(ctx.lang, post.day)), private=private)]
        attempt = self.storage.attempt(post.id, ev.user_id)
        attempt = (_replace(attempt, user_name=name) if attempt is not None
                   else AttemptRecord(post.id, ev.user_id, name, (), 0, 0, ctx.now, None, None, None, version=0))
        if attempt.solved_at is not None:
            return [Reply(t(ctx.lang, "puzzle.already"), private=private)]
        if self.storage.pending(self._gave_up_key(post, ev.user_id)):
            return [Reply(t(ctx.lang, "puzzle.gave_up_already", line=" ".join(puzzle["solution"])), private=private)]
        return puzzle, attempt

    def _gave_up_key(self, post: PuzzlePostRecord, user_id: str) -> str:
        return f"puzzle_gave_up:{post.id}:{user_id}"

    def _is_open(self, post: PuzzlePostRecord, user_id: str) -> bool:
        """Whether a user may still answer a post: not solved, not given up."""
        attempt = self.storage.attempt(post.id, user_id)
        return ((attempt is None or attempt.solved_at is None)
                and not self.storage.pending(self._gave_up_key(post, user_id)))

    def give_up(self, ctx: Ctx, post: PuzzlePostRecord) -> list[Reply]:
        """Show a user the solution of a post and close their attempt (a failure, if it was not
        rated yet)."""
        whisper = self._whisper(ctx)
        with self.storage.transaction():
            found = self._attempt_at(ctx, post, whisper)
            if isinstance(found, list):
                return self._privately(ctx, post, found, OTHER_REACTION)
            puzzle, attempt = found
            if attempt.rated_score is None:
                attempt = _replace(attempt, rated_score=0.0, rated_at=ctx.now)
                self._score(post, attempt)
            self.storage.save_attempt(attempt)
            self.storage.set_pending(self._gave_up_key(post, ctx.event.user_id), 1)
        line = " ".join(puzzle["solution"])
        # The solution is for the one who gave up: in a group it goes to them alone.
        reply = Reply(self._puzzle_label(ctx.lang, post) + t(ctx.lang, "puzzle.gave_up", line=line),
                      private=whisper, buttons=[[Button(t(ctx.lang, "button.next_puzzle"),
                                                        action(ButtonKind.PUZZLE_NEXT, post.id), "/puzzle")]])
        return self._privately(ctx, post, [reply], OTHER_REACTION)

    def press_puzzle_more(self, ctx: Ctx, kind: ButtonKind, ids: list[int]) -> list[Reply]:
        """Give up (zg:<post>) or the next puzzle (zn:<post>, a personal one of that variant)."""
        post = self.storage.puzzle_post(ids[0])
        if post is None or post.platform != ctx.event.platform:
            return [Reply(t(ctx.lang, "puzzle.unknown"), private=True)]
        if self._member_name(ctx, post) is None:
            return [Reply(t(ctx.lang, "puzzle.not_member"), private=True)]
        if kind is ButtonKind.PUZZLE_GIVE_UP:
            return self.give_up(ctx, post)
        return self.cmd_puzzle(ctx, [post.variant])

    def puzzle_history(self, ctx: Ctx) -> list[Reply]:
        """/puzzle history: the user's last puzzles (personal and daily) and how each went."""
        ev = ctx.event
        items: list[tuple[float, PuzzlePostRecord, AttemptRecord | None]] = []
        for post in self.storage.personal_posts(ev.platform, ev.user_id, HISTORY_SIZE):
            items.append((post.posted_at, post, self.storage.attempt(post.id, ev.user_id)))
        for post, attempt in self.storage.user_attempts(ev.platform, ev.user_id)[-HISTORY_SIZE:]:
            items.append((post.posted_at, post, attempt))
        items.sort(key=lambda item: (item[0], item[1].id), reverse=True)
        if not items:
            return [Reply(t(ctx.lang, "puzzle.history_empty"), private=self._whisper(ctx))]
        lines = [t(ctx.lang, "puzzle.history_title")]
        for _at, post, attempt in items[:HISTORY_SIZE]:
            variant = variant_name(ctx.lang, post.variant)
            if post.kind == "daily":
                what = t(ctx.lang, "puzzle.history_daily", day=day_words(ctx.lang, post.day), variant=variant)
            else:
                puzzle = puzzle_by_id(post.variant, post.puzzle_id)
                what = t(ctx.lang, "puzzle.history_personal", id=post.id, variant=variant,
                         rating=puzzle["rating"] if puzzle else "?")
            if attempt is not None and attempt.solved_at is not None:
                result = (tn(ctx.lang, "puzzle.result.solved_misses", attempt.misses) if attempt.misses
                          else t(ctx.lang, "puzzle.result.solved"))
            elif self.storage.pending(self._gave_up_key(post, ev.user_id)):
                result = t(ctx.lang, "puzzle.result.gave_up")
            elif attempt is not None and attempt.misses:
                result = t(ctx.lang, "puzzle.result.failed")
            else:
                result = t(ctx.lang, "puzzle.result.open")
            when = day_words(ctx.lang, dt.datetime.fromtimestamp(post.posted_at, dt.UTC).date())
            lines.append(t(ctx.lang, "puzzle.history_line", when=when, what=what, result=result))
        return [Reply("\n".join(lines), private=self._whisper(ctx) and ctx.event.can_whisper)]

    def answer_puzzle(self, ctx: Ctx, post: PuzzlePostRecord, text: str, via_button: bool = False) -> list[Reply]:
        """Judge an answer (one move or a whole line) to a post for this user."""
        # Acting on a post in its chat makes the user a member there: the private chat their
        # steps go to may then answer it too.
        self._note_member(ctx, post)
        replies, reaction = self._answer_puzzle(ctx, post, text, via_button)
        if not via_button and replies and self._several_open(ctx, post):
            # A typed answer says which puzzle it went to when the user has several open here.
            replies[0] = replace(replies[0], text=self._puzzle_label(ctx.lang, post) + replies[0].text)
        return self._privately(ctx, post, replies, reaction)

    def _puzzle_label(self, lang: str, post: PuzzlePostRecord) -> str:
        if post.kind == "daily":
            return t(lang, "puzzle.for_daily", day=day_words(lang, post.day))
        return t(lang, "puzzle.for_personal", variant=variant_name(lang, post.variant), id=post.id)

    def _privately(self, ctx: Ctx, post: PuzzlePostRecord, replies: list[Reply], reaction: str) -> list[Reply]:
        """In a group where nothing can be shown to one member (Telegram), a member's steps,
        hints and misses are never posted for everyone: the first reply meant for them alone gets
        a reaction that stands in for it in the group, and each carries the private-chat link
        (signed for them) of where the adapter shows it instead (see Reply.start_payload)."""
        ev = ctx.event
        if ev.chat_kind == "private" or ev.can_whisper:
            return replies
        out = []
        reacted = False
        for reply in replies:
            if reply.private:
                reply = replace(reply, reaction=None if reacted else (reply.reaction or reaction), post_id=post.id,
                                start_payload=reply.start_payload or self._start_payload(post, ev.user_id))
                reacted = True
            out.append(reply)
        return out

    def _answer_puzzle(self, ctx: Ctx, post: PuzzlePostRecord, text: str,
                       via_button: bool) -> tuple[list[Reply], str]:
        """The replies to an answer, and the reaction that says how it went where they cannot be
        shown to the user alone."""
        ev = ctx.event
        whisper = self._whisper(ctx)
        # The attempt is read and written in one transaction: two answers of one user at once (in
        # the group and in a private chat, or in two processes) are judged one after the other.
        first = False
        delta: float | None = None
        with self.storage.transaction():
            found = self._attempt_at(ctx, post, whisper)
            if isinstance(found, list):
                return found, OTHER_REACTION
            puzzle, attempt = found
            progress = list(attempt.progress)
            answer = judge(puzzle, progress, text)
            accepted = [*progress, *answer.played]
            if answer.verdict is Verdict.WRONG:
                attempt = _replace(attempt, progress=tuple(accepted), misses=attempt.misses + 1)
                if attempt.rated_score is None:
                    attempt = _replace(attempt, rated_score=0.0, rated_at=ctx.now)
                    delta = self._score(post, attempt)
                self.storage.save_attempt(attempt)
            elif answer.verdict is Verdict.RIGHT:
                self.storage.save_attempt(_replace(attempt, progress=tuple(accepted)))
            elif answer.verdict is Verdict.SOLVED:
                first, delta = self._record_solve(ctx, post, attempt, accepted)
            name = attempt.user_name
        pos = answer.position or position_after(puzzle, progress)
        replaces = via_button and ev.chat_kind == "private"
        if answer.verdict is Verdict.ILLEGAL:
            if answer.error is None:
                return [Reply(t(ctx.lang, "move.usage"), private=whisper)], OTHER_REACTION
            # In a puzzle the rule is named, never the moves it allows (they may be the answer).
            return ([Reply(illegal_rule_text(ctx.lang, answer.error, pos, typed=text[:40]), private=whisper)],
                    OTHER_REACTION)
        if answer.verdict is Verdict.WRONG:
            lines = []
            if answer.played:
                lines.append(t(ctx.lang, "puzzle.right_so_far", moves=" ".join(answer.played)))
            wrong = answer.wrong or text.split()[0]
            try:
                wrong_move = str(pos.parse_move(wrong))
            except IllegalMove:
                wrong_move = wrong
            line = refutation(puzzle, accepted, wrong_move)[:3]
            if line:
                lines.append(t(ctx.lang, "puzzle.refuted", move=wrong[:40], line=" ".join(line)))
            else:
                lines.append(t(ctx.lang, "puzzle.wrong", move=wrong[:40]))
            if delta is not None:
                lines.append(self._rating_change_text(ctx, delta))
            if not via_button:
                return [Reply("\n".join(lines), private=whisper)], WRONG_REACTION
            return [self._puzzle_board(ctx.lang, post, pos, len(accepted), "\n".join(lines), replaces=replaces,
                                       private=whisper, user_id=ev.user_id)], WRONG_REACTION
        if answer.verdict is Verdict.RIGHT:
            # "Forced" only when the defender had no other move; else which side answered (the one
            # not to move now).
            replier = "B" if pos.turn == "W" else "W"
            if reply_is_forced(puzzle, accepted[:-1]):
                text_out = t(ctx.lang, "puzzle.right_forced", reply=answer.played[-1])
            else:
                text_out = t(ctx.lang, "puzzle.right", reply=answer.played[-1],
                             side=t(ctx.lang, f"puzzle.replier.{replier}"))
            return [self._puzzle_board(ctx.lang, post, pos, len(accepted), text_out, replaces=replaces,
                                       private=whisper, user_id=ev.user_id,
                                       drawn=_drawn(puzzle, accepted, 2))], RIGHT_REACTION
        replies = self._solved(ctx, post, accepted, first, whisper, name)
        extra = [t(ctx.lang, "puzzle.themes", themes=", ".join(words))
                 for words in [theme_words(ctx.lang, puzzle)] if words]
        if delta is not None:
            extra.append(self._rating_change_text(ctx, delta))
        if extra:
            # After a solve, what lichess shows: the themes and the rating change, to the solver
            # (with the answer meant for them alone, where there is one).
            next_button = [[Button(t(ctx.lang, "button.next_puzzle"), action(ButtonKind.PUZZLE_NEXT, post.id),
                                   "/puzzle")]]
            own = next((i for i, r in enumerate(replies) if r.private or not whisper), None)
            if own is not None and post.kind == "personal" or own is not None and replies[own].private:
                replies[own] = replace(replies[own], text=replies[own].text + "\n" + "\n".join(extra),
                                       buttons=replies[own].buttons + next_button)
            else:
                replies.append(Reply("\n".join(extra), private=True, buttons=next_button))
        return replies, SOLVED_REACTION

    def _rating_change_text(self, ctx: Ctx, delta: float) -> str:
        rating = self.ratings.puzzle_rating_now(ctx.event.platform, ctx.event.user_id)
        return t(ctx.lang, "puzzle.rating_change", rating=rating, delta=f"{round(delta):+d}")

    def _record_solve(self, ctx: Ctx, post: PuzzlePostRecord, attempt: AttemptRecord,
                      accepted: list[str]) -> tuple[bool, float | None]:
        """Store a solve (inside the caller's transaction) and rate it: whether it was the post's
        first, and the solver's rating change (None when this attempt was rated before)."""
        ev = ctx.event
        attempt = _replace(attempt, progress=tuple(accepted), solved_at=ctx.now)
        delta = None
        if attempt.rated_score is None:
            attempt = _replace(attempt, rated_score=0.5 if attempt.hints else 1.0, rated_at=ctx.now)
            delta = self._score(post, attempt)
        self.storage.save_attempt(attempt)
        # The name announced is the one the post's chat knows the user by (see _member_name).
        first = post.kind == "daily" and self.storage.claim_first_solver(post.id, ev.user_id, attempt.user_name)
        return first, delta

    def _solved(self, ctx: Ctx, post: PuzzlePostRecord, accepted: list[str], first: bool,
                whisper: bool, name: str) -> list[Reply]:
        ev = ctx.event
        if post.kind == "personal":
            return [Reply(t(ctx.lang, "puzzle.solved_personal", line=" ".join(accepted)), private=whisper)]
        current, _best = self.records.puzzle_streaks(ev.platform, ev.user_id)
        if first:
            # The one message every solve of the day puts in the chat.
            if (post.platform, post.chat_id) != ctx.key:
                # Solved elsewhere (a private chat the group's buttons led to): the group hears of it.
                lang = self.games.chat_lang(post.platform, post.chat_id, ctx.lang)
                first_text = t(lang, "puzzle.first", name=name, day=day_words(lang, post.day),
                               streak=streak_text(lang, current))
                self.say(post.platform, post.chat_id, Reply(first_text))
                self._notify(post.platform)
                return [Reply(t(ctx.lang, "puzzle.solved_line", line=" ".join(accepted))),
                        Reply(t(ctx.lang, "puzzle.first_elsewhere"))]
            announcement = t(ctx.lang, "puzzle.first", name=name, day=day_words(ctx.lang, post.day),
                             streak=streak_text(ctx.lang, current))
            out = [Reply(announcement)]
            if whisper and ev.can_whisper:
                out.insert(0, Reply(t(ctx.lang, "puzzle.solved_line", line=" ".join(accepted)), private=True))
            return out
        number = sum(1 for a in self.storage.attempts(post.id) if a.solved_at is not None)
        text = t(ctx.lang, "puzzle.solved", number=number, ordinal=ordinal(ctx.lang, number),
                 streak=streak_text(ctx.lang, current))
        return [Reply(text, private=whisper, reaction=SOLVED_REACTION)]

    def cmd_hint(self, ctx: Ctx, args: list[str]) -> list[Reply]:
        """/hint [#id]: which piece moves next in your puzzle (a hinted solve counts half)."""
        ref = None
        if args and re.fullmatch(r"#?\d{1,9}", args[0]):
            ref = int(args[0].lstrip("#"))
        post = self.puzzle_for(ctx, ref)
        if post is None:
            return [Reply(t(ctx.lang, "puzzle.none"))]
        return self._hint(ctx, post)

    def _hint(self, ctx: Ctx, post: PuzzlePostRecord) -> list[Reply]:
        whisper = self._whisper(ctx)
        with self.storage.transaction():
            found = self._attempt_at(ctx, post, whisper)
            if isinstance(found, list):
                return self._privately(ctx, post, found, OTHER_REACTION)
            puzzle, attempt = found
            square = hint(puzzle, list(attempt.progress))
            self.storage.save_attempt(_replace(attempt, hints=attempt.hints + 1))
        return self._privately(ctx, post, [Reply(t(ctx.lang, "puzzle.hint", square=square), private=whisper)],
                               OTHER_REACTION)

    def press_puzzle(self, ctx: Ctx, kind: ButtonKind, ids: list[int]) -> list[Reply]:
        """A button of a puzzle board: numbers start with the post and the step it was drawn at."""
        post = self.storage.puzzle_post(ids[0])
        whisper = self._whisper(ctx)
        if post is None or post.platform != ctx.event.platform:
            return [Reply(t(ctx.lang, "puzzle.unknown"), private=True)]
        # A button pressed in one chat acts on a post of another only in the presser's private
        # chat, after they acted on it in its own chat (a hand-made callback from elsewhere: no).
        if self._member_name(ctx, post) is None:
            return [Reply(t(ctx.lang, "puzzle.not_member"), private=True)]
        self._note_member(ctx, post)
        self._note_opened(ctx, post)
        if kind is ButtonKind.PUZZLE_HINT:
            return self._hint(ctx, post)
        found = self._attempt_at(ctx, post, private=True)
        if isinstance(found, list):
            # One refusal names the solution (given up already): it stays with the presser.
            return self._privately(ctx, post, found, OTHER_REACTION)
        puzzle, attempt = found
        progress = list(attempt.progress)
        pos = position_after(puzzle, progress)
        step = len(progress)
        replaces = ctx.event.chat_kind == "private"
        if ids[1] != step:
            # A board from another step (the shared post, or an older board): this user's own position.
            text = t(ctx.lang, "puzzle.your_position", side=t(ctx.lang, f"puzzle.to_win.{pos.turn}"))
            return [self._puzzle_board(ctx.lang, post, pos, step, text, replaces=replaces, private=whisper,
                                       user_id=ctx.event.user_id)]
        legal = pos.legal_moves()
        if kind is ButtonKind.PUZZLE_BACK:
            text = t(ctx.lang, "puzzle.your_position", side=t(ctx.lang, f"puzzle.to_win.{pos.turn}"))
            return [self._puzzle_board(ctx.lang, post, pos, step, text, replaces=replaces, private=whisper,
                                       user_id=ctx.event.user_id)]
        if kind is ButtonKind.PUZZLE_SELECT:
            square = ids[2]
            moves = [m for m in legal if m.start == square]
            if not moves:
                return [Reply(t(ctx.lang, "button.stale"), private=True)]
            ends = sorted({m.end for m in moves})
            view = boards.board_view(pos, dots=ends, selected=square, flipped=not pos.white)
            buttons = [Button(f"{square}→{end}", action(ButtonKind.PUZZLE_DEST, post.id, step, square, end))
                       for end in ends]
            rows = _rows(buttons, reserve=1)
            rows.append([Button(t(ctx.lang, "button.back"), action(ButtonKind.PUZZLE_BACK, post.id, step),
                                style="back")])
            return [Reply(t(ctx.lang, "select.piece", square=square), image=boards.png(view),
                          board_text=boards.text(view), buttons=rows, post_id=post.id,
                          start_payload=self._start_payload(post, ctx.event.user_id), replaces_board=replaces,
                          private=whisper)]
        if kind is ButtonKind.PUZZLE_DEST:
            matching = [m for m in legal if (m.start, m.end) == (ids[2], ids[3])]
            if not matching:
                return [Reply(t(ctx.lang, "button.stale"), private=True)]
            if len(matching) > 1:
                buttons = [Button(f"{n}: {m}", action(ButtonKind.PUZZLE_PATH, post.id, step, legal.index(m)))
                           for n, m in enumerate(matching, 1)]
                rows = _rows(buttons, reserve=1)
                shown = matching[:sum(len(r) for r in rows)]
                rows.append([Button(t(ctx.lang, "button.back"), action(ButtonKind.PUZZLE_BACK, post.id, step),
                                    style="back")])
                view = boards.board_view(pos, dots=[matching[0].end], selected=matching[0].start,
                                         flipped=not pos.white, routes=[m.path for m in shown])
                return [Reply(t(ctx.lang, "select.path"), image=boards.png(view), board_text=boards.text(view),
                              buttons=rows, post_id=post.id, start_payload=self._start_payload(post, ctx.event.user_id),
                              replaces_board=replaces, private=whisper)]
            return self.answer_puzzle(ctx, post, str(matching[0]), via_button=True)
        index = ids[2]
        if index >= len(legal):
            return [Reply(t(ctx.lang, "button.stale"), private=True)]
        return self.answer_puzzle(ctx, post, str(legal[index]), via_button=True)

    # -- /top puzzles --------------------------------------------------------------------------------

    # -- hooks -----------------------------------------------------------------------------------------


def _drawn(puzzle: dict[str, Any], moves: list[str], count: int) -> tuple[list[list[int]], list[int], list[int]]:
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
    from dataclasses import replace

    return replace(attempt, **changes)
