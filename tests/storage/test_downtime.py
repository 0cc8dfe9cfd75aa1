"""After the bot was down, deadlines move forward by the downtime (once), so no one loses on
time for the bot's outage; a running process keeps a heartbeat so a restart can tell."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from catalog_text import says
from storage_helpers import PLATFORM, T0, Bot, open_db

from bot.service import GameService
from bot.service.features.common import DOWNTIME_THRESHOLD, HEARTBEAT_SECONDS

REPO = Path(__file__).resolve().parents[2]


def test_tick_keeps_a_heartbeat_without_writing_at_every_tick(bot, now):
    bot.service.tick(platform=PLATFORM)
    assert bot.storage.last_beat(PLATFORM) == T0
    now[0] += HEARTBEAT_SECONDS / 2
    bot.service.tick(platform=PLATFORM)
    assert bot.storage.last_beat(PLATFORM) == T0
    now[0] += HEARTBEAT_SECONDS
    bot.service.tick(platform=PLATFORM)
    assert bot.storage.last_beat(PLATFORM) == now[0]


def test_a_restart_after_downtime_extends_deadlines_once_and_no_one_loses_on_time(database, now):
    bot = Bot(database, now)
    game = bot.new_game(extra="1h")
    deadline = bot.storage.game(game).deadline_at
    bot.service.tick(platform=PLATFORM)          # the running bot's last heartbeat, at T0
    bot.storage.close()
    now[0] = T0 + 3 * 3600                       # down for three hours: the clock of game #1 ran out
    bot = Bot(database, now)
    try:
        assert bot.service.resume_after_downtime(PLATFORM) == 3 * 3600
        assert bot.storage.game(game).deadline_at == deadline + 3 * 3600
        assert bot.service.tick(platform=PLATFORM) == []
        assert bot.storage.game(game).status == "active"
        played = bot.text("ana", "/m 22-18")
        assert says(played, "en", "move.played", name="Ana", move="22-18", id=game), played
        # A second start finds a fresh heartbeat and adds nothing.
        assert bot.service.resume_after_downtime(PLATFORM) == 0
    finally:
        bot.storage.close()


def test_a_short_gap_changes_nothing(database, now):
    bot = Bot(database, now)
    game = bot.new_game(extra="1h")
    deadline = bot.storage.game(game).deadline_at
    bot.service.tick(platform=PLATFORM)
    now[0] += DOWNTIME_THRESHOLD - 1
    try:
        assert bot.service.resume_after_downtime(PLATFORM) == 0
        assert bot.storage.game(game).deadline_at == deadline
    finally:
        bot.storage.close()


def test_only_the_restarted_platforms_games_move(database, now):
    bot = Bot(database, now)
    try:
        game = bot.new_game(extra="1h")
        other = bot.storage.create_game({
            "platform": "elsewhere", "chat_id": "c", "variant": "italian", "start_fen": None,
            "white_id": "x", "white_name": "X", "black_id": "y", "black_name": "Y",
            "fen": bot.storage.game(game).fen, "move_seconds": 3600, "deadline_at": T0 + 3600,
            "created_at": T0})
        bot.service.tick(platform=PLATFORM)
        now[0] += 600
        assert bot.service.resume_after_downtime(PLATFORM) == 600
        assert bot.storage.game(game).deadline_at == T0 + 3600 + 600
        assert bot.storage.game(other).deadline_at == T0 + 3600
    finally:
        bot.storage.close()


def test_two_processes_starting_together_extend_once(database, now):
    bot = Bot(database, now)
    game = bot.new_game(extra="1h")
    deadline = bot.storage.game(game).deadline_at
    bot.service.tick(platform=PLATFORM)
    bot.storage.close()
    later = T0 + 1800
    starts = [GameService(open_db(database, busy_timeout=5), clock=lambda: later) for _ in range(4)]
    barrier = threading.Barrier(len(starts))
    added: list[float] = []

    def start(service: GameService) -> None:
        barrier.wait()
        added.append(service.resume_after_downtime(PLATFORM))

    threads = [threading.Thread(target=start, args=(s,)) for s in starts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    try:
        assert sorted(added) == [0, 0, 0, 1800]
        assert starts[0].storage.game(game).deadline_at == deadline + 1800
    finally:
        for service in starts:
            service.storage.close()


def test_the_console_start_extends_deadlines_after_downtime(tmp_path):
    # SQLite only: it edits the heartbeat in the console's own file (DRAUGHTS_DB) with sqlite3.
    db = tmp_path / "cli.db"
    env = {k: v for k, v in os.environ.items() if not k.endswith("_BOT_TOKEN")}
    env.update(DRAUGHTS_DB=str(db), DRAUGHTS_IMAGES=str(tmp_path / "boards"), PYTHONPATH=str(REPO),
               LANG="en_US.UTF-8")

    def run(stdin: str) -> subprocess.CompletedProcess:
        proc = subprocess.run([sys.executable, "-m", "bot"], input=stdin, capture_output=True, text=True,
                              cwd=tmp_path, env=env, timeout=60)
        assert proc.returncode == 0, proc.stderr
        return proc

    run("/new italian white 1h\n/as Bob\n/accept\n")
    conn = sqlite3.connect(db)
    deadline = conn.execute("SELECT deadline_at FROM games WHERE id=1").fetchone()[0]
    # As if the console had last been running an hour earlier.
    conn.execute("UPDATE meta SET value = value - 3600 WHERE key='heartbeat:console'")
    conn.commit()
    run("/games\n")
    moved = conn.execute("SELECT deadline_at FROM games WHERE id=1").fetchone()[0] - deadline
    conn.close()
    assert 3600 <= moved < 3600 + 60


# -- issue 21, item 4: the wall clock jumps while the bot runs ----------------------------------------


class Clocks:
    """A wall clock and a monotonic one (the time the process really ran), moved by the test."""

    def __init__(self) -> None:
        self.wall, self.running = T0, 1000.0

    def run(self, seconds: float) -> None:
        self.wall += seconds
        self.running += seconds


def running_bot(path: str | Path, clocks: Clocks) -> Bot:
    bot = Bot(path, [T0])
    bot.now = None  # type: ignore[assignment]  # the service reads ``clocks`` instead
    bot.service = GameService(bot.storage, clock=lambda: clocks.wall, monotonic=lambda: clocks.running)
    return bot


def test_a_suspend_while_running_extends_deadlines_and_no_game_ends_on_time(database):
    """Ten games at 24 h a move; the host sleeps two days (the wall clock jumps, the process's
    monotonic clock does not): no game is lost on time, every deadline moves by the two days."""
    clocks = Clocks()
    bot = running_bot(database, clocks)
    try:
        games = [bot.new_game(white=f"w{n}", black=f"b{n}", extra="24h") for n in range(10)]
        deadlines = {g: bot.storage.game(g).deadline_at for g in games}
        bot.service.tick(platform=PLATFORM)
        clocks.run(45)
        bot.service.tick(platform=PLATFORM)
        clocks.wall += 2 * 86400                      # asleep: only the wall clock moved
        clocks.run(1)
        bot.service.tick(platform=PLATFORM)
        ended = [g for g in games if bot.storage.game(g).status != "active"]
        assert ended == []
        for g in games:
            assert bot.storage.game(g).deadline_at == pytest.approx(deadlines[g] + 2 * 86400, abs=1)
        # Looked at again, nothing more moves; the clocks run on as usual afterwards.
        clocks.run(60)
        bot.service.tick(platform=PLATFORM)
        assert all(bot.storage.game(g).deadline_at == pytest.approx(deadlines[g] + 2 * 86400, abs=1)
                   for g in games)
        clocks.run(23 * 3600)
        bot.service.tick(platform=PLATFORM)
        assert all(bot.storage.game(g).status == "active" for g in games)
        clocks.run(2 * 86400)
        bot.service.tick(platform=PLATFORM)
        assert all(bot.storage.game(g).result_reason == "time" for g in games)
    finally:
        bot.storage.close()


def test_a_clock_jump_seen_by_two_processes_of_a_platform_extends_once(database):
    clocks = Clocks()
    first = running_bot(database, clocks)
    second = running_bot(database, clocks)
    try:
        game = first.new_game(extra="1h")
        deadline = first.storage.game(game).deadline_at
        first.service.tick(platform=PLATFORM)
        second.service.tick(platform=PLATFORM)
        clocks.wall += 5 * 3600
        clocks.run(2)
        first.service.tick(platform=PLATFORM)
        second.service.tick(platform=PLATFORM)
        assert first.storage.game(game).deadline_at == pytest.approx(deadline + 5 * 3600, abs=3)
        assert first.storage.game(game).status == "active"
    finally:
        first.storage.close()
        second.storage.close()


def test_an_idle_process_is_not_taken_for_a_jump(database):
    """Hours between two looks at the clocks, all of them spent running: nothing moves."""
    clocks = Clocks()
    bot = running_bot(database, clocks)
    try:
        game = bot.new_game(extra="24h")
        deadline = bot.storage.game(game).deadline_at
        bot.service.tick(platform=PLATFORM)
        clocks.run(5 * 3600)
        bot.service.tick(platform=PLATFORM)
        assert bot.storage.game(game).deadline_at == deadline
    finally:
        bot.storage.close()


def test_a_backward_step_then_an_outage_still_extends(database, now):
    """The wall clock steps back an hour while running, then the bot is down for 50 minutes:
    the restart extends the deadlines by the 50 minutes (the heartbeat was renewed at the step)."""
    bot = Bot(database, now)
    game = bot.new_game(extra="1h")
    deadline = bot.storage.game(game).deadline_at
    bot.service.tick(platform=PLATFORM)              # heartbeat at T0
    now[0] = T0 - 3600 + 5                           # NTP steps the clock back an hour
    bot.service.tick(platform=PLATFORM)
    bot.storage.close()
    now[0] += 50 * 60                                # down for 50 minutes
    bot = Bot(database, now)
    try:
        assert bot.service.resume_after_downtime(PLATFORM) == pytest.approx(50 * 60)
        assert bot.storage.game(game).deadline_at == pytest.approx(deadline + 50 * 60)
    finally:
        bot.storage.close()


def test_a_move_right_after_a_suspend_is_played_not_lost_on_time(database):
    """The first thing after the host wakes up is the player's move, before the timers' round."""
    clocks = Clocks()
    bot = running_bot(database, clocks)
    try:
        game = bot.new_game(extra="1h")
        bot.service.tick(platform=PLATFORM)
        clocks.wall += 3 * 3600                       # asleep for three hours
        clocks.run(1)
        played = bot.text("ana", "/m 22-18")
        assert says(played, "en", "move.played", name="Ana", move="22-18", id=game), played
        assert bot.storage.game(game).status == "active"
    finally:
        bot.storage.close()
