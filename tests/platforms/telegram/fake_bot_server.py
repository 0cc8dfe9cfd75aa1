"""The fake Bot API (telegram_fake_api) on a real socket, so that several bot processes reach the
one fake, as they all reach the one Telegram: the fake sees every process's getUpdates, and its
one-poll-per-token rule (a newer poll ends the older with 409) is what the processes meet.

The server runs in a thread with its own event loop; whatever a test does to the fake goes
through ``call`` (run in that loop), reads of ``fake.calls`` are copies."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from aiohttp import web
from telegram_fake_api import Call, FakeBotAPI

T = TypeVar("T")


class _Wire:
    """What the fake reads of a request: its form fields as sent, and its uploads."""

    def __init__(self, fields: dict[str, str], uploads: dict[str, tuple[str, bytes, str]]) -> None:
        self.json_parameters = fields
        self.parameters: dict[str, Any] = dict(fields)
        self.multipart_data = uploads or None


class FakeBotServer:
    """``http://127.0.0.1:<port>`` answers ``/bot<token>/<method>`` as the fake does."""

    def __init__(self, fake: FakeBotAPI | None = None) -> None:
        self.fake = fake or FakeBotAPI()
        self.loop = asyncio.new_event_loop()
        self.url = ""
        self._runner: web.AppRunner | None = None
        self._thread = threading.Thread(target=self.loop.run_forever, name="fake-bot-api", daemon=True)
        # Awaited (in the server's loop) with each call the fake has answered, before the answer
        # leaves: a test holds one process's answer while another process goes ahead (a 502 that
        # reaches its worker late), instead of sleeping.
        self.before_answer: Callable[[Call], Awaitable[None]] | None = None

    def __enter__(self) -> FakeBotServer:
        self._thread.start()
        port = asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(10)
        self.url = f"http://127.0.0.1:{port}"
        return self

    def __exit__(self, *exc: object) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()

    def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` in the server's loop (the fake is not thread-safe)."""
        async def run() -> T:
            return fn(*args, **kwargs)
        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(10)

    async def _start(self) -> int:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/bot{token}/{method}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert isinstance(server, asyncio.Server)
        return int(server.sockets[0].getsockname()[1])

    async def _handle(self, request: web.Request) -> web.Response:
        fields: dict[str, str] = {}
        uploads: dict[str, tuple[str, bytes, str]] = {}
        for key, value in (await request.post()).items():
            if isinstance(value, web.FileField):
                uploads[key] = (value.filename, value.file.read(), value.content_type)
            else:
                fields[key] = str(value)
        method = request.match_info["method"]
        index = len(self.fake.calls)        # the fake records the call before it first waits
        status, body = await self.fake.do_request(f"https://api.telegram.org/bot/{method}", "POST",
                                                  _Wire(fields, uploads))  # type: ignore[arg-type]
        if self.before_answer is not None:
            await self.before_answer(self.fake.calls[index])
        return web.Response(status=status, body=body, content_type="application/json")
