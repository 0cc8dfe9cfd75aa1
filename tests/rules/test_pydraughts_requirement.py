"""The pydraughts comparison's guard (tests/rules/test_variant_flags.py): without pydraughts it
skips, unless DRAUGHTS_REQUIRE_PYDRAUGHTS=1 (.ci/run), where it fails and says why."""

from __future__ import annotations

from types import ModuleType

import pytest
from extra_variants import REQUIRE_PYDRAUGHTS, require_pydraughts


def missing(name: str) -> ModuleType:
    raise ModuleNotFoundError(f"No module named {name!r}")


def test_without_pydraughts_the_comparison_skips() -> None:
    with pytest.raises(pytest.skip.Exception, match="pydraughts is not installed"):
        require_pydraughts(environ={}, load=missing)
    with pytest.raises(pytest.skip.Exception):
        require_pydraughts(environ={REQUIRE_PYDRAUGHTS: "0"}, load=missing)


def test_without_pydraughts_it_fails_where_pydraughts_is_required() -> None:
    with pytest.raises(pytest.fail.Exception,
                       match=f"{REQUIRE_PYDRAUGHTS}=1 but the pydraughts comparison cannot run: pydraughts is not"):
        require_pydraughts(environ={REQUIRE_PYDRAUGHTS: "1"}, load=missing)


def test_the_module_found_is_the_one_used() -> None:
    found = ModuleType("draughts")
    assert require_pydraughts(environ={REQUIRE_PYDRAUGHTS: "1"}, load=lambda _name: found) is found
    assert require_pydraughts(environ={}).__name__ == "draughts"


def test_ci_requires_it() -> None:
    from pathlib import Path

    run = (Path(__file__).parents[2] / ".ci" / "run").read_text()
    assert f"export {REQUIRE_PYDRAUGHTS}=1" in run
