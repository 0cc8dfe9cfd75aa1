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
from functools import cache
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from bot.i18n import t
from bot.puzzles import bank
from bot.puzzles.solve import Verdict, hint, judge, position_after, puzzle_of_day
from bot.rules import Position
from bot.service import boards
from bot.service.commands import parse_variant
from bot.service.events import Button, Reply
from bot.service.features.common import Ctx, _name, _rows
from bot.service.features.games import GamesCore
from bot.service.registry import DAILY_OFF_WORDS, DAILY_ON_WORDS, ButtonKind, action
from bot.service.wording import illegal_move_text, variant_name
from bot.storage import StorageBusy, StorageFull, StorageGone
from bot.storage.records import AttemptRecord, PuzzlePostRecord, SubscriptionRecord

log = logging.getLogger("bot.service")

DEFAULT_TIME = "09:00"
DEFAULT_TIMEZONE = "Europe/Madrid"
SOLVED_REACTION = "🎉"
LEADERBOARD_SIZE = 10
# How long the time of the next daily post is trusted before the subscriptions are read again.
DAILY_RECHECK_SECONDS = 60.0
_TIME = re.compile(r"([01]?\d|2[0-3])[:.h]([0-5]\d)")


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


def streak_text(lang: str, days: int) -> str:
    return t(lang, "streak.one") if days == 1 else t(lang, "streak.many", n=days)


class PuzzlesFeature(GamesCore):
    """Daily puzzles and personal ones."""

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
            self._daily_changed()
            return [Reply(t(ctx.lang, "daily.off"))]
        if word not in DAILY_ON_WORDS:
            return [Reply(t(ctx.lang, "daily.usage"))]
        time_text, zone, variant_words = DEFAULT_TIME, None, []
        for arg in args[1:]:
            match = _TIME.fullmatch(arg)
            if match:
                time_text = f"{int(match.group(1)):02d}:{match.group(2)}"
            elif "/" in arg or arg.upper() == "UTC":
                zone = find_timezone(arg)
                if zone is None:
                    return [Reply(t(ctx.lang, "daily.bad_zone", zone=arg[:40]))]
            else:
                variant_words.append(arg)
        variant = self._default_variant(ctx)
        if variant_words:
            variant = parse_variant(variant_words)
            if variant is None:
                return [Reply(t(ctx.lang, "daily.bad_word", word=" ".join(variant_words)[:30]) + " "
                              + t(ctx.lang, "daily.usage"))]
        old = self.storage.subscription(*ctx.key)
        zone = zone or (old.timezone if old else DEFAULT_TIMEZONE)
        self.storage.subscribe(*ctx.key, time_text, zone, variant, ctx.now, language=ctx.lang)
        self._daily_changed()
        return [Reply(t(ctx.lang, "daily.on", time=time_text, zone=zone, variant=variant_name(ctx.lang, variant)))]

    def _daily_setting_text(self, ctx: Ctx) -> str:
        sub = self.storage.subscription(*ctx.key)
        if sub is None or not sub.active:
            return t(ctx.lang, "daily.none")
        return t(ctx.lang, "daily.show", time=sub.time, zone=sub.timezone,
                 variant=variant_name(ctx.lang, sub.variant))

    def _daily_changed(self) -> None:
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
        cache_ = getattr(self, "_daily_wakeup_cache", None)
        if cache_ is None:
            cache_ = self._daily_wakeup_cache = {}
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

    def _post_dailies(self, platform: str | None, now: float) -> int:
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
        with self.storage.transaction():
            post_id = self.storage.claim_daily_post(sub.platform, sub.chat_id, day.isoformat(), sub.variant,
                                                    puzzle["id"], now)
            if post_id is None:
                return 0                # another process posted it a moment ago
            lang = self._chat_lang(sub.platform, sub.chat_id, sub.language)
            if latest:
                self.say(sub.platform, sub.chat_id, self._yesterday_reply(lang, latest[0]))
            self.say(sub.platform, sub.chat_id, self._post_reply(lang, self.storage.puzzle_post(post_id), puzzle))
        self._daily_changed()
        self._notify(sub.platform)
        return 1

    def _yesterday_reply(self, lang: str, post: PuzzlePostRecord) -> Reply:
        puzzle = puzzle_by_id(post.variant, post.puzzle_id)
        solvers = [a.user_name for a in self.storage.attempts(post.id) if a.solved_at is not None]
        solvers_text = (t(lang, "daily.solved_by", names=", ".join(solvers[:20]), count=len(solvers))
                        if solvers else t(lang, "daily.nobody"))
        line = " ".join(puzzle["solution"]) if puzzle else "?"
        return Reply(t(lang, "daily.yesterday", day=post.day) + "\n" + solvers_text, spoiler=line)

    def _post_reply(self, lang: str, post: PuzzlePostRecord, puzzle: dict[str, Any]) -> Reply:
        pos = Position.from_fen(post.variant, puzzle["fen"])
        text = t(lang, "daily.post", day=post.day, variant=variant_name(lang, post.variant),
                 side=t(lang, f"puzzle.to_win.{pos.turn}"))
        return self._puzzle_board(lang, post, pos, 0, text)

    def _puzzle_board(self, lang: str, post: PuzzlePostRecord, pos: Position, step: int, text: str,
                      replaces: bool = False, private: bool = False, user_id: str | None = None) -> Reply:
        """A puzzle position with its buttons: the pieces that can move, and a hint; a board for
        one user carries the private-chat link signed for them."""
        view = boards.board_view(pos, flipped=not pos.white)
        starts = sorted({m.start for m in pos.legal_moves()})
        buttons = _rows([Button(str(sq), action(ButtonKind.PUZZLE_SELECT, post.id, step, sq)) for sq in starts],
                        reserve=1)
        buttons.append([Button(t(lang, "button.hint"), action(ButtonKind.PUZZLE_HINT, post.id, step),
                               f"/hint #{post.id}", style="back")])
        return Reply(text, image=boards.png(view), board_text=boards.text(view), buttons=buttons, post_id=post.id,
                     replaces_board=replaces, private=private,
                     start_payload=self._start_payload(post, user_id) if user_id is not None else None)

    # -- who may answer a post -------------------------------------------------------------------------

    def _start_payload(self, post: PuzzlePostRecord, user_id: str) -> str:
        """The ``/start`` payload that opens a post in a private chat for this user alone (read back
        by open_puzzle)."""
        return f"p{post.id}_{self._signature(post, user_id)}"

    def _signature(self, post: PuzzlePostRecord, user_id: str) -> str:
        key = getattr(self, "_link_key", None)
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
        variant = self._default_variant(ctx)
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

    def _puzzle_for(self, ctx: Ctx, ref: int | None = None) -> PuzzlePostRecord | None:
        """The post a user's answer is for: #id or the message replied to, else (in a private chat)
        the puzzle opened there, else their latest open personal puzzle in this chat, else the
        chat's latest daily post."""
        if ref is None and ctx.event.reply_to:
            ref = self.storage.post_of_message(ctx.event.platform, ctx.event.chat_id, str(ctx.event.reply_to))
        if ref is None and ctx.event.chat_kind == "private":
            opened = self.storage.pending(self._opened_key(ctx))
            if isinstance(opened, int):
                attempt = self.storage.attempt(opened, ctx.event.user_id)
                if attempt is None or attempt.solved_at is None:
                    ref = opened
        if ref is not None:
            post = self.storage.puzzle_post(ref)
            return post if post is not None and post.platform == ctx.event.platform else None
        mine = self.storage.personal_posts(ctx.event.platform, ctx.event.user_id, 1)
        if mine and mine[0].chat_id == ctx.event.chat_id:
            attempt = self.storage.attempt(mine[0].id, ctx.event.user_id)
            if attempt is None or attempt.solved_at is None:
                return mine[0]
        daily = self.storage.daily_posts(*ctx.key, 1)
        return daily[0] if daily else None

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
                return [Reply(t(ctx.lang, "puzzle.over", day=post.day), private=private)]
        attempt = self.storage.attempt(post.id, ev.user_id)
        attempt = (_replace(attempt, user_name=name) if attempt is not None
                   else AttemptRecord(post.id, ev.user_id, name, (), 0, 0, ctx.now, None, None, None))
        if attempt.solved_at is not None:
            return [Reply(t(ctx.lang, "puzzle.already"), private=private)]
        return puzzle, attempt

    def answer_puzzle(self, ctx: Ctx, post: PuzzlePostRecord, text: str, via_button: bool = False) -> list[Reply]:
        """Judge an answer (one move or a whole line) to a post for this user."""
        ev = ctx.event
        whisper = self._whisper(ctx)
        # The attempt is read and written in one transaction: two answers of one user at once (in
        # the group and in a private chat, or in two processes) are judged one after the other.
        first = False
        with self.storage.transaction():
            found = self._attempt_at(ctx, post, whisper)
            if isinstance(found, list):
                return found
            puzzle, attempt = found
            progress = list(attempt.progress)
            answer = judge(puzzle, progress, text)
            accepted = [*progress, *answer.played]
            if answer.verdict is Verdict.WRONG:
                attempt = _replace(attempt, progress=tuple(accepted), misses=attempt.misses + 1)
                if attempt.rated_score is None:
                    attempt = _replace(attempt, rated_score=0.0, rated_at=ctx.now)
                    self._rate_puzzle(post, attempt)
                self.storage.save_attempt(attempt)
            elif answer.verdict is Verdict.RIGHT:
                self.storage.save_attempt(_replace(attempt, progress=tuple(accepted)))
            elif answer.verdict is Verdict.SOLVED:
                first = self._record_solve(ctx, post, attempt, accepted)
            name = attempt.user_name
        pos = answer.position or position_after(puzzle, progress)
        replaces = via_button and ev.chat_kind == "private"
        if answer.verdict is Verdict.ILLEGAL:
            if answer.error is None:
                return [Reply(t(ctx.lang, "move.usage"), private=whisper)]
            return [Reply(illegal_move_text(ctx.lang, answer.error, pos, typed=text[:40]), private=whisper)]
        if answer.verdict is Verdict.WRONG:
            lines = []
            if answer.played:
                lines.append(t(ctx.lang, "puzzle.right_so_far", moves=" ".join(answer.played)))
            lines.append(t(ctx.lang, "puzzle.wrong", move=(answer.wrong or text)[:40]))
            if not via_button:
                return [Reply("\n".join(lines), private=whisper)]
            return [self._puzzle_board(ctx.lang, post, pos, len(accepted), "\n".join(lines), replaces=replaces,
                                       private=whisper, user_id=ev.user_id)]
        if answer.verdict is Verdict.RIGHT:
            text_out = t(ctx.lang, "puzzle.right", reply=answer.played[-1])
            return [self._puzzle_board(ctx.lang, post, pos, len(accepted), text_out, replaces=replaces,
                                       private=whisper, user_id=ev.user_id)]
        return self._solved(ctx, post, accepted, first, whisper, name)

    def _record_solve(self, ctx: Ctx, post: PuzzlePostRecord, attempt: AttemptRecord, accepted: list[str]) -> bool:
        """Store a solve (inside the caller's transaction) and rate it; whether it was the post's first."""
        ev = ctx.event
        attempt = _replace(attempt, progress=tuple(accepted), solved_at=ctx.now)
        if attempt.rated_score is None:
            attempt = _replace(attempt, rated_score=0.5 if attempt.hints else 1.0, rated_at=ctx.now)
            self._rate_puzzle(post, attempt)
        self.storage.save_attempt(attempt)
        # The name announced is the one the post's chat knows the user by (see _member_name).
        return post.kind == "daily" and self.storage.claim_first_solver(post.id, ev.user_id, attempt.user_name)

    def _solved(self, ctx: Ctx, post: PuzzlePostRecord, accepted: list[str], first: bool,
                whisper: bool, name: str) -> list[Reply]:
        ev = ctx.event
        if post.kind == "personal":
            return [Reply(t(ctx.lang, "puzzle.solved_personal", line=" ".join(accepted)), private=whisper)]
        current, _best = self.puzzle_streaks(ev.platform, ev.user_id)
        if first:
            # The one message every solve of the day puts in the chat.
            if (post.platform, post.chat_id) != ctx.key:
                # Solved elsewhere (a private chat the group's buttons led to): the group hears of it.
                lang = self._chat_lang(post.platform, post.chat_id, ctx.lang)
                self.say(post.platform, post.chat_id, Reply(t(lang, "puzzle.first", name=name, day=post.day,
                                                              streak=streak_text(lang, current))))
                self._notify(post.platform)
                return [Reply(t(ctx.lang, "puzzle.solved_line", line=" ".join(accepted))),
                        Reply(t(ctx.lang, "puzzle.first_elsewhere"))]
            announcement = t(ctx.lang, "puzzle.first", name=name, day=post.day,
                             streak=streak_text(ctx.lang, current))
            out = [Reply(announcement)]
            if whisper and ev.can_whisper:
                out.insert(0, Reply(t(ctx.lang, "puzzle.solved_line", line=" ".join(accepted)), private=True))
            return out
        number = sum(1 for a in self.storage.attempts(post.id) if a.solved_at is not None)
        text = t(ctx.lang, "puzzle.solved", number=number, streak=streak_text(ctx.lang, current))
        return [Reply(text, private=whisper, reaction=SOLVED_REACTION)]

    def puzzle_streaks(self, platform: str, user_id: str) -> tuple[int, int]:
        """A user's (current, best) streaks of days with a daily puzzle solved; the current one
        counts only if its last day is today's or yesterday's post."""
        solved = [post for post, attempt in self.storage.user_attempts(platform, user_id)
                  if attempt.solved_at is not None and post.day]
        current, best = streaks([post.day for post in solved])
        if solved:
            last = max(solved, key=lambda post: post.day)
            # "Today" where that puzzle was posted: a streak lasts until that chat's day is over.
            sub = self.storage.subscription(last.platform, last.chat_id)
            try:
                zone = ZoneInfo(sub.timezone) if sub else dt.UTC
            except (ZoneInfoNotFoundError, ValueError):
                zone = dt.UTC
            today = dt.datetime.fromtimestamp(self.clock(), zone).date()
            if (today - dt.date.fromisoformat(last.day)).days > 1:
                current = 0
        return current, best

    def cmd_hint(self, ctx: Ctx, args: list[str]) -> list[Reply]:
        """/hint [#id]: which piece moves next in your puzzle (a hinted solve counts half)."""
        ref = None
        if args and re.fullmatch(r"#?\d{1,9}", args[0]):
            ref = int(args[0].lstrip("#"))
        post = self._puzzle_for(ctx, ref)
        if post is None:
            return [Reply(t(ctx.lang, "puzzle.none"))]
        return self._hint(ctx, post)

    def _hint(self, ctx: Ctx, post: PuzzlePostRecord) -> list[Reply]:
        whisper = self._whisper(ctx)
        with self.storage.transaction():
            found = self._attempt_at(ctx, post, whisper)
            if isinstance(found, list):
                return found
            puzzle, attempt = found
            square = hint(puzzle, list(attempt.progress))
            self.storage.save_attempt(_replace(attempt, hints=attempt.hints + 1))
        return [Reply(t(ctx.lang, "puzzle.hint", square=square), private=whisper)]

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
            return found
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

    def puzzle_leaderboard(self, platform: str, chat_id: str) -> list[dict[str, Any]]:
        """The chat's solvers: points (1 a clean solve, 1/2 with a hint), solves, current streak."""
        table: dict[str, dict[str, Any]] = {}
        for _post, attempt in self.storage.chat_attempts(platform, chat_id):
            row = table.setdefault(attempt.user_id, {"user_id": attempt.user_id, "name": attempt.user_name,
                                                     "points": 0.0, "solved": 0})
            row["name"] = attempt.user_name
            if attempt.solved_at is not None:
                row["solved"] += 1
                row["points"] += 0.5 if attempt.hints else 1.0
        rows = sorted((r for r in table.values() if r["solved"]),
                      key=lambda r: (-r["points"], -r["solved"], r["name"].lower()))[:LEADERBOARD_SIZE]
        for row in rows:
            row["streak"] = self.puzzle_streaks(platform, row["user_id"])[0]
        return rows

    # -- hooks -----------------------------------------------------------------------------------------

    def _rate_puzzle(self, post: PuzzlePostRecord, attempt: AttemptRecord) -> None:
        """Called (inside the transaction) with an attempt's first outcome; ratings extend it."""


def _replace(attempt: AttemptRecord, **changes: Any) -> AttemptRecord:
    from dataclasses import replace

    return replace(attempt, **changes)
