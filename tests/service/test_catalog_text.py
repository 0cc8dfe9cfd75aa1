"""tests/catalog_text.py, the expected texts of the service tests: built from the catalog, so a
reworded English message changes no test, and still as strict as the words were (issue 31 item 5)."""

from __future__ import annotations

import re

from catalog_text import pattern, regex, says, to_move, tr

from bot.i18n import catalog, t


def test_a_reworded_caption_is_still_found_and_only_for_the_right_player(chat, monkeypatch):
    for form in ("one", "other"):
        monkeypatch.setitem(catalog("en"), f"game.to_move.{form}", "Now {to_name} ({color}) is to play: {left} remain.")
    chat.new_game("ana", "bob", "italian")
    text = chat.text("carol", "/board")
    assert "is to play" in text
    assert to_move("en", "Ana", "white").search(text), text
    assert not to_move("en", "Bob", "white").search(text)
    assert not to_move("en", "Ana", "black").search(text)


def test_the_values_given_are_fixed_and_the_others_are_read_back():
    said = t("en", "move.played", name="Ana", move="22-18", id=3)
    found = pattern("en", "move.played", name="Ana", id=3).search(said)
    assert found is not None and found["move"] == "22-18"
    assert not says(said, "en", "move.played", name="Bob")
    assert not says(said, "en", "move.played", id=33)
    assert not says(said, "en", "move.played", move="22-17")
    assert says(said, "en", "move.played")


def test_a_message_with_plural_forms_is_found_in_either():
    for n in (1, 5):
        left = tr("en", f"unit.m.{'one' if n == 1 else 'other'}", n=n)
        said = tr("en", f"clock.reminder.{'one' if n == 1 else 'other'}", name="Ana", left=left, id=2)
        assert says(said, "en", "clock.reminder", name="Ana", left=left, id=2)
        assert not says(said, "en", "clock.reminder", name="Ana", id=3)


def test_a_regex_built_from_a_message_reads_a_console_line():
    line = re.compile(r"^\[\d+\] bot → (\S+): " + regex("en", "bot.played", bot=regex("en", "bot.name_start",
                                                                                    level=r"\d"),
                                                        move=r"\S+", id=r"(\d+)") + "$")
    said = t("en", "bot.played", bot=t("en", "bot.name_start", level=3), move="11-15", id=7)
    found = line.match(f"[4] bot → main: {said}")
    assert found is not None and found.groups() == ("main", "7")
    assert line.match(f"[4] bot → main: {t('en', 'move.played', name='Ana', move='11-15', id=7)}") is None
