"""The harness every Telegram test uses: real PTB Application and adapter, real service on a real
SQLite file, the production rate limiter (FloodLimiter), and the one strict fake Bot API
(telegram_fake_api) in place of HTTP.

Telegram's flood limits run on a clock SPEED (tg_helpers) times faster than the real one, for the fake and the
limiter alike (20 messages a minute in a group is 20 per 6 s here): the limiter's spacing and
waits are real, only shorter, and the fake answers 429 to any message beyond the limits.

At the end of each test it checks what must always hold: no handler failed, every button press
got exactly one answer, and the fake refused nothing on its own (a refusal a test provoked on
purpose is declared with ``tg.expect_refusals``)."""

from __future__ import annotations

import itertools

import pytest
from fresh_db import fresh_database
from telegram import Update
from telegram_fake_api import GROUP, USERS, FakeBotAPI
from tg_helpers import SPEED, telegram_clock, telegram_sleep

from bot.platforms.telegram import TelegramAdapter
from bot.platforms.telegram.limiter import FloodLimiter
from bot.service import GameService
from bot.storage import Storage


class Harness:
    def __init__(self, tmp_path) -> None:
        self.storage = Storage(fresh_database(tmp_path / "tg.db"))
        self.service = GameService(self.storage)
        self.http = FakeBotAPI(clock=telegram_clock)
        # 20 ms of a busy machine's scheduling delay, on the sped-up clock.
        self.http.jitter = 0.02 * SPEED
        self.http.add_chat(GROUP)
        self.sleeps: list[float] = []
        self.adapter = TelegramAdapter(self.service, sleep=self._sleep)
        self.limiter = FloodLimiter(clock=telegram_clock, sleep=telegram_sleep)
        self.app = self.adapter.build("123:TEST", request=self.http, rate_limiter=self.limiter)
        self.errors: list[BaseException] = []
        self.app.add_error_handler(self._collect)
        self.update_ids = itertools.count(1)
        self.refusals_expected = 0

    async def _sleep(self, seconds: float) -> None:
        # Backoff waits are recorded, not waited, so retry tests stay fast.
        self.sleeps.append(seconds)

    async def _collect(self, update, context) -> None:
        self.errors.append(context.error)

    def expect_refusals(self, n: int) -> None:
        """This test provokes ``n`` refusals from the fake's own checks (not via ``fail``)."""
        self.refusals_expected += n

    async def update(self, **payload) -> None:
        await self.app.process_update(Update.de_json({"update_id": next(self.update_ids), **payload}, self.app.bot))

    async def say(self, user: str, text: str, reply_to: int | None = None, chat: dict = GROUP,
                  thread: int | None = None, sender_chat: dict | None = None) -> int:
        """A user writes; the bot gets the message only if Telegram would hand it over (privacy
        mode: see FakeBotAPI.reaches_bot)."""
        message = self.http.incoming(chat, USERS[user], text, reply_to=reply_to, thread=thread,
                                     sender_chat=sender_chat)
        if self.http.reaches_bot(message):
            await self.update(message=message)
        return message["message_id"]

    async def press(self, user: str, data: str, message_id: int | None = None, chat: dict = GROUP) -> str:
        query = self.http.callback_query(chat, USERS[user], data, message_id)
        await self.update(callback_query=query)
        return query["id"]

    async def inline(self, user: str, query: str = "") -> str:
        """``user`` types ``@DraughtsBot <query>`` in some chat; the inline query's id."""
        payload = self.http.inline_query(USERS[user], query)
        await self.update(inline_query=payload)
        return payload["id"]

    async def press_inline(self, user: str, inline_message_id: str, data: str) -> str:
        """A press on an inline message's button (``data`` as the client sends it)."""
        query = self.http.inline_callback_query(USERS[user], inline_message_id, data)
        await self.update(callback_query=query)
        return query["id"]

    def last_board(self, chat: dict = GROUP):
        """The newest photo the bot has in the chat, as the fake holds it."""
        return self.http.bot_messages(int(chat["id"]), "photo")[-1]


@pytest.fixture
async def tg(tmp_path):
    harness = Harness(tmp_path)
    async with harness.app:
        yield harness
    harness.storage.close()
    assert harness.errors == []
    assert harness.http.unanswered_or_twice() == [], "every button press is answered exactly once"
    own = harness.http.refused(injected=False)
    # A 429 here is a busy machine's scheduling delay beyond the modelled jitter, on the sped-up
    # clock (seen once in CI with the browser tests running beside): the limiter must wait it out
    # and send the same request again, which is checked; it is not a refusal a test provoked.
    calls = harness.http.calls
    for flood in (c for c in own if c.status == 429):
        at = next(i for i, c in enumerate(calls) if c is flood)
        again = [c for c in calls[at + 1:] if c.method == flood.method
                 and str(c.params.get("chat_id")) == str(flood.params.get("chat_id"))]
        assert again, f"a {flood.method} refused with 429 was never sent again"
    own = [c for c in own if c.status != 429]
    assert len(own) == harness.refusals_expected, [(c.method, c.error) for c in own]

