"""Issue 28, items 7 and 8 through the chat: a capture typed on past the crowning square and a
flying king over two pieces in a row are refused with their own rule, in es/it/en."""

from __future__ import annotations

import pytest
from phrases import phrase_pattern
from test_service_flows import set_position

from bot.i18n import catalog

CROWNING = [
    ("spanish", "W:W6,10,15,20,22,26:B9,18,19,K27,K28", "22x31x24"),
    ("triestina", "W:W15,38,43:B8,9,K26", "15x4x13"),
    ("italian", "W:W11:BK5,6", "11x2x9"),
]


@pytest.mark.parametrize("lang", ["en", "es", "it"])
@pytest.mark.parametrize("variant, fen, typed", CROWNING)
def test_capture_past_the_crowning_square_names_the_crowning(chat, lang, variant, fen, typed):
    chat.say("ana", f"/lang {lang}", admin=True)
    game = chat.new_game(variant=variant)
    set_position(chat, game, fen)
    before = chat.snapshot()
    text = chat.text("ana", f"/m {typed}")
    texts = catalog(lang)
    assert phrase_pattern(texts["err.crowned_stops"]).search(text), text
    assert phrase_pattern(texts["err.man_cannot_take_king"]).search(text) is None
    assert phrase_pattern(texts["err.illegal_capture"]).search(text) is None
    assert chat.snapshot() == before


@pytest.mark.parametrize("lang", ["en", "es", "it"])
def test_flying_king_over_two_pieces_in_a_row_names_the_rule(chat, lang):
    chat.say("ana", f"/lang {lang}", admin=True)
    game = chat.new_game(variant="spanish")
    set_position(chat, game, "W:WK1:B10,14,29")
    text = chat.text("ana", "/m 1x19")
    assert phrase_pattern(catalog(lang)["err.two_in_a_row"]).search(text), text
