"""The web board wired into the Telegram adapter: served in the adapter's loop while it runs (a real
aiohttp server on 127.0.0.1, port 0), an Open board button under each board, /web, and the Mini App
buttons as the strict fake Bot API takes them (web_app buttons in private chats only)."""

from __future__ import annotations

import json

import aiohttp
import pytest
from telegram_fake_api import GROUP, USERS

from bot.i18n import t

WEB_ENV = {"WEB_URL": "https://board.example.org", "TELEGRAM_WEBAPP_NAME": "board", "PORT": "0",
           "WEB_HOST": "127.0.0.1"}
# Signed with the game's spectator signature (issue 30: a game's number alone shows nothing).
DIRECT = "https://t.me/DraughtsBot/board?startapp=g{game}s{mac}"


def keyboard(call) -> list[dict]:
    return [b for row in json.loads(call.wire.get("reply_markup") or "{}").get("inline_keyboard", []) for b in row]


def urls(call) -> list[str]:
    return [b["url"] for b in keyboard(call) if "url" in b]


async def serving(tg, env: dict[str, str] = WEB_ENV) -> None:
    tg.adapter.env = env
    await tg.adapter.start_web()
    assert tg.adapter.web_server is not None


async def game_in_group(tg) -> int:
    await tg.say("ana", "/new italian white")
    await tg.say("bob", "/accept")
    return tg.storage.active_games("telegram", str(GROUP["id"]))[0].id


@pytest.fixture
async def web_tg(tg):
    await serving(tg)
    yield tg
    await tg.adapter.stop_web()


async def test_a_board_in_a_group_carries_the_mini_app_direct_link_and_keeps_its_buttons(web_tg):
    tg = web_tg
    game = await game_in_group(tg)
    start = tg.http.named("sendPhoto")[-1]
    assert [b.get("callback_data") for b in keyboard(start)][:2] == [f"d:{game}:0:21:17", f"d:{game}:0:21:18"]
    assert urls(start) == [DIRECT.format(game=game, mac=tg.service.web.watch_mac(game))]
    # The edited board (a piece touched) keeps it, once.
    await tg.press("ana", f"s:{game}:0:22")
    assert urls(tg.http.named("editMessageMedia")[-1]) == [DIRECT.format(game=game, mac=tg.service.web.watch_mac(game))]
    # A typed move's new board too, labelled in the group's language.
    await tg.say("ana", "/m 22-18")
    board = tg.http.named("sendPhoto")[-1]
    assert urls(board) == [DIRECT.format(game=game, mac=tg.service.web.watch_mac(game))]
    assert keyboard(board)[-1]["text"] in {t(lang, "weblink.open") for lang in ("es", "en", "it")}


async def test_web_in_a_group_answers_with_the_direct_link(web_tg):
    tg = web_tg
    game = await game_in_group(tg)
    await tg.say("bob", "/web")
    answer = tg.http.named("sendMessage")[-1]
    assert answer.params["text"] == t("en", "weblink.telegram", id=game)
    assert urls(answer) == [DIRECT.format(game=game, mac=tg.service.web.watch_mac(game))]
    assert "web_app" not in answer.wire["reply_markup"]


async def test_in_a_private_chat_the_board_opens_as_a_web_app_button(web_tg):
    tg = web_tg
    game = await game_in_group(tg)
    private = tg.http.start_private("ana")
    # The deep link an Open board button opens without a Mini App: /start w<game>.
    await tg.say("ana", f"/start w{game}", chat=private)
    answer = tg.http.named("sendMessage")[-1]
    assert answer.status == 200 and int(answer.wire["chat_id"]) == USERS["ana"]["id"]
    buttons = keyboard(answer)
    assert buttons == [{"text": t("es", "weblink.open"), "web_app": {"url": f"https://board.example.org/tg?g={game}s{tg.service.web.watch_mac(game)}"}}]


async def test_without_a_mini_app_the_seat_link_goes_to_the_private_chat(tg):
    await serving(tg, {k: v for k, v in WEB_ENV.items() if k != "TELEGRAM_WEBAPP_NAME"})
    try:
        game = await game_in_group(tg)
        # The board's button opens the private chat, where /start w<game> gives the link.
        assert urls(tg.http.named("sendPhoto")[-1]) == [f"https://t.me/DraughtsBot?start=w{game}s{tg.service.web.watch_mac(game)}"]
        tg.http.start_private("bob")
        sent_in_group = len(tg.http.bot_messages(GROUP["id"]))
        await tg.say("bob", "/web")
        answer = tg.http.named("sendMessage")[-1]
        assert int(answer.wire["chat_id"]) == USERS["bob"]["id"]
        (link,) = urls(answer)
        assert link.startswith(f"https://board.example.org/g/{game}?t=")
        seat = tg.service.web.read_token(link.partition("?t=")[2])
        assert (seat.game_id, seat.platform, seat.user_id) == (game, "telegram", str(USERS["bob"]["id"]))
        # The group sees no link: a reaction on the command says it was answered privately.
        assert len(tg.http.bot_messages(GROUP["id"])) == sent_in_group
        assert tg.http.named("setMessageReaction")
    finally:
        await tg.adapter.stop_web()


async def test_without_web_url_the_bot_behaves_as_before(tg):
    tg.adapter.env = {"TELEGRAM_WEBAPP_NAME": "board", "PORT": "0"}
    await tg.adapter.start_web()
    assert tg.adapter.web_server is None
    await game_in_group(tg)
    assert urls(tg.http.named("sendPhoto")[-1]) == []
    await tg.say("bob", "/web")
    assert tg.http.named("sendMessage")[-1].params["text"] == t("en", "weblink.off")


async def test_the_application_serves_the_board_while_it_runs_and_frees_the_port_after(tg):
    tg.adapter.env = WEB_ENV
    await tg.app.start()
    try:
        server = tg.adapter.web_server
        assert server is not None and server.url == "https://board.example.org"
        game = await game_in_group(tg)
        watch = tg.service.web.watch_token(game)
        async with aiohttp.ClientSession() as http, \
                http.get(f"http://127.0.0.1:{server.port}/api/g/{game}/state?t={watch}") as answer:
            assert answer.status == 200 and (await answer.json())["state"]["game_id"] == game
        # The Mini App's initData is checked with this bot's token.
        assert tg.adapter.web_server is server
    finally:
        await tg.app.stop()
    assert tg.adapter.web_server is None and tg.service.chat.web is None
    with pytest.raises(aiohttp.ClientConnectionError):
        async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{server.port}/tg"):
            pass


async def test_a_board_without_https_gives_the_seat_link_in_the_private_chat_not_a_web_app(tg):
    # Telegram opens only https pages as a Mini App: a plain-http board (a test setup) gets a link.
    await serving(tg, dict(WEB_ENV, WEB_URL="http://board.example.org"))
    try:
        game = await game_in_group(tg)
        private = tg.http.start_private("bob")
        await tg.say("bob", f"/start w{game}", chat=private)
        answer = tg.http.named("sendMessage")[-1]
        assert answer.status == 200 and "web_app" not in answer.wire["reply_markup"]
        (link,) = urls(answer)
        seat = tg.service.web.read_token(link.partition("?t=")[2])
        assert (seat.game_id, seat.user_id) == (game, str(USERS["bob"]["id"]))
    finally:
        await tg.adapter.stop_web()
