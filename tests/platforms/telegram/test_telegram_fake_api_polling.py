"""The fake Bot API serves one getUpdates long poll per token, as Telegram does: a newer poll ends
the one under way with 409 "Conflict: terminated by other getUpdates request; ...", and the
offset a poll carries confirms the updates before it even when that poll is ended.  Driven
through real python-telegram-bot ``Bot``s (two processes' worth) on one fake."""

from __future__ import annotations

import asyncio

import pytest
from telegram import Bot
from telegram.error import Conflict
from telegram_fake_api import CONFLICT, USERS, FakeBotAPI

PRIVATE = {"id": USERS["bob"]["id"], "type": "private", "first_name": "Bob", "username": "bob"}


@pytest.fixture
async def two_bots():
    fake = FakeBotAPI()
    fake.long_poll = 5.0
    first = Bot("123:TEST", request=fake, get_updates_request=fake)
    second = Bot("123:TEST", request=fake, get_updates_request=fake)
    async with first, second:
        yield fake, first, second


async def test_a_newer_poll_ends_the_older_with_409(two_bots):
    fake, first, second = two_bots
    older = asyncio.create_task(first.get_updates(timeout=5))
    await asyncio.sleep(0.1)
    assert not older.done(), "an empty long poll waits"
    newer_poll = asyncio.create_task(second.get_updates(timeout=5))
    with pytest.raises(Conflict, match="terminated by other getUpdates request"):
        await asyncio.wait_for(older, 2)
    fake.queue_update(message=fake.incoming(PRIVATE, USERS["bob"], "/help"))
    newer = await asyncio.wait_for(newer_poll, 2)
    assert [u.update_id for u in newer] == [1], "the newer poll is served"
    assert [c.status for c in fake.named("getUpdates")] == [409, 200]
    assert fake.named("getUpdates")[0].error == CONFLICT


async def test_the_ended_poll_confirmed_its_offset(two_bots):
    fake, first, second = two_bots
    fake.queue_update(message=fake.incoming(PRIVATE, USERS["bob"], "/help"))
    got = await first.get_updates(timeout=5)
    assert [u.update_id for u in got] == [1]
    older = asyncio.create_task(first.get_updates(offset=2, timeout=5))
    await asyncio.sleep(0.1)
    newer = asyncio.create_task(second.get_updates(offset=0, timeout=1))
    with pytest.raises(Conflict):
        await asyncio.wait_for(older, 2)
    assert await asyncio.wait_for(newer, 3) == (), "update 1 was confirmed by the poll that was ended"


async def test_an_update_ends_a_waiting_poll_at_once(two_bots):
    fake, first, _ = two_bots
    waiting = asyncio.create_task(first.get_updates(timeout=5))
    await asyncio.sleep(0.1)
    fake.queue_update(message=fake.incoming(PRIVATE, USERS["bob"], "/help"))
    got = await asyncio.wait_for(waiting, 1)
    assert [u.update_id for u in got] == [1]
