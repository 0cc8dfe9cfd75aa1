"""Issue 30, item 4: a body of JSON nested deeper than the parser recurses (8 KB of '[', under the
16 KB body limit) to the unauthenticated Mini App session and to a seat's actions is a 400 like any
body not understood, with no traceback in the log (it was a 500 and 25 lines each: json.loads
raised RecursionError).  The real aiohttp application on aiohttp's test server."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import pytest
from aiohttp.test_utils import TestClient, TestServer
from web_helpers import PLATFORM, WebChat

from bot.platforms.web import WebConfig, make_app

# 8 KB of '[': under the body limit (16 KB), deeper than json.loads recurses.
NESTED = "[" * 8192


@pytest.fixture
async def client(chat: WebChat) -> AsyncIterator[TestClient]:
    app = make_app(chat.service, WebConfig(poll_seconds=0.3))
    async with TestClient(TestServer(app)) as test_client:
        yield test_client


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": "Bearer " + token}


async def test_deeply_nested_json_is_a_400_with_no_traceback(chat, client, caplog):
    game = chat.new_game("italian")
    seat = bearer(chat.service.web.seat_token(game, PLATFORM, "ana"))
    before = chat.storage.dump()
    posts = [("/api/tg/session", {}), (f"/api/g/{game}/move", seat), (f"/api/g/{game}/draw", seat),
             (f"/api/g/{game}/resign", seat)]
    for path, headers in posts:
        caplog.clear()
        with caplog.at_level(logging.INFO):
            answer = await client.post(path, data=NESTED, headers={**headers, "Content-Type": "application/json"})
            body = await answer.json()
        assert answer.status == 400 and body["reason"] == "bad_request", (path, answer.status)
        lines = sum(len(r.getMessage().splitlines()) + (20 if r.exc_info else 0) for r in caplog.records)
        assert lines <= 1, (path, [r.getMessage() for r in caplog.records])
    # initData whose unverified user field nests too deep: read for the refusal's language only.
    caplog.clear()
    with caplog.at_level(logging.INFO):
        answer = await client.post("/api/tg/session", json={"initData": "user=" + NESTED + "&hash=00"})
    assert answer.status == 404 and not any(r.exc_info for r in caplog.records)    # no bot token here: off
    assert chat.storage.dump() == before


