"""The daily post to many groups against the replies people wait for (issue 29, item 1).

Through the ``tg`` harness: the production FloodLimiter and the strict fake, both on Telegram's
faster test clock (tg_helpers.SPEED).  The fake refuses (429) a 31st message in any second in all,
so a burst that went out without one stayed within Telegram's global budget.  Bounds are counted
in messages of the burst that went out meanwhile, not timed: 60 is two seconds of the budget."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta

import pytest
from telegram import Bot
from telegram.error import RetryAfter
from telegram_fake_api import GROUP, USERS, FakeBotAPI
from tg_helpers import SPEED

from bot.platforms.telegram.adapter import BULK_KINDS
from bot.platforms.telegram.limiter import retry_seconds
from bot.service.notifications import KINDS

CHAT = GROUP["id"]
BOB_CHAT = {"id": USERS["bob"]["id"], "type": "private", "first_name": "Bob", "username": "bob"}
GROUPS = 240                # 8 s of Telegram's 30 a second: a burst that fills it for several seconds
TWO_SECONDS = 60            # messages Telegram takes in two seconds


def subscribe(tg, chat_ids: list[int]) -> None:
    """The daily puzzle due a minute ago in every one of these groups (subscribed two days ago)."""
    now = time.time()
    due = (datetime.now(UTC) - timedelta(minutes=1)).strftime("%H:%M")
    with tg.storage.transaction():
        for chat_id in chat_ids:
            tg.storage.subscribe("telegram", str(chat_id), due, "UTC", "italian", now - 2 * 86400)
    tg.service.app.puzzles.daily_changed()          # as /daily does after it subscribes


def many_groups(tg, count: int) -> list[int]:
    groups = [-1_000_000_000_000 - n for n in range(count)]
    for chat_id in groups:
        tg.http.add_chat({"id": chat_id, "type": "supergroup", "title": f"G{chat_id}"})
    return groups


def posted(tg, groups: set[int], since: int = 0) -> list[int]:
    """The indexes in ``tg.http.calls`` of the messages that went out to these groups (from
    ``since`` on)."""
    return [i for i, c in enumerate(tg.http.calls[since:], since)
            if c.status == 200 and c.method.startswith("send") and int(c.params.get("chat_id", 0)) in groups]


async def burst_under_way(tg, groups: set[int], count: int, since: int) -> None:
    give_up = time.monotonic() + 20
    while len(posted(tg, groups, since)) < count:
        assert time.monotonic() < give_up, "the daily posts did not start"
        await asyncio.sleep(0.01)


async def start_the_daily_posts(tg, groups: list[int]) -> int:
    """Subscribes these groups and wakes the outbox; back once the first 30 posts are out, with the
    index in ``tg.http.calls`` they were counted from."""
    since = len(tg.http.calls)
    subscribe(tg, groups)
    tg.adapter.wake()
    await burst_under_way(tg, set(groups), 30, since)
    return since


async def all_posted(tg, groups: set[int], since: int) -> None:
    give_up = time.monotonic() + 30
    while len({int(tg.http.calls[i].params["chat_id"]) for i in posted(tg, groups, since)}) < len(groups):
        assert time.monotonic() < give_up, "not every group got its daily post"
        await asyncio.sleep(0.05)


def too_many(tg) -> list[str]:
    return [f"{c.method} {c.params.get('chat_id')}: {c.error}" for c in tg.http.calls if c.status == 429]


# -- the fake: Telegram's 30 a second in all ---------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")     # PTB's own RetryAfter
async def test_the_fake_refuses_a_31st_message_in_one_second_in_all():
    now = [1000.0]
    http = FakeBotAPI(clock=lambda: now[0])
    chats = [{"id": 5000 + n, "type": "private", "first_name": f"U{n}"} for n in range(32)]
    for chat in chats:
        http.add_chat(chat)
    async with Bot("123:TEST", request=http) as bot:
        for n, chat in enumerate(chats[:30]):
            now[0] += 0.01 if n else 0.0
            await bot.send_message(chat["id"], "hi")          # one each: no chat's own limit is near
        with pytest.raises(RetryAfter) as refused:
            await bot.send_message(chats[30]["id"], "hi")
        assert retry_seconds(refused.value) >= 1
        now[0] = 1000.0 + 1.0                                  # the first message's second is over
        await bot.send_message(chats[30]["id"], "hi")
        with pytest.raises(RetryAfter):                        # ...but not the second's
            await bot.send_message(chats[31]["id"], "hi")


# -- the production limiter: replies first, the burst at the rest of the budget ----------------------------


def test_the_daily_post_and_reminders_are_bulk_and_replies_to_people_are_not():
    assert BULK_KINDS <= set(KINDS)                                 # kinds the outbox really has
    assert {"daily_posted", "day_summary", "reminder"} <= BULK_KINDS
    assert not {"bot_moved", "turn_ping", "private_turn", "web_moved", "analysis_ready", ""} & BULK_KINDS


async def test_a_private_reply_goes_out_while_the_daily_posts_to_many_groups_drain(tg):
    groups = many_groups(tg, GROUPS)
    burst = set(groups)
    await tg.app.start()
    try:
        since = await start_the_daily_posts(tg, groups)
        for _ in range(3):
            before = len(posted(tg, burst))
            await asyncio.wait_for(tg.say("bob", "/help", chat=BOB_CHAT), 10)
            during = len(posted(tg, burst)) - before
            # Before: the answer waited for every post queued ahead of it (200 and more here).
            assert during < TWO_SECONDS, f"{during} posts went out before the answer"
            assert len(posted(tg, burst)) < GROUPS                 # ...and the burst was still on
            await asyncio.sleep(0.5 / SPEED)
        await all_posted(tg, burst, since)                                 # the burst drained all the same
    finally:
        await tg.app.stop()
    assert too_many(tg) == []                                       # within Telegram's 30 a second


async def test_the_board_of_a_move_in_a_subscribed_group_goes_out_while_the_posts_drain(tg):
    await tg.say("ana", "/new italian white 5m")
    await tg.say("bob", "/accept")
    groups = [CHAT, *many_groups(tg, GROUPS - 1)]                   # the game's group gets its post too
    burst = set(groups)
    await tg.app.start()
    try:
        since = await start_the_daily_posts(tg, groups)
        before = len(posted(tg, burst))
        boards = len(tg.http.named("sendPhoto", ok_only=True))
        await asyncio.wait_for(tg.say("ana", "/m 22-18"), 10)
        during = len(posted(tg, burst)) - before
        moved = [c for c in tg.http.named("sendPhoto", ok_only=True)[boards:]
                 if int(c.params["chat_id"]) == CHAT and "22-18" in (c.params.get("caption") or "")]
        assert moved, "the board after the move went out"
        assert during < TWO_SECONDS, f"{during} posts went out before the board"
        assert len(posted(tg, burst)) < GROUPS
        await all_posted(tg, burst, since)
    finally:
        await tg.app.stop()
    assert tg.storage.game(1).ply == 1
    assert too_many(tg) == []


async def test_a_stop_in_the_middle_of_the_posts_loses_none(tg):
    groups = many_groups(tg, GROUPS)
    burst = set(groups)
    await tg.app.start()
    try:
        since = await start_the_daily_posts(tg, groups)
        # Stopped at once: the senders waiting for their turn or a global slot are cancelled.
        await tg.adapter.stop_delivery(timeout=0.01)
        assert tg.limiter.waiting == (0, 0)
        out = len(posted(tg, burst, since))
        assert out < GROUPS
        # A post out but not yet marked sent when it was cancelled goes out again (better twice
        # than never, see bot.platforms.base); every other is either out or still pending.
        unmarked = len(tg.storage.find_outbox(status="pending")) - (GROUPS - out)
        assert 0 <= unmarked <= 30
        await asyncio.wait_for(tg.say("bob", "/help", chat=BOB_CHAT), 10)   # replies still go out
        tg.adapter.start_delivery()
        await all_posted(tg, burst, since)
    finally:
        await tg.app.stop()
    chats = [int(tg.http.calls[i].params["chat_id"]) for i in posted(tg, burst, since)]
    assert set(chats) == set(groups) and len(chats) == GROUPS + unmarked
    assert tg.limiter.waiting == (0, 0)
    assert too_many(tg) == []
