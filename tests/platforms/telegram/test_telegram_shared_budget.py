"""One flood budget for all the processes of a bot (issue 29, item 3).

Telegram's limits (about 1 message a second in a chat, 20 a minute in a group, 30 a second in
all) are the bot token's.  Each webhook worker used to keep its own budget, so two workers posted
twice what Telegram allows and drew 429s where one drew none.  With a ``SharedBudget`` the workers
reserve their slots in the database they share.

First, two limiters (two processes' worth: each its own store connection) in one process against
the fake Bot API on the real clock, with and without the shared budget; then two real webhook
worker processes on one SQLite file against one fake on a real socket (webhook_workers); the two
games in one group on Telegram's time sped up for the fake and the workers' limiters alike (a
group's 20 messages a minute held those 48 presses to about two minutes of real time)."""

from __future__ import annotations

import asyncio
import time

import pytest
from telegram.error import RetryAfter
from telegram.ext import ExtBot
from telegram_fake_api import GROUP, FakeBotAPI
from webhook_workers import burst, two_games_in_one_group, workers_on_fake

from bot.platforms.telegram.limiter import FloodLimiter, SharedBudget, Throttled, retry_seconds, shared_budget
from bot.storage import SQLiteStore


class TwoProcesses:
    """Two bots, each with its own limiter (shared through one SQLite file, or not) and store."""

    def __init__(self, tmp_path, shared: bool) -> None:
        self.http = FakeBotAPI()
        self.http.add_chat(GROUP)
        self.stores = [SQLiteStore(tmp_path / "bot.db", busy_timeout=5.0) for _ in range(2)]
        self.limiters = [FloodLimiter(shared=SharedBudget(store.sends) if shared else None) for store in self.stores]
        self.bots = [ExtBot("123:TEST", request=self.http, rate_limiter=limiter) for limiter in self.limiters]
        self.throttled = 0

    async def __aenter__(self) -> TwoProcesses:
        for bot in self.bots:
            await bot.initialize()
        return self

    async def __aexit__(self, *exc: object) -> None:
        for bot in self.bots:
            await bot.shutdown()
        for store in self.stores:
            store.close()

    async def send(self, n: int, chat_id: int) -> None:
        try:
            await self.bots[n % 2].send_message(chat_id, f"m{n}")
        except Throttled:
            self.throttled += 1              # our own limiter's answer: for the outbox, later
        except RetryAfter:
            pass                             # Telegram's (counted in refused())

    def refused(self) -> int:
        return sum(1 for c in self.http.calls if c.status == 429)


@pytest.mark.parametrize("shared", [True, False], ids=["shared", "each-its-own"])
async def test_two_processes_within_the_global_limit_only_when_they_share_it(tmp_path, shared):
    async with TwoProcesses(tmp_path, shared) as two:
        for n in range(80):
            two.http.add_chat({"id": 9000 + n, "type": "private", "first_name": f"U{n}"})
        started = time.monotonic()
        await asyncio.gather(*(two.send(n, 9000 + n) for n in range(80)))
        seconds = time.monotonic() - started
        print(f"\n80 chats through two processes ({'shared' if shared else 'each its own'} budget): "
              f"{two.refused()} answered 429, in {seconds:.1f} s")
        if shared:
            assert two.refused() == 0 and two.throttled == 0
            assert seconds >= 80 / 30 * 1.1 - 1.5             # paced to one bot's 30 a second
        else:
            assert two.refused() > 0                          # what every worker did before


@pytest.mark.parametrize("shared", [True, False], ids=["shared", "each-its-own"])
async def test_two_processes_within_a_chats_limit_only_when_they_share_it(tmp_path, shared):
    async with TwoProcesses(tmp_path, shared) as two:
        await asyncio.gather(*(two.send(n, GROUP["id"]) for n in range(6)))
        if shared:
            # A burst of 3, then one every 1.1 s: the 6th within the limiter's inline wait.
            assert two.refused() == 0 and two.throttled == 0
            sent = sorted(c.at for c in two.http.calls if c.method == "sendMessage" and c.status == 200)
            assert len(sent) == 6 and sent[-1] - sent[0] >= 3 * 1.0
        else:
            assert two.refused() > 0


async def test_a_429_in_one_process_holds_the_chat_back_in_the_other(tmp_path):
    async with TwoProcesses(tmp_path, shared=True) as two:
        two.http.flood(GROUP["id"], 30)
        with pytest.raises(RetryAfter):
            await two.bots[0].send_message(GROUP["id"], "held")
        calls = len(two.http.calls)
        # The other process does not even try: it knows the chat's wait from the database.
        with pytest.raises(Throttled) as err:
            await two.bots[1].send_message(GROUP["id"], "held too")
        assert len(two.http.calls) == calls
        assert 25 < retry_seconds(err.value) <= 31


def test_the_budget_is_shared_in_webhook_mode_or_when_asked():
    store = object()
    assert shared_budget(store, {}) is None                               # type: ignore[arg-type]
    assert shared_budget(store, {"TELEGRAM_WEBHOOK_URL": "https://x.org/hook"}) is not None  # type: ignore[arg-type]
    assert shared_budget(store, {"TELEGRAM_WEBHOOK_URL": "https://x.org/hook",          # type: ignore[arg-type]
                                 "TELEGRAM_SHARED_BUDGET": "0"}) is None
    assert shared_budget(store, {"TELEGRAM_SHARED_BUDGET": "1"}) is not None            # type: ignore[arg-type]


# -- two real webhook workers ---------------------------------------------------------------------------


# How much faster than the real one Telegram's clock runs for the two games in one group.
GAMES_SPEED = 8.0


def test_two_webhook_workers_two_games_in_one_group_draw_no_429(tmp_path):
    with workers_on_fake(tmp_path, 2, shared=True, speed=GAMES_SPEED) as workers:
        result = two_games_in_one_group(workers, presses=24)
    print(f"\ntwo webhook workers, two games in one group, 24 presses a game: {result}")
    assert result["presses"] == 48
    assert result["refused"] == 0, workers.logs()[-3000:]
    assert "Traceback" not in workers.logs()


def test_two_webhook_workers_keep_the_global_and_a_chats_limit(tmp_path):
    with workers_on_fake(tmp_path, 2, shared=True) as workers:
        many = burst(workers, chats=60, per_chat=1)
        one = burst(workers, chats=1, per_chat=6, first=500)
    print(f"\ntwo webhook workers: 60 chats at once {many}; 6 messages in one chat {one}")
    assert many["refused"] == 0 and one["refused"] == 0, workers.logs()[-3000:]
    assert many["answered"] >= 60 and one["answered"] >= 6
    assert "Traceback" not in workers.logs()


async def test_two_database_round_trips_a_message_and_a_restarted_bot_still_shares(tmp_path):
    async with TwoProcesses(tmp_path, shared=True) as two:
        shared = two.limiters[0].shared
        assert shared is not None
        await two.send(0, GROUP["id"])
        assert shared.reservations == 2                   # the chat's (and group's) slot, a global one
        await two.bots[0].shutdown()
        await two.bots[0].initialize()                   # PTB shuts the limiter down with the bot
        await two.send(2, GROUP["id"])
        assert shared.reservations == 4 and two.refused() == 0
