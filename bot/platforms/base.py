"""What every chat adapter shares, written once: Telegram and Discord keep only their platform.

- Service calls run in a worker thread (``call``): the service does SQLite and Pillow work, and
  the event loop must keep answering the platform meanwhile.
- One chat at a time and in order (``chat_lock``): a chat's replies and the messages the service
  sends on its own never interleave, and a chat held back by rate limits holds back no other.
- One way to turn a ``Reply`` into messages (``pieces``): the text split at line ends, the board,
  the capture GIF and any file, the buttons on the message that shows the board.
- The memory of which message shows which board (``remember``): replies to a board find its game.
- The outbox: one delivery task per adapter does the timed work that fell due, claims the
  pending messages (with a lease, so that another process on the same database does not send
  them too; see bot/service/outbox.py) and hands every one to its chat's worker (one task per
  chat, in order, so a chat held back by flood control holds back no other; it has each row
  worded and drawn in the outbox's drawing threads, the next one while it sends this one, so
  neither the loop nor another chat waits for a picture), which marks it sent, or reports the
  failure as transient (the service tries again later, when the platform said or with
  backoff), refused (the platform will never take this message: dropped) or
  permanent (the chat is gone; the service drops the message and stops posting there).  It
  sleeps until the service's next timer or until the service says it wrote a message.
- A reply of several messages remembers how many are out (``Progress``, kept in the outbox row):
  a retry resumes from the one that failed and never posts one twice.  Before each message the
  worker renews its claim; a process that dies between sending a message and marking it sent
  leaves that one message to be sent again by the next (at least once, not exactly once).  An optional part the
  platform refuses (the capture GIF, a PDN) is left out instead of holding back the rest.
- A token the platform refuses is one log line and exit status 1, never a traceback quoting it;
  a network error or a 5xx at start is retried with backoff (``run_until_stopped``).
- A database deleted, replaced or damaged under the running bot stops it with one line and
  exit status 1 (checked on every delivery round, and a full integrity check once a day); a full
  disk is waited out, and so is a database server that went away (the store logs it; the rounds
  look again every OUTAGE_RETRY_SECONDS, so what fell due meanwhile goes out soon after its return).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import logging
import re
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar

from bot.service import (
    Button,
    GameService,
    Mention,
    Reply,
    StorageDamaged,
    StorageFull,
    StorageGone,
    StorageUnavailable,
    mention_at,
)
from bot.service.outbox import Claimed

if TYPE_CHECKING:
    from bot.platforms.web import WebServer

log = logging.getLogger(__name__)

PERMANENT = "permanent"          # the chat will take nothing from us (gone, bot removed)
REFUSED = "refused"              # this message will never be taken as it is (a deterministic 400)
TRANSIENT = "transient"          # worth another try later (flood control, 5xx, network)
# The longest sleep of the delivery task: a missed wake-up (a timer another process set) costs at
# most this long.  Also the heartbeat's pace: run_due writes the heartbeat that start-up reads to
# tell how long the bot was down (the service writes it at most every 30 s).
MAX_IDLE_SECONDS = 30.0
# After a round that failed as a whole (the database locked, say), the next one waits this long.
ROUND_RETRY_SECONDS = 5.0
# While the database server is away, the next round looks again this soon (a probe costs the store
# one refused connection; it tries at most every 0.5 s itself).
OUTAGE_RETRY_SECONDS = 1.0
# Work still due right after a round that did it all is work the service cannot do (a damaged
# game): the next looks back off from this, doubling, so the task does not spin.
STUCK_FIRST_SECONDS = 0.05
# How long stopping waits for the message being sent.
STOP_TIMEOUT_SECONDS = 10.0
OUTBOX_BATCH = 50
# How often a running bot checks its whole database (start-up checks it too).
INTEGRITY_CHECK_SECONDS = 24 * 3600.0
# Start-up against a platform that cannot be reached (a network error, a 5xx): waits of
# START_FIRST_RETRY s doubling up to START_MAX_RETRY s, at most START_ATTEMPTS attempts in all.
START_FIRST_RETRY = 1.0
START_MAX_RETRY = 60.0
START_ATTEMPTS = 10
# A run that lasted this long was a start that worked: a later failure starts the count afresh.
START_SETTLED_SECONDS = 120.0
# While some chat's worker is busy, the delivery task looks at the timers at least this often
# (the rows that worker holds are due, so the service's next timer says "now").
BUSY_LOOK_SECONDS = 0.5


def utf16_units(text: str) -> int:
    """A text's length as Telegram counts it for its limits: UTF-16 code units (an emoji is two)."""
    return len(text.encode("utf-16-le")) // 2


def _prefix_within(text: str, limit: int, measure: Callable[[str], int]) -> int:
    """How many characters of ``text`` from its start measure at most ``limit`` (at least one, so
    that a split always moves on)."""
    if measure is len:
        return max(1, min(limit, len(text)))
    low, high = 1, len(text)            # a measure grows with the prefix: the longest that fits
    while low < high:
        middle = (low + high + 1) // 2
        if measure(text[:middle]) <= limit:
            low = middle
        else:
            high = middle - 1
    return low


def split_text(text: str, limit: int, measure: Callable[[str], int] = len) -> list[str]:
    """The text in pieces each of at most ``limit`` by ``measure`` (characters, unless the platform
    counts otherwise: Telegram counts UTF-16 code units), cut at line ends where possible (else at
    the last space that fits, else anywhere, never inside a character).  Never an empty list."""
    text = text or ""
    if measure(text) <= limit:
        return [text]
    chunks: list[str] = []
    current = ""
    used = 0
    for line in text.splitlines(keepends=True):
        size = measure(line)
        while size > limit:
            if current:
                chunks.append(current)
                current, used = "", 0
            room = _prefix_within(line, limit, measure)
            cut = line.rfind(" ", 0, room)
            cut = cut + 1 if cut > 0 else room
            chunks.append(line[:cut])
            line = line[cut:]
            size = measure(line)
        if used + size > limit:
            chunks.append(current)
            current, used = "", 0
        current += line
        used += size
    if current:
        chunks.append(current)
    # A piece of only line ends would be refused as empty: a zero-width space stands in.
    return [c.rstrip("\n") or "\u200b" for c in chunks]


@dataclass(frozen=True)
class Piece:
    """One platform message of a reply: text (a caption when it carries a file), files, buttons."""

    text: str
    image: bytes | None = None
    animation: bytes | None = None
    document: tuple[str, bytes] | None = None
    buttons: list[list[Button]] = field(default_factory=list)
    board: bool = False           # the message to remember as the reply's game board (or puzzle)
    spoiler: str | None = None    # hidden text after ``text`` (each platform marks it its own way)
    mentions: tuple[Mention, ...] = ()    # users this message pings (each named in ``text``)
    alt: str | None = None        # the picture in words (``Reply.alt``), on the message that carries it

    @property
    def has_file(self) -> bool:
        return self.image is not None or self.animation is not None or self.document is not None


def pieces(reply: Reply, *, text_limit: int, caption_limit: int, files_together: bool,
           measure: Callable[[str], int] = len) -> list[Piece]:
    """The messages one reply takes, in order.

    The text is split at line ends; all but the last chunk go first as plain messages.  The last
    chunk travels with the first file (the board) as its caption when it fits, else on its own
    just before it; the buttons go on that message, which is the one remembered as the board.  A
    platform that takes several files in one message (``files_together``) gets them all there;
    otherwise each further file (the capture GIF, a PDN) is its own message after it.  Lengths are
    taken by ``measure``, the platform's way of counting against its limits."""
    chunks = split_text(reply.text, text_limit, measure)
    board = (reply.game_id is not None or reply.post_id is not None or reply.challenge_id is not None
             or reply.record is not None)
    if reply.spoiler:
        # The hidden part goes with the last text message (never in a caption: no platform marks it there).
        out = pieces(replace(reply, spoiler=None), text_limit=text_limit, caption_limit=caption_limit,
                     files_together=files_together, measure=measure)
        spoiler = reply.spoiler
        if measure(spoiler) > text_limit // 2:
            spoiler = spoiler[:_prefix_within(spoiler, text_limit // 2, measure)]
        tail = out[-1]
        if not tail.has_file and measure(tail.text) + measure(spoiler) + 1 <= text_limit:
            return [*out[:-1], replace(tail, spoiler=spoiler)]
        return [*out, Piece("", spoiler=spoiler)]
    files: list[dict[str, Any]] = []
    if reply.image is not None:
        files.append({"image": reply.image, "alt": reply.alt})
    if reply.animation is not None:
        files.append({"animation": reply.animation})
    if reply.document is not None:
        files.append({"document": reply.document})
    msgs = [Piece(chunk) for chunk in chunks[:-1]]
    last = chunks[-1]
    if not files:
        return [*msgs, Piece(last, buttons=reply.buttons, board=board)]
    if measure(last) > caption_limit:
        msgs.append(Piece(last))
        last = ""
    if files_together:
        together: dict[str, Any] = {k: v for f in files for k, v in f.items()}
        return [*msgs, Piece(last, buttons=reply.buttons, board=board, **together)]
    msgs.append(Piece(last, buttons=reply.buttons, board=board, **files[0]))
    msgs.extend(Piece("", **f) for f in files[1:])
    return msgs


def with_mentions(out: list[Piece], mentions: Iterable[Mention]) -> list[Piece]:
    """Each mention on the first message whose text names it (one ping per user and reply)."""
    out = list(out)
    for mention in mentions:
        for index, piece in enumerate(out):
            if mention_at(piece.text, mention.name) is not None:
                out[index] = replace(piece, mentions=(*piece.mentions, mention))
                break
    return out


@dataclass
class Progress:
    """How many messages of one reply are out; an outbox reply (``item_id``) keeps it in its row."""

    delivered: int = 0
    item_id: int | None = None


@dataclass
class DeliveryStats:
    """What the delivery task did, for logs and tests."""

    rounds: int = 0
    sent: int = 0
    failed: int = 0
    dropped: int = 0


class ChatAdapter:
    """The part of an adapter every platform shares; subclasses send one ``Piece`` their way and
    say which failures are permanent."""

    platform: ClassVar[str]
    text_limit: ClassVar[int]
    caption_limit: ClassVar[int]
    files_together: ClassVar[bool] = False
    # Timed work already overdue when delivery starts waits this long (see TelegramAdapter).
    startup_grace: ClassVar[float] = 0.0

    def __init__(self, service: GameService,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep) -> None:
        self.service = service
        self.sleep = sleep        # how retries inside one send wait (tests pass one that does not)
        self._chat_locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._wake: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._workers: dict[str, asyncio.Task[int]] = {}
        self._listening = False
        self._stopping = False
        self.delivery = DeliveryStats()
        # Why the bot had to stop (its database gone or damaged), once it did; the run then exits 1.
        self.fatal: str | None = None
        # The web board this adapter serves in its loop (docs/web.md), while it runs.
        self.web_server: WebServer | None = None
        self._verified_at = time.monotonic()
        self._worker_failure: BaseException | None = None
        # Outbox rows whose messages went out while the database could not record it (a full
        # disk): how many of each reply are out, or None when all of it is and only the mark is
        # missing.  Kept in memory so a retry never sends again what the chat already has.
        self._unrecorded: dict[int, int | None] = {}

    async def stop_web(self) -> None:
        """Stop the web board, if this adapter serves one, and take its links off the chat."""
        server, self.web_server = self.web_server, None
        if server is None:
            return
        self.service.chat.serve_web(None)
        await server.stop()

    # -- the service, off the event loop -----------------------------------------------------------

    async def call(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run a service call in a worker thread (storage serializes its own connection)."""
        return await asyncio.to_thread(func, *args, **kwargs)

    def chat_lock(self, chat_id: str | int) -> asyncio.Lock:
        """The lock that keeps one chat's messages in order."""
        return self._chat_locks[str(chat_id)]

    async def remember(self, chat_id: str | int, message_id: str | int, game_id: int | None,
                       post_id: int | None = None, challenge_id: int | None = None, record: str | None = None) -> None:
        """Note which message shows a game's board, a puzzle, a challenge or the chat's record; a
        failure loses only replies to it (or the update of a challenge's buttons, or of the record's)."""
        if game_id is None and post_id is None and challenge_id is None and record is None:
            return
        try:
            await self.call(self.service.remember_board, self.platform, str(chat_id), str(message_id), game_id,
                            post_id, challenge_id=challenge_id, record=record)
        except Exception:
            log.exception("could not remember %s board message %s of game %s", self.platform, message_id, game_id)

    # -- delivery ------------------------------------------------------------------------------------

    def text_length(self, text: str) -> int:
        """A text's length as the platform counts it against ``text_limit`` and ``caption_limit``."""
        return len(text)

    def pieces(self, reply: Reply) -> list[Piece]:
        out = pieces(reply, text_limit=self.text_limit, caption_limit=self.caption_limit,
                     files_together=self.files_together, measure=self.text_length)
        return with_mentions(out, reply.mentions)

    async def send_piece(self, chat_id: str, piece: Piece, *, reply_to: str | None = None) -> str | None:
        """Send one message to a chat (retrying transient failures as the platform allows);
        the new message's id.  Raises what the platform raised when it could not."""
        raise NotImplementedError

    async def deliver(self, chat_id: str, reply: Reply, *, reply_to: str | None = None,
                      progress: Progress | None = None) -> None:
        """The messages of a reply not yet out (``progress``), in order; the board message is
        remembered as soon as it is out, so that it is known even if a later piece fails.  A piece
        the platform refuses for good goes to ``instead_of``.  Raises the first failure, with
        ``progress`` saying how far the reply got.  A reply that takes the place of an earlier
        message (``edit_of``) edits that one instead.  The chat's record message (``record``) is
        the one known now, read here rather than when the row was written: two records queued
        before the first post went out make one message, posted then edited; one that is gone
        (deleted) is posted anew, and the new one remembered."""
        progress = progress if progress is not None else Progress()
        if reply.edit_of is not None:
            await self.edit_message(chat_id, reply.edit_of, reply)
            progress.delivered = 1
            return
        if reply.record is not None and not progress.delivered:
            shown = await self.call(self.service.record_message, self.platform, chat_id, reply.record)
            if shown is not None and await self.edit_message(chat_id, shown, reply):
                progress.delivered = 1
                return
        todo = self.pieces(reply)
        for index in range(progress.delivered, len(todo)):
            piece = todo[index]
            answer = reply_to if index == 0 else None
            try:
                message_id = await self.send_piece(chat_id, piece, reply_to=answer)
            except Exception as exc:
                if self.failure_kind(exc) != REFUSED:
                    raise
                message_id = await self.instead_of(chat_id, piece, reply, exc, reply_to=answer)
            if piece.board and message_id is not None:
                await self.remember(chat_id, message_id, reply.game_id, reply.post_id, reply.challenge_id,
                                    reply.record)
            progress.delivered = index + 1
            if progress.item_id is not None and index + 1 < len(todo):
                await self.call(self.service.message_progress, progress.item_id, index + 1)

    async def edit_message(self, chat_id: str, message_id: str, reply: Reply) -> bool:
        """Replace the text and buttons of an earlier text message of the bot (a challenge once it
        is closed, the chat's record).  A message that can no longer be edited (deleted, too old)
        is left alone, and False says so: a caller that must show the reply may post it anew;
        True when it shows the reply (or was left as it was for a reason a new message would not
        mend).  Other failures are raised, as for ``send_piece``."""
        raise NotImplementedError

    async def instead_of(self, chat_id: str, piece: Piece, reply: Reply, exc: BaseException, *,
                         reply_to: str | None = None) -> str | None:
        """What goes out when the platform refused a piece for good (``exc``); re-raises ``exc``
        when nothing can stand in.  Here: an optional part (a file after the board, with no text
        or buttons of its own) is left out, so the rest of the reply still goes."""
        if piece.text or piece.buttons or piece.board or piece.image is not None or not piece.has_file:
            raise exc
        log.info("%s chat %s refused an optional part of a reply (%s): left out", self.platform, chat_id,
                 describe_error(exc))
        return None

    def failure_kind(self, exc: BaseException) -> str:
        """PERMANENT when the chat will never take a message (gone, the bot removed or forbidden),
        REFUSED when only this message will never be taken, else TRANSIENT."""
        raise NotImplementedError

    def retry_delay(self, exc: BaseException) -> float | None:
        """How long the platform asked us to wait before trying again (flood control), if it did."""
        return None

    # -- the outbox ------------------------------------------------------------------------------------

    def wake(self) -> None:
        """Make the delivery task look at the outbox and the timers now (thread-safe)."""
        loop, event = self._loop, self._wake
        if loop is None or event is None or loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):       # the loop closed meanwhile
            loop.call_soon_threadsafe(event.set)

    def _on_service_change(self, platform: str) -> None:
        # Called by the service from any thread after it committed outbox rows or moved a timer.
        if platform == self.platform:
            self.wake()

    def start_delivery(self) -> None:
        """Start the delivery task in the running loop (once; idempotent)."""
        if self._task is not None and not self._task.done():
            return
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        if not self._listening:
            self.service.add_listener(self._on_service_change)
            self._listening = True
        self._task = asyncio.create_task(self._delivery_loop(), name=f"{self.platform}-delivery")

    async def stop_delivery(self, timeout: float = STOP_TIMEOUT_SECONDS) -> None:
        """Stop the delivery task after the message it is sending (so a message out is also marked
        sent); after ``timeout`` it is cancelled, and a message sent but not yet marked goes out
        again after the restart: better twice than never."""
        task, self._task = self._task, None
        if task is None:
            return
        self._stopping = True
        self.wake()
        try:
            tasks = [task, *self._workers.values()]
            _, late = await asyncio.wait([asyncio.shield(t) for t in tasks], timeout=timeout)
            if late:
                for waiting in tasks:
                    waiting.cancel()
                for waiting in tasks:
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await waiting
        finally:
            self._stopping = False
        # The rows this process claimed and did not send go to whoever delivers next (a restart of
        # this one, another process) without waiting for the claims to run out.
        try:
            await self.call(self.service.release_messages)
        except Exception as err:
            log.warning("%s outbox claims not given up (they run out by themselves): %s", self.platform, err)

    def stop_platform(self) -> None:
        """Make the platform's run return (each adapter its own way); called from the loop."""

    def _stop_fatally(self, reason: str) -> None:
        self.fatal = reason
        log.critical("%s; the %s bot stops", reason, self.platform)
        self.stop_platform()

    async def _check_storage(self) -> None:
        """StorageGone/StorageDamaged when the database can no longer be trusted."""
        await self.call(self.service.check_storage)
        if time.monotonic() - self._verified_at >= INTEGRITY_CHECK_SECONDS:
            await self.call(self.service.verify_storage)
            self._verified_at = time.monotonic()

    @property
    def delivering(self) -> bool:
        return self._task is not None and not self._task.done()

    async def _delivery_loop(self) -> None:
        assert self._wake is not None
        hold_until = None
        stuck = 0
        if self.startup_grace > 0:
            with contextlib.suppress(Exception):
                now = await self.call(self.service.clock)
                due = await self.call(self.service.next_wakeup, self.platform)
                if due is not None and due <= now:
                    hold_until = now + self.startup_grace
        while not self._stopping:
            # Cleared before the round: a row written while the round runs wakes the next one.
            self._wake.clear()
            try:
                failure, self._worker_failure = self._worker_failure, None
                if failure is not None:
                    raise failure
                await self._check_storage()
                held = hold_until is not None and await self.call(self.service.clock) < hold_until
                await self.delivery_round(timers=not held, wait=False)
                if held:
                    timeout = max(hold_until - await self.call(self.service.clock), 0.0)
                    if self._workers:
                        timeout = min(timeout, BUSY_LOOK_SECONDS)
                else:
                    hold_until = None
                    timeout = await self.call(self._idle_seconds)
                    if self._workers:
                        # A worker's rows are due, so "now" says nothing; its end wakes the task.
                        timeout = min(max(timeout, BUSY_LOOK_SECONDS), BUSY_LOOK_SECONDS)
                        stuck = 0
                    elif timeout <= 0:
                        # (A message written meanwhile still wakes the task at once.)
                        timeout = min(STUCK_FIRST_SECONDS * 2 ** stuck, MAX_IDLE_SECONDS)
                        stuck += 1
                    else:
                        stuck = 0
            except asyncio.CancelledError:
                raise
            except (StorageGone, StorageDamaged) as err:
                self._stop_fatally(str(err))
                return
            except StorageUnavailable:
                # The store logs the outage (when it starts, then once a minute), not every round.
                timeout = OUTAGE_RETRY_SECONDS
            except StorageFull:
                # The store logs the full disk once a minute; the round is tried again until there is room.
                timeout = ROUND_RETRY_SECONDS
            except Exception:
                log.exception("%s delivery round failed; trying again in %.0f s", self.platform, ROUND_RETRY_SECONDS)
                timeout = ROUND_RETRY_SECONDS
            # A stop asked for during the round: its wake-up may have been cleared with the
            # round's own (delivery_round), so the flag is looked at before sleeping.
            if timeout > 0 and not self._stopping:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout)

    def _idle_seconds(self) -> float:
        """How long the delivery task may sleep: until the service's next timer, at most a minute."""
        due = self.service.next_wakeup(self.platform)
        if due is None:
            return MAX_IDLE_SECONDS
        return min(max(due - self.service.clock(), 0.0), MAX_IDLE_SECONDS)

    async def delivery_round(self, timers: bool = True, wait: bool = True) -> int:
        """Do the timed work that fell due (unless ``timers`` is false), then hand what is pending
        to the chats' workers (a chat whose worker is still busy is left to it); with ``wait``,
        wait for them and say how many messages were sent (else 0)."""
        self.delivery.rounds += 1
        if timers:
            await self.call(self.service.run_due, self.platform)
            # run_due's own wake-up is answered by this very round; one for a change made since
            # is too: everything committed before this point is read below (pending, next timer).
            if self._wake is not None:
                self._wake.clear()
        sent = 0
        while True:
            busy = sorted(chat for chat, task in self._workers.items() if not task.done())
            # Claimed, not drawn: each chat's worker has its rows drawn beside the loop (_drawing).
            items = await self.call(self.service.outbox.claim, self.platform, OUTBOX_BATCH, busy)
            if not items:
                return sent
            # Every row of a batch is settled (sent, put back for later, or dropped) before its
            # chat's worker ends, and that chat is left out meanwhile, so the next batch holds only
            # rows not seen yet.
            workers = self._start_workers(items)
            if wait:
                sent += sum(await asyncio.gather(*workers))
            if len(items) < OUTBOX_BATCH:
                return sent

    def _start_workers(self, items: Iterable[Any]) -> list[asyncio.Task[int]]:
        """One worker task per chat for its rows of a batch, in order."""
        by_chat: dict[str, list[Any]] = {}
        for item in items:
            by_chat.setdefault(str(item.chat_id), []).append(item)
        started = []
        for chat_id, queue in by_chat.items():
            task = asyncio.create_task(self._deliver_chat(chat_id, queue), name=f"{self.platform}-chat-{chat_id}")
            self._workers[chat_id] = task
            task.add_done_callback(functools.partial(self._worker_done, chat_id))
            started.append(task)
        return started

    def _worker_done(self, chat_id: str, task: asyncio.Task[int]) -> None:
        if self._workers.get(chat_id) is task:
            del self._workers[chat_id]
        failure = None if task.cancelled() else task.exception()
        if isinstance(failure, (StorageGone, StorageDamaged, StorageFull, StorageUnavailable)):
            # The delivery task deals with these as with its own: the bot stops, or waits for room
            # or for the database server.
            self._worker_failure = failure
        elif failure is not None:
            log.error("%s delivery to chat %s failed", self.platform, chat_id, exc_info=failure)
        # The chat's rows that came due meanwhile were left out of the rounds: look again.
        if self._wake is not None:
            self._wake.set()

    def _drawing(self, item: Any) -> concurrent.futures.Future[Any]:
        """A claimed row being worded and drawn in the outbox's drawing threads (None when it
        cannot be read: the outbox dropped it); a row drawn already is itself."""
        if isinstance(item, Claimed):
            return self.service.outbox.drawing(item)
        done: concurrent.futures.Future[Any] = concurrent.futures.Future()
        done.set_result(item)
        return done

    async def _deliver_chat(self, chat_id: str, queue: list[Any]) -> int:
        sent = 0
        drawing = self._drawing(queue[0]) if queue else None
        for index, item in enumerate(queue):
            # Drawn off the loop, the chat's next row while this one goes out: the delivery loop
            # never waits for a picture, and a chat waits only for its own (issue 30, item 8).
            assert drawing is not None
            drawn = await asyncio.wrap_future(drawing)
            drawing = self._drawing(queue[index + 1]) if index + 1 < len(queue) else None
            if drawn is None:
                continue
            item = drawn
            # The lock is taken per message: a user's command in this chat waits for one message,
            # not for the whole queue of a chat held back by flood control.
            async with self.chat_lock(chat_id):
                # The claim on this row (and the chat's next ones) renewed before it goes out: a
                # row whose claim ran out while the chat waited, and that another process took
                # meanwhile, is that process's to send now (so are the rest of the chat's).
                held = await self.call(self.service.renew_messages, [later.id for later in queue[index:]])
                if item.id not in held:
                    log.info("%s message %s to chat %s is being sent by another process", self.platform, item.id,
                             chat_id)
                    return sent
                if item.id in self._unrecorded and self._unrecorded[item.id] is None:
                    # Out already; only the mark failed (a full disk): record it, send nothing.
                    await self.call(self.service.message_sent, item.id)
                    del self._unrecorded[item.id]
                    continue
                progress = Progress(max(getattr(item, "delivered", 0), self._unrecorded.pop(item.id, 0) or 0),
                                    item.id)
                try:
                    await self.deliver(chat_id, item.reply, progress=progress)
                except asyncio.CancelledError:
                    raise
                except (StorageFull, StorageUnavailable):
                    if progress.delivered:
                        self._unrecorded[item.id] = progress.delivered
                    raise
                except Exception as exc:
                    kind = self.failure_kind(exc)
                    wait = self.retry_delay(exc) if kind == TRANSIENT else None
                    try:
                        await self._report_failure(item, exc, kind, wait)
                    except (StorageFull, StorageUnavailable):
                        if progress.delivered:
                            self._unrecorded[item.id] = progress.delivered
                        raise
                    if kind == TRANSIENT:
                        # The chat's later messages wait with it, so none overtakes it: each is
                        # put back with the same wait (they are due again together, in order).
                        for later in queue[index + 1:]:
                            await self.call(self.service.message_failed, later.id,
                                            f"waiting for message {item.id}", permanent=False, retry_in=wait)
                        return sent
                    continue
                try:
                    await self.call(self.service.message_sent, item.id)
                except (StorageFull, StorageUnavailable):
                    self._unrecorded[item.id] = None
                    raise
            sent += 1
            self.delivery.sent += 1
        return sent

    async def _report_failure(self, item: Any, exc: BaseException, kind: str, wait: float | None = None) -> None:
        error = describe_error(exc)
        if kind == PERMANENT:
            self.delivery.dropped += 1
            log.warning("%s chat %s will not take message %s (%s): dropped", self.platform, item.chat_id,
                        item.id, error)
        elif kind == REFUSED:
            self.delivery.dropped += 1
            log.warning("%s chat %s refused message %s for good (%s): dropped", self.platform, item.chat_id,
                        item.id, error)
        else:
            self.delivery.failed += 1
            log.warning("%s message %s to chat %s not delivered (%s); it will be tried again%s", self.platform,
                        item.id, item.chat_id, error, f" in {wait:.0f} s" if wait is not None else "")
        await self.call(self.service.message_failed, item.id, error, permanent=kind != TRANSIENT,
                        chat_gone=kind == PERMANENT, retry_in=wait)


def describe_error(exc: BaseException) -> str:
    """A failure in a log line and the outbox: its type and message, never longer than a line.
    (Platform errors carry no token: URLs are not part of their messages.)"""
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}"[:300] if text else type(exc).__name__


def run_until_stopped(run: Callable[[], object], *, refused: type[BaseException] | tuple[type[BaseException], ...],
                      platform: str, variable: str, where: str,
                      transient: Callable[[BaseException], bool] | None = None,
                      fatal: Callable[[], str | None] | None = None, secret: str = "",
                      sleep: Callable[[float], object] = time.sleep) -> int:
    """Run a bot until it stops (0).  A token the platform refuses is one log line and 1: the
    library's own message may quote the token, so it is not logged.

    A failure ``transient`` says is one (the platform unreachable, a 5xx) runs ``run`` again after
    a backoff, one log line per attempt; after START_ATTEMPTS it is one line and 1.  ``fatal``
    says why the bot stopped on its own (its database gone), already logged: then 1."""
    attempt = 0
    while True:
        started = time.monotonic()
        try:
            run()
        except refused:
            log.error("%s refused %s; check it %s", platform, variable, where)
            return 1
        except KeyboardInterrupt:
            return 0
        except Exception as exc:
            if transient is None or not transient(exc):
                raise
            if time.monotonic() - started >= START_SETTLED_SECONDS:
                attempt = 0
            attempt += 1
            error = _without(describe_error(exc), secret)
            if attempt >= START_ATTEMPTS:
                log.error("%s could not be reached in %d attempts (%s); giving up", platform, attempt, error)
                return 1
            delay = min(START_FIRST_RETRY * 2 ** (attempt - 1), START_MAX_RETRY)
            log.warning("%s could not be reached (%s); trying again in %.0f s (attempt %d of %d)", platform, error,
                        delay, attempt + 1, START_ATTEMPTS)
            sleep(delay)
            continue
        return 1 if fatal is not None and fatal() else 0


def _without(text: str, secret: str) -> str:
    """``text`` with ``secret`` blanked out, in any case (error texts are not trusted to omit it)."""
    return re.sub(re.escape(secret), "[redacted]", text, flags=re.IGNORECASE) if secret else text
