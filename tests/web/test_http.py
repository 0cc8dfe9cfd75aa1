"""The web board over HTTP: the real aiohttp application on aiohttp's test server, the real service
on a real SQLite file.  Moves from the page go through the chat's use case, the game's chat hears
about them through the outbox, and the event stream brings moves made anywhere else."""

from __future__ import annotations

import asyncio
import html as html_lib
import io
import json
import time
from collections.abc import AsyncIterator

import pytest
from aiohttp.test_utils import TestClient, TestServer
from PIL import Image
from web_helpers import GROUP, PLATFORM, WebChat, two_routes

from bot.i18n import t
from bot.platforms.web import WebConfig, make_app
from bot.rules import Position, get_variant
from bot.service import GameService
from bot.service.chat.wording import to_name

# Generous: the stream must bring the move (the page polls every 0.3 s); the time it took is printed.
STREAM_WAIT = 10.0


@pytest.fixture
async def client(chat: WebChat) -> AsyncIterator[TestClient]:
    app = make_app(chat.service, WebConfig(poll_seconds=0.3))
    async with TestClient(TestServer(app)) as test_client:
        yield test_client


def auth(chat: WebChat, game: int, user: str, **kw) -> dict[str, str]:
    return {"Authorization": "Bearer " + chat.service.web.seat_token(game, PLATFORM, user, **kw)}


def watch(chat: WebChat, game: int) -> dict[str, str]:
    """A spectator's credential: the signed spectator link's token."""
    return {"Authorization": "Bearer " + chat.service.web.watch_token(game)}


def delivered(chat: WebChat) -> list:
    items = chat.service.pending_messages(PLATFORM, limit=100)
    for item in items:
        chat.service.message_sent(item.id)
    return items


async def test_the_page_with_its_script_and_style_weighs_under_150_kb(chat, client):
    game = chat.new_game("triestina")
    page = await client.get(f"/g/{game}?lang=es&t={chat.service.web.watch_token(game)}")
    assert page.status == 200 and page.content_type == "text/html"
    html = await page.text()
    assert t("es", "web.title", id=game) in html and "&quot;lang&quot;:&quot;es&quot;" in html
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    assert page.headers["Referrer-Policy"] == "no-referrer"
    total = len(html.encode())
    for name in ("board.js", "board.css"):
        response = await client.get(f"/static/{name}")
        assert response.status == 200 and f'/static/{name}' in html
        total += len(await response.read())
    print(f"page weight: {total} bytes")
    assert total < 150 * 1024
    assert (await client.get(f"/g/999?t={chat.service.web.watch_token(999)}")).status == 404


async def test_the_icon_is_served_and_linked_from_the_page(chat, client):
    # Browsers ask every page load for it: a 404 there is an error in the page's console.
    game = chat.new_game("triestina")
    html = await (await client.get(f"/g/{game}?t={chat.service.web.watch_token(game)}")).text()
    assert '<link rel="icon" href="/favicon.ico"' in html
    response = await client.get("/favicon.ico")
    assert response.status == 200 and response.content_type == "image/x-icon"
    body = await response.read()
    with Image.open(io.BytesIO(body)) as icon:
        assert icon.format == "ICO" and icon.size == (32, 32)


async def test_the_page_gets_the_chats_words_for_a_move_played(chat, client):
    # The message line says the latest move as the chat does; the page fills in who, what and where.
    game = chat.new_game("triestina")
    html = await (await client.get(f"/g/{game}?lang=it&t={chat.service.web.watch_token(game)}")).text()
    boot = json.loads(html_lib.unescape(html.split('data-boot="', 1)[1].split('"', 1)[0]))
    template = boot["texts"]["move_played"]
    assert template.format(name="Ana", move="9-14", id=game) == t("it", "move.played", name="Ana", move="9-14",
                                                                   id=game)


async def test_get_state(chat, client):
    game = chat.new_game("spanish")
    response = await client.get(f"/api/g/{game}/state", headers=auth(chat, game, "ana"))
    data = await response.json()
    assert response.status == 200 and data["ok"]
    state = data["state"]
    assert state["you"] == "W" and state["variant"] == "spanish" and state["moves"]
    spectator = (await (await client.get(f"/api/g/{game}/state", headers=watch(chat, game))).json())["state"]
    assert spectator["you"] is None and spectator["moves"] == []


async def test_a_legal_move_is_stored_and_the_chat_is_told_as_for_a_typed_move(chat, client):
    game = chat.new_game("italian")
    delivered(chat)
    move = Position.start("italian").legal_moves()[0]
    response = await client.post(f"/api/g/{game}/move", json={"path": list(move.path), "ply": 0},
                                 headers=auth(chat, game, "ana"))
    data = await response.json()
    assert response.status == 200 and data["ok"], data
    assert data["state"]["ply"] == 1 and data["state"]["last_move"]["notation"] == str(move)
    assert [m.notation for m in chat.storage.moves(game)] == [str(move)]
    assert t("en", "move.played", name="Ana", move=str(move), id=game) in data["message"]
    [item] = delivered(chat)
    assert item.chat_id == GROUP and item.reply.game_id == game
    assert item.reply.text.startswith(t("en", "move.played", name="Ana", move=str(move), id=game))
    assert item.reply.image is not None and item.reply.buttons       # Bob's pieces to touch
    # The reply a typed move gets, in a twin game: the same words but for the game's number.
    twin = chat.new_game("italian", "carl", "dora")
    delivered(chat)
    [typed] = chat.say("carl", f"/m {move}")
    assert typed.text.replace(f"#{twin}", "#N").replace("Carl", "Ana").replace("Dora", "Bob") == \
        item.reply.text.replace(f"#{game}", "#N")
    assert [[b.label for b in row] for row in typed.buttons] == [[b.label for b in row] for row in item.reply.buttons]


async def test_a_move_chosen_among_two_capture_routes_is_that_route(chat, client):
    game = chat.new_game("spanish")
    chat.set_position(game, two_routes("spanish"))
    v = get_variant("spanish")
    route = [v.rc_to_square(6, 2), v.rc_to_square(4, 4), v.rc_to_square(2, 2)]
    state = (await (await client.get(f"/api/g/{game}/state", headers=auth(chat, game, "ana"))).json())["state"]
    assert sum(1 for m in state["moves"] if m["path"][0] == route[0] and m["path"][-1] == route[-1]) == 2
    response = await client.post(f"/api/g/{game}/move", json={"path": route, "ply": 0},
                                 headers=auth(chat, game, "ana"))
    assert response.status == 200, await response.text()
    row = chat.storage.game(game)
    assert list(row.last_path) == route
    assert sorted(row.last_captured) == sorted([v.rc_to_square(5, 3), v.rc_to_square(3, 3)])


async def test_an_illegal_move_is_explained_in_the_asked_language_and_changes_nothing(chat, client):
    game = chat.new_game("italian")
    before = chat.storage.dump()
    # A black man, touched by White.
    pos = Position.start("italian")
    black = min(sq for sq, code in pos.pieces().items() if code == "b")
    for lang in ("es", "it", "en"):
        response = await client.post(f"/api/g/{game}/move?lang={lang}", json={"path": [black, black + 4]},
                                     headers=auth(chat, game, "ana"))
        data = await response.json()
        assert response.status == 422 and not data["ok"]
        assert data["error"] == t(lang, "err.not_your_piece", square=black)
    # Typed notation is judged the same way: a move that is not there.
    response = await client.post(f"/api/g/{game}/move?lang=es", json={"move": "22-14"},
                                 headers=auth(chat, game, "ana"))
    assert response.status == 422 and (await response.json())["error"]
    # Bob, not to move.
    response = await client.post(f"/api/g/{game}/move?lang=it", json={"path": [black, black + 4]},
                                 headers=auth(chat, game, "bob"))
    assert response.status == 422
    assert (await response.json())["error"] == t("it", "err.not_your_turn", name="Ana", to_name=to_name("it", "Ana"))
    assert chat.storage.dump() == before


async def test_an_out_of_date_move_is_refused(chat, client):
    game = chat.new_game("italian")
    move = Position.start("italian").legal_moves()[0]
    response = await client.post(f"/api/g/{game}/move", json={"path": list(move.path), "ply": 3},
                                 headers=auth(chat, game, "ana"))
    assert response.status == 409 and (await response.json())["error"] == t("en", "move.stale")
    assert chat.storage.moves(game) == []


async def test_forged_expired_and_other_credentials_are_refused(chat, client):
    game = chat.new_game("italian")
    other = chat.new_game("italian", "carl", "dora")
    move = Position.start("italian").legal_moves()[0]
    body = {"path": list(move.path), "ply": 0}
    before = chat.storage.dump()
    token = chat.service.web.seat_token(game, PLATFORM, "ana")
    forged = token[:-3] + ("AAA" if not token.endswith("AAA") else "BBB")
    response = await client.post(f"/api/g/{game}/move?lang=es", json=body,
                                 headers={"Authorization": "Bearer " + forged})
    assert response.status == 401 and (await response.json())["error"] == t("es", "web.link_invalid")
    expired = auth(chat, game, "ana", seconds=10)
    chat.now[0] += 11
    response = await client.post(f"/api/g/{game}/move?lang=it", json=body, headers=expired)
    assert response.status == 401 and (await response.json())["error"] == t("it", "web.link_expired")
    # Dora's seat in her own game used on Ana's.
    response = await client.post(f"/api/g/{game}/move", json=body, headers=auth(chat, other, "dora"))
    assert response.status == 403 and (await response.json())["error"] == t("en", "web.other_game")
    # A signed seat for someone who does not play in the game.
    response = await client.post(f"/api/g/{game}/move", json=body, headers=auth(chat, game, "eve"))
    assert response.status == 403
    # The token in the query string (as the event stream sends it) is read the same way.
    response = await client.get(f"/api/g/{game}/state?t={forged}")
    assert response.status == 401
    assert chat.storage.dump() == before


async def test_a_spectator_cannot_act(chat, client):
    game = chat.new_game("italian")
    before = chat.storage.dump()
    move = Position.start("italian").legal_moves()[0]
    for path, body in (("move", {"path": list(move.path)}), ("draw", {}), ("resign", {"confirm": True})):
        response = await client.post(f"/api/g/{game}/{path}?lang=es", json=body, headers=watch(chat, game))
        assert response.status == 403 and (await response.json())["error"] == t("es", "web.spectator_only")
        response = await client.post(f"/api/g/{game}/{path}?lang=es", json=body)
        assert response.status == 403 and (await response.json())["error"] == t("es", "web.need_link")
    assert chat.storage.dump() == before


async def test_a_draw_offered_and_accepted_on_the_page_is_told_in_the_chat(chat, client):
    game = chat.new_game("italian")
    delivered(chat)
    response = await client.post(f"/api/g/{game}/draw", headers=auth(chat, game, "ana"))
    data = await response.json()
    assert response.status == 200 and data["state"]["draw_offer"] == "W"
    [offer] = delivered(chat)
    assert offer.reply.text == t("en", "draw.offered", name="Ana", other="Bob", id=game)
    assert offer.reply.buttons                         # Bob can accept in the chat too
    again = await client.post(f"/api/g/{game}/draw", headers=auth(chat, game, "ana"))
    assert again.status == 409 and (await again.json())["error"] == t("en", "draw.already")
    response = await client.post(f"/api/g/{game}/draw", headers=auth(chat, game, "bob"))
    data = await response.json()
    assert response.status == 200 and data["state"]["status"] == "finished"
    assert chat.storage.game(game).result_reason == "agreement"
    [ended] = delivered(chat)
    assert t("en", "game.over", id=game) in ended.reply.text and ended.reply.image is not None


async def test_resigning_needs_the_confirmation_and_is_told_in_the_chat(chat, client):
    game = chat.new_game("italian")
    delivered(chat)
    response = await client.post(f"/api/g/{game}/resign", json={}, headers=auth(chat, game, "bob"))
    assert response.status == 400 and chat.storage.game(game).status == "active"
    response = await client.post(f"/api/g/{game}/resign", json={"confirm": True}, headers=auth(chat, game, "bob"))
    data = await response.json()
    assert response.status == 200 and data["state"]["result"]["winner"] == "W"
    assert chat.storage.game(game).result_reason == "resign"
    [ended] = delivered(chat)
    assert t("en", "result.win.resign", winner="Ana", loser="Bob") in ended.reply.text


async def test_pdn_download(chat, client):
    game = chat.new_game("italian")
    move = Position.start("italian").legal_moves()[0]
    chat.say("ana", f"/m {move}")
    response = await client.get(f"/api/g/{game}/pdn", headers=watch(chat, game))
    text = await response.text()
    assert response.status == 200 and f'game-{game}.pdn' in response.headers["Content-Disposition"]
    assert f'[Event "Game #{game}"]' in text and str(move) in text


async def _next_state(stream, deadline: float) -> dict:
    """The next ``state`` event of a stream (keepalive comments skipped)."""
    event: list[str] = []
    while True:
        line = await asyncio.wait_for(stream.content.readline(), timeout=max(0.1, deadline - time.monotonic()))
        text = line.decode().rstrip("\n")
        if text == "":
            if any(x.startswith("event: state") for x in event):
                data = next(x[6:] for x in event if x.startswith("data: "))
                return json.loads(data)
            event = []
            continue
        event.append(text)


async def test_the_stream_brings_a_move_typed_in_the_chat(chat, client):
    game = chat.new_game("italian")
    stream = await client.get(f"/api/g/{game}/events", headers=auth(chat, game, "bob"))
    assert stream.status == 200 and stream.content_type == "text/event-stream"
    first = await _next_state(stream, time.monotonic() + STREAM_WAIT)
    assert first["ply"] == 0 and first["you"] == "B"
    move = Position.start("italian").legal_moves()[0]
    started = time.monotonic()
    await asyncio.to_thread(chat.say, "ana", f"/m {move}")
    fresh = await _next_state(stream, started + STREAM_WAIT)
    print(f"typed move on the stream after {time.monotonic() - started:.3f} s")
    assert fresh["ply"] == 1 and fresh["last_move"]["notation"] == str(move) and fresh["moves"]
    stream.close()


async def test_the_stream_brings_a_move_made_by_another_process(chat, client, now):
    """Another service on the same file (as another process would be): nothing wakes this one, its
    stream finds the move by polling the game's version."""
    game = chat.new_game("italian")
    stream = await client.get(f"/api/g/{game}/events?t={chat.service.web.watch_token(game)}")
    assert stream.status == 200
    first = await _next_state(stream, time.monotonic() + STREAM_WAIT)
    assert first["ply"] == 0 and first["you"] is None
    from bot.storage import Storage
    storage = Storage(chat.storage.path)
    other = GameService(storage, clock=lambda: now[0])
    try:
        move = Position.start("italian").legal_moves()[0]
        started = time.monotonic()
        other.handle(chat_event("ana", f"/m {move}"))
        fresh = await _next_state(stream, started + STREAM_WAIT)
        print(f"other process's move on the stream after {time.monotonic() - started:.3f} s")
        assert fresh["ply"] == 1
    finally:
        stream.close()
        other.close()
        storage.close()


def chat_event(user: str, text: str):
    from bot.service import ChatEvent
    return ChatEvent(platform=PLATFORM, chat_id=GROUP, user_id=user, user_name=user.capitalize(), username=user,
                     language="en", text=text)


async def test_bad_bodies_are_400(chat, client):
    game = chat.new_game("italian")
    headers = auth(chat, game, "ana")
    for body in ({"path": "1-5"}, {"path": [1]}, {"path": [True, 5]}, {}, {"path": [1, 5], "move": "1-5"},
                 {"move": 5}, {"path": [1, 5], "ply": "0"}):
        response = await client.post(f"/api/g/{game}/move", json=body, headers=headers)
        assert response.status == 400, body
    response = await client.post(f"/api/g/{game}/move", data="not json", headers=headers)
    assert response.status == 400
