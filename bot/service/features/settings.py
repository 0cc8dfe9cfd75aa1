"""Chat settings and information: rules, language, default variant, private notices."""

from __future__ import annotations

from bot.service.features.base import Outlet, Runtime, UseCase
from bot.service.features.games import Games, language_variant
from bot.service.features.identity import Caller
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

    def rules(self, caller: Caller, variant: str | None, lang: str, game: int | None = None) -> RulesOf:
        """The rules of a variant: the one named, else that of game #``game`` (the board the
        message replied to), else of the one the player is playing here, else the chat's default
        (``lang``: the chat's language, its last guess)."""
        if variant is not None:
            return RulesOf(variant)
        try:
            return RulesOf(self._current_variant(caller, lang, game))
        except StorageUnavailable:
            # The rules are no stored data: while the database is away, the language's variant.
            return RulesOf(language_variant(lang))

    def _current_variant(self, caller: Caller, lang: str, game: int | None) -> str:
        """The variant of the game the user means (#``game``, else their latest game here still
        being played), else the chat's default."""
        row = self.storage.games.get(game) if game is not None else None
        games = self.games.my_games(caller)
        if row is None and games:
            row = games[-1]
        return row.variant if row else self.games.default_variant(caller, lang)

    def set_language(self, caller: Caller, lang: str) -> LanguageSet:
        """Set the chat's language (a code of bot.languages.LANGUAGES)."""
        self.storage.players.update_chat(*caller.key, ChatChange(language=lang))
        return LanguageSet(lang)

    def settings(self, caller: Caller, request: SettingsRequest, lang: str) -> SettingsOutcome:
        """Show or change the chat's language and default variant (``lang``: the chat's language
        now, the last guess of the variant it plays)."""
        if request.lang is not None:
            return self.set_language(caller, request.lang)
        if request.variant is not None:
            self.storage.players.update_chat(*caller.key, ChatChange(variant=request.variant))
            return VariantSet(request.variant)
        return ChatSettings(self.games.default_variant(caller, lang))

    def notify(self, caller: Caller, on: bool | None) -> NotifyOutcome:
        """/notify on|off: whether the user hears it is their turn privately (in their private chat
        with the bot) instead of a ping in the group; /notify alone (None) shows the choice.  Where
        the user must start the bot first is the chat layer's to say (``NotifySet.start_link``)."""
        ev = caller
        if on is None:
            setting = self.storage.players.notify_setting(ev.platform, ev.user_id)
            return NotifyShown(setting is not None and setting.private)
        self.storage.players.set_notify(ev.platform, ev.user_id, on, caller.at)
        return NotifySet(on)
