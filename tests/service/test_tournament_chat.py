"""Issue 32: the /tournament family in the chat, on the real service (SQLite file, rules, Pillow):
its words in three languages, the Join button, who may do what, every refusal worded and changing
nothing, and the outbox's tournament notices (the pairings post with each game's number, a ping per
player, the standings picture and text after a round, the winner).  Texts are checked by their
catalog keys and values, never by their English words."""

from __future__ import annotations

import io
import json
import re

import pytest
from catalog_text import pattern, says, tr
from harness import GROUP
from PIL import Image

from bot.i18n import catalog
from bot.service.chat import tournaments as chat_tournaments
from bot.service.chat.commands import BadArgument
from bot.service.chat.registry import REGISTRY, ButtonKind, action
from bot.service.chat.tournaments import SUBCOMMANDS, parse_new_tournament, refusal_text
from bot.service.events import Outgoing
from bot.service.features.results_tournaments import DEFAULT_ROUND_SECONDS, TournamentRefused

PLAYERS = ["ana", "bob", "carla", "dario"]


def _new(chat, words: str = "swiss spanish 3 1h", **kw) -> int:
    replies = chat.say("admin", f"/tournament new {words}", admin=True, **kw)
    found = pattern("en", "tournament.created").search(replies[0].text)
    assert found is not None, replies[0].text
    return int(found["id"])


def _drain(chat) -> list[Outgoing]:
    return chat.service.tick()


def _png(data: bytes | None) -> Image.Image:
    assert data is not None
    img = Image.open(io.BytesIO(data))
    assert img.format == "PNG"
    return img


# -- reading /tournament new ------------------------------------------------------------------------------


@pytest.mark.parametrize("words, expected", [
    ("swiss spanish 5 1h", ("swiss", "spanish", 5, 3600, DEFAULT_ROUND_SECONDS, 1)),
    ("suizo damas españolas 5 1h", ("swiss", "spanish", 5, 3600, DEFAULT_ROUND_SECONDS, 1)),
    ("svizzero italiana 7 2h", ("swiss", "italian", 7, 7200, DEFAULT_ROUND_SECONDS, 1)),
    ("roundrobin", ("roundrobin", None, None, 86400, DEFAULT_ROUND_SECONDS, 1)),
    ("liga triestina 30m plazo 3d doble", ("roundrobin", "triestina", None, 1800, 3 * 86400, 2)),
    ("girone 1d scadenza 10d", ("roundrobin", None, None, 86400, 10 * 86400, 1)),
    ("1h 4 swiss", ("swiss", None, 4, 3600, DEFAULT_ROUND_SECONDS, 1)),
])
def test_new_reads_the_format_variant_rounds_and_times_in_any_order(words, expected):
    args = parse_new_tournament(words.split())
    assert (args.format, args.variant, args.rounds, args.move_seconds, args.round_seconds, args.cycles) == expected


@pytest.mark.parametrize("words, key", [
    ("spanish 5", "tournament.need_format"),
    ("swiss roundrobin 5", "tournament.two_formats"),
    ("swiss spanish italian 5", "new.two_variants"),
    ("swiss 5 6", "tournament.two_rounds"),
    ("swiss 1h 2h 5", "new.two_times"),
    ("swiss spanish", "tournament.need_rounds"),
    ("roundrobin 5", "tournament.rounds_roundrobin"),
    ("swiss 0", "tournament.refused.bad_rounds"),
    ("swiss 500", "tournament.refused.bad_rounds"),
    ("swiss 5 1m", "new.bad_time"),
    ("swiss 5 30d", "new.bad_time"),
    ("swiss 5 deadline 90d", "tournament.refused.bad_round_time"),
    ("swiss 5 double", "new.bad_arg"),
    ("swiss 5 chess", "new.bad_arg"),
])
def test_new_refuses_what_it_cannot_read(words, key):
    with pytest.raises(BadArgument) as err:
        parse_new_tournament(words.split())
    assert err.value.key == key


def test_subcommands_in_three_languages_are_one_command():
    spec = REGISTRY.lookup("tournament")
    assert spec is not None and REGISTRY.lookup("torneo") is spec and REGISTRY.lookup("tourney") is spec
    for sub, words in {"join": ("unirse", "entra"), "leave": ("salir", "esci"), "start": ("empezar", "inizia"),
                       "standings": ("clasificacion", "clasificación", "classifica"),
                       "pairings": ("emparejamientos", "abbinamenti"), "history": ("historial", "storico"),
                       "new": ("nuevo", "nuovo")}.items():
        for word in words:
            assert chat_tournaments.subcommand([word])[0] == sub
    # Creating and starting are for a group's admins; the rest for anyone.
    assert all(REGISTRY.needs_admin(spec, [w]) for w in SUBCOMMANDS["new"] + SUBCOMMANDS["start"])
    assert not any(REGISTRY.needs_admin(spec, [w]) for w in SUBCOMMANDS["join"] + SUBCOMMANDS["standings"])
    # /tournament new opens a place of its own where the platform makes one.
    place = REGISTRY.place_of("/torneo nuevo suizo española 5 1h")
    assert place is not None and place.kind == "swiss" and place.variant == "spanish"


# -- refusals ---------------------------------------------------------------------------------------------

# Every code TournamentRefused may carry (its docstring lists them).
CODES = ("already_joined", "already_started", "too_few", "full", "not_in", "already_left", "finished",
         "too_many_rounds", "bad_rounds", "bad_cycles", "bad_bye_points", "no_such_round", "not_admin",
         "already_running", "unknown_variant", "bad_move_time", "bad_round_time", "no_round", "bad_format",
         "not_registering", "running", "rounds_roundrobin")


@pytest.mark.parametrize("lang", ["en", "es", "it"])
def test_every_refusal_code_has_its_own_sentence(lang):
    other = refusal_text(lang, TournamentRefused("something_new"))
    assert other == tr(lang, "tournament.refused.other")
    texts = {code: refusal_text(lang, TournamentRefused(code)) for code in CODES}
    assert all(f"tournament.refused.{code}" in catalog(lang) for code in CODES)
    assert other not in texts.values() and len(set(texts.values())) == len(CODES)
    assert all("{" not in text for text in texts.values())
    assert says(refusal_text(lang, TournamentRefused("too_few", (("least", 3), ("count", 2)))), lang,
                "tournament.refused.too_few", least=3, count=2)


def test_a_non_admin_creates_and_starts_nothing(chat):
    before = chat.snapshot()
    assert says(chat.text("ana", "/tournament new swiss 3"), "en", "error.admins_only", command="tournament")
    assert chat.snapshot() == before
    tid = _new(chat)
    for p in PLAYERS[:3]:
        chat.say(p, "/tournament join")
    before = chat.snapshot()
    assert says(chat.text("ana", "/tournament start"), "en", "error.admins_only", command="tournament")
    assert chat.snapshot() == before
    assert tid == 1


def test_bad_input_is_answered_and_changes_nothing(chat):
    before = chat.snapshot()
    text = chat.text("admin", "/tournament new swiss 5 chess", admin=True)
    assert says(text, "en", "new.bad_arg", word="chess") and says(text, "en", "tournament.new_usage")
    assert says(chat.text("ana", "/tournament join"), "en", "tournament.none")
    assert says(chat.text("ana", "/tournament dance"), "en", "tournament.usage")
    assert says(chat.text("ana", "/tournament pairings x"), "en", "tournament.usage")
    assert chat.snapshot() == before
    _new(chat)
    chat.say("ana", "/tournament join")
    before = chat.snapshot()
    assert says(chat.text("ana", "/tournament join"), "en", "tournament.refused.already_joined")
    assert says(chat.text("bob", "/tournament leave"), "en", "tournament.refused.not_in")
    assert says(chat.text("admin", "/tournament start", admin=True), "en", "tournament.refused.too_few",
                least=3, count=1)
    assert says(chat.text("ana", "/tournament pairings"), "en", "tournament.refused.no_round")
    again = chat.text("admin", "/tournament new roundrobin", admin=True)
    assert says(again, "en", "tournament.refused.already_running")
    chat.say("bob", "/tournament join")
    chat.say("carla", "/tournament join")
    before = chat.snapshot()
    # A Swiss of 3 rounds needs 4 players (no pair meets twice).
    assert says(chat.text("admin", "/tournament start", admin=True), "en", "tournament.refused.too_many_rounds",
                count=3, most=2)
    assert chat.snapshot() == before


# -- the flow ---------------------------------------------------------------------------------------------


def test_created_with_a_join_button_that_joins(chat):
    replies = chat.say("admin", "/tournament new swiss spanish 3 1h", admin=True)
    assert says(replies[0].text, "en", "tournament.created", id=1, rounds=tr("en", "tournament.rounds.other", n=3),
                format=tr("en", "tournament.format.swiss"))
    [[join]] = replies[0].buttons
    assert join.action == action(ButtonKind.TOURNAMENT_JOIN, 1) and join.command == "/tournament join"
    text = "\n".join(r.text for r in chat.press("ana", join.action))
    assert says(text, "en", "tournament.joined", name="Ana", id=1, names="Ana")
    again = chat.press("ana", join.action)
    assert again[0].private and says(again[0].text, "en", "tournament.refused.already_joined")
    # Shown alone: who has joined.
    assert says(chat.text("bob", "/tournament"), "en", "tournament.show_registering", id=1, names="Ana")


def test_leaving_before_the_start_removes_the_player(chat):
    _new(chat)
    chat.say("ana", "/tournament join")
    assert says(chat.text("ana", "/tournament leave"), "en", "tournament.left", name="Ana", id=1)
    assert says(chat.text("ana", "/tournament leave"), "en", "tournament.refused.not_in")


def _start(chat, words: str = "swiss spanish 3 1h", players: list[str] = PLAYERS) -> tuple[int, list[Outgoing]]:
    tid = _new(chat, words)
    for p in players:
        chat.say(p, "/tournament join")
    _drain(chat)
    started = chat.text("admin", "/tournament start", admin=True)
    assert says(started, "en", "tournament.started", id=tid)
    return tid, _drain(chat)


def test_a_round_is_posted_once_with_every_game_and_each_player_pinged(chat):
    tid, out = _start(chat)
    posts = [o for o in out if pattern("en", "tournament.round_title").search(o.reply.text)]
    assert len(posts) == 1
    post = posts[0].reply.text
    boards = [m.groupdict() for line in post.splitlines()
              if (m := pattern("en", "tournament.board_game").fullmatch(line))]
    assert len(boards) == 2
    games = {int(b["game"]) for b in boards}
    assert games == {g.id for g in chat.rows("games")}
    assert says(post, "en", "tournament.deadline_at")
    pings = [o.reply for o in out if o.reply.mentions]
    assert sorted(m.user_id for r in pings for m in r.mentions) == sorted(PLAYERS)
    for ping in pings:
        [mention] = ping.mentions
        found = pattern("en", "tournament.ping", mention=mention.name, id=tid, round=1).search(ping.text)
        assert found is not None and int(found["game"]) in games and ping.game_id == int(found["game"])
    # Asked again, the round is shown, not posted again.
    assert says(chat.text("ana", "/tournament pairings"), "en", "tournament.round_title", id=tid, round=1, total=3)
    assert not [o for o in _drain(chat) if pattern("en", "tournament.round_title").search(o.reply.text)]


def _finish_round(chat) -> None:
    """Every running game ends: white resigns."""
    for game in chat.rows("games"):
        if game.status == "active":
            chat.resign(game.white_id, f"/resign #{game.id}")


def test_after_a_round_the_standings_come_as_a_picture_and_words(chat):
    tid, _out = _start(chat)
    blacks = {g.black_id.capitalize() for g in chat.rows("games")}
    _finish_round(chat)
    out = _drain(chat)
    ended = [o.reply for o in out if says(o.reply.text, "en", "tournament.round_over", round=1, id=tid)]
    assert len(ended) == 1
    reply = ended[0]
    assert says(reply.text, "en", "tournament.standings_title", id=tid, round=1)
    assert _png(reply.image).width >= 360
    lines = [m for line in reply.text.splitlines() if (m := pattern("en", "tournament.standings_line").fullmatch(line))]
    assert [int(m["rank"]) for m in lines] == [1, 2, 3, 4]
    # Black won every game: the black players lead with a point each.
    assert {m["name"] for m in lines[:2]} == blacks and all(m["points"] == "1" for m in lines[:2])
    # On request too, and round 2 was posted.
    shown = chat.say("ana", "/tournament standings")
    assert shown[0].image is not None and says(shown[0].text, "en", "tournament.standings_title", round=1)
    assert any(says(o.reply.text, "en", "tournament.round_title", round=2) for o in out)


def test_a_round_robin_plays_to_its_winner(chat):
    tid, _out = _start(chat, "roundrobin italian 1h", PLAYERS[:3])
    winner = []
    for _round in range(3):
        _finish_round(chat)
        for o in _drain(chat):
            if (found := pattern("en", "tournament.winner", id=tid).search(o.reply.text)) is not None:
                winner.append((found["name"], o.reply))
    [(name, reply)] = winner
    assert says(reply.text, "en", "tournament.standings_final", id=tid)
    assert reply.image is not None
    top = pattern("en", "tournament.standings_line", rank=1).search(reply.text)
    assert top is not None and top["name"] == name
    assert says(chat.text("ana", "/tournament history"), "en", "tournament.history_line", id=tid, name=name)
    assert says(chat.text("ana", "/tournament"), "en", "tournament.none_history")


def test_withdrawing_after_the_start_says_the_games_forfeited(chat):
    tid, _out = _start(chat)
    text = chat.text("ana", "/tournament leave")
    found = pattern("en", "tournament.withdrew_games", "tournament.withdrew", name="Ana", id=tid).search(text)
    assert found is not None
    assert says(chat.text("ana", "/tournament leave"), "en", "tournament.refused.already_left")
    assert says(chat.text("eva", "/tournament join"), "en", "tournament.refused.already_started")


@pytest.mark.parametrize("lang, words", [("es", ("torneo", "nuevo", "suizo", "unirse", "empezar", "clasificacion")),
                                         ("it", ("torneo", "nuovo", "svizzero", "entra", "inizia", "classifica"))])
def test_in_spanish_and_italian(chat, lang, words):
    name, new, swiss, join, start, standings = words
    chat.say("admin", f"/lang {lang}", admin=True)
    replies = chat.say("admin", f"/{name} {new} {swiss} 2 1h", admin=True)
    assert says(replies[0].text, lang, "tournament.created", id=1, format=tr(lang, "tournament.format.swiss"))
    assert replies[0].buttons[0][0].label == tr(lang, "tournament.join_button")
    for p in PLAYERS[:3]:
        assert says(chat.text(p, f"/{name} {join}"), lang, "tournament.joined", id=1)
    assert says(chat.text("admin", f"/{name} {start}", admin=True), lang, "tournament.started", id=1)
    out = _drain(chat)
    assert any(says(o.reply.text, lang, "tournament.round_title", id=1, round=1, total=2) for o in out)
    assert says(chat.text("ana", f"/{name} {standings}"), lang, "tournament.standings_none", id=1)


def test_help_lists_the_command_and_the_deadline_rule(chat):
    for lang in ("en", "es", "it"):
        chat.say("admin", f"/lang {lang}", admin=True)
        text = chat.text("ana", "/help")
        assert f"/tournament {tr(lang, 'help.tournament')}" in text
        assert chat_tournaments.rule_text(lang) in text
        if lang != "en":
            assert "/torneo" in text
    # The rule names the default deadline the use case applies.
    for lang in ("en", "es", "it"):
        assert re.search(rf"\b{DEFAULT_ROUND_SECONDS // 86400} ", chat_tournaments.rule_text(lang))


def test_what_shows_a_tournament_links_its_web_page_while_the_board_is_served(chat):
    tid, _out = _start(chat)
    assert not chat.say("ana", "/tournament standings")[0].buttons      # no web board: no link
    chat.service.chat.serve_web("https://board.example", chat.service.web)
    for command in ("/tournament", "/tournament standings", "/tournament pairings"):
        [[link]] = chat.say("ana", command)[0].buttons
        assert link.label == tr("en", "tournament.web_button")
        assert link.url is not None and link.url.startswith("https://board.example/t/") and f"{tid}" in link.url


def test_the_deadline_forfeits_a_game_nobody_moved_in_and_the_round_notice_says_so(chat, now):
    tid, out = _start(chat, "roundrobin italian 7d deadline 1d", PLAYERS[:3])
    [game] = [g.id for g in chat.rows("games")]
    now[0] += 86400 + 60
    ended = [o.reply for o in _drain(chat) if says(o.reply.text, "en", "tournament.round_over", round=1, id=tid)]
    assert len(ended) == 1
    assert says(ended[0].text, "en", "tournament.forfeited_games", games=f"#{game}")
    assert ended[0].image is not None


def test_a_round_notice_names_the_adjudicated_games(chat):
    from bot.service.chat.tournaments import present_notice
    from bot.service.notifications import TournamentRoundEnded

    tid, _out = _start(chat)
    _finish_round(chat)
    uses = chat.service.app.tournaments
    for lang in ("en", "es", "it"):
        reply = present_notice(TournamentRoundEnded(tid, lang, 1, adjudicated=(7, 8), forfeited=(9,)), uses)
        assert says(reply.text, lang, "tournament.adjudicated_games", games="#7, #8")
        assert says(reply.text, lang, "tournament.forfeited_games", games="#9")
        assert says(reply.text, lang, "tournament.standings_title", id=tid, round=1)
        assert reply.image is not None


# -- follow-ups: the bye's ping, the order of a round's messages, bad input end to end --------------------


@pytest.mark.parametrize("lang", ["en", "es", "it"])
def test_the_player_with_the_bye_is_pinged(chat, lang):
    from renderers.standings import points_text

    chat.say("admin", f"/lang {lang}", admin=True)
    tid = int(pattern(lang, "tournament.created").search(
        chat.text("admin", "/tournament new swiss italian 2 1h", admin=True))["id"])
    for p in PLAYERS[:3]:
        chat.say(p, "/tournament join")
    _drain(chat)
    chat.say("admin", "/tournament start", admin=True)
    out = _drain(chat)
    playing = {u for g in chat.rows("games") for u in (g.white_id, g.black_id)}
    [resting] = set(PLAYERS[:3]) - playing
    byes = [o.reply for o in out if says(o.reply.text, lang, "tournament.bye_ping", id=tid, round=1)]
    assert len(byes) == 1
    assert [m.user_id for m in byes[0].mentions] == [resting]
    assert says(byes[0].text, lang, "tournament.bye_ping", mention=resting.capitalize(), points=points_text(1.0))
    # Everyone of the round was pinged once: the two players their game, the third the bye.
    assert sorted(m.user_id for o in out for m in o.reply.mentions) == sorted(PLAYERS[:3])


def _game_over_first(out: list[Outgoing], game_id: int, tid: int) -> None:
    """The game's last message comes before the round's end and the next round's post."""
    over = [i for i, o in enumerate(out) if o.reply.game_id == game_id]
    ended = [i for i, o in enumerate(out) if says(o.reply.text, "en", "tournament.round_over", round=1, id=tid)]
    paired = [i for i, o in enumerate(out) if says(o.reply.text, "en", "tournament.round_title", round=2)]
    assert over and len(ended) == 1 and len(paired) == 1, [o.reply.text for o in out]
    assert over[-1] < ended[0] < paired[0], [o.reply.text for o in out]


def _outbox_kinds(chat, after: int) -> list[str]:
    rows = sorted(chat.storage.outbox.find(chat.platform), key=lambda r: r.id)
    kinds = []
    for row in rows:
        data = json.loads(row.payload)
        if row.id > after and isinstance(data, dict) and "notice" in data:
            kinds.append(data["notice"])
    return kinds


def _last_game_left(chat) -> tuple[int, object]:
    """Every game of round 1 but the last ends (white resigns in the chat); the last one, and the
    outbox's last row id so far (delivered)."""
    *others, last = [g for g in chat.rows("games") if g.status == "active"]
    for game in others:
        chat.resign(game.white_id, f"/resign #{game.id}")
    _drain(chat)
    return max(r.id for r in chat.storage.outbox.find(chat.platform)), last


def test_a_round_ended_on_the_web_board_says_its_game_over_before_the_round(chat):
    from bot.service.web import Seat

    tid, _out = _start(chat)
    mark, last = _last_game_left(chat)
    answer = chat.service.web.resign(Seat(last.id, chat.platform, last.white_id, chat.now[0] + 60), "en")
    assert answer.outcome == "ok"
    kinds = _outbox_kinds(chat, mark)
    assert kinds[:3] == ["web_game_ended", "tournament_round_ended", "tournament_round_paired"], kinds
    _game_over_first(_drain(chat), last.id, tid)


def test_a_draw_agreed_on_the_web_board_that_ends_a_round_is_told_first(chat):
    from bot.service.web import Seat

    tid, _out = _start(chat)
    mark, last = _last_game_left(chat)
    for user in (last.white_id, last.black_id):
        chat.service.web.draw(Seat(last.id, chat.platform, user, chat.now[0] + 60), "en")
    assert chat.game(last.id).result_score == "1/2-1/2"
    kinds = [k for k in _outbox_kinds(chat, mark) if k != "web_draw_offered"]
    assert kinds[:3] == ["web_game_ended", "tournament_round_ended", "tournament_round_paired"], kinds


def test_a_loss_on_time_that_ends_a_round_is_delivered_before_the_round(chat, now):
    """As in a console run moved on with /clock: the timed-out game's final board, then the
    round's standings, then the next round's post (outbox rows in that order)."""
    tid, _out = _start(chat)
    mark, last = _last_game_left(chat)
    chat.play(last.id, [str(chat.position(last.id).legal_moves()[0])])      # white moved: a normal loss
    _drain(chat)
    mark = max(r.id for r in chat.storage.outbox.find(chat.platform))
    now[0] += 2 * 3600
    chat.service.run_due(chat.platform)
    kinds = _outbox_kinds(chat, mark)
    assert kinds[:3] == ["lost_on_time", "tournament_round_ended", "tournament_round_paired"], kinds
    out = _drain(chat)
    _game_over_first(out, last.id, tid)
    assert chat.game(last.id).result_reason == "time"


def test_the_issue_s_bad_input_list_through_the_chat_changes_nothing(chat):
    """Joining twice, joining after the start, a non-admin starting, starting with too few players,
    a move for another tournament's game (in another chat, or a game not yours), leaving when not
    in it: each answered with its own sentence, every table as it was."""
    other = "group-2"
    _new(chat)
    chat.say("ana", "/tournament join")
    chat.say("bob", "/tournament join")
    before = chat.snapshot()
    assert says(chat.text("ana", "/tournament join"), "en", "tournament.refused.already_joined")
    assert says(chat.text("carla", "/tournament leave"), "en", "tournament.refused.not_in")
    assert says(chat.text("ana", "/tournament start"), "en", "error.admins_only", command="tournament")
    assert says(chat.text("admin", "/tournament start", admin=True), "en", "tournament.refused.too_few",
                least=3, count=2)
    assert chat.snapshot() == before
    # Tournament A starts here; tournament B in another chat.
    for p in ("carla", "dario"):
        chat.say(p, "/tournament join")
    chat.say("admin", "/tournament start", admin=True)
    chat.say("admin", "/tournament new swiss italian 3 1h", admin=True, chat=other)
    for p in ("eva", "fede", "gino", "hugo"):
        chat.say(p, "/tournament join", chat=other)
    chat.say("admin", "/tournament start", admin=True, chat=other)
    _drain(chat)
    games_a = [g for g in chat.rows("games") if g.chat_id == GROUP]
    games_b = [g for g in chat.rows("games") if g.chat_id == other]
    assert len(games_a) == len(games_b) == 2
    game_b = next(g for g in games_b if chat.position(g.id).turn == "W")
    move = str(chat.position(game_b.id).legal_moves()[0])
    before = chat.snapshot()
    assert says(chat.text("eva", "/tournament join"), "en", "tournament.refused.already_started")
    # A player of A types a move for B's game, here and in B's chat: not theirs, nothing played.
    assert says(chat.text("ana", f"/m #{game_b.id} {move}"), "en", "game.unknown", id=game_b.id)
    assert says(chat.text("ana", f"/m #{game_b.id} {move}", chat=other), "en", "game.not_player", id=game_b.id)
    # B's own white player, typing in A's chat: that game is not in this chat.
    assert says(chat.text(game_b.white_id, f"/m #{game_b.id} {move}"), "en", "game.unknown", id=game_b.id)
    assert says(chat.text("eva", "/tournament leave"), "en", "tournament.refused.not_in")
    assert chat.snapshot() == before
