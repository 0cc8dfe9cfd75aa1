"""A strict fake of Discord's HTTP API for the adapter tests.

It sits on the wire, under discord.py: the aiohttp session discord.py opens at login (which
interactions share for their callbacks, followups and edits) is the fake's ``FakeSession``, so
every request discord.py makes - its own retries of a 5xx and its waits for a 429 included - is
recorded and answered with realistic JSON, the way Discord answers it (a 429 with Discord's body
and ``Via`` header).  discord.py's sleeps are virtual (``slept``) and move the fake's clock
(``now``), which is the one interaction deadlines are measured on.  It refuses what Discord
refuses:

- an interaction is acknowledged exactly once, within 3 seconds of its creation: late is
  404 code 10062 "Unknown interaction", twice is 400 code 40060; followups and edits of the
  original response before the acknowledgement are 404 code 10015 "Unknown Webhook";
- an expired interaction token (``expire``) is 404 code 10015 or 401 code 50027;
- a message has content, embeds, files or components (else 400 code 50006), content of at
  most 2,000 characters, at most 10 embeds within Discord's embed limits, at most 5 action rows
  of at most 5 well-formed buttons, well-formed ``allowed_mentions``, and every uploaded
  ``files[n]`` part is listed in ``attachments`` with id n, while every ``attachment://name``
  in an embed names a file of the message (else 400 code 50035 "Invalid Form Body");
- the bot's own post to a channel (REST) needs the bot's permissions there (``deny``), which
  interactions do not: without View Channel it is 403 code 50001 "Missing Access"; without Send
  Messages (Send Messages in Threads in a thread), a file without Attach Files, or a reply
  without Read Message History, 403 code 50013 "Missing Permissions".  Interactions carry the
  same permissions as ``app_permissions``.
- a thread (``POST /channels/{id}/threads``, or ``/channels/{id}/messages/{mid}/threads`` from a
  message) is made in a server channel that is not a thread itself (in a DM 400 code 50003, in a
  thread 400 code 50024), by a bot with View Channel (else 403 code 50001) and Create Public
  Threads, or Create Private Threads for a private one (else 403 code 50013 "Missing
  Permissions"); its name is 1-100 characters and its auto-archive duration one of 60, 1440, 4320,
  10080 minutes (else 400 code 50035); from a message, that message must be in the channel (404
  code 10008) and have no thread yet (400 code 160004).  The thread is a channel of its own
  (``threads``, ``thread_names``), whose permissions start as its parent's and change apart.  The
  bot deletes one (``DELETE /channels/{id}``) only with Manage Threads (else 403 code 50013; the
  invite does not give it: ``allow``), after which it is an Unknown Channel (404 code 10003).

Content is shown as Discord's markdown shows it (``render``: spoilers, masked links, emphasis,
escapes, @everyone): ``Sent.content`` is what users read, ``Sent.raw`` what was sent.  Slash
commands are kept per scope (``command_menu``: a name registered globally and in a server is
listed twice there).

A bot opens a DM channel with a user (``POST /users/@me/channels``); a post there is refused
with 403 code 50007 "Cannot send messages to this user" when the user closed their DMs
(``close_dms``).  The bot edits its own channel posts (``PATCH``): another's message is 403 code
50005, an unknown (or ephemeral) one 404 code 10008, and without View Channel 403 code 50001.

Whatever the fake refuses because of what the adapter sent goes into ``refused``: the harness
fails a test that leaves anything there.  Failures a test scripts on purpose (``script``, gone
channels, channel permissions, expired tokens) are not refusals.

The gateway is faked as far as starting a bot goes: ``GET /gateway/bot`` recommends
``recommended_shards`` shards, and a websocket (``FakeGatewaySocket``) says HELLO, acknowledges
heartbeats and answers IDENTIFY with READY for that shard.  It refuses what Discord refuses at
IDENTIFY: a wrong token (close code 4004 "Authentication failed"), a ``shard`` that is not
``[id, count]`` with 0 <= id < count (4010 "Invalid shard"), fewer shards than a bot of its size
needs (4011 "Sharding required": ``required_shards``), and a shard already connected by another
session (``identified``; Discord would end the older one, which in a deployment means two
processes run the same shard: refused here so a test sees it).  No guild events are sent
unless a test dispatches them (below).

Rate limits, on the wire (``answer``, for the in-process session and discord_server.py alike), as
Discord counts them: every request to a route with a bucket (``BUCKETS``: a channel's messages 5
per 5 s, an interaction's follow-ups 5 per 2 s...) takes one from that bucket's window, split by
the route's major parameter (the channel, the webhook); every answer tells the bucket's state
(``X-RateLimit-Bucket``, ``-Limit``, ``-Remaining``, ``-Reset``, ``-Reset-After``), and a request
over it is a 429 with ``retry_after`` in the body (``X-RateLimit-Scope: user``).  Over the bot's
50 requests a second in all (``GLOBAL_LIMIT``; interaction and follow-up requests are not counted,
as on Discord) it is a 429 with ``global: true`` and ``X-RateLimit-Global``.  Windows run on the fake's clock, which
discord.py's (virtual) waits move: a client that waits as told never meets a 429.
``rate_limited`` lists the 429s given.

The gateway keeps sessions (``sessions``): ``dispatch`` sends an event to a shard's session with
the next sequence number, kept for a RESUME; ``reconnect`` sends op 7 RECONNECT (the session's
events go nowhere until it is resumed); ``invalidate`` sends op 9 INVALID_SESSION (d false: the
session is gone, only a fresh IDENTIFY gets a new one).  A RESUME (op 6) with the token, the
session id and the last sequence number the client saw gets every event it missed, then RESUMED;
a RESUME of an unknown session, or with a sequence the session never reached, gets op 9 false.

Messages remember whom they notified: Discord notifies mentioned users only for a new message
(never for an edit, nor for the followup that replaces a "thinking" placeholder), and only
those ``allowed_mentions`` permits.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import itertools
import json
import math
import re
import string
import time
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import discord
import discord.webhook.async_
import pytest
from multidict import CIMultiDict

from bot.platforms.discord import DraughtsBot
from bot.rules import Position
from bot.storage import Storage

TOKEN = "MTEST.fake-token.never-logged-4f1c2"
APP_ID = 1_200_000_000_000_000_001
GUILD_ID = 1_200_000_000_000_000_100
CHANNEL_ID = 1_200_000_000_000_000_200
OTHER_CHANNEL_ID = 1_200_000_000_000_000_300
THREAD_ID = 1_200_000_000_000_000_500
DM_CHANNEL_ID = 1_200_000_000_000_000_400
SIZE_LIMIT = 10 * 1024 * 1024
ACK_SECONDS = 3.0
TOKEN_SECONDS = 15 * 60

BOT_USER = {"id": str(APP_ID), "username": "draughts", "discriminator": "0", "global_name": "Draughts",
            "avatar": None, "bot": True, "public_flags": 0, "flags": 0, "verified": True, "mfa_enabled": False}
USERS = {
    name: {"id": str(1_200_000_000_000_001_000 + i), "username": name, "discriminator": "0",
           "global_name": name.capitalize(), "avatar": None, "public_flags": 0}
    for i, name in enumerate(["ana", "bob", "cid"])
}

MAX_CONTENT = 2000
MAX_EMBEDS = 10
EMBED_TOTAL = 6000
EMBED_LIMITS = {"title": 256, "description": 4096}
ALT_LIMIT = 1024           # an attachment's description (its alt text)
MAX_ROWS = 5
MAX_PER_ROW = 5
MAX_LABEL = 80
MAX_CUSTOM_ID = 100
BUTTON_STYLES = {1, 2, 3, 4, 5, 6}
LINK_STYLE = 5
PREMIUM_STYLE = 6
MENTION_PARSE = {"users", "roles", "everyone"}
EPHEMERAL = 64
USER_MENTION = re.compile(r"<@!?(\d{15,21})>")
# The bot's permissions in a channel (bits of Discord's permission field).
VIEW_CHANNEL = 1 << 10
SEND_MESSAGES = 1 << 11
ATTACH_FILES = 1 << 15
READ_MESSAGE_HISTORY = 1 << 16
SEND_MESSAGES_IN_THREADS = 1 << 38
MANAGE_THREADS = 1 << 34
CREATE_PUBLIC_THREADS = 1 << 35
CREATE_PRIVATE_THREADS = 1 << 36
ARCHIVE_MINUTES = {60, 1440, 4320, 10080}
THREAD_NAME_LIMIT = 100
BOT_PERMISSIONS = 2248473465835073      # what the invite gives: all of the above, and more


def uid(name: str) -> str:
    return USERS[name]["id"]


def iso(ts: float | None = None) -> str:
    return dt.datetime.fromtimestamp(ts or time.time(), dt.UTC).isoformat()


class FakeResponse:
    """What discord.HTTPException reads from an aiohttp response."""

    def __init__(self, status: int, reason: str, headers: dict[str, str] | None = None) -> None:
        self.status = status
        self.reason = reason
        self.headers = headers or {}


def http_error(status: int, code: int, message: str, *, retry_after: float | None = None) -> discord.HTTPException:
    """The exception discord.py raises for this Discord error answer."""
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
    response = FakeResponse(status, message, headers)
    body: dict[str, Any] = {"code": code, "message": message}
    if retry_after is not None:
        body["retry_after"] = retry_after
    if status == 404:
        return discord.NotFound(response, body)
    if status == 403:
        return discord.Forbidden(response, body)
    if status >= 500:
        return discord.DiscordServerError(response, body)
    return discord.HTTPException(response, body)


class Refused(Exception):
    """Internal: a request Discord would refuse (status, code, why)."""

    def __init__(self, status: int, code: int, why: str) -> None:
        super().__init__(why)
        self.status, self.code, self.why = status, code, why


def invalid(why: str) -> Refused:
    return Refused(400, 50035, "Invalid Form Body: " + why)


@dataclass
class Upload:
    index: int
    filename: str
    data: bytes
    description: str | None = None      # the alt text listed for it in ``attachments``


@dataclass
class Call:
    method: str
    path: str
    payload: dict[str, Any] | None
    files: dict[str, bytes] = field(default_factory=dict)
    token: str | None = None
    error: int | None = None            # the Discord error code it was answered with, if any
    at: float = field(default_factory=time.time)     # when the request reached Discord
    clock: float | None = None          # when, on the fake's clock (which discord.py's waits move)

    @property
    def flags(self) -> int:
        return int((self.payload or {}).get("flags") or 0)

    def custom_ids(self) -> list[str]:
        return [c["custom_id"] for row in (self.payload or {}).get("components") or [] for c in row["components"]]


@dataclass
class Sent:
    """A message as users see it."""

    message: dict[str, Any]
    ephemeral: bool
    channel_id: int
    token: str | None = None
    notified: list[str] = field(default_factory=list)     # user ids Discord notified

    @property
    def raw(self) -> str:
        """The content as the bot sent it, markup and escapes included."""
        return self.message["content"]

    @property
    def content(self) -> str:
        """The content as Discord shows it (spoilers kept as ``||hidden||``, see ``render``)."""
        return render(self.raw).text

    @property
    def rendered(self) -> Rendered:
        return render(self.raw)

    @property
    def id(self) -> int:
        return int(self.message["id"])

    def custom_ids(self) -> list[str]:
        return [c["custom_id"] for row in self.message["components"] for c in row["components"]]

    def filenames(self) -> list[str]:
        return [a["filename"] for a in self.message["attachments"]]


@dataclass
class InteractionState:
    id: int
    token: str
    channel_id: int
    message: dict[str, Any] | None          # the clicked message, for components
    acked: int | None = None                # callback type
    placeholder: dict[str, Any] | None = None
    placeholder_ephemeral: bool = False
    expired: tuple[int, int] | None = None  # (status, code) once the token no longer works
    expires_on_ack: tuple[int, int] | None = None


@dataclass
class Script:
    """A failure a test asks for: the next ``times`` matching requests get ``error``."""

    method: str | None
    path_end: str
    error: discord.HTTPException
    times: int


# -- showing a message the way Discord does -------------------------------------------------------------

PUNCTUATION = frozenset(string.punctuation)
MASKED_LINK = re.compile(r"\[([^\[\]\n]+)\]\((https?://[^()\s]+)\)")
SPECIAL_MENTION = re.compile(r"@(everyone|here)\b")
MENTION_TAG = re.compile(r"<@[!&]?(\d{15,21})>")
LINE_MARKERS = re.compile(r"(?:#{1,3} |-# |>>> |> )")       # at a line start
EMPHASIS = ("**", "__", "~~", "*", "_")


@dataclass
class Rendered:
    """A message's content after Discord's markdown: the text shown, with a spoiler's hidden part
    as ``||hidden||``; what shows before a click; what only a click shows; masked links; what it
    highlights as mentions."""

    text: str = ""
    visible: str = ""
    hidden: list[str] = field(default_factory=list)
    links: list[tuple[str, str]] = field(default_factory=list)
    special: list[str] = field(default_factory=list)      # @everyone / @here shown as mentions
    users: list[str] = field(default_factory=list)


def render(content: str) -> Rendered:
    """Discord's markdown, as far as our messages can meet it: a backslash shows the punctuation
    after it literally; ``||x||`` hides x, across lines too (the first ``||`` after it closes it,
    escaped or not, as Discord's rule does); ``[text](https://...)`` is a link; ``**``, ``__``,
    ``~~``, ``*``, ``_`` emphasise and `` ` `` quotes code (their markers vanish); a line starting
    ``# ``, ``-# `` or ``> `` is a heading, small text or a quote; ``@everyone``, ``@here`` and
    ``<@id>`` are mentions."""
    out = Rendered()
    segments = _inline(content, out, line_start=True)
    out.text = "".join(f"||{text}||" if hidden else text for hidden, text in segments)
    out.visible = "".join("▮" if hidden else text for hidden, text in segments)
    return out


def _inline(s: str, out: Rendered, *, line_start: bool = False) -> list[tuple[bool, str]]:
    """The shown pieces of ``s``: (hidden, text)."""
    segments: list[tuple[bool, str]] = []

    def shown(text: str) -> None:
        segments.append((False, text))

    i = 0
    while i < len(s):
        c = s[i]
        if (i == 0 and line_start) or (i > 0 and s[i - 1] == "\n"):
            m = LINE_MARKERS.match(s, i)
            if m:
                i = m.end()
                continue
        if c == "\\" and i + 1 < len(s) and s[i + 1] in PUNCTUATION:
            shown(s[i + 1])
            i += 2
            continue
        if s.startswith("||", i):
            end = s.find("||", i + 3)
            if end != -1:
                inner = "".join(text for _, text in _inline(s[i + 2:end], out))
                out.hidden.append(inner)
                segments.append((True, inner))
                i = end + 2
                continue
        if c == "`":
            end = s.find("`", i + 1)
            if end > i + 1:
                shown(s[i + 1:end])
                i = end + 1
                continue
        if c == "[" and (m := MASKED_LINK.match(s, i)):
            inner = _inline(m[1], out)
            out.links.append(("".join(text for _, text in inner), m[2]))
            segments.extend(inner)
            i = m.end()
            continue
        marker = next((mk for mk in EMPHASIS if s.startswith(mk, i)), None)
        if marker is not None:
            end = s.find(marker, i + len(marker) + 1)
            if end != -1 and not s[i + len(marker)].isspace():
                segments.extend(_inline(s[i + len(marker):end], out))
                i = end + len(marker)
                continue
        if c == "@" and (m := SPECIAL_MENTION.match(s, i)):
            out.special.append(m[1])
        if c == "<" and (m := MENTION_TAG.match(s, i)):
            out.users.append(m[1])
            shown(m[0])          # kept as the tag: which member it is matters
            i = m.end()
            continue
        shown(c)
        i += 1
    return segments


# -- checking a message the way Discord does ------------------------------------------------------------


def check_allowed_mentions(value: Any) -> None:
    if value is None:
        return
    if not isinstance(value, dict):
        raise invalid("allowed_mentions must be an object")
    unknown = set(value) - {"parse", "users", "roles", "replied_user"}
    if unknown:
        raise invalid(f"allowed_mentions: unknown fields {sorted(unknown)}")
    parse = value.get("parse", [])
    if not isinstance(parse, list) or any(p not in MENTION_PARSE for p in parse) or len(set(parse)) != len(parse):
        raise invalid(f"allowed_mentions.parse: {parse!r}")
    for kind in ("users", "roles"):
        ids = value.get(kind)
        if ids is None:
            continue
        if not isinstance(ids, list) or len(ids) > 100 or not all(re.fullmatch(r"\d{1,20}", str(i)) for i in ids):
            raise invalid(f"allowed_mentions.{kind}: {ids!r}")
        if ids and kind in parse:
            raise invalid(f"allowed_mentions: parse {kind} is mutually exclusive with the {kind} list")
    if "replied_user" in value and not isinstance(value["replied_user"], bool):
        raise invalid("allowed_mentions.replied_user must be a boolean")


def check_components(rows: Any) -> None:
    if not isinstance(rows, list):
        raise invalid("components must be a list")
    if len(rows) > MAX_ROWS:
        raise invalid(f"{len(rows)} action rows (at most {MAX_ROWS})")
    seen: set[str] = set()
    for r, row in enumerate(rows):
        children = row.get("components") if isinstance(row, dict) else None
        if row.get("type") != 1 or not isinstance(children, list) or not children:
            raise invalid(f"components.{r}: not an action row with components")
        if len(children) > MAX_PER_ROW:
            raise invalid(f"components.{r}: {len(children)} buttons (at most {MAX_PER_ROW})")
        for c, button in enumerate(children):
            where = f"components.{r}.components.{c}"
            if button.get("type") != 2:
                raise invalid(f"{where}: only buttons are expected here")
            style = button.get("style")
            if style not in BUTTON_STYLES:
                raise invalid(f"{where}.style: {style!r}")
            label = button.get("label")
            if label is not None and len(label) > MAX_LABEL:
                raise invalid(f"{where}.label longer than {MAX_LABEL}")
            custom_id, url = button.get("custom_id"), button.get("url")
            if style == LINK_STYLE:
                if not url or custom_id is not None:
                    raise invalid(f"{where}: a link button has a url and no custom_id")
            elif style == PREMIUM_STYLE:
                if not button.get("sku_id") or custom_id is not None or url is not None:
                    raise invalid(f"{where}: a premium button has only a sku_id")
            else:
                if url is not None:
                    raise invalid(f"{where}: only link buttons have a url")
                if not isinstance(custom_id, str) or not 1 <= len(custom_id) <= MAX_CUSTOM_ID:
                    raise invalid(f"{where}.custom_id must be 1-{MAX_CUSTOM_ID} characters: {custom_id!r}")
                if custom_id in seen:
                    raise invalid(f"{where}.custom_id {custom_id!r} is not unique")
                seen.add(custom_id)
            if style != PREMIUM_STYLE and not label and not button.get("emoji"):
                raise invalid(f"{where}: a button needs a label or an emoji")


def embed_text(embed: dict[str, Any]) -> list[str]:
    """The texts of an embed that count towards the 6,000 characters of a message."""
    texts = [embed.get("title") or "", embed.get("description") or "",
             (embed.get("footer") or {}).get("text") or "", (embed.get("author") or {}).get("name") or ""]
    for f in embed.get("fields") or []:
        texts += [f.get("name") or "", f.get("value") or ""]
    return texts


def check_embeds(embeds: Any, filenames: set[str]) -> None:
    if not isinstance(embeds, list):
        raise invalid("embeds must be a list")
    if len(embeds) > MAX_EMBEDS:
        raise invalid(f"{len(embeds)} embeds (at most {MAX_EMBEDS})")
    total = 0
    for e, embed in enumerate(embeds):
        for key, limit in EMBED_LIMITS.items():
            if len(embed.get(key) or "") > limit:
                raise invalid(f"embeds.{e}.{key} longer than {limit}")
        if len(embed.get("fields") or []) > 25:
            raise invalid(f"embeds.{e}: more than 25 fields")
        for f in embed.get("fields") or []:
            if len(f.get("name") or "") > 256 or len(f.get("value") or "") > 1024:
                raise invalid(f"embeds.{e}: a field is too long")
        if len((embed.get("footer") or {}).get("text") or "") > 2048:
            raise invalid(f"embeds.{e}.footer.text longer than 2048")
        if len((embed.get("author") or {}).get("name") or "") > 256:
            raise invalid(f"embeds.{e}.author.name longer than 256")
        total += sum(len(text) for text in embed_text(embed))
        for part in ("image", "thumbnail"):
            url = (embed.get(part) or {}).get("url") or ""
            if url.startswith("attachment://") and url.removeprefix("attachment://") not in filenames:
                raise invalid(f"embeds.{e}.{part}.url {url!r} names no file of the message")
    if total > EMBED_TOTAL:
        raise invalid(f"embeds hold {total} characters (at most {EMBED_TOTAL})")


def check_attachments(body: dict[str, Any], uploads: list[Upload],
                      existing: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The attachments the message will have (None: unchanged, for an edit without any)."""
    listed = body.get("attachments")
    if listed is None:
        if uploads:
            raise invalid(f"files[{uploads[0].index}] is not listed in attachments")
        return None
    if not isinstance(listed, list):
        raise invalid("attachments must be a list")
    by_id = {str(a.get("id")): a for a in listed if isinstance(a, dict)}
    if len(by_id) != len(listed):
        raise invalid("attachments: every entry has a unique id")
    for upload in uploads:
        if str(upload.index) not in by_id:
            raise invalid(f"files[{upload.index}] has no attachments entry with id {upload.index}")
    uploaded = {str(u.index) for u in uploads}
    kept = {str(a["id"]) for a in existing}
    for aid in by_id:
        if aid not in uploaded and aid not in kept:
            raise invalid(f"attachments: id {aid} is neither an uploaded file nor an attachment of the message")
    for entry in listed:
        described = entry.get("description") if isinstance(entry, dict) else None
        if described is not None and (not isinstance(described, str) or len(described) > ALT_LIMIT):
            raise invalid(f"attachments: description must be at most {ALT_LIMIT} characters")
    if sum(len(u.data) for u in uploads) > SIZE_LIMIT:
        raise invalid("files too large")
    return [a for a in existing if str(a["id"]) in by_id]


def check_message(body: dict[str, Any], uploads: list[Upload], *, existing: dict[str, Any] | None = None) -> None:
    """Discord's refusals for a message to create (``existing`` None) or to edit."""
    content = body.get("content")
    if content is not None and (not isinstance(content, str) or len(content) > MAX_CONTENT):
        raise invalid(f"content longer than {MAX_CONTENT}")
    kept = check_attachments(body, uploads, (existing or {}).get("attachments") or [])
    filenames = {u.filename for u in uploads} | {a["filename"] for a in (kept or [])}
    if "embeds" in body and body["embeds"] is not None:
        check_embeds(body["embeds"], filenames)
    if "components" in body and body["components"] is not None:
        check_components(body["components"])
    check_allowed_mentions(body.get("allowed_mentions"))

    def has(key: str) -> bool:
        if key in body and body[key] is not None:
            return bool(body[key])
        return bool((existing or {}).get(key))

    files_after = uploads or (kept if kept is not None else (existing or {}).get("attachments"))
    if not (has("content") or has("embeds") or has("components") or files_after or body.get("sticker_ids")
            or body.get("poll")):
        raise Refused(400, 50006, "Cannot send an empty message")


def notified_by(body: dict[str, Any]) -> list[str]:
    """Whom a new message notifies: the users it mentions that allowed_mentions lets through
    (with no allowed_mentions, Discord parses every mention)."""
    mentioned = list(dict.fromkeys(USER_MENTION.findall(body.get("content") or "")))
    allowed = body.get("allowed_mentions")
    if allowed is None:
        return mentioned
    if "users" in (allowed.get("parse") or []):
        return mentioned
    permitted = {str(i) for i in allowed.get("users") or []}
    return [u for u in mentioned if u in permitted]


# -- rate limits ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Bucket:
    """A route's rate limit: ``limit`` requests per ``per`` seconds for each value of ``major``
    (the route parameters that split it), with Discord's opaque bucket hash ``name``."""

    name: str
    limit: int
    per: float
    major: tuple[str, ...]


# The routes our bot uses that Discord limits per route (values as Discord answers them to bots).
BUCKETS: dict[tuple[str, str], Bucket] = {
    ("POST", "/channels/{channel_id}/messages"): Bucket("80c17d2f203122d936070c88c8d10f33", 5, 5.0, ("channel_id",)),
    ("PATCH", "/channels/{channel_id}/messages/{message_id}"):
        Bucket("5f1b7f3c9d0e4a2b8c6d1e0f2a3b4c5d", 5, 5.0, ("channel_id",)),
    ("POST", "/webhooks/{webhook_id}/{webhook_token}"):
        Bucket("d0a1b2c3e4f5061728394a5b6c7d8e9f", 5, 2.0, ("webhook_id", "webhook_token")),
    ("PATCH", "/webhooks/{webhook_id}/{webhook_token}/messages/@original"):
        Bucket("e1f2a3b4c5d6e7f8091a2b3c4d5e6f70", 5, 2.0, ("webhook_id", "webhook_token")),
    ("POST", "/users/@me/channels"): Bucket("a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4", 5, 1.0, ()),
}
GLOBAL_LIMIT = 50            # requests a second, the bot's in all
GLOBAL_SECONDS = 1.0


def _not_global(path: str) -> bool:
    """Interactions' endpoints (the callback, the follow-ups and edits by its token) are not
    bound to the bot's global limit."""
    return path.startswith(("/interactions/", "/webhooks/"))


@dataclass
class Throttled:
    """A 429 the fake gave: the route, its bucket (None: the global limit), the wait it asked for."""

    method: str
    path: str
    bucket: str | None
    retry_after: float
    at: float


class RateLimits:
    """Discord's counting of requests, per bucket window and in all, on the fake's clock."""

    def __init__(self, fake: FakeDiscord) -> None:
        self.fake = fake
        self.windows: dict[tuple[str, tuple[str, ...]], tuple[float, int]] = {}    # start, count
        self.recent: list[float] = []           # when the last requests counted globally came
        self.enabled = True

    def take(self, route: discord.http.Route) -> tuple[dict[str, str], dict[str, Any] | None]:
        """The rate-limit headers of the answer to ``route``, and the 429 body if it is refused."""
        if not self.enabled:
            return {}, None
        now = self.fake.now()
        method, path = route.method, route.path
        if not _not_global(path):
            self.recent = [t for t in self.recent if now - t < GLOBAL_SECONDS]
            if len(self.recent) >= GLOBAL_LIMIT:
                retry_after = math.ceil((self.recent[0] + GLOBAL_SECONDS - now) * 1000) / 1000
                self.fake.rate_limited.append(Throttled(method, path, None, retry_after, now))
                return ({"Retry-After": str(max(1, int(-(-retry_after // 1)))), "X-RateLimit-Global": "true",
                         "X-RateLimit-Scope": "global", "Via": "1.1 google"},
                        {"message": "You are being rate limited.", "retry_after": retry_after, "global": True,
                         "code": 0})
        bucket = BUCKETS.get((method, path))
        headers: dict[str, str] = {}
        if bucket is not None:
            key = (bucket.name, tuple(str(getattr(route, name, "")) for name in bucket.major))
            start, count = self.windows.get(key, (now, 0))
            if now - start >= bucket.per:
                start, count = now, 0
            # Rounded up to the millisecond: a client that waits as long as told finds the window over.
            reset_after = math.ceil((start + bucket.per - now) * 1000) / 1000
            headers = {"X-RateLimit-Bucket": bucket.name, "X-RateLimit-Limit": str(bucket.limit),
                       "X-RateLimit-Reset": f"{start + bucket.per:.3f}",
                       "X-RateLimit-Reset-After": f"{reset_after:.3f}"}
            if count >= bucket.limit:
                self.fake.rate_limited.append(Throttled(method, path, bucket.name, reset_after, now))
                headers.update({"X-RateLimit-Remaining": "0", "X-RateLimit-Scope": "user",
                                "Retry-After": str(max(1, int(-(-reset_after // 1)))), "Via": "1.1 google"})
                return headers, {"message": "You are being rate limited.", "retry_after": reset_after,
                                 "global": False, "code": 0}
            self.windows[key] = (start, count + 1)
            headers["X-RateLimit-Remaining"] = str(bucket.limit - count - 1)
        if not _not_global(path):
            self.recent.append(now)
        return headers, None


# -- the fake ---------------------------------------------------------------------------------------------


class FakeDiscord:
    """Records every request and answers like Discord."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.interactions: dict[str, InteractionState] = {}
        self.messages: dict[int, Sent] = {}
        self.gone_channels: set[int] = set()
        self.dm_channels: dict[int, str] = {}         # DM channel id -> the user's id
        self.closed_dms: set[str] = set()             # users who accept no DMs from the bot
        self.permissions: dict[int, int] = {}     # the bot's permissions in a channel, where not BOT_PERMISSIONS
        self.threads: set[int] = set()            # channels that are threads
        self.thread_names: dict[int, str] = {}    # threads the bot made -> their names
        self.thread_of_message: dict[int, int] = {}   # a message -> the thread made from it
        self.scripts: list[Script] = []
        self.refused: list[tuple[str, int]] = []      # (token or path, code) Discord refused
        self.refusals: list[str] = []                 # why, for the failure message
        self._ids = itertools.count(1)
        self.commands: dict[int | None, list[dict[str, Any]]] = {}     # registered: globally (None), per server
        self.slept: list[float] = []        # what discord.py's own retries waited (virtual)
        self.skew = 0.0                     # seconds the fake's clock is ahead of the real one
        # The gateway: what /gateway/bot recommends, what IDENTIFY insists on, who identified.
        self.recommended_shards = 1
        self.required_shards = 1
        self.identified: list[tuple[int, int] | None] = []   # (shard id, count), or None unsharded
        self.sockets: list[FakeGatewaySocket] = []
        self.sessions: dict[str, GatewaySession] = {}
        self.resumes: list[tuple[Any, Any]] = []         # (session id, seq) of every RESUME
        self.gateway_url = GATEWAY_URL                    # what READY names to resume at
        self.limits = RateLimits(self)
        self.rate_limited: list[Throttled] = []         # every 429 the fake gave
        # Real seconds an answer takes to come back (None: none, and no task switch either): with
        # some, requests made at once are all at Discord before the first answer is read, as live.
        self.latency: float | None = None

    def now(self) -> float:
        """Discord's clock: real time plus every wait that was only virtual."""
        return time.time() + self.skew

    # -- the gateway's sessions ----------------------------------------------------------------------

    def session(self, shard: int | None = None) -> GatewaySession:
        """The newest live session of shard ``shard`` (None: of any shard)."""
        for session in reversed(self.sessions.values()):
            if shard is None or (session.shard or (0, 1))[0] == shard:
                return session
        raise AssertionError(f"no gateway session for shard {shard}")

    def dispatch(self, event: str, data: dict[str, Any], *, shard: int | None = None) -> int:
        """Send a DISPATCH event to a shard's session; its sequence number."""
        return self.session(shard).send(event, data)

    def reconnect(self, shard: int | None = None) -> GatewaySession:
        """Op 7 RECONNECT: the client is to close and RESUME; until it does, events wait."""
        session = self.session(shard)
        socket, session.socket = session.socket, None
        if socket is not None and not socket.closed:
            socket._push({"op": RECONNECT, "d": None})
        return session

    def invalidate(self, shard: int | None = None, *, resumable: bool = False) -> GatewaySession:
        """Op 9 INVALID_SESSION: with ``resumable`` false the session is gone, and only a new
        IDENTIFY makes one."""
        session = self.session(shard)
        socket = session.socket
        if not resumable:
            del self.sessions[session.id]
            session.socket = None
        if socket is not None and not socket.closed:
            socket._push({"op": INVALID_SESSION, "d": resumable})
        return session

    # -- what a test can script ----------------------------------------------------------------------

    def script(self, path_end: str, error: discord.HTTPException, *, method: str | None = None,
               times: int = 1) -> None:
        """The next ``times`` requests whose path ends so fail with ``error``."""
        self.scripts.append(Script(method, path_end, error, times))

    def expire(self, token: str, *, status: int = 404, code: int = 10015, after_ack: bool = False) -> None:
        """The interaction token stops working (now, or right after it is acknowledged), as after
        15 minutes or when Discord lost the interaction."""
        if after_ack:
            self.interactions[token].expires_on_ack = (status, code)
        else:
            self.interactions[token].expired = (status, code)

    def deny(self, channel_id: int, permissions: int) -> None:
        """An admin takes these permissions from the bot in a channel."""
        self.permissions[channel_id] = self.bot_permissions(channel_id) & ~permissions

    def allow(self, channel_id: int, permissions: int) -> None:
        """An admin gives the bot these permissions in a channel (and the threads started after)."""
        self.permissions[channel_id] = self.bot_permissions(channel_id) | permissions

    def bot_permissions(self, channel_id: int) -> int:
        return self.permissions.get(channel_id, BOT_PERMISSIONS)

    def _permission_refusal(self, channel_id: int, body: dict[str, Any], uploads: list[Upload]) -> Refused | None:
        """Why Discord refuses the bot's own post in a channel (interactions need none of this):
        no View Channel is Missing Access; no Send Messages (Send Messages in Threads in a thread),
        a file without Attach Files, a reply without Read Message History are Missing Permissions."""
        if channel_id == DM_CHANNEL_ID or channel_id in self.dm_channels:
            return None
        have = self.bot_permissions(channel_id)
        if not have & VIEW_CHANNEL:
            return Refused(403, 50001, "Missing Access")
        send = SEND_MESSAGES_IN_THREADS if channel_id in self.threads else SEND_MESSAGES
        if (not have & send or (uploads and not have & ATTACH_FILES)
                or (body.get("message_reference") and not have & READ_MESSAGE_HISTORY)):
            return Refused(403, 50013, "Missing Permissions")
        return None

    def _scripted(self, method: str, path: str) -> discord.HTTPException | None:
        for s in self.scripts:
            if s.times > 0 and path.endswith(s.path_end) and (s.method is None or s.method == method):
                s.times -= 1
                return s.error
        return None

    # -- ids and payloads --------------------------------------------------------------------

    def snowflake(self, age: float = 0.0) -> int:
        when = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=age)
        return discord.utils.time_snowflake(when) + next(self._ids) % 4096

    def user_message(self, channel_id: int, content: str, *, ephemeral: bool, components: list | None = None,
                     uploads: list[Upload] | None = None, msg_type: int = 0,
                     embeds: list | None = None) -> dict[str, Any]:
        mid = self.snowflake()
        return {
            "id": str(mid), "channel_id": str(channel_id), "type": msg_type, "content": content,
            "author": dict(BOT_USER),
            "attachments": [self._attachment(u.filename, u.data, u.description) for u in uploads or []],
            "embeds": embeds or [], "mentions": [], "mention_roles": [], "pinned": False,
            "mention_everyone": False, "tts": False, "timestamp": iso(), "edited_timestamp": None,
            "flags": EPHEMERAL if ephemeral else 0, "components": components or [],
            "application_id": str(APP_ID), "webhook_id": str(APP_ID),
        }

    def _attachment(self, name: str, data: bytes, description: str | None = None) -> dict[str, Any]:
        aid = self.snowflake()
        alt = {"description": description} if description else {}
        return {"id": str(aid), "filename": name, "size": len(data), **alt,
                "url": f"https://cdn.discordapp.com/attachments/{CHANNEL_ID}/{aid}/{name}",
                "proxy_url": f"https://media.discordapp.net/attachments/{CHANNEL_ID}/{aid}/{name}",
                "content_type": "image/png" if name.endswith(".png") else "application/octet-stream"}

    # -- reading requests ------------------------------------------------------------------------

    @staticmethod
    def _read(payload: dict | None, multipart: list | None, files: Any) -> tuple[dict[str, Any] | None,
                                                                                 list[Upload]]:
        """The JSON body and the uploaded ``files[n]`` parts, as Discord receives them."""
        body = payload
        contents: dict[int, bytes] = {}
        for f in files or []:
            # Read while the file is still open: discord.py closes it after the request.
            f.reset()
            contents[id(f.fp)] = f.fp.read()
            f.reset()
        uploads = []
        for part in multipart or []:
            name = part.get("name")
            if name == "payload_json":
                body = json.loads(part["value"])
            elif isinstance(name, str) and (m := re.fullmatch(r"files\[(\d+)\]", name)):
                value = part["value"]
                data = contents.get(id(value))
                if data is None:
                    data = value if isinstance(value, bytes) else value.read()
                uploads.append(Upload(int(m[1]), part.get("filename") or "", data))
        # Each upload's alt text, as its ``attachments`` entry lists it.
        entries = body.get("attachments") if isinstance(body, dict) else None
        listed = {str(a.get("id")): a for a in entries or [] if isinstance(a, dict)}
        for upload in uploads:
            described = listed.get(str(upload.index), {}).get("description")
            upload.description = described if isinstance(described, str) else None
        return body, uploads

    def _refuse(self, call: Call, err: Refused) -> discord.HTTPException:
        call.error = err.code
        self.refused.append((call.token or call.path, err.code))
        self.refusals.append(f"{call.method} {call.path}: {err.why}")
        return http_error(err.status, err.code, err.why)

    # -- REST ---------------------------------------------------------------------------------------

    async def rest(self, route: discord.http.Route, *, files: Any = None, form: list | None = None,
                   json: dict | None = None, **kwargs: Any) -> Any:
        body, uploads = self._read(json, form, files)
        method, path = route.method, route.path
        call = Call(method, path, body, {u.filename: u.data for u in uploads}, clock=self.now())
        self.calls.append(call)
        scripted = self._scripted(method, path)
        if scripted is not None:
            call.error = scripted.code
            raise scripted
        if (method, path) == ("GET", "/users/@me"):
            return dict(BOT_USER)
        if (method, path) == ("GET", "/gateway/bot"):
            return {"url": GATEWAY_URL, "shards": self.recommended_shards,
                    "session_start_limit": {"total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1}}
        if (method, path) == ("GET", "/oauth2/applications/@me"):
            return {"id": str(APP_ID), "name": "Draughts", "description": "", "icon": None, "bot_public": True,
                    "bot_require_code_grant": False, "owner": dict(USERS["ana"]), "verify_key": "ab" * 32,
                    "flags": 0, "summary": "", "team": None}
        if (method, path) == ("GET", "/users/@me/guilds"):
            return [{"id": str(GUILD_ID), "name": "Draughts club", "icon": None, "owner": False,
                     "permissions": "2248473465835073", "features": []}]
        if path in ("/applications/{application_id}/commands",
                    "/applications/{application_id}/guilds/{guild_id}/commands"):
            # A PUT replaces the application's commands there (globally, or in one server).
            guild = int(route.guild_id) if "{guild_id}" in path else None
            if method == "PUT":
                extra = {"guild_id": str(guild)} if guild else {}
                self.commands[guild] = [dict(c, id=str(self.snowflake()), application_id=str(APP_ID),
                                             version=str(self.snowflake()), **extra) for c in body or []]
            return list(self.commands.get(guild, []))
        if (method, path) == ("POST", "/users/@me/channels"):
            recipient = str((body or {}).get("recipient_id"))
            user = next((u for u in USERS.values() if u["id"] == recipient), None)
            if user is None:
                call.error = 50035
                raise http_error(400, 50035, "Invalid Form Body")
            channel_id = next((c for c, u in self.dm_channels.items() if u == recipient), None)
            if channel_id is None:
                channel_id = self.snowflake()
                self.dm_channels[channel_id] = recipient
            return {"id": str(channel_id), "type": 1, "last_message_id": None, "flags": 0, "recipients": [user]}
        if (method, path) == ("POST", "/channels/{channel_id}/messages"):
            channel_id = int(route.channel_id)
            if channel_id in self.gone_channels:
                call.error = 10003
                raise http_error(404, 10003, "Unknown Channel")
            if self.dm_channels.get(channel_id) in self.closed_dms:
                call.error = 50007
                raise http_error(403, 50007, "Cannot send messages to this user")
            denied = self._permission_refusal(channel_id, body or {}, uploads)
            if denied is not None:          # the channel's settings, not a mistake of the adapter
                call.error = denied.code
                raise http_error(denied.status, denied.code, denied.why)
            try:
                check_message(body or {}, uploads)
            except Refused as err:
                raise self._refuse(call, err) from None
            message = self._new(channel_id, body or {}, uploads, ephemeral=False)
            sent = Sent(message, False, channel_id, notified=notified_by(body or {}))
            self.messages[sent.id] = sent
            return message
        if method == "POST" and path in ("/channels/{channel_id}/threads",
                                         "/channels/{channel_id}/messages/{message_id}/threads"):
            return self._new_thread(route, call, body or {})
        if (method, path) == ("DELETE", "/channels/{channel_id}"):
            channel_id = int(route.channel_id)
            if channel_id in self.gone_channels or channel_id not in self.threads:
                # Only the threads the adapter starts are ever deleted.
                raise self._refuse(call, Refused(404, 10003, "Unknown Channel"))
            if not self.bot_permissions(channel_id) & MANAGE_THREADS:
                call.error = 50013          # the server's settings, not a mistake of the adapter
                raise http_error(403, 50013, "Missing Permissions")
            self.threads.discard(channel_id)
            self.gone_channels.add(channel_id)
            return {"id": str(channel_id), "type": 11, "guild_id": str(GUILD_ID),
                    "name": self.thread_names.pop(channel_id, "")}
        if (method, path) == ("PATCH", "/channels/{channel_id}/messages/{message_id}"):
            target = self.messages.get(int(route.url.rstrip("/").rsplit("/", 1)[-1]))
            if target is None or target.channel_id != int(route.channel_id) or target.ephemeral:
                call.error = 10008
                raise http_error(404, 10008, "Unknown Message")
            if target.message["author"]["id"] != BOT_USER["id"]:
                raise self._refuse(call, Refused(403, 50005, "Cannot edit a message authored by another user"))
            channel_id = int(route.channel_id)
            if channel_id not in self.dm_channels and not self.bot_permissions(channel_id) & VIEW_CHANNEL:
                call.error = 50001          # the channel's settings: even its own message is out of reach
                raise http_error(403, 50001, "Missing Access")
            try:
                check_message(body or {}, uploads, existing=target.message)
            except Refused as err:
                raise self._refuse(call, err) from None
            for key in ("content", "components", "embeds"):
                if key in (body or {}):
                    target.message[key] = body[key] or ([] if key != "content" else "")
            target.message["edited_timestamp"] = iso()
            return dict(target.message)
        raise http_error(404, 0, f"404: Not Found ({method} {path})")

    def _new_thread(self, route: discord.http.Route, call: Call, body: dict[str, Any]) -> dict[str, Any]:
        """A thread the bot starts in a channel (from one of its messages, or on its own)."""
        channel_id = int(route.channel_id)

        def no(status: int, code: int, why: str, *, settings: bool = False) -> discord.HTTPException:
            if settings:            # the channel's settings, not a mistake of the adapter
                call.error = code
                return http_error(status, code, why)
            return self._refuse(call, Refused(status, code, why))
        if channel_id in self.gone_channels:
            raise no(404, 10003, "Unknown Channel", settings=True)
        if channel_id == DM_CHANNEL_ID or channel_id in self.dm_channels:
            raise no(400, 50003, "Cannot execute action on a DM channel")
        if channel_id in self.threads:
            raise no(400, 50024, "Cannot execute action on this channel type")
        have = self.bot_permissions(channel_id)
        from_message = "{message_id}" in route.path
        kind = 11 if from_message else body.get("type", 12)
        needed = CREATE_PRIVATE_THREADS if kind == 12 else CREATE_PUBLIC_THREADS
        if not have & VIEW_CHANNEL:
            raise no(403, 50001, "Missing Access", settings=True)
        if not have & needed:
            raise no(403, 50013, "Missing Permissions", settings=True)
        name = body.get("name")
        if (not isinstance(name, str) or not name.strip() or len(name) > THREAD_NAME_LIMIT or kind not in (10, 11, 12)
                or body.get("auto_archive_duration", 4320) not in ARCHIVE_MINUTES):
            raise no(400, 50035, "Invalid Form Body")
        if from_message:
            message_id = int(route.url.split("/messages/", 1)[1].split("/", 1)[0])
            target = self.messages.get(message_id)
            if target is None or target.channel_id != channel_id or target.ephemeral:
                raise no(404, 10008, "Unknown Message")
            if message_id in self.thread_of_message:
                raise no(400, 160004, "A thread has already been created for this message")
            thread_id = message_id      # Discord gives a message's thread the message's id
            self.thread_of_message[message_id] = thread_id
        else:
            thread_id = self.snowflake()
        self.threads.add(thread_id)
        self.thread_names[thread_id] = name
        if channel_id in self.permissions:
            self.permissions[thread_id] = self.permissions[channel_id]
        return {"id": str(thread_id), "type": kind, "guild_id": str(GUILD_ID), "parent_id": str(channel_id),
                "name": name, "owner_id": BOT_USER["id"], "last_message_id": None, "rate_limit_per_user": 0,
                "flags": 0, "member_count": 1, "message_count": 0, "total_message_sent": 0,
                "thread_metadata": {"archived": False, "auto_archive_duration": body.get("auto_archive_duration", 4320),
                                    "locked": False, "archive_timestamp": iso()},
                "member": {"id": str(thread_id), "user_id": BOT_USER["id"], "join_timestamp": iso(), "flags": 0}}

    def _new(self, channel_id: int, body: dict[str, Any], uploads: list[Upload], *, ephemeral: bool,
             msg_type: int = 0) -> dict[str, Any]:
        return self.user_message(channel_id, body.get("content") or "", ephemeral=ephemeral,
                                 components=body.get("components"), uploads=uploads, msg_type=msg_type,
                                 embeds=body.get("embeds"))

    # -- interactions and webhooks ---------------------------------------------------------------------------

    async def webhook(self, route: Any, session: Any = None, *, payload: dict | None = None,
                      multipart: list | None = None, files: Any = None, params: dict | None = None,
                      **kwargs: Any) -> Any:
        body, uploads = self._read(payload, multipart, files)
        method, path = route.method, route.path
        token = route.webhook_token
        call = Call(method, path, body, {u.filename: u.data for u in uploads}, token, clock=self.now())
        self.calls.append(call)
        scripted = self._scripted(method, path)
        if scripted is not None:
            call.error = scripted.code
            raise scripted
        state = self.interactions.get(token)
        try:
            if state is None:
                raise Refused(404, 10015, "Unknown Webhook")
            age = self.now() - discord.utils.snowflake_time(state.id).timestamp()
            if path.endswith("/callback"):
                return self._callback(state, body or {}, uploads, age)
            if state.expired is not None:
                call.error = state.expired[1]
                raise http_error(state.expired[0], state.expired[1],
                                 "Unknown Webhook" if state.expired[1] == 10015 else "Invalid Webhook Token")
            if age > TOKEN_SECONDS:
                raise Refused(401, 50027, "Invalid Webhook Token")
            if state.acked is None:
                # Nothing to follow up or edit before the acknowledgement.
                raise Refused(404, 10015, "Unknown Webhook")
            if method == "POST" and path == "/webhooks/{webhook_id}/{webhook_token}":
                return self._followup(state, body or {}, uploads)
            if path == "/webhooks/{webhook_id}/{webhook_token}/messages/@original":
                return self._original(state, method, body or {}, uploads)
        except Refused as err:
            raise self._refuse(call, err) from None
        raise http_error(404, 0, f"404: Not Found ({method} {path})")

    def _followup(self, state: InteractionState, body: dict[str, Any], uploads: list[Upload]) -> Any:
        check_message(body, uploads)
        if state.placeholder is not None:
            # The first followup after a deferral resolves the placeholder, keeping its visibility;
            # that is an edit, which notifies nobody.
            message, state.placeholder = state.placeholder, None
            message.update(content=body.get("content") or "", components=body.get("components") or [],
                           embeds=body.get("embeds") or [],
                           attachments=[self._attachment(u.filename, u.data, u.description) for u in uploads])
            sent = Sent(message, state.placeholder_ephemeral, state.channel_id, state.token)
        else:
            ephemeral = bool(int(body.get("flags") or 0) & EPHEMERAL)
            message = self._new(state.channel_id, body, uploads, ephemeral=ephemeral)
            sent = Sent(message, ephemeral, state.channel_id, state.token,
                        notified=[] if ephemeral else notified_by(body))
        self.messages[sent.id] = sent
        return sent.message

    def _original(self, state: InteractionState, method: str, body: dict[str, Any], uploads: list[Upload]) -> Any:
        if state.message is not None:          # a component: @original is the clicked message
            target = self.messages.get(int(state.message["id"]))
            assert target is not None, "editing a message the fake never sent"
        elif state.placeholder is not None:
            target = Sent(state.placeholder, state.placeholder_ephemeral, state.channel_id, state.token)
        else:
            original = [s for s in self.messages.values() if s.token == state.token]
            if not original:
                raise Refused(404, 10008, "Unknown Message")
            target = original[0]
        if method == "DELETE":
            state.placeholder = None
            self.messages.pop(target.id, None)
            return None
        check_message(body, uploads, existing=target.message)
        state.placeholder = None
        kept = check_attachments(body, uploads, target.message["attachments"])
        if "content" in body:
            target.message["content"] = body["content"] or ""
        if "components" in body:
            target.message["components"] = body["components"] or []
        if "embeds" in body:
            target.message["embeds"] = body["embeds"] or []
        if kept is not None:
            added = [self._attachment(u.filename, u.data, u.description) for u in uploads]
            target.message["attachments"] = kept + added
        target.message["edited_timestamp"] = iso()
        self.messages[target.id] = target
        return target.message

    def _callback(self, state: InteractionState, body: dict[str, Any], uploads: list[Upload], age: float) -> Any:
        if age > ACK_SECONDS or state.expired is not None:
            raise Refused(404, 10062, "Unknown interaction")
        if state.acked is not None:
            raise Refused(400, 40060, "Interaction has already been acknowledged.")
        kind = body.get("type")
        component = state.message is not None
        if kind not in (4, 5) and not (component and kind in (6, 7)):
            raise invalid(f"interaction callback type {kind!r}")
        data = body.get("data") or {}
        if kind in (4, 7):
            check_message(data, uploads, existing=state.message if kind == 7 else None)
        elif uploads:
            raise invalid("a deferral carries no files")
        state.acked = kind
        state.expired = state.expires_on_ack
        ephemeral = bool(int(data.get("flags") or 0) & EPHEMERAL)
        interaction: dict[str, Any] = {"id": str(state.id), "type": 3 if component else 2}
        resource: dict[str, Any] = {"type": kind}
        if kind == 5:
            state.placeholder = self.user_message(state.channel_id, "", ephemeral=ephemeral, msg_type=20)
            state.placeholder_ephemeral = ephemeral
            interaction.update(response_message_id=state.placeholder["id"], response_message_loading=True,
                               response_message_ephemeral=ephemeral)
            resource["message"] = state.placeholder
        elif kind == 4:
            message = self._new(state.channel_id, data, uploads, ephemeral=ephemeral,
                                msg_type=0 if component else 20)
            self.messages[int(message["id"])] = Sent(message, ephemeral, state.channel_id, state.token,
                                                     notified=[] if ephemeral else notified_by(data))
            interaction.update(response_message_id=message["id"], response_message_loading=False,
                               response_message_ephemeral=ephemeral)
            resource["message"] = message
        elif kind == 7:
            target = self.messages[int(state.message["id"])]
            self._original(dataclasses.replace(state, placeholder=None), "PATCH", data, uploads)
            resource["message"] = target.message
        return {"interaction": interaction, "resource": resource}

    # -- what the tests look at -----------------------------------------------------------------------

    def requests(self, token: str | None = None, method: str | None = None,
                 path_end: str | None = None) -> list[Call]:
        return [c for c in self.calls if (token is None or c.token == token) and (method is None or c.method == method)
                and (path_end is None or c.path.endswith(path_end))]

    def command_menu(self, guild_id: int = GUILD_ID) -> list[str]:
        """The slash commands a server's members see: the global ones and the server's own
        (Discord lists a name registered in both twice)."""
        return sorted(c["name"] for c in self.commands.get(None, []) + self.commands.get(guild_id, []))

    def answers(self, token: str) -> list[Sent]:
        """The messages one interaction left, in order."""
        return [s for s in self.messages.values() if s.token == token]

    def close_dms(self, user: str) -> None:
        """``user`` accepts no direct messages from the bot (their privacy settings)."""
        self.closed_dms.add(USERS[user]["id"])

    def dm_posts(self, user: str) -> list[Sent]:
        """What the bot posted in its DM channel with ``user``."""
        channels = [c for c, u in self.dm_channels.items() if u == USERS[user]["id"]]
        return [m for m in self.messages.values() if m.channel_id in channels]

    def channel_posts(self, channel_id: int = CHANNEL_ID) -> list[Sent]:
        """The messages the bot posted to a channel itself, not through an interaction."""
        return [s for s in self.messages.values() if s.token is None and s.channel_id == channel_id]


# -- the wire: an aiohttp session under discord.py ----------------------------------------------------------

API_BASE = discord.http.Route.BASE
# The routes our bot uses, as discord.py spells them (the longer first where one is a prefix).
ROUTES = [
    "/gateway/bot",
    "/users/@me",
    "/users/@me/guilds",
    "/users/@me/channels",
    "/oauth2/applications/@me",
    "/applications/{application_id}/guilds/{guild_id}/commands",
    "/applications/{application_id}/commands",
    "/channels/{channel_id}/messages/{message_id}/threads",
    "/channels/{channel_id}/messages/{message_id}",
    "/channels/{channel_id}/threads",
    "/channels/{channel_id}",
    "/channels/{channel_id}/messages",
    "/interactions/{webhook_id}/{webhook_token}/callback",
    "/webhooks/{webhook_id}/{webhook_token}/messages/@original",
    "/webhooks/{webhook_id}/{webhook_token}/messages/{message_id}",
    "/webhooks/{webhook_id}/{webhook_token}",
]
_ROUTE_PATTERNS = [(template, re.compile(re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(template)) + "$"))
                   for template in ROUTES]


def route_of(method: str, url: str) -> discord.http.Route:
    """The discord.py route a request on the wire was made from."""
    path = str(url).split("?", 1)[0].removeprefix(API_BASE)
    for template, pattern in _ROUTE_PATTERNS:
        m = pattern.match(path)
        if m:
            return discord.http.Route(method, template, **m.groupdict())
    raise AssertionError(f"a request the fake does not know: {method} {path}")


class WireResponse:
    """An aiohttp.ClientResponse as discord.py reads it: status, reason, headers, text."""

    def __init__(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        self.status = status
        self.reason = {200: "OK", 204: "No Content", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden",
                       404: "Not Found", 429: "Too Many Requests", 500: "Internal Server Error",
                       502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout"}.get(status, "")
        self.headers = CIMultiDict(headers or {})
        self._text = "" if body is None else json.dumps(body)
        if body is not None:
            self.headers["Content-Type"] = "application/json"

    async def text(self, encoding: str | None = None) -> str:
        return self._text

    async def read(self) -> bytes:
        return self._text.encode()

    async def json(self) -> Any:
        return json.loads(self._text)

    async def __aenter__(self) -> WireResponse:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        return None


def wire_error(exc: discord.HTTPException) -> WireResponse:
    """An error answer as Discord puts it on the wire (a 429 through Discord's proxy, with Via)."""
    body: dict[str, Any] = {"code": exc.code, "message": exc.text}
    headers: dict[str, str] = {}
    if exc.status == 429:
        retry_after = float((getattr(exc.response, "headers", None) or {}).get("Retry-After", 1.0))
        body.update(retry_after=retry_after, **{"global": False})
        headers.update({"Retry-After": str(retry_after), "Via": "1.1 google"})
    return WireResponse(exc.status, body, headers)


class FakeSession:
    """What discord.py holds as its aiohttp.ClientSession (its HTTPClient's, which interactions
    share for their webhooks): every request discord.py makes, retries included, reaches the fake
    here, so discord.py's own retrying and rate-limit handling run as they do live."""

    def __init__(self, fake: FakeDiscord) -> None:
        self.fake = fake
        self.closed = False

    def request(self, method: str, url: str, *, data: Any = None, headers: dict[str, str] | None = None,
                params: dict[str, Any] | None = None, **kwargs: Any) -> _Exchange:
        return _Exchange(self.fake, method, str(url), data)

    async def ws_connect(self, url: str, **kwargs: Any) -> FakeGatewaySocket:
        socket = FakeGatewaySocket(self.fake)
        self.fake.sockets.append(socket)
        return socket

    async def close(self) -> None:
        self.closed = True


GATEWAY_URL = "wss://gateway.discord.gg"
HELLO, HEARTBEAT, IDENTIFY, HEARTBEAT_ACK, DISPATCH = 10, 1, 2, 11, 0
RESUME, RECONNECT, INVALID_SESSION = 6, 7, 9


@dataclass
class GatewaySession:
    """One gateway session: its shard, the last sequence number sent, every event it was sent
    (for a RESUME to replay), and the connection it is on (None between a RECONNECT and the
    RESUME: what is dispatched meanwhile waits)."""

    id: str
    shard: tuple[int, int] | None
    seq: int = 0
    frames: list[dict[str, Any]] = field(default_factory=list)
    socket: FakeGatewaySocket | None = None

    def send(self, event: str, data: dict[str, Any]) -> int:
        self.seq += 1
        frame = {"op": DISPATCH, "t": event, "s": self.seq, "d": data}
        self.frames.append(frame)
        if self.socket is not None and not self.socket.closed:
            self.socket._push(frame)
        return self.seq


class FakeGatewaySocket:
    """One gateway connection as discord.py's DiscordWebSocket uses an aiohttp websocket:
    ``receive`` the next frame, ``send_str`` one, ``close``.  Frames go out as text (discord.py
    reads text as it comes, and only binary frames through its zlib stream)."""

    def __init__(self, fake: FakeDiscord) -> None:
        self.fake = fake
        self.closed = False
        self.close_code: int | None = None
        self.shard: tuple[int, int] | None = None
        self.sent: list[dict[str, Any]] = []           # what the bot sent, parsed
        self._inbox: asyncio.Queue[aiohttp.WSMessage] = asyncio.Queue()
        self._push({"op": HELLO, "d": {"heartbeat_interval": 41_250}})

    def _push(self, payload: dict[str, Any]) -> None:
        self._inbox.put_nowait(aiohttp.WSMessage(aiohttp.WSMsgType.TEXT, json.dumps(payload), None))

    def _end(self, code: int) -> None:
        """Discord closes the connection with ``code``."""
        self.closed, self.close_code = True, code
        self._inbox.put_nowait(aiohttp.WSMessage(aiohttp.WSMsgType.CLOSE, code, None))

    async def receive(self, timeout: float | None = None) -> aiohttp.WSMessage:
        return await asyncio.wait_for(self._inbox.get(), timeout)

    async def send_str(self, data: str, compress: int | None = None) -> None:
        if self.closed:
            raise ConnectionResetError("the gateway connection is closed")
        payload = json.loads(data)
        self.sent.append(payload)
        if payload.get("op") == HEARTBEAT:
            self._push({"op": HEARTBEAT_ACK})
        elif payload.get("op") == IDENTIFY:
            self._identify(payload.get("d") or {})
        elif payload.get("op") == RESUME:
            self._resume(payload.get("d") or {})

    def _resume(self, data: dict[str, Any]) -> None:
        if data.get("token") != TOKEN:
            self._end(4004)                                 # Authentication failed
            return
        self.fake.resumes.append((data.get("session_id"), data.get("seq")))
        session = self.fake.sessions.get(str(data.get("session_id")))
        seq = data.get("seq")
        if session is None or not isinstance(seq, int) or seq > session.seq:
            self._push({"op": INVALID_SESSION, "d": False})
            return
        older = session.socket
        if older is not None and older is not self and not older.closed:
            older._end(4000)                                # the session moves to this connection
        session.socket = self
        self.shard = session.shard
        for frame in session.frames:
            if frame["s"] > seq:
                self._push(frame)
        session.send("RESUMED", {})

    def _identify(self, data: dict[str, Any]) -> None:
        if data.get("token") != TOKEN:
            self._end(4004)                                 # Authentication failed
            return
        raw = data.get("shard")
        if raw is None:
            shard = None
            count = 1
        else:
            if (not isinstance(raw, list) or len(raw) != 2 or not all(isinstance(n, int) for n in raw)
                    or not 0 <= raw[0] < raw[1]):
                self._end(4010)                             # Invalid shard
                return
            shard, count = (raw[0], raw[1]), raw[1]
        if count < self.fake.required_shards:
            self._end(4011)                                 # Sharding required
            return
        live = [s.shard for s in self.fake.sockets if s is not self and not s.closed and s.shard is not None]
        if shard is not None and shard in live:
            self._end(4010)          # two sessions on one shard: Discord would drop the first
            return
        self.shard = shard
        self.fake.identified.append(shard)
        session = GatewaySession(f"session-{len(self.fake.identified)}", shard, socket=self)
        self.fake.sessions[session.id] = session
        session.send("READY", {
            "v": 10, "user": dict(BOT_USER), "guilds": [], "session_id": session.id,
            "resume_gateway_url": self.fake.gateway_url, "shard": list(shard or (0, 1)),
            "application": {"id": str(APP_ID), "flags": 0}})

    async def close(self, *, code: int = 1000, message: bytes = b"") -> bool:
        if self.closed:
            return False
        self._end(code)
        return True

    def exception(self) -> BaseException | None:
        return None


async def answer(fake: FakeDiscord, method: str, url: str, *, body: Any = None,
                 form: list[dict[str, Any]] | None = None) -> WireResponse:
    """Discord's answer to one request on the wire: its JSON ``body``, or its multipart ``form``
    (``name``, ``value``, ``filename`` of each part), counted against the rate limits first."""
    route = route_of(method, url)
    headers, limited = fake.limits.take(route)
    if limited is not None:
        fake.calls.append(Call(method, route.path, None, error=429, token=getattr(route, "webhook_token", None),
                               clock=fake.now()))
        return WireResponse(429, limited, headers)
    try:
        if route.path.startswith(("/webhooks/", "/interactions/")):
            result = await fake.webhook(route, multipart=form, payload=body)
        else:
            result = await fake.rest(route, form=form, json=body)
    except discord.HTTPException as exc:
        response = wire_error(exc)
        response.headers.update(headers)
        return response
    return WireResponse(204 if result is None else 200, result, headers)


class _Exchange:
    def __init__(self, fake: FakeDiscord, method: str, url: str, data: Any) -> None:
        self.fake, self.method, self.url, self.data = fake, method, url, data
        self.response: WireResponse | None = None

    async def __aenter__(self) -> WireResponse:
        response = await self._answer()
        if self.fake.latency is not None:
            # On its way back: requests sent meanwhile reach Discord before the client reads this.
            await asyncio.sleep(self.fake.latency)
        return response

    async def _answer(self) -> WireResponse:
        body: Any = None
        form: list[dict[str, Any]] | None = None
        if isinstance(self.data, str | bytes):
            body = json.loads(self.data)
        elif isinstance(self.data, aiohttp.FormData):
            form = []
            for options, _headers, value in self.data._fields:
                if hasattr(value, "read"):          # a file: read as sent, left where it was
                    at = value.tell()
                    content = value.read()
                    value.seek(at)
                    value = content
                form.append({"name": options["name"], "value": value, "filename": options.get("filename")})
        return await answer(self.fake, self.method, self.url, body=body, form=form)

    async def __aexit__(self, *exc: Any) -> None:
        return None


class _LibraryAsyncio(types.ModuleType):
    """``asyncio`` as discord.py's HTTP modules see it, with their sleeps virtual: the waits
    discord.py decides on (retry_after, 1 + 2n s between 5xx retries) are recorded in
    ``fake.slept`` and move the fake's clock instead of taking real time."""

    def __init__(self, fake: FakeDiscord) -> None:
        super().__init__("asyncio")
        self._fake = fake

    def __getattr__(self, name: str) -> Any:
        return getattr(asyncio, name)

    async def sleep(self, delay: float, result: Any = None) -> Any:
        if delay > 0:           # sleep(0) only yields
            self._fake.slept.append(float(delay))
            self._fake.skew += float(delay)
        await asyncio.sleep(0)
        return result


class _LibraryAiohttp(types.ModuleType):
    """``aiohttp`` as discord.http sees it: the session it opens at login is the fake's."""

    def __init__(self, fake: FakeDiscord) -> None:
        super().__init__("aiohttp")
        self._fake = fake

    def __getattr__(self, name: str) -> Any:
        return getattr(aiohttp, name)

    def ClientSession(self, *args: Any, **kwargs: Any) -> FakeSession:  # noqa: N802 - aiohttp's name
        return FakeSession(self._fake)


def install(fake: FakeDiscord, monkeypatch: pytest.MonkeyPatch, http: discord.http.HTTPClient | None = None) -> None:
    """Put the fake on the wire under discord.py: the session a client opens at login (every
    client's from now on; ``http``, if given and logged in already, at once), and the sleeps of
    discord.py's HTTP and webhook modules."""
    monkeypatch.setattr(discord.http, "aiohttp", _LibraryAiohttp(fake))
    monkeypatch.setattr(discord.http, "asyncio", _LibraryAsyncio(fake))
    monkeypatch.setattr(discord.webhook.async_, "asyncio", _LibraryAsyncio(fake))
    if http is not None and getattr(http, "_HTTPClient__session", None):
        http._HTTPClient__session = FakeSession(fake)


# -- the harness: real discord.py objects fed INTERACTION_CREATE payloads ------------------------------------


class Harness:
    def __init__(self, bot: DraughtsBot, fake: FakeDiscord, storage: Storage, now: list[float]) -> None:
        self.bot = bot
        self.fake = fake
        self.storage = storage
        self.now = now
        self.sleeps: list[float] = []          # what the bot's retries waited (sleep is injected)
        self.db_path: Path | None = None
        self.nicks: dict[str, str] = {}        # server nicknames members chose (user name -> nick)

    # -- payloads ----------------------------------------------------------------------------------------

    def _base(self, kind: int, user: str, *, locale: str, age: float, dm: bool,
              channel_id: int, admin: bool = False) -> dict[str, Any]:
        # A member's permissions in the channel; an admin also has Manage Server (1 << 5).
        member_permissions = str(2248473465835073 | (1 << 5)) if admin else "2248473465835073"
        iid = self.fake.snowflake(age)
        token = f"aW50ZXJhY3Rpb246{iid}"
        # What the bot may do in the channel, as Discord tells it with every interaction.
        app_permissions = BOT_PERMISSIONS if dm else self.fake.bot_permissions(channel_id)
        payload: dict[str, Any] = {
            "id": str(iid), "application_id": str(APP_ID), "type": kind, "token": token, "version": 1,
            "locale": locale, "app_permissions": str(app_permissions), "attachment_size_limit": SIZE_LIMIT,
            "entitlements": [], "authorizing_integration_owners": {"0": str(GUILD_ID)},
        }
        if dm:
            payload.update(channel={"id": str(DM_CHANNEL_ID), "type": 1, "last_message_id": None, "flags": 0,
                                    "recipients": [USERS[user]]},
                           channel_id=str(DM_CHANNEL_ID), user=USERS[user], context=1)
        else:
            payload.update(
                guild_id=str(GUILD_ID), guild_locale="en-US", context=0,
                guild={"id": str(GUILD_ID), "locale": "en-US", "features": []},
                channel=self._channel(channel_id),
                channel_id=str(channel_id),
                member={"user": USERS[user], "roles": [], "joined_at": iso(1_600_000_000), "deaf": False,
                        "mute": False, "flags": 0, "nick": self.nicks.get(user), "avatar": None, "pending": False,
                        "permissions": member_permissions},
            )
        self.fake.interactions[token] = InteractionState(iid, token, DM_CHANNEL_ID if dm else channel_id, None)
        return payload

    def _channel(self, channel_id: int) -> dict[str, Any]:
        """A server channel as an interaction carries it: a text channel, or a thread of one."""
        channel: dict[str, Any] = {
            "id": str(channel_id), "type": 0, "guild_id": str(GUILD_ID), "name": "draughts", "position": 0,
            "permission_overwrites": [], "nsfw": False, "parent_id": None, "topic": None, "last_message_id": None,
            "rate_limit_per_user": 0, "flags": 0, "permissions": "2248473465835073"}
        if channel_id in self.fake.threads:
            channel.update(type=11, parent_id=str(CHANNEL_ID), owner_id=uid("ana"), member_count=2,
                           message_count=1, total_message_sent=1,
                           thread_metadata={"archived": False, "auto_archive_duration": 1440, "locked": False,
                                            "archive_timestamp": iso()})
        return channel

    def slash_payload(self, name: str, user: str, options: dict[str, Any] | None = None, *, locale: str = "en-US",
                      age: float = 0.0, dm: bool = False, channel_id: int = CHANNEL_ID,
                      admin: bool = False) -> dict[str, Any]:
        payload = self._base(2, user, locale=locale, age=age, dm=dm, channel_id=channel_id, admin=admin)
        opts, resolved = [], {}
        for key, value in (options or {}).items():
            if isinstance(value, bool):
                raise TypeError(key)
            if isinstance(value, Member):
                opts.append({"name": key, "type": 6, "value": uid(value.name)})
                resolved.setdefault("users", {})[uid(value.name)] = USERS[value.name]
                if dm:      # no members outside a server
                    continue
                resolved.setdefault("members", {})[uid(value.name)] = {
                    "roles": [], "joined_at": iso(1_600_000_000), "nick": self.nicks.get(value.name), "avatar": None,
                    "flags": 0, "pending": False, "permissions": "2248473465835073"}
            elif isinstance(value, int):
                opts.append({"name": key, "type": 4, "value": value})
            else:
                opts.append({"name": key, "type": 3, "value": value})
        data: dict[str, Any] = {"id": str(self.fake.snowflake()), "name": name, "type": 1, "options": opts}
        if resolved:
            data["resolved"] = resolved
        payload["data"] = data
        return payload

    def click_payload(self, custom_id: str, user: str, message: Sent, *, locale: str = "en-US",
                      age: float = 0.0) -> dict[str, Any]:
        payload = self._base(3, user, locale=locale, age=age, dm=False, channel_id=message.channel_id)
        payload["data"] = {"custom_id": custom_id, "component_type": 2}
        payload["message"] = json.loads(json.dumps(message.message))
        self.fake.interactions[payload["token"]].message = payload["message"]
        return payload

    # -- feeding ----------------------------------------------------------------------------------------

    async def feed(self, payload: dict[str, Any]) -> str:
        """INTERACTION_CREATE, then wait for every task it spawned; the interaction token."""
        before = asyncio.all_tasks()
        self.bot._connection.parse_interaction_create(payload)
        for _ in range(100):
            # discord.py keeps an ephemeral message's view for the 15 minutes its interaction lives:
            # that timer is not work the event started.
            pending = [task for task in asyncio.all_tasks() - before
                       if task is not asyncio.current_task() and not task.done()
                       and "timeout_task_impl" not in repr(task.get_coro()) and not self._delivery_sleep(task)]
            if not pending:
                break
            await asyncio.wait(pending, timeout=20)
        return payload["token"]

    def _delivery_sleep(self, task: asyncio.Task) -> bool:
        """The delivery task asleep until its next wake-up (wait_for makes it a task of its own,
        anew each round, so an event that woke the delivery seems to have started it): not work
        the event started, and waiting for it took up to the delivery's idle timeout (30 s)."""
        frame = getattr(task.get_coro(), "cr_frame", None)
        return frame is not None and frame.f_locals.get("self") is getattr(self.bot, "_wake", None) is not None

    async def slash(self, name: str, user: str, options: dict[str, Any] | None = None, **kw: Any) -> str:
        return await self.feed(self.slash_payload(name, user, options, **kw))

    async def click(self, custom_id: str, user: str, message: Sent, **kw: Any) -> str:
        return await self.feed(self.click_payload(custom_id, user, message, **kw))

    # -- shortcuts ------------------------------------------------------------------------------------

    def only_answer(self, token: str) -> Sent:
        answers = self.fake.answers(token)
        assert len(answers) == 1, [a.content for a in answers]
        return answers[0]

    async def new_game(self, white: str = "ana", black: str = "bob") -> tuple[int, Sent]:
        token = await self.slash("new", white, {"variant": "italian", "color": "white", "opponent": Member(black),
                                                 "move_time": "1h"})
        challenge = self.only_answer(token)
        cid = int(re.search(r"#(\d+)", challenge.content).group(1))
        token = await self.slash("accept", black, {"id": cid})
        board = self.only_answer(token)
        game_id = self.storage.challenge(cid).game_id
        assert game_id is not None, board.content
        return game_id, board

    def legal(self, game_id: int) -> list[str]:
        row = self.storage.game(game_id)
        return [str(m) for m in Position.from_fen(row.variant, row.fen).legal_moves()]


@dataclass(frozen=True)
class Member:
    """An @member option value in a slash payload."""

    name: str
