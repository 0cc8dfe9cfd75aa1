"""The languages the bot speaks, as codes: which one a chat, a player or a locale means.  No
catalog here (that is ``bot.i18n``): use cases pick the language a notification is to be worded
in without knowing any wording."""

from __future__ import annotations

LANGUAGES = ("es", "it", "en")
DEFAULT_LANGUAGE = "en"


def pick_language(*candidates: str | None) -> str:
    """The first candidate we have a catalog for ('es-AR' counts as 'es'), else English."""
    for cand in candidates:
        if cand:
            code = cand.strip().lower().replace("_", "-").split("-")[0]
            if code in LANGUAGES:
                return code
    return DEFAULT_LANGUAGE
