"""What a platform adapter hands the service, and what it gets back."""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field

# The outbox chat id of a user's private chat with the bot (``dm:<user_id>``): each adapter turns it
# into its platform's private chat (Telegram: the user's id; Discord: a DM channel).
DM_PREFIX = "dm:"


def dm_chat(user_id: str) -> str:
    """The outbox chat id that reaches ``user_id`` privately."""
    return DM_PREFIX + str(user_id)


def mention_at(text: str, name: str) -> int | None:
    """Where a mention's name stands in a text: its first occurrence as a whole word (so 'Bob'
    is not found inside 'Bobby'), else its first occurrence at all; None when it is not there."""
    if not name:
        return None
    whole = re.search(r"(?<!\w)" + re.escape(name) + r"(?!\w)", text)
    if whole is not None:
        return whole.start()
    at = text.find(name)
    return at if at >= 0 else None


@dataclass(frozen=True)
class ChatEvent:
    """One neutral chat event: a typed message or a button press."""

    platform: str
    chat_id: str
    user_id: str
    user_name: str
    chat_kind: str = "group"          # "private" or "group"
    username: str | None = None       # handle used in @mentions, without the @
    language: str | None = None       # the user's platform language, e.g. "es-ES"
    text: str | None = None
    action: str | None = None         # a Button.action
    reply_to: str | None = None       # id of the message this one replies to
    bot_username: str | None = None   # our own handle: commands addressed to other bots are ignored
    sent_at: float | None = None      # when the platform says it was sent (epoch seconds)
    is_admin: bool = False            # the platform says the user administers the chat
    # Whether the platform can show a message to this user alone here (Discord's ephemeral
    # answers can; a Telegram group cannot, except as a short alert on a button).
    can_whisper: bool = True
    # A link that opens a private chat with the bot carrying ``{payload}`` (Telegram's
    # t.me/<bot>?start=<payload>), where the platform has one.
    private_link: str | None = None
    # Written as a chat, not as a person: an anonymous group admin (as the group; ``is_admin``
    # says so) or a member posting as a channel.  Admin commands are served; the rest, which
    # need a player, are answered "write as yourself".
    as_chat: bool = False


@dataclass(frozen=True)
class Button:
    """A button: its label, the action string sent back (at most 64 bytes, valid after a
    restart), and the typed command that does the same where there is one."""

    label: str
    action: str
    command: str | None = None
    style: str | None = None          # a hint for platforms that colour buttons: go, stop, back


@dataclass(frozen=True)
class Mention:
    """A user the reply notifies (whose turn it is): the reply's text holds ``name`` literally, and
    the adapter makes its first occurrence a ping of that user, and of no one else (a Telegram
    text mention, a Discord ``<@id>`` with allowed mentions limited to that user)."""

    user_id: str
    name: str
    username: str | None = None       # the @handle, without the @, when the platform has one


@dataclass
class Reply:
    """One message to send into the chat."""

    text: str
    image: bytes | None = None            # PNG board
    animation: bytes | None = None        # GIF of a multi-capture
    buttons: list[list[Button]] = field(default_factory=list)
    replaces_board: bool = False          # edit the game's current board message instead
    game_id: int | None = None            # the game this board belongs to
    board_text: str | None = None         # the board drawn in text (console)
    document: tuple[str, bytes] | None = None   # (file name, content), e.g. a PDN
    private: bool = False                 # only for the user who asked (where possible)
    post_id: int | None = None            # the puzzle post this board shows (replies to it answer it)
    spoiler: str | None = None            # shown hidden after the text, revealed by a tap
    # An emoji reaction to the user's message that stands in for this (private) reply where the
    # platform cannot show a message to one user alone; the text is then not sent there.
    reaction: str | None = None
    # What ``/start <payload>`` in a private chat opens this board with (a puzzle post): a platform
    # that cannot show a group member a board of their own sends them there instead.
    start_payload: str | None = None
    # Who is pinged by this message (a typed move's board naming the player to move, a reminder).
    mentions: list[Mention] = field(default_factory=list)
    challenge_id: int | None = None       # the challenge this message shows (updated once it is closed)
    # An earlier message of the bot in this chat that this reply takes the place of (its text and
    # buttons, edited in place; a message that can no longer be edited is left as it is).
    edit_of: str | None = None

    def to_json(self) -> str:
        """The reply as JSON text (binary parts in base64), to wait in the outbox."""
        def b64(data: bytes | None) -> str | None:
            return base64.b64encode(data).decode("ascii") if data is not None else None
        return json.dumps({
            "text": self.text, "image": b64(self.image), "animation": b64(self.animation),
            "buttons": [[[b.label, b.action, b.command, b.style] for b in row] for row in self.buttons],
            "replaces_board": self.replaces_board, "game_id": self.game_id, "board_text": self.board_text,
            "document": [self.document[0], b64(self.document[1])] if self.document else None,
            "private": self.private, "post_id": self.post_id, "spoiler": self.spoiler, "reaction": self.reaction,
            "start_payload": self.start_payload,
            "mentions": [[m.user_id, m.name, m.username] for m in self.mentions],
            "challenge_id": self.challenge_id, "edit_of": self.edit_of,
        }, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Reply:
        """The reply written by ``to_json``."""
        data = json.loads(text)

        def raw(value: str | None) -> bytes | None:
            return base64.b64decode(value) if value is not None else None
        document = data["document"]
        return cls(
            text=data["text"], image=raw(data["image"]), animation=raw(data["animation"]),
            buttons=[[Button(*b) for b in row] for row in data["buttons"]],
            replaces_board=data["replaces_board"], game_id=data["game_id"], board_text=data["board_text"],
            document=(document[0], raw(document[1]) or b"") if document else None, private=data["private"],
            post_id=data.get("post_id"), spoiler=data.get("spoiler"), reaction=data.get("reaction"),
            start_payload=data.get("start_payload"),
            mentions=[Mention(*m) for m in data.get("mentions") or []],
            challenge_id=data.get("challenge_id"), edit_of=data.get("edit_of"),
        )


@dataclass(frozen=True)
class Outgoing:
    """A reply the service sends on its own (deadlines, reminders)."""

    platform: str
    chat_id: str
    reply: Reply


@dataclass(frozen=True)
class OutboxItem:
    """A message from the outbox, for its platform's adapter to deliver."""

    id: int
    platform: str
    chat_id: str
    reply: Reply
    attempts: int
    delivered: int = 0        # platform messages of the reply already out: a retry sends the rest
