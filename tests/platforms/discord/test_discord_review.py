"""Issue 34's Review links on Discord (discord.py on the fake API, the real board server on
127.0.0.1): a link button to the game's signed page at its first ply beside Open board under a
finished game's board, and one for each game /history lists, within Discord's 5 rows of 5; each
opens the game's page."""

from __future__ import annotations

from urllib.parse import urlsplit

import aiohttp
from discord_fake import CHANNEL_ID, Harness, Sent
from test_discord_web import WEB_ENV, link_buttons

from bot.i18n import t
from bot.service import ChatEvent


async def web(h: Harness) -> Harness:
    h.bot.env = WEB_ENV
    await h.bot.start_web()
    assert h.bot.web_server is not None
    return h


async def finished(h: Harness) -> tuple[int, Sent]:
    game_id, _ = await h.new_game()
    await h.slash("resign", "ana", {})
    token = await h.slash("resign", "ana", {})
    assert h.storage.game(game_id).status == "finished"
    return game_id, h.only_answer(token)


def finished_in_channel(h: Harness) -> int:
    def say(user: str, text: str) -> list:
        return h.bot.service.handle(ChatEvent(platform="discord", chat_id=str(CHANNEL_ID), user_id=user,
                                              user_name=user.capitalize(), username=user, text=text))
    say("901", "/new italian white")
    game_id = say("902", "/accept")[0].game_id
    say("901", "/resign")
    say("901", "/resign")
    assert game_id is not None and h.storage.game(game_id).status == "finished"
    return int(game_id)


def review_url(h: Harness, game_id: int) -> str:
    return f"https://board.example.org/g/{game_id}?t={h.bot.service.web.watch_token(game_id)}&ply=0"


async def opens(h: Harness, url: str) -> int:
    parts = urlsplit(url)
    local = f"http://127.0.0.1:{h.bot.web_server.port}{parts.path}?{parts.query}"
    async with aiohttp.ClientSession() as http, http.get(local) as answer:
        return answer.status


async def test_a_finished_board_has_a_review_link_beside_open_board(h: Harness):
    await web(h)
    try:
        game_id, board = await finished(h)
        assert link_buttons(board) == [(t("en", "button.review"), review_url(h, game_id))]
        rows = board.message["components"]
        # Rematch first, then Open board and Review in one row: no row more than before.
        assert [c.get("custom_id") for c in rows[-1]["components"]] == [f"dr:wb:{game_id}", None]
        assert len(rows) <= 5
        assert await opens(h, review_url(h, game_id)) == 200
    finally:
        await h.bot.stop_web()


async def test_a_running_board_has_no_review_link(h: Harness):
    await web(h)
    try:
        _, board = await h.new_game()
        assert link_buttons(board) == []
    finally:
        await h.bot.stop_web()


async def test_history_has_a_review_link_for_each_game_in_rows_of_five(h: Harness):
    await web(h)
    try:
        # Played through the service in the channel (six games through interactions would outlast
        # Discord's 3 s on a busy machine); /history is asked on Discord.
        games = [finished_in_channel(h) for _ in range(6)]
        answer = h.only_answer(await h.slash("history", "cid", {}))
        assert link_buttons(answer) == [(t("en", "button.review_game", id=g), review_url(h, g))
                                        for g in reversed(games)]
        assert [len(row["components"]) for row in answer.message["components"]] == [5, 1]
        for g in games[:2]:
            assert await opens(h, review_url(h, g)) == 200
    finally:
        await h.bot.stop_web()


async def test_without_the_web_board_there_is_no_review_link(h: Harness):
    _, board = await finished(h)
    assert link_buttons(board) == []
    assert link_buttons(h.only_answer(await h.slash("history", "ana", {}))) == []
