"""Who asks a use case for something, where, and when: identities, not chat messages.

The chat layer (``bot.service.chat``) builds a ``Caller`` from a chat event, the web board
(``bot.service.web``) from a verified seat link; a use case reads only these fields, never a
message, a button, a deep link or the message replied to (the chat layer resolves those into typed
requests: a game's number, a puzzle post's, a square).
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.storage.records import ChatRecord

# The outbox chat id of a user's private chat with the bot (``dm:<user_id>``): each adapter turns it
# into its platform's private chat (Telegram: the user's id; Discord: a DM channel).
DM_PREFIX = "dm:"


def dm_chat(user_id: str) -> str:
    """The outbox chat id that reaches ``user_id`` privately."""
    return DM_PREFIX + str(user_id)


@dataclass(frozen=True)
class Mention:
    """A user a message notifies (whose turn it is): the message's text holds ``name`` literally,
    and the adapter makes its first occurrence a ping of that user, and of no one else (a Telegram
    text mention, a Discord ``<@id>`` with allowed mentions limited to that user)."""

    user_id: str
    name: str
    username: str | None = None       # the @handle, without the @, when the platform has one


@dataclass(frozen=True)
class Player:
    """A person of a platform: ``name`` as shown (cleaned, at most 64 characters), ``username`` the
    handle used in @mentions (without the @), ``language`` the one their platform reports."""

    platform: str
    user_id: str
    name: str
    username: str | None = None
    language: str | None = None

    def answers_to(self, handle: str) -> bool:
        """Whether an @handle (lower case, without the @) names this player.  Display names can
        be chosen freely, so they count only for players who have no handle at all."""
        if self.username:
            return self.username.lower() == handle
        return self.name.lower() == handle


@dataclass(frozen=True)
class Where:
    """A chat: ``private`` when it is the player's own chat with the bot (a group's policies, such
    as answering one member alone, do not apply there); ``whisper`` whether the platform can show
    a message to one member alone here (a Telegram group cannot); ``invites`` whether the platform
    can send a member to their private chat with the bot by a link (Telegram's start links)."""

    platform: str
    chat_id: str
    private: bool = False
    whisper: bool = True
    invites: bool = False

    @property
    def key(self) -> tuple[str, str]:
        return self.platform, self.chat_id


@dataclass(frozen=True)
class Caller:
    """One request to the use cases: ``by`` whom, ``where``, ``at`` the time it is served, ``sent``
    when the player acted (never after ``at``: a message queued while the bot was down must not
    lose on time for the downtime), ``chat`` the chat's stored settings.  ``origin``: whatever the
    caller wants handed back in the domain events its change publishes (the web board tells a
    game's chat of its own moves so), passed explicitly, never read by a use case."""

    by: Player
    where: Where
    at: float
    sent: float
    chat: ChatRecord
    origin: object | None = None

    @property
    def user_id(self) -> str:
        return self.by.user_id

    @property
    def platform(self) -> str:
        return self.by.platform

    @property
    def chat_id(self) -> str:
        return self.where.chat_id

    @property
    def key(self) -> tuple[str, str]:
        return self.where.key

    @property
    def name(self) -> str:
        return self.by.name
