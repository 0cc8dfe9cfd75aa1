"""/puzzle [variant] [theme] and /puzzle themes (issue 33): a theme named in the chat's language or
in English, before or after the variant; the themes listed with their counts; an unknown theme gets
a clear message listing the themes and changes nothing.

Real parts: a SQLite file, the shipped puzzle bank, the rules, the catalogs."""

from __future__ import annotations

import pytest
from catalog_text import tr
from harness import PLATFORM, ChatHarness

from bot.puzzles import bank
from bot.service.chat.present_puzzles import theme_named, variant_and_theme
from bot.service.chat.registry import ButtonKind


def _theme(lang: str, theme: str) -> str:
    return tr(lang, f"puzzle.theme.{theme}")


def _given(chat: ChatHarness, user: str) -> dict:
    (post,) = chat.storage.personal_posts(PLATFORM, user, 1)
    puzzle = bank.by_id(post.variant, post.puzzle_id)
    assert puzzle is not None
    return puzzle


@pytest.mark.parametrize("lang", ["en", "es", "it"])
def test_every_theme_is_named_in_the_language_and_in_english(lang: str) -> None:
    for theme in bank.THEMES:
        assert theme_named(lang, _theme(lang, theme).split()) == theme
        assert theme_named(lang, _theme("en", theme).upper().split()) == theme
        assert theme_named(lang, [theme]) == theme


def test_variant_and_theme_in_either_order() -> None:
    assert variant_and_theme("es", ["damas", "españolas", "sacrificio"]) == ("spanish", "sacrifice")
    assert variant_and_theme("es", ["doble", "captura", "italiana"]) == ("italian", "double_capture")
    assert variant_and_theme("en", ["italian"]) == ("italian", None)
    assert variant_and_theme("it", ["mossa", "tranquilla"]) == (None, "quiet_move")
    assert variant_and_theme("en", ["italian", "nonsense"]) is None


def test_a_puzzle_of_a_theme(chat: ChatHarness) -> None:
    counts = bank.theme_counts("italian")
    theme = next(name for name in bank.THEMES if counts[name])
    replies = chat.say("ana", f"/puzzle italian {_theme('en', theme)}")
    assert tr("en", "themes.puzzle", theme=_theme("en", theme)) in replies[0].text
    assert theme in _given(chat, "ana")["tags"]["themes"]
    # In Spanish, the theme first and the variant after.
    chat.say("bob", "/lang es", admin=True)
    replies = chat.say("bob", f"/problema {_theme('es', theme)} italiana")
    assert tr("es", "themes.puzzle", theme=_theme("es", theme)) in replies[0].text
    assert theme in _given(chat, "bob")["tags"]["themes"]


def test_puzzle_themes_lists_the_counts(chat: ChatHarness) -> None:
    text = chat.text("ana", "/puzzle themes spanish")
    lines = text.split("\n")
    assert lines[0] == tr("en", "themes.title", variant=tr("en", "variant.spanish"))
    counts = bank.theme_counts("spanish")
    assert lines[1:] == [tr("en", "themes.line", theme=_theme("en", name), count=counts[name])
                         for name in bank.THEMES]


@pytest.mark.parametrize("words", ["/puzzle italian sacrifize", "/puzzle nonsense", "/puzzle themes chess"])
def test_an_unknown_theme_is_named_and_changes_nothing(chat: ChatHarness, words: str) -> None:
    before = chat.snapshot()
    text = chat.text("ana", words)
    if "themes" not in words:
        themes = ", ".join(_theme("en", name) for name in bank.THEMES)
        word = words.split()[-1]
        assert tr("en", "themes.unknown", word=word, themes=themes) in text
    else:
        assert text.startswith(tr("en", "rules.unknown", word="chess")[:20])
    assert chat.snapshot() == before
    assert chat.storage.personal_posts(PLATFORM, "ana", 1) == []


def test_next_puzzle_keeps_the_theme(chat: ChatHarness) -> None:
    """/puzzle <theme>, then Next puzzle (after a solve or giving up): another puzzle of that theme."""
    counts = bank.theme_counts("italian")
    # The rarest theme: a Next that dropped it would hardly land on it by chance.
    theme = min((name for name in bank.THEMES if counts[name]), key=lambda name: counts[name])
    chat.say("ana", f"/puzzle italian {_theme('en', theme)}")
    for turn in range(3):
        given = _given(chat, "ana")
        assert theme in given["tags"]["themes"]
        if turn % 2:
            done = chat.say("ana", "/m " + " ".join(given["solution"]))
        else:
            done = chat.say("ana", "/puzzle giveup")
        (nxt,) = [b.action for r in done for row in r.buttons for b in row
                  if b.action.startswith(ButtonKind.PUZZLE_NEXT.value + ":")]
        replies = chat.press("ana", nxt)
        assert tr("en", "themes.puzzle", theme=_theme("en", theme)) in replies[0].text
    assert theme in _given(chat, "ana")["tags"]["themes"]
