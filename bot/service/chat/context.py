"""What a chat event means beyond its words: the event being answered (``Ctx``), who asks as the
use cases know it (``Ctx.caller``), the board or puzzle the message replies to, and the start link
that opens a private chat with the bot."""

from __future__ import annotations

from dataclasses import dataclass, replace

from bot.service.chat import present_puzzles
from bot.service.chat.commands import clean_text, fold
from bot.service.chat.links import WebLinks
from bot.service.chat.signing import LinkSigner
from bot.service.compose import UseCases
from bot.service.events import ChatEvent
from bot.service.features.identity import Caller, Player, Where
from bot.service.features.results_puzzles import PuzzleInPrivate, PuzzleResult
from bot.storage.records import ChatRecord


def display_name(event: ChatEvent) -> str:
    """The name a chat event's user goes by: their display name cleaned (at most 64 characters),
    else their handle, else their number."""
    name = clean_text(event.user_name or "")[:64]
    return name or (event.username or f"user {event.user_id}")[:64]


@dataclass(frozen=True)
class Ctx:
    """A chat event being answered: the event, the chat's language and stored record, the time it
    is served, the web board's links while an adapter serves it (``ChatLayer.web``) and the signer
    of the chat's links (``ChatLayer.signer``).  Only the chat layer reads the event: the use cases
    get ``caller``."""

    event: ChatEvent
    lang: str
    chat: ChatRecord
    now: float
    web: WebLinks | None = None
    signer: LinkSigner | None = None

    @property
    def key(self) -> tuple[str, str]:
        return self.event.platform, self.event.chat_id

    @property
    def sent(self) -> float:
        """When the user acted: the platform's send time if it has one (messages queued while
        the bot was down must not lose on time for the bot's downtime), never in the future."""
        sent_at = self.event.sent_at
        return min(sent_at, self.now) if sent_at is not None else self.now

    @property
    def caller(self) -> Caller:
        """Who asks, where and when, as the use cases know it."""
        ev = self.event
        by = Player(ev.platform, ev.user_id, display_name(ev), ev.username, ev.language)
        where = Where(ev.platform, ev.chat_id, private=ev.chat_kind == "private", whisper=ev.can_whisper,
                      invites=ev.private_link is not None)
        return Caller(by, where, self.now, self.sent, self.chat)


# -- what a message means beyond its words --------------------------------------------------------------

def replied_game(app: UseCases, ctx: Ctx) -> int | None:
    """The game whose board the message replies to, if it replies to one."""
    ev = ctx.event
    if not ev.reply_to:
        return None
    return app.runtime.storage.games.of_message(ev.platform, ev.chat_id, str(ev.reply_to))


def game_meant(app: UseCases, ctx: Ctx, ref: int | None) -> int | None:
    """The game a command names: #``ref`` typed, else the board the message replies to."""
    return ref if ref is not None else replied_game(app, ctx)


def replied_post(app: UseCases, ctx: Ctx) -> int | None:
    """The puzzle post the message replies to, if it replies to one."""
    ev = ctx.event
    if not ev.reply_to:
        return None
    return app.runtime.storage.puzzles.of_message(ev.platform, ev.chat_id, str(ev.reply_to))


def signer_of(app: UseCases, ctx: Ctx) -> LinkSigner:
    """The signer of the chat's links: the chat layer's (its key read once), else one of its own."""
    return ctx.signer if ctx.signer is not None else LinkSigner(app.runtime.storage.settings)


def start_link(ctx: Ctx, payload: str) -> str | None:
    """The link that opens the user's private chat with the bot on ``/start <payload>``, where the
    platform has one (Telegram)."""
    link = ctx.event.private_link
    return link.format(payload=payload) if link else None


def with_links(app: UseCases, ctx: Ctx, outcome: PuzzleResult) -> PuzzleResult:
    """A puzzle waiting in the private chat, with the link that opens it there (with the user's pass)."""
    if isinstance(outcome, PuzzleInPrivate):
        token = signer_of(app, ctx).puzzle_pass(ctx.event.platform, outcome.post_id, ctx.event.user_id)
        payload = f"{present_puzzles.puzzle_start(outcome.post_id)}_{token}"
        return replace(outcome, link=start_link(ctx, payload) or "")
    return outcome


# Words after /games that ask for finished games (/games done, /partidas terminadas...).
DONE_WORDS = ("done", "finished", "history", "old", "terminadas", "acabadas", "historial", "finite", "concluse",
              "storico", "cronologia")


def asks_for_history(args: list[str]) -> bool:
    """Whether /games was given a word asking for finished games."""
    return bool(args) and fold(args[0]) in DONE_WORDS
