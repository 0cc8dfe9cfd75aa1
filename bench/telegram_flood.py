"""Telegram under flood control, in real time (issue 15, Telegram 1-3).

The Application as production builds it (``build_application``: its rate limiter included) on a
real service and SQLite file, against the strict fake Bot API of the tests on the real clock
(flood control: 1 message/s per chat with a burst of 3, 20/min per group, 30/s in all; answers to
button presses refused after 15 s).  Updates go through PTB's own update queue, as when polling.

1. Flood wait: Telegram holds one group in flood control for ``--flood`` seconds while a reply
   for it is sent; meanwhile private chats ask /help.  Prints the longest a private chat waited
   (the bot's silence in other chats) and how long the group's reply held its handler.
2. Group burst: 30 games time out in one group at once (30 outbox posts); meanwhile private chats
   ask /help every 0.25 s.  Prints p50/p95/max of the private replies' latency (target: p95 <= 1 s).
3. Busy group: presses on a game's board in that group while its 30 posts go out.  Prints the
   latency of the answers to the presses (target: every one within 1 s; Telegram drops an
   answer after 15 s) and how many Telegram refused as too old.

A burst in one group never fills Telegram's 30 messages a second in all: the daily post to
thousands of groups, which does, is ``bench/telegram_broadcast.py``'s (issue 29).

Run from the repository root::

    python bench/telegram_flood.py               # about a minute and a half
    python bench/telegram_flood.py --flood 30
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "platforms" / "telegram"))

from telegram_bench import PRIVATE_USERS, TelegramBench, pct  # noqa: E402
from telegram_fake_api import GROUP, USERS, FakeBotAPI  # noqa: E402

from bot.service import Reply  # noqa: E402

CHAT = GROUP["id"]


class Bench(TelegramBench):
    def __init__(self, folder: Path) -> None:
        super().__init__(folder, FakeBotAPI())
        self.http.add_chat(GROUP)

    async def ask_help(self, n: int) -> tuple[int, float]:
        user = self.user(n)
        message = self.http.incoming(self.private_chat(user), user, "/help")
        return user["id"], await self.put(message=message)

    def answered_at(self, chat_id: int, after: float) -> float | None:
        for call in self.http.calls:
            if call.method.startswith("send") and call.status == 200 and call.at >= after \
                    and int(call.params.get("chat_id", 0)) == chat_id:
                return call.at
        return None

    async def private_latencies(self, seconds: float, every: float) -> list[float]:
        """/help from the private chats in turn every ``every`` s for ``seconds``; the answers' latency."""
        asked: list[tuple[int, float]] = []
        end = time.time() + seconds
        n = 0
        while time.time() < end:
            asked.append(await self.ask_help(n % PRIVATE_USERS))
            n += 1
            await asyncio.sleep(every)
        give_up = time.time() + 120
        latencies: list[float] = []
        for chat_id, at in asked:
            while (done := self.answered_at(chat_id, at)) is None and time.time() < give_up:
                await asyncio.sleep(0.05)
            latencies.append((done if done is not None else give_up) - at)
        return latencies

    def burst(self, count: int = 30) -> None:
        with self.storage.transaction():
            for n in range(count):
                self.service.say("telegram", str(CHAT), Reply(f"Game #{n + 100}: time is up."))
        self.app.adapter.wake()


async def flood_wait(folder: Path, flood: float) -> dict[str, object]:
    bench = Bench(folder)
    async with bench.app:
        await bench.app.start()
        try:
            bench.http.flood(CHAT, flood)
            message = bench.http.incoming(GROUP, USERS["ana"], "/help")
            group_at = await bench.put(message=message)
            await asyncio.sleep(0.2)
            latencies = await bench.private_latencies(min(flood, 20.0), 0.5)
            # The group's reply: out after the flood (from the outbox), or still waiting.
            give_up = time.time() + flood * 3 + 10
            while (done := bench.answered_at(CHAT, group_at)) is None and time.time() < give_up:
                await asyncio.sleep(0.1)
        finally:
            await bench.app.stop()
    bench.storage.close()
    return {"flood control on the group (s)": flood,
            "longest silence in private chats (s)": max(latencies),
            "private replies asked / answered": f"{len(latencies)}",
            "group reply out after (s)": (done - group_at) if done else "never"}


async def group_burst(folder: Path) -> dict[str, object]:
    bench = Bench(folder)
    async with bench.app:
        await bench.app.start()
        try:
            bench.burst()
            await asyncio.sleep(0.2)
            latencies = await bench.private_latencies(15.0, 0.25)
        finally:
            await bench.app.stop()
    bench.storage.close()
    return {"private replies": len(latencies), "p50 (s)": pct(latencies, 0.5), "p95 (s)": pct(latencies, 0.95),
            "max (s)": max(latencies)}


async def busy_group(folder: Path) -> dict[str, object]:
    bench = Bench(folder)
    async with bench.app:
        await bench.app.start()
        try:
            # A game in the group: Ana against Bob, the board's buttons to press.
            await bench.new_game(GROUP)
            bench.burst()
            await asyncio.sleep(0.2)
            pressed: list[tuple[str, float]] = []
            for n in range(12):
                user = ("eve", "bob")[n % 2]                 # not their turn or not their game: alerts
                query = bench.http.callback_query(GROUP, USERS[user], "s:1:0:22")
                pressed.append((query["id"], await bench.put(callback_query=query)))
                await asyncio.sleep(1.0)
            give_up = time.time() + 120
            latencies: list[float] = []
            too_old = 0
            for query_id, at in pressed:
                while time.time() < give_up:
                    calls = [c for c in bench.http.named("answerCallbackQuery")
                             if str(c.params.get("callback_query_id")) == query_id]
                    if calls:
                        latencies.append(calls[0].at - at)
                        too_old += calls[0].status != 200
                        break
                    await asyncio.sleep(0.05)
                else:
                    latencies.append(give_up - at)
        finally:
            await bench.app.stop()
    bench.storage.close()
    return {"presses": len(latencies), "answer p50 (s)": pct(latencies, 0.5), "answer max (s)": max(latencies),
            "refused as too old": too_old}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flood", type=float, default=20.0, help="seconds of flood control on the group")
    args = parser.parse_args()
    logging.basicConfig(level=logging.CRITICAL)
    with tempfile.TemporaryDirectory() as tmp:
        for title, run in (("1. flood wait in one group", lambda p: flood_wait(p, args.flood)),
                           ("2. private replies during a 30-game burst in a group", group_burst),
                           ("3. button presses in a busy group", busy_group)):
            folder = Path(tmp) / title[:1]
            folder.mkdir()
            t0 = time.perf_counter()
            result = asyncio.run(run(folder))
            print(f"== {title} ({time.perf_counter() - t0:.0f} s)")
            for key, value in result.items():
                print(f"  {key}: {value:.2f}" if isinstance(value, float) else f"  {key}: {value}")


if __name__ == "__main__":
    main()
