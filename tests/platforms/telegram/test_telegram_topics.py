"""Forum topics (issue 15, item 4): a topic is a chat of its own for the bot, "<chat>:<topic>"
(games, settings, the daily post), and everything the bot sends there carries the topic's
``message_thread_id``: replies, boards after a button press, reminders, time-outs, the daily post.
General stays the plain chat.  A topic (or General) that is closed, or a topic that was deleted,
never takes a message: the message is dropped at once, not retried for a day.

Real PTB Application, real service and SQLite, the strict fake Bot API (which puts a send without
``message_thread_id`` in General)."""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from concurrent.futures import ThreadPoolExecutor
from zoneinfo import ZoneInfo

from telegram_fake_api import GROUP, USERS

from bot.i18n import t
from bot.rules import Position
from bot.service.thinking import Thinker

CHAT = GROUP["id"]
PLATFORM = "telegram"


def topic_chat(thread: int) -> str:
    return f"{CHAT}:{thread}"


def sent_by_bot(tg) -> list:
    """The bot's messages in the group, as the fake holds them (with the topic each landed in)."""
    return tg.http.bot_messages(CHAT)


def outbox(tg) -> list[tuple[str, str, int]]:
    return [(m.chat_id, m.status, m.attempts) for m in tg.storage.find_outbox()]


async def game_in_topic(tg) -> int:
    """Ana challenges in the topic "Draughts" and Bob accepts with the button: the topic's id."""
    topic = tg.http.open_topic(GROUP, "Draughts", USERS["ana"])
    await tg.say("ana", "/new italian white 5m", thread=topic)
    await tg.press("bob", "acc:1")
    return topic


async def test_a_game_in_a_topic_is_the_topics_and_its_boards_land_there(tg):
    topic = await game_in_topic(tg)
    assert tg.storage.game(1).chat_id == topic_chat(topic)
    # The challenge (a reply) and the board after the Accept button (no reply: it needs the id).
    assert [(m.kind, m.thread) for m in sent_by_bot(tg)] == [("text", topic), ("photo", topic)]
    await tg.say("ana", "/m 22-18", thread=topic)
    board = tg.last_board()
    assert board.thread == topic and "22-18" in board.text
    assert all(c.params.get("message_thread_id") == topic for c in tg.http.named("sendPhoto"))


async def test_a_topic_is_a_chat_of_its_own(tg):
    topic = await game_in_topic(tg)
    other = tg.http.open_topic(GROUP, "Chat", USERS["bob"])
    # In another topic, and in General, Ana has no game: her move there plays nothing.
    await tg.say("ana", "/m 22-18", thread=other)
    await tg.say("ana", "/m 22-18")
    assert tg.storage.game(1).ply == 0
    assert tg.storage.active_games(PLATFORM, str(CHAT)) == []
    assert [g.id for g in tg.storage.active_games(PLATFORM, topic_chat(topic))] == [1]
    # Each answer went where it was asked.
    answers = [m for m in sent_by_bot(tg) if m.kind == "text"][-2:]
    assert [m.thread for m in answers] == [other, None]
    # A setting of the topic is the topic's.
    tg.http.admins.add((CHAT, USERS["ana"]["id"]))
    await tg.say("ana", "/lang it", thread=topic)
    await tg.say("bob", "/help", thread=other)
    assert sent_by_bot(tg)[-1].thread == other
    assert sent_by_bot(tg)[-1].text.startswith(t("en", "help.intro"))


async def test_a_button_board_sent_anew_goes_to_the_topic(tg):
    topic = await game_in_topic(tg)
    board = tg.last_board()
    del tg.http.messages[(CHAT, board.message_id)]      # deleted by an admin: the edit is refused
    tg.expect_refusals(1)
    query = tg.http.callback_query(GROUP, USERS["ana"], "s:1:0:22", message_id=None)
    query["message"] = board.as_dict(tg.http.chats)     # the press came from the old board
    await tg.update(callback_query=query)
    fresh = tg.last_board()
    assert fresh.message_id != board.message_id and fresh.thread == topic


async def test_reminders_and_time_outs_reach_the_topic(tg):
    topic = await game_in_topic(tg)
    game = tg.storage.game(1)
    offset = [0.0]
    tg.service.clock = lambda: time.time() + offset[0]
    offset[0] = game.deadline_at - 20 - time.time()       # the reminder is due
    assert await tg.adapter.delivery_round() == 1
    offset[0] = game.deadline_at + 1 - time.time()        # the loss on time
    assert await tg.adapter.delivery_round() == 1
    reminder, timeout = sent_by_bot(tg)[-2:]
    assert (reminder.kind, reminder.thread) == ("text", topic)
    assert (timeout.kind, timeout.thread) == ("photo", topic)
    assert tg.storage.game(1).result_reason == "time"


async def test_the_daily_post_of_a_topic_goes_to_that_topic(tg):
    madrid = ZoneInfo("Europe/Madrid")
    day = dt.date(2026, 5, 4)
    clock = [dt.datetime(day.year, day.month, day.day, 8, tzinfo=madrid).timestamp()]
    tg.service.clock = lambda: clock[0]
    topic = tg.http.open_topic(GROUP, "Puzzles", USERS["ana"])
    tg.http.admins.add((CHAT, USERS["ana"]["id"]))
    await tg.say("ana", "/daily on italian", thread=topic)
    assert tg.storage.subscription(PLATFORM, topic_chat(topic)).active
    assert tg.storage.subscription(PLATFORM, str(CHAT)) is None
    clock[0] += 3600
    assert await tg.adapter.delivery_round() == 1
    post = tg.last_board()
    assert post.thread == topic
    # An answer typed as a reply to the post, in the topic, is the topic's puzzle's.
    await tg.say("bob", "/m 1-2", reply_to=post.message_id, thread=topic)
    assert sent_by_bot(tg)[-1].thread == topic


async def test_a_closed_topic_drops_the_message_at_once(tg):
    topic = await game_in_topic(tg)
    game = tg.storage.game(1)
    tg.http.close_topic(CHAT, topic)
    offset = [game.deadline_at - 20 - time.time()]
    tg.service.clock = lambda: time.time() + offset[0]
    assert await tg.adapter.delivery_round() == 0
    assert outbox(tg) == [(topic_chat(topic), "dropped", 1)]
    sends = len(tg.http.named("sendMessage"))
    offset[0] += 3600
    assert await tg.adapter.delivery_round() == 0
    assert len(tg.http.named("sendMessage")) == sends            # nothing is tried again
    assert tg.http.refused(injected=False)[-1].error == "Bad Request: TOPIC_CLOSED"
    tg.expect_refusals(2)                                         # the reminder, the time-out


async def test_a_closed_general_drops_the_message_and_does_not_hold_back_the_topics(tg):
    await tg.say("ana", "/new italian white 5m")
    await tg.say("bob", "/accept")
    topic = tg.http.open_topic(GROUP, "Draughts", USERS["eve"])
    await tg.say("eve", "/new italian white 5m", thread=topic)
    await tg.say("bob", "/accept", thread=topic)
    game = tg.storage.game(2)
    tg.http.close_topic(CHAT, None)
    offset = [game.deadline_at - 20 - time.time()]        # both reminders are due
    tg.service.clock = lambda: time.time() + offset[0]
    assert await tg.adapter.delivery_round() == 1
    assert sorted(outbox(tg)) == [(str(CHAT), "dropped", 1), (topic_chat(topic), "sent", 0)]
    assert sent_by_bot(tg)[-1].thread == topic
    tg.expect_refusals(1)


async def test_a_deleted_topic_drops_the_message(tg):
    topic = await game_in_topic(tg)
    game = tg.storage.game(1)
    tg.http.delete_topic(CHAT, topic)
    tg.service.clock = lambda: game.deadline_at - 20
    await tg.adapter.delivery_round()
    assert outbox(tg) == [(topic_chat(topic), "dropped", 1)]
    assert tg.http.refused(injected=False)[-1].error == "Bad Request: message thread not found"
    tg.expect_refusals(1)


async def test_an_answer_in_a_topic_to_a_message_deleted_meanwhile_still_arrives(tg):
    # In a topic Telegram ignores allow_sending_without_reply: the answer goes without the reply.
    topic = tg.http.open_topic(GROUP, "Draughts", USERS["ana"])
    message = tg.http.incoming(GROUP, USERS["bob"], "/help", thread=topic)
    del tg.http.messages[(CHAT, message["message_id"])]
    await tg.update(message=message)
    tg.expect_refusals(1)
    answer = sent_by_bot(tg)[-1]
    assert answer.thread == topic and answer.text.startswith(t("en", "help.intro"))


async def test_the_bots_move_reaches_the_topic_and_is_remembered_there(tg):
    pool = ThreadPoolExecutor(2)
    tg.service.thinker = Thinker(pool)
    tg.service.bot_seconds = 0.2
    try:
        topic = tg.http.open_topic(GROUP, "Draughts", USERS["ana"])
        await tg.say("ana", "/play italian level 1 white", thread=topic)
        await tg.say("ana", "/m 22-18", thread=topic)
        assert await asyncio.to_thread(tg.service.settle, 20)
        assert await tg.adapter.delivery_round() == 1
        board = tg.last_board()
        assert board.thread == topic and len(tg.storage.moves(1)) == 2
        assert tg.storage.game_of_message(PLATFORM, topic_chat(topic), str(board.message_id)) == 1
        # A move typed as a reply to that board, in the topic, is played in the topic's game.
        pos = Position.from_fen("italian", tg.storage.game(1).fen)
        await tg.say("ana", str(pos.legal_moves()[0]), reply_to=board.message_id, thread=topic)
        assert tg.storage.game(1).ply >= 3 and tg.storage.moves(1)[2].by_user == "1"   # the bot may answer at once
    finally:
        assert tg.service.settle(20)
        pool.shutdown(wait=True)
