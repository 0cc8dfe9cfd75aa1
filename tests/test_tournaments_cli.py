"""``python -m bot tournaments list|show|export`` (issue 32's contract for organisers), on a
database the real service filled in-process: a 4-player Swiss played to the end through the use
cases, and one still registering.  ``export --trf`` is read back by caissify-pairings' checker."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from caissify_pairings.fpc import check_trf
from test_operator_cli import ok, run

from bot.rules import Position
from bot.service import GameService
from bot.service.features.identity import Caller, Player, Where
from bot.service.features.results import MoveRequest
from bot.service.features.results_games import GameRef
from bot.service.features.results_tournaments import NewTournamentArgs, Started, TournamentCreated
from bot.storage import SQLiteStore

T0 = 1_700_000_000.0
RESULTS = {"1-0", "0-1", "1/2-1/2", "+-", "-+", None}


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("tournaments") / "t.db"
    store = SQLiteStore(path)
    now = [T0]
    service = GameService(store, clock=lambda: now[0], rng=random.Random(3))
    uc = service.app.tournaments

    def caller(user: str, chat: str = "group-1") -> Caller:
        record = store.ensure_chat("test", chat, "group", now[0])
        return Caller(Player("test", user, user.capitalize(), user), Where("test", chat), now[0], now[0], record)

    assert isinstance(uc.create(caller("admin"), NewTournamentArgs("swiss", "italian", rounds=3,
                                                                   move_seconds=3600), "en"), TournamentCreated)
    for user in ("ana", "bob", "cid", "dan"):
        uc.join(caller(user))
    assert isinstance(uc.start(caller("admin")), Started)
    rng = random.Random(7)
    for _ in range(3):
        (info,) = [t for t in uc.find() if t.chat_id == "group-1"]
        for rnd in uc.rounds(info.id)[-1:]:
            for board in rnd.pairings:
                if board.game_id is None or board.result is not None:
                    continue
                for user in (board.white_id, board.black_id):
                    assert user is not None
                    game = store.games.get(board.game_id)
                    assert game is not None
                    move = str(Position.from_fen("italian", game.fen).legal_moves()[0])
                    service.app.play.move(caller(user), MoveRequest(move, game=board.game_id))
                loser = rng.choice([board.white_id, board.black_id])
                assert loser is not None
                service.app.play.resign(caller(loser), GameRef(board.game_id))
                service.app.play.resign(caller(loser), GameRef(board.game_id))
        now[0] += 60
    uc.create(caller("admin", "group-2"), NewTournamentArgs("roundrobin", "spanish"), "en")
    uc.join(caller("eve", "group-2"))
    service.close()
    store.close()
    return path


def test_list_prints_one_line_per_tournament_newest_first(db: Path) -> None:
    lines = ok(run("tournaments", "list", db=db, process=True)).splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("#2\ttest\tgroup-2\troundrobin\tspanish\tregistering\t1 players")
    assert lines[1].startswith("#1\ttest\tgroup-1\tswiss\titalian\tfinished\t4 players\tround 3/3\twinner ")


def test_list_json(db: Path) -> None:
    data = json.loads(ok(run("tournaments", "list", "--json", db=db)))
    assert [t["id"] for t in data] == [2, 1]
    swiss = data[1]
    assert {k: swiss[k] for k in ("format", "variant", "status", "player_count", "round_count", "rounds_paired")} == {
        "format": "swiss", "variant": "italian", "status": "finished", "player_count": 4, "round_count": 3,
        "rounds_paired": 3}
    assert swiss["winner"]["id"] in {"ana", "bob", "cid", "dan"}
    assert data[0]["round_count"] is None and data[0]["winner"] is None


def test_show_json_has_the_standings_in_rank_order_and_every_round(db: Path) -> None:
    data = json.loads(ok(run("tournaments", "show", "1", "--json", db=db)))
    assert (data["format"], data["variant"], data["status"]) == ("swiss", "italian", "finished")
    ranks = [p["rank"] for p in data["standings"]]
    assert ranks == sorted(ranks) and len(ranks) == 4
    assert list(data["standings"][0]["tiebreaks"]) == ["BH-C1", "BH", "SB", "DE", "WIN"]
    assert data["standings"][0]["id"] == data["winner"]["id"]
    assert [r["round"] for r in data["rounds_played"]] == [1, 2, 3]
    points = {p["id"]: 0.0 for p in data["standings"]}
    for rnd in data["rounds_played"]:
        assert rnd["byes"] == []
        for g in rnd["games"]:
            assert g["result"] in RESULTS and isinstance(g["game"], int)
            w = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}[g["result"]]
            points[g["white"]["id"]] += w
            points[g["black"]["id"]] += 1 - w
    assert {p["id"]: p["points"] for p in data["standings"]} == points


def test_show_json_in_the_issue_s_shape(db: Path) -> None:
    """The issue's contract: ``players`` in rank order with points and tie-breaks, ``rounds`` with
    their games (white, black, game id, result) and byes; the counts beside them."""
    data = json.loads(ok(run("tournaments", "show", "1", "--json", db=db)))
    assert (data["player_count"], data["round_count"], data["rounds_paired"]) == (4, 3, 3)
    players = data["players"]
    assert [p["rank"] for p in players] == sorted(p["rank"] for p in players) and len(players) == 4
    assert set(players[0]) >= {"id", "name", "rank", "points", "tiebreaks", "withdrawn"}
    assert list(players[0]["tiebreaks"]) == ["BH-C1", "BH", "SB", "DE", "WIN"]
    assert players[0]["id"] == data["winner"]["id"] and not any(p["withdrawn"] for p in players)
    assert [r["number"] for r in data["rounds"]] == [1, 2, 3]
    points = {p["id"]: 0.0 for p in players}
    for rnd in data["rounds"]:
        assert rnd["byes"] == [] and len(rnd["games"]) == 2
        for g in rnd["games"]:
            assert set(g) >= {"white", "black", "game_id", "result"}
            assert g["result"] in RESULTS and isinstance(g["game_id"], int)
            w = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5, "+-": 1.0, "-+": 0.0}[g["result"]]
            points[g["white"]] += w
            points[g["black"]] += 1 - w
    assert {p["id"]: p["points"] for p in players} == points
    # The first week's shape is kept beside it.
    assert data["standings"] == [{k: p[k] for k in data["standings"][0]} for p in players]
    assert [r["round"] for r in data["rounds_played"]] == [1, 2, 3]


def test_show_json_of_a_tournament_still_registering(db: Path) -> None:
    data = json.loads(ok(run("tournaments", "show", "2", "--json", db=db)))
    assert data["status"] == "registering" and data["rounds"] == [] and data["round_count"] is None
    assert [p["id"] for p in data["players"]] == ["eve"] and data["player_count"] == 1


def test_show_in_text_and_a_missing_tournament(db: Path) -> None:
    text = ok(run("tournaments", "show", "1", db=db))
    assert text.startswith("tournament #1: Tournament, swiss of italian on test, chat group-1: finished, round 3 of 3")
    assert "round 3:" in text
    missing = run("tournaments", "show", "9", db=db)
    assert missing.returncode == 1 and missing.stderr == "error: there is no tournament #9\n"


def test_export_trf_is_read_by_the_pairing_checker(db: Path) -> None:
    trf = ok(run("tournaments", "export", "1", "--trf", db=db, process=True))
    report = check_trf(trf)
    assert report["summary"]["rounds_matched"] == 3 and report["summary"]["rounds_mismatched"] == 0
    assert run("tournaments", "export", "1", db=db).returncode == 2          # --trf is required
    assert run("tournaments", "export", "9", "--trf", db=db).returncode == 1
