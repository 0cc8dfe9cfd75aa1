"""The fake Discord's rate limits and gateway sessions, each shown on the wire and with the real
discord.py handling it (issue 29, item 7): a route's bucket (headers, a 429 with retry_after when
it is overdrawn), the bot's 50 requests a second in all (a 429 with global: true), and the gateway's
RESUME after op 7 RECONNECT (the events missed meanwhile are replayed), op 9 INVALID_SESSION (a
fresh IDENTIFY) and a RESUME of a session that is gone.

discord.py's waits are virtual (discord_fake._LibraryAsyncio): a 5 s wait for a bucket moves the
fake's clock by 5 s at once, so the windows are counted on the fake's clock (``Call.clock``)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import discord
import pytest
from discord_fake import (
    API_BASE,
    BUCKETS,
    CHANNEL_ID,
    GLOBAL_LIMIT,
    TOKEN,
    Call,
    FakeDiscord,
    FakeSession,
    Harness,
    install,
)
from fresh_db import fresh_database

from bot.i18n import t
from bot.platforms.discord import DraughtsBot
from bot.service import GameService
from bot.storage import Storage

POSTS = "/channels/{channel_id}/messages"
CHANNEL_BUCKET = BUCKETS[("POST", POSTS)]
WATCHDOG_SECONDS = 30.0


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeDiscord:
    fake = FakeDiscord()
    install(fake, monkeypatch)
    return fake


@pytest.fixture
async def client(fake: FakeDiscord) -> AsyncIterator[discord.Client]:
    """A logged-in discord.py client on the fake (REST only)."""
    client = discord.Client(intents=discord.Intents.none())
    await client.login(TOKEN)
    try:
        yield client
    finally:
        await client.close()


def accepted(fake: FakeDiscord, path: str = POSTS) -> list[Call]:
    return [c for c in fake.calls if c.path == path and c.method == "POST" and c.error is None]


def most_in_a_window(calls: list[Call], seconds: float) -> int:
    """The most of ``calls`` within any ``seconds`` of the fake's clock (a sliding window, as the
    fake counts the global limit)."""
    times = sorted(c.clock for c in calls if c.clock is not None)
    return max((sum(1 for u in times if t <= u < t + seconds) for t in times), default=0)


async def wire_post(session: FakeSession, channel_id: int, content: str) -> Any:
    response = await session.request("POST", f"{API_BASE}/channels/{channel_id}/messages",
                                     data=json.dumps({"content": content})).__aenter__()
    return response


# -- a route's bucket -----------------------------------------------------------------------------------


async def test_every_answer_tells_the_bucket_and_one_request_over_it_is_a_429_with_retry_after(fake: FakeDiscord):
    session = FakeSession(fake)
    answers = [await wire_post(session, CHANNEL_ID, f"m{i}") for i in range(CHANNEL_BUCKET.limit + 1)]
    assert [a.status for a in answers] == [200] * CHANNEL_BUCKET.limit + [429]
    assert [a.headers["X-RateLimit-Remaining"] for a in answers] == ["4", "3", "2", "1", "0", "0"]
    assert {a.headers["X-RateLimit-Bucket"] for a in answers} == {CHANNEL_BUCKET.name}
    assert {a.headers["X-RateLimit-Limit"] for a in answers} == {"5"}
    assert 0 < float(answers[-1].headers["X-RateLimit-Reset-After"]) <= CHANNEL_BUCKET.per
    over = answers[-1]
    body = await over.json()
    assert body["global"] is False and 0 < body["retry_after"] <= CHANNEL_BUCKET.per
    assert over.headers["X-RateLimit-Scope"] == "user" and over.headers["Via"] == "1.1 google"
    assert "X-RateLimit-Global" not in over.headers
    # Another channel has a bucket of its own; the first one's is full again once its window ends.
    assert (await wire_post(session, CHANNEL_ID + 1, "other")).status == 200
    fake.skew += body["retry_after"]
    assert (await wire_post(session, CHANNEL_ID, "later")).status == 200
    assert [(r.path, r.bucket) for r in fake.rate_limited] == [(POSTS, CHANNEL_BUCKET.name)]


async def test_discord_py_keeps_to_a_channels_bucket_and_never_meets_its_429(fake: FakeDiscord,
                                                                          client: discord.Client):
    fake.latency = 0.005                # twelve sends at once are in flight together
    channel = client.get_partial_messageable(CHANNEL_ID)
    await asyncio.gather(*(channel.send(f"message {i}") for i in range(12)))
    posts = accepted(fake)
    assert len(posts) == 12 and fake.rate_limited == []
    # It waited for the bucket's window instead: 5, then 5 once the window was over, then 2.
    clocks = sorted(c.clock for c in posts if c.clock is not None)
    firsts = clocks[::CHANNEL_BUCKET.limit]
    assert all(later - earlier > CHANNEL_BUCKET.per - 0.01 for earlier, later in zip(firsts, firsts[1:], strict=False))
    assert len(fake.slept) == 2 and all(0 < s <= CHANNEL_BUCKET.per for s in fake.slept)


async def test_two_clients_on_one_bucket_overdraw_it_and_discord_py_waits_out_the_429(fake: FakeDiscord):
    """What two processes of one bot do to a channel they both post to: each counts only its own
    requests, Discord counts both.  discord.py sleeps the 429's retry_after and tries again."""
    fake.latency = 0.005                # sends made at once are in flight together
    first, second = (discord.Client(intents=discord.Intents.none()) for _ in range(2))
    try:
        for one in (first, second):
            await one.login(TOKEN)
        await first.get_partial_messageable(CHANNEL_ID).send("a0")        # 4 left, as it was told
        for i in range(3):                                                 # 1 left, which it was not
            await second.get_partial_messageable(CHANNEL_ID).send(f"b{i}")
        assert fake.rate_limited == []
        await asyncio.gather(*(first.get_partial_messageable(CHANNEL_ID).send(f"a{i}") for i in (1, 2)))
    finally:
        for one in (first, second):
            await one.close()
    assert len(accepted(fake)) == 6
    assert [(r.path, r.bucket) for r in fake.rate_limited] == [(POSTS, CHANNEL_BUCKET.name)]
    limited = fake.rate_limited[0]
    assert 0 < limited.retry_after <= CHANNEL_BUCKET.per and limited.retry_after in fake.slept
    assert [c.error for c in fake.calls if c.path == POSTS][-2:] == [429, None]


# -- the global limit -----------------------------------------------------------------------------------


async def test_over_50_requests_a_second_is_a_global_429(fake: FakeDiscord):
    session = FakeSession(fake)
    answers = [await wire_post(session, CHANNEL_ID + i, "x") for i in range(GLOBAL_LIMIT + 1)]
    assert len(fake.limits.recent) == GLOBAL_LIMIT
    assert [a.status for a in answers[:GLOBAL_LIMIT]] == [200] * GLOBAL_LIMIT
    over = answers[-1]
    body = await over.json()
    assert over.status == 429 and body["global"] is True and 0 < body["retry_after"] <= 1.0
    assert over.headers["X-RateLimit-Global"] == "true" and over.headers["X-RateLimit-Scope"] == "global"
    assert fake.rate_limited[-1].bucket is None
    fake.skew += body["retry_after"]
    assert (await wire_post(session, CHANNEL_ID + 99, "x")).status == 200


async def test_interactions_are_not_counted_against_the_global_limit(fake: FakeDiscord, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch):
    storage = Storage(fresh_database(tmp_path / "g.db"))
    service = GameService(storage)
    bot = DraughtsBot(service, clock=fake.now)
    install(fake, monkeypatch, bot.http)
    await bot.login(TOKEN)
    try:
        session = FakeSession(fake)
        for i in range(GLOBAL_LIMIT - len(fake.limits.recent)):         # logging in counted too
            assert (await wire_post(session, CHANNEL_ID + i, "x")).status == 200
        assert (await wire_post(session, CHANNEL_ID, "x")).status == 429
        fake.rate_limited.clear()
        h = Harness(bot, fake, storage, [time.time()])
        token = await h.slash("games", "ana")
        assert [a.content for a in fake.answers(token)] == [t("en", "games.empty")]
        assert fake.rate_limited == []
    finally:
        await bot.close()
        service.close()
        storage.close()


async def test_discord_py_waits_out_a_global_429_and_every_request_gets_through(fake: FakeDiscord,
                                                                                client: discord.Client):
    fake.latency = 0.005
    count = GLOBAL_LIMIT + 10
    await asyncio.gather(*(client.get_partial_messageable(CHANNEL_ID + i).send("x") for i in range(count)))
    posts = accepted(fake)
    assert len(posts) == count
    assert fake.rate_limited and all(r.bucket is None for r in fake.rate_limited)
    assert max(fake.slept) <= 1.0 and len(fake.slept) >= 1
    assert most_in_a_window(posts, 1.0) <= GLOBAL_LIMIT


# -- the gateway: RESUME, RECONNECT, INVALID_SESSION -----------------------------------------------------------


@pytest.fixture
async def running(fake: FakeDiscord, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                  bot_errors: list) -> AsyncIterator[Harness]:
    """A DraughtsBot connected through the fake gateway (one shard), with its harness to build
    interactions; discord.py's 5 s between two IDENTIFYs is not waited."""

    async def at_once(self: DraughtsBot, shard_id: int | None, *, initial: bool = False) -> None:
        return None

    monkeypatch.setattr(DraughtsBot, "before_identify_hook", at_once)
    storage = Storage(fresh_database(tmp_path / "gw.db"))
    service = GameService(storage)
    # No guilds come after READY: discord.py's wait for them (2 s) is cut short.
    bot = DraughtsBot(service, clock=fake.now, guild_ready_timeout=0.01)
    run = asyncio.create_task(bot.start(TOKEN))
    try:
        await until(lambda: bot.is_ready(), "the bot is ready")
        yield Harness(bot, fake, storage, [time.time()])
        assert not run.done()
    finally:
        await bot.close()
        await asyncio.gather(run, return_exceptions=True)
        service.close()
        storage.close()


async def until(condition: Callable[[], bool], what: str) -> None:
    give_up = time.monotonic() + WATCHDOG_SECONDS
    while not condition():
        assert time.monotonic() < give_up, f"watchdog: {what}"
        await asyncio.sleep(0.01)


def answered(fake: FakeDiscord, token: str) -> Callable[[], bool]:
    return lambda: any(a.content == t("en", "games.empty") for a in fake.answers(token))


async def test_after_op7_reconnect_discord_py_resumes_and_gets_the_events_it_missed(running: Harness):
    h, fake = running, running.fake
    resumed: list[int] = []

    async def on_shard_resumed(shard_id: int) -> None:
        resumed.append(shard_id)

    h.bot.add_listener(on_shard_resumed)
    before = fake.dispatch("INTERACTION_CREATE", h.slash_payload("games", "ana"))
    session = fake.reconnect()
    missed = h.slash_payload("games", "bob")
    fake.dispatch("INTERACTION_CREATE", missed)          # while the shard is away: kept for the RESUME
    await until(answered(fake, missed["token"]), "the event sent during the reconnect was answered")
    assert fake.resumes == [(session.id, before)]         # the last sequence number it had seen
    assert fake.identified == [(0, 1)] and resumed == [0]
    assert len(fake.sockets) == 2 and fake.sockets[0].closed and not fake.sockets[1].closed
    # The session goes on over the new connection.
    after = h.slash_payload("games", "cid")
    fake.dispatch("INTERACTION_CREATE", after)
    await until(answered(fake, after["token"]), "the event after the resume was answered")


async def test_after_op9_false_discord_py_identifies_again_and_gets_a_new_session(running: Harness):
    h, fake = running, running.fake
    await until(lambda: h.bot.delivering, "the outbox delivery runs")
    delivery = h.bot._task
    old = fake.invalidate(resumable=False)
    await until(lambda: len(fake.identified) == 2, "a second IDENTIFY")
    assert fake.resumes == [] and fake.identified == [(0, 1), (0, 1)]
    new = fake.session()
    assert new.id != old.id and old.id not in fake.sessions
    payload = h.slash_payload("games", "ana")
    fake.dispatch("INTERACTION_CREATE", payload)
    await until(answered(fake, payload["token"]), "an event on the new session was answered")
    # Ready again (on_ready may come again): still the one delivery task.
    assert h.bot._task is delivery and not delivery.done()


async def test_after_op9_true_discord_py_resumes_the_same_session(running: Harness):
    fake = running.fake
    session = fake.invalidate(resumable=True)
    await until(lambda: bool(fake.resumes), "a RESUME")
    await until(lambda: session.frames[-1]["t"] == "RESUMED", "RESUMED")
    assert fake.resumes == [(session.id, 1)] and fake.identified == [(0, 1)]


async def test_a_resume_of_a_session_that_is_gone_gets_op9_and_a_fresh_identify(running: Harness):
    h, fake = running, running.fake
    session = fake.reconnect()
    del fake.sessions[session.id]                      # Discord forgot it before the client came back
    await until(lambda: len(fake.identified) == 2, "an IDENTIFY after the refused RESUME")
    assert fake.resumes == [(session.id, 1)]
    payload = h.slash_payload("games", "ana")
    fake.dispatch("INTERACTION_CREATE", payload)
    await until(answered(fake, payload["token"]), "an event on the new session was answered")
