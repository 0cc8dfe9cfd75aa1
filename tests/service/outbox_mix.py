"""A realistic outbox: what the service says on its own over a day of several chats.

Used by tests/service/test_outbox_notifications.py (row sizes) and bench/outbox_two_processes.py
(two processes delivering it).  Only the service's public entry points are used (``handle``,
``run_due``, ``settle``), so the same script runs on older versions of the bot.

Per chat: a game between two people with an hour per move (a reminder, then a loss on time), two
games against the bot (the bot answers a move; the bot opens), and the daily puzzle (posted at
08:00 UTC).
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import os
import random
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bot.platforms.base import ChatAdapter, Piece, Progress
from bot.service import ChatEvent, GameService, Reply
from bot.service.thinking import Thinker
from bot.storage import SQLiteStore

PLATFORM = "test"
# 2023-11-14 22:13:20 UTC: the daily posts are due the next morning.
T0 = 1_700_000_000.0
HOUR = 3600.0


def event(chat: str, user: str, text: str, *, admin: bool = False) -> ChatEvent:
    return ChatEvent(platform=PLATFORM, chat_id=chat, user_id=user, user_name=user.capitalize(), chat_kind="group",
                     username=user, language="es" if chat.endswith("es") else "en", text=text, is_admin=admin)


def fill(service: GameService, now: list[float], chats: int = 6, settle: float = 60.0) -> None:
    """Play a day of ``chats`` group chats on ``service`` (its clock reads ``now[0]``); the outbox
    is left holding what it said on its own, none of it delivered."""
    start(service, chats, settle)
    begun = now[0]
    # Later: the reminders (a tenth of the hour left), the losses on time, the next morning's
    # daily posts.
    for later in LATER:
        now[0] = begun + later
        service.run_due(PLATFORM)
    service.settle(settle)


# When the timed work is looked at, after ``start``: the reminders, the losses on time, the daily posts.
LATER = (0.91 * HOUR, 1.01 * HOUR, 11 * HOUR)


def start(service: GameService, chats: int = 6, settle: float = 60.0) -> None:
    """The games and subscriptions of ``chats`` chats, and the bot's answers; the rest of the day
    is timed work (``LATER``)."""
    names = [f"chat-{i}-{'es' if i % 2 else 'en'}" for i in range(chats)]
    for number, chat in enumerate(names):
        ana, bob, eve, ivo = f"ana{number}", f"bob{number}", f"eve{number}", f"ivo{number}"

        def say(user: str, text: str, chat: str = chat) -> None:
            service.handle(event(chat, user, text))
        say(ana, "/new italian white 1h")
        say(bob, "/accept")
        say(ana, "/m 22-18" if number % 2 == 0 else "/m 21-17")
        say(eve, "/play italian white level 1")
        say(eve, "/m 23-19")
        say(ivo, "/play italian black level 1")
        service.handle(event(chat, ana, "/daily on 08:00 UTC italian", admin=True))
    # The bot answers every game it is in (unless its engine is held: then the next process does).
    if settle:
        service.settle(settle)


# -- delivering it from several processes (bench/outbox_two_processes.py, the tests) -------------

SEND_SECONDS = 0.01         # one message's trip to the platform
_progress: contextvars.ContextVar[Progress | None] = contextvars.ContextVar("progress", default=None)


class RecordingAdapter(ChatAdapter):
    """The shared adapter code with a network that writes each message down (process, row, part)."""

    platform = PLATFORM
    text_limit = 4096
    caption_limit = 1024

    def __init__(self, service: GameService, log_path: str) -> None:
        super().__init__(service)
        self.log_path = log_path

    async def deliver(self, chat_id: str, reply: Reply, *, reply_to: str | None = None,
                      progress: Progress | None = None) -> None:
        _progress.set(progress)
        await super().deliver(chat_id, reply, reply_to=reply_to, progress=progress)

    async def send_piece(self, chat_id: str, piece: Piece, *, reply_to: str | None = None) -> str | None:
        await asyncio.sleep(SEND_SECONDS)
        progress = _progress.get()
        # Which part of which outbox row (a direct reply: row 0), counted as the row counts them.
        item, part = (progress.item_id or 0, progress.delivered) if progress is not None else (0, 0)
        with open(self.log_path, "a", encoding="utf-8") as out:
            out.write(f"{os.getpid()} {item} {part} {chat_id}\n")
        return f"{os.getpid()}-{item}-{part}"

    async def edit_message(self, chat_id: str, message_id: str, reply: Reply) -> bool:
        await self.send_piece(chat_id, Piece(reply.text))
        return True                 # shown (False would mean "gone: post it anew")

    def failure_kind(self, exc: BaseException) -> str:
        return "transient"


def deliver(db: str, log_path: str, seconds: float, started: float, ready: Any, go: Any, go_at: Any,
            speed: float = 2 * HOUR) -> None:
    """One process: the adapters' delivery rounds for ``seconds`` on the shared database, its clock
    at ``started`` when ``go`` is set (at wall time ``go_at``) and running ``speed`` times faster."""
    storage = SQLiteStore(db)
    begun: list[float] = []
    service = GameService(storage, clock=lambda: started + speed * (time.time() - begun[0]) if begun else started,
                          rng=random.Random(os.getpid()), thinker=Thinker(ThreadPoolExecutor(1), workers=1),
                          bot_seconds=0.05)
    outbox = getattr(service, "outbox", None)         # (the bot before leases has none)
    if outbox is not None:
        # A claim lasts as long in wall time as it would at the normal pace of the clock.
        outbox.lease_seconds *= speed
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


def count_sends(log_path: str) -> tuple[collections.Counter[tuple[int, int]], collections.Counter[str]]:
    """From a RecordingAdapter's log: how often each (row, part) was sent, and how many messages
    each process sent."""
    sends: collections.Counter[tuple[int, int]] = collections.Counter()
    by_process: collections.Counter[str] = collections.Counter()
    path = Path(log_path)
    for line in path.read_text(encoding="utf-8").splitlines() if path.exists() else []:
        pid, item, part, _ = line.split(" ", 3)
        sends[(int(item), int(part))] += 1
        by_process[pid] += 1
    return sends, by_process
