"""Issue 16, items 5-15 and the es/it wording: what club players read in the chat."""

from __future__ import annotations

import pytest

from bot.i18n import t


def set_position(chat, game: int, fen: str) -> None:
    """Put a game (at ply 0) on another position, as if it had started there."""
    row = chat.game(game)
    chat.storage.update_game(game, row.version, {"fen": fen, "start_fen": fen})


# -- 5. refused king moves and backward men name their rule ---------------------------------------


def test_italian_king_two_squares_is_told_it_moves_one_square(chat):
    game = chat.new_game("ana", "bob", "italian")
    set_position(chat, game, "W:WK12,15:B1")
    before = chat.snapshot()
    answer = chat.text("ana", "/m 12-19", language="it")
    assert answer.startswith("12-19 non è una mossa legale: nella dama italiana la dama muove e prende di una "
                             "sola casella.")
    assert "non è una presa possibile" not in answer
    assert chat.snapshot() == before


def test_spanish_flying_king_through_its_own_man(chat):
    game = chat.new_game("ana", "bob", "spanish")
    set_position(chat, game, "W:WK1,10:B32")
    answer = chat.text("ana", "/m 1-19", language="es")
    assert answer.startswith("1-19 no es una jugada legal: la dama no puede saltar sus propias piezas.")
    assert "no es una captura posible" not in answer


@pytest.mark.parametrize("lang, expected", [
    ("es", "15-11 no es una jugada legal: el peón nunca retrocede."),
    ("it", "15-11 non è una mossa legale: la pedina non va mai all'indietro."),
    ("en", "15-11 is not a legal move: a man never moves backwards."),
])
def test_man_stepping_backwards_is_told_it_never_does(chat, lang, expected):
    game = chat.new_game("ana", "bob", "spanish")
    set_position(chat, game, "W:W15:B32")
    answer = chat.text("ana", "/m 15-11", language=lang)
    assert answer.startswith(expected)
    assert t(lang, "err.illegal_step", move="15-11") not in answer


# -- 6. the minus sign and the hyphen separate squares ---------------------------------------------


@pytest.mark.parametrize("typed", ["22\u221218", "22\u201018"])
def test_move_typed_with_a_minus_sign_or_hyphen_is_played(chat, typed):
    game = chat.new_game("ana", "bob", "italian")
    chat.say("ana", f"/m {typed}")
    assert [m.notation for m in chat.moves(game)] == ["22-18"]
