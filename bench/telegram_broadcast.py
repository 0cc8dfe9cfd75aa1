"""Telegram: the daily post to N groups against the replies people wait for (issue 29, item 1).

The Application as production builds it (``build_application``, its FloodLimiter included) on a
real service and SQLite file, against the strict fake Bot API of the tests (flood control: 1
message/s per chat with a burst of 3, 20/min per group, at most 30 in any second in all).  N
groups are subscribed to the daily puzzle, due now: the delivery task posts it to all of them,
which fills Telegram's 30 messages a second for N/30 s.  Meanwhile:

- private chats ask /help every 0.25 s (20 users in turn): the answers' latency;
- in one of the N groups (its own post part of the burst) Ana and Bob play a game, a move every
  4 s: the latency of the board after each move.

Printed: p50/p95/max of both latencies (target: p95 <= 2 s), and how long the burst took from
the first post to the last against its physical limit N/30 s (target: <= 1.6x).

``--speed S`` runs Telegram's clock (the fake's flood control and the limiter's spacing and waits)
S times faster than the real one, to make a large N take less time; every figure printed is in
Telegram's seconds (real seconds x S).  Updates go through PTB's own update queue, as when polling.

Run from the repository root::

    python bench/telegram_broadcast.py                       # N = 1500 and 5000 in real time, ~5 min
    python bench/telegram_broadcast.py --groups 1500 --speed 2
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import logging
import random
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "platforms" / "telegram"))

from telegram_bench import PRIVATE_USERS, TelegramBench, pct  # noqa: E402
from telegram_fake_api import GROUP, USERS, FakeBotAPI  # noqa: E402

from bot.platforms.telegram.limiter import FloodLimiter  # noqa: E402
from bot.rules import Game  # noqa: E402

HELP_EVERY = 0.25           # real seconds between two private /help
# Real seconds between two moves of the live game: 15 boards a minute, within Telegram's 20 a
# minute in one group (a faster game waits for that limit, whatever the broadcast does).
MOVE_EVERY = 4.0
GAME = GROUP["id"]          # the group with the live game; subscribed like the others
POSTING = ("sendMessage", "sendPhoto", "sendAnimation", "sendDocument", "editMessageMedia", "editMessageText")


def game_moves(plies: int) -> list[str]:
    """A fixed sequence of legal Italian moves (random, seeded)."""
    rng = random.Random(29)
    game = Game("italian")
    out: list[str] = []
    while len(out) < plies and game.result is None:
        move = rng.choice(game.position.legal_moves())
        game.play(move)
        out.append(str(move))
    return out


class Bench(TelegramBench):
    def __init__(self, folder: Path, groups: int, speed: float) -> None:
        self.speed = speed

        async def sleep(seconds: float) -> None:
            await asyncio.sleep(seconds / speed)

        limiter = FloodLimiter(clock=lambda: time.monotonic() * speed, sleep=sleep)
        super().__init__(folder, FakeBotAPI(clock=lambda: time.monotonic() * speed), rate_limiter=limiter)
        self.groups = [GAME, *(-1_000_000_000_000 - n for n in range(1, groups))]
        for chat_id in self.groups:
            self.http.add_chat({"id": chat_id, "type": "supergroup", "title": f"G{chat_id}"})

    def subscribe_all(self) -> None:
        """Every group's daily puzzle due a minute ago (subscribed two days ago)."""
        now = time.time()
        due = (datetime.now(UTC) - timedelta(minutes=1)).strftime("%H:%M")
        with self.storage.transaction():
            for chat_id in self.groups:
                self.storage.subscribe("telegram", str(chat_id), due, "UTC", "italian", now - 2 * 86400)
        self.service.app.puzzles.daily_changed()      # as /daily does after it subscribes

    def sent(self, chat_id: int) -> list[float]:
        """When each message to a chat reached Telegram (real time)."""
        return [c.at for c in self.http.calls
                if c.method in POSTING and c.status == 200 and int(c.params.get("chat_id", 0)) == chat_id]

    def posts(self, since: float) -> dict[int, float]:
        """When each group's first message since ``since`` went out: its daily post (the live
        game's group, whose post is one of its messages, is left out of this count)."""
        first: dict[int, float] = {}
        for call in self.http.calls:
            if call.method.startswith("send") and call.status == 200 and call.at >= since:
                chat = int(call.params.get("chat_id", 0))
                if chat < 0 and chat != GAME and chat not in first:
                    first[chat] = call.at
        return first


async def run(folder: Path, groups: int, speed: float) -> dict[str, object]:
    bench = Bench(folder, groups, speed)
    asked: list[tuple[int, float]] = []
    moved: list[float] = []
    async with bench.app:
        await bench.app.start()
        try:
            await bench.new_game(GROUP)
            moves = game_moves(200)
            bench.subscribe_all()
            started = time.time()
            bench.app.adapter.wake()
            # Telegram's seconds for the whole burst at 30 a second, and a margin for a slow one.
            give_up = started + (groups / 30 * 3 + 30) / speed
            n = 0
            next_move = time.time() + 1.0
            while time.time() < give_up:
                user = bench.user(n % PRIVATE_USERS)
                chat = bench.private_chat(user)
                asked.append((user["id"], await bench.put(message=bench.http.incoming(chat, user, "/help"))))
                n += 1
                if time.time() >= next_move and len(moved) < len(moves):
                    player = USERS[("ana", "bob")[len(moved) % 2]]
                    moved.append(await bench.put(message=bench.http.incoming(GROUP, player,
                                                                             f"/m {moves[len(moved)]}")))
                    next_move += MOVE_EVERY
                await asyncio.sleep(HELP_EVERY)
                if n % 20 == 0 and len(bench.posts(started)) >= groups - 1:
                    break
            await asyncio.sleep(3.0)      # the last questions' answers
        finally:
            await bench.app.stop()
    bench.storage.close()
    posts = bench.posts(started)
    answers = {chat_id: bench.sent(chat_id) for chat_id in {c for c, _ in asked}}
    help_latency = []
    for chat_id, at in asked:
        times = answers[chat_id]
        i = bisect.bisect_left(times, at)
        help_latency.append(((times[i] if i < len(times) else time.time()) - at) * speed)
    boards = bench.sent(GAME)
    move_latency = []
    for at in moved:
        i = bisect.bisect_left(boards, at)
        move_latency.append(((boards[i] if i < len(boards) else time.time()) - at) * speed)
    first, last = (min(posts.values()), max(posts.values())) if posts else (started, time.time())
    physical = groups / 30
    refused = [c for c in bench.http.calls if c.status == 429]
    burst = (last - first) * speed
    return {
        "groups posted": f"{len(posts)} of {groups - 1} (the live group not counted)",
        "burst, first post to last (s)": burst,
        "burst / (N/30)": burst / physical,
        "from the due time to the last post (s)": (last - started) * speed,
        "private /help answers": len(help_latency),
        "  p50 / p95 / max (s)": f"{pct(help_latency, .5):.2f} / {pct(help_latency, .95):.2f} / "
                                 f"{max(help_latency):.2f}",
        "boards after a move in the live group": len(move_latency),
        "  p50 / p95 / max (s) ": f"{pct(move_latency, .5):.2f} / {pct(move_latency, .95):.2f} / "
                                  f"{max(move_latency):.2f}" if move_latency else "-",
        "429s from Telegram": len(refused),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, action="append", help="N (repeatable); default 1500 and 5000")
    parser.add_argument("--speed", type=float, default=1.0, help="Telegram's clock this many times the real one")
    args = parser.parse_args()
    logging.basicConfig(level=logging.CRITICAL)
    for groups in args.groups or [1500, 5000]:
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            result = asyncio.run(run(Path(tmp), groups, args.speed))
            scaled = f", Telegram's clock x{args.speed:g}: figures in its seconds" if args.speed != 1 else ""
            print(f"== N = {groups} groups ({time.perf_counter() - t0:.0f} s real{scaled})", flush=True)
            for key, value in result.items():
                print(f"  {key}: {value:.2f}" if isinstance(value, float) else f"  {key}: {value}", flush=True)


if __name__ == "__main__":
    main()
