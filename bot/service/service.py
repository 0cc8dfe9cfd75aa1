"""The game service: the one entry point for every platform.

A platform adapter turns its events into ``ChatEvent``s and sends back the
``Reply``s it gets.  The service reads and writes storage, asks the rules
engine, and renders boards; it knows no platform.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Collection, Sequence
from typing import Any

from bot.i18n import pick_language, t
from bot.service import board_versions
from bot.service.chat.boards import RENDERER
from bot.service.chat.commands import parse_command
from bot.service.chat.layer import ChatLayer, Ctx
from bot.service.chat.layer import display_name as _name
from bot.service.chat.present_games import move_rows
from bot.service.chat.present_notices import NoticePresenter
from bot.service.chat.registry import REGISTRY, ButtonKind
from bot.service.compose import ServiceConfig, UseCases, compose
from bot.service.events import DM_PREFIX, Button, ChatEvent, OutboxItem, Outgoing, Reply
from bot.service.features.common import (
    CHALLENGE_LIFETIME,
    log,
)
from bot.service.notifications import Notification, TurnPing
from bot.service.outbox import Outbox
from bot.service.thinking import Thinker
from bot.service.web import BoardLayer
from bot.storage import (
    StorageBusy,
    StorageContention,
    StorageFull,
    StorageGone,
    StorageUnavailable,
    Store,
    retry_contention,
)
from bot.storage.records import ChatRecord, GameRecord, MoveRecord


class GameService:
    """Answers chat events with replies; keeps every game in storage.

    A facade: the use cases (``bot/service/features``, plain classes built by
    ``bot.service.compose``) do the work, the chat layer (``bot.service.chat``) routes commands and
    buttons to them, and this class holds what every platform calls (events, the outbox, timed
    work).  ``app`` holds the use cases.

    ``thinker`` runs the engine (a process pool by default, started on first use); ``bot_seconds``
    caps the bot's time per move (None: each level's own); ``monotonic`` (with a test's ``clock``)
    tells a jump of the wall clock while running (time.monotonic with the wall clock)."""

    def __init__(self, storage: Store, clock: Callable[[], float] = time.time,
                 rng: random.Random | None = None, thinker: Thinker | None = None,
                 bot_seconds: float | None = None, monotonic: Callable[[], float] | None = None,
                 outbox: Outbox | None = None) -> None:
        self._setup(ServiceConfig(storage=storage, clock=clock, rng=rng, thinker=thinker, bot_seconds=bot_seconds,
                                  monotonic=monotonic), outbox)

    @classmethod
    def from_config(cls, config: ServiceConfig, outbox: Outbox | None = None) -> GameService:
        """The service for a configuration (validated: ConfigError names a wrong field)."""
        service = cls.__new__(cls)
        service._setup(config, outbox)
        return service

    def _setup(self, config: ServiceConfig, outbox: Outbox | None = None) -> None:
        # The chats told that the storage is unavailable in this outage (told once each; forgotten
        # when the storage answers again).
        self._told_unavailable: set[tuple[str, str]] = set()
        self._told_lock = threading.Lock()
        # What the service says on its own (the use cases' outlet writes to it); its claims are this
        # process's (see bot/service/outbox.py).  Set again through the setter: it gets the presenters.
        self.app: UseCases = compose(config, outbox, RENDERER)
        self.outbox = self.app.outlet.outbox
        self.chat = ChatLayer(self.app)
        # The web board's entry (bot/platforms/web): state, moves, draws and resignations for one game.
        self.web = BoardLayer(self.app.runtime, self.app.bus, self.app.games, self.app.play, self.app.outlet,
                              self.app.tournaments, self.app.analysis, storm=self.app.storm)

    @property
    def outbox(self) -> Outbox:
        return self.app.outlet.outbox

    @outbox.setter
    def outbox(self, value: Outbox) -> None:
        """An outbox given without presenters gets this service's (its notifications are worded by
        them), and without a renderer the chat layer's (its pictures' specs are drawn by it); the
        use cases write to it from then on."""
        if value.renderer is None:
            value.renderer = RENDERER
        if value.present is None:
            app = self.app
            value.present = NoticePresenter(games=app.games, puzzles=app.puzzles, challenges=app.challenges,
                                            analysis=app.analysis, tournaments=app.tournaments)
        self.app.outlet.outbox = value

    # The runtime the use cases share: a test or the console may swap the clock or the thinker of a
    # running service, and every use case sees it.
    @property
    def storage(self) -> Store:
        return self.app.runtime.storage

    @property
    def clock(self) -> Callable[[], float]:
        return self.app.runtime.clock

    @clock.setter
    def clock(self, value: Callable[[], float]) -> None:
        self.app.runtime.clock = value

    @property
    def rng(self) -> random.Random:
        return self.app.runtime.rng

    @property
    def thinker(self) -> Thinker:
        return self.app.runtime.thinker

    @thinker.setter
    def thinker(self, value: Thinker) -> None:
        self.app.runtime.thinker = value

    @property
    def bot_seconds(self) -> float | None:
        return self.app.runtime.bot_seconds

    @bot_seconds.setter
    def bot_seconds(self, value: float | None) -> None:
        self.app.runtime.bot_seconds = value

    @property
    def monotonic(self) -> Callable[[], float] | None:
        return self.app.runtime.monotonic

    def handle(self, event: ChatEvent) -> list[Reply]:
        """The replies to one chat event.  Never raises for anything a user can type."""
        replies = self._handle(event)
        # The event may have changed a clock or written to the outbox: the adapter looks again.
        self._notify(event.platform)
        return replies

    def _handle(self, event: ChatEvent) -> list[Reply]:
        now = self.clock()
        lang = pick_language(event.language)
        if self.app.clocks.watching(event.platform):
            # Right after a suspend a message may come before the timers' next round: the jump of
            # the wall clock is noticed here too, or a move would find its game lost on time.
            try:
                self.app.clocks.away_while_running(event.platform, now)
            except StorageUnavailable:
                pass            # the store logs the outage (once a minute), not every event
            except (StorageBusy, StorageFull) as err:
                log.warning("clock jump check skipped for a %s event: %s", event.platform, err)
        # A button press is answered privately (it also stops the button's spinner).
        private = event.action is not None
        try:
            try:
                chat = self.storage.players.ensure_chat(event.platform, event.chat_id, event.chat_kind, now)
                stored = True
            except StorageUnavailable:
                # A command that needs no storage (/help, /rules) is still answered, in the user's
                # language (the chat's own is stored); one that does meets the outage below.
                chat = ChatRecord(event.platform, event.chat_id, event.chat_kind, None, None, now)
                stored = False
            if stored and self._told_unavailable:
                with self._told_lock:
                    self._told_unavailable.clear()          # the outage is over
            lang = chat.language or lang
            ctx = Ctx(event, lang, chat, now)
            try:
                if stored and not event.as_chat:          # a group or channel is no player
                    self.storage.players.save(event.platform, event.user_id, _name(event), event.username,
                                             event.language, now)
            except StorageUnavailable:
                pass            # gone since ensure_chat: the command meets it too (the store logs it)
            except StorageBusy:
                # A new name can wait for the next message; the command itself may need no write.
                log.warning("player %s not updated: the database is busy", event.user_id)
            except StorageFull:
                pass            # the same: a read-only command still works on a full disk
            if stored and event.chat_kind == "private":
                self._reachable_again(event.platform, event.user_id, now)
            # A unit of work that lost a compare-and-set kept nothing: the command runs again.
            if event.action is not None:
                action = event.action
                return retry_contention(lambda: self.chat.button(ctx, action))
            return retry_contention(lambda: self.chat.text(ctx, event.text or ""))
        except StorageUnavailable:
            # Nothing was written; the store logs the outage (when it starts, then once a minute).
            return self._unavailable(event, lang, private)
        except (StorageBusy, StorageContention):
            log.warning("%s event in chat %s answered busy: the database stayed locked",
                        event.platform, event.chat_id)
            return [Reply(t(lang, "error.busy"), private=private)]
        except StorageFull:
            # Nothing was written; the store logs the full disk (once a minute), not every event.
            return [Reply(t(lang, "error.disk_full"), private=private)]
        except StorageGone:
            # Nothing was written; the adapter stops the bot (one line), see ChatAdapter.
            return [Reply(t(lang, "error.internal"), private=private)]
        except Exception:
            # A bug must not leave the user without an answer; it is logged for us.
            log.exception("handler failed for %s event in chat %s", event.platform, event.chat_id)
            return [Reply(t(lang, "error.internal"), private=private)]

    def _unavailable(self, event: ChatEvent, lang: str, private: bool) -> list[Reply]:
        """The storage is unavailable: said once per chat and outage (a group is not told again at
        every message); a button press is answered every time, privately (it stops its spinner)."""
        if not private:
            with self._told_lock:
                key = (event.platform, event.chat_id)
                if key in self._told_unavailable:
                    return []
                self._told_unavailable.add(key)
        return [Reply(t(lang, "error.storage_unavailable"), private=private)]

    def remember_board(self, platform: str, chat_id: str, message_id: str, game_id: int | None,
                       post_id: int | None = None, challenge_id: int | None = None, record: str | None = None) -> None:
        """An adapter tells us which message shows a game's board or a puzzle (for replies to it),
        a challenge (its buttons are updated once it is closed) or the chat's record ``record`` (it
        is edited when the record is beaten)."""
        try:
            if game_id is not None:
                self.storage.games.remember_message(platform, chat_id, str(message_id), game_id)
            if post_id is not None:
                self.storage.puzzles.remember_message(platform, chat_id, str(message_id), post_id)
            if challenge_id is not None:
                self.app.challenges.remember_challenge(platform, chat_id, str(message_id), challenge_id)
            if record is not None:
                self.app.puzzle_runs.remember_record_message(platform, chat_id, str(message_id), record)
        except (StorageBusy, StorageFull, StorageGone) as err:
            # Only replies to this message lose their game or puzzle; #id and buttons still work.
            log.warning("board message %s of game %s / puzzle %s / challenge %s not remembered: %s", message_id,
                        game_id, post_id, challenge_id, err)

    def record_message(self, platform: str, chat_id: str, record: str) -> str | None:
        """The message that shows the chat's record ``record`` now (None: none yet), for the
        adapter to edit when it delivers a new record."""
        return self.app.puzzle_runs.record_message(platform, chat_id, record)

    # A chat's other way in, where the bot's own posts are refused (Discord: the newest interaction's
    # follow-up webhook, whose token lives 15 minutes).  Kept in the database, not in the memory of
    # the process that got the interaction: any process may deliver the chat's next outbox row.  One
    # row a chat, replaced by the next interaction there; the adapter checks its age.  The value
    # holds a credential: it is never logged.

    def keep_follow_up(self, platform: str, chat_id: str, route: dict[str, Any]) -> None:
        """Keep ``route`` (JSON: the adapter's token, its time...) as the chat's newest way in."""
        self.storage.settings.set_pending(_follow_up_key(platform, chat_id), route)

    def follow_up(self, platform: str, chat_id: str) -> dict[str, Any] | None:
        """The chat's newest way in that an adapter kept, or None."""
        value = self.storage.settings.pending(_follow_up_key(platform, chat_id))
        return value if isinstance(value, dict) else None

    def drop_follow_up(self, platform: str, chat_id: str, token: str) -> None:
        """Forget the chat's way in if it is still the one with ``token`` (the platform no longer
        takes it; a newer one another process kept meanwhile stays)."""
        key = _follow_up_key(platform, chat_id)

        def drop() -> None:
            with self.storage.transaction():
                value = self.storage.settings.pending(key)
                if isinstance(value, dict) and value.get("token") == token:
                    self.storage.settings.drop_pending(key)

        retry_contention(drop)

    def check_storage(self) -> None:
        """StorageGone when the database file was deleted or replaced since the bot opened it
        (cheap: the adapters call it on every round of their delivery task)."""
        self.storage.check_file()

    def verify_storage(self) -> None:
        """StorageDamaged when the database fails a full integrity check (seconds on a big file)."""
        self.storage.verify()

    def settle(self, timeout: float | None = None) -> bool:
        """Wait until the bot has finished thinking about everything it was asked (its moves are
        then in the outbox); False on timeout.  For callers without a delivery loop (the piped
        console, tests, benchmarks)."""
        return self.thinker.wait_idle(timeout)

    def warm_up(self) -> None:
        """Start the engine's processes in the background (call once when the bot starts)."""
        self.thinker.warm()

    def close(self) -> None:
        """Stop the engine pool (a move it was thinking about is found again after a restart)."""
        self.thinker.close()

    # -- the operator's view (python -m bot games ...) ----------------------------------------------

    def find_games(self, platform: str | None = None, chat_id: str | None = None, status: str | None = None,
                   limit: int | None = None) -> list[GameRecord]:
        """Stored games, newest first, filtered by platform, chat and status."""
        return self.app.games.find(platform, chat_id, status, limit)

    def claim_board_edit(self, platform: str, chat_id: str, message_id: str, game_id: int, stage: int) -> bool:
        """Whether a board of ``stage`` may be written to a message now; if so it is recorded as the
        message's, for every process (see bot.service.board_versions)."""
        return board_versions.claim_edit(self.storage, platform, chat_id, message_id, game_id, stage)

    def board_is_current(self, game_id: int, stage: int) -> bool:
        """Whether a board of ``stage`` is still its game's latest."""
        return board_versions.still_current(self.storage, game_id, stage)

    def move_buttons(self, game_id: int, ply: int, instead_of: list[list[Button]] | None = None
                     ) -> list[list[Button]] | None:
        """A game's moves at ``ply`` as one button each, or None (see present_games.move_rows);
        with ``instead_of``, only in place of a board's piece buttons (None for any other)."""
        if instead_of is not None and not (instead_of and all(
                b.action.startswith(f"{ButtonKind.SELECT.value}:") for r in instead_of for b in r)):
            return None
        row = self.storage.games.get(game_id)
        return move_rows(row, ply) if row is not None else None

    def game_with_moves(self, game_id: int) -> tuple[GameRecord | None, list[MoveRecord]]:
        """A stored game and its moves in order (None and no moves when there is no such game)."""
        return self.app.games.with_moves(game_id)

    def chat_moved(self, platform: str, old_chat_id: str, new_chat_id: str) -> None:
        """A chat got a new id (a Telegram group became a supergroup): its games follow it."""
        self.storage.players.move_chat(platform, str(old_chat_id), str(new_chat_id))

    def add_listener(self, listener: Callable[[str], None]) -> None:
        """``listener(platform)`` is called, from whatever thread made the change, after the
        outbox of that platform got a message or one of its clocks changed (a move resets a
        deadline): the adapter wakes up and looks again."""
        self.app.outlet.add_listener(listener)

    def wake(self, platform: str) -> None:
        """Tell the adapters of ``platform`` to look again."""
        self.app.outlet.wake(platform)

    def _notify(self, platform: str) -> None:
        self.app.outlet.wake(platform)

    # -- the outbox (bot/service/outbox.py): what the service says on its own ------------------------

    def say(self, platform: str, chat_id: str, reply: Reply) -> int:
        """Put a message in the outbox (inside the caller's transaction, so it is written together
        with the change that caused it, or not at all)."""
        return self.outbox.say(platform, chat_id, reply)

    def notify(self, platform: str, chat_id: str, notice: Notification) -> int:
        """Put a notification in the outbox (inside the caller's transaction): worded and drawn
        when it is delivered (``bot.service.chat.present_notices``)."""
        return self.outbox.notify(platform, chat_id, notice)

    def queue_reply(self, platform: str, chat_id: str, reply: Reply, error: str, *, delivered: int = 0,
                    retry_in: float | None = None) -> int:
        """A direct answer the adapter could not deliver (still failing after its own retries): the
        outbox takes it over, so it reaches the chat later with backoff instead of being lost.
        ``delivered``: its first messages that are out already (never sent again); ``retry_in``:
        the wait the platform asked for (flood control), instead of the first backoff."""
        item = self.outbox.queue_reply(platform, chat_id, reply, error, delivered=delivered, retry_in=retry_in)
        self._notify(platform)
        return item

    def pending_messages(self, platform: str, limit: int = 50, exclude: Sequence[str] = ()) -> list[OutboxItem]:
        """The outbox messages of a platform that are due now, oldest first (none for the chats
        in ``exclude``), claimed by this process for a while (another process does not send them
        meanwhile) and drawn now."""
        return self.outbox.pending(platform, limit, exclude)

    def renew_messages(self, item_ids: Collection[int]) -> set[int]:
        """Keep the claim on outbox messages about to be sent; the ids this process still holds
        (one whose claim ran out and another process took is not sent here)."""
        return self.outbox.hold(item_ids)

    def release_messages(self) -> int:
        """Give up this process's claims on outbox messages (its delivery stops)."""
        return self.outbox.release()

    def message_progress(self, item_id: int, delivered: int) -> None:
        """The first ``delivered`` messages of an outbox reply are out: they are not sent again."""
        self.outbox.progress(item_id, delivered)

    def message_sent(self, item_id: int) -> bool:
        """The adapter delivered an outbox message: it is never delivered again.  False when it was
        no longer pending or no longer this process's (its claim ran out and another took it)."""
        return self.outbox.sent(item_id)

    def message_failed(self, item_id: int, error: str, *, permanent: bool = False, chat_gone: bool = True,
                       retry_in: float | None = None) -> None:
        """The adapter could not deliver an outbox message.  A transient failure is tried again
        later (backing off, or after ``retry_in`` when the platform said how long to wait); a
        permanent one drops the message, and so does a message that kept failing for about a day.
        A permanent failure means the chat is gone (bot removed, forbidden) unless ``chat_gone``
        is false: then only this message was refused (the platform will never take it as it is)."""
        row = self.outbox.failed(item_id, error, permanent=permanent, retry_in=retry_in)
        if row is None:
            return
        if row.chat_id.startswith(DM_PREFIX):
            # A private turn notice that cannot go out: the group ping stands in.
            self._private_undeliverable(row.platform, row.chat_id, row.payload)
        elif permanent and chat_gone:
            self.chat_gone(row.platform, row.chat_id)

    def _reachable_again(self, platform: str, user_id: str, now: float) -> None:
        """A user wrote to the bot privately: private turn notices can reach them again (on
        Telegram only a user who started the bot can get one)."""
        try:
            setting = self.storage.players.notify_setting(platform, user_id)
            if setting is not None and setting.unreachable:
                self.storage.players.set_unreachable(platform, user_id, False, now)
        except StorageUnavailable:
            pass                # the next private message tries again (the store logs the outage)
        except (StorageBusy, StorageFull):
            log.warning("user %s not marked reachable: the database is busy (the next message tries again)",
                        user_id)

    def _private_undeliverable(self, platform: str, chat_id: str, payload: str) -> None:
        """A private turn notice could not be delivered (the user never started the bot, or closed
        their DMs): the user is pinged in the game's group instead, this time and until they next
        write to the bot privately."""
        user_id = chat_id[len(DM_PREFIX):]
        now = self.clock()
        try:
            with self.storage.transaction():
                self.storage.players.set_unreachable(platform, user_id, True, now)
                game_id = Outbox.game_of(payload)
                row = self.storage.games.get(game_id) if game_id is not None else None
                mover = self._player_to_move(row) if row is not None else None
                if row is None or mover is None or mover[0] != user_id:
                    return
                lang = self._game_lang(row, user_id)
                mention = self.app.games.turn_notice(row, now)
                if mention is not None:
                    self.notify(row.platform, row.chat_id, TurnPing(row.id, lang, mention))
        except StorageBusy:
            log.warning("the group ping for user %s was not written: the database is busy", user_id)
            return
        self._notify(platform)

    def chat_gone(self, platform: str, chat_id: str) -> None:
        """The bot can no longer post in a chat (removed, forbidden): stop what the service would
        post there on its own (the daily puzzle).  Games stay as they are: players may come back."""
        log.info("%s chat %s can no longer be written to", platform, chat_id)
        try:
            if self.storage.puzzles.unsubscribe(platform, chat_id, self.clock()):
                self.app.puzzles.daily_changed()
                log.warning("%s chat %s unsubscribed from the daily puzzle: the bot cannot post there",
                            platform, chat_id)
        except StorageBusy:
            log.warning("%s chat %s not unsubscribed: the database is busy (the next failed post tries again)",
                        platform, chat_id)

    def notice(self, platform: str, chat_id: str, key: str, **values: Any) -> str:
        """A catalog text in a chat's language, for what an adapter must tell a chat on its own
        (say, that it lacks a permission)."""
        try:
            chat = self.storage.players.chat(platform, chat_id)
        except StorageUnavailable:
            chat = None         # the default language meanwhile
        return t(pick_language(chat.language if chat is not None else None), key, **values)

    def place_taken(self, platform: str, chat_id: str) -> bool:
        """Whether a place of its own an adapter made for a command (a forum topic, a thread: see
        ``CommandSpec.place_words``) holds what the command started, a tournament; a command the
        service refused started nothing, and the adapter removes the place again."""
        return self.storage.tournaments.in_chat(platform, chat_id) is not None

    def needs_admin(self, text: str | None) -> bool:
        """Whether typed text is a command only chat administrators may use (so an adapter knows
        when to ask the platform whether the user is one)."""
        cmd = parse_command(text or "")
        spec = REGISTRY.lookup(cmd.name) if cmd is not None and cmd.name is not None else None
        return spec is not None and REGISTRY.needs_admin(spec, cmd.args if cmd is not None else [])

    def next_wakeup(self, platform: str | None) -> float | None:
        """When timed work or an outbox message of ``platform`` is next due (epoch seconds), or
        None when nothing is scheduled."""
        try:
            times = [self.storage.outbox.next_wakeup(platform), self.app.puzzles.next_daily_wakeup(platform),
                     self.storage.challenges.next_lapse(platform, CHALLENGE_LIFETIME)]
        except StorageBusy:
            return self.clock() + 1.0
        known = [x for x in times if x is not None]
        return min(known) if known else None

    def tick(self, now: float | None = None, platform: str | None = None) -> list[Outgoing]:
        """The due work and the outbox drained at once, as a list (for a caller without a delivery
        loop: the console, tests).  The messages returned count as delivered."""
        self.run_due(platform, now)
        # Each message claimed before it is handed over: of two processes draining at once, one has it.
        return self.outbox.drain(platform)

    # -- the use cases' work the platforms, operators and tests ask for --------------------------------

    def run_due(self, platform: str | None = None, now: float | None = None) -> int:
        """Do the timed work that is due (see Clocks.run_due); how many messages were written."""
        return self.app.clocks.run_due(platform, now)

    def resume_after_downtime(self, platform: str | None = None) -> float:
        """Call once at start-up (see Clocks.resume_after_downtime); the seconds added."""
        return self.app.clocks.resume_after_downtime(platform)

    def rebuild_ratings(self) -> dict[str, int]:
        """Every rating computed again from the stored games and attempts (see Ratings)."""
        return self.app.ratings.rebuild_ratings()

    def puzzle_streaks(self, platform: str, user_id: str) -> tuple[int, int]:
        """A user's (current, best) streaks of daily puzzles solved."""
        return self.app.records.puzzle_streaks(platform, user_id)

    def puzzle_leaderboard(self, platform: str, chat_id: str) -> list[dict[str, Any]]:
        """A chat's puzzle solvers, best first (see PuzzleRecords)."""
        return self.app.records.puzzle_leaderboard(platform, chat_id)

    def next_daily_wakeup(self, platform: str | None) -> float | None:
        """When a daily post of ``platform`` is next due, or None."""
        return self.app.puzzles.next_daily_wakeup(platform)

    def remember_challenge(self, platform: str, chat_id: str, message_id: str, challenge_id: int) -> None:
        """An adapter sent the message that shows a challenge (see Challenges)."""
        self.app.challenges.remember_challenge(platform, chat_id, message_id, challenge_id)

    # What the outbox's undeliverable-notice path asks about a game (the games use case knows).
    def _player_to_move(self, row: GameRecord) -> tuple[str, str] | None:
        return self.app.games.player_to_move(row)

    def _game_lang(self, row: GameRecord, user_id: str) -> str:
        return self.app.games.game_lang(row, user_id)


def build(config: ServiceConfig) -> GameService:
    """The game service for a configuration: the production entry (``bot.app.build_service``)."""
    return GameService.from_config(config)


def _follow_up_key(platform: str, chat_id: str) -> str:
    return f"follow_up:{platform}:{chat_id}"
