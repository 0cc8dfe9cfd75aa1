"""Telegram: turn updates into ChatEvents for the service and send its replies back.

No game logic lives here.  Commands and plain text go to the service as typed
(it parses ``/cmd@OurBot`` and ignores commands for other bots); button
presses carry the service's action strings as ``callback_data``.
"""

from __future__ import annotations

import logging

from telegram import (
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InputFile,
    InputMediaPhoto,
    Message,
    Update,
)
from telegram.error import BadRequest, ChatMigrated, Forbidden, TelegramError
from telegram.ext import (
    AIORateLimiter,
    Application,
    CallbackQueryHandler,
    ContextTypes,
    MessageHandler,
    filters,
)
from telegram.request import BaseRequest

from bot.service import ChatEvent, GameService, Reply

PLATFORM = "telegram"
CAPTION_LIMIT = 1024
TEXT_LIMIT = 4096
ALERT_LIMIT = 200
TICK_SECONDS = 30

log = logging.getLogger(__name__)


def _chunks(text: str, size: int = TEXT_LIMIT) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


def _markup(reply: Reply) -> InlineKeyboardMarkup | None:
    if not reply.buttons:
        return None
    return InlineKeyboardMarkup([[InlineKeyboardButton(b.label, callback_data=b.action) for b in row]
                                 for row in reply.buttons])


class TelegramAdapter:
    """Handlers for one bot token, all answered by one GameService."""

    def __init__(self, service: GameService) -> None:
        self.service = service

    def build(self, token: str, request: BaseRequest | None = None, rate_limiter: bool = True) -> Application:
        """The python-telegram-bot Application with our handlers and the deadline job."""
        builder = Application.builder().token(token)
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
            # at their send time) are played before a clock that ran out meanwhile is called.
            app.job_queue.run_repeating(self.on_tick, interval=TICK_SECONDS, first=TICK_SECONDS, name="deadlines")
        return app

    # -- incoming ------------------------------------------------------------------------------

    def _event(self, update: Update, context: ContextTypes.DEFAULT_TYPE, **fields) -> ChatEvent | None:
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
        for reply in self.service.handle(event):
            await self.send(context, msg.chat_id, reply, reply_to=msg.message_id)

    async def on_button(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A button press: always answered, so the client stops its spinner."""
        query = update.callback_query
        if query is None:
            return
        message = query.message if isinstance(query.message, Message) else None
        event = self._event(update, context, action=query.data or "")
        if event is None or message is None:
            await query.answer()
            return
        replies = self.service.handle(event)
        private = [r for r in replies if r.private]
        # Telegram has no message only one member sees; an alert on the button is the closest.
        await query.answer(private[0].text[:ALERT_LIMIT] if private else None, show_alert=bool(private))
        for reply in replies:
            if reply.private:
                continue
            if reply.replaces_board and reply.image is not None:
                await self.edit(message, reply)
            else:
                await self.send(context, message.chat_id, reply)

    async def on_migrate(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A group became a supergroup and got a new id: its games follow it."""
        msg = update.effective_message
        if msg is not None and msg.migrate_to_chat_id:
            self.service.chat_moved(PLATFORM, str(msg.chat_id), str(msg.migrate_to_chat_id))

    async def on_tick(self, context: ContextTypes.DEFAULT_TYPE) -> None:
        """Reminders and losses on time."""
        for outgoing in self.service.tick(platform=PLATFORM):
            await self.send(context, int(outgoing.chat_id), outgoing.reply)

    async def on_error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        log.error("telegram handler failed: %r", context.error, exc_info=context.error)

    # -- outgoing ----------------------------------------------------------------------------------

    async def send(self, context: ContextTypes.DEFAULT_TYPE, chat_id: int, reply: Reply,
                   reply_to: int | None = None) -> None:
        """Post a reply; a chat that moved is followed, a chat that removed us is skipped."""
        try:
            await self._send(context, chat_id, reply, reply_to)
        except ChatMigrated as moved:
            self.service.chat_moved(PLATFORM, str(chat_id), str(moved.new_chat_id))
            await self._send(context, moved.new_chat_id, reply, None)
        except Forbidden:
            log.info("telegram chat %s does not accept our messages any more", chat_id)

    async def _send(self, context: ContextTypes.DEFAULT_TYPE, chat_id: int, reply: Reply,
                    reply_to: int | None) -> None:
        bot = context.bot
        markup = _markup(reply)
        if reply.image is not None:
            fits = len(reply.text) <= CAPTION_LIMIT
            sent = await bot.send_photo(chat_id, InputFile(reply.image, filename="board.png"),
                                        caption=reply.text if fits else None, reply_markup=markup,
                                        reply_to_message_id=reply_to, allow_sending_without_reply=True)
            if reply.game_id is not None:
                self.service.remember_board(PLATFORM, str(chat_id), str(sent.message_id), reply.game_id)
            if not fits:
                for part in _chunks(reply.text):
                    await bot.send_message(chat_id, part)
        else:
            parts = _chunks(reply.text)
            for i, part in enumerate(parts):
                last = i == len(parts) - 1
                await bot.send_message(chat_id, part, reply_markup=markup if last else None,
                                       reply_to_message_id=reply_to if i == 0 else None,
                                       allow_sending_without_reply=True)
        if reply.animation is not None:
            await bot.send_animation(chat_id, InputFile(reply.animation, filename="capture.gif"))
        if reply.document is not None:
            name, data = reply.document
            await bot.send_document(chat_id, InputFile(data, filename=name))

    async def edit(self, message: Message, reply: Reply) -> None:
        """Replace a board message in place (a button step: piece chosen, back, stale board)."""
        text = reply.text[:CAPTION_LIMIT]
        try:
            await message.edit_media(InputMediaPhoto(InputFile(reply.image, filename="board.png"), caption=text),
                                     reply_markup=_markup(reply))
        except BadRequest as err:
            if "not modified" not in str(err).lower():
                raise
        if reply.game_id is not None:
            self.service.remember_board(PLATFORM, str(message.chat_id), str(message.message_id), reply.game_id)


def run_telegram(token: str, service: GameService) -> None:
    """Poll Telegram until stopped (exactly one process per token)."""
    # httpx logs every request URL at INFO, and Telegram URLs contain the token.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    app = TelegramAdapter(service).build(token)
    try:
        app.run_polling(allowed_updates=Update.ALL_TYPES)
    except TelegramError as err:
        log.error("telegram stopped: %s", err)
        raise
