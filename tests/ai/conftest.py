"""The engine's clock in the timing tests: time that moves with the engine's work, not with the
machine, so "answers within its time" is checked the same on an idle and a busy machine (the
real speed is bench/'s business)."""

from __future__ import annotations

import pytest
from extra_variants import register_all

import bot.ai
import bot.ai.search

# Before the test modules are collected: generator tests parametrise over every registered variant.
register_all()

# What one search node is charged: about the slowest a node is on a slow machine (a Spanish
# position full of flying kings with long captures).
NODE_SECONDS = 0.001


class WorkClock:
    """The engine's clock (``bot.ai.search.clock``, which the compiled search reads too):
    NODE_SECONDS per node of every search since it was made (the lower levels, which look at the
    board without searching, read no clock).  Searches run one after another here: a search's
    nodes are banked when the next one starts (compiled searches of a thread share one counter)."""

    def __init__(self) -> None:
        self.banked = 0
        self.searcher: bot.ai.search.Searcher | None = None

    def start(self, searcher: bot.ai.search.Searcher) -> None:
        if self.searcher is not None:
            self.banked += self.searcher.nodes
        self.searcher = searcher

    def perf_counter(self) -> float:
        nodes = self.banked + (self.searcher.nodes if self.searcher is not None else 0)
        return 1000.0 + nodes * NODE_SECONDS


@pytest.fixture
def work_clock(monkeypatch: pytest.MonkeyPatch) -> WorkClock:
    clock = WorkClock()
    init = bot.ai.search.Searcher.__init__

    def searcher_init(self, *args, **kwargs) -> None:
        # Banked before this search's counter is reset (a compiled search reuses its thread's).
        clock.start(self)
        init(self, *args, **kwargs)

    monkeypatch.setattr(bot.ai.search.Searcher, "__init__", searcher_init)
    monkeypatch.setattr(bot.ai.search, "clock", clock.perf_counter)
    return clock
