"""Telegram's flood limits, kept per chat: a chat held back waits alone, never the whole bot.

PTB's ``AIORateLimiter`` sleeps through every 429 with one event shared by all requests: a flood
wait in one group (Telegram asks for up to hours) halted every chat for its full length, twice.
This limiter spaces messages as Telegram asks (about one a second in a chat, 20 a minute in a
group, 30 a second in all) and, when a chat must wait longer than ``max_wait`` (its own budget
spent, or a 429 Telegram sent for it), raises ``RetryAfter`` at once instead of sleeping: the
caller puts the message in the outbox with that not-before time, and every other chat goes on.

Only requests that post or edit a message in a chat are spaced; the rest (answering a button
press, reading a member) go out at once, so a busy group never delays a button's answer.

The 30 a second in all are shared by two classes (issue 29).  A reply to a person (a command's
answer, a button's result, the board after a move, a turn ping) is interactive; a broadcast
nobody is waiting for (the daily puzzle to every subscribed group, scheduled reminders) is bulk,
sent inside ``bulk()``.  A bulk message takes a global slot only when no reply is waiting for
one, is paced evenly, and leaves ``INTERACTIVE_RESERVE`` of every second's 30 free: so a reply
goes out within about a window however many groups' posts are queued, and the posts still drain
at about 24 a second (26 in every window of 1.1 s).  Before, every group's post took the next
slot of one first-come queue, and a private /help waited for all the posts queued before it (83 s
with 3,000 groups).  A bulk sender also waits for its turn (``bulk_sender``) before it takes its
chat's lock and a worker thread, so a person's command in a group whose post is queued is not held
behind that post.

Telegram's limits belong to the bot, not to a process (issue 29): N webhook workers, each with a
budget of its own, drew N times the 429s.  Given a ``SharedBudget`` (the bot's database, which
every worker uses), the chat, group and global budgets are reserved there instead: one atomic
reservation for the chat (and its group) and one for the global slot, so N workers stay within
Telegram's limits as one does.  Replies keep their priority across processes: a bulk message
takes a global slot only when it can go at once and its own share (``GLOBAL - RESERVE``) allows
it, so it never queues ahead of a reply in the shared schedule.  A single process (polling: one
per token) keeps the budgets in memory, with no database round trip.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import logging
import time
import warnings
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator, Mapping
from datetime import timedelta
from typing import Any, Protocol

from telegram.error import RetryAfter
from telegram.ext import BaseRateLimiter
from telegram.warnings import PTBDeprecationWarning

from bot import config
from bot.service import StorageError

log = logging.getLogger(__name__)

# Telegram's published limits; the spacing keeps a margin so that a request that reaches
# Telegram a little late (or another's a little early) is still within them.
GLOBAL_PER_SECOND = 30
GROUP_PER_MINUTE = 20
CHAT_PER_SECOND = 1
CHAT_BURST = 3            # a few messages at once are fine in a chat (a text and its board)
MARGIN = 1.1
# The longest a request waits inline (spacing or a short 429); beyond it the caller is told to
# come back later.  A group spends its 20-a-minute budget at one message per 3.3 s, so it fits.
MAX_WAIT_SECONDS = 5.0
# "30 a second" is kept over any second, not as a rate with a burst on top of it (a burst of 30
# and the rate would be 57 in one second): a sliding window, with the margin above.  The fake
# Bot API of the tests counts it so too.
GLOBAL_WINDOW_SECONDS = 1.0 * MARGIN
# Of every window's 30, bulk leaves this many to replies to people: a reply that comes while a
# broadcast drains finds a slot at once (it goes first anyway, but would wait for one to free).
INTERACTIVE_RESERVE = 4
# How many chats' bulk senders may be on their way to their first global slot at once (past
# ``bulk_sender``, holding their chat's lock): enough to keep the bulk share busy while each does
# its storage work, few enough that one waits about a second for its slot, not for the whole
# broadcast (a person's command in that chat waits for it).
BULK_SENDERS = 30
BULK_CATCH_UP = 4
# What a Bot API call gives back (PTB's BaseRateLimiter passes it through).
Answer = bool | dict[str, Any] | list[dict[str, Any]]


def retry_seconds(err: RetryAfter) -> float:
    """The wait a RetryAfter asks for, in seconds (PTB is changing its type; both are read)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        value = err.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


class Throttled(RetryAfter):
    """Our own limiter's answer (not Telegram's): the chat may post again in ``retry_after``."""

    def __init__(self, seconds: float, chat_id: object) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PTBDeprecationWarning)
            super().__init__(timedelta(seconds=max(seconds, 0.001)))
        self.chat_id = chat_id


class Bucket:
    """``count`` requests per ``per`` seconds, ``burst`` of them at once (a GCRA): each request
    reserves the next free slot, so concurrent requests are spaced without a lock."""

    def __init__(self, count: float, per: float, burst: int) -> None:
        self.interval = per / count * MARGIN
        self.tolerance = (burst - 1) * self.interval
        self.tat = float("-inf")          # the theoretical arrival time of the next request

    def wait(self, now: float) -> float:
        return max(self.tat - self.tolerance - now, 0.0)

    def take(self, at: float) -> None:
        self.tat = max(self.tat, at) + self.interval


class BulkMark:
    """What marks a task's messages as bulk; ``on_its_way`` gives back its turn among the bulk
    senders (once its first message has a global slot: from there it holds up nobody)."""

    def __init__(self, release: Callable[[], None] | None = None) -> None:
        self._release = release

    def on_its_way(self) -> None:
        release, self._release = self._release, None
        if release is not None:
            release()


_bulk: contextvars.ContextVar[BulkMark | None] = contextvars.ContextVar("telegram_bulk", default=None)


@contextlib.contextmanager
def bulk(mark: BulkMark | None = None) -> Iterator[None]:
    """Messages sent inside (in this task) are bulk broadcast: they take a global slot only when no
    reply to a person waits for one."""
    token = _bulk.set(mark or BulkMark())
    try:
        yield
    finally:
        _bulk.reset(token)


def is_bulk() -> bool:
    return _bulk.get() is not None


class GlobalBudget:
    """At most ``count`` messages in any ``window`` seconds, in all; bulk messages paced to
    ``count - reserve`` a window, so that replies find ``reserve`` free slots in every one."""

    def __init__(self, count: int = GLOBAL_PER_SECOND, window: float = GLOBAL_WINDOW_SECONDS,
                 reserve: int = INTERACTIVE_RESERVE) -> None:
        self.count = count
        self.window = window
        self.reserve = reserve
        self._sent: deque[float] = deque(maxlen=count)      # the last ``count`` messages' times
        # Bulk spread evenly over the window; a few at once let a late wake-up catch up, else
        # every ms the loop is late is lost to the broadcast for good.
        self._pace = Bucket(count - reserve, window / MARGIN, BULK_CATCH_UP)

    def wait(self, now: float, bulk: bool) -> float:
        """How long a message of this class must wait for room (0: it may go now).  Only the
        pace holds bulk back to its share: replies beyond the reserve take the slots bulk would
        have used, not bulk's share as well."""
        full = len(self._sent) == self.count
        wait = self._sent[0] + self.window - now if full else 0.0
        if bulk:
            wait = max(wait, self._pace.wait(now))
        return max(wait, 0.0)

    def take(self, now: float, bulk: bool) -> None:
        self._sent.append(now)
        if bulk:
            self._pace.take(now)


class SendStore(Protocol):
    """What a shared budget needs of the bot's database (its sends repository, ``store.sends``)."""

    def reserve(self, scopes: list[tuple[str, float, float]], now: float, max_wait: float) -> float: ...

    def hold(self, key: str, until: float) -> None: ...

    def prune(self, before: float) -> int: ...


# Scopes not reserved for this long are forgotten (every one of them is free long before).
PRUNE_AFTER_SECONDS = 3600.0
PRUNE_EVERY_SECONDS = 600.0
# Threads for the shared budget's database calls: its own, so that a send never waits for a
# chat's storage work to free one of the chats' threads.
SHARED_THREADS = 4
# Messages a second kept free of the shared global budget for the lateness of senders.
SHARED_JITTER_SLACK = 2


class SharedBudget:
    """The flood budgets kept in the bot's database, shared by all its processes: each scope a
    GCRA row (``Store.reserve_sends``) on the wall clock, which every process agrees on."""

    def __init__(self, store: SendStore, prefix: str = "telegram:", clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.prefix = prefix
        self.clock = clock
        self.reservations = 0          # database calls made (benches and tests read it)
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        self._pruned = clock()
        self._failing = False
        pace = Bucket(GLOBAL_PER_SECOND - INTERACTIVE_RESERVE, GLOBAL_WINDOW_SECONDS / MARGIN, BULK_CATCH_UP)
        # The global window as a GCRA: a burst of two at most.  Telegram counts a message when it
        # arrives, not when its slot was reserved, and a process that is slow to send a reserved
        # message (a loaded machine) bunches it with the next ones: 28 in 1.1 s (any second then
        # holds at most 1 / interval + 2, about 27) leaves room for that jitter (seen: 31 in one
        # second at 30 in 1.1 s, with the suite running beside two worker processes).
        every = GLOBAL_WINDOW_SECONDS / (GLOBAL_PER_SECOND - SHARED_JITTER_SLACK)
        self._all = (f"{prefix}all", every, every)
        self._bulk = (f"{prefix}bulk", pace.interval, pace.tolerance)

    def chat_scopes(self, key: str, group: bool) -> list[tuple[str, float, float]]:
        chat = Bucket(CHAT_PER_SECOND, 1.0, CHAT_BURST)
        scopes = [(f"{self.prefix}chat:{key}", chat.interval, chat.tolerance)]
        if group:
            bucket = Bucket(GROUP_PER_MINUTE, 60.0, GROUP_PER_MINUTE)
            scopes.append((f"{self.prefix}group:{key}", bucket.interval, bucket.tolerance))
        return scopes

    def global_scopes(self, bulk: bool) -> list[tuple[str, float, float]]:
        return [self._all, self._bulk] if bulk else [self._all]

    async def reserve(self, scopes: list[tuple[str, float, float]], max_wait: float) -> float | None:
        """How long to wait before the send that was reserved (beyond ``max_wait``: nothing was
        reserved); None when the database cannot be used now (the caller keeps its own budget)."""
        loop = asyncio.get_running_loop()
        now = self.clock()
        try:
            start = await loop.run_in_executor(self._threads(), self._reserve, scopes, now, max_wait)
        except StorageError as err:
            if not self._failing:
                self._failing = True
                log.warning("telegram flood budget: the database cannot be used (%s); this process "
                            "spaces its messages alone meanwhile", err)
            return None
        if self._failing:
            self._failing = False
            log.info("telegram flood budget: shared through the database again")
        return max(start - now, 0.0)

    def _reserve(self, scopes: list[tuple[str, float, float]], now: float, max_wait: float) -> float:
        self.reservations += 1
        start = self.store.reserve(scopes, now, max_wait)
        if now - self._pruned > PRUNE_EVERY_SECONDS:
            self._pruned = now
            self.store.prune(now - PRUNE_AFTER_SECONDS)
        return start

    async def hold(self, key: str, seconds: float) -> None:
        """Telegram asked this chat to wait ``seconds``: no process posts there before."""
        chat = self.chat_scopes(key, False)[0]
        until = self.clock() + seconds + chat[2]
        try:
            await asyncio.get_running_loop().run_in_executor(self._threads(), self.store.hold, chat[0], until)
        except StorageError as err:
            log.info("telegram flood wait for chat %s not shared: %s", key, err)

    def _threads(self) -> concurrent.futures.ThreadPoolExecutor:
        # Made at first use (again after a shutdown: an Application may be started again).
        if self._executor is None:
            self._executor = concurrent.futures.ThreadPoolExecutor(SHARED_THREADS, thread_name_prefix="send-budget")
        return self._executor

    def close(self) -> None:
        executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)


SHARED_VARIABLE = "TELEGRAM_SHARED_BUDGET"


def shared_budget(store: SendStore, env: Mapping[str, str]) -> SharedBudget | None:
    """The shared budget when several processes may send for the bot: in webhook mode (any number
    of workers behind the URL, on one database), or when TELEGRAM_SHARED_BUDGET=1; never with
    TELEGRAM_SHARED_BUDGET=0.  Polling is one process per token: its budget stays in memory."""
    return SharedBudget(store) if config.shared_budget(env) else None


def _is_group(chat_id: object) -> bool:
    if isinstance(chat_id, int):
        return chat_id < 0
    return isinstance(chat_id, str) and (chat_id.startswith("@") or chat_id.startswith("-"))


def _posts(endpoint: str) -> bool:
    return endpoint.startswith(("send", "edit", "copy", "forward")) and endpoint != "sendChatAction"


class FloodLimiter(BaseRateLimiter[None]):
    """Telegram's limits per chat and in all; see the module docstring.  ``clock`` and ``sleep``
    are the time it runs on (tests pass a faster one; production, the real one)."""

    def __init__(self, *, max_wait: float = MAX_WAIT_SECONDS, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
                 shared: SharedBudget | None = None) -> None:
        self.max_wait = max_wait
        self.clock = clock
        self.sleep = sleep
        self.shared = shared           # the budgets every process of the bot shares; None: this one's own
        self._global = GlobalBudget()
        # Who waits for a global slot, per class (bulk: True), first come first served within one.
        self._waiting: dict[bool, deque[asyncio.Future[None]]] = {False: deque(), True: deque()}
        self._replies_gone: asyncio.Future[None] | None = None   # the bulk head waits on it
        self._senders: asyncio.Semaphore | None = None
        self._senders_loop: asyncio.AbstractEventLoop | None = None
        self._groups: dict[str, Bucket] = {}
        self._chats: dict[str, Bucket] = {}
        self._parked: dict[str | None, float] = {}    # chat (None: every chat) -> not before

    async def initialize(self) -> None:
        pass

    async def shutdown(self) -> None:
        if self.shared is not None:
            self.shared.close()

    def parked_until(self, chat_id: object) -> float:
        """Until when a chat may not post (flood control Telegram asked for); 0 if it may."""
        return max(self._parked.get(str(chat_id), 0.0), self._parked.get(None, 0.0))

    @property
    def waiting(self) -> tuple[int, int]:
        """How many messages wait for a global slot: (interactive, bulk)."""
        return len(self._waiting[False]), len(self._waiting[True])

    @contextlib.asynccontextmanager
    async def bulk_sender(self) -> AsyncIterator[None]:
        """A chat's bulk messages are sent inside: it waits first until fewer than BULK_SENDERS
        chats are on their way to their first global slot (before its chat's lock and any worker
        thread are taken), and what it sends inside is bulk."""
        loop = asyncio.get_running_loop()
        if self._senders is None or self._senders_loop is not loop:
            self._senders, self._senders_loop = asyncio.Semaphore(BULK_SENDERS), loop
        await self._senders.acquire()
        mark = BulkMark(self._senders.release)
        try:
            with bulk(mark):
                yield
        finally:
            mark.on_its_way()

    async def process_request(self, callback: Callable[..., Coroutine[Any, Any, Answer]],
                              args: Any, kwargs: dict[str, Any], endpoint: str, data: dict[str, Any],
                              rate_limit_args: None) -> Answer:
        chat_id = data.get("chat_id")
        if chat_id is None and data.get("inline_message_id"):
            # An inline message is spaced as a chat of its own: a 429 for it holds back only it.
            chat_id = f"inline:{data['inline_message_id']}"
        if chat_id is None or not _posts(endpoint):
            try:
                return await callback(*args, **kwargs)
            except RetryAfter as err:
                # No chat to blame: Telegram holds back everything we post for that long.
                self._parked[None] = self.clock() + retry_seconds(err)
                raise
        key = str(chat_id)
        retried = False
        while True:
            await self._space(key, chat_id)
            try:
                return await callback(*args, **kwargs)
            except RetryAfter as err:
                wait = retry_seconds(err)
                self._parked[key] = max(self._parked.get(key, 0.0), self.clock() + wait)
                log.info("telegram flood control for chat %s: %.0f s", key, wait)
                if self.shared is not None:
                    await self.shared.hold(key, wait)
                if retried or wait > self.max_wait:
                    raise
                retried = True

    async def _space(self, key: str, chat_id: object) -> None:
        """Wait for this chat's turn (raising Throttled when that is beyond ``max_wait``), then
        for a global slot."""
        if self.shared is not None and await self._shared_space(key, chat_id):
            return
        now = self.clock()
        chat = self._chats.setdefault(key, Bucket(CHAT_PER_SECOND, 1.0, CHAT_BURST))
        group = self._groups.setdefault(key, Bucket(GROUP_PER_MINUTE, 60.0, GROUP_PER_MINUTE)) \
            if _is_group(chat_id) else None
        start = max(self.parked_until(key), now + chat.wait(now), now + (group.wait(now) if group else 0.0))
        if start - now > self.max_wait:
            raise Throttled(start - now, chat_id)
        # Reserved before sleeping, so that the chat's next request queues behind this one.
        chat.take(start)
        if group is not None:
            group.take(start)
        if start > now:
            await self.sleep(start - now)
        mark = _bulk.get()
        await self._global_slot(mark is not None)
        if mark is not None:
            mark.on_its_way()

    async def _shared_space(self, key: str, chat_id: object) -> bool:
        """``_space`` through the shared budget; False when the database cannot be used now."""
        assert self.shared is not None
        parked = self.parked_until(key) - self.clock()
        if parked > self.max_wait:
            raise Throttled(parked, chat_id)
        room = self.max_wait - max(parked, 0.0)
        wait = await self.shared.reserve(self.shared.chat_scopes(key, _is_group(chat_id)), room)
        if wait is None:
            return False
        if wait > room:
            raise Throttled(wait, chat_id)
        wait = max(wait, parked)
        if wait > 0:
            await self.sleep(wait)
        mark = _bulk.get()
        await self._global_slot(mark is not None)
        if mark is not None:
            mark.on_its_way()
        return True

    async def _shared_global(self, bulk: bool) -> bool | None:
        """One try at a global slot in the shared budget: True when taken (its wait slept), False
        when a bulk message must try again (it waited meanwhile), None when the database cannot be
        used now.  A reply reserves the next slot whatever its wait; a bulk message only one it can
        take at once, so it is never scheduled ahead of a reply another process reserves next."""
        assert self.shared is not None
        wait = await self.shared.reserve(self.shared.global_scopes(bulk), 0.0 if bulk else float("inf"))
        if wait is None:
            return None
        if wait > 0:
            await self.sleep(wait)
        return not bulk or wait <= 0

    async def _global_slot(self, bulk: bool) -> None:
        """Wait for a slot of the 30 a second in all: replies first come first served, bulk
        messages in their order once no reply is waiting (see the module docstring)."""
        queue = self._waiting[bulk]
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        queue.append(turn)
        try:
            if queue[0] is not turn:
                await turn                  # the one ahead hands the head of the queue on
            while True:
                if bulk and self._waiting[False]:
                    if self._replies_gone is None or self._replies_gone.done():
                        self._replies_gone = asyncio.get_running_loop().create_future()
                    await self._replies_gone
                    continue
                if self.shared is not None:
                    taken = await self._shared_global(bulk)
                    if taken:
                        return
                    if taken is False:
                        continue
                now = self.clock()
                wait = self._global.wait(now, bulk)
                if wait <= 0:
                    self._global.take(now, bulk)
                    return
                await self.sleep(wait)
        finally:
            head = queue[0] is turn
            queue.remove(turn)
            if head and queue and not queue[0].done():
                queue[0].set_result(None)
            if not bulk and not queue and self._replies_gone is not None and not self._replies_gone.done():
                self._replies_gone.set_result(None)
