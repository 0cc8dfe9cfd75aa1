"""Variants the tests register and the bot never offers: they prove that a variant's flags alone
drive every move generator (no generator names a variant).

Brazilian: international rules on 8x8 (men capture backwards, flying kings, the most pieces must
be taken, a man is crowned only where its move ends).  Russian: men capture backwards, flying kings,
any capture may be chosen, and a man reaching the far row mid-capture is crowned there and goes on
capturing as a king.  pydraughts plays both (tests/rules/test_variant_flags.py compares with it).
"""

import importlib
import os
from collections.abc import Callable, Mapping
from types import ModuleType

import pytest

from bot.rules.variants import CapturePriority, Crowning, Variant, register

# Set by .ci/run: there, a missing pydraughts is a broken install, not a reason to skip the proof.
REQUIRE_PYDRAUGHTS = "DRAUGHTS_REQUIRE_PYDRAUGHTS"

BRAZILIAN = Variant(
    id="brazilian", size=8, flying_kings=True, men_capture_kings=True, priority=CapturePriority.MAJORITY,
    no_progress_plies=50, numbering="italian", pdn_gametype="26,W,8,8,A0,0", start_rows=3,
    men_capture_backwards=True, crowning=Crowning.PASSES,
)
RUSSIAN = Variant(
    id="russian", size=8, flying_kings=True, men_capture_kings=True, priority=CapturePriority.FREE,
    no_progress_plies=30, numbering="italian", pdn_gametype="25,W,8,8,A0,0", start_rows=3,
    men_capture_backwards=True, crowning=Crowning.CONTINUES_AS_KING,
)
TEST_ONLY = (BRAZILIAN, RUSSIAN)


def register_all() -> None:
    """Let the engine know the test-only variants (conftests call it before collecting)."""
    for v in TEST_ONLY:
        register(v)


def require_pydraughts(environ: Mapping[str, str] = os.environ,
                       load: Callable[[str], ModuleType] = importlib.import_module) -> ModuleType:
    """pydraughts (the ``draughts`` module), the independent generator the test-only variants are
    proven against; else skip the calling module, or fail it where ``DRAUGHTS_REQUIRE_PYDRAUGHTS=1``
    (CI: the proof must not be skipped unnoticed)."""
    try:
        return load("draughts")
    except ImportError as err:
        why = f"pydraughts is not installed ({err})"
    if environ.get(REQUIRE_PYDRAUGHTS) == "1":
        pytest.fail(f"{REQUIRE_PYDRAUGHTS}=1 but the pydraughts comparison cannot run: {why}", pytrace=False)
    pytest.skip(f"pydraughts comparison skipped: {why}", allow_module_level=True)
    raise AssertionError("unreachable")
