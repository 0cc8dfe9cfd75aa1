"""A board message never goes back to an older board (issue 29, item 4), with the issue's processes:
two real webhook worker processes (webhook_workers: ``python -m bot telegram``, only their Bot API
HTTP pointed at the fake) on one SQLite file, in front of one fake Bot API on a real socket.

Ana picks a piece on worker A, whose board edit meets a 502; the fake holds that answer until her
destination press, delivered to worker B, has been played and its new board answered, so A's
retry (a second after the 502) surely comes last.  What stops it is the stage check A makes in the
shared database before each attempt (bot.service.board_versions); test_telegram_board_order.py has
the same sequence with the two workers inside one process."""

from __future__ import annotations

import asyncio
import threading
import time

from telegram_fake_api import GROUP, USERS, Call
from webhook_workers import start_game, wait_for, workers_on_fake

from bot.storage import Storage

CHAT = int(GROUP["id"])
HOLD_SECONDS = 4.0        # below PTB's 5 s read timeout (A must get its 502); B shows its board in ~1 s


def test_a_retry_in_one_worker_never_puts_an_older_board_over_another_workers_move(tmp_path):
    ana, bob = USERS["ana"], USERS["bob"]
    held, release, gave_up = threading.Event(), threading.Event(), threading.Event()

    async def hold_the_502(call: Call) -> None:
        if call.method != "editMessageMedia" or call.status != 502:
            return
        held.set()
        give_up = time.monotonic() + HOLD_SECONDS
        while not release.is_set() and time.monotonic() < give_up:
            await asyncio.sleep(0.02)
        if not release.is_set():
            gave_up.set()

    with workers_on_fake(tmp_path, 2, shared=True) as workers:
        server, fake = workers.server, workers.fake
        start_game(workers, ana, bob, 1, 0)
        board = server.call(lambda: fake.bot_messages(CHAT, "photo")[-1])
        start = board.buttons()

        def photos() -> list:
            return server.call(lambda: fake.bot_messages(CHAT, "photo"))

        server.before_answer = hold_the_502
        server.call(fake.fail, "editMessageMedia", 502, "Bad Gateway")
        # Ana picks a piece on worker A: its edit meets a 502, which the fake holds.
        workers.press(0, GROUP, ana, "s:1:0:22", board.message_id)
        assert held.wait(30), "worker A's board edit"
        # Her destination press reaches worker B, which plays the move and shows Bob's board.
        workers.press(1, GROUP, ana, "d:1:0:22:18", board.message_id)
        shown = wait_for(lambda: [m for m in photos() if m.buttons()[:1] and m.buttons()[0].startswith("d:1:1:")],
                         HOLD_SECONDS - 0.5)
        release.set()              # now A gets its 502, and retries a second later
        assert shown and not gave_up.is_set(), "worker B's board after the move, while A's 502 was held"
        # Leaving stops the workers: each first finishes the updates it is handling (A's retry).
    logs = workers.outputs

    latest = fake.bot_messages(CHAT, "photo")[-1]
    assert latest.message_id == shown[-1].message_id
    assert "22-18" in latest.text and latest.buttons()[0].startswith("d:1:1:"), latest.buttons()
    # The message A meant to edit never showed the piece chosen at ply 0: A's edit was never applied.
    assert fake.messages[(CHAT, board.message_id)].buttons() == start
    assert [c.status for c in fake.calls if c.method == "editMessageMedia"] == [502]
    a_log = logs[0][1]
    assert "try 2 in" in a_log and "dropped: the game has moved on" in a_log, a_log[-3000:]
    storage = Storage(tmp_path / "bot.db")
    try:
        game = storage.game(1)
        assert game is not None and game.ply == 1
    finally:
        storage.close()
