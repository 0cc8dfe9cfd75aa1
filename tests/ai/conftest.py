"""The engine's clock in the timing tests: time that moves with the engine's work, not with the
machine, so "answers within its time" is checked the same on an idle and a busy machine (the
real speed is bench/'s business)."""

from __future__ import annotations

import types

import pytest

import bot.ai
import bot.ai.search

# What one search node is charged: about the slowest a node is on a slow machine (a Spanish
# position full of flying kings with long captures).
NODE_SECONDS = 0.001


class WorkClock:
    """``perf_counter`` for bot.ai: NODE_SECONDS per node of every search since it was made (the
    lower levels, which look at the board without searching, read no clock)."""

    def __init__(self) -> None:
        self.searchers: list[bot.ai.search.Searcher] = []

    def perf_counter(self) -> float:
        return 1000.0 + sum(s.nodes for s in self.searchers) * NODE_SECONDS


@pytest.fixture
def work_clock(monkeypatch: pytest.MonkeyPatch) -> WorkClock:
    clock = WorkClock()
    init = bot.ai.search.Searcher.__init__

    def searcher_init(self, *args, **kwargs) -> None:
        init(self, *args, **kwargs)
        self.clock = clock.perf_counter
        clock.searchers.append(self)

    monkeypatch.setattr(bot.ai.search.Searcher, "__init__", searcher_init)
    monkeypatch.setattr(bot.ai, "time", types.SimpleNamespace(perf_counter=clock.perf_counter))
    return clock
