"""Chat settings and information: rules, language, default variant, private notices."""

from __future__ import annotations

from bot.i18n import LANGUAGES, t
from bot.service.commands import (
    fold,
    parse_variant,
)
from bot.service.events import Reply
from bot.service.features.base import Outlet, Runtime, UseCase
from bot.service.features.common import (
    Ctx,
)
from bot.service.features.games import Games
from bot.service.registry import (
    DAILY_OFF_WORDS,
    DAILY_ON_WORDS,
    SETTINGS_LANG_WORDS,
    SETTINGS_VARIANT_WORDS,
)
from bot.service.wording import variant_name

# Names people give a language besides those the catalogs use ("language.es" in es, it, en).
_EXTRA_LANGUAGE_NAMES = {"castellano": "es", "espanol": "es", "english": "en", "eng": "en", "ita": "it", "esp": "es"}


def language_code(word: str) -> str | None:
    """The language a word names: 'es', 'Español', 'spagnolo', 'English', 'italiano'... or None."""
    folded = fold(word.strip())
    if folded in LANGUAGES:
        return folded
    names = dict(_EXTRA_LANGUAGE_NAMES)
    for shown_in in LANGUAGES:
        for code in LANGUAGES:
            names[fold(t(shown_in, f"language.{code}"))] = code
    return names.get(folded)


class Settings(UseCase):
    """Chat settings and information: rules, language, default variant, private notices."""

    def __init__(self, runtime: Runtime, outlet: Outlet, games: Games) -> None:
        super().__init__(runtime, outlet)
        self.games = games

    def cmd_rules(self, ctx: Ctx, args: list[str]) -> list[Reply]:
        """The rules of a variant: the one named, else the one the player is playing here,
        else the chat's default."""
        if args:
            variant = parse_variant(args)
            if variant is None:
                return [Reply(t(ctx.lang, "rules.unknown", word=" ".join(args)[:30]))]
        else:
            variant = self._current_variant(ctx)
        return [Reply(t(ctx.lang, f"rules.{variant}"))]

    def _current_variant(self, ctx: Ctx) -> str:
        """The variant of the game the user means (the board replied to, else their latest
        game here still being played), else the chat's default."""
        row = None
        if ctx.event.reply_to:
            ref = self.storage.game_of_message(ctx.event.platform, ctx.event.chat_id, str(ctx.event.reply_to))
            row = self.storage.game(ref) if ref is not None else None
        games = self.games.my_games(ctx)
        if row is None and games:
            row = games[-1]
        return row.variant if row else self.games.default_variant(ctx)

    def cmd_lang(self, ctx: Ctx, args: list[str]) -> list[Reply]:
        """Set the chat's language: its code or its name in any of our languages (/lang español)."""
        lang = language_code(args[0]) if len(args) == 1 else None
        if lang is None:
            return [Reply(t(ctx.lang, "lang.usage"))]
        self.storage.set_chat(*ctx.key, language=lang)
        return [Reply(t(lang, "lang.set"))]

    def cmd_settings(self, ctx: Ctx, args: list[str]) -> list[Reply]:
        """Show or change the chat's language and default variant."""
        if not args:
            return [Reply(t(ctx.lang, "settings.show", lang=t(ctx.lang, f"language.{ctx.lang}"),
                            variant=variant_name(ctx.lang, self.games.default_variant(ctx))))]
        if len(args) >= 2 and args[0].lower() in SETTINGS_VARIANT_WORDS:
            variant = parse_variant(args[1:])
            if variant is None:
                return [Reply(t(ctx.lang, "rules.unknown", word=" ".join(args[1:])[:30]))]
            self.storage.set_chat(*ctx.key, variant=variant)
            return [Reply(t(ctx.lang, "settings.variant_set", variant=variant_name(ctx.lang, variant)))]
        if len(args) == 2 and args[0].lower() in SETTINGS_LANG_WORDS:
            return self.cmd_lang(ctx, args[1:])
        return [Reply(t(ctx.lang, "settings.usage"))]

    def cmd_notify(self, ctx: Ctx, args: list[str]) -> list[Reply]:
        """/notify on|off: whether the user hears it is their turn privately (in their private chat
        with the bot) instead of a ping in the group; /notify alone shows the choice."""
        ev = ctx.event
        if not args:
            setting = self.storage.notify_setting(ev.platform, ev.user_id)
            key = "notify.show_private" if setting is not None and setting.private else "notify.show_group"
            return [Reply(t(ctx.lang, key), private=True)]
        word = args[0].lower()
        if len(args) != 1 or word not in DAILY_ON_WORDS + DAILY_OFF_WORDS:
            return [Reply(t(ctx.lang, "notify.usage"), private=True)]
        on = word in DAILY_ON_WORDS
        self.storage.set_notify(ev.platform, ev.user_id, on, ctx.now)
        if not on:
            return [Reply(t(ctx.lang, "notify.off"), private=True)]
        text = t(ctx.lang, "notify.on")
        if ev.chat_kind != "private" and ev.private_link:
            # A platform where the bot may write only to users who started it (Telegram).
            text += "\n" + t(ctx.lang, "notify.start_me", link=ev.private_link.format(payload="notify"))
        return [Reply(text, private=True)]

