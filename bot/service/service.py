"""The game service: the one entry point for every platform.

A platform adapter turns its events into ``ChatEvent``s and sends back the
``Reply``s it gets.  The service reads and writes storage, asks the rules
engine, and renders boards; it knows no platform.
"""

from __future__ import annotations

import json
import logging
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bot.i18n import LANGUAGES, pick_language, t
from bot.rules import (
    VARIANTS,
    Game,
    IllegalMove,
    Move,
    Position,
    Result,
    write_pdn,
)
from bot.rules.notation import looks_like_move
from bot.service import boards
from bot.service.commands import (
    MAX_TEXT,
    BadArgument,
    clean_text,
    game_ref,
    only_ref,
    parse_command,
    parse_new,
    parse_variant,
)
from bot.service.events import Button, ChatEvent, OutboxItem, Outgoing, Reply
from bot.service.wording import duration, explain, reminder, result_text, to_move, variant_name
from bot.storage import StaleGame, Storage, StorageBusy

log = logging.getLogger(__name__)

MAX_OPEN_CHALLENGES = 5
# An open challenge nobody takes lapses after a day, or after its move time when that is longer.
CHALLENGE_LIFETIME = 24 * 3600
# A second /resign within this many seconds confirms the first.
RESIGN_CONFIRM_SECONDS = 60
# Commands whose only argument is an optional #id: anything else typed is a mistake to point out.
REF_ONLY = {"accept", "decline", "cancel", "resign", "draw", "board", "pdn"}
BUTTONS_PER_ROW = 5
# A running process notes it is alive at most this often (from tick); a start-up finding the
# last note older than the threshold treats the gap as downtime and extends the deadlines.
HEARTBEAT_SECONDS = 30.0
DOWNTIME_THRESHOLD = 120.0
MAX_BUTTON_ROWS = 5      # Discord's limit: 5 rows of 5
# Outbox retries: 5 s, 10 s, 20 s ... up to 15 min between tries; dropped after about a day.
OUTBOX_FIRST_RETRY = 5.0
OUTBOX_MAX_RETRY = 900.0
OUTBOX_MAX_ATTEMPTS = 100


@dataclass
class Ctx:
    """What every handler needs about the event being answered."""

    event: ChatEvent
    lang: str
    chat: dict[str, Any]
    now: float

    @property
    def key(self) -> tuple[str, str]:
        return self.event.platform, self.event.chat_id

    @property
    def sent(self) -> float:
        """When the user acted: the platform's send time if it has one (messages queued while
        the bot was down must not lose on time for the bot's downtime), never in the future."""
        sent_at = self.event.sent_at
        return min(sent_at, self.now) if sent_at is not None else self.now


class GameService:
    """Answers chat events with replies; keeps every game in storage."""

    def __init__(self, storage: Storage, clock: Callable[[], float] = time.time,
                 rng: random.Random | None = None) -> None:
        self.storage = storage
        self.clock = clock
        self.rng = rng or random.Random()
        # When this process last wrote its heartbeat, per platform ticked.
        self._beats: dict[str | None, float] = {}
        self._listeners: list[Callable[[str], None]] = []

    # -- entry points ------------------------------------------------------------------

    def handle(self, event: ChatEvent) -> list[Reply]:
        """The replies to one chat event.  Never raises for anything a user can type."""
        replies = self._handle(event)
        # The event may have changed a clock or written to the outbox: the adapter looks again.
        self._notify(event.platform)
        return replies

    def _handle(self, event: ChatEvent) -> list[Reply]:
        now = self.clock()
        lang = pick_language(event.language)
        # A button press is answered privately (it also stops the button's spinner).
        private = event.action is not None
        try:
            chat = self.storage.ensure_chat(event.platform, event.chat_id, event.chat_kind, now)
            lang = chat["language"] or lang
            ctx = Ctx(event, lang, chat, now)
            try:
                self.storage.save_player(event.platform, event.user_id, _name(event), event.username,
                                         event.language, now)
            except StorageBusy:
                # A new name can wait for the next message; the command itself may need no write.
                log.warning("player %s not updated: the database is busy", event.user_id)
            if event.action is not None:
                return self._button(ctx, event.action)
            return self._text(ctx, event.text or "")
        except StorageBusy:
            log.warning("%s event in chat %s answered busy: the database stayed locked",
                        event.platform, event.chat_id)
            return [Reply(t(lang, "error.busy"), private=private)]
        except Exception:
            # A bug must not leave the user without an answer; it is logged for us.
            log.exception("handler failed for %s event in chat %s", event.platform, event.chat_id)
            return [Reply(t(lang, "error.internal"), private=private)]

    def remember_board(self, platform: str, chat_id: str, message_id: str, game_id: int) -> None:
        """An adapter tells us which message shows a game's board (for replies to it)."""
        try:
            self.storage.remember_message(platform, chat_id, str(message_id), game_id)
        except StorageBusy:
            # Only replies to this board lose their game; #id and buttons still work.
            log.warning("board message %s of game %s not remembered: the database is busy", message_id, game_id)

    def chat_moved(self, platform: str, old_chat_id: str, new_chat_id: str) -> None:
        """A chat got a new id (a Telegram group became a supergroup): its games follow it."""
        self.storage.move_chat(platform, str(old_chat_id), str(new_chat_id))

    # -- speaking on its own: timed work and the outbox -------------------------------------------

    def add_listener(self, listener: Callable[[str], None]) -> None:
        """``listener(platform)`` is called, from whatever thread made the change, after the
        outbox of that platform got a message or one of its clocks changed (a move resets a
        deadline): the adapter wakes up and looks again."""
        self._listeners.append(listener)

    def _notify(self, platform: str) -> None:
        for listener in list(self._listeners):
            try:
                listener(platform)
            except Exception:
                log.exception("outbox listener failed")

    def say(self, platform: str, chat_id: str, reply: Reply) -> int:
        """Put a message in the outbox (inside the caller's transaction, so it is written together
        with the change that caused it, or not at all)."""
        return self.storage.enqueue(platform, chat_id, reply.to_json(), self.clock())

    def run_due(self, platform: str | None = None, now: float | None = None) -> int:
        """Do the timed work that is due (reminders when a tenth of the move time is left, losses
        on time): each change and its message go into one transaction.  How many messages were
        written.  Each platform's process runs only its own games (``platform``)."""
        now = self.clock() if now is None else now
        written = 0
        try:
            if now - self._beats.get(platform, float("-inf")) >= HEARTBEAT_SECONDS:
                self.storage.beat(platform, now)
                self._beats[platform] = now
            due = self.storage.due_games(now, platform)
        except StorageBusy:
            log.warning("deadline check skipped: the database is busy")
            due = []
        for row in due:
            try:
                with self.storage.transaction():
                    reply = self._deadline_message(row, now)
                    if reply is not None:
                        self.say(row["platform"], row["chat_id"], reply)
                        written += 1
            except StaleGame:
                continue
            except StorageBusy:
                # The next run tries again.
                log.warning("deadline work stopped at game %s: the database is busy", row["id"])
                break
            except Exception:
                # One damaged game must not stop every other clock.
                log.exception("deadline work failed for game %s", row["id"])
        for name in {row["platform"] for row in due}:
            self._notify(name)
        return written

    def _deadline_message(self, row: dict[str, Any], now: float) -> Reply | None:
        """End the game on time or mark its reminder sent; the message to say, if any."""
        chat = self.storage.chat(row["platform"], row["chat_id"]) or {}
        turn = Position.from_fen(row["variant"], row["fen"]).turn
        name = row["white_name"] if turn == "W" else row["black_name"]
        player = self.storage.player(row["platform"], row["white_id" if turn == "W" else "black_id"]) or {}
        lang = chat.get("language") or pick_language(player.get("language"))
        if row["deadline_at"] <= now:
            return self._time_out(lang, row, now)
        if not self.storage.mark_reminded(row["id"], row["version"]):
            return None
        return Reply(reminder(lang, name, row["id"], row["deadline_at"] - now), game_id=row["id"])

    def pending_messages(self, platform: str, limit: int = 50) -> list[OutboxItem]:
        """The outbox messages of a platform that are due now, oldest first."""
        rows = self.storage.due_messages(platform, self.clock(), limit)
        return [OutboxItem(r["id"], r["platform"], r["chat_id"], Reply.from_json(r["payload"]), r["attempts"])
                for r in rows]

    def message_sent(self, item_id: int) -> None:
        """The adapter delivered an outbox message: it is never delivered again."""
        self.storage.mark_sent(item_id, self.clock())

    def message_failed(self, item_id: int, error: str, *, permanent: bool = False) -> None:
        """The adapter could not deliver an outbox message.  A transient failure is tried again
        later (backing off); a permanent one (chat gone, bot removed) drops the message, and so
        does a message that kept failing for about a day."""
        row = self.storage.outbox_message(item_id)
        if row is None or row["status"] != "pending":
            return
        if permanent or row["attempts"] + 1 >= OUTBOX_MAX_ATTEMPTS:
            self.storage.drop_message(item_id, error)
            log.warning("message %s to %s chat %s dropped: %s", item_id, row["platform"], row["chat_id"], error)
            if permanent:
                self.chat_gone(row["platform"], row["chat_id"])
            return
        delay = min(OUTBOX_FIRST_RETRY * 2 ** row["attempts"], OUTBOX_MAX_RETRY)
        self.storage.retry_later(item_id, self.clock() + delay, error)

    def chat_gone(self, platform: str, chat_id: str) -> None:
        """The bot can no longer post in a chat (removed, forbidden): stop what the service would
        post there on its own.  Games stay as they are: players may come back."""
        log.info("%s chat %s can no longer be written to", platform, chat_id)

    def next_wakeup(self, platform: str | None) -> float | None:
        """When timed work or an outbox message of ``platform`` is next due (epoch seconds), or
        None when nothing is scheduled."""
        try:
            return self.storage.next_wakeup(platform)
        except StorageBusy:
            return self.clock() + 1.0

    def tick(self, now: float | None = None, platform: str | None = None) -> list[Outgoing]:
        """The due work and the outbox drained at once, as a list (for a caller without a delivery
        loop: the console, tests).  The messages returned count as delivered."""
        self.run_due(platform, now)
        out: list[Outgoing] = []
        platforms = [platform] if platform is not None else self.storage.outbox_platforms()
        for name in platforms:
            for item in self.pending_messages(name, limit=1000):
                self.message_sent(item.id)
                out.append(Outgoing(item.platform, item.chat_id, item.reply))
        return out

    def resume_after_downtime(self, platform: str | None = None) -> float:
        """Call once at start-up: when no process served ``platform`` (None: all) for longer than
        DOWNTIME_THRESHOLD, every active game's deadline moves forward by the time the bot was
        away, so no one loses on time for the bot's outage.  The seconds added (0 if none)."""
        now = self.clock()
        gap = self.storage.resume_after_downtime(platform, now, DOWNTIME_THRESHOLD)
        self._beats[platform] = now
        if gap:
            log.warning("the bot was down for %.0f s: %s deadlines extended by that", gap, platform or "all")
        return gap

    # -- text ---------------------------------------------------------------------------------

    def _text(self, ctx: Ctx, raw: str) -> list[Reply]:
        if len(raw) > MAX_TEXT:
            if raw.lstrip()[:1] in ("/", "!") or ctx.event.chat_kind == "private":
                return [Reply(t(ctx.lang, "error.too_long", max=MAX_TEXT))]
            return []
        cmd = parse_command(raw)
        if cmd is None:
            text = clean_text(raw)
            # A bare move is taken from a player who has a game here.
            if looks_like_move(text) and self._my_games(ctx):
                return self.cmd_move(ctx, text.split())
            if ctx.event.chat_kind == "private" and text:
                return [Reply(t(ctx.lang, "help.hint"))]
            return []
        bot = (ctx.event.bot_username or "").lower()
        if cmd.addressee and bot and cmd.addressee != bot:
            return []
        if cmd.name is None:
            return [Reply(t(ctx.lang, "error.unknown_command", command=cmd.raw_name[:30]))]
        if cmd.name in REF_ONLY:
            ref, ok = only_ref(cmd.args)
            if not ok:
                return [Reply(t(ctx.lang, "error.ref_only", command=cmd.raw_name[:30]))]
            return getattr(self, f"cmd_{cmd.name}")(ctx, [f"#{ref}"] if ref is not None else [])
        return getattr(self, f"cmd_{cmd.name}")(ctx, cmd.args)

    def cmd_help(self, ctx: Ctx, args: list[str]) -> list[Reply]:
        """The command list."""
        return [Reply(t(ctx.lang, "help.text"))]

    def cmd_rules(self, ctx: Ctx, args: list[str]) -> list[Reply]:
        """The rules of a variant: the one named, else the one the player is playing here,
        else the chat's default."""
        if args:
            variant = parse_variant(args)
            if variant is None:
                return [Reply(t(ctx.lang, "rules.unknown", word=" ".join(args)[:30]))]
        else:
            variant = self._current_variant(ctx)
        return [Reply(t(ctx.lang, f"rules.{variant}"))]

    def _current_variant(self, ctx: Ctx) -> str:
        """The variant of the game the user means (the board replied to, else their latest
        game here still being played), else the chat's default."""
        row = None
        if ctx.event.reply_to:
            ref = self.storage.game_of_message(ctx.event.platform, ctx.event.chat_id, str(ctx.event.reply_to))
            row = self.storage.game(ref) if ref is not None else None
        games = self._my_games(ctx)
        if row is None and games:
            row = games[-1]
        return row["variant"] if row else self._default_variant(ctx)

    def cmd_lang(self, ctx: Ctx, args: list[str]) -> list[Reply]:
        """Set the chat's language."""
        if len(args) != 1 or args[0].lower() not in LANGUAGES:
            return [Reply(t(ctx.lang, "lang.usage"))]
        lang = args[0].lower()
        self.storage.set_chat(*ctx.key, language=lang)
        return [Reply(t(lang, "lang.set"))]

    def cmd_settings(self, ctx: Ctx, args: list[str]) -> list[Reply]:
        """Show or change the chat's language and default variant."""
        if not args:
            return [Reply(t(ctx.lang, "settings.show", lang=t(ctx.lang, f"language.{ctx.lang}"),
                            variant=variant_name(ctx.lang, self._default_variant(ctx))))]
        if len(args) >= 2 and args[0].lower() in ("variant", "variante"):
            variant = parse_variant(args[1:])
            if variant is None:
                return [Reply(t(ctx.lang, "rules.unknown", word=" ".join(args[1:])[:30]))]
            self.storage.set_chat(*ctx.key, variant=variant)
            return [Reply(t(ctx.lang, "settings.variant_set", variant=variant_name(ctx.lang, variant)))]
        if len(args) == 2 and args[0].lower() in ("lang", "language", "idioma", "lingua"):
            return self.cmd_lang(ctx, args[1:])
        return [Reply(t(ctx.lang, "settings.usage"))]

    # -- challenges ------------------------------------------------------------------------------

    def cmd_new(self, ctx: Ctx, args: list[str]) -> list[Reply]:
        """Open a challenge to the chat or to one @user."""
        try:
            spec = parse_new(args)
        except BadArgument as err:
            return [Reply(t(ctx.lang, err.key, **err.values) + " " + t(ctx.lang, "new.usage"))]
        ev = ctx.event
        if spec.target and _is_user(ev, spec.target):
            return [Reply(t(ctx.lang, "new.self"))]
        mine = [c for c in self._live_challenges(ctx) if c["challenger_id"] == ev.user_id]
        if len(mine) >= MAX_OPEN_CHALLENGES:
            return [Reply(t(ctx.lang, "new.too_many", max=MAX_OPEN_CHALLENGES))]
        variant = spec.variant or self._default_variant(ctx)
        cid = self.storage.create_challenge(
            platform=ev.platform, chat_id=ev.chat_id, challenger_id=ev.user_id, challenger_name=_name(ev),
            target_username=spec.target, variant=variant, color=spec.color, move_seconds=spec.move_seconds,
            created_at=ctx.now)
        key = "new.open" if spec.target is None else "new.targeted"
        text = t(ctx.lang, key, name=_name(ev), id=cid, target=spec.target or "",
                 variant=variant_name(ctx.lang, variant), colors=t(ctx.lang, f"colors.{spec.color}", name=_name(ev)),
                 time=duration(ctx.lang, spec.move_seconds))
        buttons = [Button(t(ctx.lang, "button.accept"), f"acc:{cid}", f"/accept #{cid}", style="go")]
        if spec.target:
            buttons.append(Button(t(ctx.lang, "button.decline"), f"dec:{cid}", f"/decline #{cid}", style="stop"))
        return [Reply(text, buttons=[buttons])]

    def _acceptable(self, ctx: Ctx, challenge: dict[str, Any]) -> str | None:
        """Why this user cannot accept the challenge (a catalog key), or None."""
        ev = ctx.event
        if challenge["challenger_id"] == ev.user_id:
            return "accept.own"
        target = challenge["target_username"]
        if target and not _is_user(ev, target):
            return "accept.not_for_you"
        return None

    def _expires_at(self, ch: dict[str, Any]) -> float:
        return ch["created_at"] + max(CHALLENGE_LIFETIME, ch["move_seconds"])

    def _live_challenges(self, ctx: Ctx) -> list[dict[str, Any]]:
        """The chat's open challenges that have not lapsed; lapsed ones are closed as expired
        (so they are neither listed nor acceptable, and say 'expired' when named)."""
        live = []
        for ch in self.storage.open_challenges(*ctx.key):
            if self._expires_at(ch) <= ctx.now:
                self.storage.close_challenge(ch["id"], "expired")
            else:
                live.append(ch)
        return live

    def _open_challenge(self, ctx: Ctx, cid: int) -> tuple[dict[str, Any] | None, list[Reply]]:
        """Challenge #cid if it is open in this chat, else the answer saying why not."""
        ch = self.storage.challenge(cid)
        # From a button, only the presser needs to hear why it did nothing.
        private = ctx.event.action is not None
        if ch is None or (ch["platform"], ch["chat_id"]) != ctx.key:
            return None, [Reply(t(ctx.lang, "challenge.unknown", id=cid), private=private)]
        if ch["status"] == "open" and self._expires_at(ch) <= ctx.now:
            self.storage.close_challenge(cid, "expired")
            ch = dict(ch, status="expired")
        if ch["status"] == "expired":
            return None, [Reply(t(ctx.lang, "challenge.expired", id=cid), private=private)]
        if ch["status"] != "open":
            return None, [Reply(t(ctx.lang, "challenge.closed", id=cid), private=private)]
        return ch, []

    def cmd_accept(self, ctx: Ctx, args: list[str]) -> list[Reply]:
        """Accept a challenge: the game starts."""
        ref, _ = game_ref(args)
        if ref is not None:
            ch, problem = self._open_challenge(ctx, ref)
            if ch is None:
                return problem
            why = self._acceptable(ctx, ch)
            if why:
                return [Reply(t(ctx.lang, why, id=ref, target=ch["target_username"] or ""),
                              private=ctx.event.action is not None)]
            return self._start_game(ctx, ch)
        live = self._live_challenges(ctx)
        open_ = [c for c in live if self._acceptable(ctx, c) is None]
        if not open_:
            own = [c["id"] for c in live if c["challenger_id"] == ctx.event.user_id]
            if own and len(own) == len(live):
                return [Reply(t(ctx.lang, "accept.only_own", ids=_ids(own)))]
            return [Reply(t(ctx.lang, "accept.none"))]
        if len(open_) > 1:
            listing = "\n".join(self._challenge_line(ctx.lang, c) for c in open_)
            return [Reply(t(ctx.lang, "accept.which") + "\n" + listing)]
        return self._start_game(ctx, open_[0])

    def _start_game(self, ctx: Ctx, ch: dict[str, Any]) -> list[Reply]:
        ev = ctx.event
        color = ch["color"] if ch["color"] != "random" else self.rng.choice(["white", "black"])
        challenger = (ch["challenger_id"], ch["challenger_name"])
        acceptor = (ev.user_id, _name(ev))
        white, black = (challenger, acceptor) if color == "white" else (acceptor, challenger)
        start = Position.start(ch["variant"])
        game_id = self.storage.accept_challenge(ch["id"], {
            "platform": ch["platform"], "chat_id": ch["chat_id"], "variant": ch["variant"], "start_fen": None,
            "white_id": white[0], "white_name": white[1], "black_id": black[0], "black_name": black[1],
            "fen": start.fen(), "move_seconds": ch["move_seconds"],
            "deadline_at": ctx.now + ch["move_seconds"], "created_at": ctx.now,
        })
        if game_id is None:
            return [Reply(t(ctx.lang, "challenge.closed", id=ch["id"]), private=ev.action is not None)]
        row = self.storage.game(game_id)
        lines = [t(ctx.lang, "game.started", id=game_id, variant=variant_name(ctx.lang, ch["variant"]),
                   white=white[1], black=black[1])]
        # A challenger who has a game no longer waits for another: her other open-to-anyone
        # challenges here would start a second game behind her back.
        others = [c for c in self._live_challenges(ctx) if c["challenger_id"] == ch["challenger_id"]
                  and not c["target_username"] and c["id"] != ch["id"]]
        withdrawn = [c["id"] for c in others if self.storage.close_challenge(c["id"], "cancelled")]
        if withdrawn:
            key = "challenge.other_withdrawn" if len(withdrawn) == 1 else "challenge.others_withdrawn"
            lines.append(t(ctx.lang, key, name=ch["challenger_name"], ids=_ids(withdrawn)))
        lines.append(self._to_move_line(ctx.lang, row, ctx.now))
        text = "\n".join(lines)
        return [self._board_reply(ctx.lang, row, text)]

    def cmd_decline(self, ctx: Ctx, args: list[str]) -> list[Reply]:
        """Decline a challenge addressed to you."""
        ref, _ = game_ref(args)
        ev = ctx.event
        # From the Decline button a refusal is for the presser only, as from Accept.
        private = ev.action is not None
        mine = [c for c in self._live_challenges(ctx)
                if c["target_username"] and self._acceptable(ctx, c) is None]
        if ref is not None:
            ch, problem = self._open_challenge(ctx, ref)
            if ch is None:
                return problem
            if ch["challenger_id"] == ev.user_id:
                return [Reply(t(ctx.lang, "decline.own", id=ref), private=private)]
            if not ch["target_username"]:
                return [Reply(t(ctx.lang, "decline.open", id=ref), private=private)]
            if self._acceptable(ctx, ch) is not None:
                return [Reply(t(ctx.lang, "accept.not_for_you", id=ref, target=ch["target_username"]),
                              private=private)]
            mine = [ch]
        if not mine:
            return [Reply(t(ctx.lang, "decline.none"), private=private)]
        if len(mine) > 1:
            listing = "\n".join(self._challenge_line(ctx.lang, c) for c in mine)
            return [Reply(t(ctx.lang, "decline.which") + "\n" + listing, private=private)]
        ch = mine[0]
        if not self.storage.close_challenge(ch["id"], "declined"):
            return [Reply(t(ctx.lang, "challenge.closed", id=ch["id"]), private=private)]
        return [Reply(t(ctx.lang, "decline.done", id=ch["id"], name=_name(ev), challenger=ch["challenger_name"]))]

    def cmd_cancel(self, ctx: Ctx, args: list[str]) -> list[Reply]:
        """Withdraw one of your open challenges (#id), or all of them."""
        ref, _ = game_ref(args)
        mine = [c for c in self._live_challenges(ctx) if c["challenger_id"] == ctx.event.user_id]
        if ref is not None:
            ch, problem = self._open_challenge(ctx, ref)
            if ch is None:
                return problem
            if ch["challenger_id"] != ctx.event.user_id:
                return [Reply(t(ctx.lang, "cancel.not_yours", id=ref))]
            mine = [ch]
        if not mine:
            return [Reply(t(ctx.lang, "cancel.none"))]
        done = [c["id"] for c in mine if self.storage.close_challenge(c["id"], "cancelled")]
        if not done:
            return [Reply(t(ctx.lang, "cancel.none"))]
        key = "cancel.done" if len(done) == 1 else "cancel.done_many"
        return [Reply(t(ctx.lang, key, ids=_ids(done)))]

    def _challenge_line(self, lang: str, ch: dict[str, Any]) -> str:
        target = f" → @{ch['target_username']}" if ch["target_username"] else ""
        return (f"#{ch['id']} {ch['challenger_name']}{target}: {variant_name(lang, ch['variant'])}, "
                f"{t(lang, 'color.' + ch['color'])}, {duration(lang, ch['move_seconds'])}")

    # -- finding the game a message is about -------------------------------------------------------

    def _my_games(self, ctx: Ctx) -> list[dict[str, Any]]:
        uid = ctx.event.user_id
        return [g for g in self.storage.active_games(*ctx.key) if uid in (g["white_id"], g["black_id"])]

    def _resolve(self, ctx: Ctx, ref: int | None, mine_only: bool = True,
                 finished_ok: bool = False) -> tuple[dict[str, Any] | None, list[Reply]]:
        """The game a command means: #id, the board replied to, or the user's only game here."""
        if ref is None and ctx.event.reply_to:
            ref = self.storage.game_of_message(ctx.event.platform, ctx.event.chat_id, str(ctx.event.reply_to))
        if ref is not None:
            row = self.storage.game(ref)
            if row is None or (row["platform"], row["chat_id"]) != ctx.key:
                return None, [Reply(t(ctx.lang, "game.unknown", id=ref))]
            if row["status"] != "active" and not finished_ok:
                return None, [Reply(t(ctx.lang, "err.game_over"))]
            if mine_only and ctx.event.user_id not in (row["white_id"], row["black_id"]):
                return None, [Reply(t(ctx.lang, "game.not_player", id=ref), private=True)]
            return self._unless_expired(ctx, row)
        games = self._my_games(ctx)
        if not games and not mine_only:
            games = self.storage.active_games(*ctx.key)
        if not games and finished_ok:
            games = self.storage.recent_games(*ctx.key, ctx.event.user_id)
            if not games and not mine_only:
                # A spectator asking after the game ended means the chat's last game.
                last = self.storage.last_game(*ctx.key)
                games = [last] if last else []
        if not games:
            if mine_only:
                recent = self.storage.recent_games(*ctx.key, ctx.event.user_id)
                if recent and recent[0]["status"] == "finished" and recent[0]["finished_at"] > ctx.now - 86400:
                    # "No game here" would be confusing right after one ended.
                    return None, [Reply(self._over_text(ctx.lang, recent[0]) + "\n" + t(ctx.lang, "game.new_hint"))]
                if self.storage.active_games(*ctx.key):
                    return None, [Reply(t(ctx.lang, "game.spectator"), private=True)]
            return None, [Reply(t(ctx.lang, "game.none"))]
        if len(games) > 1:
            listing = "\n".join(self._game_line(ctx.lang, g) for g in games)
            return None, [Reply(t(ctx.lang, "game.which") + "\n" + listing)]
        return self._unless_expired(ctx, games[0])

    def _unless_expired(self, ctx: Ctx, row: dict[str, Any]) -> tuple[dict[str, Any] | None, list[Reply]]:
        """The game, or, when its clock ran out before the scheduler noticed (say, after
        downtime), the loss on time announced instead: no move is played after the deadline."""
        if row["status"] != "active" or row["deadline_at"] is None or row["deadline_at"] > ctx.sent:
            return row, []
        try:
            return None, [self._time_out(ctx.lang, row, ctx.now)]
        except StaleGame:
            return None, [Reply(t(ctx.lang, "move.stale"))]

    def _game_line(self, lang: str, g: dict[str, Any]) -> str:
        turn = Position.from_fen(g["variant"], g["fen"]).turn
        mover = g["white_name"] if turn == "W" else g["black_name"]
        return t(lang, "games.line", id=g["id"], variant=variant_name(lang, g["variant"]),
                 white=g["white_name"], black=g["black_name"], mover=mover, ply=g["ply"] // 2 + 1)

    # -- playing ----------------------------------------------------------------------------------------

    def _load(self, row: dict[str, Any]) -> Game:
        """The live game of a stored row, without replaying it (docs/rules.md §4: repetition needs only
        the positions since the last capture or man move)."""
        need = row["quiet_plies"] + 1
        fens = self.storage.recent_fens(row["id"], need)
        if len(fens) < need:
            start = row["start_fen"] or Position.start(row["variant"]).fen()
            fens = [start, *fens]
        return Game.resume(row["variant"], row["start_fen"], fens, row["quiet_plies"])

    def cmd_move(self, ctx: Ctx, args: list[str]) -> list[Reply]:
        """Play a typed move in your game."""
        ref, words = game_ref(args)
        if not words:
            return [Reply(t(ctx.lang, "move.usage"))]
        row, problem = self._resolve(ctx, ref)
        if row is None:
            return problem
        return self._play(ctx, row, " ".join(words), via_button=False)

    def _color_of(self, row: dict[str, Any], user_id: str) -> str | None:
        if row["white_id"] == user_id:
            return "W"
        if row["black_id"] == user_id:
            return "B"
        return None

    def _play(self, ctx: Ctx, row: dict[str, Any], move: str | Move, via_button: bool) -> list[Reply]:
        game = self._load(row)
        before = game.position
        color = self._color_of(row, ctx.event.user_id)
        to_move = row["white_name"] if before.turn == "W" else row["black_name"]
        typed = move if isinstance(move, str) else str(move)
        try:
            played = game.play(move, by=color)
        except IllegalMove as err:
            text = explain(ctx.lang, err, before, typed=typed[:40], to_move=to_move)
            return [Reply(text, private=via_button)]
        fields: dict[str, Any] = {
            "fen": game.position.fen(), "ply": row["ply"] + 1, "quiet_plies": game.quiet_plies,
            "deadline_at": ctx.now + row["move_seconds"], "reminded": 0,
            "last_path": list(played.path), "last_captured": list(played.captured),
            # Moving answers an opponent's draw offer with a no; one's own offer stands.
            "draw_offer": row["draw_offer"] if row["draw_offer"] == color else None,
        }
        if game.result is not None:
            fields.update(self._result_fields(game.result, ctx.now))
        move_row = {"ply": row["ply"] + 1, "notation": str(played), "fen_after": fields["fen"],
                    "by_user": ctx.event.user_id, "played_at": ctx.now}
        try:
            self.storage.update_game(row["id"], row["version"], fields, move_row)
        except StaleGame:
            fresh = self.storage.game(row["id"])
            return [self._board_reply(ctx.lang, fresh, t(ctx.lang, "move.stale"))]
        fresh = self.storage.game(row["id"])
        mover = _name(ctx.event)
        text = t(ctx.lang, "move.played", name=mover, move=str(played), id=row["id"])
        if game.result is not None:
            text += "\n" + self._over_text(ctx.lang, fresh, game.result)
        else:
            if fields["draw_offer"] is None and row["draw_offer"] and row["draw_offer"] != color:
                text += "\n" + t(ctx.lang, "draw.declined_by_move")
            text += "\n" + self._to_move_line(ctx.lang, fresh, ctx.now)
        reply = self._board_reply(ctx.lang, fresh, text, replaces=via_button)
        reply.animation = boards.capture_animation(before, played, flipped=reply_flipped(fresh))
        return [reply]

    def _time_out(self, lang: str, row: dict[str, Any], now: float) -> Reply:
        """End a game whose side to move ran out of time; the announcement with the final board."""
        game = self._load(row)
        result = game.lose_on_time(game.turn)
        self._finish(row, result, now)
        return self._board_reply(lang, self.storage.game(row["id"]), self._over_text(lang, row, result))

    def _over_text(self, lang: str, row: dict[str, Any], result: Result | None = None) -> str:
        """'Game #N is over.' and how it ended (``row`` as it is once the game ended)."""
        result = result or _stored_result(row)
        final = Position.from_fen(row["variant"], row["fen"])
        return t(lang, "game.over", id=row["id"]) + " " + result_text(lang, result, row["white_name"],
                                                                      row["black_name"], final)

    def _result_fields(self, result: Result, now: float) -> dict[str, Any]:
        return {"status": "finished", "result_score": result.score, "result_reason": result.reason,
                "winner": result.winner, "finished_at": now, "deadline_at": None, "draw_offer": None}

    def _finish(self, row: dict[str, Any], result: Result, now: float) -> None:
        self.storage.update_game(row["id"], row["version"], self._result_fields(result, now))

    def cmd_resign(self, ctx: Ctx, args: list[str]) -> list[Reply]:
        """Resign your game, once confirmed: the Resign button of the question, or /resign again
        within a minute (a typo such as '/resign #2' for '#3' must not end a game at once).

        The question is kept in storage per game and player with the ply it was asked at, so it
        lapses when a move is played, and a restart within the minute still honours it."""
        ref, _ = game_ref(args)
        row, problem = self._resolve(ctx, ref)
        if row is None:
            return problem
        key = _resign_key(row["id"], ctx.event.user_id)
        asked = self.storage.pending(key)
        if asked and asked["ply"] == row["ply"] and 0 <= ctx.now - asked["at"] <= RESIGN_CONFIRM_SECONDS:
            return self._resign(ctx, row)
        self.storage.set_pending(key, {"ply": row["ply"], "at": ctx.now})
        button = Button(t(ctx.lang, "button.resign"), f"rs:{row['id']}:{row['ply']}", f"/resign #{row['id']}",
                        style="stop")
        other = row["black_name"] if self._color_of(row, ctx.event.user_id) == "W" else row["white_name"]
        text = t(ctx.lang, "resign.confirm", name=_name(ctx.event), id=row["id"], other=other)
        return [Reply(text, buttons=[[button]])]

    def _resign(self, ctx: Ctx, row: dict[str, Any]) -> list[Reply]:
        self.storage.drop_pending(_resign_key(row["id"], ctx.event.user_id))
        result = self._load(row).resign(self._color_of(row, ctx.event.user_id))
        return self._end_by_players(ctx, row, result)

    def _end_by_players(self, ctx: Ctx, row: dict[str, Any], result: Result) -> list[Reply]:
        try:
            self._finish(row, result, ctx.now)
        except StaleGame:
            return [self._board_reply(ctx.lang, self.storage.game(row["id"]), t(ctx.lang, "move.stale"))]
        return [self._board_reply(ctx.lang, self.storage.game(row["id"]), self._over_text(ctx.lang, row, result))]

    def cmd_draw(self, ctx: Ctx, args: list[str]) -> list[Reply]:
        """Offer a draw, or accept the opponent's offer."""
        ref, _ = game_ref(args)
        row, problem = self._resolve(ctx, ref)
        if row is None:
            return problem
        color = self._color_of(row, ctx.event.user_id)
        if row["draw_offer"] and row["draw_offer"] != color:
            return self._end_by_players(ctx, row, self._load(row).agree_draw())
        if row["draw_offer"] == color:
            return [Reply(t(ctx.lang, "draw.already"))]
        try:
            self.storage.update_game(row["id"], row["version"], {"draw_offer": color})
        except StaleGame:
            return [Reply(t(ctx.lang, "move.stale"))]
        other = row["black_name"] if color == "W" else row["white_name"]
        return [Reply(t(ctx.lang, "draw.offered", name=_name(ctx.event), other=other, id=row["id"]),
                      buttons=[[Button(t(ctx.lang, "button.accept_draw"), f"dr:{row['id']}:{row['ply']}",
                                      f"/draw #{row['id']}", style="go")]])]

    def cmd_board(self, ctx: Ctx, args: list[str]) -> list[Reply]:
        """Show a game's board, with its buttons."""
        ref, _ = game_ref(args)
        row, problem = self._resolve(ctx, ref, mine_only=False, finished_ok=True)
        if row is None:
            return problem
        if row["status"] == "active":
            text = self._game_line(ctx.lang, row) + "\n" + self._to_move_line(ctx.lang, row, ctx.now)
        else:
            text = self._over_text(ctx.lang, row)
        return [self._board_reply(ctx.lang, row, text)]

    def cmd_games(self, ctx: Ctx, args: list[str]) -> list[Reply]:
        """The games and open challenges of the chat."""
        games = self.storage.active_games(*ctx.key)
        challenges = self._live_challenges(ctx)
        if not games and not challenges:
            return [Reply(t(ctx.lang, "games.empty"))]
        lines = []
        if games:
            lines.append(t(ctx.lang, "games.header"))
            lines += [self._game_line(ctx.lang, g) for g in games]
        if challenges:
            lines.append(t(ctx.lang, "games.challenges"))
            lines += [self._challenge_line(ctx.lang, c) for c in challenges]
        return [Reply("\n".join(lines))]

    def cmd_pdn(self, ctx: Ctx, args: list[str]) -> list[Reply]:
        """A game as PDN, as text and as a file."""
        ref, _ = game_ref(args)
        row, problem = self._resolve(ctx, ref, mine_only=False, finished_ok=True)
        if row is None:
            return problem
        game = Game(row["variant"], row["start_fen"], draw_rules=False)
        for m in self.storage.moves(row["id"]):
            game.play(m["notation"])
        if row["status"] == "finished":
            game.result = _stored_result(row)
        date = time.strftime("%Y.%m.%d", time.gmtime(row["created_at"]))
        text = write_pdn(game, {"Event": f"Game #{row['id']}", "Site": row["platform"], "Date": date,
                                "White": row["white_name"], "Black": row["black_name"]})
        return [Reply(text, document=(f"game-{row['id']}.pdn", text.encode("utf-8")))]

    # -- buttons -------------------------------------------------------------------------------------------

    def _button(self, ctx: Ctx, action: str) -> list[Reply]:
        parts = str(action)[:64].split(":")
        kind, nums = parts[0], parts[1:]
        if not nums or not all(re.fullmatch(r"[0-9]{1,9}", p) for p in nums):
            return [Reply(t(ctx.lang, "button.invalid"), private=True)]
        ids = [int(p) for p in nums]
        if kind == "acc" and len(ids) == 1:
            return self.cmd_accept(ctx, [f"#{ids[0]}"])
        if kind == "dec" and len(ids) == 1:
            return self.cmd_decline(ctx, [f"#{ids[0]}"])
        expected = {"p": 2, "s": 3, "d": 4, "m": 3, "dr": 2, "rs": 2}
        if expected.get(kind) != len(ids):
            return [Reply(t(ctx.lang, "button.invalid"), private=True)]
        gid, ply = ids[0], ids[1]
        row, problem = self._resolve(ctx, gid)
        if row is None:
            for reply in problem:
                reply.private = True
            return problem
        if kind == "rs":
            # Only the player who asked, and only while nothing was played since the question.
            asked = self.storage.pending(_resign_key(gid, ctx.event.user_id))
            if not asked or asked["ply"] != ply or row["ply"] != ply:
                return [Reply(t(ctx.lang, "resign.not_asked"), private=True)]
            return self._resign(ctx, row)
        if row["ply"] != ply:
            if kind == "dr":
                return [Reply(t(ctx.lang, "draw.none"), private=True)]
            repeat = self._repeated_press(ctx, row, kind, ids)
            if repeat is not None:
                return [repeat]
            return [self._board_reply(ctx.lang, row, t(ctx.lang, "button.stale"), replaces=True)]
        color = self._color_of(row, ctx.event.user_id)
        if kind == "dr":
            # Only a standing offer from the opponent can be accepted by this button.
            if row["draw_offer"] in (None, color):
                return [Reply(t(ctx.lang, "draw.none"), private=True)]
            return self._end_by_players(ctx, row, self._load(row).agree_draw())
        pos = Position.from_fen(row["variant"], row["fen"])
        if color != pos.turn:
            mover = row["white_name"] if pos.turn == "W" else row["black_name"]
            return [Reply(t(ctx.lang, "err.not_your_turn", name=mover), private=True)]
        legal = pos.legal_moves()
        if kind == "p":
            return [self._board_reply(ctx.lang, row, self._to_move_line(ctx.lang, row, ctx.now), replaces=True)]
        if kind == "s":
            return [self._select_reply(ctx.lang, row, pos, ids[2])]
        if kind == "d":
            matching = [m for m in legal if m.start == ids[2] and m.end == ids[3]]
            if len(matching) == 1:
                return self._play(ctx, row, matching[0], via_button=True)
            if not matching:
                return [Reply(t(ctx.lang, "button.stale"), private=True)]
            return [self._paths_reply(ctx.lang, row, pos, legal, matching)]
        index = ids[2]
        if index >= len(legal):
            return [Reply(t(ctx.lang, "button.stale"), private=True)]
        return self._play(ctx, row, legal[index], via_button=True)

    # -- boards and buttons ------------------------------------------------------------------------------------

    def _to_move_line(self, lang: str, row: dict[str, Any], now: float) -> str:
        turn = Position.from_fen(row["variant"], row["fen"]).turn
        name = row["white_name"] if turn == "W" else row["black_name"]
        return to_move(lang, name, turn, (row["deadline_at"] or now) - now)

    def _board_reply(self, lang: str, row: dict[str, Any], text: str, replaces: bool = False) -> Reply:
        """The board of a stored game, with the piece buttons for the player to move."""
        pos = Position.from_fen(row["variant"], row["fen"])
        view = boards.board_view(pos, *_last_move(row), flipped=reply_flipped(row))
        buttons: list[list[Button]] = []
        if row["status"] == "active":
            starts = sorted({m.start for m in pos.legal_moves()})
            buttons = _rows([Button(str(sq), f"s:{row['id']}:{row['ply']}:{sq}") for sq in starts])
        return Reply(text, image=boards.png(view), board_text=boards.text(view), buttons=buttons,
                     replaces_board=replaces, game_id=row["id"])

    def _repeated_press(self, ctx: Ctx, row: dict[str, Any], kind: str, ids: list[int]) -> Reply | None:
        """The answer to a second press of the button that just played this user's move (a double
        tap: both presses left before the first answer arrived), or None for any other old button.

        The board it pressed on already shows the move, so it is not out of date: the answer is the
        same board and words the first press gave."""
        if kind not in ("d", "m") or ids[1] != row["ply"] - 1:
            return None
        moves = self.storage.moves(row["id"])
        if not moves or moves[-1]["ply"] != row["ply"] or moves[-1]["by_user"] != ctx.event.user_id:
            return None
        before = (Position.from_fen(row["variant"], moves[-2]["fen_after"]) if len(moves) > 1
                  else Position.from_fen(row["variant"], row["start_fen"]) if row["start_fen"]
                  else Position.start(row["variant"]))
        legal = before.legal_moves()
        if kind == "d":
            pressed = [m for m in legal if (m.start, m.end) == (ids[2], ids[3])]
        else:
            pressed = legal[ids[2]:ids[2] + 1]
        if len(pressed) != 1 or str(pressed[0]) != moves[-1]["notation"]:
            return None
        text = t(ctx.lang, "move.played", name=_name(ctx.event), move=moves[-1]["notation"], id=row["id"])
        text += "\n" + self._to_move_line(ctx.lang, row, ctx.now)
        return self._board_reply(ctx.lang, row, text, replaces=True)

    def _select_reply(self, lang: str, row: dict[str, Any], pos: Position, square: int) -> Reply:
        moves = [m for m in pos.legal_moves() if m.start == square]
        if not moves:
            return Reply(t(lang, "button.stale"), private=True)
        ends = sorted({m.end for m in moves})
        # The opponent's last move stays drawn while the player chooses.
        view = boards.board_view(pos, *_last_move(row), dots=ends, selected=square, flipped=reply_flipped(row))
        gid, ply = row["id"], row["ply"]
        buttons = []
        for end in ends:
            same = [m for m in moves if m.end == end]
            command = f"/m {same[0]}" if len(same) == 1 else None
            buttons.append(Button(f"{square}→{end}", f"d:{gid}:{ply}:{square}:{end}", command))
        rows = _rows(buttons, reserve=1)
        rows.append([Button(t(lang, "button.back"), f"p:{gid}:{ply}", style="back")])
        return Reply(t(lang, "select.piece", square=square), image=boards.png(view), board_text=boards.text(view),
                     buttons=rows, replaces_board=True, game_id=gid)

    def _paths_reply(self, lang: str, row: dict[str, Any], pos: Position, legal: list[Move],
                     matching: list[Move]) -> Reply:
        gid, ply = row["id"], row["ply"]
        # Button n is the route drawn with number n; no more routes are drawn than fit as buttons.
        buttons = [Button(f"{n}: {m}", f"m:{gid}:{ply}:{legal.index(m)}", f"/m {m}")
                   for n, m in enumerate(matching, 1)]
        rows = _rows(buttons, reserve=1)
        shown = matching[:sum(len(r) for r in rows)]
        rows.append([Button(t(lang, "button.back"), f"p:{gid}:{ply}", style="back")])
        view = boards.board_view(pos, *_last_move(row), dots=[matching[0].end], selected=matching[0].start,
                                 flipped=reply_flipped(row), routes=[m.path for m in shown])
        return Reply(t(lang, "select.path"), image=boards.png(view), board_text=boards.text(view), buttons=rows,
                     replaces_board=True, game_id=gid)

    def _default_variant(self, ctx: Ctx) -> str:
        if ctx.chat.get("variant") in VARIANTS:
            return ctx.chat["variant"]
        return "spanish" if ctx.lang == "es" else "italian"


def reply_flipped(row: dict[str, Any]) -> bool:
    """Boards are seen from the side to move (from White's side once the game is over)."""
    if row["status"] != "active":
        return False
    return Position.from_fen(row["variant"], row["fen"]).turn == "B"


def _last_move(row: dict[str, Any]) -> tuple[list[int], list[int]]:
    """The squares of a game's last move and the squares it captured on."""
    last = json.loads(row["last_path"]) if row["last_path"] else []
    captured = json.loads(row["last_captured"]) if row["last_captured"] else []
    return last, captured


def _stored_result(row: dict[str, Any]) -> Result:
    return Result(row["result_score"], row["result_reason"], row["winner"])


def _rows(buttons: list[Button], reserve: int = 0) -> list[list[Button]]:
    """Buttons in rows that fit every platform (Discord: 5 rows of 5)."""
    limit = (MAX_BUTTON_ROWS - reserve) * BUTTONS_PER_ROW
    buttons = buttons[:limit]
    return [buttons[i:i + BUTTONS_PER_ROW] for i in range(0, len(buttons), BUTTONS_PER_ROW)]


def _resign_key(game_id: int, user_id: str) -> str:
    return f"resign:{game_id}:{user_id}"


def _ids(ids: list[int]) -> str:
    return ", ".join(f"#{i}" for i in ids)


def _is_user(event: ChatEvent, handle: str) -> bool:
    """Whether an @handle names this user.  Display names can be chosen freely, so they count
    only for users who have no handle at all (platforms without usernames)."""
    if event.username:
        return event.username.lower() == handle
    return _name(event).lower() == handle


def _name(event: ChatEvent) -> str:
    name = clean_text(event.user_name or "")[:64]
    return name or (event.username or f"user {event.user_id}")[:64]

