"""Issue 30 on the real server over HTTP (aiohttp's test server, the real service on a real SQLite
file): spectator links are signed and a game's number alone shows nothing (item 3); /web revokes a
seat's older links, and a finished game's links only show it (item 5).  Item 4 (JSON nested too
deep) is test_nested_json.py."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import AsyncIterator

import pytest
from aiohttp.test_utils import TestClient, TestServer
from web_helpers import PLATFORM, WebChat

from bot.i18n import t
from bot.platforms.web import WebConfig, make_app
from bot.rules import Position
from bot.service import ChatEvent, Reply
from bot.service.web import LinkRefused, Seat, Watch

URL = "https://board.example.org"


@pytest.fixture
async def client(chat: WebChat) -> AsyncIterator[TestClient]:
    chat.service.chat.serve_web(URL, chat.service.web)
    app = make_app(chat.service, WebConfig(poll_seconds=0.3))
    async with TestClient(TestServer(app)) as test_client:
        yield test_client


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": "Bearer " + token}


def link_urls(replies: list[Reply]) -> list[str]:
    return [b.url for r in replies for row in r.buttons for b in row if b.url]


def token_of(url: str) -> str:
    return url.partition("?t=")[2]


def say_private(chat: WebChat, user: str, text: str) -> list[Reply]:
    return chat.service.handle(ChatEvent(platform=PLATFORM, chat_id=f"private-{user}", user_id=user,
                                         user_name=user.capitalize(), username=user, language="en", text=text,
                                         chat_kind="private"))


# -- item 3: spectator links are signed ------------------------------------------------------------


async def test_a_games_number_alone_shows_nothing_of_it(chat, client):
    game = chat.new_game("italian")
    chat.say("ana", "/m 22-18")
    page = await client.get(f"/g/{game}")
    text = await page.text()
    assert page.status == 403 and text == t("en", "web.need_link")
    assert "Ana" not in text and "data-boot" not in text and page.headers["Referrer-Policy"] == "no-referrer"
    for path in ("state", "events", "pdn"):
        answer = await client.get(f"/api/g/{game}/{path}?lang=es")
        body = await answer.json()
        assert answer.status == 403 and body == {"ok": False, "reason": "need_link",
                                                  "error": t("es", "web.need_link")}, path
    # Nor whether a game exists: a number that is no game is refused the same way.
    assert (await client.get("/g/999")).status == 403
    assert (await client.get("/api/g/999/state")).status == 403


async def test_the_signed_spectator_link_shows_the_game_and_acts_in_nothing(chat, client):
    game = chat.new_game("italian")
    watch = chat.service.web.watch_token(game)
    assert chat.service.web.read_token(watch) == Watch(game)
    page = await client.get(f"/g/{game}?t={watch}")
    assert page.status == 200 and "data-boot" in await page.text()
    state = await (await client.get(f"/api/g/{game}/state", headers=bearer(watch))).json()
    assert state["ok"] and state["state"]["you"] is None and state["state"]["moves"] == []
    pdn = await client.get(f"/api/g/{game}/pdn?t={watch}")
    assert pdn.status == 200 and f"#{game}" in await pdn.text()
    before = chat.storage.dump()
    answer = await client.post(f"/api/g/{game}/move", json={"move": "22-18"}, headers=bearer(watch))
    assert answer.status == 403 and (await answer.json())["error"] == t("en", "web.spectator_only")
    assert chat.storage.dump() == before


async def test_a_spectator_link_of_another_game_or_forged_is_refused(chat, client):
    game = chat.new_game("italian")
    other = chat.new_game("italian", "carl", "dora")
    answer = await client.get(f"/api/g/{game}/state", headers=bearer(chat.service.web.watch_token(other)))
    assert answer.status == 403 and (await answer.json())["reason"] == "other_game"
    mac = chat.service.web.watch_mac(game)
    forged = f"w{game}s" + ("A" if mac[0] != "A" else "B") + mac[1:]
    answer = await client.get(f"/api/g/{game}/state", headers=bearer(forged))
    assert answer.status == 401 and (await answer.json())["reason"] == "link_invalid"
    # The mac of game N is no game M's: renumbering the link is a forgery.
    renumbered = f"w{game}s{chat.service.web.watch_mac(other)}"
    assert chat.service.web.read_token(renumbered) == LinkRefused("invalid")


async def test_the_chat_hands_out_the_signed_spectator_link(chat, client):
    game = chat.new_game("italian")
    # /web by a member of the chat who does not play: the spectator link only, signed.
    [watching] = link_urls(chat.say("eve", f"/web #{game}"))
    assert watching.startswith(f"{URL}/g/{game}?t=")
    assert chat.service.web.read_token(token_of(watching)) == Watch(game)
    answer = await client.get(f"/api/g/{game}/state?t={token_of(watching)}")
    assert answer.status == 200
    # A player gets their seat and the spectator link, both signed.
    seat_url, watch_url = link_urls(chat.say("ana", "/web"))
    assert isinstance(chat.service.web.read_token(token_of(seat_url)), Seat)
    assert chat.service.web.read_token(token_of(watch_url)) == Watch(game)


async def test_a_private_start_link_needs_the_games_signature_for_a_non_player(chat, client):
    game = chat.new_game("italian")
    # Any number typed into the bot's private chat: refused to one who does not play.
    [refused] = say_private(chat, "eve", f"/start w{game}")
    assert refused.text == t("en", "weblink.ask_chat", id=game) and not link_urls([refused])
    # The Open board button's deep link carries the signature: then it is the spectator's link.
    assert chat.service.chat.web is not None
    start = chat.service.chat.web.start_link(game, "DraughtsBot").partition("?start=")[2]
    assert start == f"w{game}s{chat.service.web.watch_mac(game)}"
    [watch_url] = link_urls(say_private(chat, "eve", f"/start {start}"))
    assert chat.service.web.read_token(token_of(watch_url)) == Watch(game)
    # A player gets their seat with or without it (who they are is the platform's to say).
    seat_url, _ = link_urls(say_private(chat, "ana", f"/start w{game}"))
    assert isinstance(chat.service.web.read_token(token_of(seat_url)), Seat)
    # The open-board button of another chat's game, pressed here, gives nothing either.
    pressed_elsewhere = ChatEvent(platform=PLATFORM, chat_id="group-2", user_id="eve", user_name="Eve",
                                  username="eve", language="en", action=f"wb:{game}")
    [pressed] = chat.service.handle(pressed_elsewhere)
    assert pressed.text == t("en", "weblink.ask_chat", id=game) and not link_urls([pressed])


async def test_a_seat_link_of_the_first_format_still_acts(chat, client):
    # Contracts change by adding: a version 1 seat link (no generation) keeps its seat.
    game = chat.new_game("italian")
    web = chat.service.web
    payload = base64.urlsafe_b64encode(json.dumps([1, game, PLATFORM, "ana", int(chat.now[0]) + 3600],
                                                  separators=(",", ":")).encode()).rstrip(b"=").decode()
    key = hmac.new(chat.storage.link_secret(), b"draughts web board seat link v1", hashlib.sha256).digest()
    mac = base64.urlsafe_b64encode(hmac.new(key, payload.encode(), hashlib.sha256).digest()).rstrip(b"=").decode()
    old = f"{payload}.{mac}"
    move = Position.start("italian").legal_moves()[0]
    answer = await client.post(f"/api/g/{game}/move", json={"path": list(move.path), "ply": 0}, headers=bearer(old))
    assert answer.status == 200, await answer.text()
    # ... until /web gives the seat a new link.
    chat.say("ana", "/web")
    assert web.read_token(old) == LinkRefused("revoked")


# -- item 5: seats that stay with their player -------------------------------------------------------


async def test_web_revokes_the_seats_older_links(chat, client):
    game = chat.new_game("italian")
    first = token_of(link_urls(chat.say("ana", "/web"))[0])
    shared = chat.service.web.link_path(game, PLATFORM, "ana")         # the link under a board
    assert (await client.get(f"/api/g/{game}/state", headers=bearer(first))).status == 200
    # Ana asks again (her link leaked): the new one acts, every older one is refused.
    fresh = token_of(link_urls(chat.say("ana", "/web"))[0])
    before = chat.storage.dump()
    for old in (first, token_of(shared)):
        answer = await client.post(f"/api/g/{game}/move?lang=it", json={"move": "22-18"}, headers=bearer(old))
        body = await answer.json()
        assert answer.status == 401 and body["reason"] == "link_revoked"
        assert body["error"] == t("it", "web.link_revoked")
        page = await client.get(f"/g/{game}?t={old}")
        assert page.status == 401 and await page.text() == t("en", "web.link_revoked")
    assert chat.storage.dump() == before
    answer = await client.post(f"/api/g/{game}/move", json={"move": "22-18"}, headers=bearer(fresh))
    assert answer.status == 200, await answer.text()
    # Bob's seat is his own: Ana's /web revoked nothing of his.
    bob = token_of(chat.service.web.link_path(game, PLATFORM, "bob"))
    assert isinstance(chat.service.web.read_token(bob), Seat)
    assert chat.service.web.seat_generation(game, PLATFORM, "bob") == 0


async def test_a_finished_games_links_only_show_it(chat, client):
    game = chat.new_game("italian")
    ana = bearer(chat.service.web.seat_token(game, PLATFORM, "ana"))
    bob = bearer(chat.service.web.seat_token(game, PLATFORM, "bob"))
    answer = await client.post(f"/api/g/{game}/resign", json={"confirm": True}, headers=bob)
    assert answer.status == 200 and chat.storage.game(game).status == "finished"
    before = chat.storage.dump()
    move = Position.start("italian").legal_moves()[0]
    for path, body, headers in (("move", {"path": list(move.path), "ply": 0}, ana), ("move", {"move": "22-18"}, ana),
                                ("draw", {}, ana), ("draw", {}, bob), ("resign", {"confirm": True}, ana)):
        answer = await client.post(f"/api/g/{game}/{path}?lang=es", json=body, headers=headers)
        data = await answer.json()
        assert answer.status == 409 and data["outcome"] == "refused", (path, answer.status, data)
        assert data["error"] == t("es", "web.game_over") and data["state"]["status"] == "finished"
    assert chat.storage.dump() == before
    # It is still shown, to its players and to spectators.
    shown = await (await client.get(f"/api/g/{game}/state", headers=ana)).json()
    assert shown["state"]["status"] == "finished" and shown["state"]["moves"] == []
    watch = chat.service.web.watch_token(game)
    assert (await client.get(f"/g/{game}?t={watch}")).status == 200
    # /web on a finished game gives its link and revokes nothing (nothing can be done there).
    chat.say("ana", f"/web #{game}")
    assert chat.service.web.seat_generation(game, PLATFORM, "ana") == 0
