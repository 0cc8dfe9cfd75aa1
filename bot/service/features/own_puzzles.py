"""Puzzles from the players' own games (issue 33): every finished game is scanned in the background
for the golpes its players missed or allowed (``bot.puzzles.from_games``: the bank's own proof and
standard), each one becomes a puzzle of that player, and ``/puzzle mine`` serves them again and again
in Leitner boxes until they are solved cleanly four times in a row.

The queue is durable: a game is queued in the transaction that finishes it (it follows
GameFinished), so no finished game is missed by a restart, and claimed with a lease by one process
(``store.own_puzzles.claim_scans``) before the engine pool scans it, so several processes on one
database scan each game once.  Scans are timed work (``run_due``, from every platform's loop) and
run in the engine pool beside the bot's moves, never in its last free worker (a pool of one worker
scans only while it is idle).

A puzzle is served as an ordinary personal post (``PuzzlePostRecord.kind == "personal"``) whose
puzzle id is ``own:<number>``, so the answer flow (typed moves, buttons, hint, give up) is the
existing one; its one rated outcome (AttemptScored) is the review: solved with no hint and no wrong
move moves the puzzle up a box (back after 1, 3, 7 then 21 days; retired after that), anything
else brings it back the next day in the first box.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import time
from dataclasses import dataclass
from typing import Any

from bot.puzzles.from_games import GamePuzzle, scan_game
from bot.puzzles.solve import position_after
from bot.service.domain import AttemptScored, EventBus, GameFinished
from bot.service.features.base import Outlet, Runtime, UseCase
from bot.service.features.common import OWN_PREFIX, log, own_number
from bot.service.features.identity import Caller, Mention
from bot.service.features.results_puzzles import Board, PuzzleGiven, PuzzleInPrivate, PuzzleOpened
from bot.service.notifications import OwnPuzzlesDue
from bot.storage import BOT_ID, StorageBusy, StorageFull, StorageUnavailable, in_transaction
from bot.storage.records import GameRecord, GameScanRecord, OwnPuzzleRecord, PuzzlePostRecord
from bot.storage.repositories import NewOwnPuzzle, OwnReview

DAY = 86400.0
# Days until a puzzle solved cleanly comes back, box by box; solved cleanly once more after the
# last, it is retired.  A miss (a wrong move, a hint, giving up) brings it back the next day.
INTERVAL_DAYS = (1, 3, 7, 21)
MISS_DAYS = 1
# At most this many games scanned at once in the whole pool, and never in its last free worker.
MAX_SCANS = 1
# How long a process holds a game it scans before another may take it (a scan of a long game
# takes seconds; a process that died leaves it to the next after this).
SCAN_LEASE_SECONDS = 30 * 60.0
# A game whose scan was started this many times (its worker died each time) is given up.
MAX_SCAN_ATTEMPTS = 3
# What a ply costs the scan as the pool's queue counts it: measured 0.05-0.3 CPU-s for a 60-ply game
# (bench/puzzle_scan.py --parts cost), counted ten times over so that a scan waits in the queue's
# long lane behind the bot's quick moves.
SCAN_SECONDS_PER_PLY = 0.05
# Due puzzles counted for a message at most (more are shown as that many).
MAX_COUNTED = 99
# How often a process reads the queue of scans when no game finished here meanwhile, and how long
# after a game finished here every round reads it.
SCAN_LOOK_SECONDS = 60.0
FRESH_SECONDS = 5.0
# The player's latest games of a chat looked at for a scan still to come (/puzzle mine, nothing due).
RECENT_GAMES = 5
# How often a process looks for reminders to send (each is sent at most once a day).
REMINDER_LOOK_SECONDS = 60.0


def next_review(row: OwnPuzzleRecord, clean: bool, at: float) -> OwnReview:
    """The Leitner step of a review at ``at``: clean moves the puzzle up a box, else back to the first."""
    if not clean:
        return OwnReview(row.reviews, box=0, due_at=at + MISS_DAYS * DAY, lapses=row.lapses + 1, retired=False)
    if row.box >= len(INTERVAL_DAYS):
        return OwnReview(row.reviews, box=row.box + 1, due_at=row.due_at, lapses=row.lapses, retired=True)
    return OwnReview(row.reviews, box=row.box + 1, due_at=at + INTERVAL_DAYS[row.box] * DAY, lapses=row.lapses,
                     retired=False)


# -- results -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OwnOrigin:
    """Where a player's puzzle comes from: game ``game_id`` against ``opponent``, move ``move_number``;
    ``kind`` missed or allowed; ``due``: how many of theirs are due now, this one included."""

    game_id: int
    opponent: str
    move_number: int
    kind: str
    due: int


@dataclass(frozen=True)
class OwnGiven:
    """/puzzle mine: the player's due puzzle, as a personal puzzle (``given``), and where it is from."""

    given: PuzzleGiven | PuzzleInPrivate
    origin: OwnOrigin


@dataclass(frozen=True)
class OwnNoneDue:
    """/puzzle mine with nothing due: ``waiting`` puzzles not retired, the next due at ``next_due``;
    ``scanning``: the player's games of this chat still waiting for their scan (just finished)."""

    waiting: int
    next_due: float | None
    now: float
    scanning: int = 0


@dataclass(frozen=True)
class OwnReminderSet:
    """/puzzle remind on|off (``active``), or the setting as it is (``changed`` False); ``due`` now."""

    active: bool
    changed: bool
    due: int


OwnResult = OwnGiven | OwnNoneDue | OwnReminderSet


class _LostLease(Exception):
    """The scan's game was taken by another process meanwhile: what this one found is not kept."""


class OwnPuzzles(UseCase):
    """The players' puzzles from their own games: the background scan, /puzzle mine, the reviews
    and the reminders (see the module's docstring)."""

    def __init__(self, runtime: Runtime, outlet: Outlet, bus: EventBus) -> None:
        super().__init__(runtime, outlet)
        # Who holds a claimed scan: this process (a restarted one is another owner, and waits for
        # the lease of what its predecessor held).
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        self._reminders_looked: dict[str | None, float] = {}
        # When this process last found no more scans to claim, per platform, and when (monotonic) a
        # game last finished here: the queue is read on every round for a few seconds after a game
        # ends here (its transaction may commit after a round that started meanwhile), else at most
        # every SCAN_LOOK_SECONDS (games another process finished, a restart's backlog).
        self._scans_looked: dict[str | None, float] = {}
        self._finished_here = float("-inf")
        bus.subscribe(GameFinished, self._game_finished)
        bus.subscribe(AttemptScored, self._attempt_scored)

    # -- the queue and the scan ----------------------------------------------------------------------

    def _game_finished(self, event: GameFinished) -> None:
        """Queue a finished game for its scan, in the transaction that finished it."""
        game = event.game
        at = game.finished_at if game.finished_at is not None else self.clock()
        self.storage.own_puzzles.queue_scan(game.id, game.platform, at)
        self._finished_here = time.monotonic()

    def run_due(self, platform: str | None = None, now: float | None = None) -> int:
        """Timed work: start the scans the pool has room for, and write the reminders that are due;
        how many messages were written."""
        now = self.clock() if now is None else now
        try:
            self.start_scans(platform, now)
            return self.send_reminders(platform, now)
        except StorageUnavailable:
            return 0            # the store logs the outage; the next round tries again
        except StorageBusy:
            log.warning("own puzzles: scans and reminders wait, the database is busy")
        except StorageFull:
            pass
        return 0

    def _room(self) -> int:
        """How many more scans the pool takes now: at most MAX_SCANS at once, and one worker always
        left to the bot's moves; none while the bot has not started its pool.  A pool of one worker
        (a one-CPU machine, a common host for a small bot) scans only while it is idle: a scan costs
        at most a few tenths of a CPU-second, which is all a bot move asked meanwhile waits, and
        without it such a bot would never give anyone a puzzle of their own."""
        if not self.thinker.serving:
            return 0
        running = [key for key in self.thinker.running() if not (isinstance(key, tuple) and key[:1] == ("warm",))]
        scans = [key for key in running if isinstance(key, tuple) and key[:1] == ("scan",)]
        spare = self.thinker.workers - 1 if self.thinker.workers > 1 else 1
        return max(0, min(MAX_SCANS - len(scans), spare - len(running)))

    def start_scans(self, platform: str | None = None, now: float | None = None) -> int:
        """Claim pending games and hand them to the engine pool, as far as it has room; how many started."""
        room = self._room()
        if room <= 0:
            return 0
        now = self.clock() if now is None else now
        looked = self._scans_looked.get(platform)
        fresh = time.monotonic() - self._finished_here < FRESH_SECONDS
        if not fresh and looked is not None and 0 <= now - looked < SCAN_LOOK_SECONDS:
            return 0            # the usual round: no claim written while nothing new can be queued
        claimed = self.storage.own_puzzles.claim_scans(self.owner, now, now + SCAN_LEASE_SECONDS, room, platform)
        if len(claimed) < room:
            self._scans_looked[platform] = now
        else:
            self._scans_looked.pop(platform, None)      # more may wait: the next round looks again
        return sum(self._start_scan(scan, now) for scan in claimed)

    def _start_scan(self, scan: GameScanRecord, now: float) -> int:
        row = self.storage.games.get(scan.game_id)
        moves = [m.notation for m in self.storage.games.moves(scan.game_id)] if row is not None else []
        if row is None or row.status != "finished" or not moves:
            self.storage.own_puzzles.finish_scan(scan.game_id, self.owner, now, 0)
            return 0
        if scan.attempts > MAX_SCAN_ATTEMPTS:
            log.warning("own puzzles: game %s given up after %d scans", row.id, scan.attempts - 1)
            self.storage.own_puzzles.finish_scan(scan.game_id, self.owner, now, 0, failed=True)
            return 0
        key = ("scan", row.platform, row.id)
        if self.thinker.busy(key):
            # Still scanning here (the clock jumped past the lease): the claim renewed is kept.
            return 0
        taken = self.thinker.submit(key, scan_game, (row.variant, row.start_fen, moves),
                                    on_done=lambda found: self._scanned(row, found),
                                    on_error=lambda _error: self._scan_failed(row),
                                    chat=("scan", row.platform), user=("scan",),
                                    seconds=len(moves) * SCAN_SECONDS_PER_PLY)
        if not taken:
            self.storage.own_puzzles.release_scan(row.id, self.owner)
            return 0
        return 1

    def _scanned(self, row: GameRecord, found: list[GamePuzzle]) -> None:
        """The scan's puzzles are in (a result thread): each human player's kept, the scan done."""
        def keep() -> int:
            now = self.clock()
            added = 0
            for item in found:
                white = item.side == "white"
                user_id, opponent = (row.white_id, row.black_name) if white else (row.black_id, row.white_name)
                if user_id == BOT_ID:
                    continue
                number = self.storage.own_puzzles.add(NewOwnPuzzle(
                    platform=row.platform, user_id=user_id, variant=row.variant,
                    puzzle=json.dumps(item.puzzle, ensure_ascii=False, separators=(",", ":")), game_id=row.id,
                    ply=item.ply, move_number=item.move_number, opponent=opponent, kind=item.kind, now=now))
                added += number is not None
            if not self.storage.own_puzzles.finish_scan(row.id, self.owner, now, added):
                raise _LostLease(row.id)
            return added

        try:
            in_transaction(self.storage, keep)
        except _LostLease:
            log.info("own puzzles: game %s was scanned by another process meanwhile", row.id)
        except Exception as error:
            # Background work: the claim stays until its lease ends, and the game is scanned again then.
            log.warning("own puzzles: the scan of game %s was not kept (%r); it is tried again after its lease",
                        row.id, error)

    def _scan_failed(self, row: GameRecord) -> None:
        try:
            in_transaction(self.storage, lambda: self.storage.own_puzzles.finish_scan(row.id, self.owner, self.clock(),
                                                                                      0, failed=True))
        except Exception as error:
            log.warning("own puzzles: the failed scan of game %s was not noted (%r)", row.id, error)

    def scan(self, game_id: int) -> GameScanRecord | None:
        """A game's scan as stored (None: never queued)."""
        return self.storage.own_puzzles.scan(game_id)

    # -- /puzzle mine ----------------------------------------------------------------------------------

    def mine(self, caller: Caller) -> OwnGiven | OwnNoneDue:
        """The player's puzzle due longest (the post they left open here, if any), or how many wait
        and when the next is due."""
        own = self.storage.own_puzzles
        due = own.due(caller.platform, caller.user_id, caller.at, MAX_COUNTED)
        if not due:
            waiting = own.of_player(caller.platform, caller.user_id)
            return OwnNoneDue(len(waiting), min((p.due_at for p in waiting), default=None), caller.at,
                              self._scanning(caller))
        row = due[0]
        puzzle: dict[str, Any] = json.loads(row.puzzle)
        origin = OwnOrigin(row.game_id, row.opponent, row.move_number, row.kind, len(due))
        with self.storage.transaction():
            post, progress = self._open_post(caller, row)
        if not caller.where.whisper and caller.where.invites and not caller.where.private:
            # A group where nothing can be shown to one member: it waits in their private chat.
            return OwnGiven(PuzzleInPrivate(caller.name, post.id), origin)
        board = Board(post, position_after(puzzle, progress), len(progress), personal=True,
                      private=not caller.where.private)
        return OwnGiven(PuzzleGiven(board, puzzle.get("rating")), origin)

    def _scanning(self, caller: Caller) -> int:
        """How many of the player's latest games here are finished and not scanned yet."""
        recent = self.storage.games.recent(caller.platform, caller.chat_id, caller.user_id, RECENT_GAMES)
        scans = [self.storage.own_puzzles.scan(game.id) for game in recent if game.status == "finished"]
        return sum(1 for scan in scans if scan is not None and scan.status == "pending")

    def _open_post(self, caller: Caller, row: OwnPuzzleRecord) -> tuple[PuzzlePostRecord, list[str]]:
        """The player's unanswered post of this puzzle in this chat, else a new one; its progress."""
        key = f"{OWN_PREFIX}{row.id}"
        for post in self.storage.puzzles.personal_posts(caller.platform, caller.user_id, 20):
            if post.puzzle_id != key or post.chat_id != caller.chat_id:
                continue
            attempt = self.storage.puzzles.attempt(post.id, caller.user_id)
            if attempt is None or attempt.rated_score is None:
                return post, list(attempt.progress) if attempt is not None else []
        post_id = self.storage.puzzles.create_personal_post(caller.platform, caller.chat_id, caller.user_id,
                                                            row.variant, key, caller.at)
        created = self.storage.puzzles.post(post_id)
        assert created is not None          # written just now, in this transaction
        return created, []

    def origin_of(self, opened: object) -> OwnOrigin | None:
        """Where the puzzle a start link opened comes from, when it is one of the player's own."""
        if not isinstance(opened, PuzzleOpened):
            return None
        post = opened.board.post
        number = own_number(post.puzzle_id)
        row = self.storage.own_puzzles.get(number) if number is not None else None
        if row is None or row.user_id != post.user_id:
            return None
        due = self.due_count(row.platform, row.user_id, self.clock())
        return OwnOrigin(row.game_id, row.opponent, row.move_number, row.kind, due)

    def due_count(self, platform: str, user_id: str, now: float) -> int:
        return len(self.storage.own_puzzles.due(platform, user_id, now, MAX_COUNTED))

    # -- the reviews -----------------------------------------------------------------------------------

    def _attempt_scored(self, event: AttemptScored) -> None:
        """An attempt at a player's own puzzle got its outcome: the puzzle's next box (in the
        attempt's transaction)."""
        number = own_number(event.post.puzzle_id)
        attempt = event.attempt
        if number is None or attempt.rated_score is None:
            return
        row = self.storage.own_puzzles.get(number)
        at = attempt.rated_at if attempt.rated_at is not None else self.clock()
        # Only a review of a puzzle that was due counts (an old post answered late changes nothing).
        if row is None or row.retired or row.user_id != attempt.user_id or row.due_at > at:
            return
        clean = attempt.rated_score >= 1.0 and not attempt.hints and not attempt.misses
        if not self.storage.own_puzzles.review(row.id, next_review(row, clean, at)):
            log.info("own puzzle %s: reviewed by another answer first", row.id)

    # -- reminders -------------------------------------------------------------------------------------

    def remind(self, caller: Caller, active: bool | None, lang: str) -> OwnReminderSet:
        """/puzzle remind on|off: a reminder a day in this chat, when something is due (None: the setting)."""
        due = self.due_count(caller.platform, caller.user_id, caller.at)
        current = self.storage.own_puzzles.reminder(caller.platform, caller.user_id)
        if active is None:
            return OwnReminderSet(current is not None and current.active, False, due)
        self.storage.own_puzzles.set_reminder(caller.platform, caller.user_id, caller.chat_id, lang, active,
                                              caller.at)
        self._reminders_looked.clear()
        return OwnReminderSet(active, True, due)

    def send_reminders(self, platform: str | None, now: float) -> int:
        """Write the reminders due (at most one a day a player, only when something is due); how many."""
        looked = self._reminders_looked.get(platform)
        if looked is not None and 0 <= now - looked < REMINDER_LOOK_SECONDS:
            return 0
        self._reminders_looked[platform] = now
        written = 0
        # A day to the second: a reminder written at 09:00:00 may be written again at 09:00 tomorrow.
        for reminder in self.storage.own_puzzles.reminders(platform, now - DAY + 1):
            due = self.due_count(reminder.platform, reminder.user_id, now)
            if not due:
                continue
            player = self.storage.players.get(reminder.platform, reminder.user_id)
            mention = Mention(reminder.user_id, player.name if player else reminder.user_id,
                              player.username if player else None)

            def write(reminder: Any = reminder, mention: Mention = mention, due: int = due) -> bool:
                if not self.storage.own_puzzles.claim_reminder(reminder.platform, reminder.user_id, reminder.last_at,
                                                               now):
                    return False        # another process wrote it
                self.tell(reminder.platform, reminder.chat_id, OwnPuzzlesDue(reminder.language, due, mention))
                return True

            if in_transaction(self.storage, write):
                written += 1
                self._notify(reminder.platform)
        return written
