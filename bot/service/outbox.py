"""The outbox: what the service says on its own (a bot's move, a time-out, a reminder, the daily
puzzle), written in the transaction of the change that caused it and delivered by the platform's
adapter.

A row is a typed notification (``bot.service.notifications``: what happened, in which game, in
which language), turned into its message when it is delivered by the presenter given as
``present`` (``bot.service.chat.present_notices``).  A row written as a finished reply (by the bot
before notifications, a kind not yet a notification, or a direct answer the adapter handed
over) holds its texts, buttons, mentions and ids, and for every picture or file
a render spec (the board as it stood, the capture GIF of a move; ``bot.service.chat.boards``) that is
drawn when the row is delivered by the ``renderer`` it is given (the chat layer's: the outbox, which
the use cases write to, knows nothing of it), outside any transaction (a few hundred bytes instead of ~22 KB of
base64).  A picture that has no spec (a rating chart, an analysis) is still stored as its bytes.

Delivery, with several processes on one database:

- ``pending`` claims the due rows for this process (its ``owner`` id) with a lease of
  ``lease_seconds``, in one write transaction: another process never gets a claimed row (nor the
  rest of its chat, which keeps a chat's messages in order) until that lease has run out.  A
  process that crashed leaves its rows to the others once their leases end (at once when it ran
  on the same machine: its pid is gone, see ``free_dead_claims``).
- Drawing a row (wording it and drawing its pictures, ~10-40 ms) is the slow part of delivering
  it, so it is kept off the delivery loop: ``claim`` claims rows without drawing them, and
  ``drawing`` draws one in a small pool of threads (``DRAW_THREADS``; Pillow lets go of the GIL
  while it encodes), so the adapter sends a chat's row while the next is drawn, and one chat's
  slow drawing holds back no other chat.  ``pending`` is ``claim`` then every row drawn, in
  parallel, handed over in order (callers without a delivery loop).  A picture is the state the
  row holds (its notification, its spec), whenever it is drawn; drawn pictures are kept by what
  they show (``bot.service.chat.boards``).
- ``hold`` extends the lease of rows still queued (the adapter calls it before each message, so
  a chat held back by flood control keeps its rows) and says which are still ours.
- ``sent``, ``progress`` and ``failed`` act only on this owner's rows.  ``progress`` keeps how many
  platform messages of a reply are out: a retry resumes from the part that failed.
- At most once is not promised: a process that sent a message and died (or lost its lease)
  before marking it sent leaves it to be sent again, once, by whoever claims it next.  Better
  twice than never.
- Sent and dropped rows older than ``retention`` are deleted, a small batch at a time, from the
  delivery rounds (at most once per ``PRUNE_EVERY`` seconds).
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from bot.service import notifications
from bot.service.events import OutboxItem, Outgoing, Reply, SpecRenderer
from bot.service.notifications import Notification
from bot.storage import StorageBusy, StorageError, StorageFull, Store, in_transaction
from bot.storage.records import OutboxRecord

log = logging.getLogger("bot.service")

# Retries: 5 s, 10 s, 20 s ... up to 15 min between tries; dropped after about a day.
OUTBOX_FIRST_RETRY = 5.0
OUTBOX_MAX_RETRY = 900.0
OUTBOX_MAX_ATTEMPTS = 100
# How long a claim holds: longer than one message can take to go out (flood control included),
# since a message is only sure to be sent once while its claim holds.  The adapter renews it
# before each message.
LEASE_SECONDS = 300.0
# Sent and dropped rows are kept this long (for the operator's look), then deleted.
RETENTION_SECONDS = 7 * 24 * 3600.0
PRUNE_EVERY = 60.0
PRUNE_BATCH = 500
# Threads that draw claimed rows beside the delivery loop, shared by a process's outboxes: two
# keep two cores busy (a PNG's encoding, most of a drawing, runs without the GIL); more would only
# queue for the CPU, and the delivery loop's own storage calls need it too.
DRAW_THREADS = 2

_draw_pool: ThreadPoolExecutor | None = None
_draw_pool_lock = threading.Lock()


def draw_pool() -> ThreadPoolExecutor:
    """The process's pool of drawing threads (made on first use)."""
    global _draw_pool
    with _draw_pool_lock:
        if _draw_pool is None:
            _draw_pool = ThreadPoolExecutor(DRAW_THREADS, thread_name_prefix="outbox-draw")
        return _draw_pool


@dataclass(frozen=True)
class Claimed:
    """An outbox row claimed for delivery, not drawn yet (``Outbox.draw`` makes it the
    ``OutboxItem`` it is sent as): what a delivery loop needs to group and order it."""

    id: int
    platform: str
    chat_id: str
    attempts: int
    delivered: int = 0
    kind: str = ""
    payload: str = field(default="", repr=False)


def process_owner() -> str:
    """This process's owner id for claims: host and pid (a process started again gets a new one;
    a restarted service in the same process keeps its claims)."""
    return f"{socket.gethostname()}:{os.getpid()}"


# How often (seconds of this process's running time) the claims of processes that died on this
# machine are looked for.
DEAD_OWNERS_EVERY = 10.0


def owner_is_dead(owner: str) -> bool:
    """Whether a claim's owner is a process of this machine that no longer runs (killed, crashed):
    its rows need not wait for their lease to run out.  False whenever that cannot be known for
    sure: another machine, this process, a process of another user, a system without POSIX
    signals (on Windows signal 0 would not ask, it would kill)."""
    host, _, pid = owner.rpartition(":")
    if os.name != "posix" or host != socket.gethostname() or not pid.isdigit() or int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False            # alive, but another user's
    return False


class Outbox:
    """The service's outbox (see the module's docstring): the writing side (``say``,
    ``queue_reply``) and the delivery side (``pending``, ``hold``, ``progress``, ``sent``,
    ``failed``, ``release``, ``drain``)."""

    def __init__(self, storage: Store, clock: Callable[[], float], *, owner: str | None = None,
                 lease_seconds: float = LEASE_SECONDS, retention: float = RETENTION_SECONDS,
                 renderer: SpecRenderer | None = None,
                 present: Callable[[Notification], Reply] | None = None) -> None:
        self.storage = storage
        self.present = present
        self.clock = clock
        self.owner = owner or process_owner()
        self.lease_seconds = lease_seconds
        self.retention = retention
        self.renderer = renderer
        self._pruned_at = float("-inf")
        self._dead_checked_at = float("-inf")

    # -- writing -----------------------------------------------------------------------------------

    def say(self, platform: str, chat_id: str, reply: Reply) -> int:
        """Put a message in the outbox (inside the caller's transaction, so it is written together
        with the change that caused it, or not at all); its id."""
        item = self.storage.outbox.enqueue(platform, chat_id, reply.to_json(), self.clock())
        if self.renderer is not None:
            for picture in (reply.image, reply.animation):
                self.renderer.remember(picture)
        return item

    def notify(self, platform: str, chat_id: str, notice: Notification) -> int:
        """Put a notification in the outbox (inside the caller's transaction); its id.  It is
        worded and drawn when it is delivered."""
        return self.storage.outbox.enqueue(platform, chat_id, notifications.to_json(notice), self.clock())

    def read(self, payload: str) -> Reply:
        """The message a stored row is delivered as: a notification presented now, or a reply
        as it was written."""
        data = json.loads(payload)
        if notifications.is_notice(data):
            if self.present is None:
                raise ValueError("this outbox row holds a notification: deliver it with a presenter")
            return self.present(notifications.from_json(data))
        return Reply.from_json(payload, self.renderer)

    @staticmethod
    def kind(payload: str) -> str:
        """A stored row's notification kind ("daily_posted", "reminder", ...); "" for a reply
        written as it is (the adapter tells a broadcast from a reply to a person by it)."""
        data = json.loads(payload)
        return str(data["notice"]) if notifications.is_notice(data) else ""

    def queue_reply(self, platform: str, chat_id: str, reply: Reply, error: str, *, delivered: int = 0,
                    retry_in: float | None = None) -> int:
        """A direct answer the adapter could not deliver: the outbox takes it over (see
        ``GameService.queue_reply``)."""
        def take_over() -> int:
            item = self.say(platform, chat_id, reply)
            if delivered:
                self.storage.outbox.set_delivered(item, delivered)
            wait = OUTBOX_FIRST_RETRY if retry_in is None else retry_in
            self.storage.outbox.retry_later(item, self.clock() + wait, error)
            return item

        return in_transaction(self.storage, take_over)

    # -- delivering --------------------------------------------------------------------------------

    def pending(self, platform: str, limit: int = 50, exclude: Sequence[str] = ()) -> list[OutboxItem]:
        """Claim the due messages of a platform (none of the chats in ``exclude``) and draw them
        (``DRAW_THREADS`` at a time), oldest first.  A row that cannot be read (damaged) is
        dropped, not handed over."""
        drawings = [self.drawing(row) for row in self.claim(platform, limit, exclude)]
        # Every drawing is waited for before a failure is raised (none left running unseen).
        done = [(future.exception(), future) for future in drawings]
        for failure, _ in done:
            if failure is not None:
                raise failure
        return [item for _, future in done if (item := future.result()) is not None]

    def claim(self, platform: str, limit: int = 50, exclude: Sequence[str] = ()) -> list[Claimed]:
        """Claim the due messages of a platform (none of the chats in ``exclude``), oldest first,
        without drawing them (``draw`` / ``drawing`` does, one row at a time)."""
        now = self.clock()
        self.prune(now)
        if not self.storage.outbox.due(platform, now, 1, exclude):
            # Nothing to claim: a read, which another process's write lock does not hold up.
            return []
        self.free_dead_claims(platform, now)
        rows = self.storage.outbox.claim(platform, self.owner, now, now + self.lease_seconds, limit, exclude)
        claimed = []
        for row in rows:
            try:
                kind = self.kind(row.payload)
            except Exception:               # unreadable: ``draw`` drops it
                kind = ""
            claimed.append(Claimed(row.id, row.platform, row.chat_id, row.attempts, row.delivered, kind,
                                   row.payload))
        return claimed

    def draw(self, row: Claimed) -> OutboxItem | None:
        """A claimed row as the message it is sent as, worded and drawn now; None for a row that
        cannot be read (written by a damaged or newer bot): it is dropped, never handed over.  A
        storage failure meanwhile is raised (the row stays, to be drawn again)."""
        try:
            reply = self.read(row.payload)
        except StorageError:
            raise
        except Exception as err:
            log.error("outbox message %s cannot be read (%s): dropped", row.id, err)
            self.storage.outbox.drop(row.id, f"unreadable: {err}", self.owner)
            return None
        return OutboxItem(row.id, row.platform, row.chat_id, reply, row.attempts, row.delivered, kind=row.kind)

    def drawing(self, row: Claimed) -> Future[OutboxItem | None]:
        """``draw`` started in the pool of drawing threads: its result, when it is done."""
        return draw_pool().submit(self.draw, row)

    def free_dead_claims(self, platform: str, now: float) -> int:
        """Release the claims of processes of this machine that died (a bot killed and started
        again): without this a chat's messages waited for the dead process's lease, up to
        LEASE_SECONDS, after every crash.  A live process's claims, and another machine's, are left
        to their lease.  At most every DEAD_OWNERS_EVERY seconds; how many rows were released."""
        started = time.monotonic()
        if started - self._dead_checked_at < DEAD_OWNERS_EVERY:
            return 0
        self._dead_checked_at = started
        owners = {row.claimed_by for row in self.storage.outbox.find(platform, "pending")
                  if row.claimed_by and row.claimed_by != self.owner and (row.lease_until or 0.0) > now}
        released = 0
        for owner in sorted(owners):
            if owner_is_dead(owner):
                count = self.storage.outbox.release(owner)
                log.info("%d outbox messages claimed by %s, which no longer runs, released", count, owner)
                released += count
        return released

    def hold(self, item_ids: Collection[int]) -> set[int]:
        """Renew the lease of rows this process is about to send; the ids it still holds."""
        return self.storage.outbox.hold(item_ids, self.owner, self.clock() + self.lease_seconds)

    def progress(self, item_id: int, delivered: int) -> None:
        """The first ``delivered`` messages of a reply are out: never sent again (the lease renewed)."""
        self.storage.outbox.set_delivered(item_id, delivered, self.owner, self.clock() + self.lease_seconds)

    def sent(self, item_id: int) -> bool:
        """A message is out: it is never delivered again.  False when it was no longer ours."""
        return self.storage.outbox.mark_sent(item_id, self.clock(), self.owner)

    def failed(self, item_id: int, error: str, *, permanent: bool = False,
               retry_in: float | None = None) -> OutboxRecord | None:
        """A message could not be delivered: tried again later (after ``retry_in``, else backing
        off), or dropped when ``permanent`` or after OUTBOX_MAX_ATTEMPTS.  The row as it was when
        it was dropped (the caller deals with what that means), else None."""
        row = self.storage.outbox.get(item_id)
        if row is None or row.status != "pending" or row.claimed_by not in (None, self.owner):
            return None
        if permanent or row.attempts + 1 >= OUTBOX_MAX_ATTEMPTS:
            self.storage.outbox.drop(item_id, error, row.claimed_by)
            log.warning("message %s to %s chat %s dropped: %s", item_id, row.platform, row.chat_id, error)
            return row
        if retry_in is None:
            retry_in = min(OUTBOX_FIRST_RETRY * 2 ** row.attempts, OUTBOX_MAX_RETRY)
        self.storage.outbox.retry_later(item_id, self.clock() + retry_in, error, row.claimed_by)
        return None

    def release(self) -> int:
        """Give up this process's claims (it stops): the rows go to whoever delivers next."""
        return self.storage.outbox.release(self.owner)

    def drain(self, platform: str | None = None) -> list[Outgoing]:
        """Every due message claimed and counted as delivered at once (a caller without a delivery
        loop: the console, tests)."""
        out: list[Outgoing] = []
        platforms = [platform] if platform is not None else self.storage.outbox.platforms()
        for name in platforms:
            for item in self.pending(name, limit=1000):
                if self.sent(item.id):
                    out.append(Outgoing(item.platform, item.chat_id, item.reply))
        return out

    def prune(self, now: float | None = None) -> int:
        """Delete one batch of sent and dropped rows older than the retention period; how many.
        Once none are left, it looks again PRUNE_EVERY seconds later.  A busy database leaves it
        to the next time."""
        now = self.clock() if now is None else now
        if now - self._pruned_at < PRUNE_EVERY:
            return 0
        try:
            deleted = self.storage.outbox.prune(now - self.retention, PRUNE_BATCH)
        except (StorageBusy, StorageFull) as err:
            log.info("outbox not pruned this time: %s", err)
            return 0
        if deleted < PRUNE_BATCH:
            # All done: the next look is a while later (a full batch looks again next round).
            self._pruned_at = now
        return deleted

    @staticmethod
    def game_of(payload: str) -> int | None:
        """The game a stored message is about (without drawing it)."""
        try:
            game_id = json.loads(payload).get("game_id")
        except (ValueError, AttributeError):
            return None
        return game_id if isinstance(game_id, int) else None


class ServiceOutlet:
    """The use cases' outlet (``bot.service.features.base.Outlet``), built by ``compose``: what
    they say on their own goes to ``outbox`` inside their transaction, and ``wake`` tells every
    listener (the adapters' delivery loops) that a platform has something new.  Its own object,
    not the facade: the use cases then reach no layer above them.  ``outbox`` may be replaced (a
    test's own owner or lease); what is said afterwards goes there."""

    def __init__(self, outbox: Outbox) -> None:
        self.outbox = outbox
        self._listeners: list[Callable[[str], None]] = []

    def notify(self, platform: str, chat_id: str, notice: Notification) -> int:
        return self.outbox.notify(platform, chat_id, notice)

    def add_listener(self, listener: Callable[[str], None]) -> None:
        """``listener(platform)`` is called, from whatever thread made the change, after a change
        the platform's adapter must look at (see ``wake``)."""
        self._listeners.append(listener)

    def wake(self, platform: str) -> None:
        """Tell the listeners of ``platform`` to look again; one that fails is logged and the
        others are still told."""
        for listener in list(self._listeners):
            try:
                listener(platform)
            except Exception:
                log.exception("outbox listener failed")
