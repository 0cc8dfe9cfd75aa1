"""Issue 34's links: a Review button under each game /history lists (and the chat layer's Review
button a finished board gets from the adapters), only while the web board is served, only to the
chats that may see the game, opening the game's page at its first ply.  A real service on a real
SQLite file; the page is fetched from the real aiohttp app (its test client)."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from aiohttp.test_utils import TestClient, TestServer
from harness import GROUP, PLATFORM

from bot.i18n import t
from bot.platforms.web import WebConfig, make_app
from bot.service.features.history import HISTORY_SIZE

URL = "https://board.example.org"


def serve(chat) -> None:
    chat.service.chat.serve_web(URL, chat.service.web)


def finished_game(chat, white: str = "ana", black: str = "bob", **kw) -> int:
    game = chat.new_game(white, black, **kw)
    chat.play(game, ["21-17", "10-13"])
    chat.resign(black, f"/resign #{game}")
    assert chat.game(game).status == "finished"
    return game


def review_url(chat, game: int) -> str:
    return f"{URL}/g/{game}?t=w{game}s{chat.service.web.watch_mac(game)}&ply=0"


def links(reply) -> list[tuple[str, str | None, bool]]:
    return [(b.label, b.url, b.web_app) for row in reply.buttons for b in row]


def test_history_has_no_review_buttons_while_the_web_board_is_not_served(chat):
    finished_game(chat)
    [reply] = chat.say("ana", "/history")
    assert reply.buttons == [] and t("en", "history.review") not in reply.text


def test_each_listed_game_gets_a_review_button_to_its_signed_page_at_the_first_ply(chat):
    games = [finished_game(chat) for _ in range(HISTORY_SIZE + 2)]
    serve(chat)
    [reply] = chat.say("carol", "/history")       # any member of the chat: its games are watched there
    listed = list(reversed(games))[:HISTORY_SIZE]   # newest first, as the lines are
    assert links(reply) == [(t("en", "button.review_game", id=g), review_url(chat, g), False) for g in listed]
    for g in listed:
        assert f"#{g}" in reply.text
    assert reply.text.endswith(t("en", "history.review"))
    # Within every platform's limits: Discord's 5 rows of 5, Telegram's 100 buttons.
    assert len(reply.buttons) <= 5 and all(len(row) <= 5 for row in reply.buttons)
    # /games done is the same list, with the same buttons; @user's games too.
    assert links(chat.say("ana", "/games done")[0]) == links(reply)
    assert [url for _, url, _ in links(chat.say("ana", "/history @bob")[0])] == [review_url(chat, g) for g in listed]


def test_history_in_another_chat_lists_and_links_only_that_chats_games(chat):
    mine = finished_game(chat)
    serve(chat)
    chat.say("eve", "/new italian white", chat="group-2")
    chat.say("fay", "/accept", chat="group-2")
    other = chat.service.storage.games.find(PLATFORM, "group-2", status="active")[0].id
    chat.say("eve", f"/resign #{other}", chat="group-2")
    chat.say("eve", f"/resign #{other}", chat="group-2")
    [reply] = chat.say("eve", "/history", chat="group-2")
    assert [url for _, url, _ in links(reply)] == [review_url(chat, other)]
    assert review_url(chat, mine) not in [url for _, url, _ in links(reply)]


@pytest.mark.parametrize("command", ["/history xyz", "/history @nobody", "/history @a @b"])
def test_bad_history_arguments_get_no_buttons_and_change_nothing(chat, command):
    finished_game(chat)
    serve(chat)
    before = chat.snapshot()
    [reply] = chat.say("ana", command)
    assert reply.buttons == []
    assert chat.snapshot() == before


def test_the_review_button_is_given_to_the_games_chat_and_its_players_private_chats_only(chat):
    game = finished_game(chat)
    layer = chat.service.chat
    assert layer.review_button(PLATFORM, GROUP, game) is None        # no web board: no button
    serve(chat)
    button = layer.review_button(PLATFORM, GROUP, game)
    assert button is not None and (button.label, button.url, button.web_app) == (
        t("en", "button.review"), review_url(chat, game), False)
    # A player's private chat may have it; a stranger's, or another group, not.
    assert layer.review_button(PLATFORM, "dm-ana", game, private_user="ana") is not None
    assert layer.review_button(PLATFORM, "dm-eve", game, private_user="eve") is None
    assert layer.review_button(PLATFORM, "group-2", game) is None
    # Nor another platform's chat of the same id, a running game or a number that is no game.
    assert layer.review_button("discord", GROUP, game) is None
    running = chat.new_game("carol", "dave")
    assert layer.review_button(PLATFORM, GROUP, running) is None
    assert layer.review_button(PLATFORM, GROUP, 999_999) is None


def test_a_game_played_in_a_private_chat_is_reviewed_by_its_player_alone(chat):
    chat.say("ana", "/play 1 white", chat="dm-ana", kind="private")
    game = chat.service.storage.games.find(PLATFORM, "dm-ana", status="active")[0].id
    chat.say("ana", "/resign", chat="dm-ana", kind="private")
    chat.say("ana", "/resign", chat="dm-ana", kind="private")
    assert chat.game(game).status == "finished"
    serve(chat)
    layer = chat.service.chat
    assert layer.review_button(PLATFORM, "dm-ana", game, private_user="ana") is not None
    assert layer.review_button(PLATFORM, GROUP, game) is None
    assert layer.review_button(PLATFORM, "dm-bob", game, private_user="bob") is None
    # The group's /history does not list it either.
    assert str(game) not in "".join(url or "" for _, url, _ in links(chat.say("bob", "/history")[0]))


async def test_the_review_link_opens_the_games_page_and_its_first_ply(chat):
    game = finished_game(chat)
    serve(chat)
    [reply] = chat.say("ana", "/history")
    [(_, url, _)] = links(reply)
    assert url is not None
    parts = urlsplit(url)
    async with TestClient(TestServer(make_app(chat.service, WebConfig(poll_seconds=0.3)))) as client:
        page = await client.get(f"{parts.path}?{parts.query}")
        assert page.status == 200 and 'id="app"' in await page.text()
        token = dict(p.split("=", 1) for p in parts.query.split("&"))["t"]
        first = await client.get(f"/api/g/{game}/ply/0", headers={"Authorization": "Bearer " + token})
        assert first.status == 200 and (await first.json())["ok"]
        # A forged signature shows nothing and changes nothing.
        before = chat.snapshot()
        forged = await client.get(f"/api/g/{game}/state", headers={"Authorization": f"Bearer w{game}s{'A' * 22}"})
        assert forged.status == 401
        other = await client.get(f"/api/g/{game + 1}/state", headers={"Authorization": "Bearer " + token})
        assert other.status in (401, 403, 404)     # another game's signature opens nothing
        assert chat.snapshot() == before
