"""What the Telegram benches share: the Application as production builds it (``build_application``)
on a real service and SQLite file, against the strict fake Bot API of the tests, with private chats
to ask from; updates go through PTB's own update queue, as when polling.

Imported by bench/telegram_flood.py and bench/telegram_broadcast.py (their folder is on the path
when they run); it puts the repository and the fake Bot API's folder on the path itself."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "platforms" / "telegram"))

from telegram import Update  # noqa: E402
from telegram_fake_api import USERS, FakeBotAPI  # noqa: E402

from bot.platforms.telegram import build_application  # noqa: E402
from bot.service import GameService  # noqa: E402
from bot.storage import Storage  # noqa: E402

PRIVATE_USERS = 20


class TelegramBench:
    """The bot on ``http`` (``build`` goes to ``build_application``), with PRIVATE_USERS private chats."""

    def __init__(self, folder: Path, http: FakeBotAPI, **build: Any) -> None:
        self.storage = Storage(folder / "bench.db")
        self.service = GameService(self.storage)
        self.http = http
        self.app = build_application("123:TEST", service=self.service, request=self.http, **build)
        self.update_ids = iter(range(1, 10**9))
        for n in range(PRIVATE_USERS):
            self.http.add_chat(self.private_chat(self.user(n)))

    @staticmethod
    def user(n: int) -> dict:
        return {"id": 1000 + n, "is_bot": False, "first_name": f"U{n}", "language_code": "en"}

    @staticmethod
    def private_chat(user: dict) -> dict:
        return {"id": user["id"], "type": "private", "first_name": user["first_name"]}

    async def put(self, **payload: Any) -> float:
        """Hand an update to the Application; when (real time)."""
        at = time.time()
        update = Update.de_json({"update_id": next(self.update_ids), **payload}, self.app.bot)
        await self.app.update_queue.put(update)
        return at

    async def new_game(self, group: dict) -> None:
        """Ana (white) challenges in ``group`` and Bob accepts, as they would type it."""
        for user, text in (("ana", "/new italian white"), ("bob", "/accept")):
            await self.put(message=self.http.incoming(group, USERS[user], text))
            await asyncio.sleep(1.5)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]
