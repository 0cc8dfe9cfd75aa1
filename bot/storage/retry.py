"""Running a unit of work again when it lost a race (StorageContention).

A read-modify-write that found its data changed raised StorageContention and kept nothing; the
service runs the whole unit (reads included) again, a few times, after a short random pause so
two losers do not collide again in step.  Any other error goes straight through.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from .base import StorageContention, Store

log = logging.getLogger("bot.storage")

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """At most ``attempts`` runs in all; before run n+1 a pause drawn uniformly from
    [0, min(cap, base * 2**n)] seconds (full jitter)."""

    attempts: int = 5
    base: float = 0.005
    cap: float = 0.1
    rng: random.Random = field(default_factory=random.Random, compare=False)
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False)

    def pause(self, run: int) -> float:
        """The pause before run ``run + 1`` (``run`` counts from 1)."""
        return self.rng.uniform(0.0, min(self.cap, self.base * 2 ** run))


DEFAULT_POLICY = RetryPolicy()


def retry_contention(work: Callable[[], T], policy: RetryPolicy = DEFAULT_POLICY) -> T:
    """``work()``, run again while it raises StorageContention, up to ``policy.attempts`` runs; the
    last StorageContention goes to the caller.  ``work`` must be a whole unit of work (its own
    ``transaction()``, its reads inside): a retry repeats the reads, never only the write."""
    for run in range(1, policy.attempts + 1):
        try:
            return work()
        except StorageContention as err:
            if run == policy.attempts:
                raise
            log.info("storage contention (run %d of %d), retrying: %s", run, policy.attempts, err)
            policy.sleep(policy.pause(run))
    raise AssertionError("unreachable")


def in_transaction(store: Store, work: Callable[[], T], policy: RetryPolicy = DEFAULT_POLICY) -> T:
    """``work()`` as one unit of work on ``store``, retried as ``retry_contention`` says.  Inside
    a transaction already, it just runs: only the outermost unit can be run again."""
    if store.in_transaction():
        return work()          # a contention goes up to the outermost unit, which is run again

    def unit() -> T:
        with store.transaction():
            return work()
    return retry_contention(unit, policy)
