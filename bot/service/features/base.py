"""What every use case is given: the infrastructure it runs on and where its messages go.

A use case is a plain class: it gets these two and the other use cases it needs in its
constructor (see ``bot.service.compose``), and never inherits behaviour from another use case.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from bot.service.notifications import Notification
from bot.service.thinking import Thinker
from bot.storage import Store


@dataclass
class Runtime:
    """The infrastructure shared by every use case of one service.  Mutable on purpose: a test or
    the console may give the running service another clock or thinker, and every use case sees it."""

    storage: Store
    clock: Callable[[], float]
    rng: random.Random
    thinker: Thinker
    bot_seconds: float | None = None
    # The clock that only counts time this process was running (see Clocks); None: the system's
    # when ``clock`` is the system's wall clock.
    monotonic: Callable[[], float] | None = None


class Outlet(Protocol):
    """Where use cases put the notifications they send on their own (the outbox), and whom they tell
    that a platform has something new to deliver."""

    def notify(self, platform: str, chat_id: str, notice: Notification) -> int: ...

    def wake(self, platform: str) -> None: ...


class UseCase:
    """Access to the runtime and the outlet, nothing else: use cases share no behaviour through
    this class (each one's collaborators are attributes set in its own constructor)."""

    def __init__(self, runtime: Runtime, outlet: Outlet) -> None:
        self.runtime = runtime
        self.outlet = outlet

    @property
    def storage(self) -> Store:
        return self.runtime.storage

    @property
    def clock(self) -> Callable[[], float]:
        return self.runtime.clock

    @property
    def rng(self) -> random.Random:
        return self.runtime.rng

    @property
    def thinker(self) -> Thinker:
        return self.runtime.thinker

    @property
    def bot_seconds(self) -> float | None:
        return self.runtime.bot_seconds

    def tell(self, platform: str, chat_id: str, notice: Notification) -> int:
        """Put a notification in the outbox, inside the caller's transaction: it is worded when
        it is delivered."""
        return self.outlet.notify(platform, chat_id, notice)

    def _notify(self, platform: str) -> None:
        """Tell the platform's adapter to look at the outbox and the clocks again."""
        self.outlet.wake(platform)
