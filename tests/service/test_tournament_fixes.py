"""Issue 32, the reviewer's defects in the tournaments (TFIX2), each with the test that failed before
its fix: on the real service (SQLite file, rules, Pillow), texts checked by their catalog keys."""

from __future__ import annotations

import random

import pytest
from catalog_text import pattern, says, tr

from bot.i18n import t
from bot.rules import Color, Position
from bot.service.chat.commands import BadArgument
from bot.service.chat.tournaments import parse_new_tournament
from bot.service.features.ratings import is_rated

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


# -- 3. cancelling, lapsing ---------------------------------------------------------------------------------


def _start(chat, words: str = "swiss spanish 3 1h", players: list[str] = PLAYERS) -> int:
    tid = _new(chat, words)
    for p in players:
        chat.say(p, "/tournament join")
    assert says(chat.text("admin", "/tournament start", admin=True), "en", "tournament.started", id=tid)
    chat.service.tick()
    return tid


def test_a_registering_tournament_is_cancelled_by_an_admin_and_frees_the_chat(chat):
    tid = _new(chat)
    chat.say("ana", "/tournament join")
    before = chat.snapshot()
    for word in ("cancel", "CANCELAR", "annulla"):
        assert says(chat.text("ana", f"/tournament {word}"), "en", "error.admins_only", command="tournament")
    assert chat.snapshot() == before
    assert says(chat.text("admin", "/tournament cancel", admin=True), "en", "tournament.cancelled", id=tid)
    assert says(chat.text("ana", "/tournament"), "en", "tournament.none_history")
    assert says(chat.text("ana", "/tournament history"), "en", "tournament.history_line_cancelled", id=tid,
                players=tr("en", "tournament.players.one", n=1))
    assert says(chat.text("ana", "/tournament join"), "en", "tournament.none_history")
    assert says(chat.text("admin", "/tournament cancel", admin=True), "en", "tournament.none_history")
    assert _new(chat) == tid + 1


def test_a_running_tournament_cancelled_leaves_its_games_as_ordinary_games(chat):
    tid = _start(chat)
    running = sorted(g.id for g in chat.rows("games") if g.status == "active")
    assert len(running) == 2
    text = chat.text("admin", "/tournament cancel", admin=True)
    assert says(text, "en", "tournament.cancelled_games.other", id=tid, games=", ".join(f"#{g}" for g in running))
    uses = chat.service.app.tournaments
    [info] = uses.find()
    assert info.status == "cancelled" and info.winner_id is None
    # The games go on; their results no longer go into the tournament, and no round is paired.
    state = chat.storage.tournaments.get(tid)
    for game in chat.rows("games"):
        chat.resign(game.white_id, f"/resign #{game.id}")
    assert all(g.status == "finished" for g in chat.rows("games"))
    assert chat.storage.tournaments.get(tid) == state
    assert not [o for o in chat.service.tick() if pattern("en", "tournament.round_title").search(o.reply.text)]
    assert uses.rounds(tid)[0].pairings[0].result is None
    # The last tournament's pairings and standings are still shown, and a new one may open.
    assert says(chat.text("ana", "/tournament pairings"), "en", "tournament.round_title", id=tid, round=1)
    assert says(chat.text("ana", "/tournament history"), "en", "tournament.history_line_cancelled", id=tid)
    assert _new(chat) == tid + 1


def test_a_tournament_not_started_within_14_days_lapses(chat, now):
    tid = _new(chat)
    chat.say("ana", "/tournament join")
    now[0] += 14 * 86400 - 60
    assert says(chat.text("bob", "/tournament"), "en", "tournament.show_registering", id=tid)
    now[0] += 60
    assert says(chat.text("bob", "/tournament"), "en", "tournament.none_history")
    assert says(chat.text("bob", "/tournament history"), "en", "tournament.history_line_cancelled", id=tid)
    assert _new(chat) == tid + 1


def test_a_lapsed_tournament_does_not_block_a_new_one(chat, now):
    tid = _new(chat)
    now[0] += 15 * 86400
    # Nobody looked in between: creating lapses it first.
    assert _new(chat, "roundrobin") == tid + 1


def test_the_created_post_says_the_lapse_and_the_bye(chat):
    text = chat.text("admin", "/tournament new swiss 3", admin=True)
    assert says(text, "en", "tournament.created", bye="1", days=14)


# -- 4. a bye of ½, set at creation -------------------------------------------------------------------------


@pytest.mark.parametrize("words, points", [
    ("swiss 5", 1.0), ("swiss 5 halfbye", 0.5), ("swiss 5 bye½", 0.5), ("swiss 5 bye 1/2", 0.5),
    ("suizo 5 mediodescanso", 0.5), ("suizo 5 descanso ½", 0.5), ("svizzero 5 mezzoriposo", 0.5),
    ("svizzero 5 riposo 1/2", 0.5), ("swiss bye 1 5", 1.0), ("swiss 5 MEDIOBYE", 0.5),
])
def test_new_reads_the_bye_s_score(words, points):
    assert parse_new_tournament(words.split()).bye_points == points


def test_two_bye_scores_are_refused():
    with pytest.raises(BadArgument) as err:
        parse_new_tournament("swiss 5 halfbye bye 1".split())
    assert err.value.key == "tournament.two_byes"


@pytest.mark.parametrize("lang", ["en", "es", "it"])
def test_a_half_bye_is_kept_shown_and_scored(chat, lang):
    chat.say("admin", f"/lang {lang}", admin=True)
    half = {"en": "halfbye", "es": "mediodescanso", "it": "mezzoriposo"}[lang]
    text = chat.text("admin", f"/tournament new swiss 2 1h {half}", admin=True)
    assert says(text, lang, "tournament.created", bye="½")
    assert says(chat.text("ana", "/tournament"), lang, "tournament.show_registering", bye="½")
    assert half in chat.text("ana", "/help")
    for p in PLAYERS[:3]:
        chat.say(p, "/tournament join")
    chat.say("admin", "/tournament start", admin=True)
    out = chat.service.tick()
    assert any(says(o.reply.text, lang, "tournament.bye_ping", points="½") for o in out)
    [info] = chat.service.app.tournaments.find()
    assert info.bye_points == 0.5


# -- 8. wording ---------------------------------------------------------------------------------------------


def test_starting_a_running_tournament_says_it_runs(chat):
    _start(chat)
    before = chat.snapshot()
    text = chat.text("admin", "/tournament start", admin=True)
    assert says(text, "en", "tournament.refused.running", round=1)
    assert not says(text, "en", "tournament.refused.already_started")
    assert chat.snapshot() == before


@pytest.mark.parametrize("lang", ["en", "es", "it"])
def test_counts_use_the_catalogs_plural_forms(chat, lang):
    chat.say("admin", f"/lang {lang}", admin=True)
    chat.say("admin", "/tournament new swiss 2 1h", admin=True)
    chat.say("ana", "/tournament join")
    one = tr(lang, "tournament.players.one", n=1)
    assert says(chat.text("bob", "/tournament"), lang, "tournament.show_registering", players=one)
    for p in PLAYERS[1:]:
        chat.say(p, "/tournament join")
    chat.say("admin", "/tournament start", admin=True)
    chat.service.tick()
    text = chat.text("ana", "/tournament leave")
    [game] = [g.id for g in chat.rows("games") if "ana" in (g.white_id, g.black_id)]
    assert says(text, lang, "tournament.withdrew_games.one", name="Ana", games=f"#{game}")


def test_pairings_after_the_end_show_the_finished_tournament(chat):
    tid = _start(chat, "roundrobin", PLAYERS[:3])
    for _ in range(3):
        for game in chat.rows("games"):
            if game.status == "active":
                chat.resign(game.white_id, f"/resign #{game.id}")
        chat.service.tick()
    assert says(chat.text("ana", "/tournament"), "en", "tournament.none_history")
    assert says(chat.text("ana", "/tournament pairings"), "en", "tournament.round_title", id=tid, round=3)
    assert says(chat.text("ana", "/tournament pairings 1"), "en", "tournament.round_title", id=tid, round=1)


# -- 5. forfeits: a withdrawal's game is unrated; a player who never moved forfeits ----------------------


def _move(chat, game_id: int) -> None:
    """The player to move in game ``game_id`` plays its first legal move."""
    row = chat.storage.games.get(game_id)
    user = row.white_id if Position.from_fen(row.variant, row.fen).turn == Color.WHITE else row.black_id
    move = Position.from_fen(row.variant, row.fen).legal_moves()[0]
    chat.say(user, f"/m #{game_id} {move}")
    assert chat.storage.games.get(game_id).ply == row.ply + 1


def _ratings(chat, row) -> list:
    return [chat.storage.ratings.get(row.platform, user, row.variant) for user in (row.white_id, row.black_id)]


def test_a_withdrawal_s_running_game_is_an_unrated_forfeit_with_its_final_board(chat):
    tid = _start(chat)
    [game] = [g for g in chat.rows("games") if "ana" in (g.white_id, g.black_id)]
    for _ in range(3):
        _move(chat, game.id)
    before = _ratings(chat, chat.storage.games.get(game.id))
    chat.say("ana", "/tournament leave")
    ended = chat.storage.games.get(game.id)
    assert ended.status == "finished" and ended.result_reason == "forfeit"
    assert ended.winner == (Color.BLACK if game.white_id == "ana" else Color.WHITE)
    assert not is_rated(ended) and _ratings(chat, ended) == before
    out = chat.service.tick()
    over = [o.reply for o in out if says(o.reply.text, "en", "game.over", id=game.id)]
    assert len(over) == 1 and over[0].image is not None
    assert says(over[0].text, "en", "result.win.forfeit", loser="Ana")
    board = next(p for p in chat.service.app.tournaments.rounds(tid)[0].pairings if p.game_id == game.id)
    assert board.result == ("-+" if game.white_id == "ana" else "+-")


@pytest.mark.parametrize("plies, resigner, result", [
    (0, "white", "-+"),     # white resigns before any move
    (1, "black", "+-"),     # white moved, black resigns before their first move
    (1, "white", "0-1"),    # white had moved: an ordinary loss
    (2, "black", "1-0"),    # both had moved
])
def test_resigning_before_one_s_first_move_is_a_forfeit(chat, plies, resigner, result):
    tid = _start(chat)
    game = chat.rows("games")[0]
    for _ in range(plies):
        _move(chat, game.id)
    user = game.white_id if resigner == "white" else game.black_id
    chat.resign(user, f"/resign #{game.id}")
    assert chat.storage.games.get(game.id).status == "finished"
    board = next(p for p in chat.service.app.tournaments.rounds(tid)[0].pairings if p.game_id == game.id)
    assert board.result == result


def test_a_normal_game_s_rating_rules_are_unchanged(chat):
    tid = _start(chat)
    game = chat.rows("games")[0]
    for _ in range(2):
        _move(chat, game.id)
    chat.resign(game.black_id, f"/resign #{game.id}")
    ended = chat.storage.games.get(game.id)
    assert ended.result_reason == "resign" and is_rated(ended)
    assert tid == 1


# -- 6. an adjudicated game shows its final board, the round names its result -----------------------------


@pytest.mark.parametrize("lang", ["en", "es", "it"])
def test_an_adjudicated_game_shows_its_board_and_the_round_its_result(chat, now, lang):
    chat.say("admin", f"/lang {lang}", admin=True)
    chat.say("admin", "/tournament new roundrobin italian 7d deadline 1d", admin=True)
    for p in PLAYERS[:3]:
        chat.say(p, "/tournament join")
    chat.say("admin", "/tournament start", admin=True)
    chat.service.tick()
    [game] = [g.id for g in chat.rows("games")]
    for _ in range(2):
        _move(chat, game)
    chat.service.tick()
    now[0] += 86400 + 60
    out = [o.reply for o in chat.service.tick()]
    over = [i for i, r in enumerate(out) if says(r.text, lang, "game.over", id=game)]
    rounds = [i for i, r in enumerate(out) if says(r.text, lang, "tournament.round_over", round=1)]
    assert len(over) == 1 and len(rounds) == 1 and over[0] < rounds[0]
    board = out[over[0]]
    assert board.image is not None
    assert says(board.text, lang, "result.draw.adjudicated") or says(board.text, lang, "result.win.adjudicated")
    row = chat.storage.games.get(game)
    mark = {"1-0": "1-0", "0-1": "0-1", "1/2-1/2": "½-½"}[row.result_score]
    assert says(out[rounds[0]].text, lang, "tournament.adjudicated_games", games=f"#{game} {mark}")


# -- 3 (optional): a Swiss's rounds mended while registering ---------------------------------------------


def test_too_many_rounds_is_mended_with_tournament_rounds(chat):
    tid = _new(chat, "swiss spanish 5 1h")
    for p in PLAYERS[:3]:
        chat.say(p, "/tournament join")
    assert says(chat.text("admin", "/tournament start", admin=True), "en", "tournament.refused.too_many_rounds",
                count=3, most=2)
    before = chat.snapshot()
    assert says(chat.text("ana", "/tournament rounds 2"), "en", "error.admins_only", command="tournament")
    assert says(chat.text("admin", "/tournament rounds 0", admin=True), "en", "tournament.refused.bad_rounds")
    assert says(chat.text("admin", "/tournament rounds x", admin=True), "en", "tournament.usage")
    assert chat.snapshot() == before
    text = chat.text("admin", "/torneo rondas 2", admin=True)
    assert says(text, "en", "tournament.rounds_set", id=tid, rounds=tr("en", "tournament.rounds.other", n=2))
    assert says(chat.text("admin", "/tournament start", admin=True), "en", "tournament.started", id=tid)
    assert says(chat.text("admin", "/tournament rounds 2", admin=True), "en", "tournament.refused.running")


def test_a_round_robin_s_rounds_are_not_set(chat):
    _new(chat, "roundrobin")
    before = chat.snapshot()
    assert says(chat.text("admin", "/tournament rounds 3", admin=True), "en", "tournament.refused.rounds_roundrobin")
    assert chat.snapshot() == before


@pytest.mark.parametrize("lang", ["en", "es", "it"])
def test_a_cancelled_tournament_s_web_page_says_so(chat, lang):
    from bot.service.tournament_page import build_view

    tid = _start(chat)
    chat.say("admin", "/tournament cancel", admin=True)
    uses = chat.service.app.tournaments
    info, table = uses.view(tid), uses.standings_after(tid)
    assert info is not None and table is not None
    view = build_view(info, table, uses.rounds(tid), lang, lambda game: f"/g/{game}")
    assert view.status == "cancelled" and view.status_text == t(lang, "webt.status.cancelled", round=1)
