"""/help is one message on every platform: Telegram's 4096 UTF-16 units with the line for groups
that hold other bots, in every language (a longer one arrives in two messages, the second out of
context; the tournament rules once pushed Spanish and Italian over)."""

from __future__ import annotations

import pytest

import bot.service  # noqa: F401  (the commands are declared when the service is loaded)
from bot.i18n import LANGUAGES, t
from bot.service.chat.registry import REGISTRY

TELEGRAM_TEXT = 4096


def units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


@pytest.mark.parametrize("lang", LANGUAGES)
def test_help_is_one_telegram_message(lang: str) -> None:
    text = REGISTRY.help_text(lang) + "\n" + t(lang, "help.groups", bot="a_bot_with_a_long_username_bot")
    assert units(text) <= TELEGRAM_TEXT, units(text)
