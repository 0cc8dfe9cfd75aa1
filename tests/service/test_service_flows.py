"""Chat flows of issue 6: resigning asks first, /rules follows the game, /new refuses
contradictions, challenge housekeeping (private refusals, plural withdrawals, expiry), clocks in
the last minute, move errors that guide, a spectator's /pdn, and the es/it wording."""

from __future__ import annotations

import pytest
from catalog_text import says
from harness import en

from bot.i18n import LANGUAGES, catalog, t, tn
from bot.rules import VARIANTS, ErrorCode, IllegalMove
from bot.service.chat.commands import parse_duration, parse_new, parse_variant


def set_position(chat, game: int, fen: str) -> None:
    """Put a game (at ply 0) on another position, as if it had started there."""
    row = chat.game(game)
    chat.storage.update_game(game, row.version, {"fen": fen, "start_fen": fen})


# -- 8. /resign asks for confirmation ------------------------------------------------------------


def test_resign_asks_first_and_changes_nothing(chat, actions_of):
    game = chat.new_game()
    before = chat.snapshot()
    replies = chat.say("bob", "/resign")
    assert en("resign.confirm", name="Bob", id=1, other="Ana") in replies[0].text
    assert actions_of(replies[0]) == [f"rs:{game}:0"]
    assert replies[0].buttons[0][0].label == en("button.resign")
    after = chat.snapshot()
    # Only the question is noted (what a second /resign confirms); the game is as it was.
    asked = [key for key, _value in set(after["meta"]) - set(before["meta"])]
    assert asked == [f"pending:resign:{game}:bob"]
    after["meta"] = before["meta"]
    assert after == before
    assert chat.game(game).status == "active"


def test_a_second_resign_within_a_minute_confirms(chat, now):
    game = chat.new_game()
    chat.say("bob", "/resign")
    now[0] += 59
    assert en("result.win.resign", winner="Ana", loser="Bob") in chat.text("bob", "/resign")
    assert chat.game(game).result_reason == "resign"


def test_a_second_resign_after_a_minute_asks_again(chat, now):
    game = chat.new_game()
    chat.say("bob", "/resign")
    now[0] += 61
    assert en("resign.confirm", name="Bob", id=game, other="Ana") in chat.text("bob", "/resign")
    assert chat.game(game).status == "active"
    assert en("result.win.resign", winner="Ana", loser="Bob") in chat.text("bob", "/resign")


def test_the_resign_button_confirms(chat):
    game = chat.new_game()
    action = chat.say("bob", "/resign")[0].buttons[0][0].action
    text = "\n".join(r.text for r in chat.press("bob", action))
    assert en("result.win.resign", winner="Ana", loser="Bob") in text
    assert chat.game(game).winner == "W"


def test_the_resign_button_does_nothing_for_the_opponent(chat):
    game = chat.new_game()
    action = chat.say("bob", "/resign")[0].buttons[0][0].action
    before = chat.snapshot()
    replies = chat.press("ana", action)
    assert replies and all(r.private for r in replies)
    assert en("resign.not_asked") in replies[0].text
    assert chat.snapshot() == before and chat.game(game).status == "active"


def test_the_resign_question_lapses_when_a_move_is_played(chat):
    game = chat.new_game()
    action = chat.say("ana", "/resign")[0].buttons[0][0].action
    chat.play(game, ["22-18", "11-15"])
    replies = chat.press("ana", action)
    assert replies[0].private and chat.game(game).status == "active"
    assert en("resign.confirm", name="Ana", id=game, other="Bob") in chat.text("ana", "/resign")
    assert chat.game(game).status == "active"


def test_the_resign_question_survives_a_restart(chat, now):
    game = chat.new_game()
    chat.say("bob", "/resign")
    chat.restart()
    now[0] += 10
    assert en("result.win.resign", winner="Ana", loser="Bob") in chat.text("bob", "/resign")
    assert chat.game(game).status == "finished"


def test_the_resign_button_in_spanish_and_italian(chat, now):
    chat.say("ana", "/lang es", admin=True)
    chat.new_game()
    assert chat.say("bob", "/rendirse")[0].buttons[0][0].label == "Abandonar"
    chat.say("ana", "/lang it", admin=True)
    now[0] += 61
    assert chat.say("bob", "/abbandona")[0].buttons[0][0].label == "Abbandona"


# -- 9. /rules ----------------------------------------------------------------------------------------


def test_rules_without_variant_follow_the_players_game(chat):
    chat.say("ana", "/settings variant italian", admin=True)
    chat.new_game("ana", "bob", "spanish")          # the chat's default stays italian (its setting)
    assert en("rules.spanish") in chat.text("ana", "/rules")
    assert en("rules.italian") in chat.text("carol", "/rules")


def test_rules_follow_the_board_replied_to(chat):
    game = chat.new_game("ana", "bob", "triestina")
    chat.service.remember_board(chat.platform, chat.chat_id, "m-1", game)
    assert en("rules.triestina") in chat.text("carol", "/rules", reply_to="m-1")


SEED_POINTS = {
    "en": {
        "italian": ["stay on the board until the move ends", "cannot be jumped twice"],
        "triestina": ["must be completed", "jumped only once", "counts as a man", "No huffing", "White starts",
                      "free square right behind it"],
        "spanish": ["numbered 1-32", "square 1 is White's lower-right corner", "right to left"],
    },
    "es": {
        "italian": ["permanecen en el tablero hasta el final de la jugada", "no puede ser capturada dos veces"],
        "triestina": ["debe completarse", "se salta una sola vez", "cuenta como peón", "soplo",
                      "empiezan las blancas", "casilla libre justo detrás"],
        "spanish": ["se numeran del 1 al 32", "la 1 es la esquina inferior derecha", "de derecha a izquierda"],
    },
    "it": {
        "italian": ["restano sulla damiera fino alla fine della mossa", "non si può prendere due volte"],
        "triestina": ["va completata", "si salta una sola volta", "conta come pedina", "soffio",
                      "inizia il Bianco", "casella libera subito dietro"],
        "spanish": ["numerate da 1 a 32", "la 1 è l'angolo in basso a destra", "da destra a sinistra"],
    },
}


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("variant", VARIANTS)
def test_rules_say_what_the_seeds_say(chat, lang, variant):
    chat.say("ana", f"/lang {lang}", admin=True)
    text = chat.text("ana", f"/rules {variant}")
    for point in SEED_POINTS[lang][variant]:
        assert point in text, (lang, variant, point)


def test_rules_of_a_variant_named_in_several_words(chat):
    chat.say("ana", "/lang it", admin=True)
    assert "10x10" in chat.text("ana", "/regole dama triestina")
    assert "Dama spagnola" in chat.text("ana", "/regole Dama Spagnola")


# -- 10. /new: contradictions, names, times -------------------------------------------------------------


@pytest.mark.parametrize("args, first, second", [
    ("white black", "white", "black"),
    ("white random", "white", "random"),
    ("2h 3h", "2h", "3h"),
    ("italian spanish", "italian", "spanish"),
    ("@bob @carol", "bob", "carol"),
    ("triestina white 2h black", "white", "black"),
])
def test_new_with_contradicting_arguments_is_refused(chat, args, first, second):
    before = chat.snapshot()
    text = chat.text("ana", f"/new {args}")
    assert first in text and second in text and en("new.usage") in text
    assert not says(text, "en", "new.bad_arg")
    assert chat.snapshot() == before


def test_new_with_the_same_value_twice_is_fine(chat):
    cid = chat.challenge("ana", "white blancas 2h 120m")
    row = chat.storage.challenge(cid)
    assert (row.color, row.move_seconds) == ("white", 7200)


@pytest.mark.parametrize("command, variant", [
    ("/nuova dama italiana", "italian"),
    ("/nueva damas españolas", "spanish"),
    ("/nueva damas espanolas", "spanish"),
    ("/new Triestina draughts black", "triestina"),
    ("/nuova dama spagnola bianco 1h30m", "spanish"),
])
def test_new_understands_the_variant_names_the_bot_writes(chat, command, variant):
    before = {c.id for c in chat.rows("challenges")}
    text = chat.text("ana", command)
    new = [c for c in chat.rows("challenges") if c.id not in before]
    assert len(new) == 1, text
    assert new[0].variant == variant


def test_every_catalog_variant_name_is_understood():
    for lang in LANGUAGES:
        for variant in VARIANTS:
            name = catalog(lang)[f"variant.{variant}"]
            assert parse_variant(name.split()) == variant, (lang, name)
            assert parse_new(name.split()).variant == variant, (lang, name)


def test_a_lone_filler_word_is_not_a_variant(chat):
    assert parse_variant(["dama"]) is None
    assert en("new.bad_arg", word="dama") in chat.text("ana", "/new dama")


@pytest.mark.parametrize("word, seconds", [
    ("1h30m", 5400), ("2d12h", 216000), ("1d1h1m", 90060), ("90min", 5400), ("10080m", 7 * 86400),
])
def test_compound_times(word, seconds):
    assert parse_duration(word) == seconds


@pytest.mark.parametrize("word", ["30m1h", "1h1h", "1h30", "h30m"])
def test_times_that_are_not_times(word):
    assert parse_duration(word) is None


def test_new_with_a_compound_time(chat):
    cid = chat.challenge("ana", "1h30m")
    assert chat.storage.challenge(cid).move_seconds == 5400
    assert "1h 30m" in chat.text("ana", "/games")


@pytest.mark.parametrize("word", ["99999d", "1m", "10081m", "0m", "12345678901234567890h", "9" * 900 + "m"])
def test_new_with_an_out_of_range_time_says_the_range(chat, word):
    text = chat.text("ana", f"/new {word}")
    assert says(text, "en", "new.bad_time")
    assert not says(text, "en", "new.bad_arg")
    assert chat.rows("challenges") == []


# -- 11. challenges ----------------------------------------------------------------------------------


def test_decline_button_refusals_are_private(chat):
    targeted = chat.challenge("ana", "@bob")
    open_ = chat.challenge("ana")
    before = chat.snapshot()
    for user, action in (("carol", f"dec:{targeted}"), ("ana", f"dec:{targeted}"), ("bob", f"dec:{open_}"),
                         ("bob", "dec:99")):
        replies = chat.press(user, action)
        assert replies and all(r.private for r in replies), (user, action, [r.text for r in replies])
    assert chat.snapshot() == before


def test_typed_decline_refusals_stay_public(chat):
    cid = chat.challenge("ana", "@bob")
    replies = chat.say("carol", f"/decline #{cid}")
    assert en("accept.not_for_you", id=cid, target="bob") in replies[0].text and not replies[0].private


def test_accept_by_a_challenger_with_only_her_own_challenges_says_so(chat):
    first = chat.challenge("ana")
    second = chat.challenge("ana", "@bob")
    text = chat.text("ana", "/accept")
    assert en("accept.only_own", ids=f"#{first}, #{second}") in text
    assert en("accept.none") in chat.text("carol", "/accept", chat="elsewhere")


def test_cancel_without_number_withdraws_all_in_the_plural(chat):
    first, second = chat.challenge("ana"), chat.challenge("ana")
    assert chat.text("ana", "/cancel") == en("cancel.done_many", ids=f"#{first}, #{second}")
    third = chat.challenge("ana")
    assert chat.text("ana", "/cancel") == en("cancel.done", ids=f"#{third}")


def test_cancel_plural_in_spanish_and_italian(chat):
    chat.say("ana", "/lang es", admin=True)
    first, second = chat.challenge("ana"), chat.challenge("ana")
    assert chat.text("ana", "/cancelar") == f"Retos retirados: #{first}, #{second}."
    chat.say("ana", "/lang it", admin=True)
    first, second = chat.challenge("ana"), chat.challenge("ana")
    assert chat.text("ana", "/annulla") == f"Sfide ritirate: #{first}, #{second}."


def test_help_says_cancel_without_number_withdraws_all(chat):
    text = chat.text("ana", "/help")
    assert en("help.cancel") in text
    assert en("help.rules") in text


def test_open_challenges_expire_after_a_day(chat, now):
    cid = chat.challenge("ana", "2h")
    now[0] += 24 * 3600 - 1
    assert f"#{cid}" in chat.text("bob", "/games")
    now[0] += 2
    assert f"#{cid}" not in chat.text("bob", "/games")
    assert en("accept.none") in chat.text("bob", "/accept")
    assert en("challenge.expired", id=cid) in chat.text("bob", f"/accept #{cid}")
    replies = chat.press("bob", f"acc:{cid}")
    assert en("challenge.expired", id=cid) in replies[0].text and replies[0].private
    assert en("challenge.expired", id=cid) in chat.text("ana", f"/cancel #{cid}")
    assert chat.storage.challenge(cid).status == "expired"
    assert chat.rows("games") == []
    chat.challenge("ana")      # an expired challenge does not count against the limit of 5


@pytest.mark.parametrize("command", ["/accept #{cid}", "/decline #{cid}", "/cancel #{cid}", "button"])
def test_a_challenge_that_lapsed_unseen_is_expired_by_the_first_command_naming_it(chat, now, command):
    """Nobody listed the challenge after it lapsed: the command naming it is the first to see it."""
    cid = chat.challenge("ana", "2h")
    now[0] += 24 * 3600 + 1
    user = "ana" if command.startswith("/cancel") else "bob"
    if command == "button":
        replies = chat.press(user, f"acc:{cid}")
        assert replies[0].private
    else:
        replies = chat.say(user, command.format(cid=cid))
    assert en("challenge.expired", id=cid) in replies[0].text
    assert chat.storage.challenge(cid).status == "expired"
    assert chat.rows("games") == []


def test_a_challenge_with_a_longer_move_time_lasts_that_long(chat, now):
    cid = chat.challenge("ana", "3d")
    now[0] += 3 * 86400 - 10
    chat.say("bob", f"/accept #{cid}")
    assert chat.storage.challenge(cid).status == "accepted"


def test_accepting_one_challenge_withdraws_the_challengers_other_open_ones(chat):
    first = chat.challenge("ana", "italian")
    second = chat.challenge("ana", "spanish")
    third = chat.challenge("ana", "triestina")
    targeted = chat.challenge("ana", "@dave")
    others = chat.challenge("carol")
    text = chat.text("bob", f"/accept #{second}")
    assert en("challenge.others_withdrawn", name="Ana", ids=f"#{first}, #{third}") in text
    statuses = {c.id: c.status for c in chat.rows("challenges")}
    assert statuses == {first: "cancelled", second: "accepted", third: "cancelled", targeted: "open",
                        others: "open"}


def test_accepting_the_last_other_challenge_is_singular(chat):
    first = chat.challenge("ana")
    second = chat.challenge("ana")
    text = chat.text("bob", f"/accept #{first}")
    assert en("challenge.other_withdrawn", name="Ana", ids=f"#{second}") in text


def test_accepting_a_lone_challenge_says_nothing_about_withdrawals(chat):
    chat.challenge("ana")
    text = chat.text("bob", "/accept")
    assert not says(text, "en", "challenge.other_withdrawn") and not says(text, "en", "challenge.others_withdrawn")


# -- 12. the last minute --------------------------------------------------------------------------------


def test_reminder_with_less_than_a_minute_left_says_so(chat, now):
    chat.new_game(extra="5m")
    now[0] += 5 * 60 - 20
    sent = chat.service.tick()
    assert len(sent) == 1
    assert sent[0].reply.text == en("clock.reminder_last_minute", name="Ana", id=1)
    last_minute = en("game.to_move_last_minute", name="Ana", to_name=en("name.to_vowel", name="Ana"),
                     color=en("color.white"))
    assert last_minute in chat.text("ana", "/board")
    assert tn("en", "unit.m", 1) not in chat.text("ana", "/board")


def test_reminder_in_the_last_minute_in_italian_and_spanish(chat, now):
    chat.say("ana", "/lang it", admin=True)
    chat.new_game(extra="5m")
    now[0] += 5 * 60 - 20
    assert "Ana: ti resta meno di un minuto per muovere" in chat.service.tick()[0].reply.text
    assert "resta meno di un minuto" in chat.text("ana", "/damiera")
    chat.say("ana", "/lang es", admin=True)
    assert "queda menos de un minuto" in chat.text("ana", "/tablero")


def test_minutes_still_counted_above_a_minute(chat, now):
    chat.new_game(extra="1h")
    now[0] += 3600 - 90
    reminder = tn("en", "clock.reminder", 1, name="Ana", id=1, left=tn("en", "unit.m", 1))
    assert reminder == chat.service.tick()[0].reply.text


# -- 13. move errors that guide ---------------------------------------------------------------------


def test_a_wrong_capture_with_nothing_to_capture_lists_the_legal_moves(chat):
    game = chat.new_game()
    with pytest.raises(IllegalMove) as err:
        chat.position(game).parse_move("22x13")
    assert err.value.code == ErrorCode.ILLEGAL_CAPTURE and not err.value.moves
    text = chat.text("ana", "/m 22x13")
    assert en("err.available", moves="22-18, 22-19") in text


def test_a_mans_wrong_step_does_not_quote_the_king_rule(chat):
    chat.new_game()
    text = chat.text("ana", "/m 22-15")
    assert en("err.illegal_step", move="22-15") in text
    assert en("rule.king_short") not in text and en("rule.king_flying") not in text
    assert en("err.available", moves="22-18, 22-19") in text


def test_a_kings_wrong_step_quotes_the_king_rule(chat):
    game = chat.new_game()
    set_position(chat, game, "W:WK22:B1")
    text = chat.text("ana", "/m 22-8")
    assert en("err.illegal_step_king", move="22-8", king_rule=en("rule.king_short")) in text
    assert not says(text, "en", "err.illegal_step")


def test_losing_the_last_piece_says_no_pieces_left(chat):
    game = chat.new_game()
    set_position(chat, game, "W:W22:B18")
    text = chat.text("ana", "/m 22x13")
    assert en("result.win.no_pieces", winner="Ana", loser="Bob") in text and not says(text, "en", "result.win.no_moves")
    assert en("result.win.no_pieces", winner="Ana", loser="Bob") in chat.text("bob", "/m 9-13")


# -- 15. a spectator's /pdn -------------------------------------------------------------------------------


def test_a_spectators_pdn_after_the_game_ended_finds_the_chats_last_game(chat):
    game = chat.new_game()
    chat.play(game, ["22-18"])
    chat.resign("bob")
    replies = chat.say("carol", "/pdn")
    assert replies[0].document is not None and replies[0].document[0] == f"game-{game}.pdn"
    assert '[Result "1-0"]' in replies[0].text
    assert en("game.over", id=1) in chat.text("carol", "/board")


def test_a_players_pdn_still_finds_her_own_last_game(chat):
    mine = chat.new_game("ana", "bob")
    chat.resign("bob")
    last = chat.new_game("carol", "dave")
    chat.resign("dave")
    assert chat.say("ana", "/pdn")[0].document[0] == f"game-{mine}.pdn"
    assert chat.say("eve", "/pdn")[0].document[0] == f"game-{last}.pdn"


# -- 16. wording --------------------------------------------------------------------------------------


def test_settings_show_language_names(chat):
    chat.say("ana", "/lang es", admin=True)
    assert "idioma: español; variante por defecto: damas españolas" in chat.text("ana", "/ajustes")
    chat.say("ana", "/lang it", admin=True)
    assert "lingua: italiano; variante predefinita: dama italiana" in chat.text("ana", "/impostazioni")


def test_italian_to_move_line(chat):
    chat.say("ana", "/lang it", admin=True)
    chat.new_game()
    assert "Tocca ad Ana (Bianco); resta 1 giorno." in chat.text("ana", "/damiera")


# White to move; the king on 15 could take one piece (15x8), the man on 23 takes two (23x16x7).
QUANTITY = ("22-18 10-13 23-20 13x22 26x19 12-16 29-26 16x23 27x20 9-13 19-14 11x18 21x14 5-10 14x5 2x9 "
            "20-16 7-11 24-20 13-18 28-24 1-5 20-15 11x20 24x15 9-13 15-11 6x15 16-12 18-21 25x18x9x2 4-7 "
            "31-28 7x16 28-23 3-6 2x11x20 8-12 20-15 16-20").split()


def test_italian_explanations_as_italian_players_say_them(chat):
    chat.say("ana", "/lang it", admin=True)
    game = chat.new_game()
    chat.play(game, QUANTITY)
    text = chat.text("ana", "/m 15x8")
    assert "Devi prendere il maggior numero di pezzi: 23x16x7 ne prende 2, 15x8 solo 1" in text
    assert "Legge" not in text


@pytest.mark.parametrize("lang, key, phrase", [
    ("es", "help.move", "haz una jugada"),
    ("es", "help.board", "toca una pieza y luego la casilla de llegada"),
    ("es", "err.available", "Jugadas posibles:"),
    ("es", "result.draw.agreement", "Tablas de mutuo acuerdo"),
    ("it", "help.new", "[bianco|nero|casuale]"),
    ("it", "help.board", "e poi la casella di arrivo"),
    ("it", "err.available", "Mosse possibili:"),
    ("it", "err.king_must_capture", "A parità di pezzi la presa spetta alla dama"),
    ("it", "err.law_of_quality", "A parità di pezzi bisogna prendere il maggior numero di dame"),
    ("it", "err.king_earliest", "A parità, va giocata la presa che incontra prima la dama"),
])
def test_native_wording(lang, key, phrase):
    assert phrase in catalog(lang)[key]


@pytest.mark.parametrize("variant, lang, phrase", [
    ("spanish", "es", "25 jugadas de cada bando sin captura ni movimiento de peón"),
    ("italian", "it", "40 mosse per parte senza prese né mosse di pedina"),
    ("spanish", "en", "25 moves by each side"),
])
def test_a_no_progress_draw_says_how_many_moves(chat, variant, lang, phrase):
    from bot.rules import Position, Result
    from bot.service.chat.wording import result_text
    final = Position.start(variant)
    assert phrase in result_text(lang, Result("1/2-1/2", "no_progress", None), "Ana", "Bob", final)
    assert phrase in t(lang, f"rules.{variant}")


# -- issue 21, item 6: the confirmation minute is measured between the messages' send times --------------


def test_a_second_resign_confirms_by_send_time_in_a_throttled_group(chat, now):
    """30 players send /resign twice, 2 s apart; the group is throttled, so each message is handled
    5 s after the one before (the second of each pair minutes after the first): every game ends."""
    from dataclasses import replace

    players = [f"p{n:02d}" for n in range(30)]
    games = {p: chat.new_game(white=p, black=f"o{p}") for p in players}
    sent = now[0]
    queue = [(player, sent + n * 0.1) for n, player in enumerate(players)]
    queue += [(player, sent + 2 + n * 0.1) for n, player in enumerate(players)]
    for player, at in queue:
        now[0] += 5.0                   # handled well after it was sent
        chat.check(chat.service.handle(replace(chat.event(player, text=f"/resign #{games[player]}"), sent_at=at)))
    from bot.service.features.common import RESIGN_CONFIRM_SECONDS

    assert now[0] - sent > RESIGN_CONFIRM_SECONDS * 2        # the pairs were handled minutes apart
    ended = [p for p, g in games.items() if chat.game(g).result_reason == "resign"]
    assert len(ended) == 30


def test_two_resigns_sent_more_than_a_minute_apart_ask_again_even_if_handled_at_once(chat, now):
    from dataclasses import replace

    game = chat.new_game()
    first = replace(chat.event("bob", text="/resign"), sent_at=now[0] - 100)
    chat.check(chat.service.handle(first))
    second = replace(chat.event("bob", text="/resign"), sent_at=now[0] - 30)
    assert says("\n".join(r.text for r in chat.service.handle(second)), "en", "resign.confirm", name="Bob", id=game)
    assert chat.game(game).status == "active"
