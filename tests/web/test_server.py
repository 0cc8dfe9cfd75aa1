"""The board served for real: ``start_web`` on 127.0.0.1 port 0 in the test's own event loop (as an
adapter would start it in its loop), a game against the bot moved from the page, and the chat told
in its own language."""

from __future__ import annotations

import asyncio
import json
import random
from concurrent.futures import ThreadPoolExecutor

import aiohttp
import pytest
from web_helpers import GROUP, PLATFORM

from bot.i18n import t
from bot.platforms.web import WebConfig, start_web
from bot.platforms.web.server import ConfigProblem
from bot.rules import Position
from bot.service import GameService
from bot.service.thinking import Thinker

WAIT = 30.0


async def test_start_web_serves_and_stop_ends_open_streams(chat):
    game = chat.new_game("spanish")
    server = await start_web(chat.service, WebConfig(host="127.0.0.1", port=0))
    try:
        assert server.port > 0 and server.url == f"http://127.0.0.1:{server.port}"
        watch = chat.service.web.watch_token(game)
        async with aiohttp.ClientSession() as session:
            async with session.get(f"{server.url}/api/g/{game}/state?t={watch}") as response:
                assert response.status == 200 and (await response.json())["state"]["variant"] == "spanish"
            stream = await session.get(f"{server.url}/api/g/{game}/events?t={watch}")
            assert (await asyncio.wait_for(stream.content.readline(), WAIT)).startswith(b"event: state")
            await asyncio.wait_for(server.stop(), WAIT)
            # The stream ends with the server (it does not hold the shutdown for its full timeout).
            await asyncio.wait_for(stream.content.read(), WAIT)
            assert stream.content.at_eof()
            stream.close()
    finally:
        await server.stop()
    # The port is free again: a new server can take it.
    again = await start_web(chat.service, WebConfig(host="127.0.0.1", port=server.port))
    await again.stop()


def test_web_config_from_the_environment():
    assert WebConfig.from_env(environ={}) == WebConfig(host="127.0.0.1", port=8080)
    assert WebConfig.from_env("0.0.0.0", environ={"PORT": "9000"}) == WebConfig(host="0.0.0.0", port=9000)
    config = WebConfig.from_env(environ={"WEB_HOST": "10.0.0.2", "WEB_URL": "https://board.example/"})
    assert (config.host, config.public_url) == ("10.0.0.2", "https://board.example")
    for bad in ("http", "-1", "70000", "80²", "８０"):
        with pytest.raises(ConfigProblem, match="PORT"):
            WebConfig.from_env(environ={"PORT": bad})
    # Where $PORT is another server's (Telegram's webhook), $WEB_PORT is the board's.
    assert WebConfig.from_env(environ={"PORT": "8443", "WEB_PORT": "8081"}).port == 8081
    with pytest.raises(ConfigProblem, match="WEB_PORT"):
        WebConfig.from_env(environ={"PORT": "8443", "WEB_PORT": "x"})


@pytest.fixture
def pool():
    executor = ThreadPoolExecutor(2)
    yield executor
    executor.shutdown(wait=True, cancel_futures=True)


async def test_a_move_against_the_bot_from_the_page_gets_the_bots_answer(chat, pool, now):
    chat.service = GameService(chat.storage, clock=lambda: now[0], rng=random.Random(1), thinker=Thinker(pool),
                               bot_seconds=0.2)
    [started] = chat.say("ana", "/play italian 1 white")
    game = started.game_id
    server = await start_web(chat.service, WebConfig(host="127.0.0.1", port=0))
    token = chat.service.web.seat_token(game, PLATFORM, "ana")
    move = Position.start("italian").legal_moves()[0]
    try:
        async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {token}"}) as session:
            async with session.post(f"{server.url}/api/g/{game}/move", json={"path": list(move.path), "ply": 0}) as r:
                data = await r.json()
                # The bot may have answered already: the stream below shows its move either way.
                assert r.status == 200 and data["state"]["ply"] >= 1
            async with session.get(f"{server.url}/api/g/{game}/events") as stream:
                while True:
                    line = await asyncio.wait_for(stream.content.readline(), WAIT)
                    if line.startswith(b"data: ") and json.loads(line[6:])["ply"] == 2:
                        state = json.loads(line[6:])
                        break
        assert state["turn"] == "W" and state["moves"] and state["last_move"] is not None
    finally:
        await server.stop()
    kinds = [json.loads(r.payload)["notice"] for r in chat.storage.find_outbox(PLATFORM, "pending")]
    assert kinds == ["web_moved", "bot_moved"]
    items = chat.service.pending_messages(PLATFORM)
    assert t("en", "bot.thinking", bot=t("en", "bot.name_start", level=1)) in items[0].reply.text


def test_the_chat_hears_a_page_move_in_its_own_language(chat):
    chat.say("ana", "/lang es", admin=True)
    game = chat.new_game("spanish")
    chat.service.pending_messages(PLATFORM)
    for item in chat.service.pending_messages(PLATFORM):
        chat.service.message_sent(item.id)
    move = Position.start("spanish").legal_moves()[0]
    seat = chat.service.web.read_token(chat.service.web.seat_token(game, PLATFORM, "ana"))
    # The page speaks English to its user; the chat is told in Spanish.
    answer = chat.service.web.move(seat, "en", path=list(move.path), ply=0)
    assert answer.outcome == "ok" and answer.message.startswith(t("en", "move.played", name="Ana", move=str(move),
                                                                      id=game))
    [item] = [i for i in chat.service.pending_messages(PLATFORM) if i.reply.game_id == game]
    assert item.chat_id == GROUP
    assert item.reply.text.startswith(t("es", "move.played", name="Ana", move=str(move), id=game))
