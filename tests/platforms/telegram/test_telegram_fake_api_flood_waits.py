"""The fake Bot API lengthens the wait of a chat that keeps posting while told to wait, as Telegram
does with a bot that keeps hitting its limits (issue 29, item 7): each post before the wait is over
is told to wait twice as long, from then; one that waits as told goes through, and the waits start
short again."""

from __future__ import annotations

import pytest
from telegram_fake_api import FLOOD_LONGEST, GROUP
from tg_helpers import PRIVATE_ANA as PRIVATE
from tg_helpers import fake_on_a_hand_clock, told_to_wait

CHAT = GROUP["id"]


@pytest.fixture
async def timed():
    async for fake_bot_now in fake_on_a_hand_clock():
        yield fake_bot_now


async def test_posting_while_told_to_wait_doubles_the_wait_each_time(timed):
    fake, bot, now = timed
    for n in range(3):
        await bot.send_message(PRIVATE["id"], f"m{n}")
    assert await told_to_wait(bot.send_message(PRIVATE["id"], "one too many")) == 1
    now[0] += 0.5                              # did not wait as told
    assert await told_to_wait(bot.send_message(PRIVATE["id"], "again")) == 2
    now[0] += 1.0
    assert await told_to_wait(bot.send_message(PRIVATE["id"], "and again")) == 4
    now[0] += 3.9
    assert await told_to_wait(bot.send_message(PRIVATE["id"], "almost")) == 8
    # Every 429 counts as one: the refused posts took none of the chat's budget.
    assert [c.status for c in fake.calls[-4:]] == [429] * 4
    now[0] += 8.0                              # waited as told: through, and nothing is held
    await bot.send_message(PRIVATE["id"], "after the wait")
    await bot.send_message(CHAT, "other chats were never held")


async def test_a_chat_that_waits_as_told_is_told_the_short_wait_again(timed):
    fake, bot, now = timed
    for n in range(3):
        await bot.send_message(PRIVATE["id"], f"m{n}")
    assert await told_to_wait(bot.send_message(PRIVATE["id"], "one too many")) == 1
    now[0] += 1.0
    await bot.send_message(PRIVATE["id"], "waited")
    assert await told_to_wait(bot.send_message(PRIVATE["id"], "too soon")) == 1


async def test_the_wait_grows_up_to_an_hour(timed):
    fake, bot, now = timed
    for n in range(3):
        await bot.send_message(PRIVATE["id"], f"m{n}")
    waits = [await told_to_wait(bot.send_message(PRIVATE["id"], f"x{n}")) for n in range(15)]
    assert waits[:4] == [1, 2, 4, 8] and max(waits) == FLOOD_LONGEST == waits[-1]


async def test_a_staged_flood_is_not_lengthened(timed):
    fake, bot, now = timed
    fake.flood(CHAT, 60)
    assert await told_to_wait(bot.send_message(CHAT, "hello")) == 60
    now[0] += 30
    assert await told_to_wait(bot.send_message(CHAT, "hello")) == 30
    now[0] += 30
    await bot.send_message(CHAT, "over")
