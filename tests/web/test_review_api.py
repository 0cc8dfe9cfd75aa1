"""The review JSON (issue 34): ``/api/g/<id>/moves`` and ``/api/g/<id>/ply/<n>`` on the real aiohttp
application and the real service on a real SQLite file, a game played through the chat."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp.test_utils import TestClient, TestServer
from review_games import scripted
from web_helpers import PLATFORM, WebChat

from bot.i18n import t
from bot.platforms.web import WebConfig, make_app
from bot.rules import Position

SPANISH = scripted("spanish", 12)


@pytest.fixture
async def client(chat: WebChat) -> AsyncIterator[TestClient]:
    app = make_app(chat.service, WebConfig(poll_seconds=0.3))
    async with TestClient(TestServer(app)) as test_client:
        yield test_client


def played(chat: WebChat, moves: list[str]) -> int:
    game = chat.new_game("spanish")
    for i, move in enumerate(moves):
        replies = chat.say("ana" if i % 2 == 0 else "bob", f"/m {move}")
        assert chat.storage.game(game).ply == i + 1, (move, [r.text for r in replies])
    return game


def watch(chat: WebChat, game: int) -> dict[str, str]:
    return {"Authorization": "Bearer " + chat.service.web.watch_token(game)}


def positions(moves: list[str]) -> list[Position]:
    pos = Position.start("spanish")
    seen = [pos]
    for move in moves:
        pos = pos.play(pos.parse_move(move))
        seen.append(pos)
    return seen


async def test_moves_give_every_ply_with_number_side_notation_captures_and_path(chat, client):
    game = played(chat, SPANISH)
    answer = await client.get(f"/api/g/{game}/moves", headers=watch(chat, game))
    assert answer.status == 200
    data = await answer.json()
    assert data["ok"] and data["plies"] == len(SPANISH) and data["variant"] == "spanish"
    assert data["start"]["fen"] == Position.start("spanish").fen()
    moves = data["moves"]
    assert [m["ply"] for m in moves] == list(range(1, len(SPANISH) + 1))
    assert [m["number"] for m in moves] == [1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6]
    assert [m["side"] for m in moves] == ["W", "B"] * 6
    engine = positions(SPANISH)
    for i, m in enumerate(moves):
        expected = engine[i].parse_move(SPANISH[i])
        assert m["notation"] == str(expected)
        assert m["path"] == list(expected.path) and m["captured"] == list(expected.captured)
    assert moves[6]["captured"] and "x" in moves[6]["notation"]


async def test_the_position_after_every_ply_is_the_rules_engines(chat, client):
    game = played(chat, SPANISH)
    engine = positions(SPANISH)
    for n, pos in enumerate(engine):
        answer = await client.get(f"/api/g/{game}/ply/{n}", headers=watch(chat, game))
        assert answer.status == 200, n
        data = await answer.json()
        assert data["ply"] == n and data["fen"] == pos.fen() and data["turn"] == pos.turn.value
        assert data["pieces"] == {str(sq): code for sq, code in pos.pieces().items()}
        assert (data["move"] is None) == (n == 0)
        if n:
            assert data["move"]["notation"] == str(engine[n - 1].parse_move(SPANISH[n - 1]))
    # The last ply is the game as stored.
    assert data["fen"] == chat.storage.game(game).fen


async def test_a_seat_link_reads_them_too_and_a_bare_id_shows_nothing(chat, client):
    game = played(chat, SPANISH[:2])
    seat = {"Authorization": "Bearer " + chat.service.web.seat_token(game, PLATFORM, "ana")}
    assert (await client.get(f"/api/g/{game}/moves", headers=seat)).status == 200
    assert (await client.get(f"/api/g/{game}/ply/1?t={chat.service.web.watch_token(game)}")).status == 200
    for path in (f"/api/g/{game}/moves", f"/api/g/{game}/ply/1"):
        bare = await client.get(path)
        body = await bare.json()
        assert bare.status == 403 and body == {"ok": False, "reason": "need_link", "error": t("en", "web.need_link")}
        forged = await client.get(path, headers={"Authorization": "Bearer w" + str(game) + "s" + "A" * 22})
        assert forged.status == 401 and "plies" not in await forged.json()
        other = await client.get(path, headers=watch(chat, game + 1))
        assert other.status == 403 and (await other.json())["reason"] == "other_game"


@pytest.mark.parametrize(("n", "status", "reason"), [
    ("3", 404, "no_ply"), ("999999", 404, "no_ply"), ("-1", 400, "bad_ply"), ("x", 400, "bad_ply"),
    ("1.5", 400, "bad_ply"), ("１", 400, "bad_ply"), ("1234567", 400, "bad_ply")])
async def test_a_bad_ply_is_a_json_error_in_the_pages_language(chat, client, n, status, reason):
    game = played(chat, SPANISH[:2])
    version = chat.storage.game(game).version
    answer = await client.get(f"/api/g/{game}/ply/{n}?lang=es", headers=watch(chat, game))
    assert answer.status == status
    assert await answer.json() == {"ok": False, "reason": reason, "error": t("es", f"web.{reason}")}
    assert chat.storage.game(game).version == version


async def test_no_such_game(chat, client):
    game = played(chat, [])
    missing = game + 5
    headers = {"Authorization": "Bearer " + chat.service.web.watch_token(missing)}
    for path in (f"/api/g/{missing}/moves", f"/api/g/{missing}/ply/0"):
        answer = await client.get(path, headers=headers)
        assert answer.status == 404 and (await answer.json())["reason"] == "no_game"


async def test_a_game_set_up_with_black_to_move_numbers_its_first_ply_as_blacks(chat, client):
    game = chat.new_game("spanish")
    start = Position.start("spanish").fen().replace("W:", "B:", 1)
    chat.set_position(game, start)
    first = str(sorted(Position.from_fen("spanish", start).legal_moves(), key=str)[0])
    chat.say("bob", f"/m {first}")
    assert chat.storage.game(game).ply == 1
    data = await (await client.get(f"/api/g/{game}/moves", headers=watch(chat, game))).json()
    assert data["start"]["turn"] == "B"
    assert [(m["number"], m["side"], m["notation"]) for m in data["moves"]] == [(1, "B", first)]
