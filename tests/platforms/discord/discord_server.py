"""The strict fake Discord (discord_fake.FakeDiscord) on a real socket, for tests that run the bot
as separate processes: its REST API and interaction webhooks under ``/api/v10`` and its gateway as a
websocket at ``/gateway``, on 127.0.0.1.  A bot process is pointed at it by discord_process.py
(discord.py's API base and gateway address: nothing else of the bot changes).

One fake serves every process, as Discord does: what one process's interaction left (its token,
its acknowledgement) is there for the follow-up another process sends; the rate limits count
every process's requests together.  Runs in the test's event loop."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import aiohttp
from aiohttp import web
from discord_fake import API_BASE, FakeDiscord, FakeGatewaySocket, answer


class DiscordServer:
    def __init__(self, fake: FakeDiscord) -> None:
        self.fake = fake
        self.url = ""
        self._runner: web.AppRunner | None = None
        self._pumps: set[asyncio.Task[None]] = set()

    async def start(self) -> str:
        """Serve on a free port; the base address (``http://127.0.0.1:<port>``)."""
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_get("/gateway", self._gateway)
        app.router.add_route("*", "/api/v10/{tail:.*}", self._api)
        self._runner = web.AppRunner(app, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}"
        self.fake.gateway_url = f"ws://127.0.0.1:{port}/gateway"
        return self.url

    async def stop(self) -> None:
        for pump in self._pumps:
            pump.cancel()
        if self._runner is not None:
            await self._runner.cleanup()

    async def _api(self, request: web.Request) -> web.StreamResponse:
        url = f"{API_BASE}/{request.match_info['tail']}"
        body: Any = None
        form: list[dict[str, Any]] | None = None
        if request.content_type.startswith("multipart/"):
            form = []
            reader = await request.multipart()
            async for part in reader:
                if not isinstance(part, aiohttp.BodyPartReader):
                    continue
                data = bytes(await part.read())
                value: Any = data.decode() if part.name == "payload_json" else data
                form.append({"name": part.name, "value": value, "filename": part.filename})
        elif request.can_read_body:
            text = await request.text()
            body = await request.json() if text else None
        wire = await answer(self.fake, request.method, url, body=body, form=form)
        # Exactly "application/json", without a charset: what discord.py decodes as JSON.
        return web.Response(status=wire.status, body=wire._text.encode() if wire._text else None,
                            headers=dict(wire.headers))

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        socket = FakeGatewaySocket(self.fake)
        self.fake.sockets.append(socket)

        async def to_client() -> None:
            while True:
                message = await socket.receive()
                if message.type is aiohttp.WSMsgType.CLOSE:
                    await ws.close(code=int(message.data))
                    return
                await ws.send_str(message.data)

        pump = asyncio.create_task(to_client())
        self._pumps.add(pump)
        try:
            async for message in ws:
                if message.type is aiohttp.WSMsgType.TEXT:
                    try:
                        await socket.send_str(message.data)
                    except ConnectionResetError:
                        break
        finally:
            socket.closed = True            # the client went away: its shard is free
            await asyncio.sleep(0)          # what the socket still had to say is said first
            pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pump
            self._pumps.discard(pump)
        return ws
