"""The Discord adapter: slash commands and buttons in, service replies out.

Like every adapter it holds no game logic.  A slash command is turned back into the typed
command text the service reads (``/move #3 22-18``), a button click into its action string;
the service's replies become messages, ephemeral messages, files and persistent buttons.

Rules this module follows (see PLATFORMS.md):
- every interaction is acknowledged first (``defer``), within Discord's 3 seconds, and then
  answered with followups or an edit; any failure still gets an ephemeral answer;
- buttons are one ``DynamicItem`` whose custom id carries the service's action, so they keep
  working after a restart; an id we do not know is answered too;
- no privileged intents; the command tree is synced only by ``python -m bot discord sync``, to
  one place (globally, or one server), never both: never by a running bot, so that any number of
  shard processes (bot.platforms.discord.sharding) start without registering anything;
- the service's text is plain: it is escaped once (render.escape), so what users typed shows as
  typed; our own markup (spoiler bars, resolved mentions) is added after;
- retries are discord.py's (5xx, 429 up to MAX_RATELIMIT_SECONDS); ours add one at most;
- the bot's own posts need the channel's permissions, interactions do not: a command says what
  is missing, and the outbox falls back to a follow-up of the channel's newest interaction;
- the token is never logged.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import re
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeVar

import aiohttp
import discord
from discord import app_commands
from discord.ext import commands

from bot.i18n import catalog, pick_language, t
from bot.platforms.base import PERMANENT, TRANSIENT, ChatAdapter, Piece, Progress, run_until_stopped
from bot.platforms.discord import render
from bot.platforms.discord.sharding import ShardConfig, ShardConfigError, shard_config
from bot.platforms.web import WebConfig, start_web
from bot.platforms.web.server import ConfigProblem
from bot.service import DM_PREFIX, Button, ChatEvent, GameService, Reply, StorageError
from bot.service.chat.registry import REGISTRY, Arg, ArgKind, CommandSpec, variant_choices

log = logging.getLogger(__name__)
T = TypeVar("T")

PLATFORM = "discord"
# Answers to these concern only the one who asked: shown to them alone.
EPHEMERAL_COMMANDS = frozenset({"help", "rules", "web"})

VARIANT_CHOICES = [app_commands.Choice(name=name, value=value) for name, value in variant_choices()]
COLOR_CHOICES = [
    app_commands.Choice(name="white", value="white"),
    app_commands.Choice(name="black", value="black"),
    app_commands.Choice(name="random", value="random"),
]
LANGUAGE_CHOICES = [
    app_commands.Choice(name="Español", value="es"),
    app_commands.Choice(name="Italiano", value="it"),
    app_commands.Choice(name="English", value="en"),
]
SETTING_CHOICES = [
    app_commands.Choice(name="variant", value="variant"),
    app_commands.Choice(name="language", value="lang"),
]
GameId = app_commands.Range[int, 1, 999_999_999]

# Retrying.  discord.py retries inside every request already: on the REST API it tries a 500,
# 502, 504 or 524 five times (1, 3, 5, 7, 9 s apart) and waits out a 429 up to
# max_ratelimit_timeout, raising RateLimited at once for a longer one; on an interaction's webhook
# it tries every 5xx and 429 five times.  Our own tries used to stack on top of that: one post
# during a 502 outage made 20 requests and slept 100 s holding the channel.  So we try again once
# at most, and only what discord.py gave up on at the first answer (a 503 on the REST API);
# whatever still fails is the outbox's to try later, or the channel's for an interaction.
MAX_RATELIMIT_SECONDS = 30.0    # discord.py's smallest; a longer 429 is not slept through
TRANSIENT_STATUSES = frozenset({429, 500, 502, 503, 504, 524})
REST_RETRIED_STATUSES = frozenset({500, 502, 504, 524})     # what discord.py's REST loop retries
RETRY_ATTEMPTS = 2              # tries in all: one retry of ours at most
RETRY_SECONDS = 1.0
# The interaction can no longer be answered: Unknown Webhook, Unknown interaction, and Invalid
# Webhook Token (the token is older than 15 minutes).
GONE_CODES = frozenset({10015, 10062, 50027})
# The channel will never take a message from us: Unknown Channel, Missing Access, Missing
# Permissions, Cannot send messages to this user.
CHANNEL_GONE_CODES = frozenset({10003, 50001, 50013, 50007})
# The message to edit was deleted (Unknown Message).
UNKNOWN_MESSAGE = 10008


# What the bot needs in a channel to post there on its own (the REST API): the bot's moves,
# reminders, time-outs and the daily puzzle.  An interaction's answers need none of it.  (Read
# Message History too, as the invite asks for it, for what Discord shows around a reply.)
POSTING_PERMISSIONS = ("view_channel", "send_messages", "attach_files", "read_message_history")
THREAD_TYPES = frozenset({discord.ChannelType.public_thread, discord.ChannelType.private_thread,
                          discord.ChannelType.news_thread})
# A thread the bot starts for a place of its own: Discord's name limit, and archived after a week
# without messages (Discord's longest; a round's deadline is a week by default, and the bot's
# next post opens it again).
THREAD_NAME_LIMIT = 100
THREAD_ARCHIVE_MINUTES: Literal[10080] = 10080
# An interaction token lives 15 minutes: a follow-up is tried on one younger than this.
FOLLOW_UP_SECONDS = 14 * 60
# How many channels' interactions a process keeps before it clears out the expired ones (a bot in
# thousands of servers would otherwise keep one for every channel it was ever used in).
PRUNE_LIVE_AT = 1024
# A member is told what the bot lacks in a channel once in this long.
PERMISSION_NOTICE_SECONDS = 3600
# The bot's own post was refused: Missing Access, Missing Permissions.
NOT_ALLOWED_CODES = frozenset({50001, 50013})


# Interaction tokens in discord.py's own log lines: at DEBUG it logs every gateway event (an
# INTERACTION_CREATE with its token) and every webhook URL (the token is in the path).  A token is
# base64 of "interaction:...", so it starts "aW50ZXJhY3Rpb24"; in a URL any token is hidden.
_TOKEN_TEXT = re.compile(r"aW50ZXJhY3Rpb24[A-Za-z0-9_\-.=]*"
                         r"|(?<=/webhooks/)(?=[0-9]+/)[0-9]+/[^/?#\s'\"]+"
                         r"|(?<=/interactions/)(?=[0-9]+/)[0-9]+/[^/?#\s'\"]+")
HIDDEN_TOKEN = "[interaction token]"


class HideInteractionTokens(logging.Filter):
    """Blanks interaction tokens out of a record of discord.py's (a logger's filter sees only what
    is logged to that very logger: DraughtsBot puts one on each of discord.py's)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            text = record.getMessage()
        except Exception:
            return True             # logging reports a record it cannot format itself
        hidden = _TOKEN_TEXT.sub(HIDDEN_TOKEN, text)
        if hidden != text:
            record.msg, record.args = hidden, None
        return True


_HIDE_TOKENS = HideInteractionTokens()


def hide_interaction_tokens() -> None:
    """Put the filter on every logger of discord.py's (once each; its modules are all imported by
    now, as ``import discord`` imports them)."""
    names = [name for name in list(logging.root.manager.loggerDict)
             if name == "discord" or name.startswith("discord.")]
    for name in names:
        logger = logging.getLogger(name)
        if _HIDE_TOKENS not in logger.filters:
            logger.addFilter(_HIDE_TOKENS)


class NotAChannel(ValueError):
    """A chat id that cannot be a Discord channel."""


def retry_delay(exc: BaseException, *, webhook: bool = False) -> float | None:
    """How long to wait before trying again after ``exc``, or None when discord.py tried already
    (a webhook's 5xx and 429s, the REST API's 500/502/504/524 and short 429s) or trying again
    soon cannot help (a refusal; a rate limit longer than MAX_RATELIMIT_SECONDS; Cloudflare's
    429 without Discord's body)."""
    if not isinstance(exc, discord.HTTPException) or exc.status < 500:
        return None
    if webhook or exc.status in REST_RETRIED_STATUSES:
        return None
    return RETRY_SECONDS


def transient(exc: BaseException) -> bool:
    return isinstance(exc, discord.RateLimited) or (
        isinstance(exc, discord.HTTPException) and exc.status in TRANSIENT_STATUSES)


def interaction_gone(exc: BaseException) -> bool:
    return isinstance(exc, discord.HTTPException) and exc.code in GONE_CODES


def describe_http_failure(exc: BaseException) -> str:
    """An HTTP failure in a log line (status and Discord code; never a URL, which holds tokens)."""
    if isinstance(exc, discord.HTTPException):
        return f"HTTP {exc.status}, code {exc.code}"
    if isinstance(exc, discord.RateLimited):
        return f"rate limited for {exc.retry_after:.1f} s"
    return type(exc).__name__


def handle_of(user: discord.abc.User) -> str:
    """The @handle the service matches challenges against: the Discord user name (legacy names
    may contain spaces, which a typed command could not carry)."""
    return re.sub(r"\s+", "_", user.name.strip()) or str(user.id)


def chat_kind(interaction: discord.Interaction) -> str:
    channel = interaction.channel
    if interaction.guild_id is None and (channel is None or getattr(channel, "type", None) is
                                         discord.ChannelType.private):
        return "private"
    return "group"


def event_for(interaction: discord.Interaction, *, text: str | None = None,
              action: str | None = None) -> ChatEvent:
    """The neutral event for one interaction."""
    user = interaction.user
    return ChatEvent(
        platform=PLATFORM,
        chat_id=str(interaction.channel_id),
        chat_kind=chat_kind(interaction),
        user_id=str(user.id),
        user_name=user.display_name,
        username=handle_of(user),
        language=str(interaction.locale) if interaction.locale else None,
        text=text,
        action=action,
        sent_at=interaction.created_at.timestamp(),
        is_admin=is_admin(interaction),
    )


def is_admin(interaction: discord.Interaction) -> bool:
    """Manage Server or Manage Channels in this channel (the member's own DMs are theirs)."""
    if interaction.guild_id is None:
        return True
    permissions = interaction.permissions
    return bool(permissions.manage_guild or permissions.manage_channels or permissions.administrator)


def missing_permissions(interaction: discord.Interaction) -> list[str]:
    """What the bot lacks in the interaction's channel to post there on its own, by discord.py's
    permission names (in a thread, Send Messages in Threads instead of Send Messages)."""
    if interaction.guild_id is None:
        return []
    have = interaction.app_permissions
    needed = list(POSTING_PERMISSIONS)
    if getattr(interaction.channel, "type", None) in THREAD_TYPES:
        needed[needed.index("send_messages")] = "send_messages_in_threads"
    return [name for name in needed if not getattr(have, name)]


def can_post(interaction: discord.Interaction) -> bool:
    """Whether the bot's own posts (a board: text and a file) will be taken in that channel."""
    return not set(missing_permissions(interaction)) - {"read_message_history"}


def is_board(reply: Reply) -> bool:
    """A reply that shows a game's or a puzzle's position (with its buttons)."""
    return (reply.game_id is not None or reply.post_id is not None) and (reply.image is not None or bool(reply.buttons))


# -- buttons ---------------------------------------------------------------------------------------


class GameButton(discord.ui.DynamicItem[discord.ui.Button], template=render.TEMPLATE):
    """Every button the service asks for: custom id ``dr:<action>``; works after a restart."""

    def __init__(self, action: str, label: str = "?", style: discord.ButtonStyle = discord.ButtonStyle.secondary,
                 row: int | None = None) -> None:
        super().__init__(discord.ui.Button(label=label, style=style, custom_id=render.custom_id(action), row=row))
        self.action = action

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any],
                             match: re.Match[str], /) -> GameButton:
        return cls(match["action"], label=getattr(item, "label", None) or "?",
                   style=getattr(item, "style", discord.ButtonStyle.secondary))

    async def callback(self, interaction: discord.Interaction) -> None:
        bot = interaction.client
        if isinstance(bot, DraughtsBot):
            await bot.handle_click(interaction, self.action)


def _carries(message: discord.Message | None, custom_id: str) -> bool:
    """Whether a message has a component with this custom id (what DynamicItem dispatch needs)."""
    if message is None or message.flags.components_v2:
        return False
    stack: list[Any] = list(message.components)
    while stack:
        component = stack.pop()
        if getattr(component, "custom_id", None) == custom_id:
            return True
        stack.extend(getattr(component, "children", []) or [])
    return False


@dataclass(frozen=True)
class FollowUp:
    """A channel's newest interaction, as far as posting through it goes: the bot's own messages
    go out as its follow-ups where the channel refuses the bot's posts, while its token lives.  Kept
    in the database too (GameService.keep_follow_up), so that whichever process delivers the
    channel's outbox row can use it.  The token is a credential: not in the repr, never logged."""

    token: str = field(repr=False)
    application_id: int
    at: float               # when the interaction was created (Discord's clock)
    can_post: bool          # whether the bot could post in the channel on its own then

    @classmethod
    def of(cls, interaction: discord.Interaction) -> FollowUp:
        return cls(interaction.token, interaction.application_id, interaction.created_at.timestamp(),
                   can_post(interaction))

    @classmethod
    def stored(cls, value: Mapping[str, Any] | None) -> FollowUp | None:
        """From what ``stored_value`` wrote; None for anything else."""
        if value is None:
            return None
        try:
            return cls(str(value["token"]), int(value["application_id"]), float(value["at"]),
                       bool(value["can_post"]))
        except (KeyError, TypeError, ValueError):
            return None

    def stored_value(self) -> dict[str, Any]:
        return {"token": self.token, "application_id": str(self.application_id), "at": self.at,
                "can_post": self.can_post}


@dataclass(frozen=True)
class Place:
    """A place of its own made for a command: its chat id (the thread's), a link that opens it, its name."""

    chat_id: str
    link: str
    name: str


@dataclass(frozen=True)
class Mention:
    """A member a slash option resolved: the service names them by ``@handle``, Discord needs
    ``<@id>`` to show and notify them."""

    handle: str
    user_id: int


# -- answering one interaction ------------------------------------------------------------------------


class Responder:
    """Sends the replies to one acknowledged interaction.

    A deferred slash command shows a "thinking" placeholder: Discord turns the first followup
    into that placeholder and keeps its visibility, whatever the followup asks.  So the first
    message with the same visibility edits the placeholder; one with the other visibility
    first deletes it, after which followups are shown as asked.

    Every request is retried on transient failures.  When the interaction can no longer be
    answered (its token expired or Discord lost it) or keeps failing, public replies go to the
    channel through the bot's REST instead: a move that was played is always shown.  Private
    replies cannot be whispered in a channel and are dropped then (logged).
    """

    def __init__(self, bot: DraughtsBot, interaction: discord.Interaction, *, placeholder: bool,
                 placeholder_ephemeral: bool = False, force_private: bool = False,
                 mention: Mention | None = None) -> None:
        self.bot = bot
        self.interaction = interaction
        self.placeholder = placeholder
        self.placeholder_ephemeral = placeholder_ephemeral
        self.force_private = force_private
        self.mention = mention
        self.gone = False           # the interaction can no longer be answered: use the channel

    @property
    def channel_id(self) -> str:
        return str(self.interaction.channel_id)

    async def send(self, reply: Reply) -> discord.Message | None:
        if reply.edit_of is not None:
            # An earlier message of the channel takes this reply's place (a closed challenge).
            await self.bot.edit_message(self.channel_id, reply.edit_of, reply)
            return None
        private = reply.private or self.force_private
        # Escaped first, then our own pings go in (their <@id> must stay markup).
        text = render.escape(reply.text)
        users: list[int] = []
        if not private:
            text, users = render.ping(text, render.escaped(reply.mentions))
        if self.mention is not None and not private:
            mentioned = render.mention(text, self.mention.handle, self.mention.user_id)
            if mentioned != text:
                text, users = mentioned, [*users, self.mention.user_id]
        allowed = render.only_users(users) if users else render.NO_MENTIONS
        message = None
        reply = await self.bot.with_board_button(self.channel_id, reply)
        for piece in self.bot.pieces(replace(reply, text=text, mentions=[]), escaped=True):
            message = await self._deliver(piece, private, allowed)
            if piece.board and message is not None and not private:
                await self.bot.remember(self.channel_id, message.id, reply.game_id, reply.post_id, reply.challenge_id)
        return message

    async def replace(self, reply: Reply) -> None:
        """Edit the message whose button was clicked (a board) instead of posting a new one; an
        ephemeral one stays ephemeral, and so do the rest of the text's chunks."""
        message = self.interaction.message
        if self.gone or message is None:
            await self.send(reply)
            return
        private = message.flags.ephemeral
        reply = await self.bot.with_board_button(self.channel_id, reply)
        chunks = render.split_text(render.escape(reply.text))
        try:
            await self.bot.with_retries("editing a board", lambda: self.interaction.edit_original_response(
                content=chunks[0], attachments=render.files_of(reply), view=self.bot.view_for(reply),
                allowed_mentions=render.NO_MENTIONS), webhook=True)
        except (discord.HTTPException, discord.RateLimited) as exc:
            if not self._give_up_on_interaction(exc):
                raise
            await self.send(reply)          # the new board, as a new message in the channel
            return
        for chunk in chunks[1:]:
            await self._deliver(Piece(chunk), private, render.NO_MENTIONS)
        if not private:         # only its interaction can edit an ephemeral message
            await self.bot.remember(self.channel_id, message.id, reply.game_id, reply.post_id)

    async def _deliver(self, piece: Piece, private: bool,
                       allowed: discord.AllowedMentions) -> discord.Message | None:
        """One message through the interaction, retried; through the channel once it is gone."""
        if not self.gone:
            try:
                return await self.bot.with_retries("answering an interaction", lambda: self._post(
                    render.content_of(piece), render.files_of(piece), self.bot.view_for(piece), private, allowed),
                    webhook=True)
            except (discord.HTTPException, discord.RateLimited) as exc:
                if not self._give_up_on_interaction(exc):
                    raise
        if private:
            log.warning("a private answer in channel %s was dropped: its interaction is gone", self.channel_id)
            return None
        return await self.bot.send_to_channel(self.channel_id, piece, allowed)

    def _give_up_on_interaction(self, exc: BaseException) -> bool:
        """After a failure that retries did not cure: whether to turn to the channel."""
        if not (interaction_gone(exc) or transient(exc)):
            return False        # a refusal of what we sent: the channel would refuse it too
        if not self.gone:
            log.warning("interaction in channel %s is gone or failing (%s); answering in the channel",
                        self.channel_id, describe_http_failure(exc))
        self.gone = True
        self.placeholder = False
        return True

    async def _post(self, content: str, files: list[discord.File], view: discord.ui.View | None,
                    private: bool, allowed: discord.AllowedMentions = render.NO_MENTIONS) -> discord.Message | None:
        interaction = self.interaction
        if self.placeholder:
            # Filling the placeholder is an edit, and Discord notifies no one of an edit: a
            # message that mentions someone replaces the placeholder with a new message.
            if private == self.placeholder_ephemeral and allowed is render.NO_MENTIONS:
                message = await interaction.edit_original_response(
                    content=content, attachments=files, view=view, allowed_mentions=allowed)
                self.placeholder = False
                return message
            await interaction.delete_original_response()
            self.placeholder = False
        kwargs: dict[str, Any] = {"files": files, "ephemeral": private, "wait": True,
                                  "allowed_mentions": allowed}
        if view is not None:
            kwargs["view"] = view
        return await interaction.followup.send(content, **kwargs)

    async def finish(self) -> None:
        """Resolve a placeholder nothing was sent into."""
        if self.placeholder and not self.gone:
            try:
                await self.bot.with_retries("removing a placeholder", self.interaction.delete_original_response,
                                            webhook=True)
            except (discord.HTTPException, discord.RateLimited) as exc:
                log.warning("could not remove the placeholder in channel %s (%s)", self.channel_id,
                            describe_http_failure(exc))
            self.placeholder = False

    async def fail(self, key: str = "error.internal") -> None:
        """The one answer left when something broke: an ephemeral apology to the one who asked,
        never silence (a public placeholder is removed first, as the apology is theirs alone)."""
        lang = pick_language(str(self.interaction.locale) if self.interaction.locale else None)
        text = t(lang, key)
        if self.gone:
            log.warning("could not tell the user about a failure: the interaction is gone")
            return
        try:
            if not self.interaction.response.is_done():
                await self.interaction.response.send_message(text, ephemeral=True)
                return
            await self.bot.with_retries("apologising", lambda: self._post(text, [], None, True), webhook=True)
        except (discord.HTTPException, discord.RateLimited) as exc:
            log.warning("could not tell the user about a failure (%s)", describe_http_failure(exc))
        except Exception:
            log.exception("could not tell the user about a failure")


# -- the bot -------------------------------------------------------------------------------------------


class DraughtsTree(app_commands.CommandTree):
    """The command tree: an error nothing else handled still gets an answer."""

    async def on_error(self, interaction: discord.Interaction, error: app_commands.AppCommandError, /) -> None:
        if isinstance(error, (app_commands.CommandNotFound, app_commands.CommandSignatureMismatch)):
            # A command removed or changed since the last sync (the client still shows the old one):
            # say so instead of "The application did not respond" or an apology for a bug.
            name = getattr(error, "name", None) or getattr(getattr(error, "command", None), "name", "?")
            log.warning("command /%s is not as registered with Discord (sync the command tree)", name)
            client = interaction.client
            if isinstance(client, DraughtsBot):
                await Responder(client, interaction, placeholder=False).fail("discord.stale_command")
            return
        if isinstance(error, app_commands.TransformerError):
            # E.g. a member option used in a DM, where Discord sends a user, not a member.
            log.warning("unusable option value for /%s: %s", getattr(interaction.command, "name", "?"), error)
        else:
            log.error("slash command failed", exc_info=error)
        client = interaction.client
        if isinstance(client, DraughtsBot):
            await Responder(client, interaction, placeholder=False).fail()


class DraughtsBot(ChatAdapter, commands.AutoShardedBot):
    """The draughts bot on Discord, built around one GameService; what every adapter does
    (service calls, per-channel order, splitting replies, board memory, the outbox) comes from
    ChatAdapter, the rest is Discord's."""

    platform = PLATFORM
    text_limit = render.MAX_CONTENT
    caption_limit = render.MAX_CONTENT
    files_together = True           # one message carries the board, the GIF and a file

    def __init__(self, service: GameService, *, sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
                 clock: Callable[[], float] = time.time, env: Mapping[str, str] | None = None,
                 **options: Any) -> None:
        ChatAdapter.__init__(self, service, sleep)
        hide_interaction_tokens()
        self.clock = clock
        # Where the web board's settings are read (WEB_URL, PORT...); None: no board (``sync``).
        self.env = env
        # The newest interaction in each channel this process got (FollowUp); the database has the
        # newest of every process.  Expired ones are cleared out once it holds ``_prune_at``.
        self.live_interactions: dict[str, FollowUp] = {}
        self._prune_at = PRUNE_LIVE_AT
        self.permission_notices: dict[tuple[str, int], float] = {}     # (channel, member): when told
        intents = discord.Intents.none()
        intents.guilds = True          # channel cache; not privileged
        options.setdefault("intents", intents)
        options.setdefault("allowed_mentions", render.NO_MENTIONS)
        options.setdefault("help_command", None)
        options.setdefault("max_ratelimit_timeout", MAX_RATELIMIT_SECONDS)
        commands.AutoShardedBot.__init__(
            self,
            command_prefix=commands.when_mentioned,
            tree_cls=DraughtsTree,
            allowed_contexts=app_commands.AppCommandContext(guild=True, dm_channel=True, private_channel=False),
            allowed_installs=app_commands.AppInstallationType(guild=True, user=False),
            **options,
        )
        for command in build_commands(self):
            self.tree.add_command(command)

    async def setup_hook(self) -> None:
        self.add_dynamic_items(GameButton)
        await self.tree.set_translator(CatalogTranslator())
        await self.start_web()

    async def on_ready(self) -> None:
        log.info("connected to Discord as %s (%s guilds)", self.user, len(self.guilds))
        # Not in setup_hook: `sync` logs in too, and must deliver nothing.  Idempotent, as
        # on_ready comes again after a reconnect.
        self.start_delivery()

    async def close(self) -> None:
        await self.stop_delivery()
        await self.stop_web()
        await commands.AutoShardedBot.close(self)

    # -- the web board (docs/web.md), served in the bot's loop ------------------------------------

    async def start_web(self) -> None:
        """Serve the web board when ``WEB_URL`` (its public address, for links) is set, on
        ``$PORT`` (or ``$WEB_PORT``).  A board that cannot start is logged and left off."""
        env = self.env
        if env is None or self.web_server is not None or not env.get("WEB_URL", "").strip():
            return
        try:
            self.web_server = await start_web(self.service, WebConfig.from_env("0.0.0.0", env))
        except (ConfigProblem, OSError) as err:
            log.error("the web board cannot start: %s", err)
            return
        self.service.chat.serve_web(self.web_server.url, self.service.web)

    async def with_board_button(self, chat_id: str, reply: Reply) -> Reply:
        """A game's board with an Open board button (its press answers the presser alone with their
        own seat link, or the spectator link) while the web board runs and the board has room."""
        if (self.service.chat.web is None or reply.game_id is None or reply.private
                or (reply.image is None and not reply.board_text)):
            return reply
        rows = [row for row in reply.buttons if row]
        action = self.service.chat.web_button(reply.game_id)
        if len(rows) >= render.MAX_ROWS or any(b.action == action for row in rows for b in row):
            return reply
        label = await self.call(self.service.notice, PLATFORM, chat_id, "weblink.open")
        row = [Button(label, action)]
        if reply.board_stage is not None and reply.board_stage % 2 == 1:
            # A finished game's board: a link button beside Open board to the signed page at the
            # game's first position (the chat layer says whether this chat may be given it).
            review = await self.call(self.service.chat.review_button, PLATFORM, chat_id, reply.game_id)
            if review is not None:
                row.append(review)
        return replace(reply, buttons=[*rows, row])

    async def deliver(self, chat_id: str, reply: Reply, *, reply_to: str | None = None,
                      progress: Progress | None = None) -> None:
        await super().deliver(chat_id, await self.with_board_button(chat_id, reply), reply_to=reply_to,
                              progress=progress)

    def stop_platform(self) -> None:
        # Called from the delivery task, which close() waits for: closing runs as its own task.
        self._closing = asyncio.get_running_loop().create_task(self.close())

    # -- the service, off the event loop -----------------------------------------------------

    async def call_service(self, func: Callable[..., Any], *args: Any) -> Any:
        """Service calls do SQLite and Pillow work: run them in a thread so the gateway keeps its
        heartbeat (storage serializes its own connection)."""
        return await self.call(func, *args)

    async def with_retries(self, what: str, attempt: Callable[[], Awaitable[T]], *, webhook: bool = False) -> T:
        """``attempt()``, tried once more after a failure discord.py did not retry itself (see
        retry_delay; ``webhook``: the request goes through an interaction's webhook).
        ``attempt`` must build a fresh request each time: discord.py closes the files of one it
        sent."""
        for number in range(RETRY_ATTEMPTS):
            try:
                return await attempt()
            except (discord.HTTPException, discord.RateLimited) as exc:
                delay = retry_delay(exc, webhook=webhook)
                if delay is None or number == RETRY_ATTEMPTS - 1:
                    raise
                log.warning("%s failed (%s); trying again in %.1f s", what, describe_http_failure(exc), delay)
                await self.sleep(delay)
        raise AssertionError("unreachable")

    async def acknowledge(self, interaction: discord.Interaction, **kwargs: Any) -> None:
        """``defer`` within Discord's 3 seconds, retried briefly over transient failures."""
        await self.with_retries("acknowledging an interaction", lambda: interaction.response.defer(**kwargs),
                                webhook=True)

    def pieces(self, reply: Reply, *, escaped: bool = False) -> list[Piece]:
        """The messages of a reply, its text escaped first (render.escape) unless it is already:
        the escapes count towards Discord's 2,000 characters.  The mentions' names are escaped
        with it, so each is found where it stands (and pinged in ``send_piece``)."""
        if escaped:
            return super().pieces(reply)
        return super().pieces(replace(reply, text=render.escape(reply.text),
                                      mentions=render.escaped(reply.mentions)))

    def view_for(self, reply: Reply | Piece) -> discord.ui.View | None:
        return render.view_of(reply, lambda action, label, style, row: GameButton(action, label, style, row))

    # -- slash commands ------------------------------------------------------------------------

    async def run_command(self, interaction: discord.Interaction, name: str, text: str,
                          mention: Mention | None = None) -> None:
        """Acknowledge, hand the typed command to the service, send its replies (naming
        ``mention``, a member an option resolved, so that Discord notifies them)."""
        ephemeral = name in EPHEMERAL_COMMANDS
        try:
            await self.acknowledge(interaction, ephemeral=ephemeral, thinking=True)
        except (discord.HTTPException, discord.RateLimited) as exc:
            # Too late (10062) or already answered: nothing the user could see any more.
            log.warning("could not acknowledge /%s (%s)", name, describe_http_failure(exc))
            return
        responder = Responder(self, interaction, placeholder=True, placeholder_ephemeral=ephemeral,
                              force_private=ephemeral, mention=mention)
        await self.keep_interaction(interaction)
        place = await self.own_place(interaction, text)
        if place is not None:
            await self.in_own_place(interaction, name, text, place, responder)
            return
        # Acknowledged first (Discord's 3 s), then one channel at a time: answers and what the
        # outbox posts there keep their order.
        async with self.chat_lock(str(interaction.channel_id)):
            try:
                replies = await self.call_service(self.service.handle, event_for(interaction, text=text))
                for reply in replies + self.permission_notice(interaction):
                    await responder.send(reply)
                await responder.finish()
            except Exception:
                log.exception("answering /%s failed", name)
                await responder.fail()

    # -- a place of its own: a thread the bot starts (a tournament's) --------------------------------

    async def own_place(self, interaction: discord.Interaction, text: str) -> Place | None:
        """The thread started for a command that opens a place of its own (``CommandSpec.place_words``,
        /tournament new), or None, and the channel itself is used: not such a command, a use of it
        the member may not make (refused where it was asked), a DM or a thread already, a channel
        whose threads the bot may not post in, or Discord refused the thread (no Create Public
        Threads): said in the log only, since the command works the same in the channel."""
        place = REGISTRY.place_of(text)
        if (place is None or interaction.guild_id is None or interaction.channel_id is None
                or getattr(interaction.channel, "type", None) in THREAD_TYPES
                or not interaction.app_permissions.send_messages_in_threads
                or (not is_admin(interaction) and self.service.needs_admin(text))):
            return None
        channel_id = interaction.channel_id
        title = await self.call(self.place_name, str(channel_id), place.kind, place.variant)
        title = title if len(title) <= THREAD_NAME_LIMIT else title[:THREAD_NAME_LIMIT - 1] + "…"
        try:
            thread = await self.with_retries("starting a thread", lambda: self.http.start_thread_without_message(
                channel_id, name=title, auto_archive_duration=THREAD_ARCHIVE_MINUTES,
                type=discord.ChannelType.public_thread.value))
        except (discord.HTTPException, discord.RateLimited) as exc:
            log.info("no thread of its own in channel %s, the channel itself is used: %s", channel_id,
                     describe_http_failure(exc))
            return None
        thread_id = str(thread["id"])
        return Place(thread_id, f"https://discord.com/channels/{interaction.guild_id}/{thread_id}", title)

    def place_name(self, chat_id: str, kind: str, variant: str | None) -> str:
        """A place's name in the channel's language: "🏆 Swiss · Spanish draughts"."""
        kind_name = self.service.notice(PLATFORM, chat_id, f"place.kind.{kind or 'tournament'}")
        if variant is None:
            return self.service.notice(PLATFORM, chat_id, "place.title_short", kind=kind_name)
        return self.service.notice(PLATFORM, chat_id, "place.title", kind=kind_name,
                                   variant=self.service.notice(PLATFORM, chat_id, f"variant.{variant}"))

    async def in_own_place(self, interaction: discord.Interaction, name: str, text: str, place: Place,
                           responder: Responder) -> None:
        """The command handed to the service as written in the new thread, so what it starts and
        everything said about it live there (posted by the bot: the interaction answers in the
        channel); what is for the member alone, and a note with the thread's link, answer the
        interaction.  A command the service refused started nothing: the thread goes again, and
        the refusal answers the interaction."""
        channel = str(interaction.channel_id)
        try:
            notes: list[Reply] = []
            async with self.chat_lock(place.chat_id):
                event = replace(event_for(interaction, text=text), chat_id=place.chat_id)
                replies = await self.call_service(self.service.handle, event)
                if not await self.place_taken(place.chat_id):
                    await self.drop_thread(place.chat_id)
                    notes = replies
                else:
                    for reply in replies:
                        if reply.private or not await self.post_in_place(place.chat_id, reply):
                            notes.append(reply)
                    note = await self.call(self.service.notice, PLATFORM, channel, "place.note_thread",
                                           name=place.name, link=place.link)
                    notes.append(Reply(note))
            async with self.chat_lock(channel):
                for reply in [*notes, *self.permission_notice(interaction)]:
                    await responder.send(reply)
                await responder.finish()
        except Exception:
            log.exception("answering /%s failed", name)
            await responder.fail()

    async def place_taken(self, chat_id: str) -> bool:
        try:
            taken: bool = await self.call(self.service.place_taken, PLATFORM, chat_id)
        except StorageError as err:
            log.warning("whether thread %s holds what was started is unknown (%s): it is kept", chat_id, err)
            return True
        return taken

    async def drop_thread(self, chat_id: str) -> None:
        """Delete a thread the bot started for nothing (it needs Manage Threads; else it stays,
        empty, and Discord archives it after a week without messages)."""
        try:
            await self.with_retries("deleting a thread", lambda: self.http.delete_channel(int(chat_id)))
        except (discord.HTTPException, discord.RateLimited) as exc:
            log.info("thread %s started for nothing not deleted: %s", chat_id, describe_http_failure(exc))

    async def post_in_place(self, chat_id: str, reply: Reply) -> bool:
        """A reply posted by the bot in a thread it started; what cannot go now waits in the outbox.
        False when the thread refuses it for good (its permissions changed meanwhile): nothing of it
        went out, and the interaction is to carry it."""
        progress = Progress()
        try:
            await self.deliver(chat_id, reply, progress=progress)
        except (discord.HTTPException, discord.RateLimited) as exc:
            if self.failure_kind(exc) == PERMANENT and not progress.delivered:
                log.warning("thread %s refused the bot's post (%s); it answers the interaction",
                            chat_id, describe_http_failure(exc))
                return False
            await self.call(self.service.queue_reply, PLATFORM, chat_id, reply, describe_http_failure(exc),
                            delivered=progress.delivered)
        return True

    # -- where the bot may not post --------------------------------------------------------------

    def permission_notice(self, interaction: discord.Interaction) -> list[Reply]:
        """What the bot lacks to post in this channel on its own, said to the member (once an
        hour each) in their language; nothing where it lacks nothing."""
        missing = missing_permissions(interaction)
        if not missing:
            return []
        key = (str(interaction.channel_id), interaction.user.id)
        now = self.clock()
        if now - self.permission_notices.get(key, -PERMISSION_NOTICE_SECONDS) < PERMISSION_NOTICE_SECONDS:
            return []
        self.permission_notices[key] = now
        lang = pick_language(str(interaction.locale) if interaction.locale else None)   # theirs: it is theirs alone
        names = ", ".join(t(lang, f"discord.perm.{name}") for name in missing)
        return [Reply(t(lang, "discord.missing_permissions", permissions=names), private=True)]

    async def keep_interaction(self, interaction: discord.Interaction) -> None:
        """Note a server channel's newest interaction, here and in the database for the other
        processes (one small write an interaction: a channel's interactions all come to the one
        shard of its server, so one process writes a channel's row, in order); a database that
        fails costs only the other processes' fallback."""
        if interaction.guild_id is None:
            return
        chat_id = str(interaction.channel_id)
        live = FollowUp.of(interaction)
        self.live_interactions[chat_id] = live
        if len(self.live_interactions) >= self._prune_at:
            now = self.clock()
            self.live_interactions = {chat: kept for chat, kept in self.live_interactions.items()
                                      if now - kept.at < FOLLOW_UP_SECONDS}
            self._prune_at = max(PRUNE_LIVE_AT, 2 * len(self.live_interactions))
        try:
            await self.call(self.service.keep_follow_up, PLATFORM, chat_id, live.stored_value())
        except Exception as exc:
            log.warning("the newest interaction of channel %s was not stored for the other processes (%s)",
                        chat_id, type(exc).__name__)

    async def live_interaction(self, chat_id: str) -> FollowUp | None:
        """The channel's newest interaction while a follow-up on it can still be sent: the one this
        process got, else the one another process stored (a server channel's only)."""
        now = self.clock()
        live = self.live_interactions.get(chat_id)
        if live is not None and now - live.at >= FOLLOW_UP_SECONDS:
            del self.live_interactions[chat_id]
            live = None
        if live is None and chat_id.isdigit():
            live = FollowUp.stored(await self.call(self.service.follow_up, PLATFORM, chat_id))
            if live is not None and now - live.at >= FOLLOW_UP_SECONDS:
                live = None
        return live

    async def follow_up(self, chat_id: str, live: FollowUp, piece: Piece,
                        allowed: discord.AllowedMentions) -> discord.Message:
        """One of the bot's own messages as a public follow-up of a member's interaction (which
        is forgotten, here and in the database, if Discord no longer takes follow-ups on it)."""
        # What Interaction.followup is: the application's webhook with the interaction's token.
        webhook = discord.Webhook.from_state(data={"id": live.application_id, "type": 3, "token": live.token},
                                             state=self._connection)

        def attempt() -> Awaitable[discord.WebhookMessage]:
            kwargs: dict[str, Any] = {"files": render.files_of(piece), "allowed_mentions": allowed, "wait": True}
            view = self.view_for(piece)
            if view is not None:
                kwargs["view"] = view
            return webhook.send(render.content_of(piece), **kwargs)

        try:
            return await self.with_retries(f"following up in channel {chat_id}", attempt, webhook=True)
        except discord.HTTPException as exc:
            if interaction_gone(exc):
                if self.live_interactions.get(chat_id) == live:
                    del self.live_interactions[chat_id]
                try:
                    await self.call(self.service.drop_follow_up, PLATFORM, chat_id, live.token)
                except Exception as err:
                    log.warning("a gone interaction of channel %s stays stored (%s)", chat_id, type(err).__name__)
            raise

    # -- buttons ---------------------------------------------------------------------------------

    async def handle_click(self, interaction: discord.Interaction, action: str) -> None:
        """A button click: the service's answer edits the board or comes as a new message."""
        try:
            await self.acknowledge(interaction)
        except (discord.HTTPException, discord.RateLimited) as exc:
            log.warning("could not acknowledge a button click (%s)", describe_http_failure(exc))
            return
        responder = Responder(self, interaction, placeholder=False)
        await self.keep_interaction(interaction)
        async with self.chat_lock(str(interaction.channel_id)):
            try:
                replies = await self.call_service(self.service.handle, event_for(interaction, action=action[:64]))
                replies = replies + self.permission_notice(interaction)
                clicked = interaction.message
                # A board whispered to the one who clicked a board only they see (an ephemeral
                # one) takes that board's place, once: a new ephemeral message per click piled up.
                whispered_on = clicked is not None and clicked.flags.ephemeral
                for reply in replies:
                    if clicked is not None and reply.replaces_board and not reply.private:
                        await responder.replace(reply)
                    elif whispered_on and reply.private and is_board(reply):
                        whispered_on = False
                        await responder.replace(reply)
                    else:
                        await responder.send(reply)
            except Exception:
                log.exception("answering a button click failed")
                await responder.fail()

    async def on_interaction(self, interaction: discord.Interaction) -> None:
        """Clicks no GameButton will take (an id that is not ours, or one the message does not
        carry) still get an answer: the service says the button no longer works."""
        if interaction.type is not discord.InteractionType.component:
            return
        data: Mapping[str, object] = interaction.data or {}
        if data.get("component_type") != discord.ComponentType.button.value:
            return
        custom_id = str(data.get("custom_id", ""))
        if re.fullmatch(render.TEMPLATE, custom_id) and _carries(interaction.message, custom_id):
            return      # GameButton handles it
        action = custom_id.removeprefix(render.PREFIX) or "?"
        await self.handle_click(interaction, action)

    # -- the outbox ----------------------------------------------------------------------------------

    def failure_kind(self, exc: BaseException) -> str:
        if isinstance(exc, NotAChannel | discord.Forbidden):
            return PERMANENT
        if isinstance(exc, discord.HTTPException) and exc.code in CHANNEL_GONE_CODES:
            return PERMANENT
        return TRANSIENT

    async def send_piece(self, chat_id: str, piece: Piece, *, reply_to: str | None = None) -> str | None:
        """Posted to the channel; where the channel refuses the bot's posts (as the last
        interaction there said, or as the post is answered), a follow-up of that interaction
        while its token lives: the bot's reply move reaches the player who just moved.  The
        player to move (``piece.mentions``) is pinged, and only they are let through."""
        text, users = render.ping(piece.text, piece.mentions)
        piece = replace(piece, text=text)
        # Whom the bot's own messages may notify: the one place.
        allowed = render.only_users(users) if users else render.NO_MENTIONS
        live = await self.live_interaction(chat_id)
        if live is not None and not live.can_post:
            return str((await self.follow_up(chat_id, live, piece, allowed)).id)
        try:
            return str((await self.send_to_channel(chat_id, piece, allowed)).id)
        except discord.HTTPException as exc:
            if live is None or exc.code not in NOT_ALLOWED_CODES:
                raise
            log.warning("channel %s refused the bot's post (%s); sent as a follow-up", chat_id,
                        describe_http_failure(exc))
            return str((await self.follow_up(chat_id, live, piece, allowed)).id)

    async def channel_of(self, chat_id: str) -> Any:
        """The channel an outbox chat id names (a channel id, or a user's DMs as "dm:<user id>")."""
        if chat_id.startswith(DM_PREFIX):
            return await self.dm_channel(chat_id)
        try:
            channel_id = int(chat_id)
        except ValueError:
            raise NotAChannel(f"not a Discord channel id: {chat_id!r}") from None
        return self.get_channel(channel_id) or self.get_partial_messageable(channel_id)

    async def edit_message(self, chat_id: str, message_id: str, reply: Reply) -> bool:
        """Replace an earlier message's text and buttons (a closed challenge, the chat's record);
        one that is gone is left alone, and False says so (404 Unknown Message)."""
        message = (await self.channel_of(chat_id)).get_partial_message(int(message_id))
        try:
            await self.with_retries(f"editing message {message_id}", lambda: message.edit(
                content=render.split_text(render.escape(reply.text))[0], view=self.view_for(reply),
                allowed_mentions=render.NO_MENTIONS))
        except (discord.NotFound, discord.Forbidden) as exc:
            # Deleted, or a channel the bot may no longer see: the old message stays as it was.
            log.info("message %s in channel %s not updated: %s", message_id, chat_id, describe_http_failure(exc))
            # Only a deleted message is mended by a new post; an unseen channel would refuse that too.
            return not (isinstance(exc, discord.NotFound) and exc.code == UNKNOWN_MESSAGE)
        return True

    async def dm_channel(self, chat_id: str) -> discord.DMChannel:
        """A user's private chat with the bot ("dm:<user id>" in the outbox): their DM channel,
        opened if need be (Discord refuses messages to a user who closed their DMs: 403)."""
        user_id = chat_id.removeprefix(DM_PREFIX)
        if not user_id.isdigit():
            raise NotAChannel(f"not a Discord user id: {chat_id!r}")
        return await self.create_dm(discord.Object(id=int(user_id)))

    async def send_to_channel(self, chat_id: str, piece: Piece,
                              allowed: discord.AllowedMentions) -> discord.Message:
        """One message to a channel through the bot's REST, retried over transient failures."""
        channel = await self.channel_of(chat_id)

        def attempt() -> Awaitable[discord.Message]:
            kwargs: dict[str, Any] = {"files": render.files_of(piece), "allowed_mentions": allowed}
            view = self.view_for(piece)
            if view is not None:
                kwargs["view"] = view
            return channel.send(render.content_of(piece), **kwargs)

        return await self.with_retries(f"posting to channel {chat_id}", attempt)


# -- the commands ------------------------------------------------------------------------------------


DESCRIPTION_LIMIT = 100


def command_description(lang: str, name: str) -> str:
    """A slash command's description from its /help line ("[args] - what it does")."""
    line = t(lang, f"help.{name}")
    text = line.split(" - ", 1)[1] if " - " in line else line.lstrip("- ")
    text = text[:1].upper() + text[1:]
    return text if len(text) <= DESCRIPTION_LIMIT else text[:DESCRIPTION_LIMIT - 1] + "…"


def option_description(lang: str, command: str, arg: Arg) -> str:
    """An option's description: its own catalog line for this command, else the argument's."""
    key = f"arg.{command}.{arg.name}"
    if key not in catalog("en"):
        key = f"arg.{arg.name}"
    # An argument without a catalog line of its own is described by its name (Discord needs one).
    text = t(lang, key) if key in catalog("en") else arg.name.replace("_", " ")
    return text if len(text) <= DESCRIPTION_LIMIT else text[:DESCRIPTION_LIMIT - 1] + "…"


_KIND_CHOICES = {ArgKind.VARIANT: VARIANT_CHOICES, ArgKind.COLOR: COLOR_CHOICES, ArgKind.LANGUAGE: LANGUAGE_CHOICES}
_KIND_TYPES: dict[ArgKind, Any] = {
    ArgKind.VARIANT: str, ArgKind.COLOR: str, ArgKind.LANGUAGE: str,
    ArgKind.USER: discord.User,        # a Member in a server; in a DM Discord sends only users
    ArgKind.DURATION: app_commands.Range[str, 1, 20],
    ArgKind.GAME: GameId,
    ArgKind.MOVE: app_commands.Range[str, 1, 100],
    ArgKind.LEVEL: app_commands.Range[int, 1, 5],
    ArgKind.TEXT: app_commands.Range[str, 1, 30],
}


def slash_command(bot: DraughtsBot, spec: CommandSpec) -> app_commands.Command[Any, ..., Any]:
    """The slash command for one registry command: an option per argument (choices and ranges by
    its kind), whose values are put back into the typed command the service reads."""
    params = [inspect.Parameter("interaction", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                annotation=discord.Interaction)]
    for arg in spec.args:
        annotation = _KIND_TYPES[arg.kind]
        if arg.required:
            params.append(inspect.Parameter(arg.name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation))
        else:
            params.append(inspect.Parameter(arg.name, inspect.Parameter.KEYWORD_ONLY,
                                            annotation=annotation | None, default=None))
    async def callback(interaction: discord.Interaction, **options: Any) -> None:
        # The options become the words a user would type, read by the same parser as typed text;
        # a member is named by the handle the service knows them by.
        values = dict(options)
        mention = None
        for arg in spec.args:
            member = options.get(arg.name)
            if arg.kind is ArgKind.USER and member is not None:
                values[arg.name] = handle_of(member)
                mention = Mention(handle_of(member), member.id)
        await bot.run_command(interaction, spec.name, spec.typed(values), mention)

    callback.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    callback.__name__ = f"slash_{spec.name}"
    choices = {arg.name: _KIND_CHOICES.get(arg.kind) or [app_commands.Choice(name=c, value=c) for c in arg.choices]
               for arg in spec.args if arg.kind in _KIND_CHOICES or arg.choices}
    if choices:
        app_commands.choices(**choices)(callback)
    if spec.args:
        app_commands.describe(**{arg.name: option_description("en", spec.name, arg) for arg in spec.args})(callback)
    return app_commands.Command(name=spec.name, description=command_description("en", spec.name), callback=callback)


def build_commands(bot: DraughtsBot) -> list[app_commands.Command[Any, ..., Any]]:
    """The slash commands: one per command of the service's registry, canonical names."""
    return [slash_command(bot, spec) for spec in REGISTRY]


class CatalogTranslator(app_commands.Translator):
    """Command and option descriptions in Spanish and Italian from the same catalogs as /help, so
    Discord shows them in the user's language."""

    async def translate(self, string: app_commands.locale_str, locale: discord.Locale,
                        context: app_commands.TranslationContext) -> str | None:
        lang = pick_language(str(locale.value))
        if lang == "en":
            return None
        location = context.location
        if location is app_commands.TranslationContextLocation.command_description:
            return command_description(lang, context.data.name)
        if location is app_commands.TranslationContextLocation.parameter_description:
            parameter = context.data
            spec = REGISTRY.lookup(parameter.command.name)
            if spec is None:
                return None
            arg = next((a for a in spec.args if a.name == parameter.name), None)
            return option_description(lang, spec.name, arg) if arg else None
        return None


# -- running -----------------------------------------------------------------------------------------


def build_bot(*, service: GameService, shards: ShardConfig | None = None,
              env: Mapping[str, str] | None = None) -> DraughtsBot:
    """The bot as production runs it (tests replace only its HTTP layer); ``shards``: which
    shards this process runs (None: discord.py's automatic sharding); ``env``: where the web
    board's settings are read (None: no web board, as for ``sync``)."""
    return DraughtsBot(service, env=env, **(shards or ShardConfig()).options())


async def serve_discord(token: str, service: GameService, shards: ShardConfig | None = None,
                        env: Mapping[str, str] | None = None) -> None:
    """Run the bot in the current event loop until it is closed (to share a loop with others);
    ``env``: the settings' text (bot.config's Config.environ; None: no web board)."""
    bot = build_bot(service=service, shards=shards, env=env)
    async with bot:
        await bot.start(token)


def run_discord(token: str, service: GameService, *, sleep: Callable[[float], object] = time.sleep,
                env: Mapping[str, str] | None = None) -> int:
    """Run the bot until interrupted: the shards DISCORD_SHARD_COUNT and DISCORD_SHARD_IDS name, or
    as many as Discord asks for (bot.platforms.discord.sharding).  2 when those settings are
    unusable (one line on stderr, before connecting); 1 when Discord refuses the token, stays
    unreachable at start (retried with backoff), or the database went away.  ``env``: the
    settings' text (bot.config's Config.environ; None: every default)."""
    settings: Mapping[str, str] = {} if env is None else env
    try:
        shards = shard_config(settings)
    except ShardConfigError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if shards.count is not None:
        log.info("running Discord shards %s of %d", "all" if shards.ids is None else ",".join(map(str, shards.ids)),
                 shards.count)
    bots: list[DraughtsBot] = []

    async def serve() -> None:
        bot = build_bot(service=service, shards=shards, env=settings)
        bots.append(bot)
        async with bot:
            await bot.start(token)

    return run_until_stopped(lambda: asyncio.run(serve()), refused=discord.LoginFailure, transient=_transient_start,
                             fatal=lambda: bots[-1].fatal if bots else None, secret=token, sleep=sleep,
                             platform="Discord", variable="DISCORD_BOT_TOKEN", where="in the developer portal")


def _transient_start(err: BaseException) -> bool:
    """Discord unreachable or failing on its side (logging in, or fetching the gateway)."""
    if isinstance(err, discord.HTTPException):
        return err.status >= 500
    return isinstance(err, OSError | TimeoutError | aiohttp.ClientError | discord.GatewayNotFound)


class GlobalCommandsExist(RuntimeError):
    """A one-server sync while the commands are registered for every server: that server would
    show each command twice."""


async def sync_tree(token: str, service: GameService, guild_id: int | None = None) -> list[app_commands.AppCommand]:
    """Log in, upload the slash commands, and return.  They live in one place only, or a server
    would show each twice: globally (every server; then the copies an earlier one-server sync left
    in a server are removed), or in one server at once, for testing, as long as there are no
    global ones (else GlobalCommandsExist, and nothing is changed)."""
    bot = build_bot(service=service)
    async with bot:
        await bot.login(token)
        if guild_id is not None:
            if await bot.tree.fetch_commands():
                raise GlobalCommandsExist(f"the commands are registered for every server; a copy in server "
                                          f"{guild_id} would show each twice there")
            guild = discord.Object(id=guild_id)
            bot.tree.copy_global_to(guild=guild)
            synced = await bot.tree.sync(guild=guild)
        else:
            synced = await bot.tree.sync()
            application_id = bot.application_id
            if application_id is None:      # login fetches the application: not expected
                raise RuntimeError("logged in without an application id")
            async for server in bot.fetch_guilds(limit=None):
                if await bot.http.get_guild_commands(application_id, server.id):
                    await bot.http.bulk_upsert_guild_commands(application_id, server.id, [])
                    log.info("removed the one-server copy of the commands in guild %s", server.id)
    log.info("synced %d slash commands%s", len(synced), f" to guild {guild_id}" if guild_id else "")
    return synced


def sync_commands(token: str, service: GameService, guild_id: int | None = None) -> int:
    """``python -m bot discord sync``: register the slash commands (run at deploy time).

    ``guild_id`` (the entry point passes ``DISCORD_GUILD_ID``) syncs to that one server only
    (instant, for testing)."""
    synced: list[app_commands.AppCommand] = []
    try:
        status = run_until_stopped(lambda: synced.extend(asyncio.run(sync_tree(token, service, guild_id))),
                                   refused=discord.LoginFailure, platform="Discord", variable="DISCORD_BOT_TOKEN",
                                   where="in the developer portal")
    except GlobalCommandsExist as exc:
        print(f"not synced: {exc}; sync without DISCORD_GUILD_ID instead")
        return 1
    if status == 0:
        print(f"synced {len(synced)} slash commands" + (f" to guild {guild_id}" if guild_id else " globally"))
    return status
