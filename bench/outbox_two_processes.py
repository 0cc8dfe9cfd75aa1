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
import multiprocessing
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "service"))

from executors import HeldExecutor  # noqa: E402
from outbox_mix import PLATFORM, T0, count_sends, deliver, start  # noqa: E402

from bot.service import GameService  # noqa: E402
from bot.service.thinking import Thinker  # noqa: E402
from bot.storage import SQLiteStore  # noqa: E402


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
        sends, by_process = count_sends(log_path)
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
