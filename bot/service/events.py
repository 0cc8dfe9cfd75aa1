"""What a platform adapter hands the service, and what it gets back."""

from __future__ import annotations

import base64
import json
import re
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, Protocol

# Whom a message pings and the outbox's private chats are the use cases' words too (they say whose
# turn it is, and to whom privately): defined with the use cases' identities, named here as well.
from bot.service.features.identity import DM_PREFIX as DM_PREFIX
from bot.service.features.identity import Mention as Mention
from bot.service.features.identity import dm_chat as dm_chat


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
    # A link button instead of an action: pressing it opens ``url`` (``action`` is then unused).
    # ``web_app``: open it as a Telegram Mini App (Telegram allows that only in private chats).
    url: str | None = None
    web_app: bool = False


# -- render specs: what a picture or file shows, stored in the outbox instead of its bytes ------------


@dataclass(frozen=True)
class BoardSpec:
    """A board picture as ``bot.service.chat.boards.board_view`` was asked for it: the position (its
    FEN, so the picture is the board as it stood then, whatever the game did since) and the marks.
    Drawn the same, it gives the same bytes."""

    variant: str
    fen: str
    last_path: tuple[int, ...] = ()
    captured: tuple[int, ...] = ()
    dots: tuple[int, ...] = ()
    selected: int | None = None
    flipped: bool = False
    routes: tuple[tuple[int, ...], ...] = ()
    earlier_paths: tuple[tuple[int, ...], ...] = ()


@dataclass(frozen=True)
class CaptureSpec:
    """The GIF of a multi-capture: the position before it, the move's squares, the side seen from."""

    variant: str
    fen: str
    path: tuple[int, ...]
    captured: tuple[int, ...]
    promotes: bool
    flipped: bool


Spec = BoardSpec | CaptureSpec


class SpecRenderer(Protocol):
    """Draws a stored spec (``bot.service.chat.boards.RENDERER``)."""

    def picture(self, spec: Spec) -> bytes: ...

    def text(self, spec: Spec) -> str: ...

    def remember(self, picture: bytes | None) -> None:
        """A picture written to the outbox as its spec, kept to be delivered without drawing it again."""


class Rendered(bytes):
    """Picture bytes that know the spec they were drawn from: the outbox stores the spec."""

    spec: Spec

    def __new__(cls, data: bytes, spec: Spec) -> Rendered:
        made = super().__new__(cls, data)
        made.spec = spec
        return made

    def __reduce__(self) -> tuple[type[Rendered], tuple[bytes, Spec]]:
        return Rendered, (bytes(self), self.spec)


class RenderedText(str):
    """A text board that knows the spec it was drawn from: the outbox stores the spec."""

    spec: Spec

    def __new__(cls, data: str, spec: Spec) -> RenderedText:
        made = super().__new__(cls, data)
        made.spec = spec
        return made

    def __reduce__(self) -> tuple[type[RenderedText], tuple[str, Spec]]:
        return RenderedText, (str(self), self.spec)


def spec_to_json(spec: Spec) -> dict[str, Any]:
    """A spec as JSON values, its default fields left out."""
    kind = "board" if isinstance(spec, BoardSpec) else "capture"
    out: dict[str, Any] = {"kind": kind}
    for item in fields(spec):
        value = getattr(spec, item.name)
        if value != item.default or item.default is MISSING:
            out[item.name] = value
    return out


def spec_from_json(data: dict[str, Any]) -> Spec:
    """The spec ``spec_to_json`` wrote."""
    values = {key: value for key, value in data.items() if key != "kind"}
    for key in ("last_path", "captured", "dots", "path"):
        if key in values:
            values[key] = tuple(values[key])
    for key in ("routes", "earlier_paths"):
        if key in values:
            values[key] = tuple(tuple(route) for route in values[key])
    if data["kind"] == "board":
        return BoardSpec(**values)
    if data["kind"] == "capture":
        return CaptureSpec(**values)
    raise ValueError(f"unknown render spec {data['kind']!r}")


def _binary(data: bytes | None) -> str | dict[str, Any] | None:
    """Picture or file bytes as stored: their spec when they have one, else base64."""
    if data is None:
        return None
    if isinstance(data, Rendered):
        return {"spec": spec_to_json(data.spec)}
    return base64.b64encode(data).decode("ascii")


def _button_json(button: Button) -> list[str | bool | None]:
    """A button as a list, the trailing fields that are unset left out."""
    out: list[str | bool | None] = [button.label, button.action, button.command, button.style, button.url,
                                    button.web_app]
    while len(out) > 2 and (out[-1] is None or out[-1] is False):
        out.pop()
    return out


def _unset(value: Any) -> bool:
    """Whether a reply's field is at its default (``to_json`` leaves it out)."""
    return value is None or value is False or (isinstance(value, list | str) and not value)


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
    # How far the game had got when this board was drawn (``board_stage``: 2 x ply, +1 once over):
    # a board message is never edited back to an earlier stage (retries and other processes' edits
    # may arrive in any order).  None for a reply that shows no game's board.
    board_stage: int | None = None
    # The picture in words for readers who cannot see it (whose turn, each side's pieces by square):
    # Telegram adds it to the photo's caption, Discord gives it as the attachment's alt text.
    alt: str | None = None
    # The chat's record message this is ("<mode>:<variant>", a new post): the adapter reports its
    # id, and the next record edits it in place (``edit_of``).
    record: str | None = None

    def to_json(self) -> str:
        """The reply as a small notification to wait in the outbox: a picture or file that carries
        its render spec (``Rendered``/``RenderedText``, as ``bot.service.chat.boards`` makes them) is
        stored as that spec and drawn again when the row is delivered (``from_json`` with a
        ``render``); any other binary part is stored in base64.  Values at their default are left
        out (a row written before a field existed reads the same)."""
        board_text: Any = self.board_text
        if isinstance(board_text, RenderedText):
            # The console's text board is drawn from the same spec as the picture, mostly.
            same = isinstance(self.image, Rendered) and self.image.spec == board_text.spec
            board_text = {"of": "image"} if same else {"spec": spec_to_json(board_text.spec)}
        data: dict[str, Any] = {
            "text": self.text, "image": _binary(self.image), "animation": _binary(self.animation),
            "buttons": [[_button_json(b) for b in row] for row in self.buttons],
            "replaces_board": self.replaces_board, "game_id": self.game_id, "board_text": board_text,
            "document": [self.document[0], _binary(self.document[1])] if self.document else None,
            "private": self.private, "post_id": self.post_id, "spoiler": self.spoiler, "reaction": self.reaction,
            "start_payload": self.start_payload,
            "mentions": [[m.user_id, m.name, m.username] for m in self.mentions],
            "challenge_id": self.challenge_id, "edit_of": self.edit_of, "board_stage": self.board_stage,
            "alt": self.alt, "record": self.record,
        }
        return json.dumps({key: value for key, value in data.items() if key == "text" or not _unset(value)},
                          ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str, render: SpecRenderer | None = None) -> Reply:
        """The reply written by ``to_json`` (or by the bot before notifications were small: every
        binary part in base64).  ``render`` draws a stored spec (``bot.service.chat.boards.RENDERER``);
        a row with a spec cannot be read without one."""
        data = json.loads(text)

        def raw(value: str | dict[str, Any] | None) -> bytes | None:
            if value is None:
                return None
            if isinstance(value, dict):
                if render is None:
                    raise ValueError("this outbox row holds a render spec: read it with a renderer")
                return render.picture(spec_from_json(value["spec"]))
            return base64.b64decode(value)
        image = raw(data.get("image"))
        board_text = data.get("board_text")
        if isinstance(board_text, dict):
            if render is None:
                raise ValueError("this outbox row holds a render spec: read it with a renderer")
            spec = data["image"]["spec"] if board_text.get("of") == "image" else board_text["spec"]
            board_text = render.text(spec_from_json(spec))
        document = data.get("document")
        return cls(
            text=data["text"], image=image, animation=raw(data.get("animation")),
            buttons=[[Button(*b) for b in row] for row in data.get("buttons") or []],
            replaces_board=bool(data.get("replaces_board")), game_id=data.get("game_id"), board_text=board_text,
            document=(document[0], raw(document[1]) or b"") if document else None,
            private=bool(data.get("private")),
            post_id=data.get("post_id"), spoiler=data.get("spoiler"), reaction=data.get("reaction"),
            start_payload=data.get("start_payload"),
            mentions=[Mention(*m) for m in data.get("mentions") or []],
            challenge_id=data.get("challenge_id"), edit_of=data.get("edit_of"), board_stage=data.get("board_stage"),
            alt=data.get("alt"), record=data.get("record"),
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
    kind: str = ""            # the notification's kind (bot.service.notifications), "" for a finished reply
