"""The adapters' outbox delivery with claims (bot/platforms/base.py, issue 18): a worker renews its
claim before each message and leaves one another process took; stopping gives the claims up."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from recording_network import PLATFORM, Network

from bot.platforms.base import Piece
from bot.service import GameService, Reply
from bot.service.outbox import Outbox
from bot.storage import SQLiteStore

T0 = 1_700_000_000.0


@pytest.fixture
def process(tmp_path: Path):
    """(now, owner) -> a service and its adapter on the test's database, as one process of several."""
    stores: list[SQLiteStore] = []

    def make(now: list[float], owner: str) -> tuple[GameService, Network]:
        storage = SQLiteStore(tmp_path / "t.db")
        stores.append(storage)
        service = GameService(storage, clock=lambda: now[0])
        service.outbox = Outbox(storage, lambda: now[0], owner=owner, lease_seconds=60.0)
        return service, Network(service)
    yield make
    for storage in stores:
        storage.close()


def test_a_worker_leaves_the_rows_another_process_took_after_its_claim_ran_out(process):
    now = [T0]
    one, first = process(now, "host:1")
    two, second = process(now, "host:2")
    for text in ("a", "b"):
        one.say(PLATFORM, "g", Reply(text))
    queue = one.pending_messages(PLATFORM)            # claimed by one, whose worker is held up ...
    now[0] += 61
    assert asyncio.run(second.delivery_round(timers=False)) == 2     # ... past its lease: two sends them
    assert asyncio.run(first._deliver_chat("g", queue)) == 0           # and one does not again
    assert (first.sent, second.sent) == ([], [("g", "a"), ("g", "b")])
    assert {row.status for row in one.storage.find_outbox()} == {"sent"}


def test_a_worker_keeps_its_rows_while_it_renews_them(process):
    now = [T0]
    one, first = process(now, "host:1")
    two, second = process(now, "host:2")
    one.say(PLATFORM, "g", Reply("a"))
    queue = one.pending_messages(PLATFORM)
    now[0] += 59
    one.renew_messages([item.id for item in queue])
    now[0] += 59                                       # past the first lease, not the renewed one
    assert asyncio.run(second.delivery_round(timers=False)) == 0
    assert asyncio.run(first._deliver_chat("g", queue)) == 1 and first.sent == [("g", "a")]


def test_stopping_the_delivery_gives_the_claims_up(process):
    now = [T0]
    one, first = process(now, "host:1")
    two, second = process(now, "host:2")
    item = one.say(PLATFORM, "g", Reply("a"))
    entered, sending = asyncio.Event(), first.send_piece

    async def stuck(chat_id: str, piece: Piece, *, reply_to: str | None = None) -> str | None:
        entered.set()
        await asyncio.sleep(3600)                      # the platform never answers
        return await sending(chat_id, piece, reply_to=reply_to)
    first.send_piece = stuck                            # type: ignore[method-assign]

    async def run() -> None:
        first.start_delivery()
        await asyncio.wait_for(entered.wait(), 10)
        await first.stop_delivery(timeout=0.1)

    asyncio.run(run())
    row = one.storage.outbox_message(item)
    assert (row.status, row.claimed_by) == ("pending", None)
    # The other process sends it now, not a lease later.
    assert asyncio.run(second.delivery_round(timers=False)) == 1 and second.sent == [("g", "a")]
