"""The outbox as small notifications (issue 18): a stored row holds what to show and for whom, its
pictures as render specs drawn when it is delivered (the same bytes as when it was written), and
rows are claimed with a lease so that several processes on one database send each message once."""

from __future__ import annotations

import json
import multiprocessing
import os
import pickle
import random
import sqlite3
import time
from pathlib import Path

import pytest
from executors import HeldExecutor
from outbox_mix import HOUR, PLATFORM, T0, count_sends, deliver, fill, start

from bot.rules import Game
from bot.service import GameService, Reply
from bot.service.chat import boards
from bot.service.events import BoardSpec, CaptureSpec, Rendered, RenderedText
from bot.service.notifications import Notification
from bot.service.outbox import PRUNE_BATCH, PRUNE_EVERY, RETENTION_SECONDS, Outbox
from bot.service.thinking import Thinker
from bot.storage import SQLiteStore

ROW_LIMIT = 1024


@pytest.fixture
def day(tmp_path: Path, pool):
    """A day of six chats (games between people and against the bot, reminders, losses on time,
    daily posts) on a real service; the outbox holds what it said on its own, and the replies as
    they were written (a notification: as its presenter showed it when it was written), by row id."""
    now = [T0]
    storage = SQLiteStore(tmp_path / "day.db")
    service = GameService(storage, clock=lambda: now[0], rng=random.Random(1), thinker=Thinker(pool, workers=2),
                          bot_seconds=0.05)
    written: dict[int, Reply] = {}
    say = service.outbox.say

    def keep(platform: str, chat_id: str, reply: Reply) -> int:
        item = say(platform, chat_id, reply)
        written[item] = reply
        return item
    service.outbox.say = keep                  # type: ignore[method-assign]
    notify = service.outbox.notify

    def keep_notice(platform: str, chat_id: str, notice: Notification) -> int:
        item = notify(platform, chat_id, notice)
        assert service.outbox.present is not None
        written[item] = service.outbox.present(notice)
        return item
    service.outbox.notify = keep_notice        # type: ignore[method-assign]
    fill(service, now)
    yield service, storage, written, now
    service.close()
    storage.close()


def test_every_row_of_a_realistic_day_is_at_most_one_kilobyte(day):
    service, storage, written, _ = day
    rows = storage.find_outbox()
    payloads = [json.loads(row.payload) for row in rows]
    # The day said all it should: boards of games (bot moves, losses on time), the daily posts,
    # reminders without a board.  A notification's board is drawn when it is delivered.
    with_board = {"bot_moved", "lost_on_time", "daily_posted"}

    def board(p: dict) -> bool:
        return bool(p.get("image")) or p.get("notice") in with_board
    assert sum(1 for p in payloads if p.get("game_id") and board(p)) >= 6
    assert sum(1 for p in payloads if p.get("post_id") and board(p)) == 6
    assert sum(1 for p in payloads if not board(p)) >= 6
    sizes = sorted(len(row.payload.encode("utf-8")) for row in rows)
    assert sizes[-1] <= ROW_LIMIT, sizes
    # Every picture is a spec, never bytes.
    assert all(isinstance(p.get("image"), (dict, type(None))) for p in payloads)


def test_a_picture_drawn_at_delivery_is_the_one_drawn_when_the_row_was_written(day):
    service, storage, written, now = day
    assert any(isinstance(reply.image, Rendered) for reply in written.values())
    # The games go on (and end) before delivery: each picture still shows its board as it stood.
    boards.forget_drawings()                  # drawn afresh, as by another process
    items = service.pending_messages(PLATFORM, limit=1000)
    assert {item.id for item in items} == set(written)
    for item in items:
        before = written[item.id]
        assert item.reply.image == before.image and item.reply.animation == before.animation
        assert item.reply.board_text == before.board_text
        assert item.reply == before


def test_a_capture_animation_is_stored_as_its_spec_and_drawn_the_same():
    game, rng = Game("italian"), random.Random(3)
    while True:
        moves = game.position.legal_moves()
        double = [m for m in moves if len(m.captured) >= 2]
        if double:
            break
        game.play(rng.choice(moves))
        if game.result is not None:
            game, rng = Game("italian"), random.Random(rng.random())
    before = game.position
    gif = boards.capture_animation(before, double[0], flipped=True)
    assert isinstance(gif, Rendered) and isinstance(gif.spec, CaptureSpec)
    view = boards.board_view(before, double[0].path, double[0].captured)
    reply = Reply("x", image=boards.png(view), animation=gif, board_text=boards.text(view), game_id=1)
    stored = reply.to_json()
    assert len(stored) < 600 and "GIF" not in stored
    boards.forget_drawings()
    back = Reply.from_json(stored, boards.RENDERER)
    assert back.animation == gif and back.image == reply.image and back.board_text == reply.board_text
    with pytest.raises(ValueError):
        Reply.from_json(stored)                # a spec cannot be read without a renderer


@pytest.mark.parametrize("variant", ["italian", "spanish", "triestina"])
def test_boards_of_every_variant_are_drawn_from_their_spec_as_they_were(variant):
    game, rng = Game(variant), random.Random(variant)
    for ply in range(24):
        moves = game.position.legal_moves()
        if not moves or game.result is not None:
            break
        move = rng.choice(moves)
        before = game.position
        game.play(move)
        if ply % 6:
            continue
        view = boards.board_view(game.position, move.path, move.captured, dots=[move.end], selected=move.start,
                                 flipped=ply % 12 == 0, routes=[move.path] if len(move.path) > 1 else [],
                                 earlier_paths=[move.path])
        reply = Reply("z", image=boards.png(view), board_text=boards.text(view),
                      animation=boards.capture_animation(before, move, flipped=False))
        assert pickle.loads(pickle.dumps(reply)) == reply
        stored = reply.to_json()
        assert len(stored.encode("utf-8")) <= ROW_LIMIT
        boards.forget_drawings()
        assert Reply.from_json(stored, boards.RENDERER) == reply


def test_a_text_board_of_its_own_and_a_picture_without_a_spec_survive_the_outbox():
    game = Game("spanish")
    view = boards.board_view(game.position, dots=[13], selected=9)
    other = boards.board_view(game.position, flipped=True)
    reply = Reply("y", image=b"\x89PNG chart", board_text=boards.text(other))
    assert isinstance(reply.board_text, RenderedText) and isinstance(view.spec, BoardSpec)
    back = Reply.from_json(reply.to_json(), boards.RENDERER)
    assert back == reply


def test_a_row_written_before_specs_is_still_delivered(tmp_path, now):
    storage = SQLiteStore(tmp_path / "old.db")
    service = GameService(storage, clock=lambda: now[0])
    old = json.dumps({"text": "old", "image": "iVBORw==", "animation": None, "buttons": [], "replaces_board": False,
                      "game_id": None, "board_text": None, "document": None, "private": False})
    storage.enqueue(PLATFORM, "g", old, now[0])
    [item] = service.pending_messages(PLATFORM)
    assert (item.reply.text, item.reply.image) == ("old", b"\x89PNG")
    storage.close()


def test_a_row_that_cannot_be_read_is_dropped_instead_of_blocking_the_outbox(tmp_path, now, bot_errors):
    storage = SQLiteStore(tmp_path / "bad.db")
    service = GameService(storage, clock=lambda: now[0])
    bad = storage.enqueue(PLATFORM, "g", json.dumps({"text": "x", "image": {"spec": {"kind": "board",
                                                     "variant": "italian", "fen": "nonsense"}}}), now[0])
    good = service.say(PLATFORM, "g", Reply("fine"))
    assert [item.id for item in service.pending_messages(PLATFORM)] == [good]
    assert [r.getMessage().split(" (")[0] for r in bot_errors] == [f"outbox message {bad} cannot be read"]
    bot_errors.clear()
    assert storage.outbox_message(bad).status == "dropped"
    storage.close()


# -- claims ---------------------------------------------------------------------------------------


@pytest.fixture
def two_services(tmp_path: Path, now: list[float]):
    """lease -> two services on one database as two processes would be (owners of their own)."""
    stores: list[SQLiteStore] = []

    def make(lease: float = 60.0) -> tuple[GameService, GameService]:
        out = []
        for owner in ("host:1", "host:2"):
            storage = SQLiteStore(tmp_path / "t.db")
            stores.append(storage)
            service = GameService(storage, clock=lambda: now[0])
            service.outbox = Outbox(storage, lambda: now[0], owner=owner, lease_seconds=lease)
            out.append(service)
        return out[0], out[1]
    yield make
    for storage in stores:
        storage.close()


def test_a_claimed_row_goes_to_no_other_process_until_its_lease_runs_out(two_services, now):
    one, two = two_services(lease=60.0)
    first = one.say(PLATFORM, "g1", Reply("a"))
    second = one.say(PLATFORM, "g2", Reply("b"))
    assert [i.id for i in one.pending_messages(PLATFORM, limit=1)] == [first]
    assert [i.id for i in two.pending_messages(PLATFORM)] == [second]
    assert [i.id for i in one.pending_messages(PLATFORM)] == [first]       # its own again, not the other's
    # The chat of a held row stays with its holder (its order is kept): a later row waits too.
    later = one.say(PLATFORM, "g1", Reply("c"))
    assert [i.id for i in two.pending_messages(PLATFORM)] == [second]
    assert one.message_sent(first)
    assert [i.id for i in two.pending_messages(PLATFORM)] == [second, later]


def test_a_crashed_processs_rows_go_to_the_other_once_the_lease_ends(two_services, now):
    one, two = two_services(lease=60.0)
    item = one.say(PLATFORM, "g", Reply("board", game_id=None))
    [claimed] = one.pending_messages(PLATFORM)
    one.message_progress(claimed.id, 1)              # one part out, then the process dies
    assert two.pending_messages(PLATFORM) == []
    assert two.next_wakeup(PLATFORM) == pytest.approx(now[0] + 60.0)
    now[0] += 60.0
    [taken] = two.pending_messages(PLATFORM)
    assert (taken.id, taken.delivered) == (item, 1)  # resumed from the part that failed
    # The first process, back, may no longer mark or count it.
    assert one.message_sent(item) is False
    one.message_progress(item, 5)
    one.message_failed(item, "x", permanent=True)
    assert two.storage.outbox_message(item).status == "pending"
    assert two.message_sent(item) and two.storage.outbox_message(item).status == "sent"


def test_renewing_keeps_the_rows_and_says_which_are_no_longer_ours(two_services, now):
    one, two = two_services(lease=60.0)
    a, b = one.say(PLATFORM, "g", Reply("a")), one.say(PLATFORM, "h", Reply("b"))
    one.pending_messages(PLATFORM)
    now[0] += 50
    assert one.renew_messages([a]) == {a}
    now[0] += 20                                     # b's lease ran out, a's did not
    assert [i.id for i in two.pending_messages(PLATFORM)] == [b]
    assert one.renew_messages([a, b]) == {a}


def test_a_stopping_process_gives_its_rows_up_at_once(two_services, now):
    one, two = two_services(lease=600.0)
    item = one.say(PLATFORM, "g", Reply("a"))
    one.pending_messages(PLATFORM)
    assert one.release_messages() == 1
    assert [i.id for i in two.pending_messages(PLATFORM)] == [item]


# -- pruning --------------------------------------------------------------------------------------


def test_old_sent_and_dropped_rows_are_pruned_in_batches_and_pending_ones_kept(tmp_path, now):
    storage = SQLiteStore(tmp_path / "t.db")
    service = GameService(storage, clock=lambda: now[0])
    old = [service.say(PLATFORM, "g", Reply(f"m{i}")) for i in range(PRUNE_BATCH + 12)]
    *sent, dropped, waiting = service.pending_messages(PLATFORM, limit=10_000)
    for item in sent:
        service.message_sent(item.id)
    service.message_failed(dropped.id, "gone", permanent=True, chat_gone=False)
    service.message_failed(waiting.id, "502", retry_in=10 * RETENTION_SECONDS)
    now[0] += RETENTION_SECONDS + 1
    recent = service.say(PLATFORM, "g", Reply("recent"))
    service.message_sent(service.pending_messages(PLATFORM)[0].id)     # a delivery round prunes one batch ...
    assert len(storage.find_outbox()) == len(old) + 1 - PRUNE_BATCH
    service.pending_messages(PLATFORM)                                 # ... and the next one the rest
    assert {row.id: row.status for row in storage.find_outbox()} == {waiting.id: "pending", recent: "sent"}
    now[0] += PRUNE_EVERY
    assert service.outbox.prune() == 0
    storage.close()


# -- two OS processes ------------------------------------------------------------------------------


def test_two_processes_on_one_database_deliver_every_message_once(tmp_path):
    """The adapters' real delivery rounds in two processes on one SQLite file, while both do the
    timed work (reminders, losses on time, the bot's moves, daily posts): no row goes out twice
    (the outbox before leases sent 6 of 30 twice here; bench/outbox_two_processes.py)."""
    db, log_path = str(tmp_path / "shared.db"), str(tmp_path / "sent.log")
    storage = SQLiteStore(db)
    service = GameService(storage, clock=lambda: T0, rng=random.Random(1), thinker=Thinker(HeldExecutor()))
    start(service, chats=4, settle=0)
    service.close()
    storage.close()
    spawn = multiprocessing.get_context("spawn")
    ready, go, go_at = spawn.Barrier(3), spawn.Event(), spawn.Value("d", 0.0)
    workers = [spawn.Process(target=deliver, args=(db, log_path, 3.0, T0, ready, go, go_at, 4 * HOUR))
               for _ in range(2)]
    for worker in workers:
        worker.start()
    ready.wait(timeout=60)
    go_at.value = time.time()
    go.set()
    for worker in workers:
        worker.join(timeout=60)
    assert [worker.exitcode for worker in workers] == [0, 0]
    sends, by_process = count_sends(log_path)
    conn = sqlite3.connect(db)
    statuses = dict(conn.execute("SELECT status, count(*) FROM outbox GROUP BY status").fetchall())
    conn.close()
    assert statuses.get("sent", 0) >= 4 * 3 and not statuses.get("pending")
    assert len(by_process) == 2 or sum(by_process.values()) >= 12
    assert [key for key, count in sends.items() if count > 1] == []


def _a_dead_pid() -> int:
    """The pid of a process of this machine that has ended (and was reaped)."""
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.mark.skipif(os.name != "posix", reason="a dead process is told by POSIX signal 0")
def test_a_killed_process_of_this_machine_leaves_its_rows_at_once_not_after_its_lease(tmp_path, now):
    """A bot killed with -9 and started again: the new process takes the dead one's claimed rows on
    its next round, instead of leaving the chat silent until the lease (minutes) runs out."""
    import socket

    storage = SQLiteStore(tmp_path / "t.db")
    try:
        dead, alive = f"{socket.gethostname()}:{_a_dead_pid()}", f"{socket.gethostname()}:{os.getppid()}"
        service = GameService(storage, clock=lambda: now[0])
        first, second = service.say(PLATFORM, "g1", Reply("a")), service.say(PLATFORM, "g2", Reply("b"))
        assert [r.id for r in storage.claim_messages(PLATFORM, dead, now[0], now[0] + 300, 1)] == [first]
        assert [r.id for r in storage.claim_messages(PLATFORM, alive, now[0], now[0] + 300)] == [second]
        # The dead process's row now; the live one's (the test's parent process) stays with it.
        assert [i.id for i in service.pending_messages(PLATFORM)] == [first]
        assert service.message_sent(first)
        assert storage.outbox_message(second).claimed_by == alive
    finally:
        storage.close()
