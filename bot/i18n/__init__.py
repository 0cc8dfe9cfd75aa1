"""Message catalogs: Spanish, Italian and English, one JSON file each."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

LANGUAGES = ("es", "it", "en")
DEFAULT_LANGUAGE = "en"


@cache
def catalog(lang: str) -> dict[str, str]:
    """The messages of one language."""
    return json.loads(resources.files(__package__).joinpath(f"{lang}.json").read_text(encoding="utf-8"))


def pick_language(*candidates: str | None) -> str:
    """The first candidate we have a catalog for ('es-AR' counts as 'es'), else English."""
    for cand in candidates:
        if cand:
            code = cand.strip().lower().replace("_", "-").split("-")[0]
            if code in LANGUAGES:
                return code
    return DEFAULT_LANGUAGE


def t(lang: str, key: str, /, **values: object) -> str:
    """A message in a language, English when the language lacks it."""
    text = catalog(lang).get(key)
    if text is None:
        text = catalog(DEFAULT_LANGUAGE)[key]
    return text.format(**values) if values else text
