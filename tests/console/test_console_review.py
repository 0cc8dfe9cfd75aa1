"""Issue 34's Review links in the console: while the web board runs, a finished game's board prints
a Review link to the game's signed page at its first ply, and /history one for each game; each
opens the game's page on the real aiohttp app.  Without the board, neither (as before)."""

from __future__ import annotations

import io
import random
import re
from pathlib import Path
from urllib.parse import urlsplit

from aiohttp.test_utils import TestClient, TestServer
from fresh_db import fresh_database

from bot.i18n import t
from bot.platforms.console import ConsoleChat
from bot.platforms.web import WebConfig, make_app
from bot.service import GameService
from bot.storage import Storage

BASE = "http://127.0.0.1:9"


def console(tmp_path: Path, web_url: str | None) -> tuple[ConsoleChat, io.StringIO, GameService, Storage]:
    storage = Storage(fresh_database(tmp_path / "console.db"))
    service = GameService(storage, clock=lambda: 1_700_000_000.0, rng=random.Random(1))
    out = io.StringIO()
    return ConsoleChat(service, out, tmp_path / "images", language="en", web_url=web_url), out, service, storage


def finish(chat: ConsoleChat) -> None:
    chat.line("/as Ana")
    chat.line("/new italian white")
    chat.line("/as Bob")
    chat.line("/accept")
    chat.line("/as Ana")
    chat.line("/resign")
    chat.line("/resign")


def review_lines(said: str, label: str) -> list[str]:
    return re.findall(r"^  \[" + re.escape(label) + r"\]  (\S+)$", said, re.MULTILINE)


async def test_a_finished_board_and_history_print_review_links_that_open_the_page(tmp_path):
    chat, out, service, storage = console(tmp_path, BASE)
    try:
        start = len(out.getvalue())
        finish(chat)
        said = out.getvalue()[start:]
        url = f"{BASE}/g/1?t={service.web.watch_token(1)}&ply=0"
        # Only the finished board has it (not the boards of the running game).
        assert review_lines(said, t("en", "button.review")) == [url]
        finish(chat)
        start = len(out.getvalue())
        chat.line("/as Eve")
        chat.line("/history")
        said = out.getvalue()[start:]
        assert t("en", "history.review") in said
        second = f"{BASE}/g/2?t={service.web.watch_token(2)}&ply=0"
        assert review_lines(said, t("en", "button.review_game", id=2)) == [second]
        assert review_lines(said, t("en", "button.review_game", id=1)) == [url]
        async with TestClient(TestServer(make_app(service, WebConfig(poll_seconds=0.3)))) as client:
            parts = urlsplit(url)
            page = await client.get(f"{parts.path}?{parts.query}")
            assert page.status == 200
    finally:
        service.close()
        storage.close()


def test_without_the_web_board_no_review_link_is_printed(tmp_path):
    chat, out, service, storage = console(tmp_path, None)
    try:
        finish(chat)
        chat.line("/history")
        said = out.getvalue()
        assert t("en", "button.review") not in said and "ply=0" not in said
        assert t("en", "history.review") not in said
    finally:
        service.close()
        storage.close()
