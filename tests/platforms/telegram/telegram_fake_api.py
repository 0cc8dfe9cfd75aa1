"""A strict fake of the Telegram Bot API, plugged into python-telegram-bot as its HTTP layer.

Everything above HTTP is the real library: the fake reads what PTB would put on the wire
(``RequestData.json_parameters`` and ``multipart_data``) and answers with the status and body
Telegram would give.  It keeps the state Telegram keeps (chats, every message with its content
and keyboard, callback queries) so that it can refuse what Telegram refuses:

- a method's required parameters missing; a chat it does not know ("chat not found");
- a file parameter that is neither a file id/URL nor an uploaded part of that name; an
  ``InputMedia`` without ``media`` ("can't parse InputMedia: media not found"), of an unknown
  type, or pointing at an ``attach://`` part that was not uploaded;
- caption > 1024, text empty or > 4096, alert text > 200 characters (UTF-16 code units);
- inline keyboards: callback_data 1-64 bytes, at most 8 buttons per row and 100 in all, every
  button with a text and exactly one action;
- edits of a message that does not exist in that chat, was not sent by the bot, has no media
  (for editMessageMedia) or no text (for editMessageText), or would not change ("message is not
  modified");
- replies to a message that does not exist (unless allow_sending_without_reply);
- a callback query answered twice, one that was never sent to the bot, or one older than
  15 s ("query is too old and response timeout expired or query ID is invalid");
- inline mode: ``answerInlineQuery`` for a query never sent, answered already or older than 10 s
  (the same "query is too old"); more than 50 results; a result id empty, over 64 bytes or used
  twice; a result type other than article (the only one modelled), an article without a title or
  without ``input_message_content`` (message text 1-4096 characters, checked as sendMessage's);
  ``cache_time`` not a non-negative integer, ``is_personal`` not a boolean.  An empty list is
  accepted, as Telegram does (it shows nothing).  A result a user chose becomes an inline message
  (``choose_inline_result``), whose presses carry ``inline_message_id`` and no ``message``
  (``inline_callback_query``); it is edited with ``inline_message_id`` (the edit answers True,
  not a Message), never with both that and ``chat_id`` nor with neither; it cannot take an
  uploaded file (``attach://``) in editMessageMedia, has no caption to edit, and cannot be
  deleted; one that is gone (``forget_inline``) answers MESSAGE_ID_INVALID;
- URL buttons: only http(s) and tg:// links ("BUTTON_URL_INVALID");
- ``web_app`` buttons (a Mini App): only in a private chat with the bot, never in a group, an
  inline message or an inline result ("BUTTON_TYPE_INVALID"), and only to an https URL
  ("BUTTON_URL_INVALID");
- entities (``entities`` of a text, ``caption_entities`` of a caption) of an unknown type, outside
  the text (offsets in UTF-16 code units), or a ``text_mention`` without a well-formed user;
- a message to a user's private chat when the user never started the bot (403 "bot can't
  initiate conversation with a user"; ``start_private`` opens that chat);
- flood control, as Telegram applies it to messages posted or edited (send*, edit*): about one a
  second in a chat (a burst of 3 at once is fine), 20 a minute in a group, and at most 30 in any
  one second in all (a sliding window: a burst of 30 at once, then nothing until its second is
  over); beyond that 429 "Too Many Requests: retry after N" with ``parameters.retry_after``, and a
  chat that posts again before its N seconds are over is told to wait twice as long from then, and
  so on (up to an hour), as Telegram lengthens the waits of a bot that keeps hitting the limit.  These
  limits run on ``clock`` (tests may speed it up; the limiter under test must run on the same);
- chat member permissions (``restrict``): no photos, documents or GIFs (animations, which
  Telegram files under "other messages"), or no messages at all: 400 "not enough rights to send
  photos to the chat" and the like;
- forum topics: a send to a closed topic (or to General when it is closed) is refused with
  ``TOPIC_CLOSED``, a ``message_thread_id`` that is not an open topic of a forum (General's 1
  included: General is addressed without one) with "message thread not found"; in a topic
  ``allow_sending_without_reply`` is forced off; a reply without ``message_thread_id`` follows
  the message it replies to;
- ``createForumTopic``: only in a supergroup that is a forum ("Bad Request: the chat is not a forum"
  in a group that is not one, or a private chat) and only by a bot that administers it with
  ``can_manage_topics`` ("Bad Request: not enough rights to create a topic"; ``promote_bot``
  gives rights); a name of 1-128 characters; the topic's creation message (a service message
  from the bot, ``forum_topic_created``) has the topic's id, which the answer (a ForumTopic)
  gives as ``message_thread_id``; ``deleteForumTopic`` needs ``can_delete_messages`` (it deletes the
  topic's messages too) and ``closeForumTopic`` ``can_manage_topics`` unless the bot made the topic
  ("Bad Request: not enough rights to ... the topic"); an unknown topic is "Bad Request:
  TOPIC_ID_INVALID", closing a closed one "Bad Request: TOPIC_NOT_MODIFIED";
- ``setMyCommands``: at most 100 commands, names 1-32 of a-z0-9_, descriptions 1-256 characters, a
  known scope, a two-letter language code or none;
- ``getUpdates`` while another instance polls (``conflict``): 409 Conflict; while a webhook is
  set: 409 Conflict too ("can't use getUpdates method while webhook is active"); one poll at a
  time, as Telegram serves it: a newer getUpdates ends the one under way with 409 ("terminated by
  other getUpdates request"), and an empty poll waits up to ``long_poll`` seconds (0.05 unless a
  test sets it) for an update;
- ``setWebhook``: an https URL (an empty one removes the webhook) on port 443, 80, 88 or 8443, a
  ``secret_token`` of 1-256 characters of A-Z, a-z, 0-9, _ and -, ``max_connections`` 1-100;
  the webhook is kept (``webhook``) until ``deleteWebhook``, which also drops the pending
  updates when asked to (``drop_pending_updates``); ``deliver_webhook`` hands the pending updates
  to several webhook workers concurrently and out of order, as Telegram and a load balancer do
  (``webhook_worker``: a worker process's server, over HTTP);
- lengths as Telegram counts them: text, captions and alerts in UTF-16 code units (an emoji
  outside the BMP is two), callback_data in bytes.

What reaches the bot is modelled too: in a group with privacy mode on (``reaches_bot``) a bare
``/command`` arrives only when no other bot spoke after ours; ``/command@ourbot``, replies to the
bot's messages and button presses always do, plain text otherwise never.  Messages in a topic
carry ``message_thread_id`` and, unless they reply to something else, reply to the topic's
creation message (as Telegram sends them); anonymous admins write as the group (``from``
GroupAnonymousBot, ``sender_chat`` the group), channels as the channel.

Who a message notifies is kept (``notified``): the users its mention entities name.

Stricter than Telegram on two points, on purpose: an uploaded part that no parameter refers to
is refused (Telegram ignores it), because a stray upload is always a bug on our side; and
``parse_mode`` sent together with entities is refused (Telegram ignores the one), as it always
means markup we did not intend.

Tests can make it fail like Telegram does (``fail``), remove the bot from a chat (``kick``,
then 403), migrate a group (``migrate``, then 400 with ``migrate_to_chat_id``), hold a chat in
flood control (``flood``, then 429 until it ends), take rights away (``restrict``), open and
close forum topics (``open_topic``, ``close_topic``, ``delete_topic``), let another bot speak
(``other_bot_says``) or another process poll (``conflict``).
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import math
import random
import re
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from telegram.request import BaseRequest, RequestData

BOT = {"id": 999, "is_bot": True, "first_name": "Damas", "username": "DraughtsBot"}
GROUP = {"id": -100123, "type": "supergroup", "title": "Club"}
# Who Telegram names as the sender of a message written as the group (an anonymous admin) or as
# a channel; both are bots.
ANONYMOUS_ADMIN = {"id": 1087968824, "is_bot": True, "first_name": "Group", "username": "GroupAnonymousBot"}
CHANNEL_BOT = {"id": 136817688, "is_bot": True, "first_name": "Channel", "username": "Channel_Bot"}
OTHER_BOT = {"id": 4242, "is_bot": True, "first_name": "Chess", "username": "OtherChessBot"}
CHANNEL = {"id": -100777, "type": "channel", "title": "Club news"}
USERS = {
    "ana": {"id": 1, "is_bot": False, "first_name": "Ana", "username": "ana", "language_code": "es"},
    "bob": {"id": 2, "is_bot": False, "first_name": "Bob", "username": "bob", "language_code": "en"},
    "eve": {"id": 3, "is_bot": False, "first_name": "Eve", "username": "eve", "language_code": "it"},
}

CAPTION_LIMIT = 1024
TEXT_LIMIT = 4096
ALERT_LIMIT = 200


def _units(text: str) -> int:
    """A text's length as Telegram counts it against its limits: UTF-16 code units (an emoji
    outside the BMP is two)."""
    return len(text.encode("utf-16-le")) // 2
ROW_LIMIT = 8
BUTTON_LIMIT = 100
MEDIA_TYPES = {"photo", "video", "animation", "audio", "document"}
BUTTON_ACTIONS = {"callback_data", "url", "switch_inline_query", "switch_inline_query_current_chat",
                  "switch_inline_query_chosen_chat", "callback_game", "pay", "login_url", "web_app",
                  "copy_text"}
NOT_MODIFIED = ("Bad Request: message is not modified: specified new message content and reply markup are "
                "exactly the same as a current content and reply markup of the message")
TOPIC_CLOSED = "Bad Request: TOPIC_CLOSED"
THREAD_NOT_FOUND = "Bad Request: message thread not found"
NOT_A_FORUM = "Bad Request: the chat is not a forum"
NO_TOPIC_RIGHTS = "Bad Request: not enough rights to create a topic"
TOPIC_NAME_LIMIT = 128
CONFLICT = "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"
WEBHOOK_ACTIVE = ("Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the "
                  "webhook first")
WEBHOOK_PORTS = (443, 80, 88, 8443)
SECRET_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,256}")
COMMAND_NAME = re.compile(r"[a-z0-9_]{1,32}")
COMMAND_LIMIT = 100
COMMAND_DESCRIPTION_LIMIT = 256
SCOPES = {"default", "all_private_chats", "all_group_chats", "all_chat_administrators", "chat",
          "chat_administrators", "chat_member"}
QUERY_INVALID = "Bad Request: query is too old and response timeout expired or query ID is invalid"
QUERY_TTL = 15.0
INLINE_QUERY_TTL = 10.0
INLINE_RESULT_LIMIT = 50
RESULT_TYPES = {"article", "photo", "gif", "mpeg4_gif", "video", "audio", "voice", "document", "location", "venue",
                "contact", "game", "sticker"}
BOTH_IDS = "Bad Request: chat_id and inline_message_id can't be used together"
# Flood control: (messages, per seconds, at once).  Telegram publishes the rates, not the burst.
CHAT_RATE = (1, 1.0, 3)
GROUP_RATE = (20, 60.0, 20)
GLOBAL_RATE = (30, 1.0)        # at most 30 in any second: a window, not a rate with a burst on top
# A request may reach the fake a little earlier than the limiter that spaced it reckoned.
RATE_SLACK = 0.02
# A chat told to wait that posts again before the wait is over is told to wait this much longer,
# every time, up to FLOOD_LONGEST (Telegram's waits grow for a bot that keeps hitting the limit).
FLOOD_ESCALATION = 2
FLOOD_LONGEST = 3600
POSTING = {"sendMessage", "sendPhoto", "sendAnimation", "sendDocument", "editMessageMedia", "editMessageCaption",
           "editMessageReplyMarkup", "editMessageText"}
# Which member permission each kind of message needs, and Telegram's word for it in the refusal.
RIGHTS = {"sendMessage": ("messages", "text messages"), "sendPhoto": ("photos", "photos"),
          "sendDocument": ("documents", "documents"), "sendAnimation": ("animations", "animations")}

# method -> (required parameters, the parameter that carries an upload, or None)
METHODS: dict[str, tuple[tuple[str, ...], str | None]] = {
    "getMe": ((), None),
    "createForumTopic": (("chat_id", "name"), None),
    "deleteForumTopic": (("chat_id", "message_thread_id"), None),
    "closeForumTopic": (("chat_id", "message_thread_id"), None),
    "sendMessage": (("chat_id", "text"), None),
    "sendPhoto": (("chat_id", "photo"), "photo"),
    "sendAnimation": (("chat_id", "animation"), "animation"),
    "sendDocument": (("chat_id", "document"), "document"),
    "editMessageMedia": (("media",), None),
    "editMessageCaption": ((), None),
    "editMessageText": (("text",), None),
    "editMessageReplyMarkup": ((), None),
    "answerCallbackQuery": (("callback_query_id",), None),
    "answerInlineQuery": (("inline_query_id", "results"), None),
    "deleteMessage": (("chat_id", "message_id"), None),
    "getChatMember": (("chat_id", "user_id"), None),
    "setMessageReaction": (("chat_id", "message_id"), None),
    "setMyCommands": (("commands",), None),
    "getMyCommands": ((), None),
    "deleteWebhook": ((), None),
    "setWebhook": (("url",), None),
    "getUpdates": ((), None),
}
# Entity types a bot may send, and the emoji bots may react with (a part of Telegram's list).
ENTITY_TYPES = {"mention", "hashtag", "cashtag", "bot_command", "url", "email", "phone_number", "bold", "italic",
                "underline", "strikethrough", "spoiler", "blockquote", "expandable_blockquote", "code", "pre",
                "text_link", "text_mention", "custom_emoji"}
REACTIONS = {"👍", "👎", "❤", "🔥", "🎉", "🤔", "👏", "😁", "🏆", "💯", "🤩", "👌"}
SENT_KIND = {"sendMessage": "text", "sendPhoto": "photo", "sendAnimation": "animation",
             "sendDocument": "document"}


class Refused(Exception):
    """Telegram's answer to a request it does not accept."""

    def __init__(self, description: str, status: int = 400, parameters: dict | None = None,
                 staged: bool = False) -> None:
        super().__init__(description)
        self.status, self.description, self.parameters = status, description, parameters
        self.staged = staged                   # the outcome of a scene a test set up (kick, migrate)


@dataclass
class Call:
    """One request as PTB made it: the method, its parameters (Python values) and the uploads."""

    method: str
    params: dict[str, Any]
    files: dict[str, bytes]
    wire: dict[str, str] = field(default_factory=dict)    # as sent: strings, JSON for objects
    status: int = 200
    error: str | None = None
    injected: bool = False                     # a failure a test asked for (fail, kick, migrate)
    at: float = field(default_factory=time.time)   # when the request reached Telegram


@dataclass
class StoredMessage:
    chat_id: int
    message_id: int
    sender: dict
    kind: str                                  # text, photo, animation, document, service
    text: str | None = None                    # text, or the caption of a media message
    media_digest: str | None = None
    markup: dict | None = None
    file_id: str | None = None
    extra: dict = field(default_factory=dict)
    thread: int | None = None                  # the forum topic it is in (None: General, or no forum)

    def as_dict(self, chats: dict[int, dict]) -> dict:
        out: dict[str, Any] = {"message_id": self.message_id, "date": int(time.time()), "from": self.sender,
                               "chat": chats[self.chat_id], **self.extra}
        if self.thread is not None:
            out.update(message_thread_id=self.thread, is_topic_message=True)
        if self.kind == "text":
            out["text"] = self.text or ""
        elif self.kind == "service":
            pass                               # what it is about is in extra (forum_topic_created)
        else:
            if self.text:
                out["caption"] = self.text
            unique = (self.file_id or "f")[-12:]
            if self.kind == "photo":
                out["photo"] = [{"file_id": self.file_id, "file_unique_id": unique, "width": 600, "height": 600}]
            elif self.kind == "animation":
                media = {"file_id": self.file_id, "file_unique_id": unique, "width": 600, "height": 600,
                         "duration": 1}
                out["animation"] = media
                out["document"] = {"file_id": self.file_id, "file_unique_id": unique}
            else:
                out["document"] = {"file_id": self.file_id, "file_unique_id": unique}
        if self.markup:
            out["reply_markup"] = self.markup
        return out

    def buttons(self) -> list[str]:
        rows = (self.markup or {}).get("inline_keyboard", [])
        return [b.get("callback_data") for row in rows for b in row if "callback_data" in b]


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Rate:
    """Telegram's flood control for one scope (a GCRA): ``count`` per ``per`` seconds, ``burst`` at once."""

    def __init__(self, count: int, per: float, burst: int) -> None:
        self.interval = per / count
        self.tolerance = (burst - 1) * self.interval
        self.tat = float("-inf")

    def wait(self, now: float, jitter: float = 0.0) -> float:
        return max(self.tat - self.tolerance - now - RATE_SLACK * self.interval - jitter, 0.0)

    def take(self, now: float) -> None:
        self.tat = max(self.tat, now) + self.interval


class Window:
    """At most ``count`` messages in any ``per`` seconds: a sliding window over the last ``count``
    accepted ones (a GCRA with a burst lets a burst and the rate through in the same second)."""

    def __init__(self, count: int, per: float) -> None:
        self.per = per
        self.times: deque[float] = deque(maxlen=count)

    def wait(self, now: float, jitter: float = 0.0) -> float:
        if len(self.times) < (self.times.maxlen or 0):
            return 0.0
        return max(self.times[0] + self.per - RATE_SLACK * self.per / len(self.times) - jitter - now, 0.0)

    def take(self, now: float) -> None:
        self.times.append(now)


class FakeBotAPI(BaseRequest):
    """The Bot API as seen through PTB's request layer; see the module docstring."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock                          # the time flood control runs on
        self.query_clock: Callable[[], float] = time.monotonic   # the age of callback queries
        self.rates: dict[object, Rate | Window] = {}
        # How much earlier than spaced a request may arrive (on ``clock``): the scheduling delay of
        # one request that is not the next one's, as network jitter does it live.
        self.jitter = 0.0
        self.floods: dict[int, float] = {}          # chat -> flood control until (on ``clock``)
        self.told: dict[int, tuple[float, int]] = {}   # chat -> (a 429 said wait until, its retry_after)
        self.denied: dict[int, set[str]] = {}       # chat -> rights the bot lacks there
        self.calls: list[Call] = []
        self.chats: dict[int, dict] = {}
        self.messages: dict[tuple[int, int], StoredMessage] = {}
        self.queries: dict[str, dict] = {}         # id -> {"chat_id", "message_id", "answers"}
        # Inline mode: queries (id -> {"from", "query", "at", "answers"}) and the inline messages
        # users sent from their results (inline_message_id -> the message, chat_id 0).
        self.inline_queries: dict[str, dict] = {}
        self.inline_messages: dict[str, StoredMessage] = {}
        self._inline_ids = itertools.count(1)
        self.kicked: set[int] = set()
        self.migrated: dict[int, int] = {}
        self.admins: set[tuple[int, int]] = set()     # (chat id, user id) of group administrators
        self._failures: dict[str, list[tuple[int, dict]]] = {}
        self._message_ids: dict[int, itertools.count] = {}
        self._query_ids = itertools.count(5000)
        self._file_ids = itertools.count(1)
        self.topics: dict[int, dict[int, dict]] = {}   # forum chat id -> thread id -> {"name", "closed"}
        self.general_closed: set[int] = set()
        self.bot_rights: dict[int, set[str]] = {}      # chat id -> the bot's administrator rights there
        self.privacy = True                            # the bot's privacy mode (BotFather's default)
        self.last_bot: dict[int, int] = {}             # chat id -> the bot that last spoke there
        self.commands: dict[tuple[str, str], list[dict]] = {}   # (scope type, language) -> menu
        self.updates: list[dict] = []                  # what getUpdates hands out
        self.conflicts = 0                             # getUpdates calls still answered 409
        self.long_poll = 0.05                          # how long an empty getUpdates waits at most
        self._polling: object | None = None            # the getUpdates under way (one per token)
        self.webhook: dict[str, Any] | None = None     # as the last setWebhook set it (url, secret_token, ...)
        self._update_ids = itertools.count(1)

    # -- BaseRequest ---------------------------------------------------------------------------

    async def initialize(self) -> None:
        pass

    async def shutdown(self) -> None:
        pass

    @property
    def read_timeout(self) -> float:
        return 1.0

    async def do_request(self, url: str, method: str, request_data: RequestData | None = None,
                         read_timeout: Any = None, write_timeout: Any = None, connect_timeout: Any = None,
                         pool_timeout: Any = None) -> tuple[int, bytes]:
        name = url.rsplit("/", 1)[-1]
        wire = dict(request_data.json_parameters) if request_data else {}
        uploads = {key: (value[1] if isinstance(value, tuple) else value)
                   for key, value in ((request_data.multipart_data or {}) if request_data else {}).items()}
        call = Call(name, dict(request_data.parameters) if request_data else {}, uploads, wire)
        self.calls.append(call)
        try:
            if self._failures.get(name):
                status, body = self._failures[name].pop(0)
                call.status, call.error, call.injected = status, body.get("description"), True
                return status, json.dumps(body).encode()
            if name == "getUpdates":
                result = await self._get_updates(wire)
            else:
                result = self._answer(name, wire, uploads)
        except Refused as no:
            call.status, call.error, call.injected = no.status, no.description, no.staged
            body: dict[str, Any] = {"ok": False, "error_code": no.status, "description": no.description}
            if no.parameters:
                body["parameters"] = no.parameters
            return no.status, json.dumps(body).encode()
        return 200, json.dumps({"ok": True, "result": result}).encode()

    # -- what tests use -------------------------------------------------------------------------

    def add_chat(self, chat: dict) -> None:
        self.chats.setdefault(int(chat["id"]), dict(chat))

    def incoming(self, chat: dict, user: dict, text: str, reply_to: int | None = None,
                 thread: int | None = None, sender_chat: dict | None = None) -> dict:
        """A message a user sends: stored like Telegram stores it, returned as the update's message.

        ``thread``: written in that forum topic.  ``sender_chat``: written as a chat (the group
        itself: an anonymous admin; a channel: a member posting as their channel, or the channel's
        automatic forward), with the service account Telegram names as ``from``."""
        self.add_chat(chat)
        chat_id = int(chat["id"])
        if sender_chat is not None:
            if int(sender_chat["id"]) == chat_id:
                user = ANONYMOUS_ADMIN
            elif user.get("is_bot") is False and user["id"] != 777000:
                user = CHANNEL_BOT
        stored = StoredMessage(chat_id, self._next_id(chat_id), user, "text", text, thread=thread)
        if sender_chat is not None:
            stored.extra["sender_chat"] = dict(sender_chat)
        if text.startswith("/"):
            stored.extra["entities"] = [{"type": "bot_command", "offset": 0, "length": len(text.split()[0])}]
        if thread is not None:
            assert thread in self.topics.get(chat_id, {}), f"no topic {thread} in chat {chat_id}"
            # Telegram sends a message in a topic as a reply to the topic's creation message.
            reply_to = thread if reply_to is None else reply_to
        if reply_to is not None:
            original = self.messages.get((chat_id, reply_to))
            assert original is not None, f"no message {reply_to} in chat {chat_id} to reply to"
            stored.extra["reply_to_message"] = original.as_dict(self.chats)
        self.messages[(chat_id, stored.message_id)] = stored
        return stored.as_dict(self.chats)

    def reaches_bot(self, message: dict) -> bool:
        """Whether Telegram would hand this message to the bot (privacy mode, in groups): a
        command addressed to it, a reply to one of its messages, or a bare command when no other
        bot spoke in the group after ours; plain text otherwise not."""
        chat_id = int(message["chat"]["id"])
        if message["chat"]["type"] == "private" or not self.privacy:
            return True
        text = message.get("text") or ""
        replied = message.get("reply_to_message") or {}
        if (replied.get("from") or {}).get("id") == BOT["id"]:
            return True
        if not text.startswith("/"):
            return False
        command = text.split()[0]
        if "@" in command:
            return command.split("@", 1)[1].lower() == BOT["username"].lower()
        return self.last_bot.get(chat_id, BOT["id"]) == BOT["id"]

    def other_bot_says(self, chat: dict, text: str = "e4") -> None:
        """Another bot in the group posts a message: bare commands now go to it, not to ours."""
        chat_id = int(chat["id"])
        message_id = self._next_id(chat_id)
        self.messages[(chat_id, message_id)] = StoredMessage(chat_id, message_id, OTHER_BOT, "text", text)
        self.last_bot[chat_id] = OTHER_BOT["id"]

    def open_topic(self, chat: dict, name: str, creator: dict) -> int:
        """A forum topic created by a member: its thread id is the id of its creation message."""
        chat_id = int(chat["id"])
        self.chats[chat_id]["is_forum"] = True
        thread = self._next_id(chat_id)
        while thread <= 1:                     # 1 is General's
            thread = self._next_id(chat_id)
        created = StoredMessage(chat_id, thread, creator, "service", thread=thread,
                                extra={"forum_topic_created": {"name": name, "icon_color": 7322096}})
        self.messages[(chat_id, thread)] = created
        self.topics.setdefault(chat_id, {})[thread] = {"name": name, "closed": False}
        return thread

    def forum(self, chat: dict) -> dict:
        """The group as a forum (a supergroup with topics on), known to the fake."""
        forum = dict(chat, type="supergroup", is_forum=True)
        self.chats[int(chat["id"])] = forum
        return forum

    def promote_bot(self, chat_id: int, *rights: str) -> None:
        """The bot administers the chat with these rights ("can_manage_topics", ...)."""
        self.bot_rights.setdefault(int(chat_id), set()).update(rights)

    def _create_topic(self, wire: dict[str, str]) -> dict:
        chat_id = self._chat(wire["chat_id"])
        chat = self.chats[chat_id]
        if chat.get("type") != "supergroup" or not chat.get("is_forum"):
            raise Refused(NOT_A_FORUM)
        if "can_manage_topics" not in self.bot_rights.get(chat_id, set()):
            raise Refused(NO_TOPIC_RIGHTS)
        name = wire["name"]
        if not name.strip() or len(name) > TOPIC_NAME_LIMIT:
            raise Refused("Bad Request: TOPIC_NAME_INVALID")
        thread = self.open_topic(chat, name, BOT)
        self.last_bot[chat_id] = BOT["id"]
        return {"message_thread_id": thread, "name": name, "icon_color": 7322096}

    def _end_topic(self, name: str, wire: dict[str, str]) -> bool:
        chat_id = self._chat(wire["chat_id"])
        thread = int(wire["message_thread_id"])
        topic = self.topics.get(chat_id, {}).get(thread)
        if topic is None:
            raise Refused("Bad Request: TOPIC_ID_INVALID")
        rights = self.bot_rights.get(chat_id, set())
        if name == "deleteForumTopic":
            if "can_delete_messages" not in rights:
                raise Refused("Bad Request: not enough rights to delete the topic")
            self.delete_topic(chat_id, thread)
            for key in [k for k, m in self.messages.items() if k[0] == chat_id and m.thread == thread]:
                del self.messages[key]
            return True
        created = self.messages.get((chat_id, thread))
        made_by_bot = created is not None and created.sender is BOT
        if "can_manage_topics" not in rights and not made_by_bot:
            raise Refused("Bad Request: not enough rights to close the topic")
        if topic["closed"]:
            raise Refused("Bad Request: TOPIC_NOT_MODIFIED")
        topic["closed"] = True
        return True

    def close_topic(self, chat_id: int, thread: int | None) -> None:
        """Close a topic (``None``: General) to everyone who is not an admin, the bot included."""
        if thread is None:
            self.general_closed.add(int(chat_id))
        else:
            self.topics[int(chat_id)][thread]["closed"] = True

    def delete_topic(self, chat_id: int, thread: int) -> None:
        del self.topics[int(chat_id)][thread]

    def conflict(self, times: int) -> None:
        """Another process polls with the same token: the next ``times`` getUpdates get 409."""
        self.conflicts += times

    def queue_update(self, **payload: Any) -> None:
        """An update for getUpdates to hand out (update ids are given in order)."""
        self.updates.append({"update_id": next(self._update_ids), **payload})

    async def deliver_webhook(self, workers: Sequence[Callable[[dict], Awaitable[Any]]], *, seed: int = 0,
                              route: Callable[[dict], int] | None = None,
                              spread: float = 0.02) -> list[tuple[int, dict]]:
        """Every pending update POSTed to the webhook as Telegram does it behind a load balancer:
        several at once (up to the webhook's ``max_connections``), each to any of the ``workers``
        (``route`` picks one by index, else a seeded random choice), in no particular order (each
        starts after a random delay of up to ``spread`` seconds, and a worker answering slowly
        holds back none of the others).  Only while a webhook is set.  What went where, in the
        order the deliveries were answered."""
        assert self.webhook is not None, "Telegram delivers updates to a webhook only once one is set"
        assert workers, "no webhook worker to deliver to"
        chance = random.Random(seed)
        updates, self.updates = self.updates, []
        gate = asyncio.Semaphore(int(self.webhook.get("max_connections") or 40))
        answered: list[tuple[int, dict]] = []

        async def post(update: dict, worker: int, delay: float) -> None:
            await asyncio.sleep(delay)
            async with gate:
                await workers[worker](update)
            answered.append((worker, update))

        posts = [post(update, route(update) if route is not None else chance.randrange(len(workers)),
                      chance.uniform(0.0, spread)) for update in updates]
        chance.shuffle(posts)
        await asyncio.gather(*posts)
        return answered

    def webhook_worker(self, url: str, secret: str | None = None) -> Callable[[dict], Awaitable[int]]:
        """A worker process's webhook server as ``deliver_webhook`` reaches it: the update POSTed
        as JSON to ``url`` with the webhook's secret token header; the HTTP status."""
        import urllib.error
        import urllib.request

        def post(update: dict) -> int:
            request = urllib.request.Request(url, data=json.dumps(update).encode(), method="POST",
                                             headers={"Content-Type": "application/json"})
            if secret is not None:
                request.add_header("X-Telegram-Bot-Api-Secret-Token", secret)
            try:
                with urllib.request.urlopen(request, timeout=30) as answer:
                    return int(answer.status)
            except urllib.error.HTTPError as err:
                return int(err.code)

        async def worker(update: dict) -> int:
            return await asyncio.to_thread(post, update)
        return worker

    def callback_query(self, chat: dict, user: dict, data: str, message_id: int | None = None) -> dict:
        """A press on a button of a message the bot sent; by default the newest one carrying ``data``."""
        chat_id = int(chat["id"])
        if message_id is None:
            ours = [m for m in self.messages.values() if m.chat_id == chat_id and m.sender is BOT]
            carrying = [m for m in ours if data in m.buttons()]
            pool = carrying or ours
            assert pool, f"the bot has sent nothing in chat {chat_id} that a button could be on"
            message = max(pool, key=lambda m: m.message_id)
        else:
            message = self.messages[(chat_id, message_id)]
            assert message.sender is BOT, "buttons only exist on the bot's own messages"
        query_id = str(next(self._query_ids))
        self.queries[query_id] = {"chat_id": chat_id, "message_id": message.message_id, "answers": [],
                                  "at": self.query_clock()}
        return {"id": query_id, "from": user, "chat_instance": f"ci{chat_id}", "data": data,
                "message": message.as_dict(self.chats)}

    def inline_query(self, user: dict, query: str = "", chat_type: str = "sender") -> dict:
        """``user`` types ``@bot <query>`` in a chat (``chat_type``: sender, private, group,
        supergroup or channel); the update's inline_query."""
        query_id = str(next(self._query_ids))
        self.inline_queries[query_id] = {"from": user, "query": query, "at": self.query_clock(), "answers": []}
        return {"id": query_id, "from": user, "query": query, "offset": "", "chat_type": chat_type}

    def inline_results(self, query_id: str) -> list[dict]:
        """The results the bot answered a query with (the last accepted answer)."""
        answers = self.inline_queries[query_id]["answers"]
        assert answers, f"inline query {query_id} was not answered"
        return answers[-1]["results"]

    def choose_inline_result(self, query_id: str, result_id: str) -> str:
        """The user sends one of the results: Telegram posts its message in their name (via the
        bot) and names it by an inline_message_id; returned."""
        query = self.inline_queries[query_id]
        result = next(r for r in self.inline_results(query_id) if r["id"] == result_id)
        content = result["input_message_content"]
        inline_id = f"AgAAA{next(self._inline_ids):06d}{query_id}"
        stored = StoredMessage(0, 0, query["from"], "text", content["message_text"],
                               markup=result.get("reply_markup"), extra={"via_bot": BOT})
        self.inline_messages[inline_id] = stored
        return inline_id

    def chosen_inline_result(self, query_id: str, result_id: str, inline_message_id: str) -> dict:
        """The chosen_inline_result update (sent only with BotFather's /setinlinefeedback)."""
        query = self.inline_queries[query_id]
        return {"result_id": result_id, "from": query["from"], "query": query["query"],
                "inline_message_id": inline_message_id}

    def inline_callback_query(self, user: dict, inline_message_id: str, data: str) -> dict:
        """A press on a button of an inline message: no ``message`` (the bot may not be in that
        chat), its ``inline_message_id`` instead.  ``data`` is whatever the client sent: a client
        can send any data, whatever the message's buttons say."""
        assert inline_message_id in self.inline_messages, f"no inline message {inline_message_id}"
        query_id = str(next(self._query_ids))
        self.queries[query_id] = {"inline_message_id": inline_message_id, "answers": [], "at": self.query_clock()}
        return {"id": query_id, "from": user, "chat_instance": f"ci{inline_message_id}",
                "inline_message_id": inline_message_id, "data": data}

    def forget_inline(self, inline_message_id: str) -> None:
        """The inline message was deleted by its sender: it can no longer be edited."""
        del self.inline_messages[inline_message_id]

    def fail(self, method: str, status: int, description: str, times: int = 1, **parameters: Any) -> None:
        """Answer the next ``times`` calls of ``method`` with this error instead."""
        body: dict[str, Any] = {"ok": False, "error_code": status, "description": description}
        if parameters:
            body["parameters"] = parameters
        self._failures.setdefault(method, []).extend([(status, body)] * times)

    def pending_failures(self, method: str) -> int:
        return len(self._failures.get(method, []))

    def kick(self, chat_id: int) -> None:
        self.kicked.add(int(chat_id))

    def flood(self, chat_id: int, seconds: float) -> None:
        """Telegram holds the chat in flood control for ``seconds`` (on ``clock``): every message
        posted there meanwhile gets a 429 with what is left of it."""
        self.floods[int(chat_id)] = self.clock() + seconds

    def restrict(self, chat_id: int, *rights: str) -> None:
        """The bot may not send these in the chat: "photos", "documents", "animations" (GIFs are
        "other messages" in Telegram's permissions) or "messages" (nothing at all)."""
        assert set(rights) <= {"photos", "documents", "animations", "messages"}, rights
        self.denied.setdefault(int(chat_id), set()).update(rights)

    def migrate(self, old: int, new: int) -> None:
        self.migrated[int(old)] = int(new)
        self.add_chat(dict(self.chats[int(old)], id=int(new), type="supergroup"))

    def named(self, method: str, ok_only: bool = False) -> list[Call]:
        return [c for c in self.calls if c.method == method and (c.status == 200 or not ok_only)]

    def refused(self, injected: bool | None = None) -> list[Call]:
        """Calls that got an error; ``injected=False``: only those the fake refused on its own."""
        return [c for c in self.calls if c.status != 200 and (injected is None or c.injected == injected)]

    def bot_messages(self, chat_id: int, kind: str | None = None) -> list[StoredMessage]:
        found = [m for m in self.messages.values() if m.chat_id == chat_id and m.sender is BOT
                 and (kind is None or m.kind == kind)]
        return sorted(found, key=lambda m: m.message_id)

    def upload(self, call: Call) -> bytes:
        """The bytes a call uploaded for its file parameter, or for its InputMedia's attach:// name."""
        if "media" in call.wire:
            return call.files[str(self.media_json(call).get("media", "")).removeprefix("attach://")]
        return next(iter(call.files.values()))

    def media_json(self, call: Call) -> dict:
        """The InputMedia of an edit as Telegram received it (JSON on the wire), not as PTB held it."""
        return json.loads(call.wire["media"])

    # -- the API -------------------------------------------------------------------------------

    def _next_id(self, chat_id: int) -> int:
        return next(self._message_ids.setdefault(chat_id, itertools.count(1)))

    def _answer(self, name: str, wire: dict[str, str], uploads: dict[str, bytes]) -> Any:
        if name not in METHODS:
            raise Refused("Not Found", status=404)
        required, file_param = METHODS[name]
        for param in required:
            if param not in wire and not (param == file_param and param in uploads):
                raise Refused(f"Bad Request: {'message text is empty' if param == 'text' else param + ' is empty'}")
        referenced: set[str] = set()
        if file_param is not None and file_param in uploads:
            referenced.add(file_param)
        if name in POSTING and "chat_id" in wire:
            self._flood_control(name, wire)
        markup = self._keyboard(wire.get("reply_markup"))
        if _web_app_buttons(markup):
            # Telegram takes a web_app button only in a private chat between a user and the bot.
            chat = self.chats.get(int(wire["chat_id"])) if wire.get("chat_id", "").lstrip("-").isdigit() else None
            if chat is None or chat.get("type") != "private":
                raise Refused("Bad Request: BUTTON_TYPE_INVALID")
        caption = wire.get("caption")
        if caption is not None and _units(caption) > CAPTION_LIMIT:
            raise Refused("Bad Request: message caption is too long")
        if name == "getMe":
            return BOT
        if name == "createForumTopic":
            return self._create_topic(wire)
        if name in ("deleteForumTopic", "closeForumTopic"):
            return self._end_topic(name, wire)
        if name == "deleteWebhook":
            self.webhook = None
            if wire.get("drop_pending_updates") == "true":
                self.updates.clear()
            return True
        if name == "setWebhook":
            return self._set_webhook(wire)
        if name == "setMyCommands":
            return self._set_commands(wire)
        if name == "getMyCommands":
            return self.commands.get(self._command_key(wire), [])
        if name == "answerCallbackQuery":
            return self._answer_query(wire)
        if name == "answerInlineQuery":
            return self._answer_inline_query(wire)
        if name == "getChatMember":
            chat_id = self._chat(wire["chat_id"])
            user = next((u for u in USERS.values() if str(u["id"]) == wire["user_id"]), None)
            if user is None:
                raise Refused("Bad Request: user not found")
            status = "administrator" if (chat_id, user["id"]) in self.admins else "member"
            member = {"status": status, "user": user}
            if status == "administrator":
                member.update({flag: True for flag in ("can_be_edited", "is_anonymous", "can_manage_chat",
                                                       "can_delete_messages", "can_manage_video_chats",
                                                       "can_restrict_members", "can_promote_members",
                                                       "can_change_info", "can_invite_users", "can_post_stories",
                                                       "can_edit_stories", "can_delete_stories")})
            return member
        if name == "setMessageReaction":
            chat_id = self._chat(wire["chat_id"])
            target = self.messages.get((chat_id, int(wire["message_id"])))
            if target is None:
                raise Refused("Bad Request: message to react not found")
            reactions = json.loads(wire.get("reaction", "[]"))
            if not isinstance(reactions, list) or len(reactions) > 1:
                raise Refused("Bad Request: REACTIONS_TOO_MANY")
            for reaction in reactions:
                if reaction.get("type") != "emoji" or reaction.get("emoji") not in REACTIONS:
                    raise Refused("Bad Request: REACTION_INVALID")
            target.extra["reactions"] = reactions
            return True
        if name in SENT_KIND:
            chat_id = self._chat(wire["chat_id"])
            explicit = self._explicit_thread(chat_id, wire)
            replied = self._check_reply(chat_id, wire, in_topic=explicit is not None)
            thread = explicit if explicit is not None else (replied.thread if replied is not None else None)
            if (thread is None and chat_id in self.general_closed) or (
                    thread is not None and self.topics[chat_id][thread]["closed"]):
                raise Refused(TOPIC_CLOSED)
            if name == "sendMessage":
                text = wire["text"]
                if not text.strip():
                    raise Refused("Bad Request: message text is empty")
                if _units(text) > TEXT_LIMIT:
                    raise Refused("Bad Request: message is too long")
                entities = self._entities(text, wire.get("entities"), wire.get("parse_mode"))
                stored = StoredMessage(chat_id, self._next_id(chat_id), BOT, "text", text, markup=markup)
                if entities:
                    stored.extra["entities"] = entities
            else:
                entities = self._entities(caption or "", wire.get("caption_entities"), wire.get("parse_mode"))
                data = self._file(wire, uploads, file_param)
                stored = StoredMessage(chat_id, self._next_id(chat_id), BOT, SENT_KIND[name], caption,
                                       media_digest=_digest(data) if data is not None else wire[file_param],
                                       markup=markup, file_id=f"file{next(self._file_ids)}")
                if entities:
                    stored.extra["caption_entities"] = entities
            self._no_stray(uploads, referenced)
            stored.thread = thread
            self.messages[(chat_id, stored.message_id)] = stored
            self.last_bot[chat_id] = BOT["id"]
            return stored.as_dict(self.chats)
        if name == "editMessageMedia":
            if "inline_message_id" in wire and str(json.loads(wire["media"]).get("media", "")).startswith("attach://"):
                raise Refused("Bad Request: can't use uploaded files in inline messages: use a file_id or an HTTP URL")
            media = self._media(wire["media"], uploads, referenced)
            self._no_stray(uploads, referenced)
            target = self._editable(wire)
            if target.kind == "text":
                raise Refused("Bad Request: there is no media in the message to edit")
            new = (media["type"], media["digest"], media.get("caption"), markup)
            if new == (target.kind, target.media_digest, target.text, target.markup):
                raise Refused(NOT_MODIFIED)
            target.kind, target.media_digest, target.text, target.markup = new
            target.file_id = f"file{next(self._file_ids)}"
            return self._edited(target, wire)
        if name == "editMessageCaption":
            target = self._editable(wire)
            if target.kind == "text":
                raise Refused("Bad Request: there is no caption in the message to edit")
            if (caption, markup) == (target.text, target.markup):
                raise Refused(NOT_MODIFIED)
            target.text, target.markup = caption, markup
            return self._edited(target, wire)
        if name == "editMessageText":
            target = self._editable(wire)
            if target.kind != "text":
                raise Refused("Bad Request: there is no text in the message to edit")
            text = wire["text"]
            if not text.strip():
                raise Refused("Bad Request: message text is empty")
            if _units(text) > TEXT_LIMIT:
                raise Refused("Bad Request: message is too long")
            entities = self._entities(text, wire.get("entities"), wire.get("parse_mode")) or None
            if (text, markup, entities) == (target.text, target.markup, target.extra.get("entities")):
                raise Refused(NOT_MODIFIED)
            target.text, target.markup = text, markup
            target.extra.pop("entities", None)
            if entities:
                target.extra["entities"] = entities
            return self._edited(target, wire)
        if name == "editMessageReplyMarkup":
            target = self._editable(wire)
            if markup == target.markup:
                raise Refused(NOT_MODIFIED)
            target.markup = markup
            return self._edited(target, wire)
        # deleteMessage
        target = self._editable(wire, verb="delete")
        del self.messages[(target.chat_id, target.message_id)]
        return True

    def _flood_control(self, name: str, wire: dict[str, str]) -> None:
        """A 429 when the message would exceed Telegram's limits; else it counts against them."""
        chat_id = self._chat(wire["chat_id"])
        # Permissions: a message the bot may not send in this chat.
        denied = self.denied.get(chat_id, set())
        right = RIGHTS.get(name)
        if name == "editMessageMedia":
            media_type = json.loads(wire.get("media", "{}")).get("type")
            right = {"photo": RIGHTS["sendPhoto"], "animation": RIGHTS["sendAnimation"],
                     "document": RIGHTS["sendDocument"]}.get(media_type)
        if "messages" in denied and name.startswith("send"):
            right = RIGHTS["sendMessage"]
        if right is not None and right[0] in denied:
            raise Refused(f"Bad Request: not enough rights to send {right[1]} to the chat", staged=True)
        now = self.clock()
        held = self.floods.get(chat_id, 0.0) - now
        if held > 0:
            raise Refused(f"Too Many Requests: retry after {math.ceil(held)}", status=429,
                          parameters={"retry_after": math.ceil(held)}, staged=True)
        told = self.told.get(chat_id)
        if told is not None and now < told[0] - RATE_SLACK:
            # Posted again while told to wait: a longer wait, from now.
            longer = min(told[1] * FLOOD_ESCALATION, FLOOD_LONGEST)
            self.told[chat_id] = (now + longer, longer)
            raise Refused(f"Too Many Requests: retry after {longer}", status=429, parameters={"retry_after": longer})
        scopes: list[tuple[object, tuple[int, float, int]]] = [(("chat", chat_id), CHAT_RATE)]
        if self.chats[chat_id].get("type") in ("group", "supergroup"):
            scopes.append((("group", chat_id), GROUP_RATE))
        rates: list[Rate | Window] = [self.rates.setdefault(key, Rate(*rate)) for key, rate in scopes]
        rates.append(self.rates.setdefault("all", Window(*GLOBAL_RATE)))
        wait = max(rate.wait(now, self.jitter) for rate in rates)
        if wait > 0:
            retry = math.ceil(wait)
            # A post after the wait itself (not its rounding up) is not lengthened: the limits allow it.
            self.told[chat_id] = (now + wait, retry)
            raise Refused(f"Too Many Requests: retry after {retry}", status=429, parameters={"retry_after": retry})
        for rate in rates:
            rate.take(now)

    def _chat(self, raw: str) -> int:
        try:
            chat_id = int(raw)
        except ValueError:
            raise Refused("Bad Request: chat not found") from None
        if chat_id in self.migrated:
            raise Refused("Bad Request: group chat was upgraded to a supergroup chat",
                          parameters={"migrate_to_chat_id": self.migrated[chat_id]}, staged=True)
        if chat_id in self.kicked:
            raise Refused("Forbidden: bot was kicked from the group chat", status=403, staged=True)
        if chat_id not in self.chats:
            if any(user["id"] == chat_id for user in USERS.values()):
                # A user's private chat exists for the bot only once the user started it.
                raise Refused("Forbidden: bot can't initiate conversation with a user", status=403)
            raise Refused("Bad Request: chat not found")
        return chat_id

    def _edited(self, target: StoredMessage, wire: dict[str, str]) -> dict | bool:
        """An edit's answer: the message, or True for an inline message (the bot never gets those)."""
        return True if "inline_message_id" in wire else target.as_dict(self.chats)

    def _editable(self, wire: dict[str, str], verb: str = "edit") -> StoredMessage:
        if "inline_message_id" in wire:
            if "chat_id" in wire or "message_id" in wire:
                raise Refused(BOTH_IDS)
            target = self.inline_messages.get(wire["inline_message_id"])
            if target is None:
                raise Refused("Bad Request: MESSAGE_ID_INVALID")
            return target
        if "chat_id" not in wire or "message_id" not in wire:
            raise Refused("Bad Request: message identifier is not specified")
        chat_id = self._chat(wire["chat_id"])
        target = self.messages.get((chat_id, int(wire["message_id"])))
        if target is None:
            raise Refused(f"Bad Request: message to {verb} not found")
        if target.sender is not BOT:
            raise Refused(f"Bad Request: message can't be {verb}ed")
        return target

    def _explicit_thread(self, chat_id: int, wire: dict[str, str]) -> int | None:
        """The topic a send names, which must be an existing topic of a forum (General is named
        by leaving the parameter out)."""
        raw = wire.get("message_thread_id")
        if raw is None:
            return None
        thread = int(raw)
        if thread not in self.topics.get(chat_id, {}):
            raise Refused(THREAD_NOT_FOUND)
        return thread

    def _check_reply(self, chat_id: int, wire: dict[str, str], in_topic: bool = False) -> StoredMessage | None:
        """The message a send replies to (None when it replies to none, or to one that is gone
        and may be)."""
        if "reply_parameters" in wire:
            reply = json.loads(wire["reply_parameters"])
            if not isinstance(reply, dict) or "message_id" not in reply:
                raise Refused("Bad Request: can't parse reply parameters JSON object")
            where = self._chat(str(reply.get("chat_id", chat_id)))
            target, lenient = int(reply["message_id"]), bool(reply.get("allow_sending_without_reply"))
        elif "reply_to_message_id" in wire:
            where, target = chat_id, int(wire["reply_to_message_id"])
            lenient = wire.get("allow_sending_without_reply") == "true"
        else:
            return None
        # In a topic Telegram ignores allow_sending_without_reply.
        if (where, target) not in self.messages and (not lenient or in_topic):
            raise Refused("Bad Request: message to be replied not found")
        return self.messages.get((where, target))

    def _command_key(self, wire: dict[str, str]) -> tuple[str, str]:
        try:
            scope = json.loads(wire.get("scope") or '{"type": "default"}')
        except ValueError:
            raise Refused("Bad Request: can't parse BotCommandScope JSON object") from None
        if not isinstance(scope, dict) or scope.get("type") not in SCOPES:
            raise Refused("Bad Request: can't parse BotCommandScope JSON object")
        if scope["type"].startswith("chat"):
            self._chat(str(scope.get("chat_id", "")))
        language = wire.get("language_code") or ""
        if language and not re.fullmatch(r"[a-z]{2}", language):
            raise Refused("Bad Request: invalid language code specified")
        return scope["type"], language

    def _set_commands(self, wire: dict[str, str]) -> bool:
        try:
            commands = json.loads(wire["commands"])
        except ValueError:
            raise Refused("Bad Request: can't parse commands JSON object") from None
        if not isinstance(commands, list):
            raise Refused("Bad Request: can't parse commands JSON object")
        if len(commands) > COMMAND_LIMIT:
            raise Refused("Bad Request: BOT_COMMANDS_TOO_MUCH")
        for command in commands:
            if not isinstance(command, dict) or not COMMAND_NAME.fullmatch(str(command.get("command", ""))):
                raise Refused("Bad Request: BOT_COMMAND_INVALID")
            description = command.get("description")
            if not isinstance(description, str) or not description.strip() or \
                    len(description) > COMMAND_DESCRIPTION_LIMIT:
                raise Refused("Bad Request: BOT_COMMAND_DESCRIPTION_INVALID")
        self.commands[self._command_key(wire)] = commands
        return True

    def _set_webhook(self, wire: dict[str, str]) -> bool:
        url = wire["url"]
        if wire.get("drop_pending_updates") == "true":
            self.updates.clear()
        if not url:
            self.webhook = None                 # an empty URL removes the webhook
            return True
        try:
            parts = urlsplit(url)
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            raise Refused("Bad Request: bad webhook: invalid URL") from None
        if parts.scheme != "https" or not parts.hostname:
            raise Refused("Bad Request: bad webhook: An HTTPS URL must be provided for webhook")
        if port not in WEBHOOK_PORTS:
            raise Refused("Bad Request: bad webhook: Webhook can be set up only on ports 80, 88, 443 or 8443")
        secret = wire.get("secret_token")
        if secret is not None and not SECRET_TOKEN.fullmatch(secret):
            raise Refused("Bad Request: secret token contains unallowed characters" if secret and len(secret) <= 256
                          else "Bad Request: bad webhook: secret token must be 1-256 characters long")
        connections = int(wire.get("max_connections") or 40)
        if not 1 <= connections <= 100:
            raise Refused("Bad Request: bad webhook: max_connections must be between 1 and 100")
        self.webhook = {"url": url, "secret_token": secret, "max_connections": connections,
                        "allowed_updates": json.loads(wire["allowed_updates"]) if "allowed_updates" in wire else None}
        return True

    async def _get_updates(self, wire: dict[str, str]) -> list[dict]:
        if self.webhook is not None:
            raise Refused(WEBHOOK_ACTIVE, status=409)
        if self.conflicts > 0:
            self.conflicts -= 1
            raise Refused(CONFLICT, status=409, staged=True)
        # The offset confirms the updates before it as the request arrives, whatever becomes of it.
        offset = int(wire.get("offset") or 0)
        self.updates = [u for u in self.updates if u["update_id"] >= offset]
        # Telegram serves one poll per token: a newer one ends the one under way with 409.
        poll = object()
        self._polling = poll
        # A long poll that finds nothing waits (``long_poll`` at most: the short default keeps a
        # test's loop from spinning) for an update, or for a newer poll to end it.
        give_up = time.monotonic() + min(float(wire.get("timeout") or 0), self.long_poll)
        while True:
            if self._polling is not poll:
                raise Refused(CONFLICT, status=409, staged=True)
            if self.updates or time.monotonic() >= give_up:
                self._polling = None
                return list(self.updates)
            await asyncio.sleep(0.01)

    def _file(self, wire: dict[str, str], uploads: dict[str, bytes], param: str | None) -> bytes | None:
        assert param is not None
        if param in uploads:
            return uploads[param]
        value = wire[param]
        if value.startswith("attach://"):
            raise Refused(f"Bad Request: wrong remote file identifier specified: can't use attach:// for {param}")
        self._known_file(value)
        return None

    def _known_file(self, value: str) -> None:
        if value.startswith(("http://", "https://")):
            return
        known = {m.file_id for m in self.messages.values() if m.file_id}
        if value not in known:
            raise Refused("Bad Request: wrong file identifier/HTTP URL specified")

    def _media(self, raw: str, uploads: dict[str, bytes], referenced: set[str]) -> dict:
        try:
            media = json.loads(raw)
        except ValueError:
            raise Refused("Bad Request: can't parse InputMedia JSON object") from None
        if not isinstance(media, dict):
            raise Refused("Bad Request: can't parse InputMedia JSON object")
        if media.get("type") not in MEDIA_TYPES:
            raise Refused("Bad Request: can't parse InputMedia: media type invalid")
        ref = media.get("media")
        if ref is None:
            raise Refused("Bad Request: can't parse InputMedia: media not found")
        if not isinstance(ref, str) or not ref:
            raise Refused("Bad Request: can't parse InputMedia: media is not a string")
        if ref.startswith("attach://"):
            part = ref.removeprefix("attach://")
            if part not in uploads:
                raise Refused(f"Bad Request: can't parse InputMedia: file {part!r} not found in the request")
            referenced.add(part)
            digest = _digest(uploads[part])
        else:
            self._known_file(ref)
            digest = next((m.media_digest for m in self.messages.values() if m.file_id == ref), ref)
        thumb = media.get("thumbnail")
        if isinstance(thumb, str) and thumb.startswith("attach://"):
            if thumb.removeprefix("attach://") not in uploads:
                raise Refused("Bad Request: can't parse InputMedia: thumbnail not found")
            referenced.add(thumb.removeprefix("attach://"))
        caption = media.get("caption")
        if caption is not None and _units(caption) > CAPTION_LIMIT:
            raise Refused("Bad Request: message caption is too long")
        return {"type": media["type"], "digest": digest, "caption": caption or None}

    @staticmethod
    def _no_stray(uploads: dict[str, bytes], referenced: set[str]) -> None:
        stray = sorted(set(uploads) - referenced)
        if stray:
            raise Refused(f"Bad Request: uploaded part(s) {stray} not referenced by any parameter")

    @staticmethod
    def _keyboard(raw: str | None) -> dict | None:
        if raw is None:
            return None
        try:
            markup = json.loads(raw)
        except ValueError:
            raise Refused("Bad Request: can't parse reply keyboard markup JSON object") from None
        if not isinstance(markup, dict):
            raise Refused("Bad Request: can't parse reply keyboard markup JSON object")
        if "inline_keyboard" not in markup:
            return markup
        rows = markup["inline_keyboard"]
        if not isinstance(rows, list) or not all(isinstance(r, list) for r in rows):
            raise Refused("Bad Request: field \"inline_keyboard\" of the InlineKeyboardMarkup should be an Array of "
                          "Arrays")
        if any(len(row) > ROW_LIMIT for row in rows) or sum(len(row) for row in rows) > BUTTON_LIMIT:
            raise Refused("Bad Request: REPLY_MARKUP_TOO_LONG")
        for row in rows:
            for button in row:
                if not isinstance(button, dict) or not isinstance(button.get("text"), str) or not button["text"]:
                    raise Refused("Bad Request: can't parse inline keyboard button: Text buttons are unallowed in "
                                  "the inline keyboard")
                actions = BUTTON_ACTIONS & set(button)
                if len(actions) != 1:
                    raise Refused("Bad Request: can't parse inline keyboard button: exactly one of the optional "
                                  "fields must be used")
                if "url" in button:
                    link = urlsplit(str(button["url"]))
                    if not ((link.scheme in ("http", "https") and link.netloc) or link.scheme == "tg"):
                        raise Refused("Bad Request: BUTTON_URL_INVALID")
                if "web_app" in button:
                    app = button["web_app"]
                    link = urlsplit(str(app.get("url", "")) if isinstance(app, dict) else "")
                    if link.scheme != "https" or not link.netloc:
                        raise Refused("Bad Request: BUTTON_URL_INVALID")
                if "callback_data" in button:
                    data = button["callback_data"]
                    if not isinstance(data, str) or not 1 <= len(data.encode()) <= 64:
                        raise Refused("Bad Request: BUTTON_DATA_INVALID")
        return markup or None

    def _answer_query(self, wire: dict[str, str]) -> bool:
        query = self.queries.get(wire["callback_query_id"])
        if query is None or query["answers"] or self.query_clock() - query["at"] > QUERY_TTL:
            raise Refused(QUERY_INVALID)
        text = wire.get("text")
        if text is not None and _units(text) > ALERT_LIMIT:
            raise Refused("Bad Request: MESSAGE_TOO_LONG")
        url = wire.get("url")
        if url is not None:
            # Only a game's URL or a link that starts a private chat with this bot may be opened.
            prefix = f"https://t.me/{BOT['username']}?start="
            payload = url.removeprefix(prefix)
            if not url.startswith(prefix) or not 1 <= len(payload) <= 64 or not all(
                    ch.isascii() and (ch.isalnum() or ch in "_-") for ch in payload):
                raise Refused("Bad Request: URL_INVALID")
        query["answers"].append({"text": text, "show_alert": wire.get("show_alert") == "true", "url": url})
        return True

    def _answer_inline_query(self, wire: dict[str, str]) -> bool:
        query = self.inline_queries.get(wire["inline_query_id"])
        if query is None or query["answers"] or self.query_clock() - query["at"] > INLINE_QUERY_TTL:
            raise Refused(QUERY_INVALID)
        try:
            results = json.loads(wire["results"])
        except ValueError:
            raise Refused("Bad Request: can't parse inline query results JSON object") from None
        if not isinstance(results, list):
            raise Refused("Bad Request: can't parse inline query results JSON object")
        if len(results) > INLINE_RESULT_LIMIT:
            raise Refused("Bad Request: RESULTS_TOO_MUCH")
        seen: set[str] = set()
        for result in results:
            if not isinstance(result, dict) or result.get("type") not in RESULT_TYPES:
                raise Refused("Bad Request: can't parse inline query result: result type is invalid")
            if result["type"] != "article":
                raise Refused(f"Bad Request: the fake models article results only, not {result['type']}")
            result_id = result.get("id")
            if not isinstance(result_id, str) or not 1 <= len(result_id.encode()) <= 64:
                raise Refused("Bad Request: RESULT_ID_INVALID")
            if result_id in seen:
                raise Refused("Bad Request: RESULT_ID_DUPLICATE")
            seen.add(result_id)
            if not isinstance(result.get("title"), str) or not result["title"].strip():
                raise Refused("Bad Request: RESULT_TITLE_EMPTY")
            if "description" in result and not isinstance(result["description"], str):
                raise Refused("Bad Request: can't parse inline query result: description must be a string")
            content = result.get("input_message_content")
            if not isinstance(content, dict) or "message_text" not in content:
                raise Refused("Bad Request: MESSAGE_EMPTY")
            text = content["message_text"]
            if not isinstance(text, str) or not text.strip():
                raise Refused("Bad Request: MESSAGE_EMPTY")
            if _units(text) > TEXT_LIMIT:
                raise Refused("Bad Request: MESSAGE_TOO_LONG")
            self._entities(text, json.dumps(content["entities"]) if "entities" in content else None,
                           content.get("parse_mode"))
            if "reply_markup" in result:
                if _web_app_buttons(self._keyboard(json.dumps(result["reply_markup"]))):
                    raise Refused("Bad Request: BUTTON_TYPE_INVALID")
        cache_time = wire.get("cache_time")
        if cache_time is not None and not (cache_time.isdigit()):
            raise Refused("Bad Request: can't parse cache_time")
        personal = wire.get("is_personal")
        if personal is not None and personal not in ("true", "false"):
            raise Refused("Bad Request: can't parse is_personal")
        query["answers"].append({"results": results, "cache_time": int(cache_time) if cache_time else 300,
                                 "is_personal": personal == "true"})
        return True

    @staticmethod
    def _entities(text: str, raw: str | None, parse_mode: str | None = None) -> list[dict]:
        if raw is None:
            return []
        if parse_mode:
            raise Refused("Bad Request: parse_mode and entities sent together")
        entities = json.loads(raw)
        units = len(text.encode("utf-16-le")) // 2
        if not isinstance(entities, list):
            raise Refused("Bad Request: can't parse entities JSON object")
        for entity in entities:
            offset, length = entity.get("offset"), entity.get("length")
            if entity.get("type") not in ENTITY_TYPES or not isinstance(offset, int) or not isinstance(length, int):
                raise Refused("Bad Request: can't parse entities: unsupported entity")
            if offset < 0 or length <= 0 or offset + length > units:
                raise Refused("Bad Request: can't parse entities: entity is out of the text")
            if entity["type"] == "text_mention":
                user = entity.get("user")
                if (not isinstance(user, dict) or not isinstance(user.get("id"), int)
                        or not isinstance(user.get("is_bot"), bool) or not user.get("first_name")):
                    raise Refused("Bad Request: can't parse entities: wrong user specified in text_mention")
        return entities

    def start_private(self, user: str) -> dict:
        """``user`` opens their private chat with the bot (presses Start): the bot may write there."""
        info = USERS[user]
        chat = {"id": info["id"], "type": "private", "first_name": info["first_name"]}
        self.add_chat(chat)
        return chat

    def notified(self, message: StoredMessage) -> list[int]:
        """The ids of the users a message pings: its text mentions, and the @usernames it mentions."""
        entities = message.extra.get("entities") or message.extra.get("caption_entities") or []
        units = (message.text or "").encode("utf-16-le")
        ids = []
        for entity in entities:
            if entity["type"] == "text_mention":
                ids.append(entity["user"]["id"])
            elif entity["type"] == "mention":
                start, end = 2 * entity["offset"], 2 * (entity["offset"] + entity["length"])
                handle = units[start:end].decode("utf-16-le").lstrip("@").lower()
                ids += [u["id"] for u in USERS.values() if u["username"].lower() == handle]
        return ids

    def unanswered_or_twice(self) -> list[str]:
        """Callback queries that did not get exactly one answer attempt (refused ones count)."""
        attempts: dict[str, int] = dict.fromkeys(self.queries, 0)
        for call in self.calls:
            if call.method == "answerCallbackQuery":
                key = str(call.params.get("callback_query_id"))
                attempts[key] = attempts.get(key, 0) + 1
        return [qid for qid, n in attempts.items() if n != 1]


def _web_app_buttons(markup: dict | None) -> bool:
    """Whether an inline keyboard has a ``web_app`` button."""
    rows = (markup or {}).get("inline_keyboard") or []
    return any(isinstance(b, dict) and "web_app" in b for row in rows for b in row)
