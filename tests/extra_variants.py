"""Variants the tests register and the bot never offers: they prove that a variant's flags alone
drive every move generator (no generator names a variant).

Brazilian: international rules on 8x8 (men capture backwards, flying kings, the most pieces must
be taken, a man is crowned only where its move ends).  Russian: men capture backwards, flying kings,
any capture may be chosen, and a man reaching the far row mid-capture is crowned there and goes on
capturing as a king.  pydraughts plays both (tests/rules/test_variant_flags.py compares with it).
"""

from bot.rules.variants import CapturePriority, Crowning, Variant, register

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
