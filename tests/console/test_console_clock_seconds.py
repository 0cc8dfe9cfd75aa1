"""Issue 28, item 10: the console's /clock takes seconds and combined units ('+30s', '+4m40s')."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("amount, seconds", [("+30s", 30), ("+4m40s", 280), ("+1h30m15s", 5415)])
def test_clock_moves_by_seconds(console, now, amount, seconds):
    out = console.feed(f"/clock {amount}")
    assert "(clock:" in out, out
    assert console.service.clock() == now[0] + seconds


def test_seconds_add_up_across_clock_lines(console, now):
    console.feed("/clock +4m40s", "/clock +20s")
    assert console.service.clock() == now[0] + 300
