"""Telegram: turn updates into ChatEvents for the service and send its replies back.

No game logic lives here.  Commands and plain text go to the service as typed
(it parses ``/cmd@OurBot`` and ignores commands for other bots); button
presses carry the service's action strings as ``callback_data``.

Updates are handled concurrently, but one chat at a time and in order (a lock
per chat), so a group held back by Telegram's per-group rate limit does not
hold back the others.  The service does SQLite and Pillow work, so it runs in a
worker thread, off the event loop.

A move is stored before its board is shown, so the board must reach the chat:
every Bot API call is retried a few times on a transient failure (flood control,
a 5xx, a network error), and a board edit Telegram refuses is replaced by a new
board message.

What is shared with the other adapters (service calls off the loop, per-chat order,
splitting a reply into messages, remembering boards, the outbox delivery task) is in
bot.platforms.base; this module only speaks the Bot API.
"""

from __future__ import annotations

import asyncio
import logging
import time
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import timedelta
from typing import Any, TypeVar

from telegram import (
    Bot,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InputFile,
    InputMediaPhoto,
    Message,
    MessageEntity,
    ReactionTypeEmoji,
    Update,
)
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Forbidden,
    InvalidToken,
    NetworkError,
    RetryAfter,
    TelegramError,
)
from telegram.ext import (
    AIORateLimiter,
    Application,
    CallbackQueryHandler,
    ContextTypes,
    MessageHandler,
    filters,
)
from telegram.request import BaseRequest
from telegram.warnings import PTBDeprecationWarning

from bot.platforms.base import PERMANENT, TRANSIENT, ChatAdapter, Piece, describe_error, run_until_stopped
from bot.service import Button, ChatEvent, GameService, Reply

PLATFORM = "telegram"
CAPTION_LIMIT = 1024
TEXT_LIMIT = 4096
ALERT_LIMIT = 200
STARTUP_GRACE_SECONDS = 5.0
CONCURRENT_UPDATES = 16
# Waits between attempts of one Bot API call after a 5xx or a network error: a few attempts, then
# the failure is reported.  Flood control (429) waits what Telegram asks, up to MAX_FLOOD_WAIT.
RETRY_DELAYS = (1.0, 3.0, 9.0)
MAX_FLOOD_WAIT = 60.0

log = logging.getLogger(__name__)
T = TypeVar("T")


def _transient(err: TelegramError) -> bool:
    """Worth another try: flood control, a 5xx or a network error (BadRequest is a NetworkError too)."""
    return isinstance(err, RetryAfter) or (isinstance(err, NetworkError) and not isinstance(err, BadRequest))


def _flood_wait(err: RetryAfter) -> float:
    # Reading retry_after warns about its coming type change; both types are handled here.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        value = err.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


def _utf16(text: str) -> int:
    """Telegram counts entity offsets and lengths in UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def _markup(buttons: list[list[Button]]) -> InlineKeyboardMarkup | None:
    if not buttons:
        return None
    return InlineKeyboardMarkup([[InlineKeyboardButton(b.label, callback_data=b.action) for b in row]
                                 for row in buttons])


# Refusals that mean the chat will never take a message from us (Forbidden covers "bot was kicked",
# "bot was blocked by the user", "user is deactivated").
_GONE = ("chat not found", "chat_write_forbidden", "have no rights to send", "not enough rights to send",
         "need administrator rights", "bot was kicked", "peer_id_invalid")


class DraughtsApplication(Application):  # type: ignore[misc]
    """The Application, whose start and stop also start and stop the adapter's delivery task
    (run_polling calls them; so can anyone driving the Application by hand)."""

    __slots__ = ("adapter",)

    def __init__(self, *, adapter: TelegramAdapter, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.adapter = adapter
        adapter.application = self

    async def start(self) -> None:
        await super().start()
        self.adapter.start_delivery()

    async def stop(self) -> None:
        await self.adapter.stop_delivery()
        await super().stop()


class TelegramAdapter(ChatAdapter):
    """Handlers for one bot token, all answered by one GameService."""

    platform = PLATFORM
    text_limit = TEXT_LIMIT
    caption_limit = CAPTION_LIMIT
    files_together = False
    # Updates sent while the bot was down arrive at once after a restart and are judged at their
    # send time: timed work already overdue at start waits this long, so that such a move is
    # played before a clock that ran out meanwhile is called.
    startup_grace = STARTUP_GRACE_SECONDS

    def __init__(self, service: GameService,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        super().__init__(service, sleep)
        self.bot: Bot | None = None
        self.application: Application | None = None

    def stop_platform(self) -> None:
        if self.application is not None and self.application.running:
            self.application.stop_running()

    def build(self, token: str, request: BaseRequest | None = None, rate_limiter: bool = True) -> Application:
        """The python-telegram-bot Application with our handlers; its start starts the delivery task."""
        builder = (Application.builder().token(token).concurrent_updates(CONCURRENT_UPDATES)
                   .application_class(DraughtsApplication, kwargs={"adapter": self}))
        if request is not None:
            builder = builder.request(request).get_updates_request(request)
        if rate_limiter:
            # Telegram allows about 1 message/s per chat and 20/min per group; the limiter
            # queues instead of failing, and retries after a 429.
            builder = builder.rate_limiter(AIORateLimiter(max_retries=2))
        app = builder.build()
        self.bot = app.bot
        app.add_handler(MessageHandler(filters.StatusUpdate.MIGRATE, self.on_migrate))
        app.add_handler(MessageHandler(filters.TEXT & filters.UpdateType.MESSAGE, self.on_message))
        app.add_handler(CallbackQueryHandler(self.on_button))
        app.add_error_handler(self.on_error)
        return app

    # -- incoming ------------------------------------------------------------------------------

    def _event(self, update: Update, context: ContextTypes.DEFAULT_TYPE, **fields: Any) -> ChatEvent | None:
        chat, user = update.effective_chat, update.effective_user
        if chat is None or user is None or user.is_bot:
            return None
        private = chat.type == "private"
        username = context.bot.username
        return ChatEvent(
            platform=PLATFORM, chat_id=str(chat.id), chat_kind="private" if private else "group",
            user_id=str(user.id), user_name=user.full_name, username=user.username,
            language=user.language_code, bot_username=username,
            # A group has no message one member alone sees; a private chat with the bot is the place.
            can_whisper=private, private_link=f"https://t.me/{username}?start={{payload}}" if username else None,
            is_admin=private, **fields)

    async def _is_admin(self, chat_id: int, user_id: int) -> bool:
        """Whether the user administers the group (asked only for the commands that need it)."""
        bot = self.bot
        assert bot is not None
        try:
            member = await self._api(lambda: bot.get_chat_member(chat_id, user_id))
        except TelegramError as err:
            log.info("could not ask whether user %s administers chat %s: %s", user_id, chat_id, err)
            return False
        return member.status in ("creator", "administrator")

    async def on_message(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A typed message: a command, or a bare move from a player."""
        msg = update.effective_message
        if msg is None or msg.text is None:
            return
        event = self._event(update, context, text=msg.text, sent_at=msg.date.timestamp(),
                            reply_to=str(msg.reply_to_message.message_id) if msg.reply_to_message else None)
        if event is None:
            return
        if not event.is_admin and self.service.needs_admin(event.text):
            event = replace(event, is_admin=await self._is_admin(msg.chat_id, msg.from_user.id))
        async with self.chat_lock(msg.chat_id):
            for reply in await self.call(self.service.handle, event):
                if reply.private and reply.reaction and event.chat_kind == "group":
                    # Meant for the sender alone, and a group has no such message: a reaction to
                    # theirs says it without a message for everyone.
                    if await self._react(msg, reply.reaction):
                        continue
                await self.send(msg.chat_id, reply, reply_to=msg.message_id)

    async def _react(self, msg: Message, emoji: str) -> bool:
        try:
            await self._api(lambda: msg.set_reaction(ReactionTypeEmoji(emoji)))
        except TelegramError as err:
            log.info("could not react in telegram chat %s: %s", msg.chat_id, err)
            return False
        return True

    async def on_button(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A button press: always answered, so the client stops its spinner."""
        query = update.callback_query
        if query is None:
            return
        message = query.message if isinstance(query.message, Message) else None
        event = self._event(update, context, action=query.data or "")
        if event is None or message is None:
            await self._answer(query)
            return
        async with self.chat_lock(message.chat_id):
            try:
                replies = await self.call(self.service.handle, event)
            except BaseException:
                # The failure goes on to the error handler; the spinner must stop all the same.
                await self._answer(query)
                raise
            private = [r for r in replies if r.private]
            # Telegram has no message only one member sees; an alert on the button is the closest,
            # and a board for one member (a puzzle) waits in their private chat with the bot.
            board = next((r for r in private if r.start_payload and r.image is not None), None)
            if board is not None and event.chat_kind == "group" and event.private_link:
                await self._answer(query, url=event.private_link.format(payload=board.start_payload))
            else:
                await self._answer(query, private[0].text[:ALERT_LIMIT] if private else None)
            for reply in replies:
                if reply.private:
                    continue
                if reply.replaces_board and reply.image is not None:
                    await self.edit(message, reply)
                else:
                    await self.send(message.chat_id, reply)

    async def _answer(self, query: Any, alert: str | None = None, url: str | None = None) -> None:
        # The move may already be played: a refused answer (a query too old after a restart)
        # must not keep the new board from being shown.
        try:
            if url is not None:
                await self._api(lambda: query.answer(url=url))
            else:
                await self._api(lambda: query.answer(alert, show_alert=bool(alert)))
        except TelegramError as err:
            log.info("could not answer a button press: %s", err)

    async def on_migrate(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A group became a supergroup and got a new id: its games follow it."""
        msg = update.effective_message
        if msg is not None and msg.migrate_to_chat_id:
            await self.call(self.service.chat_moved, PLATFORM, str(msg.chat_id), str(msg.migrate_to_chat_id))

    async def on_error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        log.error("telegram handler failed: %r", context.error, exc_info=context.error)

    # -- outgoing ----------------------------------------------------------------------------------

    def failure_kind(self, exc: BaseException) -> str:
        if isinstance(exc, Forbidden):
            return PERMANENT
        if isinstance(exc, BadRequest) and any(words in str(exc).lower() for words in _GONE):
            return PERMANENT
        return TRANSIENT

    async def deliver(self, chat_id: str | int, reply: Reply, *, reply_to: str | int | None = None) -> None:
        """Every message of a reply; a chat that became a supergroup is followed to its new id."""
        try:
            await super().deliver(str(chat_id), reply, reply_to=None if reply_to is None else str(reply_to))
        except ChatMigrated as moved:
            await self.call(self.service.chat_moved, PLATFORM, str(chat_id), str(moved.new_chat_id))
            await super().deliver(str(moved.new_chat_id), reply)

    async def send(self, chat_id: int | str, reply: Reply, reply_to: int | None = None) -> None:
        """Answer in a chat.  A chat that removed us or is gone is skipped (logged); a send that
        still fails after its retries (or would have to wait out a long flood control) goes to the
        outbox, which keeps trying with backoff; any other refusal is raised."""
        try:
            await self.deliver(chat_id, reply, reply_to=reply_to)
        except Forbidden:
            log.info("telegram chat %s does not accept our messages any more", chat_id)
        except TelegramError as err:
            if self.failure_kind(err) == PERMANENT:
                log.warning("reply to telegram chat %s not delivered: %s", chat_id, err)
                return
            if not _transient(err):
                raise
            log.warning("reply to telegram chat %s not delivered yet (%s): the outbox will try again", chat_id, err)
            await self.call(self.service.queue_reply, PLATFORM, str(chat_id), reply, describe_error(err))

    async def _api(self, call: Callable[[], Awaitable[T]]) -> T:
        """One Bot API call, tried again after a transient failure; the last failure is raised.

        A timed-out send may have arrived after all, so a retry can show a board twice; that is
        the lesser harm (the older copy's buttons are answered as stale), a missing board is not."""
        for attempt in range(len(RETRY_DELAYS) + 1):
            try:
                return await call()
            except TelegramError as err:
                if not _transient(err) or attempt == len(RETRY_DELAYS):
                    raise
                wait = _flood_wait(err) + 0.1 if isinstance(err, RetryAfter) else RETRY_DELAYS[attempt]
                if wait > MAX_FLOOD_WAIT:
                    raise
                log.info("telegram call failed (%s); try %d in %.1f s", err, attempt + 2, wait)
                await self.sleep(wait)
        raise AssertionError("unreachable")

    async def send_piece(self, chat_id: str, piece: Piece, *, reply_to: str | None = None) -> str | None:
        bot = self.bot
        assert bot is not None, "build() first"
        chat = int(chat_id)
        markup = _markup(piece.buttons)
        answer: dict[str, Any] = {}
        if reply_to is not None:
            answer = {"reply_to_message_id": int(reply_to), "allow_sending_without_reply": True}
        caption = piece.text or None
        if piece.image is not None:
            photo = InputFile(piece.image, filename="board.png")
            sent = await self._api(lambda: bot.send_photo(chat, photo, caption=caption, reply_markup=markup, **answer))
        elif piece.animation is not None:
            gif = InputFile(piece.animation, filename="capture.gif")
            sent = await self._api(lambda: bot.send_animation(chat, gif, caption=caption, reply_markup=markup,
                                                              **answer))
        elif piece.document is not None:
            name, data = piece.document
            document = InputFile(data, filename=name)
            sent = await self._api(lambda: bot.send_document(chat, document, caption=caption, reply_markup=markup,
                                                             **answer))
        elif piece.spoiler:
            head = f"{piece.text}\n" if piece.text else ""
            hidden = MessageEntity(MessageEntity.SPOILER, _utf16(head), _utf16(piece.spoiler))
            sent = await self._api(lambda: bot.send_message(chat, head + piece.spoiler, entities=[hidden],
                                                            reply_markup=markup, **answer))
        else:
            sent = await self._api(lambda: bot.send_message(chat, piece.text, reply_markup=markup, **answer))
        return str(sent.message_id)

    async def edit(self, message: Message, reply: Reply) -> None:
        """Replace a board message in place (a button step: piece chosen, move played, stale board).

        When Telegram will not edit it (deleted, too old, the chat moved, still failing after the
        retries), the board goes out as a new message instead: the move may already be stored."""
        fits = len(reply.text) <= CAPTION_LIMIT
        # attach=True makes the InputMedia name its upload ("media": "attach://<name>"); without
        # it the PNG goes up as a stray part and Telegram answers "media not found".
        media = InputMediaPhoto(InputFile(reply.image, filename="board.png", attach=True),
                                caption=reply.text if fits else reply.text[:CAPTION_LIMIT - 1] + "…")
        markup = _markup(reply.buttons)
        try:
            await self._api(lambda: message.edit_media(media, reply_markup=markup))
        except Forbidden as err:
            # The bot was removed from the chat: a new message would be refused as well.
            log.info("telegram chat %s refused the board edit: %s", message.chat_id, err)
            return
        except TelegramError as err:
            if not (isinstance(err, BadRequest) and "not modified" in str(err).lower()):
                log.info("board edit in telegram chat %s refused (%s); sending it anew", message.chat_id, err)
                await self.send(message.chat_id, reply)
                return
        await self.remember(message.chat_id, message.message_id, reply.game_id, reply.post_id)
        # What the edit could not carry follows as messages of its own: the full text, the GIF, a file.
        rest = replace(reply, image=None, buttons=[], game_id=None)
        if fits:
            rest = replace(rest, text="")
        for piece in self.pieces(rest):
            if piece.text or piece.has_file:
                await self.send_piece(str(message.chat_id), piece)


def build_application(token: str, *, service: GameService, request: BaseRequest | None = None,
                      rate_limiter: bool = True) -> Application:
    """The Application as production runs it (only the HTTP layer, ``request``, can be swapped)."""
    return TelegramAdapter(service).build(token, request=request, rate_limiter=rate_limiter)


def run_telegram(token: str, service: GameService, *, request: BaseRequest | None = None,
                 sleep: Callable[[float], object] = time.sleep) -> int:
    """Poll Telegram until stopped (exactly one process per token); 1 if the token is refused, if
    Telegram stays unreachable at start (retried with backoff), or if the database went away."""
    # httpx logs every request URL at INFO, and Telegram URLs contain the token.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    apps: list[DraughtsApplication] = []

    def attempt() -> None:
        # A fresh Application and loop each time: a failed start closes the loop it ran in.
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        app = build_application(token, service=service, request=request)
        apps.append(app)
        try:
            # getMe here, not in run_polling's bootstrap, which logs a failure with its traceback.
            loop.run_until_complete(app.initialize())
        except BaseException:
            loop.close()
            raise
        app.run_polling(allowed_updates=Update.ALL_TYPES)

    return run_until_stopped(attempt, refused=InvalidToken, transient=_transient_start,
                             fatal=lambda: apps[-1].adapter.fatal if apps else None, secret=token, sleep=sleep,
                             platform="Telegram", variable="TELEGRAM_BOT_TOKEN", where="with @BotFather")


def _transient_start(err: BaseException) -> bool:
    return isinstance(err, TelegramError) and _transient(err)
