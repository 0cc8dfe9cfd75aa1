"""The browser tests' guard: without Chromium they skip, unless DRAUGHTS_REQUIRE_BROWSER=1 (CI), where
they fail and say why."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_harness import REQUIRE, require_browser


def nowhere(_name: str) -> str | None:
    return None


def test_without_chromium_the_browser_tests_skip(tmp_path: Path) -> None:
    with pytest.raises(pytest.skip.Exception, match="no Chromium"):
        require_browser(environ={}, which=nowhere, fallback=tmp_path / "chromium")


def test_without_chromium_they_fail_where_the_browser_is_required(tmp_path: Path) -> None:
    with pytest.raises(pytest.fail.Exception, match=f"{REQUIRE}=1 but the browser tests cannot run: no Chromium"):
        require_browser(environ={REQUIRE: "1"}, which=nowhere, fallback=tmp_path / "chromium")


def test_the_chromium_found_is_the_one_launched(tmp_path: Path) -> None:
    found = tmp_path / "chromium"
    found.write_text("")
    assert require_browser(environ={REQUIRE: "1"}, which=nowhere, fallback=found) == str(found)
    assert require_browser(environ={}, which=lambda name: f"/opt/{name}", fallback=found) == "/opt/chromium"
