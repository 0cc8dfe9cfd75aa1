"""Each chat command through the real service, storage and rules."""

from __future__ import annotations

import io
import re

import pytest
from catalog_text import says, to_move
from harness import en
from PIL import Image

from bot.i18n import t, tn
from bot.rules import read_pdn
from bot.service.chat.registry import REGISTRY


def _png_size(data: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(data)) as img:
        assert img.format == "PNG"
        return img.size


# -- /help, /rules ----------------------------------------------------------------------------------


def test_help_lists_every_command(chat):
    text = chat.text("ana", "/help")
    for command in ("/new", "/accept", "/decline", "/cancel", "/move", "/m ", "/board", "/draw", "/resign",
                    "/games", "/pdn", "/rules", "/lang", "/settings", "#id"):
        assert command in text


def test_help_answers_start_too(chat):
    assert chat.text("ana", "/start") == chat.text("ana", "/help")


@pytest.mark.parametrize("word, variant", [
    ("spanish", "spanish"),
    ("italian", "italian"),
    ("triestina", "triestina"),
    ("española", "spanish"),
])
def test_rules_of_a_named_variant(chat, word, variant):
    assert en(f"rules.{variant}") in chat.text("ana", f"/rules {word}")


def test_rules_without_variant_explains_the_chat_default(chat):
    assert en("rules.italian") in chat.text("ana", "/rules")
    chat.say("ana", "/settings variant spanish", admin=True)
    assert en("rules.spanish") in chat.text("ana", "/rules")


def test_rules_of_an_unknown_variant_names_the_known_ones(chat):
    text = chat.text("ana", "/rules checkers")
    assert "checkers" in text and "spanish" in text and "italian" in text and "triestina" in text


def test_italian_rules_state_the_house_draw_rule(chat):
    text = chat.text("ana", "/rules italian")
    assert "40 moves" in text and "House rule" in text


# -- /new ---------------------------------------------------------------------------------------


def test_new_with_every_argument_stores_the_challenge(chat):
    cid = chat.challenge("ana", "triestina black @bob 2h")
    row = chat.storage.challenge(cid)
    assert (row.variant, row.color, row.target_username, row.move_seconds, row.status) == \
        ("triestina", "black", "bob", 7200, "open")
    assert row.challenger_id == "ana"


def test_new_arguments_in_any_order(chat):
    cid = chat.challenge("ana", "3d @Bob white spanish")
    row = chat.storage.challenge(cid)
    assert (row.variant, row.color, row.target_username, row.move_seconds) == \
        ("spanish", "white", "bob", 3 * 86400)


def test_new_defaults_random_colour_chat_variant_one_day(chat):
    cid = chat.challenge("ana")
    row = chat.storage.challenge(cid)
    assert (row.variant, row.color, row.target_username, row.move_seconds) == \
        ("italian", "random", None, 86400)


def test_new_reply_says_who_plays_what_and_has_an_accept_button(chat, actions_of):
    replies = chat.say("ana", "/new italian white 2h")
    text = replies[0].text
    assert en("new.open", id=1, name="Ana", variant=en("variant.italian"), colors=en("colors.white", name="Ana"),
              time=tn("en", "unit.h", 2)) in text
    assert actions_of(replies[0]) == ["acc:1"]
    assert replies[0].buttons[0][0].command == "/accept #1"


def test_new_colour_is_the_challengers(chat):
    game_id = chat.new_game("ana", "bob", "italian")
    row = chat.game(game_id)
    assert (row.white_id, row.black_id) == ("ana", "bob")
    cid = chat.challenge("carol", "black")
    chat.say("dave", f"/accept #{cid}")
    row = chat.game(chat.storage.challenge(cid).game_id)
    assert (row.white_id, row.black_id) == ("dave", "carol")


def test_new_random_colour_gives_each_player_one_side(chat):
    cid = chat.challenge("ana", "random")
    chat.say("bob", "/accept")
    row = chat.game(chat.storage.challenge(cid).game_id)
    assert {row.white_id, row.black_id} == {"ana", "bob"}


def test_new_cannot_challenge_oneself(chat):
    before = chat.snapshot()
    assert en("new.self") in chat.text("ana", "/new @ana")
    assert chat.snapshot() == before


def test_new_limits_open_challenges_per_user(chat):
    for _ in range(5):
        chat.challenge("ana")
    before = chat.snapshot()
    assert en("new.too_many", max=5) in chat.text("ana", "/new")
    assert chat.snapshot() == before


# -- /accept, /decline, /cancel -------------------------------------------------------------------


def test_accept_starts_the_game_with_a_board(chat, actions_of):
    cid = chat.challenge("ana", "italian white")
    replies = chat.say("bob", "/accept")
    reply = replies[0]
    game_id = chat.storage.challenge(cid).game_id
    assert chat.storage.challenge(cid).status == "accepted"
    assert en("game.started", id=1, variant=en("variant.italian"), white="Ana", black="Bob") in reply.text
    assert to_move("en", "Ana", "white").search(reply.text), reply.text
    assert reply.game_id == game_id
    assert _png_size(reply.image)[0] > 100
    assert reply.board_text
    row = chat.game(game_id)
    assert (row.status, row.ply, row.variant) == ("active", 0, "italian")


def test_accept_by_id(chat):
    first = chat.challenge("ana", "italian")
    second = chat.challenge("carol", "spanish")
    chat.say("bob", f"/accept #{second}")
    assert chat.storage.challenge(second).status == "accepted"
    assert chat.storage.challenge(first).status == "open"
    assert chat.game(chat.storage.challenge(second).game_id).variant == "spanish"


def test_accept_with_several_open_challenges_asks_which(chat):
    chat.challenge("ana")
    chat.challenge("carol")
    before = chat.snapshot()
    text = chat.text("bob", "/accept")
    assert en("accept.which") in text and "#1" in text and "#2" in text
    assert chat.snapshot() == before


def test_accept_with_no_open_challenge(chat):
    assert en("accept.none") in chat.text("bob", "/accept")
    assert chat.rows("games") == []


def test_accept_unknown_challenge(chat):
    assert en("challenge.unknown", id=42) in chat.text("bob", "/accept #42")


def test_decline_of_a_targeted_challenge(chat):
    cid = chat.challenge("ana", "@bob")
    text = chat.text("bob", "/decline")
    assert en("decline.done", name="Bob", id=cid, challenger="Ana") in text
    assert chat.storage.challenge(cid).status == "declined"
    assert en("challenge.closed", id=cid) in chat.text("bob", f"/accept #{cid}")
    assert chat.rows("games") == []


def test_decline_by_id(chat):
    chat.challenge("ana", "@bob")
    cid = chat.challenge("carol", "@bob")
    chat.say("bob", f"/decline #{cid}")
    assert chat.storage.challenge(cid).status == "declined"
    assert chat.storage.challenge(1).status == "open"


def test_decline_of_an_open_challenge_is_refused(chat):
    cid = chat.challenge("ana")
    assert en("decline.open", id=cid) in chat.text("bob", f"/decline #{cid}")
    assert chat.storage.challenge(cid).status == "open"


def test_decline_own_challenge_points_to_cancel(chat):
    cid = chat.challenge("ana", "@bob")
    assert f"/cancel #{cid}" in chat.text("ana", f"/decline #{cid}")
    assert chat.storage.challenge(cid).status == "open"


def test_decline_with_nothing_to_decline(chat):
    assert en("decline.none") in chat.text("bob", "/decline")


def test_cancel_withdraws_own_challenges(chat):
    first = chat.challenge("ana")
    second = chat.challenge("ana", "@bob")
    text = chat.text("ana", "/cancel")
    assert en("cancel.done_many", ids=f"#{first}, #{second}") in text
    assert {c.status for c in chat.rows("challenges")} == {"cancelled"}
    assert en("accept.none") in chat.text("bob", "/accept")
    assert chat.rows("games") == []


def test_cancel_by_id_leaves_the_others(chat):
    first = chat.challenge("ana")
    second = chat.challenge("ana")
    chat.say("ana", f"/cancel #{second}")
    assert chat.storage.challenge(first).status == "open"
    assert chat.storage.challenge(second).status == "cancelled"


def test_cancel_someone_elses_challenge_is_refused(chat):
    cid = chat.challenge("ana")
    before = chat.snapshot()
    assert en("cancel.not_yours", id=cid) in chat.text("bob", f"/cancel #{cid}")
    assert chat.snapshot() == before


def test_cancel_with_nothing_open(chat):
    assert en("cancel.none") in chat.text("ana", "/cancel")


# -- /move and /m -------------------------------------------------------------------------------


def test_move_command_plays_a_move(chat):
    game_id = chat.new_game()
    replies = chat.say("ana", "/move 22-18")
    assert en("move.played", name="Ana", move="22-18", id=1) in replies[0].text
    assert to_move("en", "Bob", "black").search(replies[0].text), replies[0].text
    row = chat.game(game_id)
    assert row.ply == 1 and row.fen.startswith("B:")
    assert [m.notation for m in chat.moves(game_id)] == ["22-18"]
    assert chat.moves(game_id)[0].by_user == "ana"


def test_move_alias_m_plays_a_move(chat):
    game_id = chat.new_game()
    chat.say("ana", "/m 22-18")
    chat.say("bob", "/m 11-15")
    assert [m.notation for m in chat.moves(game_id)] == ["22-18", "11-15"]


@pytest.mark.parametrize("typed", ["22 18", "22:18", "22–18", " 22 - 18 "])
def test_move_accepts_other_separators(chat, typed):
    game_id = chat.new_game()
    chat.say("ana", f"/m {typed}")
    assert [m.notation for m in chat.moves(game_id)] == ["22-18"]


def test_capture_short_form_is_recorded_with_its_whole_path(chat):
    game_id = chat.new_game()
    chat.play(game_id, ["24-20", "11-14", "23-19"])
    chat.say("bob", "/m 14x23")
    chat.say("ana", "/m 28x19")   # the only capture back
    assert [m.notation for m in chat.moves(game_id)][-2:] == ["14x23", "28x19"]


def test_move_reply_carries_the_new_board(chat, actions_of):
    game_id = chat.new_game()
    reply = chat.say("ana", "/m 22-18")[0]
    assert reply.game_id == game_id
    assert _png_size(reply.image)[0] > 100
    # Black to move now: its movable men are the buttons.
    pos = chat.position(game_id)
    starts = sorted({m.start for m in pos.legal_moves()})
    assert actions_of(reply) == [f"s:{game_id}:1:{sq}" for sq in starts]


# -- /board ---------------------------------------------------------------------------------------


def test_board_shows_image_text_and_the_player_to_move(chat):
    game_id = chat.new_game()
    chat.say("ana", "/m 22-18")
    reply = chat.say("carol", "/board")[0]     # a spectator may look
    assert reply.game_id == game_id
    assert to_move("en", "Bob", "black").search(reply.text), reply.text
    assert _png_size(reply.image) == _png_size(chat.say("ana", "/board")[0].image)
    assert reply.board_text and "\n" in reply.board_text


def test_board_without_any_game(chat):
    assert en("game.none") in chat.text("ana", "/board")


def test_board_of_a_finished_game_states_the_result(chat):
    game_id = chat.new_game()
    chat.resign("ana")
    reply = chat.say("ana", f"/board #{game_id}")[0]
    assert en("game.over", id=game_id) in reply.text
    assert en("result.win.resign", winner="Bob", loser="Ana") in reply.text
    assert [b.action for row in reply.buttons for b in row] == [f"rm:{game_id}"]   # only the rematch


# -- /resign --------------------------------------------------------------------------------------


def test_resign_ends_the_game_for_the_opponent(chat):
    game_id = chat.new_game()
    chat.say("ana", "/m 22-18")
    text = chat.resign("bob")
    assert en("game.over", id=1) in text and en("result.win.resign", winner="Ana", loser="Bob") in text
    row = chat.game(game_id)
    assert (row.status, row.result_score, row.result_reason, row.winner) == \
        ("finished", "1-0", "resign", "W")
    assert row.deadline_at is None


def test_resign_out_of_turn_is_allowed(chat):
    game_id = chat.new_game()
    chat.resign("bob")      # White is to move
    assert chat.game(game_id).result_score == "1-0"


def test_resign_by_a_spectator_is_refused(chat):
    chat.new_game()
    before = chat.snapshot()
    replies = chat.say("carol", "/resign")
    assert en("game.spectator") in replies[0].text
    assert chat.snapshot() == before


# -- /draw ---------------------------------------------------------------------------------------


def test_draw_offer_then_accept_by_opponent(chat, actions_of):
    game_id = chat.new_game()
    replies = chat.say("ana", "/draw")
    assert en("draw.offered", name="Ana", id=1, other="Bob") in replies[0].text
    # The button names the ply it was offered at, so an old button cannot accept a later offer.
    assert actions_of(replies[0]) == [f"dr:{game_id}:0"]
    assert chat.game(game_id).draw_offer == "W"
    text = chat.text("bob", "/draw")
    assert en("result.draw.agreement") in text
    row = chat.game(game_id)
    assert (row.status, row.result_score, row.result_reason, row.winner) == \
        ("finished", "1/2-1/2", "agreement", None)


def test_draw_accepted_with_the_button(chat):
    game_id = chat.new_game()
    chat.say("ana", "/draw")
    chat.press("bob", f"dr:{game_id}:0")
    assert chat.game(game_id).result_score == "1/2-1/2"


def test_draw_button_after_the_offer_was_declined_by_a_move_makes_no_new_offer(chat):
    game_id = chat.new_game()
    chat.say("bob", "/draw")
    chat.say("ana", "/m 22-18")
    before = chat.snapshot()
    replies = chat.press("ana", f"dr:{game_id}:0")
    assert en("draw.none") in replies[0].text and replies[0].private
    assert chat.snapshot() == before
    assert chat.game(game_id).draw_offer is None


def test_draw_button_by_the_player_who_offered_does_nothing(chat):
    game_id = chat.new_game()
    chat.say("ana", "/draw")
    before = chat.snapshot()
    assert en("draw.none") in chat.press("ana", f"dr:{game_id}:0")[0].text
    assert chat.snapshot() == before


def test_draw_offer_twice_by_the_same_player(chat):
    game_id = chat.new_game()
    chat.say("ana", "/draw")
    before = chat.snapshot()
    assert en("draw.already") in chat.text("ana", "/draw")
    assert chat.snapshot() == before
    assert chat.game(game_id).status == "active"


def test_draw_offer_declined_by_the_opponents_move(chat):
    game_id = chat.new_game()
    chat.say("ana", "/m 22-18")
    chat.say("ana", "/draw")
    text = chat.text("bob", "/m 11-15")
    assert en("draw.declined_by_move") in text
    row = chat.game(game_id)
    assert row.draw_offer is None and row.status == "active"
    # Bob's /draw is now an offer of his own, not an acceptance.
    assert en("draw.offered", name="Bob", id=game_id, other="Ana") in chat.text("bob", "/draw")
    assert chat.game(game_id).status == "active"


def test_draw_offer_stands_when_the_offerer_moves(chat):
    game_id = chat.new_game()
    chat.say("ana", "/draw")
    chat.say("ana", "/m 22-18")
    assert chat.game(game_id).draw_offer == "W"
    chat.say("bob", "/draw")
    assert chat.game(game_id).result_reason == "agreement"


def test_draw_by_a_spectator_is_refused(chat):
    chat.new_game()
    before = chat.snapshot()
    assert en("game.spectator") in chat.text("carol", "/draw")
    assert chat.snapshot() == before


# -- /games -----------------------------------------------------------------------------------------


def test_games_lists_games_and_open_challenges(chat):
    chat.new_game("ana", "bob")
    chat.challenge("carol", "spanish @dave")
    text = chat.text("eve", "/games")
    assert en("games.header") in text
    assert says(text, "en", "games.line", id=1, variant=en("variant.italian"), white="Ana", black="Bob", to_mover="Ana")
    assert en("games.challenges") in text and f"#2 Carol → @dave: {en('variant.spanish')}" in text


def test_games_when_there_is_nothing(chat):
    assert en("games.empty") in chat.text("ana", "/games")


def test_games_leaves_out_finished_games(chat):
    chat.new_game()
    chat.resign("ana")
    assert en("games.empty") in chat.text("ana", "/games")


# -- /pdn -------------------------------------------------------------------------------------------


def test_pdn_reads_back_to_the_same_moves(chat):
    game_id = chat.new_game()
    played = ["24-20", "11-14", "23-19", "14x23", "28x19", "10-14", "19x10", "6x13"]
    chat.play(game_id, played)
    reply = chat.say("ana", "/pdn")[0]
    name, data = reply.document
    assert name == f"game-{game_id}.pdn"
    assert data.decode("utf-8") == reply.text
    games = read_pdn(reply.text)
    assert len(games) == 1
    assert [str(m) for m in games[0].moves] == [m.notation for m in chat.moves(game_id)] == played
    assert games[0].tags["White"] == "Ana" and games[0].tags["Black"] == "Bob"
    assert games[0].position.fen() == chat.game(game_id).fen


def test_pdn_of_a_finished_game_has_its_result(chat):
    game_id = chat.new_game()
    chat.play(game_id, ["22-18"])
    chat.resign("ana")
    text = chat.say("ana", f"/pdn #{game_id}")[0].text
    assert '[Result "0-1"]' in text
    game = read_pdn(text)[0]
    assert [str(m) for m in game.moves] == ["22-18"]
    assert game.result.score == "0-1"


def test_pdn_of_a_spanish_game_names_its_variant(chat):
    game_id = chat.new_game(variant="spanish")
    chat.play(game_id, ["11-15", "22-18"])
    text = chat.say("ana", "/pdn")[0].text
    game = read_pdn(text, default_variant="italian")[0]
    assert game.variant.id == "spanish"
    assert [str(m) for m in game.moves] == ["11-15", "22-18"]


# -- /lang ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["es", "it"])
def test_lang_switches_the_chat_language(chat, catalog, lang):
    replies = chat.say("ana", f"/lang {lang}", admin=True)
    assert chat.storage.chat(chat.platform, chat.chat_id).language == lang
    messages = catalog(lang)
    if messages is not None:
        assert replies[0].text == messages["lang.set"]
        assert chat.text("ana", "/help") == REGISTRY.help_text(lang)
    # Whatever the catalog, the chat keeps working in its new language.
    game_id = chat.new_game()
    chat.play(game_id, ["22-18"], ref=False)


def test_lang_en_switches_back_to_english(chat):
    chat.say("ana", "/lang en", admin=True)
    assert chat.text("ana", "/lang en", admin=True) == en("lang.set")
    assert chat.storage.chat(chat.platform, chat.chat_id).language == "en"


def test_lang_with_an_unknown_language(chat):
    assert en("lang.usage") in chat.text("ana", "/lang fr", admin=True)
    assert chat.storage.chat(chat.platform, chat.chat_id).language is None


def test_lang_only_changes_its_own_chat(chat):
    chat.say("ana", "/lang en", admin=True, chat="other-chat")
    assert chat.storage.chat(chat.platform, "other-chat").language == "en"
    assert chat.storage.chat(chat.platform, chat.chat_id) is None or \
        chat.storage.chat(chat.platform, chat.chat_id).language is None


# -- /settings --------------------------------------------------------------------------------------


def test_settings_show(chat):
    text = chat.text("ana", "/settings")
    assert en("settings.show", lang=en("language.en"), variant=en("variant.italian")) in text


def test_settings_set_variant(chat):
    assert en("settings.variant_set", variant=en("variant.spanish")) in chat.text("ana", "/settings variant spanish",
                                                                                  admin=True)
    assert chat.storage.chat(chat.platform, chat.chat_id).variant == "spanish"
    assert en("rules.spanish") in chat.text("ana", "/rules")
    cid = chat.challenge("ana")
    assert chat.storage.challenge(cid).variant == "spanish"


def test_settings_set_unknown_variant(chat):
    assert en("rules.unknown", word="chess") in chat.text("ana", "/settings variant chess", admin=True)
    assert chat.storage.chat(chat.platform, chat.chat_id).variant is None


def test_settings_set_lang(chat):
    assert chat.text("ana", "/settings lang en", admin=True) == en("lang.set")
    assert chat.storage.chat(chat.platform, chat.chat_id).language == "en"


def test_settings_with_nonsense(chat):
    assert en("settings.usage") in chat.text("ana", "/settings colour pink", admin=True)


# -- localized aliases --------------------------------------------------------------------------------


def test_alias_nueva_opens_a_challenge_with_spanish_words(chat):
    replies = chat.say("ana", "/nueva española blancas 2horas")
    row = chat.rows("challenges")[-1]
    assert says(replies[0].text, "en", "new.open", id=row.id, name="Ana", variant=en("variant.spanish"))
    assert (row.variant, row.color, row.move_seconds) == ("spanish", "white", 7200)


def test_alias_nuova_opens_a_challenge_with_italian_words(chat):
    chat.say("ana", "/nuova italiana nero 3giorni")
    row = chat.rows("challenges")[-1]
    assert (row.variant, row.color, row.move_seconds) == ("italian", "black", 3 * 86400)


@pytest.mark.parametrize("accept, move, board", [("aceptar", "mover", "tablero"),
                                                 ("accetta", "muovi", "damiera")])
def test_localized_aliases_of_accept_move_board(chat, accept, move, board):
    cid = chat.challenge("ana", "italian white")
    chat.say("bob", f"/{accept} #{cid}")
    game_id = chat.storage.challenge(cid).game_id
    chat.say("ana", f"/{move} 22-18")
    assert chat.game(game_id).ply == 1
    assert chat.say("bob", f"/{board}")[0].game_id == game_id


def test_command_addressed_to_the_bot_by_name(chat):
    chat.say("ana", "/new@DraughtsBot italian")
    assert len(chat.rows("challenges")) == 1


def test_bang_prefix_works_like_slash(chat):
    game_id = chat.new_game()
    chat.say("ana", "!m 22-18")
    assert chat.game(game_id).ply == 1


def test_bare_move_from_a_player(chat):
    game_id = chat.new_game()
    chat.say("ana", "22-18")
    assert chat.game(game_id).ply == 1


def test_bare_move_from_a_spectator_is_ignored(chat):
    chat.new_game()
    before = chat.snapshot()
    assert chat.say("carol", "22-18") == []
    assert chat.snapshot() == before


@pytest.mark.parametrize("language, lang", [("es-ES", "es"), ("it_IT", "it"), ("en-GB", "en"), ("fr-FR", "en")])
def test_a_new_chat_speaks_the_users_platform_language(chat, catalog, language, lang):
    if catalog(lang) is None:
        pytest.skip(f"no {lang}.json")
    text = chat.text("ana", "/help", language=language)
    assert text == REGISTRY.help_text(lang)
    chat.say("ana", "/lang en", admin=True)
    assert chat.text("ana", "/help", language=language) == REGISTRY.help_text("en")


@pytest.mark.parametrize("lang", ["es", "it"])
def test_every_command_named_in_a_translated_help_is_understood(chat, catalog, lang):
    messages = catalog(lang)
    if messages is None:
        pytest.skip(f"no {lang}.json")
    unknown_template = messages["error.unknown_command"].split("{")[0]
    chat.say("ana", f"/lang {lang}", admin=True)
    names = sorted(set(re.findall(r"/([a-zà-ú]+)", REGISTRY.help_text(lang))))
    assert len(names) >= 14
    for name in names:
        replies = chat.say("zed", f"/{name} zz")     # an argument, so /settings does not just show
        assert not any(r.text.startswith(unknown_template) for r in replies), name


@pytest.mark.parametrize("lang", ["en", "es", "it"])
def test_the_new_usage_example_of_each_language_works(chat, catalog, lang):
    messages = catalog(lang)
    if messages is None:
        pytest.skip(f"no {lang}.json")
    example = re.search(r"/new[^\n]*", messages["new.usage"]).group(0)
    chat.say("ana", f"/lang {lang}", admin=True)
    chat.say("ana", example)
    [row] = chat.rows("challenges")
    assert (row.variant, row.color, row.target_username, row.move_seconds) == \
        ("italian", "white", "maria", 7200)


@pytest.mark.parametrize("lang", ["es", "it"])
def test_settings_examples_of_each_language_work(chat, catalog, lang):
    messages = catalog(lang)
    if messages is None:
        pytest.skip(f"no {lang}.json")
    chat.say("ana", f"/lang {lang}", admin=True)
    # As shown: the variant words are filled in from VARIANTS.
    usage = t(lang, "settings.usage")
    variant_word = re.search(r"(/\S+) (\S+) (\w+)\|", usage)
    lang_word = re.search(r"(/\S+) (\S+) es\|it\|en", usage)
    chat.say("ana", f"{variant_word.group(1)} {variant_word.group(2)} {variant_word.group(3)}", admin=True)
    assert chat.storage.chat(chat.platform, chat.chat_id).variant == "spanish"
    chat.say("ana", f"{lang_word.group(1)} {lang_word.group(2)} en", admin=True)
    assert chat.storage.chat(chat.platform, chat.chat_id).language == "en"


# -- the end of a game on the board, and who sees what ----------------------------------------------

# An italian game in which Black, to move after White's 27th ply, has no legal move left.
BLOCKED = ("23-19 10-14 19x10 6x13 21-18 12-16 25-21 8-12 28-23 11-14 18x11 7x14 21-17 3-6 17x10x3 2-6 "
           "3x10x19 12-15 19x12 4-8 22-18 9-13 18x9x2 16-20 24x15 1-5 2x9").split()


def test_game_ends_when_the_side_to_move_has_no_legal_move(chat):
    game_id = chat.new_game()
    chat.play(game_id, BLOCKED[:-1])
    reply = chat.say("ana", f"/m {BLOCKED[-1]}")[0]
    assert en("game.over", id=1) in reply.text and en("result.win.no_moves", winner="Ana", loser="Bob") in reply.text
    assert [b.action for row in reply.buttons for b in row] == [f"rm:{game_id}"]   # only the rematch
    row = chat.game(game_id)
    assert (row.status, row.result_score, row.result_reason, row.winner) == \
        ("finished", "1-0", "no_moves", "W")
    assert row.deadline_at is None
    before = chat.snapshot()
    assert en("err.game_over") in chat.text("bob", f"/m #{game_id} 8-12")
    assert chat.snapshot() == before
    assert '[Result "1-0"]' in chat.say("bob", "/pdn")[0].text


def test_board_is_seen_from_the_side_to_move(chat):
    game_id = chat.new_game()
    top = chat.say("ana", "/board")[0].board_text.splitlines()[0]
    assert "x" in top and "o" not in top                 # White to move: Black at the top
    top = chat.say("ana", "/m 22-18")[0].board_text.splitlines()[0]
    assert "o" in top and "x" not in top                 # Black to move: White at the top
    chat.resign("bob")
    top = chat.say("ana", f"/board #{game_id}")[0].board_text.splitlines()[0]
    assert "x" in top and "o" not in top                 # over: from White's side


def test_triestina_game_on_ten_by_ten(chat):
    game_id = chat.new_game(variant="triestina")
    reply = chat.say("ana", "/board")[0]
    assert len(reply.board_text.splitlines()) == 10
    assert "50" not in reply.board_text                    # square 50 holds a white man
    pos = chat.position(game_id)
    assert all(31 <= m.start <= 50 for m in pos.legal_moves())
    first = pos.legal_moves()[0]
    chat.play(game_id, [str(first)])
    assert chat.moves(game_id)[0].notation == str(first)


def test_pdn_of_a_game_without_moves(chat):
    game_id = chat.new_game()
    text = chat.say("ana", f"/pdn #{game_id}")[0].text
    game = read_pdn(text)[0]
    assert game.moves == [] and game.result is None


# -- long listings fit one message (issue 15, item 16) --------------------------------------------------

DISCORD_LIMIT = 2000


def open_many_challenges(chat, count: int) -> None:
    """``count`` open challenges in the chat, from many users (five each, the most one may have)."""
    for n in range(count):
        chat.storage.create_challenge(
            platform=chat.platform, chat_id=chat.chat_id, challenger_id=f"user{n // 5}",
            challenger_name=f"Player number {n // 5} with a rather long display name {'x' * 20}",
            target_username=None, variant="italian", color="random", move_seconds=86400, created_at=chat.now[0])


def test_games_with_thousands_of_challenges_is_one_short_message(chat):
    chat.new_game("ana", "bob")
    open_many_challenges(chat, 2000)
    replies = chat.say("eve", "/games")
    assert len(replies) == 1
    text = replies[0].text
    assert len(text) <= DISCORD_LIMIT, len(text)
    assert says(text, "en", "games.line", id=1, variant=en("variant.italian"), white="Ana", black="Bob")
    assert en("games.page", page=1, pages=134, total=2001) in text
    assert en("games.more", count=1986, next=2) in text


def test_games_pages_through_a_long_list(chat):
    open_many_challenges(chat, 40)
    second = chat.text("eve", "/games 2")
    assert says(second, "en", "games.page", page=2, pages=3) and en("games.challenges") in second
    assert en("games.header") not in second
    assert "#16 " in second and "#30 " in second and "#15 " not in second and "#31 " not in second
    last = chat.text("eve", "/partidas 3")
    assert "#40 " in last and not says(last, "en", "games.more") and not says(last, "en", "list.more")
    assert en("games.no_page", page=4, pages=3) in chat.text("eve", "/games 4")
    assert en("games.usage") in chat.text("eve", "/games next")


def test_a_short_list_has_no_pages(chat):
    chat.challenge("carol")
    text = chat.text("eve", "/games")
    assert not says(text, "en", "games.page") and not says(text, "en", "games.more")
    assert not says(text, "en", "list.more")


def test_accept_among_thousands_of_challenges_lists_a_few(chat):
    open_many_challenges(chat, 2000)
    text = chat.text("eve", "/accept")
    assert len(text) <= DISCORD_LIMIT, len(text)
    assert en("list.more", count=1985) in text


# -- a group's settings are its admins' (issue 15, item 15) -------------------------------------------


@pytest.mark.parametrize("command", ["/lang es", "/idioma it", "/settings lang es", "/settings variant spanish",
                                     "/ajustes variante triestina", "/impostazioni lingua it"])
def test_changing_a_groups_settings_is_for_its_admins(chat, command):
    chat.say("bob", "/settings")
    before = chat.storage.chat(chat.platform, chat.chat_id)
    name = command.split()[0][1:]
    assert chat.text("bob", command) == t("en", "error.admins_only", command=name)
    after = chat.storage.chat(chat.platform, chat.chat_id)
    assert (after.language, after.variant) == (before.language, before.variant)
    assert says(chat.text("bob", "/settings"), "en", "settings.show", lang=en("language.en"))


def test_an_admin_changes_a_groups_settings(chat):
    said = chat.text("bob", "/settings variant spanish", admin=True)
    assert said.startswith(en("settings.variant_set", variant=en("variant.spanish")))
    assert chat.text("bob", "/lang it", admin=True) == t("it", "lang.set")


def test_anyone_changes_their_private_chats_settings(chat):
    assert chat.text("bob", "/lang es", chat="bob-dm", kind="private") == t("es", "lang.set")
    assert "españolas" in chat.text("bob", "/settings variant spanish", chat="bob-dm", kind="private")


def test_the_read_only_forms_stay_open_to_all(chat):
    assert chat.text("bob", "/lang") == t("en", "lang.usage")
    assert chat.text("bob", "/settings colour pink") == t("en", "settings.usage")
