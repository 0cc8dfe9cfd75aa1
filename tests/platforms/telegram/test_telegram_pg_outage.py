"""The Telegram adapter while the bot's PostgreSQL server is away (project issue 30, item 6).

The real python-telegram-bot Application and adapter, the strict fake Bot API in place of HTTP
(as the ``tg`` fixture has them), the real service on a real throw-away PostgreSQL server of the
test's own (tests/pg_stoppable.py), stopped and started again under the running bot with its
delivery task going.  While the server is away: /help is answered, a move is told that the
storage is unavailable once in the group, a button press is answered on the button each time; the
delivery rounds wait quietly; nothing is logged per event.  Once it is back the next move is
played and shown."""

from __future__ import annotations

import asyncio
import itertools
import logging

import pytest
from telegram import Update
from telegram_fake_api import GROUP, USERS, FakeBotAPI
from tg_helpers import SPEED, telegram_clock, telegram_sleep

from bot.i18n import t
from bot.platforms.telegram import TelegramAdapter
from bot.platforms.telegram.limiter import FloodLimiter
from bot.service import GameService

pytest.importorskip("psycopg")

from pg_stoppable import module_server as module_server  # noqa: E402  (the fixture ``server``)

from bot.storage.postgres import PROBE_SECONDS, PostgresStore  # noqa: E402


class Bot:
    """The Telegram harness of conftest.py, on PostgreSQL."""

    def __init__(self, url: str) -> None:
        self.storage = PostgresStore(url)
        self.service = GameService(self.storage)
        self.http = FakeBotAPI(clock=telegram_clock)
        self.http.jitter = 0.02 * SPEED
        self.http.add_chat(GROUP)
        self.adapter = TelegramAdapter(self.service)
        self.app = self.adapter.build("123:TEST", request=self.http,
                                      rate_limiter=FloodLimiter(clock=telegram_clock, sleep=telegram_sleep))
        self.errors: list[BaseException] = []
        self.app.add_error_handler(self._collect)
        self.update_ids = itertools.count(1)

    async def _collect(self, update, context) -> None:
        self.errors.append(context.error)

    async def update(self, **payload) -> None:
        await self.app.process_update(Update.de_json({"update_id": next(self.update_ids), **payload}, self.app.bot))

    async def say(self, user: str, text: str) -> None:
        await self.update(message=self.http.incoming(GROUP, USERS[user], text))

    async def press(self, user: str, data: str) -> None:
        await self.update(callback_query=self.http.callback_query(GROUP, USERS[user], data, None))

    def texts(self, since: int) -> list[str]:
        """What the bot said in the group since call number ``since`` (texts and captions)."""
        out = []
        for call in self.http.calls[since:]:
            if call.method in ("sendMessage", "sendPhoto") and call.status == 200:
                out.append(str(call.params.get("text") or call.params.get("caption") or ""))
        return out

    def alerts(self, since: int) -> list[str]:
        return [str(call.params.get("text") or "") for call in self.http.calls[since:]
                if call.method == "answerCallbackQuery"]


async def test_telegram_while_the_database_server_is_away(server, caplog, bot_errors):
    if not server.running:
        server.resume()
    caplog.set_level(logging.INFO)
    bot = Bot(server.new_database())
    try:
        async with bot.app:
            await bot.app.start()              # the delivery task too
            try:
                await bot.say("ana", "/new italian white")
                await bot.say("bob", "/accept")
                assert bot.storage.game(1).status == "active"
                caplog.clear()

                server.halt("fast")
                since = len(bot.http.calls)
                await bot.say("ana", "/help")
                await bot.say("ana", "/m 22-18")
                await bot.say("bob", "/m 22-18")
                await bot.say("ana", "/m 22-18")
                await bot.press("ana", "s:1:0:22")
                await bot.press("ana", "s:1:0:22")
                await bot.say("bob", "/help")
                # Some delivery rounds meet the outage meanwhile.
                await asyncio.sleep(2.5)
                assert bot.adapter.delivering
                said = bot.texts(since)
                assert len(said) == 3, said
                assert t("es", "help.intro") in said[0] and t("en", "help.intro") in said[2]
                assert said[1] == t("es", "error.storage_unavailable")          # once in the group
                assert bot.alerts(since) == [t("es", "error.storage_unavailable")] * 2
                logged = [r for r in caplog.records if r.levelno >= logging.WARNING]
                assert [r.exc_info for r in logged] == [None] * len(logged), "no traceback"
                # (A round of timed work the outage met halfway says nothing more: the store said it.)
                assert len(logged) <= 2 and all("cannot be reached" in r.getMessage() for r in logged), \
                    [r.getMessage() for r in logged]
                assert bot_errors and all("cannot be reached" in r.getMessage() for r in bot_errors)
                bot_errors.clear()

                server.resume()
                await asyncio.sleep(PROBE_SECONDS)
                since = len(bot.http.calls)
                await bot.say("ana", "/m 22-18")
                assert bot.storage.game(1).ply == 1
                assert any("22-18" in text for text in bot.texts(since))
            finally:
                await bot.app.stop()
    finally:
        bot.service.close()
        bot.storage.close()
    assert bot.errors == []
    assert bot.http.unanswered_or_twice() == []
