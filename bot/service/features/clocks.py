"""Clocks: reminders and losses on time, as timed work; deadlines after downtime."""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable

from bot.rules import (
    Color,
    Position,
)
from bot.service.features.base import Outlet, Runtime, UseCase
from bot.service.features.challenges import Challenges
from bot.service.features.common import (
    DOWNTIME_THRESHOLD,
    HEARTBEAT_SECONDS,
    log,
)
from bot.service.features.games import Games
from bot.service.features.opponent import Opponent
from bot.service.features.own_puzzles import OwnPuzzles
from bot.service.features.puzzles import Puzzles
from bot.service.features.storm import Storm
from bot.service.features.tournaments import Tournaments
from bot.service.notifications import PrivateReminder, Reminder
from bot.storage import StaleGame, StorageBusy, StorageFull, StorageGone, StorageUnavailable, in_transaction
from bot.storage.records import GameRecord


class Clocks(UseCase):
    """Clocks: reminders and losses on time, as timed work; deadlines after downtime; and the
    other timed work of a round (the bot's games, lapsed challenges, daily posts)."""

    def __init__(self, runtime: Runtime, outlet: Outlet, games: Games, opponent: Opponent,
                 challenges: Challenges, puzzles: Puzzles, tournaments: Tournaments | None = None) -> None:
        super().__init__(runtime, outlet)
        self.tournaments = tournaments
        # The scans of finished games and the players' reminders (set by the composition).
        self.own_puzzles: OwnPuzzles | None = None
        # Storm runs whose time is up are finished here when no page asked (set by the composition).
        self.storm: Storm | None = None
        self.games = games
        self.opponent = opponent
        self.challenges = challenges
        self.puzzles = puzzles
        # (monotonic, wall) of this process's last look at the clocks, per platform ticked.
        self._ticks: dict[str | None, tuple[float, float]] = {}
        # When this process last wrote its heartbeat, per platform ticked.
        self._beats: dict[str | None, float] = {}

    def run_due(self, platform: str | None = None, now: float | None = None) -> int:
        """Do the timed work that is due (reminders when a tenth of the move time is left, losses
        on time): each change and its message go into one transaction.  How many messages were
        written.  Each platform's process runs only its own games (``platform``)."""
        now = self.clock() if now is None else now
        written = 0
        try:
            self.away_while_running(platform, now)
            since = now - self._beats.get(platform, float("-inf"))
            # A wall clock stepped back renews the heartbeat at once: an outage after the step must
            # be measured from the new time, not from a heartbeat "in the future".
            if since >= HEARTBEAT_SECONDS or since < 0:
                self.storage.settings.beat(platform, now)
                self._beats[platform] = now
            # All due now: ended in game order, the order a ratings rebuild reads games that finished
            # at the same moment in.
            due = sorted(self.storage.games.due(now, platform), key=lambda row: row.id)
        except StorageUnavailable:
            return 0            # the store logs the outage (once a minute); the next round tries again
        except StorageBusy:
            log.warning("deadline check skipped: the database is busy")
            due = []
        except StorageFull:
            due = []            # the store logs the full disk; the next round tries again
        for row in due:
            if row.deadline_at is None:
                continue            # due_games returns only games with a clock; a game without one waits for nothing
            try:
                # Run again if it loses a race it may still win (a serialization failure on a
                # server with row locks); a game that moved on meanwhile is StaleGame.
                if in_transaction(self.storage, functools.partial(self._deadline_notice, row, now)):
                    written += 1
            except StaleGame:
                continue
            except StorageUnavailable:
                break           # the store logs the outage; the next round tries again
            except StorageBusy:
                # The next run tries again.
                log.warning("deadline work stopped at game %s: the database is busy", row.id)
                break
            except (StorageFull, StorageGone):
                break
            except Exception:
                # One damaged game must not stop every other clock.
                log.exception("deadline work failed for game %s", row.id)
        for name in {row.platform for row in due}:
            self._notify(name)
        try:
            # Games the bot is to move in and nothing thinks about (after a restart, say).
            self.opponent.resume_bots(platform)
        except StorageUnavailable:
            return written      # the store logs the outage; the next round does the rest
        except StorageBusy:
            log.warning("bot games not looked at: the database is busy")
        except StorageFull:
            pass
        try:
            # Challenges nobody took: closed, their messages lose their buttons, their chats hear it.
            written += self.challenges.expire_challenges(platform, now)
        except StorageUnavailable:
            return written
        except StorageBusy:
            log.warning("lapsed challenges not closed yet: the database is busy")
        except StorageFull:
            pass
        if self.tournaments is not None:
            # Rounds past their deadline: forfeits and adjudications (after the games' own clocks,
            # so a game lost on time before the deadline keeps that result).
            written += self.tournaments.run_due(platform, now)
        if self.storm is not None:
            written += self.storm.run_due(platform, now)
        if self.own_puzzles is not None:
            written += self.own_puzzles.run_due(platform, now)
        try:
            written += self.puzzles.post_dailies(platform, now)
        except StorageUnavailable:
            return written
        except StorageBusy:
            log.warning("daily puzzles not posted yet: the database is busy")
        except StorageFull:
            pass
        return written

    def _mover_lang(self, row: GameRecord) -> str:
        """The language to tell the side to move about its clock in."""
        turn = Position.from_fen(row.variant, row.fen).turn
        return self.games.game_lang(row, row.white_id if turn == Color.WHITE else row.black_id)

    def _deadline_notice(self, row: GameRecord, now: float) -> bool:
        """End the game on time or mark its reminder sent, and write its notification (worded
        when delivered); whether one was written."""
        if row.deadline_at is None:
            return False            # no clock: nothing to remind of or to lose on
        lang = self._mover_lang(row)
        if row.deadline_at <= now:
            # A tournament round this loss ends is told after the game's final board.
            with self.tournaments.notices_after() if self.tournaments is not None else contextlib.nullcontext():
                self.tell(row.platform, row.chat_id, self.games.time_out(lang, row, now))
            return True
        if not self.storage.games.mark_reminded(row.id, row.version):
            return False
        turn = Position.from_fen(row.variant, row.fen).turn
        left = row.deadline_at - now
        mover = self.games.player_to_move(row)
        if mover is not None and self.games.tell_privately(row, mover[0], PrivateReminder(row.id, lang, turn, left),
                                                           now=now):
            # Asked for private notices: the reminder goes there instead of pinging in the group.
            return False
        self.tell(row.platform, row.chat_id, Reminder(row.id, lang, turn, left, self.games.turn_notice(row, now)))
        return True

    def watching(self, platform: str | None) -> bool:
        """Whether this process looks at the clocks of ``platform`` (its timed work ran here)."""
        return platform in self._ticks

    def _running_clock(self) -> Callable[[], float] | None:
        """The monotonic clock that goes with ``self.clock`` (see GameService), if there is one."""
        if self.runtime.monotonic is not None:
            return self.runtime.monotonic
        return time.monotonic if self.clock is time.time else None

    def away_while_running(self, platform: str | None, now: float) -> float:
        """A suspended host, a paused VM or a wall clock stepped forward: the wall clock moved more
        than DOWNTIME_THRESHOLD beyond the time this process ran since its last look.  Deadlines
        move forward by that jump, as after a restart (once: a process of the same platform that
        already did it renewed the heartbeat).  The seconds added."""
        monotonic = self._running_clock()
        if monotonic is None:
            return 0.0
        running = monotonic()
        last = self._ticks.get(platform)
        jump = 0.0 if last is None else (now - last[1]) - (running - last[0])
        if jump <= DOWNTIME_THRESHOLD:
            self._ticks[platform] = (running, now)
            return 0.0
        # Kept until it is done: a busy database leaves the jump for the next look.
        gap = self.storage.settings.resume_after_downtime(platform, now, DOWNTIME_THRESHOLD, limit=jump)
        self._ticks[platform] = (running, now)
        self._beats[platform] = now
        if gap:
            log.warning("the clock jumped %.0f s ahead while running: %s deadlines extended by %.0f s",
                        jump, platform or "all", gap)
        return gap

    def resume_after_downtime(self, platform: str | None = None) -> float:
        """Call once at start-up: when no process served ``platform`` (None: all) for longer than
        DOWNTIME_THRESHOLD, every active game's deadline moves forward by the time the bot was
        away, so no one loses on time for the bot's outage.  The seconds added (0 if none)."""
        now = self.clock()
        gap = self.storage.settings.resume_after_downtime(platform, now, DOWNTIME_THRESHOLD)
        self._beats[platform] = now
        monotonic = self._running_clock()
        if monotonic is not None:
            self._ticks[platform] = (monotonic(), now)
        if gap:
            log.warning("the bot was down for %.0f s: %s deadlines extended by that", gap, platform or "all")
        return gap
