"""The Spanish and Italian catalogs match the English one: same keys, same placeholders."""

from __future__ import annotations

import string

import pytest

from bot.i18n import LANGUAGES, catalog

TRANSLATIONS = [lang for lang in LANGUAGES if lang != "en"]
MIN_TRANSLATED_SHARE = 0.9


def placeholders(text: str) -> set[str]:
    """The names of the {placeholders} in a message."""
    return {field for _, field, _, _ in string.Formatter().parse(text) if field is not None}


def literal_text(text: str) -> str:
    """A message without its placeholders ('{{' would come back as '{')."""
    return "".join(literal for literal, _, _, _ in string.Formatter().parse(text))


def test_all_three_languages_are_there():
    assert set(LANGUAGES) == {"es", "it", "en"}


@pytest.mark.parametrize("lang", TRANSLATIONS)
def test_same_keys_as_english(lang):
    en, other = set(catalog("en")), set(catalog(lang))
    assert other - en == set(), f"{lang} has keys English lacks"
    assert en - other == set(), f"{lang} lacks keys"


@pytest.mark.parametrize("lang", TRANSLATIONS)
def test_same_placeholders_per_key(lang):
    en = catalog("en")
    wrong = {key: (placeholders(en[key]), placeholders(text))
             for key, text in catalog(lang).items()
             if key in en and placeholders(text) != placeholders(en[key])}
    assert wrong == {}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_placeholders_are_plain_names(lang):
    for key, text in catalog(lang).items():
        for _, field, spec, conversion in string.Formatter().parse(text):
            if field is not None:
                assert field.isidentifier(), (key, field)
                assert not spec and conversion is None, (key, field)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_literal_braces(lang):
    for key, text in catalog(lang).items():
        literal = literal_text(text)
        assert "{" not in literal and "}" not in literal, key


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_message_formats_with_dummy_values(lang):
    for key, text in catalog(lang).items():
        values = {name: f"<{name}>" for name in placeholders(text)}
        formatted = text.format(**values)
        for name in values:
            assert f"<{name}>" in formatted, (key, name)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_message_is_empty(lang):
    empty = [key for key, text in catalog(lang).items() if not isinstance(text, str) or not text.strip()]
    assert empty == []


@pytest.mark.parametrize("lang", TRANSLATIONS)
def test_most_messages_are_translated(lang):
    en, other = catalog("en"), catalog(lang)
    same = [key for key in en if other.get(key) == en[key]]
    assert len(en) - len(same) >= MIN_TRANSLATED_SHARE * len(en), f"untranslated: {same}"


# The lines that list the variants get the list from bot.rules.VARIANTS; for the three variants
# they read exactly as when the list was written out in each catalog.
LISTED = {
    "en": ("Draughts in this chat: Spanish, Italian and Triestina (Italian rules on 10x10).",
           "I don't know the variant \"x\". Choose spanish, italian or triestina.",
           "Use /settings variant spanish|italian|triestina or /settings lang es|it|en.",
           "[spanish|italian|triestina] [white|black|random] "),
    "es": ("Damas en este chat: españolas, italianas y triestinas (reglas italianas en 10x10).",
           "No conozco la variante «x». Elige española, italiana o triestina.",
           "Usa /ajustes variante española|italiana|triestina o /ajustes idioma es|it|en.",
           "[española|italiana|triestina] [blancas|negras|azar] "),
    "it": ("Dama in questa chat: spagnola, italiana e triestina (regole italiane su 10x10).",
           "Non conosco la variante «x». Scegli spagnola, italiana o triestina.",
           "Usa /impostazioni variante spagnola|italiana|triestina o /impostazioni lingua es|it|en.",
           "[spagnola|italiana|triestina] [bianco|nero|casuale] "),
}


SHOW = {
    "en": "Change them with /settings variant spanish|italian|triestina or /settings lang es|it|en.",
    "es": "Cámbialos con /ajustes variante española|italiana|triestina o /ajustes idioma es|it|en.",
    "it": "Cambiale con /impostazioni variante spagnola|italiana|triestina o /impostazioni lingua es|it|en.",
}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_lines_that_list_the_variants_read_as_written_out(lang, monkeypatch):
    import bot.service  # noqa: F401  (registers the lists of variants with the catalogs)
    from bot.i18n import t
    from bot.rules import VARIANTS

    # The three variants these lines were written for, whatever else is registered.
    for extra in set(VARIANTS) - {"spanish", "italian", "triestina"}:
        monkeypatch.delitem(VARIANTS, extra)

    intro, unknown, usage, new = LISTED[lang]
    assert t(lang, "help.intro") == intro
    assert t(lang, "rules.unknown", word="x") == unknown
    assert t(lang, "settings.usage") == usage
    assert t(lang, "help.new").startswith(new)
    assert t(lang, "settings.show", lang="L", variant="V").splitlines()[1] == SHOW[lang]
