"""A board message never goes back to an older board (issue 29, item 4), and a button move costs at
most two of a group's posts (item 6).

Two webhook workers are two Applications, each with its own adapter, service, store connection and
production limiter, on one SQLite file, in front of one fake Bot API (one Telegram): what one
process knows the other does not, except through the database.  Updates reach them through the
fake's webhook delivery (routed: each press to the worker the test names)."""

from __future__ import annotations

import asyncio

import pytest
from fresh_db import fresh_database
from telegram import Update
from telegram_fake_api import GROUP, USERS, FakeBotAPI
from tg_helpers import SPEED, telegram_clock, telegram_sleep

from bot.platforms.telegram import TelegramAdapter
from bot.platforms.telegram.limiter import FloodLimiter
from bot.service import GameService, board_versions
from bot.storage import Storage

CHAT = GROUP["id"]
POSTS = ("sendMessage", "sendPhoto", "sendAnimation", "sendDocument", "editMessageMedia", "editMessageText",
         "editMessageCaption", "editMessageReplyMarkup")


class Worker:
    """One webhook worker process: its own store connection, service, adapter and limiter."""

    def __init__(self, path, http: FakeBotAPI, sleep=None) -> None:
        self.storage = Storage(path)
        self.service = GameService(self.storage)
        self.adapter = TelegramAdapter(self.service, **({"sleep": sleep} if sleep else {}))
        limiter = FloodLimiter(clock=telegram_clock, sleep=telegram_sleep)
        self.app = self.adapter.build("123:TEST", request=http, rate_limiter=limiter)
        self.errors: list[BaseException] = []
        self.app.add_error_handler(self._collect)

    async def _collect(self, update, context) -> None:
        self.errors.append(context.error)

    async def handle(self, update: dict) -> None:
        await self.app.process_update(Update.de_json(update, self.app.bot))


class Gate:
    """Worker A's backoff sleep: it says when it started and ends when the test lets it."""

    def __init__(self) -> None:
        self.sleeping = asyncio.Event()
        self.release = asyncio.Event()

    async def __call__(self, seconds: float) -> None:
        self.sleeping.set()
        await self.release.wait()


@pytest.fixture
async def two(tmp_path):
    path = fresh_database(tmp_path / "tg.db")
    http = FakeBotAPI(clock=telegram_clock)
    http.jitter = 0.02 * SPEED
    http.add_chat(GROUP)
    gate = Gate()
    a, b = Worker(path, http, sleep=gate), Worker(path, http)
    async with a.app, b.app:
        await a.app.bot.set_webhook("https://bot.example.org/tg")
        yield http, a, b, gate
    for worker in (a, b):
        worker.service.close()
        worker.storage.close()
        assert worker.errors == []
    assert http.unanswered_or_twice() == []


async def send(http: FakeBotAPI, worker: Worker, **payload) -> None:
    """An update, through the fake's webhook delivery, to one worker."""
    http.queue_update(**payload)
    await http.deliver_webhook([worker.handle])


async def say(http: FakeBotAPI, worker: Worker, user: str, text: str) -> None:
    await send(http, worker, message=http.incoming(GROUP, USERS[user], text))


async def test_a_retried_edit_never_puts_an_older_board_over_the_game(two):
    http, a, b, gate = two
    await say(http, a, "ana", "/new italian white")
    await say(http, b, "bob", "/accept")
    board = http.bot_messages(CHAT, "photo")[-1]
    # Ana picks a piece: worker A's edit meets a 502 and waits to try again.
    http.fail("editMessageMedia", 502, "Bad Gateway")
    select = http.callback_query(GROUP, USERS["ana"], "s:1:0:22", board.message_id)
    pick = asyncio.ensure_future(send(http, a, callback_query=select))
    await asyncio.wait_for(gate.sleeping.wait(), 10)
    # Her destination press reaches worker B, which plays the move and shows it.
    move = http.callback_query(GROUP, USERS["ana"], "d:1:0:22:18", board.message_id)
    await send(http, b, callback_query=move)
    assert a.storage.game(1).ply == 1
    shown_at = len(http.calls)
    # A's retry comes last: it finds the game moved on and sends nothing.
    gate.release.set()
    await asyncio.wait_for(pick, 10)
    assert [c.method for c in http.calls[shown_at:] if c.method in POSTS] == []
    latest = http.bot_messages(CHAT, "photo")[-1]
    assert "22-18" in latest.text and latest.buttons()[0].startswith("d:1:1:")
    remembered = [m for m, g in a.storage.board_messages("telegram", str(CHAT)) if g == 1][-1]
    assert int(remembered) == latest.message_id
    # The message A meant to edit still shows the start, not "choose its square" for ply 0.
    assert http.messages[(CHAT, board.message_id)].buttons() == board.buttons()


async def test_an_edit_of_a_stage_the_message_is_past_is_refused_across_processes(tmp_path):
    path = fresh_database(tmp_path / "tg.db")
    one, other = Storage(path), Storage(path)
    try:
        assert board_versions.claim_edit(one, "telegram", "-1", "7", 1, 0)
        assert board_versions.claim_edit(other, "telegram", "-1", "7", 1, 2)     # a later board, elsewhere
        assert not board_versions.claim_edit(one, "telegram", "-1", "7", 1, 0)
        assert board_versions.claim_edit(one, "telegram", "-1", "7", 1, 2)       # the same stage again
        assert board_versions.claim_edit(one, "telegram", "-1", "8", 1, 0)       # another message
        assert board_versions.written_stage(other, "telegram", "-1", "7") == 2
    finally:
        one.close()
        other.close()


def posts(http: FakeBotAPI, since: int) -> list[str]:
    return [c.method for c in http.calls[since:] if c.method in POSTS and str(c.params.get("chat_id")) == str(CHAT)]


async def test_a_button_move_costs_at_most_two_posts_and_pings_on_its_board(tg):
    await tg.say("ana", "/new italian white")
    await tg.say("bob", "/accept")
    board = tg.last_board()
    before = len(tg.http.calls)
    await tg.press("ana", "s:1:0:22")
    await tg.press("ana", "d:1:0:22:18")
    assert tg.storage.game(1).ply == 1
    assert posts(tg.http, before) == ["editMessageMedia", "sendPhoto"]
    new = tg.last_board()
    assert new.message_id != board.message_id and tg.http.notified(new) == [USERS["bob"]["id"]]
    # The new board is the game's: a reply to it names game 1.
    remembered = [m for m, g in tg.storage.board_messages("telegram", str(CHAT)) if g == 1][-1]
    assert int(remembered) == new.message_id
    # Bob's move by buttons on the new board: two posts again.
    before = len(tg.http.calls)
    await tg.press("bob", "s:1:1:11", message_id=new.message_id)
    await tg.press("bob", "d:1:1:11:15", message_id=new.message_id)
    assert tg.storage.game(1).ply == 2
    assert posts(tg.http, before) == ["editMessageMedia", "sendPhoto"]


async def test_a_destination_left_on_the_old_board_is_answered_as_stale(tg):
    await tg.say("ana", "/new italian white")
    await tg.say("bob", "/accept")
    board = tg.last_board()
    await tg.press("ana", "s:1:0:22")
    await tg.press("ana", "d:1:0:22:18")
    await tg.press("ana", "d:1:0:22:19", message_id=board.message_id)
    assert tg.storage.game(1).ply == 1


async def test_in_a_group_a_move_is_one_press_and_one_post(tg):
    await tg.say("ana", "/new italian white")
    await tg.say("bob", "/accept")
    board = tg.last_board()
    assert board.buttons()[0] == "d:1:0:21:17" and all(b.startswith("d:1:0:") for b in board.buttons()[:7])
    before = len(tg.http.calls)
    await tg.press("ana", "d:1:0:22:18", message_id=board.message_id)
    assert tg.storage.game(1).ply == 1
    assert posts(tg.http, before) == ["sendPhoto"]
    new = tg.last_board()
    assert tg.http.notified(new) == [USERS["bob"]["id"]] and new.buttons()[0].startswith("d:1:1:")


async def test_a_private_chat_keeps_the_piece_then_its_square(tg):
    # One chat, one player at a time: no group budget to save, and the piece's squares are drawn.
    private = tg.http.start_private("ana")
    await tg.say("ana", "/play italian level 1 white", chat=private)
    board = tg.last_board(private)
    assert board.buttons()[:4] == ["s:1:0:21", "s:1:0:22", "s:1:0:23", "s:1:0:24"]
