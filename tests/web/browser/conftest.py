"""The browser the browser tests share: the system's Chromium, launched once for each run of browser
tests in a test process (skipped where there is none, failed under DRAUGHTS_REQUIRE_BROWSER=1: see
browser_harness)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_harness import TelegramBoard, require_browser

# The running Playwright and its browser, while this process runs browser tests one after another.
_shared: dict[str, Any] = {}
HERE = Path(__file__).resolve().parent


def _close_shared() -> None:
    launched, playwright = _shared.pop("browser", None), _shared.pop("playwright", None)
    try:
        if launched is not None:
            launched.close()
    finally:
        if playwright is not None:
            playwright.stop()


@pytest.fixture
def browser() -> Any:
    """Launched by the first browser test and kept while the next test is one too, across modules
    (each module launched its own: about 1.5 s of CPU a launch, a dozen modules).  Not for longer:
    while Playwright's sync API is open it marks its event loop as this thread's running loop, and an
    asyncio test would fail on that.  Each test opens its own context or page."""
    if "browser" not in _shared:
        chromium = require_browser()
        from playwright.sync_api import sync_playwright

        playwright = sync_playwright().start()
        try:
            _shared["browser"] = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        except BaseException:
            playwright.stop()
            raise
        _shared["playwright"] = playwright
    return _shared["browser"]


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """After a browser test's own teardown: the browser goes unless the next test is a browser test;
    a context the test left open (it failed before closing it) goes in any case, so that no page of
    one test polls on while the next runs."""
    if not _shared:
        return
    if nextitem is None or HERE not in Path(nextitem.path).resolve().parents:
        _close_shared()
        return
    for context in list(_shared["browser"].contexts):
        context.close()


def pytest_sessionfinish(session: pytest.Session) -> None:
    if _shared:
        _close_shared()


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
