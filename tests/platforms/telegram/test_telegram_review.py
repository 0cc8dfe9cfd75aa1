"""Issue 34's Review links on Telegram, as the strict fake Bot API takes them: beside Open board
under a finished game's board (the Mini App's direct link with ``p0`` in a group, a ``web_app``
button in a private chat, the signed page without a Mini App) and one for each game /history
lists; each opens the game's page on the adapter's real board server."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from urllib.parse import quote, urlencode, urlsplit

import aiohttp
from telegram_fake_api import GROUP, USERS
from test_telegram_web import WEB_ENV, game_in_group, keyboard, serving, urls

from bot.i18n import t

LABELS = {t(lang, "button.review") for lang in ("es", "en", "it")}


def review_buttons(call) -> list[dict]:
    return [b for b in keyboard(call) if b["text"] in LABELS]


async def finished_in_group(tg) -> int:
    game = await game_in_group(tg)
    await tg.say("ana", "/resign")
    await tg.say("ana", "/resign")
    assert tg.storage.game(game).status == "finished"
    return game


def init_data(token: str, user_id: int, start: str) -> str:
    """initData as Telegram signs it (its published steps), for a Mini App launched with ``start``."""
    fields = {"auth_date": str(int(time.time()) - 5), "start_param": start,
              "user": json.dumps({"id": user_id, "first_name": "U", "language_code": "en"}, separators=(",", ":"))}
    check = "\n".join(f"{key}={fields[key]}" for key in sorted(fields))
    secret = hmac.new(b"WebAppData", token.encode(), hashlib.sha256).digest()
    fields["hash"] = hmac.new(secret, check.encode(), hashlib.sha256).hexdigest()
    return urlencode(fields, quote_via=quote)


async def get(tg, url: str) -> int:
    parts = urlsplit(url)
    local = f"http://127.0.0.1:{tg.adapter.web_server.port}{parts.path}?{parts.query}"
    async with aiohttp.ClientSession() as http, http.get(local) as answer:
        return answer.status


async def test_a_finished_board_in_a_group_carries_the_mini_app_review_link_beside_open_board(tg):
    await serving(tg)
    try:
        game = await finished_in_group(tg)
        mac = tg.service.web.watch_mac(game)
        direct = f"https://t.me/DraughtsBot/board?startapp=g{game}s{mac}"
        board = tg.http.named("sendPhoto")[-1]
        assert board.status == 200
        assert urls(board) == [direct, direct + "p0"]
        [review] = review_buttons(board)
        assert "web_app" not in review
        # The Rematch row stays first; Open board and Review share the last row.
        rows = json.loads(board.wire["reply_markup"])["inline_keyboard"]
        assert rows[0][0]["callback_data"] == f"rm:{game}" and len(rows[-1]) == 2
        # The Mini App's launch with the ply after the signature is a spectator's session.
        body = {"initData": init_data(tg.adapter._token, USERS["eve"]["id"], f"g{game}s{mac}p0")}
        base = f"http://127.0.0.1:{tg.adapter.web_server.port}"
        async with aiohttp.ClientSession() as http, http.post(base + "/api/tg/session", json=body) as answer:
            data = await answer.json()
        assert answer.status == 200 and data["game"] == game and data["watch"] == f"w{game}s{mac}"
        # A forged signature before the ply opens nothing.
        body = {"initData": init_data(tg.adapter._token, USERS["eve"]["id"], f"g{game}s{'A' * 22}p0")}
        async with aiohttp.ClientSession() as http, http.post(base + "/api/tg/session", json=body) as answer:
            assert answer.status in (401, 403) and not (await answer.json())["ok"]
    finally:
        await tg.adapter.stop_web()


async def test_a_running_games_board_has_no_review_button(tg):
    await serving(tg)
    try:
        await game_in_group(tg)
        assert review_buttons(tg.http.named("sendPhoto")[-1]) == []
    finally:
        await tg.adapter.stop_web()


async def test_without_a_mini_app_the_review_button_is_the_signed_page_at_the_first_ply(tg):
    await serving(tg, {k: v for k, v in WEB_ENV.items() if k != "TELEGRAM_WEBAPP_NAME"})
    try:
        game = await finished_in_group(tg)
        [review] = review_buttons(tg.http.named("sendPhoto")[-1])
        watch = tg.service.web.watch_token(game)
        assert review["url"] == f"https://board.example.org/g/{game}?t={watch}&ply=0"
        assert await get(tg, review["url"]) == 200
    finally:
        await tg.adapter.stop_web()


async def test_in_a_private_chat_review_is_a_web_app_button(tg):
    await serving(tg)
    try:
        private = tg.http.start_private("ana")
        await tg.say("ana", "/play 1 white", chat=private)
        [game] = [g.id for g in tg.storage.active_games("telegram", str(private["id"]))]
        await tg.say("ana", "/resign", chat=private)
        await tg.say("ana", "/resign", chat=private)
        board = [c for c in tg.http.named("sendPhoto") if int(c.wire["chat_id"]) == private["id"]][-1]
        [review] = review_buttons(board)
        url = f"https://board.example.org/tg?g={game}s{tg.service.web.watch_mac(game)}&ply=0"
        assert review["web_app"] == {"url": url} and board.status == 200
        assert await get(tg, url) == 200
        # Its /history lists it with the same kind of button, labelled with its number.
        await tg.say("ana", "/history", chat=private)
        answer = tg.http.named("sendMessage")[-1]
        assert [b for b in keyboard(answer) if "web_app" in b] == [
            {"text": t("en", "button.review_game", id=game), "web_app": {"url": url}}]
    finally:
        await tg.adapter.stop_web()


async def test_history_in_a_group_has_a_review_link_for_each_game(tg):
    await serving(tg)
    try:
        games = [await finished_in_group(tg) for _ in range(3)]
        await tg.say("eve", "/history")
        answer = tg.http.named("sendMessage")[-1]
        assert answer.status == 200 and int(answer.wire["chat_id"]) == GROUP["id"]
        macs = {g: tg.service.web.watch_mac(g) for g in games}
        assert urls(answer) == [f"https://t.me/DraughtsBot/board?startapp=g{g}s{macs[g]}p0" for g in reversed(games)]
        assert "web_app" not in answer.wire["reply_markup"]
    finally:
        await tg.adapter.stop_web()


async def test_without_the_web_board_neither_the_board_nor_history_has_review(tg):
    await finished_in_group(tg)
    assert review_buttons(tg.http.named("sendPhoto")[-1]) == []
    await tg.say("ana", "/history")
    assert urls(tg.http.named("sendMessage")[-1]) == []


async def test_a_loss_on_time_told_from_the_outbox_carries_review_too(tg):
    # The finished board a notification draws (not a command's answer) goes through the same
    # delivery: it gets its Review link when it is sent.
    await serving(tg)
    try:
        await tg.say("ana", "/new italian white 5m")
        await tg.say("eve", "/accept")
        game = tg.storage.active_games("telegram", str(GROUP["id"]))[0].id
        tg.service.clock = lambda: time.time() + 3600
        await tg.adapter.delivery_round()
        assert tg.storage.game(game).status == "finished"
        board = tg.http.named("sendPhoto", ok_only=True)[-1]
        mac = tg.service.web.watch_mac(game)
        assert [b["url"] for b in review_buttons(board)] == [f"https://t.me/DraughtsBot/board?startapp=g{game}s{mac}p0"]
    finally:
        await tg.adapter.stop_web()
