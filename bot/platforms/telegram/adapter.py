"""Telegram: turn updates into ChatEvents for the service and send its replies back.

No game logic lives here.  Commands and plain text go to the service as typed
(it parses ``/cmd@OurBot`` and ignores commands for other bots); button
presses carry the service's action strings as ``callback_data``.

Updates are handled concurrently, but one chat at a time and in order (a lock
per chat), so a group held back by Telegram's per-group rate limit does not
hold back the others.  The service does SQLite and Pillow work, so it runs in a
worker thread, off the event loop.

Flood control is kept per chat (``FloodLimiter``): a message that would have to
wait long for its chat's turn goes to the outbox with that not-before time, and
the other chats go on.  A button press is answered at once, before the chat's
queue and the service (Telegram gives up on an answer after about 15 s); when
the service's private answer (an alert) comes too late for that, it is posted
in the chat as a message instead, so the presser still reads it.

A move is stored before its board is shown, so the board must reach the chat:
every Bot API call is retried a few times on a 5xx or a network error, a reply
that still fails waits in the outbox (resuming from the message that failed),
and a board edit Telegram refuses is replaced by a new board message.  A 400 is
final for that message: an optional part refused (the capture GIF, a PDN) is
left out; a board photo in a group that forbids photos becomes the text board
with its buttons, and the group is told once.

Inline mode (``@OurBot`` typed in any chat) offers a challenge per variant whose Accept button
carries the offer, signed by the service; an inline message is a chat of its own to the service
(``inline:<inline_message_id>``), and everything it says there is delivered as an edit of that
message, in words, with the game's Open board button (see bot.platforms.telegram.inline).

What is shared with the other adapters (service calls off the loop, per-chat order,
splitting a reply into messages, remembering boards, the outbox delivery task) is in
bot.platforms.base; this module only speaks the Bot API.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import sys
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, NotRequired, TypedDict, TypeVar

from telegram import (
    Bot,
    BotCommand,
    CallbackQuery,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InlineQueryResultArticle,
    InputFile,
    InputMediaPhoto,
    InputTextMessageContent,
    Message,
    MessageEntity,
    ReactionTypeEmoji,
    Update,
    User,
    WebAppInfo,
)
from telegram._utils.defaultvalue import DEFAULT_NONE
from telegram._utils.types import ODVInput
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Conflict,
    Forbidden,
    InvalidToken,
    NetworkError,
    RetryAfter,
    TelegramError,
)
from telegram.ext import (
    Application,
    BaseRateLimiter,
    CallbackQueryHandler,
    ContextTypes,
    InlineQueryHandler,
    MessageHandler,
    filters,
)
from telegram.request import BaseRequest, HTTPXRequest, RequestData

from bot import config as env_config
from bot.i18n import DEFAULT_LANGUAGE, LANGUAGES, pick_language, t
from bot.platforms.base import (
    PERMANENT,
    REFUSED,
    TRANSIENT,
    ChatAdapter,
    Piece,
    Progress,
    describe_error,
    run_until_stopped,
)
from bot.platforms.telegram.inline import (
    WEB_URL_VARIABLE,
    WEBAPP_VARIABLE,
    board_link,
    inline_chat,
    inline_message_id,
    is_inline_chat,
)
from bot.platforms.telegram.limiter import FloodLimiter, retry_seconds, shared_budget
from bot.platforms.telegram.webhook import (
    LISTEN_VARIABLE,
    PORT_VARIABLE,
    URL_VARIABLE,
    WebhookConfig,
    WebhookConfigError,
    webhook_config,
)
from bot.platforms.web import WebConfig, start_web
from bot.platforms.web.server import ConfigProblem
from bot.service import (
    DM_PREFIX,
    Button,
    ChatEvent,
    GameService,
    Mention,
    Reply,
    StorageError,
    mention_at,
)
from bot.service.chat.registry import REGISTRY

PLATFORM = "telegram"
# The deep link an Open board button opens without a Mini App: /start w<game> in the private chat.
WEB_START_PREFIX = "w"
CAPTION_LIMIT = 1024
TEXT_LIMIT = 4096
ALERT_LIMIT = 200
STARTUP_GRACE_SECONDS = 5.0
# The outbox's notification kinds (OutboxItem.kind) that the service sends on its own to many
# chats at the same time and nobody in the chat is waiting for: the daily puzzle, yesterday's
# summary, the scheduled clock reminders.  Delivered as bulk, behind every reply to a person
# (issue 29; see the limiter).
BULK_KINDS = frozenset({"daily_posted", "day_summary", "reminder", "private_reminder"})
# Updates handled at once.  A handler waiting for a busy group's lock holds one of these, so there
# are enough that a burst in one group leaves room for every other chat.
CONCURRENT_UPDATES = 256
# Waits between attempts of one Bot API call after a 5xx or a network error: a few attempts, then
# the failure is reported.  Flood control (429) is the limiter's: it waits a short one itself and
# raises a longer one, which is never slept through here (the message waits in the outbox).
RETRY_DELAYS = (1.0, 3.0, 9.0)
MAX_FLOOD_WAIT = 60.0
GENERAL_THREAD = 1
TOPIC_NAME_LIMIT = 128
COMMAND_DESCRIPTION_LIMIT = 256
# Telegram serves one getUpdates long poll per token: a newer one ends the one under way with 409
# Conflict.  A restart that overlaps the old process's last poll gives one; this many within the
# window mean another process polls, and this one stops without polling again (see _PollGuard), so
# the other one's poll, the newest, stands and it serves the token alone.
CONFLICTS_TO_STOP = 3
CONFLICT_WINDOW_SECONDS = 60.0
_NO_UPDATES = b'{"ok": true, "result": []}'
# A button press is answered with the service's alert when the service is done within this long;
# else at once without, and the alert follows as a message (Telegram drops late answers).
ANSWER_WITHIN_SECONDS = 0.7
# How long Telegram may show a user the same inline results again: never, since each offer has a
# nonce of its own and starts one game (two challenges sent from cached results would be one
# offer).  They are personal too (signed with the user's id).
INLINE_CACHE_SECONDS = 0

log = logging.getLogger(__name__)
T = TypeVar("T")


class StaleBoard(Exception):
    """A board edit dropped before an attempt: the game, or the message, is past the board it shows."""


def _transient(err: TelegramError) -> bool:
    """Worth another try: flood control, a 5xx or a network error (BadRequest is a NetworkError too)."""
    return isinstance(err, RetryAfter) or (isinstance(err, NetworkError) and not isinstance(err, BadRequest))


def _flood_wait(err: RetryAfter) -> float:
    return retry_seconds(err)


def _utf16(text: str) -> int:
    """Telegram counts entity offsets and lengths in UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def _fits(text: str, limit: int) -> bool:
    """Within one of Telegram's length limits, which count UTF-16 code units (an emoji is two)."""
    return _utf16(text) <= limit


def _clip(text: str, limit: int, mark: str = "") -> str:
    """The text cut to a Telegram length limit (UTF-16 code units), ending with ``mark`` when cut;
    never in the middle of a character."""
    if _fits(text, limit):
        return text
    room = limit - _utf16(mark)
    out, used = [], 0
    for char in text:
        used += 2 if ord(char) > 0xFFFF else 1
        if used > room:
            break
        out.append(char)
    return "".join(out) + mark


def _captioned(text: str, alt: str | None) -> str:
    """A photo's caption: its text first, then the picture in words (``Reply.alt``) in the room left
    under the caption limit, cut with "…" when it does not fit whole (the text is never cut for it)."""
    if not alt:
        return text
    head = f"{text}\n\n" if text else ""
    room = CAPTION_LIMIT - _utf16(head)
    # Less room than a sentence's worth says nothing useful: the caption stays as it was.
    if room < 40:
        return text
    return head + _clip(alt, room, "…")


def chat_key(chat_id: int, thread_id: int | None = None) -> str:
    """Our id of a Telegram chat.  A forum topic is a chat of its own (games, settings, the daily
    post): "<chat>:<topic>".  General (thread 1, or none) is the group itself."""
    return f"{chat_id}:{thread_id}" if thread_id and thread_id != GENERAL_THREAD else str(chat_id)


def chat_address(key: str | int) -> tuple[int, int | None]:
    """Where ``chat_key`` points: the Telegram chat id and the topic's message_thread_id (None
    for General and chats without topics).  A user's private chat in the outbox ("dm:<user id>",
    for private turn notices) has the user's id."""
    key = str(key)
    if key.startswith(DM_PREFIX):
        return int(key.removeprefix(DM_PREFIX)), None
    chat, _, thread = key.partition(":")
    return int(chat), (int(thread) if thread else None)


def _key_of(message: Message) -> str:
    # In a group that is not a forum, message_thread_id names a reply thread, not a topic.
    return chat_key(message.chat_id, message.message_thread_id if message.is_topic_message else None)


def _replied(message: Message) -> str | None:
    """The message this one replies to, if the user chose one: in a topic Telegram makes every
    message a reply to the topic's creation message."""
    original = message.reply_to_message
    if original is None or original.forum_topic_created is not None or (
            message.is_topic_message and original.message_id == message.message_thread_id):
        return None
    return str(original.message_id)


def command_menu(lang: str) -> list[BotCommand]:
    """The command menu clients show, in a language, from the command table: what /help lists,
    each with its /help line, and /help itself."""
    menu = []
    for spec in REGISTRY:
        if not (spec.listed or spec.name == "help"):
            continue
        line = t(lang, f"help.{spec.name}").removeprefix("- ").strip()
        if len(line) > COMMAND_DESCRIPTION_LIMIT:
            line = line[:COMMAND_DESCRIPTION_LIMIT - 1] + "…"
        menu.append(BotCommand(spec.name, line))
    return menu


def _mentions(text: str, mentions: tuple[Mention, ...]) -> list[MessageEntity]:
    """A text mention over each mentioned name: Telegram notifies that user (with or without a
    @username), and no one else; offsets count UTF-16 code units."""
    entities = []
    for mention in mentions:
        at = mention_at(text, mention.name)
        if at is None or not mention.user_id.isdigit():
            continue
        user = User(int(mention.user_id), mention.name, is_bot=False, username=mention.username)
        entities.append(MessageEntity(MessageEntity.TEXT_MENTION, _utf16(text[:at]), _utf16(mention.name), user=user))
    return entities


def _text_board(text: str, board: str | None) -> tuple[str, list[MessageEntity]]:
    """A board drawn in text under its caption, in monospace (where photos are not allowed)."""
    if not board:
        return text or "\u200b", []
    head = f"{text}\n\n" if text else ""
    return head + board, [MessageEntity(MessageEntity.PRE, _utf16(head), _utf16(board))]


def _button(button: Button) -> InlineKeyboardButton:
    if button.url is not None and button.web_app:
        return InlineKeyboardButton(button.label, web_app=WebAppInfo(button.url))
    if button.url is not None:
        return InlineKeyboardButton(button.label, url=button.url)
    return InlineKeyboardButton(button.label, callback_data=button.action)


def _markup(buttons: list[list[Button]]) -> InlineKeyboardMarkup | None:
    if not buttons:
        return None
    return InlineKeyboardMarkup([[_button(b) for b in row] for row in buttons])


def _ping_on_board(replies: list[Reply]) -> list[Reply]:
    """A button move's board and the ping of the player to move as one new board message.

    Edits count against a group's ~20 posts a minute as much as messages do, and an edit notifies
    no one: editing the board and then pinging costs two posts where one new board that pings
    does (a button move: the piece's edit, then this).  The board it replaces is left as it was;
    its buttons are answered as stale.  A board without a ping (the bot to move, the game over)
    is still edited in place."""
    out: list[Reply] = []
    for reply in replies:
        board = out[-1] if out else None
        if (board is not None and board.replaces_board and board.image is not None and reply.mentions
                and reply.image is None and reply.animation is None and reply.document is None
                and not reply.buttons and reply.game_id in (None, board.game_id)):
            mentions = [*board.mentions, *reply.mentions]
            named = all(m.name in board.text for m in reply.mentions)
            text = board.text if named else f"{board.text}\n{reply.text}"
            out[-1] = replace(board, text=text, mentions=mentions, replaces_board=False)
            continue
        out.append(reply)
    return out


# Telegram's limit on an inline keyboard's buttons: a board that has this many gets no Open board.
KEYBOARD_LIMIT = 100


# Refusals that mean the chat will never take a message from us (Forbidden covers "bot was kicked",
# "bot was blocked by the user", "user is deactivated").  Missing rights to send photos, GIFs or
# files concern only those messages ("not enough rights to send photos to the chat").
_GONE = ("chat not found", "chat_write_forbidden", "have no rights to send a message",
         "not enough rights to send text messages", "need administrator rights", "bot was kicked",
         "peer_id_invalid",
         # a closed topic (or General) or a deleted one: the bot may not post there
         "topic_closed", "message thread not found")
_NO_PHOTOS = "not enough rights to send photos"
# An edit refused because the message is not there to edit (deleted, or one Telegram no longer
# lets the bot edit): a new message can show what the edit would have.
_EDIT_GONE = ("message to edit not found", "message can't be edited")


@dataclass(frozen=True)
class _Place:
    """A place of its own made for a command: its chat key, a link that opens it, its name."""

    chat_id: str
    link: str
    name: str


class _Sender(TypedDict):
    """Who wrote, as ChatEvent's fields: a person, or a chat written as (``as_chat``)."""

    user_id: str
    user_name: str
    username: str | None
    language: str | None
    is_admin: bool
    as_chat: NotRequired[bool]


class DraughtsApplication(Application):
    """The Application, whose start and stop also start and stop the adapter's delivery task
    (run_polling calls them; so can anyone driving the Application by hand)."""

    __slots__ = ("adapter",)

    def __init__(self, *, adapter: TelegramAdapter, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.adapter = adapter
        adapter.application = self

    async def start(self) -> None:
        await super().start()
        # The web board shares this loop; before delivery, so the first boards carry its button.
        await self.adapter.start_web()
        self.adapter.start_delivery()
        self.adapter.start_menu()

    async def stop(self) -> None:
        await self.adapter.stop_menu()
        await self.adapter.stop_delivery()
        await self.adapter.stop_web()
        await super().stop()


class TelegramAdapter(ChatAdapter):
    """Handlers for one bot token, all answered by one GameService."""

    platform = PLATFORM
    answer_within = ANSWER_WITHIN_SECONDS
    text_limit = TEXT_LIMIT
    caption_limit = CAPTION_LIMIT
    files_together = False
    # Updates sent while the bot was down arrive at once after a restart and are judged at their
    # send time: timed work already overdue at start waits this long, so that such a move is
    # played before a clock that ran out meanwhile is called.
    startup_grace = STARTUP_GRACE_SECONDS

    def __init__(self, service: GameService,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 env: Mapping[str, str] | None = None) -> None:
        super().__init__(service, sleep)
        # Where the web board is (see bot.platforms.telegram.inline.board_link): read at each use.
        # The entry point passes bot.config's Config.environ; None: every default (no board).
        self.env: Mapping[str, str] = {} if env is None else env
        self.bot: Bot | None = None
        self.application: Application | None = None
        self._conflicts: deque[float] = deque()
        self._webhook_conflict = False         # the last 409 said a webhook is set, not another poller
        self._conflict_told = False
        self._menu: asyncio.Task[None] | None = None
        self.conflicted = False               # stopped because another process polls with the token
        self._told_no_photos: set[str] = set()
        # (group, member, post) whose private-chat link was posted: once is enough.
        self._told_private: set[tuple[str, str, int | None]] = set()
        # Members whose private chat with the bot refused a message (not started, or blocked),
        # until they write there.
        self._closed_private: set[str] = set()
        self._token: str | None = None        # the bot token: the board checks Mini App initData with it
        self.limiter: FloodLimiter | None = None    # production's limiter, when the Application uses it

    # -- the web board (docs/web.md), served in this adapter's loop -------------------------------

    async def start_web(self) -> None:
        """Serve the web board when ``WEB_URL`` is set (its public address, for links): on
        ``$PORT``, or ``$WEB_PORT`` (webhook mode, where ``$PORT`` is the webhook's).  A board that
        cannot start is logged and left off; the chat goes on without it."""
        if self.web_server is not None or not self.env.get(WEB_URL_VARIABLE, "").strip():
            return
        try:
            config = replace(WebConfig.from_env("0.0.0.0", self.env), telegram_token=self._token)
            self.web_server = await start_web(self.service, config)
        except (ConfigProblem, OSError) as err:
            log.error("the web board cannot start: %s", err)
            return
        app = self.env.get(WEBAPP_VARIABLE, "").strip() or None
        self.service.chat.serve_web(self.web_server.url, self.service.web, app)
        log.info("web board at %s (port %d)", self.web_server.url, self.web_server.port)

    async def with_board_button(self, chat_id: str, reply: Reply) -> Reply:
        """A game's board with an Open board button under it (the Mini App's direct link, or the
        link that opens the private chat where /web gives a seat link) while the board runs."""
        links = self.service.chat.web
        bot = self.bot
        if (links is None or bot is None or reply.game_id is None or is_inline_chat(chat_id)
                or (reply.image is None and not reply.board_text)):
            return reply
        if sum(len(row) for row in reply.buttons) >= KEYBOARD_LIMIT:
            return reply
        # Signed with the game's key (read from the database once): off the event loop.
        url = await self.call(links.mini_app, reply.game_id, bot.username)
        if url is None:
            if not bot.username:
                return reply
            url = await self.call(links.start_link, reply.game_id, bot.username)
        if any(b.url is not None for row in reply.buttons for b in row):
            return reply                    # it has one already (a retry from the outbox)
        label = await self.call(self.service.notice, PLATFORM, chat_id, "weblink.open")
        row = [Button(label, "", url=url)]
        if (reply.board_stage is not None and reply.board_stage % 2 == 1
                and sum(len(r) for r in reply.buttons) + len(row) < KEYBOARD_LIMIT):
            # A finished game's board: its Review button beside Open board (the page at the game's
            # first position); the chat layer says whether this chat may be given it.
            user = chat_address(chat_id)[0]
            review = await self.call(self.service.chat.review_button, PLATFORM, chat_id, reply.game_id,
                                     private_user=str(user) if user > 0 else None, bot_username=bot.username)
            if review is not None:
                row.append(review)
        return replace(reply, buttons=[*reply.buttons, row])

    def stop_platform(self) -> None:
        if self.application is not None and self.application.running:
            self.application.stop_running()

    def build(self, token: str, request: BaseRequest | None = None,
              rate_limiter: bool | BaseRateLimiter = True) -> DraughtsApplication:
        """The python-telegram-bot Application with our handlers; its start starts the delivery
        task.  ``rate_limiter``: True for production's ``FloodLimiter``, or a limiter to use."""
        self._token = token
        # No JobQueue: timed work is the outbox's; PTB would otherwise start an APScheduler thread
        # whenever that package happens to be installed.
        builder = (Application.builder().token(token).concurrent_updates(CONCURRENT_UPDATES).job_queue(None)
                   .application_class(DraughtsApplication, kwargs={"adapter": self}))
        if request is not None:
            builder = builder.request(request)
        # PTB's own default for getUpdates (one connection), with the conflict guard around it.
        builder = builder.get_updates_request(
            _PollGuard(request if request is not None else HTTPXRequest(connection_pool_size=1), self))
        if rate_limiter:
            # Telegram allows about 1 message/s per chat, 20/min per group, 30/s in all; the
            # limiter spaces messages per chat and leaves a long wait to the outbox.
            # Webhook workers share one budget through the database (Telegram's limits are the bot's).
            limiter = FloodLimiter(shared=shared_budget(self.service.storage.sends, self.env)) \
                if rate_limiter is True else rate_limiter
            builder = builder.rate_limiter(limiter)
            self.limiter = limiter if isinstance(limiter, FloodLimiter) else None
        app = builder.build()
        if not isinstance(app, DraughtsApplication):    # application_class says it is; PTB types the base
            raise TypeError(f"the builder made a {type(app).__name__}, not a DraughtsApplication")
        self.bot = app.bot
        app.add_handler(MessageHandler(filters.StatusUpdate.MIGRATE, self.on_migrate))
        app.add_handler(MessageHandler(filters.TEXT & filters.UpdateType.MESSAGE, self.on_message))
        app.add_handler(CallbackQueryHandler(self.on_button))
        app.add_handler(InlineQueryHandler(self.on_inline_query))
        app.add_error_handler(self.on_error)
        return app

    # -- the command menu -------------------------------------------------------------------------

    def start_menu(self) -> None:
        """Register the command menu in the background: a start-up is not held up by it."""
        if self._menu is None or self._menu.done():
            self._menu = asyncio.create_task(self.register_commands(), name="telegram-menu")

    async def stop_menu(self) -> None:
        task, self._menu = self._menu, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def register_commands(self) -> None:
        """The command menu for every chat, in each catalog language and as the default for
        other client languages.  A group with several bots needs it: picked from the menu, a
        command is addressed to us (/m@OurBot), and with privacy mode on a bare /m reaches only
        the bot that spoke last."""
        bot = self.bot
        assert bot is not None, "build() first"
        for lang in (None, *LANGUAGES):
            menu = command_menu(lang or DEFAULT_LANGUAGE)
            try:
                await self._api(functools.partial(bot.set_my_commands, menu, language_code=lang))
            except TelegramError as err:
                # Only the menu is missing: every command still works when typed.
                log.warning("telegram command menu (%s) not registered: %s", lang or "default", err)
                return

    # -- incoming ------------------------------------------------------------------------------

    def _event(self, update: Update, context: ContextTypes.DEFAULT_TYPE, **fields: Any) -> ChatEvent | None:
        chat, user = update.effective_chat, update.effective_user
        if chat is None:
            return None
        private = chat.type == "private"
        username = context.bot.username
        # Written as a chat: ``from`` is a service bot (@GroupAnonymousBot for an anonymous admin,
        # who writes as the group itself; @Channel_Bot for a member posting as their channel).
        message = update.message
        as_chat = message.sender_chat if message is not None else None
        if message is not None and as_chat is not None:
            if message.is_automatic_forward:
                return None                    # a channel's post copied into its discussion group
            who: _Sender = {"user_id": str(as_chat.id), "user_name": as_chat.effective_name or str(as_chat.id),
                            "username": as_chat.username, "language": None, "as_chat": True,
                            "is_admin": as_chat.id == chat.id}
        elif user is None or user.is_bot:
            return None
        else:
            who = {"user_id": str(user.id), "user_name": user.full_name, "username": user.username,
                   "language": user.language_code, "is_admin": private}
        return ChatEvent(
            platform=PLATFORM, chat_id=self._chat_of(update, chat.id), chat_kind="private" if private else "group",
            bot_username=username,
            # A group has no message one member alone sees; a private chat with the bot is the place.
            can_whisper=private, private_link=f"https://t.me/{username}?start={{payload}}" if username else None,
            **who, **fields)

    @staticmethod
    def _chat_of(update: Update, chat_id: int) -> str:
        message = update.effective_message          # a button's message, for a press
        return _key_of(message) if isinstance(message, Message) else str(chat_id)

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
        event = self._event(update, context, text=msg.text, sent_at=msg.date.timestamp(), reply_to=_replied(msg))
        if event is None:
            return
        if event.chat_kind == "private":
            self._closed_private.discard(event.user_id)
        # Not written as a chat, so from a person: the message has a sender.
        sender = msg.from_user
        if not event.is_admin and not event.as_chat and sender is not None and self.service.needs_admin(event.text):
            event = replace(event, is_admin=await self._is_admin(msg.chat_id, sender.id))
        place = await self._own_place(event, msg)
        if place is not None:
            await self._in_own_place(event, msg, place)
            return
        async with self.chat_lock(event.chat_id):
            await self._answer_message(event, msg, await self.call(self.service.handle, event), msg.message_id)

    async def _answer_message(self, event: ChatEvent, msg: Message, replies: list[Reply],
                              reply_to: int | None) -> None:
        """The service's replies to a typed message, sent in ``event``'s chat."""
        for reply in replies:
            if reply.private and event.chat_kind == "group" and (reply.reaction or reply.start_payload):
                # Meant for the sender alone, and a group has no such message: a reaction to
                # theirs says it without a message for everyone, and a puzzle's step goes to
                # their private chat with the bot.
                reacted = bool(reply.reaction) and await self._react(msg, reply.reaction or "")
                if reply.start_payload:
                    await self._to_member(event, reply, msg.message_id)
                    continue
                if reacted:
                    continue
            await self.send(event.chat_id, reply, reply_to=reply_to)

    # -- a place of its own: a forum topic the bot makes (a tournament's) -----------------------------

    async def _own_place(self, event: ChatEvent, msg: Message) -> _Place | None:
        """The forum topic made for a command that opens a place of its own (``CommandSpec.place_words``,
        /tournament new), or None, and the group itself is used: not such a command, a use of it
        the sender may not make (it is refused where it was asked), not a forum, or Telegram
        refused the topic (the bot is no administrator with the right to manage topics): said in
        the log only, since the command works the same in the group."""
        bot = self.bot
        place = REGISTRY.place_of(event.text, event.bot_username)
        if (bot is None or place is None or event.chat_kind != "group" or not msg.chat.is_forum
                or (not event.is_admin and self.service.needs_admin(event.text))):
            return None
        name = _clip(await self.call(self._place_name, event.chat_id, place.kind, place.variant), TOPIC_NAME_LIMIT)
        try:
            topic = await self._api(lambda: bot.create_forum_topic(msg.chat_id, name))
        except TelegramError as err:
            log.info("no topic of its own in telegram chat %s, the chat itself is used: %s", msg.chat_id, err)
            return None
        thread = topic.message_thread_id
        where = f"{msg.chat.username}" if msg.chat.username else f"c/{str(msg.chat_id).removeprefix('-100')}"
        return _Place(chat_key(msg.chat_id, thread), f"https://t.me/{where}/{thread}", name)

    async def _place_taken(self, chat_id: str) -> bool:
        try:
            taken: bool = await self.call(self.service.place_taken, PLATFORM, chat_id)
        except StorageError as err:
            log.warning("whether telegram topic %s holds what was started is unknown (%s): it is kept", chat_id, err)
            return True
        return taken

    async def _drop_topic(self, chat_id: str) -> None:
        """Delete a topic the bot made for nothing (the right to delete messages), else close it."""
        bot = self.bot
        assert bot is not None
        chat, thread = chat_address(chat_id)
        assert thread is not None
        try:
            await self._api(lambda: bot.delete_forum_topic(chat, thread))
            return
        except TelegramError as err:
            log.info("topic %s made for nothing not deleted (%s): closed instead", chat_id, err)
        try:
            await self._api(lambda: bot.close_forum_topic(chat, thread))
        except TelegramError as err:
            log.info("topic %s made for nothing not closed either: %s", chat_id, err)

    def _place_name(self, chat_id: str, kind: str, variant: str | None) -> str:
        """A place's name in the chat's language: "🏆 Swiss · Spanish draughts"."""
        kind_name = self.service.notice(PLATFORM, chat_id, f"place.kind.{kind or 'tournament'}")
        if variant is None:
            return self.service.notice(PLATFORM, chat_id, "place.title_short", kind=kind_name)
        return self.service.notice(PLATFORM, chat_id, "place.title", kind=kind_name,
                                   variant=self.service.notice(PLATFORM, chat_id, f"variant.{variant}"))

    async def _in_own_place(self, event: ChatEvent, msg: Message, place: _Place) -> None:
        """The command handed to the service as written in the new topic, so what it starts and
        everything said about it live there; the group (or topic) it was written in gets a short
        note with the topic's link, in answer to the command.  A command the service refused
        started nothing: the topic goes again, and the refusal answers where it was asked."""
        there = replace(event, chat_id=place.chat_id, reply_to=None)
        async with self.chat_lock(place.chat_id):
            replies = await self.call(self.service.handle, there)
            if not await self._place_taken(place.chat_id):
                await self._drop_topic(place.chat_id)
            else:
                # Not a reply: the command's message is in another topic.
                await self._answer_message(there, msg, replies, None)
                replies = []
        if replies:
            async with self.chat_lock(event.chat_id):
                await self._answer_message(event, msg, replies, msg.message_id)
            return
        note = await self.call(self.service.notice, PLATFORM, event.chat_id, "place.note_topic",
                               name=place.name, link=place.link)
        async with self.chat_lock(event.chat_id):
            await self.send(event.chat_id, Reply(note), reply_to=msg.message_id)

    async def _to_member(self, event: ChatEvent, reply: Reply, reply_to: int | None) -> None:
        """A group member's own puzzle step, sent to their private chat with the bot (on Telegram
        its id is the user's); a member who has not started that chat gets its link in the group
        instead, once per puzzle (the link says nothing of the solution)."""
        own = replace(reply, private=False, reaction=None, replaces_board=False)
        try:
            if event.user_id in self._closed_private:
                raise Forbidden("the member's private chat is not open")
            await self.deliver(event.user_id, own)
        except (Forbidden, BadRequest) as err:
            if isinstance(err, BadRequest) and "chat not found" not in str(err).lower():
                log.warning("a puzzle step for telegram user %s was refused: %s", event.user_id, err)
                return
            log.info("telegram user %s has no private chat with the bot open: %s", event.user_id, err)
            self._closed_private.add(event.user_id)
            key = (event.chat_id, event.user_id, reply.post_id)
            # The link stands in for a step or an answer, not for the extras after a solve.
            if (key in self._told_private or not event.private_link or not reply.start_payload
                    or (reply.image is None and reply.reaction is None)):
                return
            self._told_private.add(key)
            link = event.private_link.format(payload=reply.start_payload)
            key_text = "puzzle.steps_in_private" if reply.post_id is not None else "weblink.in_private"
            text = await self.call(self.service.notice, PLATFORM, event.chat_id, key_text,
                                   name=event.user_name, link=link)
            await self.send(event.chat_id, Reply(text), reply_to=reply_to)
        except TelegramError:
            # Flood control or a network failure: the usual way (retries, then the outbox).
            await self.send(event.user_id, own)

    async def _react(self, msg: Message, emoji: str) -> bool:
        try:
            await self._api(lambda: msg.set_reaction(ReactionTypeEmoji(emoji)))
        except TelegramError as err:
            log.info("could not react in telegram chat %s: %s", msg.chat_id, err)
            return False
        return True

    async def on_button(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """A button press: answered exactly once and at once, so the client stops its spinner.

        The press waits for its chat's turn and the service; the answer does not: when they take
        longer than ANSWER_WITHIN_SECONDS, the press is answered without an alert and what the
        alert would have said is posted in the chat instead (see ``_press``)."""
        query = update.callback_query
        if query is None:
            return
        message = query.message if isinstance(query.message, Message) else None
        event = (self._inline_event(query, context) if query.inline_message_id
                 else self._event(update, context, action=query.data or ""))
        if event is None or (message is None and not query.inline_message_id):
            await self._answer(query)
            return
        answered = False

        async def answer(alert: str | None = None, url: str | None = None) -> bool:
            nonlocal answered
            if answered:
                return False
            answered = True
            await self._answer(query, alert, url)
            return True

        work = asyncio.ensure_future(self._press(message, event, answer) if message is not None
                                     else self._press_inline(event, answer))
        done, _ = await asyncio.wait({work}, timeout=self.answer_within)
        if not done:
            await answer()
        try:
            await work
        except BaseException:
            # The failure goes on to the error handler; the spinner must stop all the same.
            await answer()
            raise

    async def _press(self, message: Message, event: ChatEvent,
                     answer: Callable[..., Awaitable[bool]]) -> None:
        async with self.chat_lock(event.chat_id):
            replies: list[Reply] = await self.call(self.service.handle, event)
            private = [r for r in replies if r.private]
            # Telegram has no message only one member sees; an alert on the button is the closest,
            # and a board for one member (a puzzle) waits in their private chat with the bot.
            board = next((r for r in private if r.start_payload and r.image is not None), None)
            link = None
            if board is not None and event.chat_kind == "group" and event.private_link:
                link = event.private_link.format(payload=board.start_payload)
                late = not await answer(url=link)
            else:
                late = not await answer(_clip(private[0].text, ALERT_LIMIT) if private else None)
            if late:
                # Too late for an alert: the presser reads it in the chat (a group sees it too,
                # which beats a press that seems to do nothing).
                for reply in private:
                    if event.chat_kind == "private":
                        await self.send(event.chat_id, replace(reply, private=False))
                    elif reply.post_id is not None and reply.start_payload:
                        # A member's own puzzle step must not reach the whole group.
                        await self._to_member(event, reply, message.message_id)
                    else:
                        text = f"{reply.text}\n{link}" if link and reply is board else reply.text
                        await self.send(event.chat_id, Reply(text), reply_to=message.message_id)
            for reply in _ping_on_board([r for r in replies if not r.private]):
                if reply.replaces_board and reply.image is not None:
                    await self.edit(message, reply)
                else:
                    await self.send(event.chat_id, reply)

    # -- inline mode (see bot.platforms.telegram.inline) --------------------------------------------

    async def on_inline_query(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """``@ourbot`` typed in any chat: a challenge per variant, each an article whose message
        carries a signed Accept button.  A query not answered within 10 s is gone, so a failure
        is only logged."""
        query = update.inline_query
        if query is None or query.from_user.is_bot:
            return
        user = query.from_user
        try:
            articles = await self.call(self.service.chat.inline_articles, PLATFORM, str(user.id), user.full_name,
                                       user.username, user.language_code, query.query or "")
        except Exception:
            log.exception("inline query of telegram user %s not answered", user.id)
            return
        results = [InlineQueryResultArticle(
            id=article.id, title=article.title, description=article.description,
            input_message_content=InputTextMessageContent(article.text),
            reply_markup=_markup([[article.accept]])) for article in articles]
        try:
            await self._api(lambda: query.answer(results, cache_time=INLINE_CACHE_SECONDS, is_personal=True))
        except TelegramError as err:
            log.info("inline query of telegram user %s not answered: %s", user.id, err)

    def _inline_event(self, query: CallbackQuery, context: ContextTypes.DEFAULT_TYPE) -> ChatEvent | None:
        """A press on an inline message's button: from its own chat, where no one can be written to
        privately (the alert on the button is all the presser alone sees)."""
        user = query.from_user
        if user.is_bot or not query.inline_message_id:
            return None
        return ChatEvent(platform=PLATFORM, chat_id=inline_chat(query.inline_message_id), user_id=str(user.id),
                         user_name=user.full_name, username=user.username, language=user.language_code,
                         action=query.data or "", bot_username=context.bot.username, can_whisper=False)

    async def _press_inline(self, event: ChatEvent, answer: Callable[..., Awaitable[bool]]) -> None:
        """A press on an inline message: only an Accept the bot made reaches the service (anything
        else is answered as invalid and changes nothing, not even the chat's row); the game it
        starts is shown by editing the message."""
        genuine = await self.call(self.service.chat.inline_offer_genuine, PLATFORM, event.action or "")
        if not genuine:
            await answer(t(pick_language(event.language), "inline.invalid"))
            return
        async with self.chat_lock(event.chat_id):
            replies: list[Reply] = await self.call(self.service.handle, event)
            private = [r for r in replies if r.private]
            # Too late for an alert, a refusal is lost: an inline message has no room for it.
            await answer(_clip(private[0].text, ALERT_LIMIT) if private else None)
            for reply in replies:
                if not reply.private:
                    await self.send(event.chat_id, reply)

    async def _edit_inline(self, chat_id: str, reply: Reply) -> None:
        """A message for an inline message's chat: the message edited to say it, in words only (no
        picture can be uploaded to an inline message, so the board, the GIF and any file are left
        out), with the Open board button of its game.  "Not modified" is done; an inline message
        that can no longer be edited raises BadRequest, final for this message."""
        bot = self.bot
        assert bot is not None, "build() first"
        game_id = reply.game_id
        if game_id is None:
            # A ping or a notice without its game: the game shown there keeps its button.
            games = await self.call(self.service.find_games, PLATFORM, chat_id, None, 1)
            game_id = games[0].id if games else None
        text = reply.text.strip()
        if not text:
            return                        # only a picture or a file: nothing an inline message can show
        markup = None
        if game_id is not None:
            # Signed: a game's number alone opens nothing (docs/web.md).
            mac = await self.call(self.service.web.watch_mac, game_id)
            link = board_link(game_id, bot.username, self.env, mac)
            if link is None:
                text += "\n\n" + await self.call(self.service.notice, PLATFORM, chat_id, "inline.no_board")
            else:
                label = await self.call(self.service.notice, PLATFORM, chat_id, "inline.open")
                markup = InlineKeyboardMarkup([[InlineKeyboardButton(label, url=link)]])
        text = _clip(text, TEXT_LIMIT, "…")
        try:
            await self._api(lambda: bot.edit_message_text(text, inline_message_id=inline_message_id(chat_id),
                                                          reply_markup=markup))
        except BadRequest as err:
            if "not modified" not in str(err).lower():
                raise
            log.debug("inline message %s already shows this", chat_id)

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
        if isinstance(context.error, Conflict):
            self._on_conflict(context.application)
            return
        log.error("telegram handler failed: %r", context.error, exc_info=context.error)

    def note_conflict(self, answer: bytes) -> None:
        """A getUpdates ended with 409 Conflict (``answer``: Telegram's body): counted the moment
        it comes back, so that the poll which would follow a decision to stop is never sent."""
        now = time.monotonic()
        self._conflicts.append(now)
        while self._conflicts and self._conflicts[0] < now - CONFLICT_WINDOW_SECONDS:
            self._conflicts.popleft()
        self._webhook_conflict = b"webhook is active" in answer
        if len(self._conflicts) >= CONFLICTS_TO_STOP:
            self.conflicted = True

    def polls_no_more(self, closing: bool) -> bool:
        """Whether a getUpdates must not be sent: none once stopping for a conflict (a poll of
        this process would end the poll of the one that serves the token, which would then count
        a conflict of its own: two processes that stop each other), and not the last one PTB makes
        when it stops (``closing``: a poll that does not wait, to confirm the updates it fetched)
        while another process polls: it would end that one's poll.  Those updates were confirmed
        by this process's later polls, the one a 409 ended among them (the offset counts as a poll
        arrives)."""
        if self.conflicted:
            return True
        return closing and bool(self._conflicts) and self._conflicts[-1] >= time.monotonic() - CONFLICT_WINDOW_SECONDS

    def _on_conflict(self, app: Application) -> None:
        """Polling met 409 Conflict: after a few within a minute (note_conflict counts them) the
        bot stops, without polling again, and run_telegram exits with status 1; the other
        process keeps the token (its poll is the newest)."""
        if not self.conflicted:
            log.info("telegram answered 409 Conflict: another process is polling with this token")
            return
        if self._conflict_told:
            return
        self._conflict_told = True
        if self._webhook_conflict:
            log.error("another instance uses TELEGRAM_BOT_TOKEN with a webhook (Telegram refuses getUpdates "
                      "while one is set: 409 Conflict): stopping; run one process per token, or unset the webhook")
        else:
            log.error("another instance uses TELEGRAM_BOT_TOKEN and serves it now (Telegram ended this "
                      "one's getUpdates with 409 Conflict): stopping; run one process per token")
        app.stop_running()

    # -- outgoing ----------------------------------------------------------------------------------

    def failure_kind(self, exc: BaseException) -> str:
        if isinstance(exc, Forbidden):
            return PERMANENT
        if isinstance(exc, ChatMigrated):
            return TRANSIENT
        if isinstance(exc, BadRequest):
            # A 400 is Telegram's final word on that request: the same message would be refused
            # again, however often it is tried.
            return PERMANENT if any(words in str(exc).lower() for words in _GONE) else REFUSED
        return TRANSIENT

    def retry_delay(self, exc: BaseException) -> float | None:
        return _flood_wait(exc) if isinstance(exc, RetryAfter) else None

    def text_length(self, text: str) -> int:
        # Telegram's 4096 and 1024 are UTF-16 code units: a reply of emoji split by characters
        # would come in pieces Telegram refuses.
        return _utf16(text)

    async def deliver(self, chat_id: str | int, reply: Reply, *, reply_to: str | int | None = None,
                      progress: Progress | None = None) -> None:
        """Every message of a reply not yet out; a chat that became a supergroup is followed to its
        new id."""
        progress = progress if progress is not None else Progress()
        if is_inline_chat(chat_id):
            await self._edit_inline(str(chat_id), reply)
            progress.delivered = 1
            return
        reply = await self.with_board_button(str(chat_id), await self.with_moves(str(chat_id), reply))
        try:
            await super().deliver(str(chat_id), reply, reply_to=None if reply_to is None else str(reply_to),
                                  progress=progress)
        except ChatMigrated as moved:
            new = chat_key(moved.new_chat_id, chat_address(chat_id)[1])
            await self.call(self.service.chat_moved, PLATFORM, str(chat_id), new)
            await super().deliver(new, reply, progress=progress)
        except BadRequest as err:
            if reply_to is None or progress.delivered or "replied not found" not in str(err).lower():
                raise
            # The message answered was deleted meanwhile, and in a topic Telegram ignores
            # allow_sending_without_reply.  Only the first message replies: none went out yet.
            await super().deliver(str(chat_id), reply, progress=progress)

    async def _deliver_chat(self, chat_id: str, queue: list[Any]) -> int:
        """A chat's outbox rows.  A broadcast (every row of it of a BULK_KINDS kind) first waits
        for its turn among the bulk senders, before it takes the chat's lock, and goes out behind
        every reply to a person."""
        limiter = self.limiter
        if limiter is None or not queue or not all(getattr(item, "kind", "") in BULK_KINDS for item in queue):
            return await super()._deliver_chat(chat_id, queue)
        async with limiter.bulk_sender():
            return await super()._deliver_chat(chat_id, queue)

    async def send(self, chat_id: int | str, reply: Reply, reply_to: int | None = None) -> None:
        """Answer in a chat.  A chat that removed us or is gone is skipped (logged), and so is a
        message Telegram refused for good; a send that still fails after its retries (or must wait
        for its chat's flood control) goes to the outbox with what is left of it, to go out when
        Telegram allows; anything else is raised."""
        progress = Progress()
        try:
            await self.deliver(chat_id, reply, reply_to=reply_to, progress=progress)
        except Forbidden:
            log.info("telegram chat %s does not accept our messages any more", chat_id)
        except TelegramError as err:
            kind = self.failure_kind(err)
            if kind != TRANSIENT:
                log.warning("reply to telegram chat %s not delivered: %s", chat_id, err)
                return
            if not _transient(err):
                raise
            log.warning("reply to telegram chat %s not delivered yet (%s): the outbox will try again", chat_id, err)
            await self.call(self.service.queue_reply, PLATFORM, str(chat_id), reply, describe_error(err),
                            delivered=progress.delivered, retry_in=self.retry_delay(err))

    async def _api(self, call: Callable[[], Awaitable[T]],
                   attempt_if: Callable[[], Awaitable[bool]] | None = None) -> T:
        """One Bot API call, tried again after a 5xx or a network error; the last failure is raised.
        Flood control is raised at once: the limiter already waited out what was short, and the
        rest is the outbox's (sleeping here would hold the chat's lock for it).

        A timed-out send may have arrived after all, so a retry can show a board twice; that is
        the lesser harm (the older copy's buttons are answered as stale), a missing board is not.

        ``attempt_if`` is asked before every attempt, the first and each retry: False raises
        StaleBoard and nothing is sent (a board edit whose game moved on meanwhile)."""
        for attempt in range(len(RETRY_DELAYS) + 1):
            if attempt_if is not None and not await attempt_if():
                raise StaleBoard
            try:
                return await call()
            except TelegramError as err:
                if not _transient(err) or isinstance(err, RetryAfter) or attempt == len(RETRY_DELAYS):
                    raise
                wait = RETRY_DELAYS[attempt]
                log.info("telegram call failed (%s); try %d in %.1f s", err, attempt + 2, wait)
                await self.sleep(wait)
        raise AssertionError("unreachable")

    async def instead_of(self, chat_id: str, piece: Piece, reply: Reply, exc: BaseException, *,
                         reply_to: str | None = None) -> str | None:
        """A board photo in a chat that forbids photos: the text board with the same buttons (and
        the chat told once why); other refusals as the base class has them."""
        if piece.image is None or _NO_PHOTOS not in str(exc).lower():
            return await super().instead_of(chat_id, piece, reply, exc, reply_to=reply_to)
        bot = self.bot
        assert bot is not None
        chat, thread = chat_address(chat_id)
        if chat_id not in self._told_no_photos:
            self._told_no_photos.add(chat_id)
            notice = await self.call(self.service.notice, PLATFORM, chat_id, "telegram.no_photos")
            log.warning("telegram chat %s forbids photos: boards go as text", chat_id)
            try:
                await self._api(lambda: bot.send_message(chat, notice, message_thread_id=thread))
            except TelegramError as err:
                log.info("could not tell telegram chat %s that it forbids photos: %s", chat_id, err)
        text, entities = _text_board(piece.text, reply.board_text)
        # The caption leads the text board, so its pings keep their offsets.
        entities = [*_mentions(piece.text, piece.mentions), *entities]
        answer: dict[str, Any] = {"message_thread_id": thread}
        if reply_to is not None:
            answer.update(reply_to_message_id=int(reply_to), allow_sending_without_reply=True)
        sent = await self._api(lambda: bot.send_message(chat, text, entities=entities,
                                                        reply_markup=_markup(piece.buttons), **answer))
        return str(sent.message_id)

    async def send_piece(self, chat_id: str, piece: Piece, *, reply_to: str | None = None) -> str | None:
        bot = self.bot
        assert bot is not None, "build() first"
        chat, thread = chat_address(chat_id)
        markup = _markup(piece.buttons)
        answer: dict[str, Any] = {"message_thread_id": thread}
        if reply_to is not None:
            answer.update(reply_to_message_id=int(reply_to), allow_sending_without_reply=True)
        pings = _mentions(piece.text, piece.mentions)
        if pings:
            # Who is notified: entities, never parse_mode (the two cannot go together).
            answer["caption_entities" if piece.has_file else "entities"] = pings
        caption = (_captioned(piece.text, piece.alt) if piece.image is not None else piece.text) or None
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
            hidden = [*answer.pop("entities", []), MessageEntity(MessageEntity.SPOILER, _utf16(head),
                                                                 _utf16(piece.spoiler))]
            shown = head + piece.spoiler
            sent = await self._api(lambda: bot.send_message(chat, shown, entities=hidden,
                                                            reply_markup=markup, **answer))
        else:
            sent = await self._api(lambda: bot.send_message(chat, piece.text, reply_markup=markup, **answer))
        return str(sent.message_id)

    async def edit_message(self, chat_id: str, message_id: str, reply: Reply) -> bool:
        """Replace an earlier text message's text and buttons (a closed challenge, the chat's
        record); one Telegram will not edit any more (deleted, too old, unchanged) is left alone,
        and False says it is gone ("message to edit not found", "message can't be edited")."""
        bot = self.bot
        assert bot is not None, "build() first"
        try:
            text = _clip(reply.text, TEXT_LIMIT)
            await self._api(lambda: bot.edit_message_text(text, chat_id=chat_address(chat_id)[0],
                                                          message_id=int(message_id),
                                                          reply_markup=_markup(reply.buttons)))
        except BadRequest as err:
            if self.failure_kind(err) == PERMANENT:
                raise
            log.info("telegram message %s in chat %s not updated: %s", message_id, chat_id, err)
            return not any(words in str(err).lower() for words in _EDIT_GONE)
        return True

    async def _in_turn(self, call: Callable[[], Awaitable[T]]) -> T:
        """A board edit that flood control holds back waits for its turn (MAX_FLOOD_WAIT in all at
        most) instead of going out as a new board: that one would wait for the same budget, and
        would leave this board's buttons live (issue 29)."""
        waited = 0.0
        while True:
            try:
                return await call()
            except RetryAfter as err:
                wait = _flood_wait(err)
                if waited + wait > MAX_FLOOD_WAIT:
                    raise
                waited += wait
                await self.sleep(wait)

    async def edit(self, message: Message, reply: Reply) -> None:
        """Replace a board message in place (a button step: piece chosen, move played, stale board).

        When Telegram will not edit it (deleted, too old, the chat moved, still failing after the
        retries), the board goes out as a new message instead: the move may already be stored."""
        key = _key_of(message)
        reply = await self.with_board_button(key, await self.with_moves(key, reply))
        if reply.image is None:
            raise ValueError("only a reply with a board image replaces a board")
        fits = _fits(reply.text, CAPTION_LIMIT)
        # attach=True makes the InputMedia name its upload ("media": "attach://<name>"); without
        # it the PNG goes up as a stray part and Telegram answers "media not found".
        media = InputMediaPhoto(InputFile(reply.image, filename="board.png", attach=True),
                                caption=_captioned(_clip(reply.text, CAPTION_LIMIT, "…"), reply.alt))
        markup = _markup(reply.buttons)
        if message.text is not None and reply.board_text:
            # A text board (the chat forbids photos) stays one: its text is edited instead.
            text, entities = _text_board(reply.text, reply.board_text)
            fits = _fits(text, TEXT_LIMIT)
            if not fits:
                text, entities = _text_board("", reply.board_text)

            async def edit() -> Any:
                return await message.edit_text(text, entities=entities, reply_markup=markup)
        else:
            async def edit() -> Any:
                return await message.edit_media(media, reply_markup=markup)
        try:
            await self._in_turn(lambda: self._api(edit, attempt_if=self._board_claim(key, str(message.message_id),
                                                                                     reply)))
        except StaleBoard:
            # A newer board of the game is shown there, or is on its way (another worker's edit).
            log.info("board edit of game %s in telegram chat %s dropped: the game has moved on",
                     reply.game_id, message.chat_id)
            return
        except Forbidden as err:
            # The bot was removed from the chat: a new message would be refused as well.
            log.info("telegram chat %s refused the board edit: %s", message.chat_id, err)
            return
        except TelegramError as err:
            if not (isinstance(err, BadRequest) and "not modified" in str(err).lower()):
                if not await self._board_current(reply):
                    log.info("board edit in telegram chat %s refused (%s); the game has moved on since",
                             message.chat_id, err)
                    return
                log.info("board edit in telegram chat %s refused (%s); sending it anew", message.chat_id, err)
                await self.send(key, reply)
                return
        await self.remember(key, message.message_id, reply.game_id, reply.post_id)
        # What the edit could not carry follows as messages of its own: the full text, the GIF, a file.
        rest = replace(reply, image=None, buttons=[], game_id=None, post_id=None)
        if fits:
            rest = replace(rest, text="")
        if rest.text or rest.animation is not None or rest.document is not None:
            await self.send(key, rest)


    async def with_moves(self, chat_id: str, reply: Reply) -> Reply:
        """In a group, a game's board offers each move as a button of its own instead of its
        pieces (when they all fit): a button move is one press and one post (the new board that
        pings), not a piece's edit first; a group has about 20 posts a minute for all its games."""
        stage = reply.board_stage
        if (reply.game_id is None or stage is None or stage % 2 or not reply.buttons or is_inline_chat(chat_id)
                or str(chat_id).startswith(DM_PREFIX) or chat_address(chat_id)[0] >= 0):
            return reply
        try:
            rows = await self.call(self.service.move_buttons, reply.game_id, stage // 2, reply.buttons)
        except StorageError as err:
            log.info("moves of game %s not listed as buttons: %s", reply.game_id, err)
            return reply
        return replace(reply, buttons=rows) if rows else reply

    def _board_claim(self, chat_id: str, message_id: str,
                     reply: Reply) -> Callable[[], Awaitable[bool]] | None:
        """What asks, before each attempt of a board edit, whether it may still be written (see
        bot.service.board_versions): shared by every process on the database, so a retry or
        another worker's slower edit never puts an older board over a newer one."""
        game_id, stage = reply.game_id, reply.board_stage
        if game_id is None or stage is None:
            return None

        async def claim() -> bool:
            try:
                allowed: bool = await self.call(self.service.claim_board_edit, PLATFORM, chat_id, message_id,
                                                game_id, stage)
            except StorageError as err:
                # Better a board edited out of order than a board not shown.
                log.warning("board stage of telegram message %s not checked: %s", message_id, err)
                return True
            return allowed
        return claim

    async def _board_current(self, reply: Reply) -> bool:
        """Whether the board a reply shows is still its game's latest (else a new board message
        would show the past)."""
        if reply.game_id is None or reply.board_stage is None:
            return True
        try:
            current: bool = await self.call(self.service.board_is_current, reply.game_id, reply.board_stage)
        except StorageError:
            return True
        return current


def build_application(token: str, *, service: GameService, request: BaseRequest | None = None,
                      rate_limiter: bool | BaseRateLimiter = True,
                      env: Mapping[str, str] | None = None) -> DraughtsApplication:
    """The Application as production runs it (only the HTTP layer, ``request``, can be swapped,
    and the limiter's clock: ``rate_limiter`` may be a FloodLimiter on a faster one; ``env``: the
    settings' text, bot.config's Config.environ; None: every default)."""
    return TelegramAdapter(service, env=env).build(token, request=request, rate_limiter=rate_limiter)


class _PollGuard(BaseRequest):
    """getUpdates' HTTP layer: counts a 409 Conflict with the adapter as it comes back, and sends
    no poll the adapter says must not go (``TelegramAdapter.polls_no_more``): that one is answered
    here, with no updates, after the wait it asked for (PTB's polling loop stops meanwhile)."""

    __slots__ = ("adapter", "inner")

    def __init__(self, inner: BaseRequest, adapter: TelegramAdapter) -> None:
        self.inner = inner
        self.adapter = adapter

    @property
    def read_timeout(self) -> float | None:
        return self.inner.read_timeout

    async def initialize(self) -> None:
        await self.inner.initialize()

    async def shutdown(self) -> None:
        await self.inner.shutdown()

    async def do_request(self, url: str, method: str, request_data: RequestData | None = None,
                         read_timeout: ODVInput[float] = DEFAULT_NONE, write_timeout: ODVInput[float] = DEFAULT_NONE,
                         connect_timeout: ODVInput[float] = DEFAULT_NONE,
                         pool_timeout: ODVInput[float] = DEFAULT_NONE) -> tuple[int, bytes]:
        wait = float((request_data.json_parameters if request_data else {}).get("timeout") or 0)
        if self.adapter.polls_no_more(closing=wait == 0):
            await asyncio.sleep(wait)
            return 200, _NO_UPDATES
        status, answer = await self.inner.do_request(url, method, request_data, read_timeout=read_timeout,
                                                     write_timeout=write_timeout, connect_timeout=connect_timeout,
                                                     pool_timeout=pool_timeout)
        if status == 409:
            self.adapter.note_conflict(answer)
        return status, answer


def run_telegram(token: str, service: GameService, *, request: BaseRequest | None = None,
                 sleep: Callable[[float], object] = time.sleep, env: Mapping[str, str] | None = None) -> int:
    """Serve Telegram until stopped: poll (exactly one process per token), or, with
    TELEGRAM_WEBHOOK_URL, run the webhook server (any number of processes behind that URL; see
    bot.platforms.telegram.webhook).  2 if a webhook setting is unusable (one line on stderr,
    before anything is sent); 1 if the token is refused, if Telegram stays unreachable at start
    (retried with backoff), if it refuses the webhook, if the port cannot be listened on, if another
    process polls with the token, or if the database went away.  ``request``: the HTTP layer
    (tests); ``env``: the settings' text (bot.config's Config.environ; None: every default)."""
    environ = {} if env is None else env
    try:
        webhook = webhook_config(token, environ)
    except WebhookConfigError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    problem = web_board_problem(environ, webhook is not None)
    if problem is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    # httpx logs every request URL at INFO, and Telegram URLs contain the token.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    apps: list[DraughtsApplication] = []
    refused_start: list[str] = []

    def attempt() -> None:
        # The thread's loop, the one run_polling runs (and a stop signal or a test stops); a fresh
        # one once a failed start closed it.  A fresh Application each time.
        try:
            loop = asyncio.get_event_loop()
        except RuntimeError:
            loop = None
        if loop is None or loop.is_closed():
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
        app = build_application(token, service=service, request=request, env=environ)
        apps.append(app)
        try:
            # getMe here, not in run_polling's bootstrap, which logs a failure with its traceback;
            # setWebhook too (run_webhook calls it once more: it is idempotent).
            loop.run_until_complete(app.initialize())
            if webhook is not None:
                loop.run_until_complete(app.bot.set_webhook(**_set_webhook_arguments(webhook)))
        except BadRequest as err:
            # setWebhook refused (a host Telegram cannot resolve or reach, say): trying again
            # would be refused again.
            loop.close()
            refused_start.append(f"Telegram refused the webhook {webhook.url if webhook else ''}: {err}")
            log.error("%s; check %s", refused_start[-1], URL_VARIABLE)
            return
        except BaseException:
            loop.close()
            raise
        if webhook is None:
            app.run_polling(allowed_updates=Update.ALL_TYPES)
            return
        try:
            serve_webhook(app, webhook)
        except BadRequest as err:
            # setWebhook refused (a host Telegram cannot resolve or reach, say): trying again
            # would be refused again.
            refused_start.append(f"Telegram refused the webhook {webhook.url}: {err}")
            log.error("%s; check %s", refused_start[-1], URL_VARIABLE)
        except OSError as err:
            refused_start.append(f"cannot listen on {webhook.listen}:{webhook.port}: {err.strerror or err}")
            log.error("%s; check %s and %s", refused_start[-1], PORT_VARIABLE, LISTEN_VARIABLE)

    def stopped_on_its_own() -> str | None:
        if refused_start:
            return refused_start[-1]
        adapter = apps[-1].adapter if apps else None
        if adapter is None:
            return None
        # A conflict was logged when it stopped the bot, a fatal storage error too.
        return adapter.fatal or ("another process polls with the token" if adapter.conflicted else None)

    return run_until_stopped(attempt, refused=InvalidToken, transient=_transient_start, fatal=stopped_on_its_own,
                             secret=token, sleep=sleep,
                             platform="Telegram", variable="TELEGRAM_BOT_TOKEN", where="with @BotFather")


def web_board_problem(env: Mapping[str, str], webhook: bool) -> str | None:
    """Why the web board's settings cannot work (one line), or None: with ``WEB_URL`` set, its port
    must be a port, and in webhook mode it must be ``WEB_PORT`` (``PORT`` is the webhook's)."""
    try:
        env_config.web_beside_webhook(env, webhook)
    except env_config.ConfigError as err:
        return str(err)
    return None


def serve_webhook(app: Application, webhook: WebhookConfig) -> None:
    """python-telegram-bot's webhook server until stopped (a stop signal, or ``stop_running``).

    setWebhook is called at every start, by every worker: it is idempotent, and Telegram keeps
    one webhook per bot.  Pending updates are never dropped (another worker may be about to
    take them), and the webhook is left in place at stop (the other workers still serve it)."""
    arguments = _set_webhook_arguments(webhook)
    log.info("serving the Telegram webhook %s on %s:%d", webhook.url, webhook.listen, webhook.port)
    app.run_webhook(listen=webhook.listen, port=webhook.port, url_path=webhook.url_path,
                    webhook_url=arguments["url"], secret_token=arguments["secret_token"],
                    allowed_updates=arguments["allowed_updates"],
                    drop_pending_updates=arguments["drop_pending_updates"])


def _set_webhook_arguments(webhook: WebhookConfig) -> dict[str, Any]:
    """setWebhook's arguments, the same from every worker."""
    return {"url": webhook.url, "secret_token": webhook.secret, "allowed_updates": Update.ALL_TYPES,
            "drop_pending_updates": False}


def _transient_start(err: BaseException) -> bool:
    return isinstance(err, TelegramError) and _transient(err)
