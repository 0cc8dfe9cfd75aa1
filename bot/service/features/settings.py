"""Chat settings and information: rules, language, default variant, private notices."""

from __future__ import annotations

from bot.service.features.base import Outlet, Runtime, UseCase
from bot.service.features.common import (
    Ctx,
)
from bot.service.features.games import Games, language_variant
from bot.service.features.results_stats import (
    ChatSettings,
    LanguageSet,
    NotifyOutcome,
    NotifySet,
    NotifyShown,
    RulesOf,
    SettingsOutcome,
    SettingsRequest,
    VariantSet,
)
from bot.storage import StorageUnavailable
from bot.storage.repositories import ChatSettings as ChatChange


class Settings(UseCase):
    """Chat settings and information: rules, language, default variant, private notices."""

    def __init__(self, runtime: Runtime, outlet: Outlet, games: Games) -> None:
        super().__init__(runtime, outlet)
        self.games = games

    def rules(self, ctx: Ctx, variant: str | None, lang: str) -> RulesOf:
        """The rules of a variant: the one named, else the one the player is playing here,
        else the chat's default (``lang``: the chat's language, its last guess)."""
        if variant is not None:
            return RulesOf(variant)
        try:
            return RulesOf(self._current_variant(ctx, lang))
        except StorageUnavailable:
            # The rules are no stored data: while the database is away, the language's variant.
            return RulesOf(language_variant(lang))

    def _current_variant(self, ctx: Ctx, lang: str) -> str:
        """The variant of the game the user means (the board replied to, else their latest
        game here still being played), else the chat's default."""
        row = None
        if ctx.event.reply_to:
            ref = self.storage.game_of_message(ctx.event.platform, ctx.event.chat_id, str(ctx.event.reply_to))
            row = self.storage.game(ref) if ref is not None else None
        games = self.games.my_games(ctx)
        if row is None and games:
            row = games[-1]
        return row.variant if row else self.games.default_variant(ctx, lang)

    def set_language(self, ctx: Ctx, lang: str) -> LanguageSet:
        """Set the chat's language (a code of bot.languages.LANGUAGES)."""
        self.storage.players.update_chat(*ctx.key, ChatChange(language=lang))
        return LanguageSet(lang)

    def settings(self, ctx: Ctx, request: SettingsRequest, lang: str) -> SettingsOutcome:
        """Show or change the chat's language and default variant (``lang``: the chat's language
        now, the last guess of the variant it plays)."""
        if request.lang is not None:
            return self.set_language(ctx, request.lang)
        if request.variant is not None:
            self.storage.players.update_chat(*ctx.key, ChatChange(variant=request.variant))
            return VariantSet(request.variant)
        return ChatSettings(self.games.default_variant(ctx, lang))

    def notify(self, ctx: Ctx, on: bool | None) -> NotifyOutcome:
        """/notify on|off: whether the user hears it is their turn privately (in their private chat
        with the bot) instead of a ping in the group; /notify alone (None) shows the choice."""
        ev = ctx.event
        if on is None:
            setting = self.storage.notify_setting(ev.platform, ev.user_id)
            return NotifyShown(setting is not None and setting.private)
        self.storage.set_notify(ev.platform, ev.user_id, on, ctx.now)
        # A platform where the bot may write only to users who started it (Telegram).
        link = (ev.private_link.format(payload="notify")
                if on and ev.chat_kind != "private" and ev.private_link else None)
        return NotifySet(on, link)
