"""The web board wired into the Discord adapter: served in the bot's loop from setup_hook to close
(a real aiohttp server on 127.0.0.1, port 0), /web answered ephemerally with the member's own
seat link, and the Open board button under each board, whose press answers the presser alone."""

from __future__ import annotations

import time
from pathlib import Path

import aiohttp
import pytest
from discord_fake import TOKEN, FakeDiscord, Harness, Sent, install, uid
from fresh_db import fresh_database

from bot.i18n import t
from bot.platforms.discord import DraughtsBot
from bot.service import GameService
from bot.service.web import Seat
from bot.storage import Storage

WEB_ENV = {"WEB_URL": "https://board.example.org", "PORT": "0", "WEB_HOST": "127.0.0.1"}


def link_buttons(sent: Sent) -> list[tuple[str, str]]:
    return [(c["label"], c["url"]) for row in sent.message["components"] for c in row["components"]
            if c.get("style") == 5]


def seat_of(h: Harness, url: str) -> Seat:
    seat = h.bot.service.web.read_token(url.partition("?t=")[2])
    assert isinstance(seat, Seat), url
    return seat


def games_and_moves(h: Harness) -> dict:
    dump = h.storage.dump()
    assert "games" in dump and "moves" in dump
    return {table: dump[table] for table in ("games", "moves", "outbox") if table in dump}


@pytest.fixture
async def web_h(h: Harness):
    h.bot.env = WEB_ENV
    await h.bot.start_web()
    assert h.bot.web_server is not None
    return h


async def test_web_answers_the_player_alone_with_their_own_seat_link(web_h: Harness):
    h = web_h
    game_id, _ = await h.new_game()
    token = await h.slash("web", "ana")
    answer = h.only_answer(token)
    assert answer.ephemeral and answer.content == t("en", "weblink.yours", id=game_id)
    (mine, mine_url), (watch, watch_url) = link_buttons(answer)
    assert (mine, watch) == (t("en", "weblink.open"), t("en", "weblink.spectate"))
    assert mine_url.startswith(f"https://board.example.org/g/{game_id}?t=")
    # Signed (issue 30): a game's number alone shows nothing.
    assert watch_url == f"https://board.example.org/g/{game_id}?t={h.bot.service.web.watch_token(game_id)}"
    seat = seat_of(h, mine_url)
    assert (seat.game_id, seat.platform, seat.user_id) == (game_id, "discord", str(uid("ana")))
    # The token moves for Ana in this game only: not for Bob, not in another game.
    service = h.bot.service.web
    assert service.state(game_id, seat, "en").you == "W"
    other_game, _ = await h.new_game("cid", "bob")
    assert service.state(other_game, seat, "en").you is None
    assert service.state(game_id, Seat(game_id, "discord", str(uid("bob")), seat.expires), "en").you == "B"
    refused = service.move(Seat(other_game, "discord", seat.user_id, seat.expires), "en", text="22-18")
    assert refused.outcome == "forbidden" and h.storage.game(other_game).ply == 0


async def test_a_spectator_gets_the_spectator_link_only(web_h: Harness):
    h = web_h
    game_id, _ = await h.new_game()
    answer = h.only_answer(await h.slash("web", "cid", {"game": game_id}))
    assert answer.ephemeral and answer.content == t("en", "weblink.watch", id=game_id)
    assert link_buttons(answer) == [(t("en", "weblink.spectate"), f"https://board.example.org/g/{game_id}?t={h.bot.service.web.watch_token(game_id)}")]


async def test_the_open_board_button_answers_each_presser_with_their_own_link(web_h: Harness):
    h = web_h
    game_id, board = await h.new_game()
    action = f"dr:wb:{game_id}"
    assert board.custom_ids()[-1] == action                  # under the piece buttons
    assert len(board.message["components"]) <= 5
    before = games_and_moves(h)
    answer = h.only_answer(await h.click(action, "bob", board))
    assert answer.ephemeral
    seat = seat_of(h, link_buttons(answer)[0][1])
    assert (seat.game_id, seat.user_id) == (game_id, str(uid("bob")))
    answer = h.only_answer(await h.click(action, "cid", board))
    assert answer.ephemeral and link_buttons(answer) == [
        (t("en", "weblink.spectate"), f"https://board.example.org/g/{game_id}?t={h.bot.service.web.watch_token(game_id)}")]
    # A press only reads: the games are as they were (any press notes who pressed, as ever).
    assert h.storage.game(game_id).ply == 0 and games_and_moves(h) == before


async def test_without_web_url_there_is_no_button_and_web_says_so(h: Harness):
    game_id, board = await h.new_game()
    assert not any(cid.startswith("dr:wb:") for cid in board.custom_ids())
    answer = h.only_answer(await h.slash("web", "ana"))
    assert answer.ephemeral and answer.content == t("en", "weblink.off")


async def test_the_board_is_served_from_setup_hook_until_close(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    storage = Storage(fresh_database(tmp_path / "web.db"))
    service = GameService(storage, clock=time.time)
    fake = FakeDiscord()
    bot = DraughtsBot(service, clock=fake.now, env=WEB_ENV)
    install(fake, monkeypatch, bot.http)
    try:
        await bot.login(TOKEN)                  # runs setup_hook
        server = bot.web_server
        assert server is not None and service.chat.web is not None
        async with aiohttp.ClientSession() as http, \
                http.get(f"http://127.0.0.1:{server.port}/static/board.css") as answer:
            assert answer.status == 200
    finally:
        await bot.close()
        storage.close()
    assert bot.web_server is None and service.chat.web is None
    with pytest.raises(aiohttp.ClientConnectionError):
        async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{server.port}/tg"):
            pass
    assert not fake.refused, fake.refusals
