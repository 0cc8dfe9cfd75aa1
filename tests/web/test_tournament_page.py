"""The tournament page's data (``bot.service.tournament_page``): the standings with their tie-breaks
and each round's pairings with results and links to the games, worded in the chat's language, from
the tournaments use case's typed results; and the page's signed link (a number alone opens nothing).

The typed results are built here from a tournament played with the pure core (``bot.tournaments``),
the way the use case builds them, so the page is checked against the core's own standings."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest

from bot.i18n import LANGUAGES, t
from bot.service.features.results_tournaments import (
    Entrant,
    PairingView,
    RoundView,
    StandingRow,
    StandingsView,
    TournamentInfo,
)
from bot.service.tournament_page import TournamentLinks, build_view, page_texts, tiebreak_key
from bot.tournaments import Format, Player, Settings, Tournament, join, leave, new, pair_next_round, record_result
from bot.tournaments import standings as core_standings
from bot.tournaments import start as core_start
from bot.tournaments.standings import rounds_counted

SECRET = b"k" * 32


def watch(game: int) -> str:
    return f"/g/{game}?t=w{game}s-watch-"


def typed(tour: Tournament, tid: int = 7,
          first_game: int = 100) -> tuple[TournamentInfo, StandingsView, list[RoundView]]:
    """What the use case returns for ``tour``: its info, standings and rounds (game numbers given
    in board order from ``first_game``)."""
    names = {p.id: p.name for p in tour.players}
    gone = {pid for pid, _ in tour.withdrawn}
    info = TournamentInfo(
        id=tid, platform="test", chat_id="group-1", place=None, name=tour.settings.name,
        format=tour.settings.format.value, variant="italian", move_seconds=3600, round_seconds=7 * 86400,
        bye_points=tour.settings.bye_points, cycles=tour.settings.cycles, status=tour.status.value,
        rounds_total=tour.total_rounds if tour.started or tour.settings.format is Format.SWISS else None,
        round=len(tour.rounds), players=tuple(Entrant(p.id, p.name, p.id in gone) for p in tour.players),
        created_by="admin", created_at=0.0)
    rows = tuple(StandingRow(s.rank, s.player, names[s.player], s.points,
                             tuple((tb.value, value) for tb, value in s.tiebreaks), 0, s.withdrawn)
                 for s in core_standings(tour))
    table = StandingsView(info, rows, rounds_counted(tour), None, tour.status.value == "finished")
    game = first_game
    rounds = []
    for rnd in tour.rounds:
        boards = []
        for board, p in enumerate(rnd.pairings, start=1):
            gid = None
            if p.black is not None:
                gid, game = game, game + 1
            boards.append(PairingView(board, p.white, names[p.white], p.black,
                                      names[p.black] if p.black else None, gid, p.result))
        rounds.append(RoundView(rnd.number, tuple(boards), None, rnd.complete))
    return info, table, rounds


def swiss(names: list[str], rounds: int = 3) -> Tournament:
    tour = new(Settings(Format.SWISS, rounds=rounds, name="Club open"))
    for i, name in enumerate(names):
        tour = join(tour, Player(f"u{i}", name, rating=2000 - i))
    return core_start(tour)


def test_standings_rows_are_the_cores_in_rank_order_with_their_tiebreaks():
    tour = swiss(["Ana", "Bob", "Cid", "Dan", "Eva"])
    for p in tour.rounds[0].pairings:
        if p.black is not None:
            tour = record_result(tour, 1, p.white, "1-0")
    tour = pair_next_round(tour)
    info, table, rounds = typed(tour)
    view = build_view(info, table, rounds, "en", watch)
    core = core_standings(tour)
    assert [(row.rank, row.name, row.points) for row in view.standings] == \
        [(s.rank, {p.id: p.name for p in tour.players}[s.player], s.points) for s in core]
    assert [row.tiebreaks for row in view.standings] == [tuple(v for _tb, v in s.tiebreaks) for s in core]
    assert [code for code, _name in view.tiebreaks] == ["BH-C1", "BH", "SB", "DE", "WIN"]
    assert view.tiebreaks[0][1] == t("en", "webt.tb.bh_c1")
    assert view.rounds_counted == 1 and view.standings_text == t("en", "webt.standings.after", n=1)
    data = view.to_json()
    assert data["standings"][0] == {"rank": 1, "name": view.standings[0].name, "points": 1.0,
                                    "tiebreaks": list(view.standings[0].tiebreaks), "withdrawn": False}
    assert data["tiebreaks"][0] == {"code": "BH-C1", "name": "Buchholz cut 1"}


def test_rounds_newest_first_with_results_byes_and_links_to_each_game():
    tour = swiss(["Ana", "Bob", "Cid", "Dan", "Eva"])
    played = [p for p in tour.rounds[0].pairings if p.black is not None]
    tour = record_result(tour, 1, played[0].white, "1/2-1/2")
    tour = record_result(tour, 1, played[1].white, "+-")
    tour = pair_next_round(tour)
    info, table, rounds = typed(tour)
    view = build_view(info, table, rounds, "en", watch)
    assert [r.number for r in view.rounds] == [2, 1] and view.rounds[1].complete and not view.rounds[0].complete
    first = view.to_json()["rounds"][1]
    assert first["title"] == "Round 1"
    games = [b for b in first["pairings"] if not b["bye"]]
    byes = [b for b in first["pairings"] if b["bye"]]
    assert [(b["result"], b["shown"]) for b in games] == [("1/2-1/2", "½-½"), ("+-", "+-")]
    assert [b["game"] for b in games] == [100, 101]
    assert [b["watch"] for b in games] == [watch(100), watch(101)]
    assert len(byes) == 1
    assert {k: byes[0][k] for k in ("black", "result", "game", "watch", "shown")} == \
        {"black": None, "result": None, "game": None, "watch": None, "shown": "bye"}
    running = view.to_json()["rounds"][0]["pairings"]
    assert {b["shown"] for b in running if not b["bye"]} == {"playing"}
    assert all(b["result"] is None for b in running)


def test_the_version_changes_when_a_result_comes_in_and_only_then():
    tour = swiss(["Ana", "Bob", "Cid", "Dan"])
    before = build_view(*typed(tour), "en", watch)
    assert build_view(*typed(tour), "en", watch).version == before.version
    after = build_view(*typed(record_result(tour, 1, tour.rounds[0].pairings[0].white, "0-1")), "en", watch)
    assert after.version != before.version


@pytest.mark.parametrize("lang", LANGUAGES)
def test_worded_in_the_language_asked(lang):
    tour = swiss(["Ana", "Bob", "Cid", "Dan"])
    view = build_view(*typed(tour), lang, watch)
    assert view.title == t(lang, "webt.title", name="Club open", id=7)
    assert view.format_name == t(lang, "webt.format.swiss")
    assert view.status_text == t(lang, "webt.status.running", round=1, total=3)
    assert view.rounds[0].title == t(lang, "webt.round", n=1)
    assert view.standings_text == t(lang, "webt.standings.none")
    assert [name for _code, name in view.tiebreaks] == [t(lang, tiebreak_key(c)) for c in
                                                         ("BH-C1", "BH", "SB", "DE", "WIN")]
    texts = page_texts(lang)
    assert texts["standings"] == t(lang, "webt.standings") and "title" not in texts


def test_a_round_robin_withdrawn_player_and_the_winner_at_the_end():
    tour = new(Settings(Format.ROUND_ROBIN, name="Berger"))
    for i, name in enumerate(["Ana", "Bob", "Cid", "Dan"]):
        tour = join(tour, Player(f"u{i}", name, rating=2000 - i))
    tour = core_start(tour)
    tour = leave(tour, "u3")
    while True:
        rnd = tour.rounds[-1]
        for p in rnd.pairings:
            if p.black is not None and p.result is None:
                tour = record_result(tour, rnd.number, p.white, "1-0")
        if len(tour.rounds) == tour.total_rounds:
            break
        tour = pair_next_round(tour)
    info, table, rounds = typed(tour)
    assert tour.status.value == "finished"
    champion = table.rows[0].name
    info = TournamentInfo(**{**info.__dict__, "winner_id": table.rows[0].player_id, "winner_name": champion})
    view = build_view(info, table, rounds, "it", watch)
    assert view.status == "finished" and view.winner == champion
    assert view.status_text == t("it", "webt.status.finished", name=champion)
    assert [code for code, _ in view.tiebreaks] == ["DE", "WIN", "SB"]
    dan = next(row for row in view.standings if row.name == "Dan")
    assert dan.withdrawn
    # Dan's later games are forfeits without a game: no link.
    forfeits = [b for r in view.rounds for b in r.boards if "Dan" in (b.white, b.black)]
    assert forfeits and {b.result for b in forfeits} <= {"+-", "-+"}
    assert all((b.watch is None) == (b.game is None) for r in view.rounds for b in r.boards)


def test_registering_shows_the_players_so_far():
    tour = new(Settings(Format.ROUND_ROBIN, name="Spring"))
    for i, name in enumerate(["Ana", "Bob"]):
        tour = join(tour, Player(f"u{i}", name))
    view = build_view(*typed(tour), "es", watch)
    assert view.status == "registering" and view.rounds == () and view.rounds_total is None
    assert view.status_text == t("es", "webt.status.registering", n=2)


def test_names_are_kept_as_data_for_the_page_to_write_as_text():
    evil = '<img src=x onerror="alert(1)">&amp;</td>'
    tour = swiss([evil, "Bob", "Cid"], rounds=2)
    view = build_view(*typed(tour), "en", watch)
    assert evil in [row.name for row in view.standings]
    assert evil in [b.white for b in view.rounds[0].boards] + [b.black for b in view.rounds[0].boards]


# -- the link ------------------------------------------------------------------------------------------


def test_a_tournament_link_opens_that_tournament_only():
    links = TournamentLinks(lambda: SECRET)
    token = links.token(12)
    assert links.path(12) == f"/t/12?t={token}"
    assert links.read(token) == 12
    assert links.read(f" {token} ") == 12
    for bad in (None, "", "12", "t12", "t12s", token[:-1] + ("A" if token[-1] != "A" else "B"),
                token.replace("t12s", "t13s"), "w12s" + token.split("s", 1)[1]):
        assert links.read(bad) is None, bad
    # Another database's secret signs another key.
    assert TournamentLinks(lambda: b"other" * 8).read(token) is None


def test_its_key_is_its_own():
    """A game's spectator signature (its own label) never passes for a tournament's, and the
    other way round: each use of the link secret has a key of its own."""
    links = TournamentLinks(lambda: SECRET)
    game_key = hmac.new(SECRET, b"draughts web board spectator link v1", hashlib.sha256).digest()
    game_mac = base64.urlsafe_b64encode(hmac.new(game_key, b"watch:12", hashlib.sha256).digest()[:16]).rstrip(b"=")
    assert links.mac(12) != game_mac.decode()
    assert links.read(f"t12s{game_mac.decode()}") is None


def test_the_signature_is_the_documented_one():
    """docs/web.md: 16 bytes of HMAC-SHA256(HMAC-SHA256(secret, label), "tournament:<id>"), base64url."""
    key = hmac.new(SECRET, b"draughts web board tournament link v1", hashlib.sha256).digest()
    mac = base64.urlsafe_b64encode(hmac.new(key, b"tournament:12", hashlib.sha256).digest()[:16]).rstrip(b"=")
    assert TournamentLinks(lambda: SECRET).token(12) == "t12s" + mac.decode() and len(mac) == 22
