"""Domain events: what happened in one use case that others follow (ratings follow finished
games and scored puzzle attempts), published on a synchronous bus instead of hook chains.

Events are published inside the same storage transaction as the change they announce, and the
subscribers run at once, in that transaction: what a subscriber writes (a rating) commits or rolls
back together with the change (the result, the attempt).  A subscriber must therefore not wait for
anything outside the transaction (a thread, the network); work that must see the change committed
(the engine thinking about the bot's answer) is started by the use case after the transaction.
Subscribers run in the order they subscribed, and none may depend on that order: each reads what
is stored, never what another subscriber left behind.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from bot.storage.records import AttemptRecord, GameRecord, PuzzlePostRecord


@dataclass(frozen=True)
class MovePlayed:
    """A move was written: ``game`` as it is after it (a finished game also gets GameFinished)."""

    game: GameRecord
    move: str
    by_user: str
    # What the request that made the change asked to be handed back (``Caller.origin``).
    origin: object | None = None


@dataclass(frozen=True)
class GameFinished:
    """A game got its result (any way: a last move, resignation, agreed draw, time)."""

    game: GameRecord
    origin: object | None = None


@dataclass(frozen=True)
class AttemptScored:
    """A puzzle attempt got its one rated outcome (``attempt.rated_score``: 1 solved, 0.5 solved
    with a hint, 0 wrong or given up)."""

    post: PuzzlePostRecord
    attempt: AttemptRecord


E = TypeVar("E")


class EventBus:
    """A synchronous publish/subscribe bus for domain events (see the module's docstring)."""

    def __init__(self) -> None:
        self._subscribers: dict[type, list[Callable[[Any], None]]] = defaultdict(list)

    def subscribe(self, kind: type[E], handler: Callable[[E], None]) -> None:
        self._subscribers[kind].append(handler)

    def subscribers(self, kind: type) -> list[Callable[[Any], None]]:
        return list(self._subscribers.get(kind, ()))

    def publish(self, event: object) -> None:
        """Run every subscriber of the event's type now, in the caller's transaction; an error
        propagates (the caller's transaction rolls back)."""
        for handler in self.subscribers(type(event)):
            handler(event)
