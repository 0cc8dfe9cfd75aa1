"""The analysis on the board's JSON (issue 34): ``GET /api/g/<id>/analysis`` and the page's own request
``POST /api/g/<id>/analysis``, on the real aiohttp application and the real service on a real SQLite
file; the analysis is made by the real Analysis use case (the engine in a thread, a small node budget)
and read back as stored."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from aiohttp.test_utils import TestClient, TestServer
from review_games import scripted
from web_helpers import WebChat, fen_of

from bot.ai import MoveNote
from bot.i18n import t
from bot.platforms.web import WebConfig, make_app
from bot.rules import Position
from bot.service import GameService
from bot.service.features import analysis as analysis_feature
from bot.service.thinking import Thinker

# A Spanish game the rules engine picks (test_review_api's stride): Black's 6th move 23-19 and
# White's 8th move 31-22 are the engine's marks at this budget.
MOVES = scripted("spanish", 16)
TEST_NODES = (3_000, 12_000)


@pytest.fixture(autouse=True)
def small_budgets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(analysis_feature, "ANALYSIS_NODES", TEST_NODES)


@pytest.fixture
def an(chat: WebChat) -> Iterator[WebChat]:
    """The web chat on a service whose engine runs in a thread (the use case's pool, queue and limits)."""
    executor = ThreadPoolExecutor(1)
    chat.service.close()
    chat.service = GameService(chat.storage, clock=lambda: chat.now[0], rng=random.Random(1),
                               thinker=Thinker(executor))
    yield chat
    assert chat.service.settle(60)
    executor.shutdown(wait=True, cancel_futures=True)


@pytest.fixture
async def client(an: WebChat) -> AsyncIterator[TestClient]:
    app = make_app(an.service, WebConfig(poll_seconds=0.3))
    async with TestClient(TestServer(app)) as test_client:
        yield test_client


def finished(chat: WebChat, moves: list[str] = MOVES) -> int:
    game = chat.new_game("spanish")
    for i, move in enumerate(moves):
        chat.say("ana" if i % 2 == 0 else "bob", f"/m #{game} {move}")
    assert chat.storage.game(game).ply == len(moves)
    chat.say("ana", f"/resign #{game}")
    chat.say("ana", f"/resign #{game}")
    assert chat.storage.game(game).status == "finished"
    return game


def watch(chat: WebChat, game: int) -> dict[str, str]:
    return {"Authorization": "Bearer " + chat.service.web.watch_token(game)}


def seat(chat: WebChat, game: int, user: str = "ana") -> dict[str, str]:
    path = chat.service.web.link_path(game, "test", user)
    return {"Authorization": "Bearer " + path.split("t=", 1)[1].split("&", 1)[0]}


def analysed(chat: WebChat, game: int) -> list[dict]:
    """The game analysed through the chat's /analysis (the use case), and its stored notes."""
    chat.say("ana", f"/analysis #{game}")
    assert chat.service.settle(60)
    row = chat.storage.game(game)
    kept = chat.storage.games.analysis(game, row.ply)
    assert kept is not None
    return list(kept.notes)


async def test_the_analysis_json_matches_the_stored_analysis(an, client):
    game = finished(an)
    notes = analysed(an, game)
    answer = await client.get(f"/api/g/{game}/analysis", headers=watch(an, game))
    assert answer.status == 200
    data = await answer.json()
    assert data["ok"] and data["status"] == "ready" and data["plies"] == len(MOVES)
    assert data["first_turn"] == "W"
    # A point of the graph for every ply, numbered as the move list is (the position after ply N).
    assert [e["ply"] for e in data["evaluations"]] == list(range(1, len(MOVES) + 1))
    engine = [Position.start("spanish")]
    for move in MOVES:
        engine.append(engine[-1].play(engine[-1].parse_move(move)))
    marked = {}
    for n in notes:
        before = engine[n["ply"]]
        note = MoveNote(n["ply"], before.parse_move(n["move"]), before.parse_move(n["best"]),
                        n["best_score"], n["played_score"], n["forced"])
        white = before.turn.value == "W"
        assert data["evaluations"][n["ply"]]["eval"] == pytest.approx(
            max(-10, min(10, (n["played_score"] if white else -n["played_score"]) / 100)), abs=0.01)
        if note.mark:
            marked[n["ply"] + 1] = (note, n)
    assert marked, "the scripted game has marked moves at this budget"
    shown = {m["ply"]: m for m in data["notes"] if m["mark"]}
    assert set(shown) == set(marked)
    for ply, (note, raw) in marked.items():
        item = shown[ply]
        assert item["notation"] == str(note.move) and item["mark"] == note.mark
        assert item["better"]["notation"] == str(note.best)
        assert item["better"]["path"] == list(note.best.path)
        # The refuting line: the stored line, each step the rules engine's position after it.
        assert [s["notation"] for s in item["line"]] == raw["line"] and raw["line"]
        pos = engine[ply]
        for step in item["line"]:
            pos = pos.play(pos.parse_move(step["notation"]))
            assert step["fen"] == pos.fen()
            assert step["pieces"] == {str(sq): code for sq, code in pos.pieces().items()}


async def test_no_analysis_yet_a_player_may_ask_for_one_through_the_use_case(an, client):
    game = finished(an)
    spectator = await (await client.get(f"/api/g/{game}/analysis", headers=watch(an, game))).json()
    assert spectator["status"] == "none" and spectator["can_request"] is False and spectator["notes"] == []
    player = await (await client.get(f"/api/g/{game}/analysis", headers=seat(an, game))).json()
    assert player["status"] == "none" and player["can_request"] is True
    refused = await client.post(f"/api/g/{game}/analysis", headers=watch(an, game))
    assert refused.status == 403 and (await refused.json())["reason"] == "spectator"
    asked = await client.post(f"/api/g/{game}/analysis", headers=seat(an, game))
    body = await asked.json()
    assert asked.status == 200 and body["outcome"] == "started"
    assert body["message"].startswith(t("en", "analysis.started", id=game, seconds=0).split("(")[0])
    assert an.service.settle(60)
    ready = await (await client.get(f"/api/g/{game}/analysis", headers=watch(an, game))).json()
    assert ready["status"] == "ready" and any(m["mark"] for m in ready["notes"])
    # Asked again, nothing is started: the analysis is there.
    again = await client.post(f"/api/g/{game}/analysis", headers=seat(an, game))
    assert again.status == 409 and (await again.json())["error"] == t("en", "web.analysis_ready")


async def test_a_game_being_played_has_no_analysis_and_a_link_is_needed(an, client):
    game = an.new_game("spanish")
    data = await (await client.get(f"/api/g/{game}/analysis", headers=watch(an, game))).json()
    assert data["status"] == "active" and data["can_request"] is False
    asked = await client.post(f"/api/g/{game}/analysis", headers=seat(an, game))
    assert asked.status == 409
    assert (await asked.json())["error"] == t("en", "analysis.active", id=game)
    bare = await client.get(f"/api/g/{game}/analysis")
    assert bare.status == 403 and (await bare.json())["reason"] == "need_link"
    other = finished(an)
    wrong = await client.get(f"/api/g/{game}/analysis", headers=watch(an, other))
    assert wrong.status == 403 and (await wrong.json())["reason"] == "other_game"


async def test_a_known_ending_note_is_on_its_move(an, client):
    # Two white men against one black man: in the endgame tables from the first move on.
    fen = fen_of("spanish", [(6, 2), (7, 5)], [(1, 1)])
    moves = ["2-5", "28-23", "5-10", "23-19"]
    game = an.new_game("spanish")
    an.set_position(game, fen)
    for i, move in enumerate(moves):
        an.say("ana" if i % 2 == 0 else "bob", f"/m #{game} {move}")
    an.say("bob", f"/resign #{game}")
    an.say("bob", f"/resign #{game}")
    notes = analysed(an, game)
    assert notes[0]["table"] is not None
    data = await (await client.get(f"/api/g/{game}/analysis", headers=watch(an, game))).json()
    first = next(n for n in data["notes"] if n["ply"] == 1)
    assert first["notation"] == "2-5" and first["mark"] == "" and "better" not in first
    assert first["ending"].startswith(t("en", "analysis.ending_entered", number="1.", material="", result="")[:7])
    spanish = await (await client.get(f"/api/g/{game}/analysis?lang=es", headers=watch(an, game))).json()
    assert spanish["notes"][0]["ending"].startswith("desde 1.")
