"""Issue 32, the reviewer's defects in the tournaments (TFIX2), each with the test that failed before
its fix: on the real service (SQLite file, rules, Pillow), texts checked by their catalog keys."""

from __future__ import annotations

import random

import pytest
from catalog_text import pattern, says

from bot.i18n import t
from bot.service.chat.commands import BadArgument
from bot.service.chat.tournaments import parse_new_tournament

PLAYERS = ["ana", "bob", "carla", "dario"]


def _new(chat, words: str = "swiss spanish 3 1h") -> int:
    replies = chat.say("admin", f"/tournament new {words}", admin=True)
    found = pattern("en", "tournament.created").search(replies[0].text)
    assert found is not None, replies[0].text
    return int(found["id"])


# -- 1. the admin check reads a subcommand as the handler does --------------------------------------------


@pytest.mark.parametrize("words", ["nuévo swiss 3", "NEW swiss 3", "Nuevo swiss 3", "CRÉA swiss 3", "nuóvo swiss 3"])
def test_an_accented_or_capitalised_new_is_for_admins_too(chat, words):
    before = chat.snapshot()
    assert says(chat.text("ana", f"/tournament {words}"), "en", "error.admins_only", command="tournament")
    assert chat.snapshot() == before


@pytest.mark.parametrize("word", ["stárt", "STÁRT", "Start", "inízia", "ÍNICIAR", "avvìa"])
def test_an_accented_or_capitalised_start_is_for_admins_too(chat, word):
    _new(chat)
    for p in PLAYERS:
        chat.say(p, "/tournament join")
    chat.service.tick()
    before = chat.snapshot()
    assert says(chat.text("ana", f"/tournament {word}"), "en", "error.admins_only", command="tournament")
    assert chat.snapshot() == before


# -- 2. two deadlines, and no word crashes the reader ---------------------------------------------------


def test_two_deadlines_are_refused_in_words(chat):
    before = chat.snapshot()
    text = chat.text("admin", "/tournament new swiss 5 deadline 3d plazo 4d", admin=True)
    assert says(text, "en", "tournament.two_deadlines", first="3d", second="4d")
    assert chat.snapshot() == before


WORDS = ["swiss", "suizo", "roundrobin", "liga", "girone", "spanish", "italiana", "damas", "españolas", "double",
         "doble", "deadline", "plazo", "scadenza", "ronda", "turno", "round", "3", "0", "51", "5", "1h", "2h", "3d",
         "90d", "1m", "30s", "x", "#", "½", "1/2", "bye½", "halfbye", "mediobye", "mezzobye", "bye", "-", "ÉLITE",
         "deadline", "7d", "99999999", "1h30m", ""]


@pytest.mark.parametrize("lang", ["en", "es", "it"])
def test_any_words_are_read_or_refused_in_words(lang):
    rng = random.Random(32)
    for _ in range(3000):
        words = [rng.choice(WORDS) if rng.random() < 0.8 else str(rng.randint(-5, 10**6))
                 for _ in range(rng.randint(0, 8))]
        try:
            parse_new_tournament(words)
        except BadArgument as err:
            text = t(lang, err.key, **err.values)
            assert text and "{" not in text, (words, err.key)


def test_any_words_through_the_chat_change_nothing_but_a_tournament(chat):
    rng = random.Random(7)
    for _ in range(60):
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6)))
        replies = chat.say("admin", f"/tournament new {words}", admin=True)
        assert replies and all("{" not in r.text for r in replies), words
