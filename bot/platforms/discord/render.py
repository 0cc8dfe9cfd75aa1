"""Turning a service ``Reply`` into what Discord takes: text chunks, files and a button view.

No game logic here: the service decides the text, the images and the buttons; this module only
respects Discord's limits (2,000 characters a message, 5 rows of 5 buttons, 80-character
labels, 100-character custom ids).
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

import discord

from bot.platforms import base
from bot.service import Button, Mention, Reply, mention_at

MAX_CONTENT = 2000
MAX_ROWS = 5
MAX_PER_ROW = 5
MAX_LABEL = 80
MAX_CUSTOM_ID = 100
PREFIX = "dr:"
# What a Button.action may look like inside our custom ids (the service keeps them <= 64 bytes).
ACTION_PATTERN = r"[A-Za-z0-9:]{1,64}"
TEMPLATE = PREFIX + r"(?P<action>" + ACTION_PATTERN + r")"
NO_MENTIONS = discord.AllowedMentions.none()


def split_text(text: str, limit: int = MAX_CONTENT) -> list[str]:
    """The text in pieces of at most ``limit`` characters, cut at line ends where possible
    (the one way every adapter splits, at Discord's limit)."""
    return base.split_text(text, limit)


def escape(text: str) -> str:
    """The service's text as Discord shows it literally.

    Everything the service says is plain text (the catalogs hold no markup, and Telegram gets it
    without a parse mode), but it carries what users typed: display names, handles, challenge
    notes.  A nickname ``Bob||`` would open a spoiler that swallows the text up to the real one
    and reveals it; ``[text](url)`` would become a link; ``@everyone`` would be highlighted.  So
    the whole text is escaped here, once, before it is split; markup of our own (the spoiler
    bars, the mentions the adapter resolved) is added after."""
    return discord.utils.escape_mentions(discord.utils.escape_markdown(text))


def mention(text: str, handle: str, user_id: int) -> str:
    """The text with the service's ``@handle`` of a member the adapter resolved turned into a
    real mention (``<@id>``), which Discord shows and notifies; a longer handle that merely
    starts the same (``@bob.x``, ``@bobby``) is left alone.  The service lower-cases handles and keeps 64 characters.
    The text may be escaped already (``@bob\\_x``): the handle matches either way."""
    body = "".join(("\\\\?" + re.escape(c)) if c in _MARKUP else re.escape(c) for c in handle[:64])
    pattern = re.compile("@" + body + r"(?!\w|\.\w|\\)", re.IGNORECASE)
    return pattern.sub(f"<@{user_id}>", text)


_MARKUP = frozenset("_*~|`>#-")


def only_user(user_id: int) -> discord.AllowedMentions:
    """Let one mentioned member be notified, and no one else (no @everyone, no roles)."""
    return discord.AllowedMentions(everyone=False, roles=False, replied_user=False,
                                   users=[discord.Object(id=user_id)])


def only_users(user_ids: list[int]) -> discord.AllowedMentions:
    """Let the mentioned members in ``user_ids`` be notified, and no one else."""
    return discord.AllowedMentions(everyone=False, roles=False, replied_user=False,
                                   users=[discord.Object(id=i) for i in user_ids])


def ping(text: str, mentions: Iterable[Mention]) -> tuple[str, list[int]]:
    """The text with each mention's name (where it first stands) turned into ``<@id>``, and the
    ids to let through ``allowed_mentions``; a mention whose name is not there, or whose id is not
    a Discord id, is left out."""
    users = []
    for mention in mentions:
        at = mention_at(text, mention.name)
        if at is None or not mention.user_id.isdigit():
            continue
        text = text[:at] + f"<@{mention.user_id}>" + text[at + len(mention.name):]
        users.append(int(mention.user_id))
    return text, users


def escaped(mentions: Iterable[Mention]) -> list[Mention]:
    """The mentions as they stand in escaped text (``escape``): their names escaped too."""
    return [replace(m, name=escape(m.name)) for m in mentions]


ALT_LIMIT = 1024


def files_of(reply: Reply | base.Piece) -> list[discord.File]:
    """Fresh file objects for a reply or one message of it (discord.py closes them after each
    request)."""
    files = []
    if reply.image:
        # The alt text screen readers read for the picture (Discord takes at most 1024 characters).
        alt = reply.alt[:ALT_LIMIT] if reply.alt else None
        files.append(discord.File(io.BytesIO(reply.image), filename="board.png", description=alt))
    if reply.animation:
        files.append(discord.File(io.BytesIO(reply.animation), filename="capture.gif"))
    if reply.document:
        name, data = reply.document
        files.append(discord.File(io.BytesIO(data), filename=safe_filename(name)))
    return files


def safe_filename(name: str) -> str:
    """A plain file name Discord shows as is."""
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", name.rsplit("/", 1)[-1]).strip("._") or "file"
    return base[:100]


_STYLES = {"go": discord.ButtonStyle.success, "stop": discord.ButtonStyle.danger, "back": discord.ButtonStyle.primary}


def button_style(button: Button) -> discord.ButtonStyle:
    """The colour for the service's style hint (presentation only)."""
    return _STYLES.get(button.style or "", discord.ButtonStyle.secondary)


def custom_id(action: str) -> str:
    return (PREFIX + action)[:MAX_CUSTOM_ID]


def label_of(button: Button) -> str:
    label = (button.label or "").strip() or "?"
    return label if len(label) <= MAX_LABEL else label[: MAX_LABEL - 1] + "…"


def view_of(reply: Reply | base.Piece,
            item_factory: Callable[[str, str, discord.ButtonStyle, int], discord.ui.Item[Any]],
            ) -> discord.ui.View | None:
    """A persistent view with the reply's buttons (None without buttons).

    ``item_factory(action, label, style, row)`` makes one dynamic item; rows beyond Discord's
    limits are dropped (the service already lays buttons out in rows of at most five).
    """
    rows = [row for row in reply.buttons if row][:MAX_ROWS]
    if not rows:
        return None
    view = discord.ui.View(timeout=None)
    for index, row in enumerate(rows):
        for button in row[:MAX_PER_ROW]:
            if button.url is not None:
                # A link button: Discord opens it, nothing comes back to the bot.
                view.add_item(discord.ui.Button(label=label_of(button), style=discord.ButtonStyle.link,
                                                url=button.url, row=index))
            else:
                view.add_item(item_factory(button.action, label_of(button), button_style(button), index))
    return view


def content_of(piece: base.Piece) -> str:
    """A message's text (escaped already), with its hidden part marked the Discord way
    (||spoiler||), escaped here: a trailing backslash would escape the closing bars."""
    if not piece.spoiler:
        return piece.text
    hidden = "||" + escape(piece.spoiler).rstrip("\\") + "||"
    return f"{piece.text}\n{hidden}" if piece.text else hidden
