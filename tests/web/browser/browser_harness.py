"""What the web board's browser tests share: the system's Chromium driven by Playwright, and the
board served for real next to the real Telegram Application on the strict fake Bot API.

- ``require_browser()``: the Chromium to launch, else the tests skip (or fail, where
  ``DRAUGHTS_REQUIRE_BROWSER=1`` says a missing browser is a broken machine, as in CI).
- ``TelegramBoard``: the real service on a real SQLite file; in an event loop of its own (a
  thread, as an adapter's loop would be), python-telegram-bot's Application with our adapter on
  ``FakeBotAPI`` (tests/platforms/telegram), its outbox delivery running, and ``start_web`` on
  127.0.0.1 port 0.  Games are made the way a chat makes them (``/new`` and ``/accept`` typed in
  the fake group), seat links come from ``service.web.link_path``.
- ``Board``: one page in a browser context, with the times (the machine's clock, in ms) at which
  each tap happened and at which the page first showed each ply, kept by a script the test adds
  to the page (no change to the page itself).

The module has a name of its own (not ``conftest``): test modules import it by name, and
``conftest`` names whichever conftest pytest loaded last.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import Any

import pytest
from fresh_db import fresh_database

sys.path.append(str(Path(__file__).resolve().parents[2] / "platforms" / "telegram"))

from telegram import Update  # noqa: E402
from telegram_fake_api import USERS, FakeBotAPI  # noqa: E402

from bot.platforms.telegram import TelegramAdapter  # noqa: E402
from bot.platforms.telegram.limiter import FloodLimiter  # noqa: E402
from bot.platforms.web import WebConfig, WebServer, start_web  # noqa: E402
from bot.service import GameService  # noqa: E402
from bot.storage import Storage  # noqa: E402

REQUIRE = "DRAUGHTS_REQUIRE_BROWSER"
TOKEN = "123456:TEST-browser"
PLATFORM = "telegram"
# Two groups: the game played on the page, and its twin typed in the chat.
BOARD_GROUP = {"id": -100123, "type": "supergroup", "title": "Club"}
TWIN_GROUP = {"id": -100456, "type": "supergroup", "title": "Club twin"}
# Telegram's flood limits run this many times faster than the real clock, for the fake and the
# limiter alike (a whole game's boards reach the chat within the test; the limits still hold).
SPEED = 50.0
# Generous waits: a page must show what it must; how long it took is measured, not waited for.
WAIT_MS = 15_000


def require_browser(environ: Mapping[str, str] = os.environ,
                    which: Callable[[str], str | None] = shutil.which,
                    fallback: Path = Path("/usr/bin/chromium")) -> str:
    """The system's Chromium, with Playwright importable; else skip the module, or fail it where
    ``DRAUGHTS_REQUIRE_BROWSER=1`` (CI: browser tests must not be skipped unnoticed).  Playwright
    is pointed at this browser; it never downloads one."""
    why = None
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as err:
        why = f"playwright is not installed ({err})"
    found = which("chromium") or which("chromium-browser") or (str(fallback) if fallback.exists() else None)
    if why is None and found is None:
        why = "no Chromium on this machine (apt-get install chromium)"
    if why is None and found is not None:
        return found
    if environ.get(REQUIRE) == "1":
        pytest.fail(f"{REQUIRE}=1 but the browser tests cannot run: {why}", pytrace=False)
    pytest.skip(f"browser tests skipped: {why}", allow_module_level=True)
    raise AssertionError("unreachable")


def clock() -> float:
    return time.monotonic() * SPEED


async def sleep(seconds: float) -> None:
    await asyncio.sleep(seconds / SPEED)


class LoopThread:
    """An event loop in a thread of its own; ``run`` runs a coroutine there and waits for it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="board-loop", daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, Any], timeout: float = 60.0) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


class TelegramBoard:
    """The service, the Telegram Application on the strict fake and the web board, in one loop."""

    def __init__(self, db: Path) -> None:
        self.storage = Storage(fresh_database(db))
        self.service = GameService(self.storage)
        self.http = FakeBotAPI(clock=clock)
        self.http.jitter = 0.02 * SPEED
        for group in (BOARD_GROUP, TWIN_GROUP):
            self.http.add_chat(group)
        self.adapter = TelegramAdapter(self.service)
        self.app = self.adapter.build(TOKEN, request=self.http, rate_limiter=FloodLimiter(clock=clock, sleep=sleep))
        self.errors: list[BaseException] = []
        self.app.add_error_handler(self._collect)
        self.update_ids = itertools.count(1)
        self.loop = LoopThread()
        self.server: WebServer = self.loop.run(self._start())
        self.url = self.server.url

    async def _collect(self, _update: object, context: Any) -> None:
        self.errors.append(context.error)

    async def _start(self) -> WebServer:
        await self.app.initialize()
        await self.app.start()                  # with it the outbox delivery task
        return await start_web(self.service, WebConfig(host="127.0.0.1", port=0, poll_seconds=0.3,
                                                       telegram_token=TOKEN))

    async def _stop(self) -> None:
        await self.server.stop()
        await self.app.stop()
        await self.app.shutdown()

    def close(self) -> None:
        try:
            self.loop.run(self._stop())
        finally:
            self.loop.close()
            self.service.close()
            self.storage.close()

    # -- the chats --------------------------------------------------------------------------------

    async def say_async(self, user: str, text: str, group: dict) -> None:
        message = self.http.incoming(group, USERS[user], text)
        assert self.http.reaches_bot(message), text
        update = Update.de_json({"update_id": next(self.update_ids), "message": message}, self.app.bot)
        await self.app.process_update(update)

    def say(self, user: str, text: str, group: dict = BOARD_GROUP) -> None:
        self.loop.run(self.say_async(user, text, group))

    def new_game(self, variant: str, group: dict = BOARD_GROUP, white: str = "ana", black: str = "bob") -> int:
        """A game challenged and accepted in a group, as its members would type it."""
        self.say(white, f"/new {variant} white", group)
        self.say(black, "/accept", group)
        games = [g for g in self.storage.active_games(PLATFORM, str(group["id"]))]
        assert len(games) == 1, games
        return games[0].id

    def user_id(self, user: str) -> str:
        return str(USERS[user]["id"])

    def seat_url(self, game: int, user: str, lang: str | None = None) -> str:
        path = self.service.web.link_path(game, PLATFORM, self.user_id(user))
        assert "?t=" in path, path
        return self.url + path + (f"&lang={lang}" if lang else "")

    def spectator_url(self, game: int) -> str:
        # Signed (issue 30): a game's number alone shows nothing.
        path = self.service.web.link_path(game, PLATFORM, None)
        assert path == f"/g/{game}?t={self.service.web.watch_token(game)}", path
        return self.url + path

    def outbox_pending(self) -> int:
        return len(self.storage.find_outbox(PLATFORM, "pending"))


# Kept in every page the tests open (added by the browser, not by the page): when each tap
# happened, and when the page first showed each ply, on the machine's clock in ms.
TIMING_SCRIPT = """
window.__taps = [];
window.__plyAt = {};
document.addEventListener("click", function () { window.__taps.push(Date.now()); }, true);
document.addEventListener("DOMContentLoaded", function () {
  var app = document.getElementById("app");
  function seen() {
    var p = app.dataset.ply;
    if (app.dataset.ready === "1" && p !== undefined && !(p in window.__plyAt)) window.__plyAt[p] = Date.now();
  }
  new MutationObserver(seen).observe(app, { attributes: true, attributeFilter: ["data-ply", "data-ready"] });
});
"""


class Board:
    """One page of a game in its own browser context (a player's seat link, or a spectator's)."""

    def __init__(self, browser: Any, url: str, *, width: int = 390, height: int = 844, locale: str = "en-US") -> None:
        self.context = browser.new_context(viewport={"width": width, "height": height}, has_touch=True,
                                           locale=locale)
        self.context.set_default_timeout(WAIT_MS)
        self.context.add_init_script(TIMING_SCRIPT)
        self.page = self.context.new_page()
        self.page.goto(url)
        self.page.wait_for_selector("main#app[data-ready='1']", timeout=WAIT_MS)

    @property
    def app(self) -> Any:
        return self.page.locator("main#app")

    def data(self, name: str) -> str | None:
        return self.app.get_attribute(f"data-{name}")

    def wait_ply(self, ply: int) -> None:
        self.page.wait_for_selector(f"main#app[data-ply='{ply}']", state="attached", timeout=WAIT_MS)

    def ply_at(self, ply: int) -> float:
        """When (ms, the machine's clock) the page first showed ``ply``."""
        return float(self.page.evaluate(f"window.__plyAt[{ply}]"))

    def last_tap(self) -> float:
        return float(self.page.evaluate("window.__taps[window.__taps.length - 1]"))

    def tap_square(self, square: int) -> None:
        """Tap a piece (or an empty square) on the board."""
        piece = self.page.locator(f"[data-role=board] g[data-at='{square}']")
        if piece.count():
            piece.tap()
        else:
            self.page.locator(f"[data-role=board] rect[data-square='{square}']").tap()

    def tap_destination(self, square: int) -> None:
        self.page.locator(f"[data-role=board] circle[data-dest='{square}']").tap()

    def message(self) -> str:
        return self.page.locator("[data-role=message]").inner_text()

    def close(self) -> None:
        self.context.close()
