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
"""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections import defaultdict
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, TypeVar

from telegram import (
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InputFile,
    InputMediaPhoto,
    Message,
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

from bot.service import ChatEvent, GameService, Reply

PLATFORM = "telegram"
CAPTION_LIMIT = 1024
TEXT_LIMIT = 4096
ALERT_LIMIT = 200
TICK_SECONDS = 30
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


def _chunks(text: str, size: int = TEXT_LIMIT) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


def _markup(reply: Reply) -> InlineKeyboardMarkup | None:
    if not reply.buttons:
        return None
    return InlineKeyboardMarkup([[InlineKeyboardButton(b.label, callback_data=b.action) for b in row]
                                 for row in reply.buttons])


class TelegramAdapter:
    """Handlers for one bot token, all answered by one GameService."""

    def __init__(self, service: GameService,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.service = service
        self._chat_locks: defaultdict[int, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._sleep = sleep

    def build(self, token: str, request: BaseRequest | None = None, rate_limiter: bool = True) -> Application:
        """The python-telegram-bot Application with our handlers and the deadline job."""
        builder = Application.builder().token(token).concurrent_updates(CONCURRENT_UPDATES)
        if request is not None:
            builder = builder.request(request).get_updates_request(request)
        if rate_limiter:
            # Telegram allows about 1 message/s per chat and 20/min per group; the limiter
            # queues instead of failing, and retries after a 429.
            builder = builder.rate_limiter(AIORateLimiter(max_retries=2))
        app = builder.build()
        app.add_handler(MessageHandler(filters.StatusUpdate.MIGRATE, self.on_migrate))
        app.add_handler(MessageHandler(filters.TEXT & filters.UpdateType.MESSAGE, self.on_message))
        app.add_handler(CallbackQueryHandler(self.on_button))
        app.add_error_handler(self.on_error)
        if app.job_queue is not None:
            # Deadlines live in the database; the job only looks at them.  The first look waits
            # one interval, so that moves sent while the bot was down (queued by Telegram, judged
            # at their send time) are likely played before a clock that ran out meanwhile is called.
            app.job_queue.run_repeating(self.on_tick, interval=TICK_SECONDS, first=TICK_SECONDS, name="deadlines")
        return app

    async def call(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run a service call in a worker thread (storage serializes its own connection)."""
        return await asyncio.to_thread(func, *args, **kwargs)

    # -- incoming ------------------------------------------------------------------------------

    def _event(self, update: Update, context: ContextTypes.DEFAULT_TYPE, **fields: Any) -> ChatEvent | None:
        chat, user = update.effective_chat, update.effective_user
        if chat is None or user is None or user.is_bot:
            return None
        return ChatEvent(
            platform=PLATFORM, chat_id=str(chat.id), chat_kind="private" if chat.type == "private" else "group",
            user_id=str(user.id), user_name=user.full_name, username=user.username,
            language=user.language_code, bot_username=context.bot.username, **fields)

    async def on_message(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A typed message: a command, or a bare move from a player."""
        msg = update.effective_message
        if msg is None or msg.text is None:
            return
        event = self._event(update, context, text=msg.text, sent_at=msg.date.timestamp(),
                            reply_to=str(msg.reply_to_message.message_id) if msg.reply_to_message else None)
        if event is None:
            return
        async with self._chat_locks[msg.chat_id]:
            for reply in await self.call(self.service.handle, event):
                await self.send(context, msg.chat_id, reply, reply_to=msg.message_id)

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
        async with self._chat_locks[message.chat_id]:
            try:
                replies = await self.call(self.service.handle, event)
            except BaseException:
                # The failure goes on to the error handler; the spinner must stop all the same.
                await self._answer(query)
                raise
            private = [r for r in replies if r.private]
            # Telegram has no message only one member sees; an alert on the button is the closest.
            await self._answer(query, private[0].text[:ALERT_LIMIT] if private else None)
            for reply in replies:
                if reply.private:
                    continue
                if reply.replaces_board and reply.image is not None:
                    await self.edit(context, message, reply)
                else:
                    await self.send(context, message.chat_id, reply)

    async def _answer(self, query: Any, alert: str | None = None) -> None:
        # The move may already be played: a refused answer (a query too old after a restart)
        # must not keep the new board from being shown.
        try:
            await self._api(lambda: query.answer(alert, show_alert=bool(alert)))
        except TelegramError as err:
            log.info("could not answer a button press: %s", err)

    async def on_migrate(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A group became a supergroup and got a new id: its games follow it."""
        msg = update.effective_message
        if msg is not None and msg.migrate_to_chat_id:
            await self.call(self.service.chat_moved, PLATFORM, str(msg.chat_id), str(msg.migrate_to_chat_id))

    async def on_tick(self, context: ContextTypes.DEFAULT_TYPE) -> None:
        """Reminders and losses on time; one chat that fails does not silence the others."""
        for outgoing in await self.call(self.service.tick, platform=PLATFORM):
            chat_id = int(outgoing.chat_id)
            try:
                async with self._chat_locks[chat_id]:
                    await self.send(context, chat_id, outgoing.reply)
            except TelegramError as err:
                log.warning("deadline message to telegram chat %s not delivered: %s", chat_id, err)

    async def on_error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        log.error("telegram handler failed: %r", context.error, exc_info=context.error)

    # -- outgoing ----------------------------------------------------------------------------------

    async def send(self, context: ContextTypes.DEFAULT_TYPE, chat_id: int, reply: Reply,
                   reply_to: int | None = None) -> None:
        """Post a reply; a chat that moved is followed, a chat that removed us is skipped."""
        try:
            await self._send(context, chat_id, reply, reply_to)
        except ChatMigrated as moved:
            await self.call(self.service.chat_moved, PLATFORM, str(chat_id), str(moved.new_chat_id))
            try:
                await self._send(context, moved.new_chat_id, reply, None)
            except TelegramError as err:
                log.warning("telegram chat %s (moved from %s) not reachable: %s", moved.new_chat_id, chat_id, err)
        except Forbidden:
            log.info("telegram chat %s does not accept our messages any more", chat_id)
        except TelegramError as err:
            if not _transient(err):
                raise
            # Telegram stayed unreachable through every retry: nothing more can be done now.
            log.warning("reply to telegram chat %s not delivered: %s", chat_id, err)

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
                await self._sleep(wait)
        raise AssertionError("unreachable")

    async def _send(self, context: ContextTypes.DEFAULT_TYPE, chat_id: int, reply: Reply,
                    reply_to: int | None) -> None:
        bot = context.bot
        markup = _markup(reply)
        if reply.image is not None:
            fits = len(reply.text) <= CAPTION_LIMIT
            photo = InputFile(reply.image, filename="board.png")
            sent = await self._api(lambda: bot.send_photo(
                chat_id, photo, caption=reply.text if fits else None, reply_markup=markup,
                reply_to_message_id=reply_to, allow_sending_without_reply=True))
            # Remembered before the rest goes out: the board is in the chat even if the rest fails.
            await self._remember(chat_id, sent.message_id, reply)
            if not fits:
                await self._texts(bot, chat_id, reply.text)
        else:
            parts = _chunks(reply.text)
            for i, part in enumerate(parts):
                last = i == len(parts) - 1
                sent = await self._api(lambda part=part, last=last, first=i == 0: bot.send_message(
                    chat_id, part, reply_markup=markup if last else None,
                    reply_to_message_id=reply_to if first else None, allow_sending_without_reply=True))
            await self._remember(chat_id, sent.message_id, reply)
        await self._extras(context, chat_id, reply)

    async def _remember(self, chat_id: int, message_id: int, reply: Reply) -> None:
        if reply.game_id is not None:
            await self.call(self.service.remember_board, PLATFORM, str(chat_id), str(message_id), reply.game_id)

    async def _extras(self, context: ContextTypes.DEFAULT_TYPE, chat_id: int, reply: Reply) -> None:
        """The capture animation and any file, each as its own message."""
        bot = context.bot
        if reply.animation is not None:
            gif = InputFile(reply.animation, filename="capture.gif")
            await self._api(lambda: bot.send_animation(chat_id, gif))
        if reply.document is not None:
            name, data = reply.document
            document = InputFile(data, filename=name)
            await self._api(lambda: bot.send_document(chat_id, document))

    async def _texts(self, bot: Any, chat_id: int, text: str) -> None:
        for part in _chunks(text):
            await self._api(lambda part=part: bot.send_message(chat_id, part))

    async def edit(self, context: ContextTypes.DEFAULT_TYPE, message: Message, reply: Reply) -> None:
        """Replace a board message in place (a button step: piece chosen, move played, stale board).

        When Telegram will not edit it (deleted, too old, the chat moved, still failing after the
        retries), the board goes out as a new message instead: the move may already be stored."""
        fits = len(reply.text) <= CAPTION_LIMIT
        # attach=True makes the InputMedia name its upload ("media": "attach://<name>"); without
        # it the PNG goes up as a stray part and Telegram answers "media not found".
        media = InputMediaPhoto(InputFile(reply.image, filename="board.png", attach=True),
                                caption=reply.text if fits else reply.text[:CAPTION_LIMIT - 1] + "…")
        markup = _markup(reply)
        try:
            await self._api(lambda: message.edit_media(media, reply_markup=markup))
        except Forbidden as err:
            # The bot was removed from the chat: a new message would be refused as well.
            log.info("telegram chat %s refused the board edit: %s", message.chat_id, err)
            return
        except TelegramError as err:
            if not (isinstance(err, BadRequest) and "not modified" in str(err).lower()):
                log.info("board edit in telegram chat %s refused (%s); sending it anew", message.chat_id, err)
                await self.send(context, message.chat_id, reply)
                return
        await self._remember(message.chat_id, message.message_id, reply)
        if not fits:
            await self._texts(context.bot, message.chat_id, reply.text)
        await self._extras(context, message.chat_id, reply)


def run_telegram(token: str, service: GameService) -> int:
    """Poll Telegram until stopped (exactly one process per token); 1 if the token is refused."""
    # httpx logs every request URL at INFO, and Telegram URLs contain the token.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    app = TelegramAdapter(service).build(token)
    try:
        app.run_polling(allowed_updates=Update.ALL_TYPES)
    except InvalidToken:
        # The library's own message quotes the token: say it in our words instead.
        log.error("Telegram refused TELEGRAM_BOT_TOKEN; check it with @BotFather")
        return 1
    return 0
