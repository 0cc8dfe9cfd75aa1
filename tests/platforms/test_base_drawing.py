"""Outbox rows are drawn beside the delivery loop (issue 30, item 8): the adapter claims rows, and
each chat's worker has its rows worded and drawn in the outbox's drawing threads, the next one
while this one goes out.  A chat's rows still go in order, each with the picture of the state it
holds; one chat's slow drawing holds back no other chat; a picture is drawn once by what it shows.

The slow drawing is a seam around the real renderer (``Outbox.renderer``): every picture is still
drawn by Pillow from its stored spec."""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
from pathlib import Path

import pytest
from recording_network import PLATFORM, Network

from bot.rules import Move, Position
from bot.service import GameService, Reply
from bot.service.chat import boards
from bot.service.events import Spec
from bot.storage import SQLiteStore
from renderers import render_png

T0 = 1_700_000_000.0


class SlowDrawing:
    """The real renderer, slowed down: each picture waits ``delay(spec)`` seconds, and a spec in
    ``held`` waits until ``release`` is set.  Counts how many pictures were drawn at once."""

    def __init__(self, delay: dict[Spec, float] | None = None) -> None:
        self.delay = delay or {}
        self.held: set[Spec] = set()
        self.release = threading.Event()
        self.started: list[Spec] = []
        self._lock = threading.Lock()
        self._now = 0
        self.most_at_once = 0

    def picture(self, spec: Spec) -> bytes:
        with self._lock:
            self.started.append(spec)
            self._now += 1
            self.most_at_once = max(self.most_at_once, self._now)
        try:
            if spec in self.held:
                assert self.release.wait(30), "the held drawing was never released"
            time.sleep(self.delay.get(spec, 0.0))
            return boards.RENDERER.picture(spec)
        finally:
            with self._lock:
                self._now -= 1

    def text(self, spec: Spec) -> str:
        return boards.RENDERER.text(spec)

    def remember(self, picture: bytes | None) -> None:
        boards.RENDERER.remember(picture)


@pytest.fixture
def service(tmp_path: Path):
    storage = SQLiteStore(tmp_path / "t.db")
    made = GameService(storage, clock=lambda: T0)
    yield made
    storage.close()


def positions(count: int, variant: str = "italian", seed: int = 1) -> list[tuple[Position, Move | None]]:
    """A game's first ``count`` positions, each with the move that led to it."""
    rng = random.Random(seed)
    pos, out = Position.start(variant), [(Position.start(variant), None)]
    while len(out) < count:
        move = rng.choice(pos.legal_moves())
        pos = pos.play(move)
        out.append((pos, move))
    return out


def board(pos: Position, move: Move | None) -> bytes:
    """The board a chat is sent for ``pos`` (a ``Rendered`` picture: the outbox stores its spec)."""
    return boards.png(boards.board_view(pos, move.path if move else (), move.captured if move else ()))


def test_each_chats_rows_go_in_order_with_the_state_they_hold_while_drawn_in_parallel(service):
    game = positions(6)
    drawing = SlowDrawing()
    service.outbox.renderer = drawing
    written: dict[str, list[tuple[str, bytes]]] = {}
    for n, (pos, move) in enumerate(game):
        for chat in ("a", "b", "c"):
            image = board(pos, move)
            # The earlier rows draw slowest: drawn in any order, they must still go out in order.
            drawing.delay[image.spec] = 0.02 * (len(game) - n)      # type: ignore[attr-defined]
            service.say(PLATFORM, chat, Reply(f"{chat} ply {n}", image=image))
            written.setdefault(chat, []).append((f"{chat} ply {n}", bytes(image)))
    boards.forget_drawings()                       # drawn afresh at delivery, as by another process
    network = Network(service)
    assert asyncio.run(network.delivery_round(timers=False)) == 18
    for chat, rows in written.items():
        sent = [(piece.text, piece.image) for to, piece in network.went_out if to == chat]
        # In order, and each picture the state its row holds (never an earlier or later board).
        assert sent == rows
    assert drawing.most_at_once >= 2               # drawn beside each other, not one by one
    assert {row.status for row in service.storage.find_outbox()} == {"sent"}


def test_the_loop_sends_another_chats_row_while_one_chats_drawing_is_slow(service):
    (pos, _), (after, move) = positions(2)
    drawing = SlowDrawing()
    service.outbox.renderer = drawing
    slow = board(after, move)
    drawing.held.add(slow.spec)                    # type: ignore[attr-defined]
    service.say(PLATFORM, "slow", Reply("slow board", image=slow))
    service.say(PLATFORM, "fast", Reply("fast board", image=board(pos, None)))
    service.say(PLATFORM, "fast", Reply("fast text"))
    network = Network(service)

    async def run() -> None:
        delivering = asyncio.create_task(network.delivery_round(timers=False))
        try:
            for _ in range(1000):
                if len(network.texts("fast")) == 2:
                    break
                await asyncio.sleep(0.01)
            # The fast chat's rows are out while the slow chat's picture is still being drawn.
            assert network.texts("fast") == ["fast board", "fast text"]
            assert network.texts("slow") == [] and not delivering.done()
        finally:
            drawing.release.set()
        assert await asyncio.wait_for(delivering, 30) == 3

    asyncio.run(run())
    assert network.texts("slow") == ["slow board"]
    assert [piece.image for chat, piece in network.went_out if chat == "slow"] == [bytes(slow)]


def test_pending_hands_rows_over_in_order_though_drawn_in_parallel(service):
    game = positions(5, "spanish", seed=7)
    drawing = SlowDrawing()
    service.outbox.renderer = drawing
    ids = []
    for n, (pos, move) in enumerate(game):
        image = board(pos, move)
        drawing.delay[image.spec] = 0.03 * (len(game) - n)          # type: ignore[attr-defined]
        ids.append(service.say(PLATFORM, "g", Reply(f"ply {n}", image=image)))
    items = service.pending_messages(PLATFORM)
    assert [item.id for item in items] == ids
    assert [item.reply.text for item in items] == [f"ply {n}" for n in range(len(game))]
    assert [item.reply.image for item in items] == [board(pos, move) for pos, move in game]
    assert drawing.most_at_once >= 2


def test_an_unreadable_row_is_dropped_and_the_chats_next_row_still_goes(service, bot_errors):
    service.say(PLATFORM, "g", Reply("before"))
    broken = service.storage.enqueue(PLATFORM, "g", json.dumps({"text": "x", "image": {"spec": {
        "kind": "board", "variant": "italian", "fen": "nonsense"}}}), T0)
    service.say(PLATFORM, "g", Reply("after"))
    network = Network(service)
    assert asyncio.run(network.delivery_round(timers=False)) == 2
    assert network.texts("g") == ["before", "after"]
    assert [r.getMessage().split(" (")[0] for r in bot_errors] == [f"outbox message {broken} cannot be read"]
    bot_errors.clear()
    assert service.storage.outbox_message(broken).status == "dropped"


def test_a_picture_is_drawn_once_by_what_it_shows_and_a_hit_is_the_same_bytes():
    (pos, _), (after, move) = positions(2, "triestina", seed=3)
    boards.forget_drawings()
    first = board(after, move)
    again = board(after, move)                     # a new view of the same position and marks
    assert bytes(again) == bytes(first) and again.spec == first.spec         # type: ignore[attr-defined]
    assert boards.drawing_counts() == (1, 1)
    # The same bytes as the renderer draws them, uncached.
    view = boards.board_view(after, move.path, move.captured)
    assert bytes(first) == render_png(view, boards.BOARD_PX)
    # Anything the picture shows is in the key: other marks, the other side, another position.
    assert bytes(boards.png(boards.board_view(after))) != bytes(first)
    other_side = boards.board_view(after, move.path, move.captured, flipped=after.white)
    assert bytes(boards.png(other_side)) != bytes(first)
    assert bytes(board(pos, None)) != bytes(first)
    assert boards.drawing_counts() == (4, 1)
    # And a stored spec read back is that picture, from the cache or drawn afresh.
    assert boards.RENDERER.picture(first.spec) == bytes(first)               # type: ignore[attr-defined]
    boards.forget_drawings()
    assert boards.RENDERER.picture(first.spec) == bytes(first)               # type: ignore[attr-defined]
    assert boards.drawing_counts() == (1, 0)


def test_a_capture_animation_is_drawn_once_by_what_it_shows():
    italian = Position.from_fen("italian", "B:W9,13,21,29,30,31,32:B1,2,4,7,8,10")
    moves = [m for m in italian.legal_moves() if len(m.captured) >= 2]
    boards.forget_drawings()
    first = boards.capture_animation(italian, moves[0], flipped=False)
    again = boards.capture_animation(italian, moves[0], flipped=False)
    assert first is not None and again is not None and bytes(first) == bytes(again)
    assert boards.drawing_counts() == (1, 1)


def test_two_threads_asking_for_one_picture_draw_it_once():
    (_, _), (after, move) = positions(2, seed=11)
    boards.forget_drawings()
    view = boards.board_view(after, move.path, move.captured)
    out: list[bytes] = []
    threads = [threading.Thread(target=lambda: out.append(boards.png(view))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(out)) == 1 and boards.drawing_counts() == (1, 3)
