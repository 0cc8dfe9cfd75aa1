"""The Mini App's session endpoint (``POST /api/tg/session``) on a real aiohttp server (127.0.0.1,
port 0) over a real service and SQLite file.  initData is signed HERE from Telegram's published
steps, not with the server's checker: secret = HMAC_SHA256(key=b"WebAppData", msg=bot_token);
hash = hex(HMAC_SHA256(key=secret, msg=data_check_string)), the data-check string being the
fields but hash, sorted, ``key=value`` joined by newlines."""

from __future__ import annotations

import hashlib
import hmac
import json
import random
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import quote, urlencode

import aiohttp
import pytest
from fresh_db import fresh_database

from bot.i18n import t
from bot.platforms.web import WebConfig, WebServer, start_web
from bot.service import ChatEvent, GameService
from bot.service.web import SESSION_SECONDS, LinkRefused, Seat
from bot.storage import Storage

TOKEN = "4242:BOT-TOKEN-of-this-bot"
T0 = 1_700_000_000.0
GROUP = "-100777"
ANA, BOB, EVE = 1001, 1002, 1003


def init_data(user_id: int, *, token: str = TOKEN, auth_date: float = T0 - 30, start: str | None = None,
              lang: str = "es") -> str:
    fields = {"query_id": "AAF1", "auth_date": str(int(auth_date)),
              "user": json.dumps({"id": user_id, "first_name": f"U{user_id}", "language_code": lang},
                                 separators=(",", ":"))}
    if start is not None:
        fields["start_param"] = start
    check = "\n".join(f"{key}={fields[key]}" for key in sorted(fields))
    secret = hmac.new(b"WebAppData", token.encode(), hashlib.sha256).digest()
    fields["hash"] = hmac.new(secret, check.encode(), hashlib.sha256).hexdigest()
    return urlencode(fields, quote_via=quote)


class Site:
    def __init__(self, tmp_path: Path) -> None:
        self.now = [T0]
        self.storage = Storage(fresh_database(tmp_path / "tg-web.db"))
        self.service = GameService(self.storage, clock=lambda: self.now[0], rng=random.Random(3))
        self.server: WebServer | None = None
        self.base = ""

    def say(self, user: int, text: str) -> list:
        return self.service.handle(ChatEvent(platform="telegram", chat_id=GROUP, user_id=str(user),
                                             user_name=f"U{user}", username=f"u{user}", text=text))

    def new_game(self) -> int:
        self.say(ANA, "/new italian white")
        game = self.say(BOB, "/accept")[0].game_id
        assert game is not None
        return game


@pytest.fixture
async def site(tmp_path: Path) -> AsyncIterator[Site]:
    s = Site(tmp_path)
    s.server = await start_web(s.service, WebConfig(host="127.0.0.1", port=0, poll_seconds=0.3,
                                                    telegram_token=TOKEN))
    s.base = f"http://127.0.0.1:{s.server.port}"
    try:
        yield s
    finally:
        await s.server.stop()
        s.service.close()
        s.storage.close()


async def post(site: Site, body: object, path: str = "/api/tg/session") -> tuple[int, dict]:
    async with aiohttp.ClientSession() as http, http.post(site.base + path, json=body) as answer:
        return answer.status, await answer.json()


async def test_a_player_gets_a_seat_that_moves_and_another_user_watches(site):
    game = site.new_game()
    status, body = await post(site, {"initData": init_data(ANA, start=f"g{game}")})
    assert status == 200 and body["ok"] and body["game"] == game and body["lang"] == "es"
    assert body["title"] == t("es", "web.title", id=game) and body["texts"]["flip"] == t("es", "web.flip")
    # The Mini App's words are the page's: the move line too, for the page to fill in.
    assert body["texts"]["move_played"] == t("es", "move.played", name="{name}", move="{move}", id="{id}")
    seat = site.service.web.read_token(body["token"])
    assert (seat.game_id, seat.platform, seat.user_id) == (game, "telegram", str(ANA))
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{site.base}/api/g/{game}/move", json={"move": "22-18"},
                             headers={"Authorization": "Bearer " + body["token"]}) as moved:
            assert moved.status == 200, await moved.text()
    assert site.storage.game(game).ply == 1

    # Someone else watches from the link the chat was given (signed: g<id>s<mac>), never acts.
    mac = site.service.web.watch_mac(game)
    status, watcher = await post(site, {"initData": init_data(EVE, start=f"g{game}s{mac}", lang="it")})
    assert status == 200 and watcher["token"] is None and watcher["lang"] == "it" and watcher["watch"]
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{site.base}/api/g/{game}/state",
                            headers={"Authorization": "Bearer " + watcher["watch"]}) as state:
            assert (await state.json())["state"]["you"] is None


async def test_a_web_app_button_names_the_game_in_the_body_instead(site):
    game = site.new_game()
    status, body = await post(site, {"initData": init_data(BOB), "game": str(game)})
    assert status == 200 and site.service.web.read_token(body["token"]).user_id == str(BOB)


@pytest.mark.parametrize("case", ["forged", "other_bot", "old", "no_game", "no_init", "not_json"])
async def test_refusals_change_nothing(site, case):
    game = site.new_game()
    good = init_data(ANA, start=f"g{game}")
    bodies = {
        "forged": {"initData": good.replace(f"%22id%22%3A{ANA}", f"%22id%22%3A{BOB}")},
        "other_bot": {"initData": init_data(ANA, token="999:OTHER", start=f"g{game}")},
        "old": {"initData": init_data(ANA, auth_date=T0 - 86400 - 5, start=f"g{game}")},
        "no_game": {"initData": init_data(ANA, start="g999999")},
        "no_init": {"game": game},
        "not_json": ["initData", good],
    }
    assert f"%22id%22%3A{ANA}" in good            # the forgery below changes the signed user
    before = site.storage.dump()
    status, body = await post(site, bodies[case])
    expected = {"forged": (401, "web.tg_invalid"), "other_bot": (401, "web.tg_invalid"),
                "old": (401, "web.tg_expired"), "no_game": (404, "web.no_game"),
                "no_init": (400, "web.bad_request"), "not_json": (400, "web.bad_request")}[case]
    assert status == expected[0] and body["ok"] is False and "token" not in body
    # Worded in the language the initData's user claims (Spanish here), else English.
    lang = "es" if case not in ("no_init", "not_json") else "en"
    assert body["error"] == t(lang, expected[1])
    assert site.storage.dump() == before


async def test_without_the_bot_token_the_mini_app_is_off(tmp_path):
    s = Site(tmp_path)
    s.server = await start_web(s.service, WebConfig(host="127.0.0.1", port=0))
    s.base = f"http://127.0.0.1:{s.server.port}"
    try:
        game = s.new_game()
        status, body = await post(s, {"initData": init_data(ANA, start=f"g{game}")})
        assert status == 404 and body["error"] == t("es", "web.tg_off")
    finally:
        await s.server.stop()
        s.service.close()
        s.storage.close()


async def test_the_mini_app_page_is_the_board_page_in_telegram_mode(site):
    async with aiohttp.ClientSession() as http:
        async with http.get(site.base + "/tg?lang=it") as page:
            html = await page.text()
            assert page.status == 200 and "script-src 'self'" in page.headers["Content-Security-Policy"]
    assert "&quot;tg&quot;:true" in html and t("it", "web.tg_title") in html
    assert 'src="/static/board.js"' in html and "telegram.org" not in html
    async with aiohttp.ClientSession() as http, http.get(site.base + "/static/board.js") as script:
        js = await script.text()
    # The launch parameters are read from the address; no script of Telegram's is loaded.
    for needle in ("tgWebAppData", "tgWebAppThemeParams", "/api/tg/session", "bg_color", "secondary_bg_color"):
        assert needle in js
    assert "telegram.org" not in js


async def test_a_day_old_init_data_gives_no_seat_and_a_session_lasts_hours_not_a_week(site):
    # Issue 30: a 23-hour-old initData was exchanged for a 7-day seat link.
    game = site.new_game()
    before = site.storage.dump()
    status, body = await post(site, {"initData": init_data(ANA, auth_date=T0 - 23 * 3600, start=f"g{game}")})
    assert status == 401 and body["reason"] == "tg_expired" and "token" not in body
    status, body = await post(site, {"initData": init_data(ANA, auth_date=T0 - 3601, start=f"g{game}")})
    assert status == 401 and body["reason"] == "tg_expired"
    assert site.storage.dump() == before
    # Fresh initData: a seat until SESSION_SECONDS after Telegram signed it, then refused.
    status, body = await post(site, {"initData": init_data(ANA, auth_date=T0 - 60, start=f"g{game}")})
    assert status == 200
    seat = site.service.web.read_token(body["token"])
    assert seat.expires == T0 - 60 + SESSION_SECONDS and SESSION_SECONDS <= 6 * 3600
    async with aiohttp.ClientSession(headers={"Authorization": "Bearer " + body["token"]}) as http:
        site.now[0] = T0 + SESSION_SECONDS - 120
        async with http.get(f"{site.base}/api/g/{game}/state") as answer:
            assert answer.status == 200
        site.now[0] = T0 + SESSION_SECONDS
        async with http.post(f"{site.base}/api/g/{game}/move", json={"move": "22-18"}) as answer:
            assert answer.status == 401 and (await answer.json())["reason"] == "link_expired"
    assert site.storage.game(game).ply == 0


async def test_a_games_number_alone_opens_the_mini_app_only_to_its_players(site):
    game = site.new_game()
    # Someone in Telegram who does not play, with a start parameter typed by hand: nothing.
    status, body = await post(site, {"initData": init_data(EVE, start=f"g{game}")})
    assert status == 403 and body["reason"] == "need_link" and body["error"] == t("es", "web.need_link")
    status, body = await post(site, {"initData": init_data(EVE), "game": str(game)})
    assert status == 403 and "watch" not in body
    # Another game's signature does not open this one.
    other = site.new_game()
    status, _ = await post(site, {"initData": init_data(EVE, start=f"g{game}s{site.service.web.watch_mac(other)}")})
    assert status == 403
    # A web_app button's ?g= carries the signature the same way.
    status, body = await post(site, {"initData": init_data(EVE), "game": f"{game}s{site.service.web.watch_mac(game)}"})
    assert status == 200 and body["token"] is None and body["watch"] == site.service.web.watch_token(game)
    # initData of a non-player as a header is no spectator's credential either.
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{site.base}/api/g/{game}/state",
                            headers={"X-Telegram-Init-Data": init_data(EVE)}) as answer:
            assert answer.status == 403 and (await answer.json())["reason"] == "need_link"
        async with http.get(f"{site.base}/api/g/{game}/state",
                            headers={"X-Telegram-Init-Data": init_data(ANA)}) as answer:
            assert answer.status == 200 and (await answer.json())["state"]["you"] == "W"


async def test_web_in_the_chat_ends_the_mini_app_sessions_given_before(site):
    game = site.new_game()
    _, body = await post(site, {"initData": init_data(BOB, start=f"g{game}")})
    before = body["token"]
    site.service.chat.serve_web("https://board.example.org", site.service.web)
    site.say(BOB, "/web")
    assert site.service.web.read_token(before) == LinkRefused("revoked")
    # Opening the Mini App again gives a seat of the new generation.
    _, body = await post(site, {"initData": init_data(BOB, start=f"g{game}")})
    assert isinstance(site.service.web.read_token(body["token"]), Seat)
