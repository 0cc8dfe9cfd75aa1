"""The browser the browser tests share: the system's Chromium, launched once per test module
(skipped where there is none, failed under DRAUGHTS_REQUIRE_BROWSER=1: see browser_harness)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_harness import TelegramBoard, require_browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    chromium = require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture
def board(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[TelegramBoard]:
    """The test's service, Telegram on the strict fake and web board, closed after it; then the
    Application's handlers must have raised nothing, and in a module that sets
    ``NO_TELEGRAM_REFUSALS = True`` Telegram must have refused none of the bot's calls (the
    failures a test injects aside)."""
    harness = TelegramBoard(tmp_path / "board.db")
    yield harness
    harness.close()
    assert harness.errors == []
    if getattr(request.module, "NO_TELEGRAM_REFUSALS", False):
        assert [(c.method, c.error) for c in harness.http.refused(injected=False)] == []
