"""Telegram's flood limits, kept per chat: a chat held back waits alone, never the whole bot.

PTB's ``AIORateLimiter`` sleeps through every 429 with one event shared by all requests: a flood
wait in one group (Telegram asks for up to hours) halted every chat for its full length, twice.
This limiter spaces messages as Telegram asks (about one a second in a chat, 20 a minute in a
group, 30 a second in all) and, when a chat must wait longer than ``max_wait`` (its own budget
spent, or a 429 Telegram sent for it), raises ``RetryAfter`` at once instead of sleeping: the
caller puts the message in the outbox with that not-before time, and every other chat goes on.

Only requests that post or edit a message in a chat are spaced; the rest (answering a button
press, reading a member) go out at once, so a busy group never delays a button's answer.
"""

from __future__ import annotations

import asyncio
import logging
import time
import warnings
from collections.abc import Awaitable, Callable, Coroutine
from datetime import timedelta
from typing import Any

from telegram.error import RetryAfter
from telegram.ext import BaseRateLimiter
from telegram.warnings import PTBDeprecationWarning

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
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep) -> None:
        self.max_wait = max_wait
        self.clock = clock
        self.sleep = sleep
        self._global = Bucket(GLOBAL_PER_SECOND, 1.0, GLOBAL_PER_SECOND)
        self._groups: dict[str, Bucket] = {}
        self._chats: dict[str, Bucket] = {}
        self._parked: dict[str | None, float] = {}    # chat (None: every chat) -> not before

    async def initialize(self) -> None:
        pass

    async def shutdown(self) -> None:
        pass

    def parked_until(self, chat_id: object) -> float:
        """Until when a chat may not post (flood control Telegram asked for); 0 if it may."""
        return max(self._parked.get(str(chat_id), 0.0), self._parked.get(None, 0.0))

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
                if retried or wait > self.max_wait:
                    raise
                retried = True

    async def _space(self, key: str, chat_id: object) -> None:
        """Wait for this chat's turn (raising Throttled when that is beyond ``max_wait``), then
        for a global slot."""
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
        now = self.clock()
        wait = self._global.wait(now)
        self._global.take(now + wait)
        if wait > 0:
            await self.sleep(wait)
