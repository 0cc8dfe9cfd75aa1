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


# -- 11. plain text in a private chat is greeted ---------------------------------------------------


@pytest.mark.parametrize("lang", ["es", "it", "en"])
def test_plain_text_in_private_is_greeted_with_help_play_puzzle(chat, lang):
    answer = chat.text("ana", "hola, ¿qué tal?", chat="private-ana", kind="private", language=lang)
    assert answer == t(lang, "chat.greeting")
    assert "/help" in answer and "/play" in answer and "/puzzle" in answer
    assert answer != t(lang, "help.hint")


# -- 12. aliases that collide with what people type ----------------------------------------------


def test_italian_hint_button_says_suggerimento(chat):
    assert t("it", "button.hint") == "Suggerimento"
    assert t("it", "puzzle.hint", square=17).startswith("Suggerimento: muovi il pezzo in 17.")
    from bot.service.registry import REGISTRY
    assert REGISTRY.lookup("aiuto").name == "help"
    assert REGISTRY.lookup("suggerimento").name == "hint"


@pytest.mark.parametrize("lang, text", [
    ("it", "/gioca italiana livello 1"),
    ("es", "/jugar contra la máquina"),
    ("en", "/move against the computer"),
])
def test_asking_for_the_bot_with_a_move_alias_points_to_play(chat, lang, text):
    before = chat.snapshot()
    answer = chat.text("ana", text, language=lang)
    assert answer == t(lang, "move.play_instead")
    assert "/play" in answer and "/new" not in answer
    assert chat.snapshot() == before


def test_spanish_resign_button_and_command_say_abandonar(chat):
    chat.new_game()
    replies = chat.say("bob", "/abandonar", language="es")
    assert replies[0].buttons[0][0].label == "Abandonar"
    assert "/abandonar" in replies[0].text
    from bot.service.registry import REGISTRY
    assert "/abandonar" in REGISTRY.help_text("es")


# -- 13. the level word is printed once --------------------------------------------------------


@pytest.mark.parametrize("lang, text, expected", [
    ("it", "/play livello 9", "Il livello 9 non esiste: scegli da 1 a 5."),
    ("es", "/play nivel 9", "El nivel 9 no existe: elige de 1 a 5."),
    ("en", "/play level 9", "Level 9 does not exist: choose from 1 to 5."),
])
def test_bad_level_names_the_level_once(chat, lang, text, expected):
    assert chat.text("ana", text, language=lang).startswith(expected)
    assert chat.text("ana", text, language=lang).count(t(lang, "play.bad_level", word=9, low=1, high=5)[:6]) == 1
