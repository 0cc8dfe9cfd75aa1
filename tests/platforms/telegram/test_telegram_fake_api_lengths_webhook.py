"""The fake Bot API counts lengths as Telegram does (UTF-16 code units for text, captions and
alerts; bytes for callback_data), and delivers webhook updates to several workers at once and out
of order (issue 29, item 7).  Driven through a real python-telegram-bot ``Bot``."""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, InputFile, InputMediaPhoto
from telegram.error import BadRequest
from telegram_fake_api import GROUP, USERS, FakeBotAPI

PNG = b"\x89PNG\r\n\x1a\nboard"
CHAT = GROUP["id"]
WIDE = "\U0001F600"          # one character, two UTF-16 code units


@pytest.fixture
async def api():
    ticks = itertools.count(0.0, 60.0)          # a minute between requests: no flood control here
    fake = FakeBotAPI(clock=lambda: next(ticks))
    fake.add_chat(GROUP)
    bot = Bot("123:TEST", request=fake, get_updates_request=fake)
    async with bot:
        yield fake, bot


async def test_text_counts_utf16_code_units(api):
    _, bot = api
    await bot.send_message(CHAT, WIDE * 2048)               # 4096 units
    with pytest.raises(BadRequest, match="(?i)message is too long"):
        await bot.send_message(CHAT, WIDE * 2049)           # 2049 characters, 4098 units


async def test_captions_count_utf16_code_units_when_sent_and_edited(api):
    _, bot = api
    sent = await bot.send_photo(CHAT, InputFile(PNG, filename="b.png"), caption=WIDE * 512)
    with pytest.raises(BadRequest, match="(?i)caption is too long"):
        await bot.send_photo(CHAT, InputFile(PNG, filename="b.png"), caption=WIDE * 513)
    media = InputMediaPhoto(InputFile(PNG + b"2", filename="board.png", attach=True), caption="x" + WIDE * 512)
    with pytest.raises(BadRequest, match="(?i)caption is too long"):
        await bot.edit_message_media(media, chat_id=CHAT, message_id=sent.message_id)


async def test_alerts_count_utf16_code_units(api):
    fake, bot = api
    button = InlineKeyboardMarkup([[InlineKeyboardButton("a", callback_data="a")]])
    await bot.send_message(CHAT, "k", reply_markup=button)
    query = fake.callback_query(GROUP, USERS["ana"], "a")
    with pytest.raises(BadRequest, match="(?i)MESSAGE_TOO_LONG"):
        await bot.answer_callback_query(query["id"], WIDE * 101, show_alert=True)    # 202 units
    assert await bot.answer_callback_query(query["id"], WIDE * 100, show_alert=True)


async def test_callback_data_counts_bytes(api):
    _, bot = api
    with pytest.raises(BadRequest, match="(?i)BUTTON_DATA_INVALID"):
        await bot.send_message(CHAT, "k", reply_markup=InlineKeyboardMarkup(
            [[InlineKeyboardButton("a", callback_data=WIDE * 17)]]))                 # 68 bytes
    await bot.send_message(CHAT, "k", reply_markup=InlineKeyboardMarkup(
        [[InlineKeyboardButton("a", callback_data=WIDE * 16)]]))                     # 64 bytes


async def test_webhook_updates_reach_several_workers_at_once_and_out_of_order(api):
    fake, bot = api
    await bot.set_webhook("https://bot.example.org/tg", max_connections=4)
    for n in range(40):
        fake.queue_update(message={"message_id": n + 1})
    running, most = 0, 0
    seen: list[int] = []

    def worker(name: int):
        async def handle(update: dict) -> None:
            nonlocal running, most
            running += 1
            most = max(most, running)
            seen.append(update["update_id"])
            await asyncio.sleep(0.005 * (1 + update["update_id"] % 3))     # some answer slower
            running -= 1
        return handle

    answered = await fake.deliver_webhook([worker(0), worker(1), worker(2)], seed=7)
    assert sorted(seen) == list(range(1, 41)) and fake.updates == []
    assert seen != sorted(seen)                                  # not in update order
    assert 1 < most <= 4                                         # at once, within max_connections
    assert {where for where, _ in answered} == {0, 1, 2}         # every worker got some


async def test_webhook_delivery_can_be_routed_and_needs_a_webhook(api):
    fake, bot = api
    fake.queue_update(message={"message_id": 1})
    got: list[tuple[str, int]] = []

    async def a(update: dict) -> None:
        got.append(("a", update["update_id"]))

    async def b(update: dict) -> None:
        got.append(("b", update["update_id"]))

    with pytest.raises(AssertionError, match="webhook"):
        await fake.deliver_webhook([a, b])
    await bot.set_webhook("https://bot.example.org/tg")
    fake.queue_update(message={"message_id": 2})
    await fake.deliver_webhook([a, b], route=lambda update: update["update_id"] % 2)
    assert sorted(got) == [("a", 2), ("b", 1)]


async def test_a_worker_process_is_reached_over_http_with_the_secret(api):
    fake, bot = api
    received: list[tuple[str | None, dict]] = []

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append((self.headers.get("X-Telegram-Bot-Api-Secret-Token"), json.loads(body)))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        await bot.set_webhook("https://bot.example.org/tg", secret_token="S3cret")
        fake.queue_update(message={"message_id": 9})
        worker = fake.webhook_worker(f"http://127.0.0.1:{server.server_address[1]}/tg", "S3cret")
        await fake.deliver_webhook([worker])
    finally:
        server.shutdown()
        server.server_close()
    assert received == [("S3cret", {"update_id": 1, "message": {"message_id": 9}})]
