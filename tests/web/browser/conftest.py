"""The browser the browser tests share: the system's Chromium, launched once per test module
(skipped where there is none, failed under DRAUGHTS_REQUIRE_BROWSER=1: see browser_harness)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from browser_harness import require_browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    chromium = require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        yield launched
        launched.close()
