"""Message catalogs: Spanish, Italian and English, one JSON file each."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from importlib import resources

# The language codes live apart from the catalogs (use cases pick a code without any wording).
from bot.languages import DEFAULT_LANGUAGE as DEFAULT_LANGUAGE
from bot.languages import LANGUAGES as LANGUAGES
from bot.languages import pick_language as pick_language

# Article contractions a filled-in name can bring about ('Turno de el bot' -> 'Turno del bot',
# 'Tocca a il bot' -> 'Tocca al bot'): applied to messages with values only.
CONTRACTIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "es": ((" de el ", " del "), (" a el ", " al ")),
    "it": ((" a il ", " al "), (" di il ", " del "), (" da il ", " dal "), (" su il ", " sul ")),
}


# Values a message may use without its caller giving them, by placeholder name: each is a function
# of the language, called when a message has that placeholder.  The catalogs know nothing of the
# rules: the service registers here the lists of variants that help and usage lines show
# (bot/service/chat/wording.py), so a new variant appears in them without editing those lines.
STANDING_VALUES: dict[str, Callable[[str], str]] = {}


@cache
def catalog(lang: str) -> dict[str, str]:
    """The messages of one language."""
    return json.loads(resources.files(__package__).joinpath(f"{lang}.json").read_text(encoding="utf-8"))


def t(lang: str, key: str, /, **values: object) -> str:
    """A message in a language, English when the language lacks it."""
    text = catalog(lang).get(key)
    if text is None:
        text = catalog(DEFAULT_LANGUAGE)[key]
    if "{" in text:
        standing = {name: fill(lang) for name, fill in STANDING_VALUES.items()
                    if name not in values and "{" + name + "}" in text}
        if standing:
            values = {**standing, **values}
    if not values:
        return text
    text = text.format(**values)
    for old, new in CONTRACTIONS.get(lang, ()):
        text = text.replace(old, new)
    return text


def plural_form(lang: str, n: int) -> str:
    """The catalog form for a count: Spanish, Italian and English all have 'one' (exactly 1) and
    'other'.  A language with more forms adds its rule here and those keys to its catalog."""
    return "one" if n == 1 else "other"


def tn(lang: str, key: str, n: int, /, **values: object) -> str:
    """A message that depends on a count: ``key.one`` or ``key.other``, given ``n`` and ``values``."""
    return t(lang, f"{key}.{plural_form(lang, n)}", n=n, **values)
