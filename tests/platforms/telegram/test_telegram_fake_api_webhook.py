"""The fake Bot API's setWebhook is as strict as Telegram's: an https URL on one of the four ports
Telegram calls, a secret token of 1-256 characters of A-Z, a-z, 0-9, _ and -; while a webhook is
set getUpdates is refused (409), and deleteWebhook (or an empty URL) removes it.  Driven through a
real python-telegram-bot ``Bot``."""

from __future__ import annotations

import re

import pytest
from telegram import Bot
from telegram.error import BadRequest, Conflict
from telegram_fake_api import FakeBotAPI


@pytest.fixture
async def api():
    fake = FakeBotAPI()
    bot = Bot("123:TEST", request=fake, get_updates_request=fake)
    async with bot:
        yield fake, bot


@pytest.mark.parametrize("url", ["https://bot.example.org/tg", "https://bot.example.org:8443/tg/hook",
                                 "https://bot.example.org:88/", "https://bot.example.org:80/x"])
async def test_an_https_url_on_a_port_telegram_calls_is_set(api, url):
    fake, bot = api
    assert await bot.set_webhook(url, secret_token="Abc_-09" * 3, max_connections=40)
    assert fake.webhook is not None and fake.webhook["url"] == url and fake.webhook["secret_token"] == "Abc_-09" * 3


@pytest.mark.parametrize(("url", "fragment"), [
    ("http://bot.example.org/tg", "An HTTPS URL must be provided"),
    ("https:///tg", "An HTTPS URL must be provided"),
    ("bot.example.org/tg", "An HTTPS URL must be provided"),
    ("https://bot.example.org:8080/tg", "only on ports 80, 88, 443 or 8443"),
    ("https://bot.example.org:99999/tg", "invalid URL"),
])
async def test_a_url_telegram_would_not_call_is_refused(api, url, fragment):
    fake, bot = api
    with pytest.raises(BadRequest, match=f"(?i){re.escape(fragment)}"):
        await bot.set_webhook(url)
    assert fake.webhook is None


@pytest.mark.parametrize(("secret", "fragment"), [
    ("has space", "unallowed characters"),
    ("dots.are.not.allowed", "unallowed characters"),
    ("ñandú", "unallowed characters"),
    ("x" * 257, "1-256 characters"),
])
async def test_a_bad_secret_token_is_refused(api, secret, fragment):
    fake, bot = api
    with pytest.raises(BadRequest, match=f"(?i){re.escape(fragment)}"):
        await bot.set_webhook("https://bot.example.org/tg", secret_token=secret)
    assert fake.webhook is None


async def test_the_longest_secret_token_is_taken(api):
    fake, bot = api
    assert await bot.set_webhook("https://bot.example.org/tg", secret_token="a" * 256)
    assert fake.webhook is not None and fake.webhook["secret_token"] == "a" * 256


async def test_max_connections_outside_1_to_100_is_refused(api):
    _, bot = api
    with pytest.raises(BadRequest, match="max_connections"):
        await bot.set_webhook("https://bot.example.org/tg", max_connections=101)


async def test_get_updates_is_refused_while_a_webhook_is_set_and_works_after_delete(api):
    fake, bot = api
    await bot.set_webhook("https://bot.example.org/tg")
    with pytest.raises(Conflict, match="webhook is active"):
        await bot.get_updates()
    assert await bot.delete_webhook()
    assert fake.webhook is None and await bot.get_updates() == ()


async def test_an_empty_url_removes_the_webhook(api):
    fake, bot = api
    await bot.set_webhook("https://bot.example.org/tg")
    assert await bot.set_webhook("")
    assert fake.webhook is None


async def test_pending_updates_are_kept_unless_a_drop_is_asked_for(api):
    fake, bot = api
    fake.queue_update(message={"message_id": 1})
    await bot.set_webhook("https://bot.example.org/tg", drop_pending_updates=False)
    assert len(fake.updates) == 1
    await bot.set_webhook("https://bot.example.org/tg", drop_pending_updates=True)
    assert fake.updates == []
