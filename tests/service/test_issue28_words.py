"""Issue 28, item 10: the Spanish/Italian words of the chat, through the real service.

Neutral first-solver line, the puzzle give-up button and its aliases, "takes none" rather than
"only 0", a /settings hint that works as typed, /jugar ... nivel 3 starting the game, and
durations in seconds ('30s', '4m40s') with /new still refusing a move time under 5 minutes."""

from __future__ import annotations

import re

import pytest
from harness import en
from phrases import phrase_pattern
from test_service_flows import set_position

from bot.i18n import catalog, t
from bot.service.chat.commands import MIN_MOVE_SECONDS, parse_duration
from bot.service.chat.registry import REGISTRY

LANGS = ["en", "es", "it"]


def in_lang(chat, lang: str) -> None:
    chat.say("ana", f"/lang {lang}", admin=True)


# -- "only 0" reads as none ------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("variant, fen, typed", [
    # spanish, docs/rules.md §4: with a king on 7 only 4x11 (1x10 takes a man, no king)
    ("spanish", "W:WK1,4,14:B5,K7", "1x10"),
    # italian, 3rd criterion: 30x23 takes the king, 30x21 none
    ("italian", "W:WK30:B26,K27", "30x21"),
])
def test_a_capture_taking_no_king_is_said_to_take_none(chat, lang, variant, fen, typed):
    in_lang(chat, lang)
    game = chat.new_game(variant=variant)
    set_position(chat, game, fen)
    text = chat.text("ana", f"/m {typed}")
    assert phrase_pattern(catalog(lang)["err.law_of_quality_none"]).search(text), text
    assert not re.search(r"\b0\.", text), text


# -- the first solver, neutral ----------------------------------------------------------------------


@pytest.mark.parametrize("lang, gendered", [
    ("es", r"\bprimer[ao]s? en\b|\bla primera\b|\bel primero\b"),
    ("it", r"\bprim[oa] (solutore|solutrice|a risolvere)\b"),
])
def test_the_first_solver_line_is_not_gendered(lang, gendered):
    for name in ("Ana", "Bob"):
        text = t(lang, "puzzle.first", name=name, day="2", streak="1")
        assert name in text
        assert not re.search(gendered, text, re.I), text


# -- giving up a puzzle is seeing its solution --------------------------------------------------------


def give_up_label(chat, lang: str) -> str:
    replies = chat.say("ana", "/puzzle")
    labels = [b.label for r in replies for row in r.buttons for b in row if b.action.startswith("pg:")
              or "giveup" in (b.command or "")]
    assert labels, [r.text for r in replies]
    return labels[0]


@pytest.mark.parametrize("lang, label", [("es", "Ver solución"), ("it", "Mostra soluzione")])
def test_the_give_up_button_says_it_shows_the_solution(chat, lang, label):
    in_lang(chat, lang)
    assert give_up_label(chat, lang) == label == t(lang, "button.give_up")


@pytest.mark.parametrize("lang, text", [
    ("it", "/problema rinuncia"), ("it", "/problema soluzione"), ("it", "/puzzle arrendo"),
    ("es", "/problema solución"), ("es", "/problema solucion"), ("es", "/problema rendirse"),
    ("en", "/puzzle solution"),
])
def test_give_up_words_give_the_puzzle_up(chat, lang, text):
    in_lang(chat, lang)
    chat.say("ana", "/puzzle")
    answer = chat.text("ana", text)
    assert phrase_pattern(catalog(lang)["rules.unknown"]).search(answer) is None, answer
    # The attempt is closed: nothing is left to give up.
    assert t(lang, "puzzle.none") in chat.text("ana", "/puzzle giveup")


# -- /settings tells a command that works, in the chat's language ----------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_the_settings_hint_is_a_working_command_in_the_chats_language(chat, lang):
    in_lang(chat, lang)
    hint = chat.text("ana", "/settings").splitlines()[-1]
    commands = re.findall(r"(/\S+) (\S+) (\S+)", hint)
    assert len(commands) == 2, hint
    names = {name for name, _key, _value in commands}
    assert len(names) == 1
    name = names.pop()
    assert REGISTRY.lookup(name[1:]).name == "settings"
    if lang != "en":
        assert name != "/settings", hint      # not an English word in a Spanish or Italian line
    (_, variant_key, variants), (_, lang_key, _langs) = commands
    other = [w for w in variants.split("|") if w not in t(lang, "variant.spanish").split()][0]
    answer = chat.text("ana", f"{name} {variant_key} {other}", admin=True)
    assert phrase_pattern(catalog(lang)["settings.variant_set"]).search(answer), answer
    answer = chat.text("ana", f"{name} {lang_key} {lang}", admin=True)
    assert t(lang, "lang.set") in answer


# -- /jugar damas españolas nivel 3 blancas starts the game ---------------------------------------------


def test_jugar_with_a_variant_of_two_words_and_a_level_starts_a_game_against_the_bot(chat):
    in_lang(chat, "es")
    text = chat.text("ana", "/jugar damas españolas nivel 3 blancas")
    assert t("es", "move.play_instead") not in text
    games = chat.rows("games")
    assert len(games) == 1, text
    game = games[0]
    assert game.variant == "spanish"
    assert game.white_id == "ana"


def test_gioca_with_a_variant_and_a_level_starts_a_game_against_the_bot(chat):
    in_lang(chat, "it")
    chat.say("ana", "/gioca italiana livello 1")
    games = chat.rows("games")
    assert [g.variant for g in games] == ["italian"]


def test_jugar_with_words_play_does_not_know_still_points_to_play(chat):
    in_lang(chat, "es")
    assert t("es", "move.play_instead") in chat.text("ana", "/jugar contra la máquina")
    assert chat.rows("games") == []


# -- durations in seconds ------------------------------------------------------------------------------


@pytest.mark.parametrize("word, seconds", [
    ("30s", 30), ("4m40s", 280), ("1m30s", 90), ("90s", 90), ("1h0m5s", 3605), ("45seg", 45),
    ("20secondi", 20), ("10segundos", 10), ("5sec", 5),
])
def test_durations_in_seconds(word, seconds):
    assert parse_duration(word) == seconds


@pytest.mark.parametrize("word", ["30s1m", "5s5s", "s30"])
def test_seconds_out_of_order_are_not_a_time(word):
    assert parse_duration(word) is None


@pytest.mark.parametrize("word", ["4m40s", "30s", "299s"])
def test_new_refuses_a_move_time_under_five_minutes_with_the_range(chat, word):
    assert parse_duration(word) < MIN_MOVE_SECONDS
    before = chat.snapshot()
    text = chat.text("ana", f"/new {word}")
    assert en("new.bad_time", word=word) in text
    assert chat.snapshot() == before


def test_new_accepts_five_minutes_written_in_seconds(chat):
    cid = chat.challenge("ana", "300s")
    assert chat.storage.challenge(cid).move_seconds == MIN_MOVE_SECONDS
