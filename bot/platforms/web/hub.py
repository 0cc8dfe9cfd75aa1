"""One reader per watched game: the event streams of a game share its state, built once per version.

A stream subscribes to its game's feed (``StreamHub.subscribe``) and waits for its subscriber's
slot to fill; it never reads the database itself.  Each game with open streams has one reader task
that wakes when

- this process changed the game (the service's listener, through ``wake``),
- another process did, when the store tells (PostgreSQL's NOTIFY, ``Store.listen_games``), or
- its poll interval passed (the only news of other processes on SQLite; a slow safety net when
  notifications arrive),

reads the game's row once, and when its version moved builds the state of each distinct view
(seat and language: a handful however many spectators watch) once, as the SSE frame every
subscriber of that view is then handed.  The reads and builds run in the hub's own small executor,
never in the loop's default one, which the chats' handlers use.  A finished game's streams get the
final state and end; a game's feed stops when its last stream goes.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Protocol

# The row type comes through the service: platforms never import storage (tests/test_layers.py).
from bot.service.web import BoardLayer, GameRecord, Seat

log = logging.getLogger("bot.web")

# A view of a game: the seat's (platform, user) or None for a spectator, and the language.
View = tuple[tuple[str, str] | None, str]
# A state's SSE frame in two parts, around its ``now`` (filled in as it is written: a frame built a
# while ago must not set a late page's clock back).
Frame = tuple[bytes, bytes]
_NOW = "\x00now\x00"
_NOW_JSON = json.dumps(_NOW).encode()


@dataclass(eq=False)
class Subscriber:
    """One open stream: the latest frame for it (``data``, of ``version``), set when it changes,
    and ``done`` once nothing more will come (a finished game, no such game, the server stopping)."""

    game_id: int
    seat: Seat | None
    lang: str
    data: Frame | None = None
    version: int | None = None
    done: bool = False
    event: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def view(self) -> View:
        return ((self.seat.platform, self.seat.user_id) if self.seat is not None else None, self.lang)

    def give(self, version: int | None, data: Frame | None, done: bool) -> None:
        if data is not None:
            self.version, self.data = version, data
        self.done = self.done or done
        self.event.set()


@dataclass(eq=False)
class _Feed:
    game_id: int
    subscribers: set[Subscriber] = field(default_factory=set)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    version: int | None = None
    finished: bool = False
    frames: dict[View, Frame] = field(default_factory=dict)
    seats: dict[View, Seat | None] = field(default_factory=dict)
    task: asyncio.Task[None] | None = None
    failing: bool = False


@dataclass
class _Look:
    """What one read of a game found: None for no such game."""

    version: int
    finished: bool
    frames: dict[View, Frame]


def frame(data: dict[str, object], version: int) -> Frame:
    """A state's frame, its ``now`` left to ``at``."""
    text = json.dumps({**data, "now": _NOW}, ensure_ascii=False, separators=(",", ":"))
    head, _, tail = f"event: state\nid: {version}\ndata: {text}\n\n".encode().partition(_NOW_JSON)
    return head, tail


def at(data: Frame, now: float) -> bytes:
    """The frame as written at ``now`` (the server's clock, which the page sets its own by)."""
    return data[0] + json.dumps(float(now)).encode() + data[1]


class StreamHub:
    """The feeds of the games with open streams, on one event loop (see the module's docstring).
    ``poll_seconds``: how often a feed reads its game without news; ``notified_poll_seconds``: the
    same while the store's notifications arrive; ``registry``: the wake-ups a change signal sets
    (the server's ``_Streams.wakes``, game by game)."""

    def __init__(self, board: BoardLayer, executor: Executor, poll_seconds: float,
                 notified_poll_seconds: float, registry: dict[asyncio.Event, int]) -> None:
        self.board = board
        self.executor = executor
        self.poll_seconds = poll_seconds
        self.notified_poll_seconds = notified_poll_seconds
        self.registry = registry
        self.feeds: dict[int, _Feed] = {}
        self.closing = False
        # Whether the store's change notifications arrive now (then a feed polls only as a safety net).
        self.notified: Callable[[], bool] = lambda: False
        # States built so far (a seam for tests and benches: one per view per version).
        self.builds = 0

    def count(self, game_id: int) -> int:
        feed = self.feeds.get(game_id)
        return 0 if feed is None else len(feed.subscribers)

    def subscribe(self, game_id: int, seat: Seat | None, lang: str) -> Subscriber:
        sub = Subscriber(game_id, seat, lang)
        feed = self.feeds.get(game_id)
        if feed is None or feed.task is None or feed.task.done():
            feed = self.feeds[game_id] = _Feed(game_id)
            self.registry[feed.wake] = game_id
            feed.task = asyncio.get_running_loop().create_task(self._run(feed), name=f"web-feed-{game_id}")
        feed.subscribers.add(sub)
        known = feed.frames.get(sub.view)
        if known is not None:
            sub.give(feed.version, known, feed.finished)    # the state at once, nothing read
        else:
            feed.seats[sub.view] = seat
            feed.wake.set()
        return sub

    def unsubscribe(self, sub: Subscriber) -> None:
        feed = self.feeds.get(sub.game_id)
        if feed is not None:
            feed.subscribers.discard(sub)
            if not feed.subscribers:
                feed.wake.set()             # its reader ends

    def wake(self, games: set[int]) -> None:
        """Look again at ``games`` now (every game when empty)."""
        for feed in list(self.feeds.values()):
            if not games or feed.game_id in games:
                feed.wake.set()

    def close(self) -> None:
        """End every stream (the server stops)."""
        self.closing = True
        for feed in list(self.feeds.values()):
            for sub in list(feed.subscribers):
                sub.give(None, None, True)
            feed.wake.set()

    # -- the reader --------------------------------------------------------------------------------

    async def _run(self, feed: _Feed) -> None:
        loop = asyncio.get_running_loop()
        try:
            while feed.subscribers and not self.closing:
                feed.wake.clear()
                views = {sub.view: sub.seat for sub in feed.subscribers}
                missing = [v for v in views if v not in feed.frames]
                try:
                    look = await loop.run_in_executor(self.executor, self._look, feed.game_id, feed.version,
                                                      views, missing)
                except Exception as err:    # the database is away: the streams wait for the next look
                    if not feed.failing:    # once until a read succeeds (the store logs an outage itself)
                        log.warning("web board: reading game %s for its streams failed: %s", feed.game_id, err)
                    feed.failing = True
                else:
                    feed.failing = False
                    if look is None:
                        for sub in list(feed.subscribers):
                            sub.give(None, None, True)
                        break
                    self._hand_out(feed, look)
                if feed.finished:
                    # The final state is out and changes no more; a late stream gets it from ``frames``
                    # (only a view not built yet needs a read), until the last stream goes.
                    while feed.subscribers and all(sub.done for sub in feed.subscribers) and not self.closing:
                        feed.wake.clear()
                        await feed.wake.wait()
                    continue
                wait = max(self.poll_seconds, self.notified_poll_seconds) if self.notified() else self.poll_seconds
                try:
                    await asyncio.wait_for(feed.wake.wait(), wait)
                except TimeoutError:
                    pass
        finally:
            self.registry.pop(feed.wake, None)
            if self.feeds.get(feed.game_id) is feed:
                del self.feeds[feed.game_id]

    def _hand_out(self, feed: _Feed, look: _Look) -> None:
        if look.version != feed.version:
            feed.frames = {}
        feed.version, feed.finished = look.version, look.finished
        feed.frames.update(look.frames)
        # The players' streams first: the opponent waiting for a move is woken before the spectators.
        for sub in sorted(feed.subscribers, key=lambda sub: sub.seat is None):
            data = feed.frames.get(sub.view)
            if data is not None and (sub.version != look.version or sub.data is not data):
                sub.give(look.version, data, look.finished)
            elif data is not None and look.finished:
                sub.give(None, None, True)

    def _look(self, game_id: int, shown: int | None, views: dict[View, Seat | None],
              missing: list[View]) -> _Look | None:
        """(A worker thread.) The game's row, and the frames of the views that need one: every view
        when the version moved, else only those no frame was built for yet."""
        row = self.board.game_row(game_id)
        if row is None:
            return None
        wanted = list(views) if row.version != shown else missing
        return _Look(row.version, row.status != "active",
                     {view: self._build(row, views[view], view[1]) for view in wanted})

    def _build(self, row: GameRecord, seat: Seat | None, lang: str) -> Frame:
        self.builds += 1
        state = self.board.state_of(row, seat, lang)
        return frame(state.to_json(), state.version)


class Listener(Protocol):
    """A store's change notifications: ``live`` while they arrive; ``stop()`` ends them."""

    live: bool

    def stop(self) -> None: ...


def listen(store: object, on_change: Callable[[int | None], None]) -> Listener | None:
    """Start the store's change notifications when it has them (``listen_games``: PostgreSQL),
    calling ``on_change(game_id)`` (None: anything may have changed, after a reconnection) from
    another thread; None when the store has none (SQLite: the feeds poll)."""
    start = getattr(store, "listen_games", None)
    if start is None:
        return None
    listener: Listener = start(on_change)
    return listener
