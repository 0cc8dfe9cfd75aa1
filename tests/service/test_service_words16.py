"""Issue 16, items 5-15 and the es/it wording: what club players read in the chat."""

from __future__ import annotations

import pytest

from bot.i18n import t, tn


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
    ("en", t("en", "err.man_backward", move="15-11")),      # English: the message, however worded
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
    from bot.service.chat.registry import REGISTRY
    assert REGISTRY.lookup("aiuto").name == "help"
    assert REGISTRY.lookup("suggerimento").name == "hint"


# "/gioca italiana livello 1" now starts the game (issue 28, item 10: tests/service/test_issue28_words.py).
@pytest.mark.parametrize("lang, text", [
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
    from bot.service.chat.registry import REGISTRY
    assert "/abandonar" in REGISTRY.help_text("es")


# -- 13. the level word is printed once --------------------------------------------------------


@pytest.mark.parametrize("lang, text, expected", [
    ("it", "/play livello 9", "Il livello 9 non esiste: scegli da 1 a 5."),
    ("es", "/play nivel 9", "El nivel 9 no existe: elige de 1 a 5."),
    ("en", "/play level 9", t("en", "play.bad_level", word=9, low=1, high=5)),
])
def test_bad_level_names_the_level_once(chat, lang, text, expected):
    assert chat.text("ana", text, language=lang).startswith(expected)
    assert chat.text("ana", text, language=lang).count(t(lang, "play.bad_level", word=9, low=1, high=5)[:6]) == 1


# -- 7. /stats: solved /puzzle, plural forms, unrated pools ---------------------------------------


def solve_personal_puzzle(chat, user: str, variant: str = "italian") -> None:
    from bot.puzzles import bank

    reply = chat.say(user, f"/puzzle {variant}")[0]
    post = chat.storage.puzzle_post(reply.post_id)
    p = next(p for p in bank.load(post.variant) if p["id"] == post.puzzle_id)
    for mine in p["solution"][::2]:
        chat.say(user, f"/m {mine}")
    assert chat.storage.attempt(post.id, user).solved_at is not None


@pytest.mark.parametrize("lang, expected", [
    ("en", "— 1 solved,"), ("es", "— 1 resuelto,"), ("it", "— 1 risolto,"),
])
def test_stats_counts_a_solved_personal_puzzle_in_the_singular(chat, lang, expected):
    solve_personal_puzzle(chat, "ana")
    assert expected in chat.text("ana", "/stats", language=lang)


@pytest.mark.parametrize("lang, expected", [
    ("en", "1 game: 1 won, 0 drawn, 0 lost"),
    ("es", "1 partida: 1 ganada, 0 tablas, 0 perdidas"),
    ("it", "1 partita: 1 vinta, 0 patte, 0 perse"),
])
def test_stats_use_each_languages_plural_forms(chat, lang, expected):
    game = chat.new_game("ana", "bob", "italian")
    chat.play(game, ["22-18", "10-14"])
    chat.resign("bob")
    assert chat.game(game).status == "finished"
    assert expected in chat.text("ana", "/stats", language=lang)


def test_h2h_line_in_italian_uses_singular_forms(chat):
    game = chat.new_game("luca", "bob", "italian")
    chat.play(game, ["22-18", "10-14"])
    chat.resign("bob")
    assert "Luca: 1 vinta, 0 patte, 0 perse" in chat.text("luca", "/stats @luca @bob", language="it")


def test_an_unrated_pool_shows_no_dash_for_a_rating(chat):
    game = chat.new_game("ana", "bob", "italian")
    chat.resign("bob")                       # over at ply 0: not rated
    assert chat.game(game).status == "finished"
    italian = t("en", "variant.italian")
    line = next(x for x in chat.text("ana", "/stats").splitlines() if italian in x)
    assert "- —" not in line
    assert line == t("en", "stats.line_unrated", pool=italian, rating="-", deviation="",
                     games=tn("en", "stats.games", 1), wins=tn("en", "stats.wins", 1),
                     draws=tn("en", "stats.draws", 0), losses=tn("en", "stats.losses", 0))


def test_plural_forms_of_every_counted_key_exist_in_every_language():
    from bot.i18n import LANGUAGES, catalog, tn
    for lang in LANGUAGES:
        for key in ("stats.games", "stats.wins", "stats.draws", "stats.losses", "stats.solved", "unit.d"):
            assert f"{key}.one" in catalog(lang) and f"{key}.other" in catalog(lang)
        assert tn(lang, "stats.games", 1) != tn(lang, "stats.games", 2).replace("2", "1")


# -- wording (es, it, en) --------------------------------------------------------------------------


def test_spanish_turn_line_and_time_per_move(chat, now):
    cid = chat.challenge("ana", "spanish white 2h")
    chat.say("bob", f"/accept #{cid}")
    assert "Turno de Ana (blancas); le quedan 2 h." in chat.text("ana", "/tablero", language="es")
    now[0] += 3600
    assert "Turno de Ana (blancas); le queda 1 h." in chat.text("ana", "/tablero", language="es")


@pytest.mark.parametrize("lang, args, expected", [
    ("es", "spanish", "1 día por jugada"),
    ("it", "italian", "1 giorno per mossa"),
    ("es", "spanish 3d", "3 días por jugada"),
])
def test_time_per_move_in_words(chat, lang, args, expected):
    assert expected in chat.text("cid", f"/new {args}", language=lang)


def test_italian_turn_line_singular_and_plural(chat, now):
    chat.new_game("ana", "bob", "italian")
    assert "Tocca ad Ana (Bianco); resta 1 giorno." in chat.text("ana", "/damiera", language="it")
    cid = chat.challenge("luca", "italian white 3h")
    chat.say("eve", f"/accept #{cid}")
    game = chat.storage.challenge(cid).game_id
    assert "Tocca a Luca (Bianco); restano 3 h." in chat.text("luca", f"/damiera #{game}", language="it")
    now[0] += 2 * 3600
    assert "Tocca a Luca (Bianco); resta 1 h." in chat.text("luca", f"/damiera #{game}", language="it")


def test_spanish_piece_not_yours(chat):
    chat.new_game("ana", "bob", "spanish")
    assert chat.text("ana", "/m 21-17", language="es").startswith("La pieza de la casilla 21 no es tuya.")


def test_dates_in_words():
    import datetime as dt

    from bot.service.chat.wording import day_words
    monday = dt.date(2026, 3, 2)
    assert day_words("es", monday, weekday=True) == "lunes 2 de marzo"
    assert day_words("it", monday, weekday=True) == "lunedì 2 marzo"
    assert day_words("en", monday, weekday=True) == "Monday, March 2"
    assert t("es", "puzzle.first", name="Carla", day=day_words("es", monday), streak="1 día").startswith(
        "🏆 Problema del 2 de marzo resuelto primero por Carla.")
    assert t("it", "puzzle.first", name="Carla", day=day_words("it", monday), streak="1 giorno").startswith(
        "🏆 Prima soluzione del problema del 2 marzo: Carla!")


def test_solver_ordinals():
    from bot.service.chat.wording import ordinal
    assert t("es", "puzzle.solved", ordinal=ordinal("es", 4), streak="1 día").startswith(
        "¡Resuelto! Eres el 4.º en resolverlo hoy.")
    assert t("it", "puzzle.solved", ordinal=ordinal("it", 4), streak="1 giorno").startswith(
        "Risolto! Sei il quarto a risolverlo oggi.")
    assert ordinal("it", 12) == "12º"


def test_puzzle_texts_as_club_players_say_them():
    assert "Contesta con /m y tu jugada (o la línea entera), o responde a este mensaje con la jugada, o toca una " \
           "pieza y luego su casilla." in t("es", "daily.post", day="x", variant="y", side="z")
    assert "Scrivi /m e la tua mossa (o tutta la linea), oppure rispondi a questo messaggio, oppure tocca" in t(
        "it", "daily.post", day="x", variant="y", side="z")
    assert "Find the winning shot!" in t("en", "daily.post", day="x", variant="y", side="z")
    assert "golpe" not in t("en", "daily.post", day="x", variant="y", side="z")
    assert t("es", "puzzle.over", day="1 de marzo").endswith("El de hoy es el último publicado.")
    assert t("es", "puzzle.right", side=t("es", "puzzle.replier.B"), reply="31x22").startswith(
        "¡Bien! Las negras responden 31x22.")
    assert "forzada" not in t("es", "puzzle.right", side="x", reply="y")
    assert t("it", "puzzle.right", side=t("it", "puzzle.replier.W"), reply="48-43") == (
        "Giusto! Il Bianco risponde 48-43. Tocca a te.")


def test_italian_colours_capitalised_and_rules_wording():
    assert t("it", "colors.white", name="Ana") == "Ana gioca col Bianco"
    assert t("it", "colors.black", name="Ana") == "Ana gioca col Nero"
    assert t("it", "err.law_of_quality", best="a", best_kings=1, attempted="b", kings=0).startswith(
        "A parità di pezzi bisogna prendere il maggior numero di dame")
    assert t("it", "err.king_earliest", best="a", attempted="b").startswith(
        "A parità, va giocata la presa che incontra prima la dama")
    assert "30m, 2 ore, 3 giorni" in t("it", "arg.move_time")


def test_a_cut_move_list_does_not_end_in_comma_ellipsis_full_stop():
    from bot.rules import Position
    from bot.service.chat.wording import move_list
    moves = Position.start("triestina").legal_moves()
    assert len(moves) > 8
    text = t("it", "err.available", moves=move_list(moves, "it"))
    assert ", …." not in text and "…" not in text
    assert text.endswith(f"e altre {len(moves) - 8}.")


# -- 10. the bot's name is rendered per language at display time -----------------------------------


@pytest.fixture
def bot_chat(chat):
    from concurrent.futures import ThreadPoolExecutor

    from bot.service.thinking import Thinker
    executor = ThreadPoolExecutor(1)
    chat.use_thinker(Thinker(executor, workers=1), bot_seconds=0.05)
    yield chat
    executor.shutdown(wait=True, cancel_futures=True)


def test_a_bot_game_made_in_italian_reads_in_spanish(bot_chat):
    chat = bot_chat
    chat.say("ana", "/play italian level 2 black", language="it")
    game = chat.rows("games")[-1].id
    assert chat.game(game).white_name == "Bot (level 2)"          # stored neutral
    chat.service.settle(10)
    chat.service.tick()
    listing = chat.text("ana", "/games", language="es")
    assert "el bot (nivel 2)" in listing and "livello" not in listing


def test_result_line_names_the_bot_in_the_chats_language(bot_chat):
    chat = bot_chat
    chat.say("ana", "/play italian level 2 black", language="it")
    game = chat.rows("games")[-1].id
    chat.service.settle(10)
    chat.service.tick()
    chat.say("ana", "/abandonar", language="es")
    answer = chat.text("ana", "/abandonar", language="es")
    assert "Gana el bot (nivel 2): Ana abandonó." in answer
    assert chat.game(game).status == "finished"
    pdn = chat.say("ana", f"/pdn #{game}", language="es")[0]
    body = pdn.document[1].decode() if isinstance(pdn.document[1], bytes) else pdn.document[1]
    assert '[White "Bot (level 2)"]' in body and "nivel" not in body and "livello" not in body


def test_italian_to_move_and_thinking_lines_with_the_bot(bot_chat):
    chat = bot_chat
    text = chat.text("ana", "/play italian level 1 white", language="it")
    assert "Tocca ad Ana (Bianco)" in text
    chat.say("ana", "/m 22-18", language="it")
    chat.service.settle(10)
    said = [o.reply.text for o in chat.service.tick()]
    assert any(s.startswith("Il bot (livello 1) ha giocato") for s in said), said


# -- 13. /accept, /lang names, /daily times and zones, expired challenges ----------------------------


def test_accept_by_the_named_player_takes_the_challenge_addressed_to_her(chat):
    chat.challenge("bob", "italian")
    named = chat.challenge("cid", "spanish @ana")
    chat.challenge("dan", "triestina")
    replies = chat.say("ana", "/accept")
    game = chat.storage.challenge(named).game_id
    assert game is not None and replies[0].game_id == game
    assert chat.game(game).variant == "spanish"


def test_accept_with_several_open_and_none_named_still_asks(chat):
    chat.challenge("bob", "italian")
    chat.challenge("dan", "triestina")
    assert chat.text("ana", "/accept").startswith(t("en", "accept.which"))


@pytest.mark.parametrize("text, lang", [
    ("/lang español", "es"), ("/lingua italiano", "it"), ("/lang english", "en"), ("/idioma Inglés", "en"),
    ("/lang spagnolo", "es"),
])
def test_lang_accepts_language_names(chat, text, lang):
    answer = chat.text("ana", text, admin=True)
    assert answer == t(lang, "lang.set")
    assert chat.storage.chat("test", "group-1").language == lang


def test_lang_refuses_an_unknown_language_and_changes_nothing(chat):
    assert chat.text("ana", "/lang klingon", admin=True) == t("en", "lang.usage")
    chat_row = chat.storage.chat("test", "group-1")
    assert chat_row is None or chat_row.language is None


def test_daily_with_a_city_suggests_the_zone_and_changes_nothing(chat):
    answer = chat.text("ana", "/daily on 08:00 London", admin=True)
    assert "Europe/London" in answer
    assert answer == t("en", "daily.zone_hint", zone="London", suggestion="Europe/London")
    assert chat.storage.subscription("test", "group-1") is None


@pytest.mark.parametrize("zone, stored", [("UTC", "UTC"), ("utc", "UTC"), ("Etc/UTC", "Etc/UTC")])
def test_daily_takes_utc_as_a_zone_not_as_a_city(chat, zone, stored):
    answer = chat.text("ana", f"/daily on 08:00 {zone}", admin=True)
    assert answer == t("en", "daily.on", time="08:00", zone=stored, variant=t("en", "variant.italian"))
    assert chat.storage.subscription("test", "group-1").timezone == stored


def test_daily_accepts_8am(chat):
    answer = chat.text("ana", "/daily on 8am Europe/London", admin=True)
    assert answer == t("en", "daily.on", time="08:00", zone="Europe/London", variant=t("en", "variant.italian"))


def test_an_expired_challenge_is_said_once_in_the_chat(chat, now):
    cid = chat.challenge("bob", "italian")
    now[0] += 25 * 3600
    assert chat.service.next_wakeup("test") <= now[0]
    out = chat.service.tick()
    said = [o.reply.text for o in out if o.chat_id == "group-1"]
    assert said == [t("en", "challenge.expired", id=cid)]
    assert chat.storage.challenge(cid).status == "expired"
    assert chat.service.tick() == []
    chat.text("ana", "/games")
    assert chat.service.tick() == []


# -- 9. a chat's default variant follows what it plays; /top shows every ranked variant -------------




def finished_game(chat, variant: str, white: str = "ana", black: str = "bob") -> int:
    """A rated game (two moves, then a resignation) in ``variant``."""
    from bot.rules import Position
    game = chat.new_game(white, black, variant)
    pos = Position.start(variant)
    moves = [str(pos.legal_moves()[0])]
    moves.append(str(pos.play(pos.legal_moves()[0]).legal_moves()[0]))
    chat.play(game, moves)
    chat.resign(black)
    assert chat.game(game).status == "finished"
    return game


def test_an_english_chat_that_plays_spanish_gets_spanish_puzzles_and_leaderboard(chat):
    finished_game(chat, "spanish")
    reply = chat.say("ana", "/puzzle", language="en")[0]
    assert chat.storage.puzzle_post(reply.post_id).variant == "spanish"
    assert chat.text("ana", "/top", language="en").startswith(
        t("en", "top.title", variant=t("en", "variant.spanish")))


def test_the_daily_puzzles_variant_comes_before_the_games(chat):
    finished_game(chat, "spanish")
    chat.say("ana", "/daily on triestina", admin=True, language="en")
    reply = chat.say("ana", "/puzzle", language="en")[0]
    assert chat.storage.puzzle_post(reply.post_id).variant == "triestina"


def test_a_chat_with_nothing_played_still_guesses_from_its_language(chat):
    reply = chat.say("ana", "/puzzle", language="es")[0]
    assert chat.storage.puzzle_post(reply.post_id).variant == "spanish"


def test_top_without_a_variant_shows_every_variant_with_ranked_players(chat):
    for _ in range(5):
        finished_game(chat, "italian")
        finished_game(chat, "spanish")
    replies = chat.say("ana", "/top")
    titles = [r.text.splitlines()[0] for r in replies]
    assert t("en", "top.title", variant=t("en", "variant.italian")) in titles
    assert t("en", "top.title", variant=t("en", "variant.spanish")) in titles
    assert all(r.image is not None for r in replies)
    assert not any("Triestina" in title for title in titles)


# -- 14. finished games can be found; a rematch after a game -----------------------------------------


@pytest.mark.parametrize("text", ["/games done", "/history", "/partidas terminadas", "/storico"])
def test_finished_games_are_listed_with_result_and_id(chat, text):
    first = finished_game(chat, "italian", "ana", "bob")
    second = finished_game(chat, "spanish", "cid", "ana")
    chat.new_game("dan", "eve", "italian")                   # still being played: not listed
    answer = chat.text("ana", text)
    lines = answer.splitlines()
    assert lines[0] == t("en", "history.header")
    assert lines[1].startswith(f"#{second} ") and "Cid - Ana, Cid won" in lines[1]
    assert lines[2].startswith(f"#{first} ") and "Ana - Bob, Ana won" in lines[2]
    assert "November 14" in lines[1]
    assert len(lines) == 4 and "/analysis #id" in lines[3]


def test_history_of_one_player(chat):
    finished_game(chat, "italian", "ana", "bob")
    theirs = finished_game(chat, "italian", "cid", "dan")
    answer = chat.text("ana", "/history @dan")
    assert f"#{theirs} " in answer and "Ana - Bob" not in answer


def test_history_when_nothing_finished(chat):
    chat.new_game()
    assert chat.text("ana", "/games done") == t("en", "history.empty")


def test_rematch_button_challenges_the_opponent_with_colours_swapped(chat):
    game = chat.new_game("ana", "bob", "spanish")
    chat.play(game, ["12-16", "21-17"])
    chat.say("bob", "/resign")
    [end] = chat.say("bob", "/resign")
    assert chat.game(game).status == "finished"
    [[button]] = end.buttons
    assert button.label == t("en", "button.rematch") and button.action == f"rm:{game}"
    answer = chat.press("ana", f"rm:{game}")
    new = chat.rows("challenges")[-1]
    assert (new.challenger_id, new.color, new.variant, new.target_username) == ("ana", "black", "spanish", "bob")
    assert f"#{new.id}" in answer[0].text
    accepted = chat.say("bob", f"/accept #{new.id}")
    game2 = chat.storage.challenge(new.id).game_id
    assert accepted[0].game_id == game2
    assert (chat.game(game2).white_id, chat.game(game2).black_id) == ("bob", "ana")


def test_rematch_by_someone_else_changes_nothing(chat):
    game = finished_game(chat, "italian", "ana", "bob")
    before = chat.snapshot()
    answer = chat.press("eve", f"rm:{game}")
    assert answer[0].private and chat.snapshot() == before


def test_rematch_against_the_bot_starts_at_once_with_the_other_colour(bot_chat):
    chat = bot_chat
    chat.say("ana", "/play italian level 1 white 2h")
    game = chat.rows("games")[-1].id
    chat.resign("ana")
    replies = chat.press("ana", f"rm:{game}")
    new = chat.rows("games")[-1]
    assert new.id != game and new.black_id == "ana" and new.bot_level == 1 and new.move_seconds == 7200
    assert replies[0].game_id == new.id


# -- 8. the /top table keeps its last header off the edge ------------------------------------------


def test_top_table_header_keeps_off_the_right_edge(chat):
    import io

    from PIL import Image
    for _ in range(5):
        finished_game(chat, "spanish")
    reply = chat.say("ana", "/top", language="es")[0]
    img = Image.open(io.BytesIO(reply.image)).convert("RGB")
    data = img.load()
    w, _h = img.size
    background = data[w - 1, 0]
    ink = [x for x in range(w) for y in range(52, 80)
           if sum(abs(a - b) for a, b in zip(data[x, y], background, strict=True)) > 60]
    assert max(ink) <= w - 24


def test_stats_chart_is_drawn_for_one_game(chat):
    finished_game(chat, "italian")
    reply = chat.say("ana", "/stats")[0]
    assert reply.image is not None and reply.image.startswith(b"\x89PNG")


def test_italian_games_list_says_tocca_ad_ana(chat):
    chat.new_game("ana", "bob", "italian")
    assert "tocca ad Ana" in chat.text("ana", "/partite", language="it")
