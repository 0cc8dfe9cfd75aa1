"""Two processes delivering from one outbox (one SQLite file): how many messages go out twice.

The parent plays the start of a day in several group chats (games between people with an hour
per move, games against the bot, daily puzzle subscriptions; tests/service/outbox_mix.py), then
two OS processes open the same database at the moment the timed work is due: each runs the
adapters' real delivery rounds (bot/platforms/base.py: timed work, then the outbox) with a chat
adapter whose "network" takes a few milliseconds per message and writes down what it sent.
Both look at the timers (reminders, losses on time, daily posts) and both deliver.

Run from the repository root::

    python bench/outbox_two_processes.py              # about 20 s
    python bench/outbox_two_processes.py --chats 12

Prints the outbox rows, how many were delivered, and how many were delivered more than once
(target: 0; the outbox before leases sent about a third of them twice).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextvars
import multiprocessing
import os
import random
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "service"))

from executors import HeldExecutor  # noqa: E402
from outbox_mix import HOUR, PLATFORM, T0, start  # noqa: E402

from bot.platforms.base import ChatAdapter, Piece, Progress  # noqa: E402
from bot.service import GameService, Reply  # noqa: E402
from bot.service.thinking import Thinker  # noqa: E402
from bot.storage import SQLiteStore  # noqa: E402

# Both processes' clock runs this much faster than the wall clock, from the end of the day's
# start: the reminders come due about half a second in, the losses on time right after, the
# daily posts about five seconds in.
SPEED = 2 * HOUR
SEND_SECONDS = 0.01         # one message's trip to the platform
_item: contextvars.ContextVar[int | None] = contextvars.ContextVar("item", default=None)


class RecordingAdapter(ChatAdapter):
    """The shared adapter code with a network that writes each message down (process, row, part)."""

    platform = PLATFORM
    text_limit = 4096
    caption_limit = 1024

    def __init__(self, service: GameService, log_path: str) -> None:
        super().__init__(service)
        self.log_path = log_path
        self._parts: collections.Counter[int] = collections.Counter()

    async def deliver(self, chat_id: str, reply: Reply, *, reply_to: str | None = None,
                      progress: Progress | None = None) -> None:
        _item.set(progress.item_id if progress is not None else None)
        await super().deliver(chat_id, reply, reply_to=reply_to, progress=progress)

    async def send_piece(self, chat_id: str, piece: Piece, *, reply_to: str | None = None) -> str | None:
        await asyncio.sleep(SEND_SECONDS)
        item = _item.get()
        part = self._parts[item or 0]
        self._parts[item or 0] += 1
        with open(self.log_path, "a", encoding="utf-8") as out:
            out.write(f"{os.getpid()} {item} {part} {chat_id}\n")
        return f"{os.getpid()}-{item}-{part}"

    async def edit_message(self, chat_id: str, message_id: str, reply: Reply) -> None:
        await self.send_piece(chat_id, Piece(reply.text))

    def failure_kind(self, exc: BaseException) -> str:
        return "transient"


def deliver(db: str, log_path: str, seconds: float, started: float, ready: Any, go: Any, go_at: Any) -> None:
    """One process: the adapters' delivery rounds for ``seconds`` on the shared database."""
    storage = SQLiteStore(db)
    begun: list[float] = []
    service = GameService(storage, clock=lambda: started + SPEED * (time.time() - begun[0]) if begun else started,
                          rng=random.Random(os.getpid()), thinker=Thinker(ThreadPoolExecutor(1), workers=1),
                          bot_seconds=0.05)
    adapter = RecordingAdapter(service, log_path)

    async def run() -> None:
        ready.wait()
        go.wait()
        begun.append(go_at.value)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            await adapter.delivery_round(timers=True, wait=True)
            await asyncio.sleep(0.02)

    asyncio.run(run())
    service.close()
    storage.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chats", type=int, default=6, help="group chats (each: 2 games, a daily post)")
    parser.add_argument("--seconds", type=float, default=7.0, help="how long both processes deliver")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db, log_path = str(Path(tmp) / "shared.db"), str(Path(tmp) / "sent.log")
        storage = SQLiteStore(db)
        # The bot's engine is held here: its moves are the two processes' to find and play.
        service = GameService(storage, clock=lambda: T0, rng=random.Random(1), thinker=Thinker(HeldExecutor()))
        start(service, args.chats, settle=0)
        # What the start said on its own (the bot's first moves) is out already.
        for item in service.pending_messages(PLATFORM, limit=10_000):
            service.message_sent(item.id)
        before = {row.id for row in storage.find_outbox()}
        service.close()
        storage.close()
        spawn = multiprocessing.get_context("spawn")
        ready, go, go_at = spawn.Barrier(3), spawn.Event(), spawn.Value("d", 0.0)
        workers = [spawn.Process(target=deliver, args=(db, log_path, args.seconds, T0, ready, go, go_at))
                   for _ in range(2)]
        for worker in workers:
            worker.start()
        ready.wait()
        go_at.value = time.time()
        go.set()
        for worker in workers:
            worker.join()
        storage = SQLiteStore(db)
        rows = [row for row in storage.find_outbox() if row.id not in before]
        storage.close()
        sends: collections.Counter[tuple[int, int]] = collections.Counter()
        by_process: collections.Counter[str] = collections.Counter()
        for line in Path(log_path).read_text(encoding="utf-8").splitlines():
            pid, item, part, _ = line.split(" ", 3)
            sends[(int(item), int(part))] += 1
            by_process[pid] += 1
    doubled = {item for (item, _), count in sends.items() if count > 1}
    delivered = {item for item, _ in sends}
    pending = sum(1 for row in rows if row.status == "pending")
    print(f"outbox rows written while both ran: {len(rows)} ({pending} still pending)")
    print(f"messages sent per process: {sorted(by_process.values())}")
    print(f"rows delivered: {len(delivered)}; delivered twice or more: {len(doubled)} of {len(rows)}")
    print(f"summary: doubles {len(doubled)} of {len(rows)} (target 0) {'MET' if not doubled else 'MISSED'}")
    return 0 if not doubled else 1


if __name__ == "__main__":
    sys.exit(main())
