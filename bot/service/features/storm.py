"""Storm (issue 33): as many puzzles as possible in 3 minutes, on the web board.

A run is started from a chat (``Storm.start``) and played on the web board (``bot.service.web``,
page ``/storm/<id>``): the bank's puzzles of one variant in order of rising starting rating, from
easy.  A player has one running run at a time: /storm asked again gives that run back.  Its 3
minutes start when its player first opens it (the page or its API: ``view`` or ``answer``, which
only the run's signed link reaches), not at /storm: a member of a group must first open the private
chat with the bot.  A run never opened lapses after ``OPEN_SECONDS``, unseen.  The server keeps the
time: every answer is judged against the run's ``ends_at`` as stored,
so an answer after the time is up is refused and changes nothing, whatever the page's own clock
showed.  A wrong move costs ``MISS_SECONDS`` (the end comes earlier) and moves on to the next
puzzle; a right one plays the forced reply, and the puzzle's last move scores one.

The run ends when its time is up: the next request on it, or the timed work (``run_due``, called
by ``Clocks``), whichever comes first, finishes it once (a compare-and-set on its version), writes
its result to the chat where /storm was asked (``StormFinished`` through the outbox, in the chat's
language) and gives the score to the chat's records (``ScoreBoard.record_score``, the puzzle runs'
high-score message).  A run in which no move was answered ends without either: a line of "0
solved, 0 wrong" for a run never played would only flood the group, and it is no score.
"""

from __future__ import annotations

import functools
import json
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from bot.puzzles import bank
from bot.puzzles.solve import Verdict, judge, position_after
from bot.rules import IllegalMove, Move, Position
from bot.service.features.base import Outlet, Runtime, UseCase
from bot.service.features.identity import Caller
from bot.service.notifications import StormFinished
from bot.storage import StorageBusy, StorageContention, StorageFull, StorageGone, StorageUnavailable, in_transaction
from bot.storage.records import StormRunRecord
from bot.storage.repositories import NewStormRun, StormChange

log = logging.getLogger("bot.storm")

# How long a run lasts, and what a wrong move costs of it.
RUN_SECONDS = 180.0
MISS_SECONDS = 10.0
# How long a run waits to be opened (its link may sit in a private chat the member has not opened
# yet) before it lapses unseen; until it does, /storm gives it back.
OPEN_SECONDS = 3600.0
# The puzzles a run is given at its start (more than anyone solves in 3 minutes: lichess's best
# storms are about 60), picked one from each slice of the bank sorted by rating, so ratings rise.
RUN_PUZZLES = 90
MODE = "storm"


class ScoreBoard(Protocol):
    """Where a finished run's score goes: the player's best and the chat's high-score message
    (``PuzzleRuns`` of ``bot.service.features.puzzle_runs``)."""

    def record_score(self, platform: str, chat_id: str, mode: str, variant: str, user_id: str, name: str,
                     score: int, at: float) -> Any: ...


@dataclass(frozen=True)
class StormStarted:
    """A run to play: ``run_id`` (its page is ``/storm/<run_id>``), its variant and when it ends
    (not opened yet: when it lapses); ``running`` when it is the player's run already running
    (asked again: given back, nothing new started)."""

    run_id: int
    variant: str
    ends_at: float
    puzzles: int
    running: bool = False


@dataclass(frozen=True)
class StormUnavailable:
    """No run can start: the variant has no puzzles in the bank."""

    variant: str


@dataclass(frozen=True)
class StormView:
    """A run as it is now (``at``): the stored row, the puzzle being played and its position
    after the moves played in it (None once the run is over), and the seconds left."""

    run: StormRunRecord
    at: float
    puzzle: dict[str, Any] | None
    position: Position | None
    moves: tuple[str, ...]

    @property
    def over(self) -> bool:
        return self.run.status != "running" or self.at >= self.run.ends_at

    @property
    def left(self) -> float:
        return 0.0 if self.over else max(0.0, self.run.ends_at - self.at)

    @property
    def index(self) -> int:
        return self.run.current


@dataclass(frozen=True)
class StormAnswered:
    """What an answer came to: ``verdict`` right (the line goes on), solved (scored; the next
    puzzle), wrong (the clock loses ``MISS_SECONDS``; the next puzzle), illegal (the rules refuse
    the move: ``error`` says why; nothing changed), stale (the answer was for a puzzle or position
    the run has left: nothing changed) or over (the time is up: nothing changed); ``played`` the
    moves played by it (the solver's and the forced replies), ``solution`` the puzzle's main line
    after a wrong move and ``expected`` its move at the ply answered; ``view`` the run now."""

    verdict: str
    view: StormView
    played: tuple[str, ...] = ()
    error: IllegalMove | None = None
    solution: tuple[str, ...] = ()
    expected: str = ""


def choose_puzzles(puzzles: Sequence[dict[str, Any]], count: int, pick: Any) -> list[str]:
    """``count`` puzzle ids in order of rising rating: the bank sorted by rating (then id), cut
    into ``count`` slices, one drawn from each (``pick``: a random.Random's ``choice``)."""
    ordered = sorted(puzzles, key=lambda p: (int(p.get("rating") or 1500), p["id"]))
    n = min(count, len(ordered))
    chosen = []
    for i in range(n):
        part = ordered[i * len(ordered) // n:(i + 1) * len(ordered) // n]
        chosen.append(pick(part)["id"])
    return chosen


class Storm(UseCase):
    """Storm runs: started from a chat, answered from the web board, ended by the clock."""

    def __init__(self, runtime: Runtime, outlet: Outlet, scores: ScoreBoard | None = None) -> None:
        super().__init__(runtime, outlet)
        # The chat's records (None: a service built without them; the result is still posted).
        self.scores = scores
        # The platforms of the runs this thread's unit of work ended (woken once it is committed).
        self._ended = threading.local()

    # -- starting ------------------------------------------------------------------------------

    def start(self, caller: Caller, variant: str, lang: str) -> StormStarted | StormUnavailable:
        """A new run of ``variant`` for the caller, its result to be told in the caller's chat in
        ``lang`` (the chat's language); or the caller's run still running, given back (whatever
        its variant).  A run whose time is up is finished first and a new one starts."""
        puzzles = bank.load(variant)
        if not puzzles:
            return StormUnavailable(variant)
        now = caller.at
        chosen = choose_puzzles(puzzles, RUN_PUZZLES, self.rng.choice)
        run = NewStormRun(platform=caller.platform, chat_id=caller.chat_id, user_id=caller.user_id,
                          name=caller.name, lang=lang, variant=variant,
                          puzzles=json.dumps(chosen, separators=(",", ":")), started_at=now,
                          ends_at=now + OPEN_SECONDS)

        def unit() -> StormStarted:
            with self.storage.transaction():
                running = self.storage.storm_runs.running(caller.platform, caller.user_id)
                if running is not None and now < running.ends_at:
                    return StormStarted(running.id, running.variant, running.ends_at,
                                        len(json.loads(running.puzzles)), running=True)
                if running is not None:
                    self._finish(running, now)
                run_id = self.storage.storm_runs.create(run)
                if run_id is None:
                    # Another /storm of the player's started one meanwhile: run again, it is given back.
                    raise StorageContention(f"a storm run of {caller.user_id} started meanwhile")
                return StormStarted(run_id, variant, run.ends_at, len(chosen))
        try:
            return in_transaction(self.storage, unit)
        finally:
            self._wake_ended()

    # -- reading -------------------------------------------------------------------------------

    def run(self, run_id: int) -> StormRunRecord | None:
        """The run as stored (whose it is: the board layer checks its link against it)."""
        return self.storage.storm_runs.get(run_id)

    def view(self, run_id: int) -> StormView | None:
        """The run now, asked by its player (the board layer checked the link): the first time,
        its clock starts; a run whose time is up is finished first (once: its result is told)."""
        def unit() -> StormView | None:
            with self.storage.transaction():
                row, now = self._opened(run_id)
                return None if row is None else self._view(row, now)
        try:
            return in_transaction(self.storage, unit)
        finally:
            self._wake_ended()

    def _open(self, row: StormRunRecord, now: float) -> StormRunRecord:
        """The run with its clock started, if this is its player's first look at it (inside the
        caller's transaction); a run that lapsed unopened stays as it is, to be finished."""
        if row.status != "running" or row.opened_at is not None or now >= row.ends_at:
            return row
        return self._save(row, StormChange(row.current, row.moves, row.solved, row.missed, now + RUN_SECONDS,
                                           opened_at=now))

    def _wake_ended(self) -> None:
        """Tell the platforms of the runs this thread just ended that a result waits in the outbox
        (committed by now; a unit run again may have noted one twice: waking twice is harmless)."""
        ended = getattr(self._ended, "platforms", None)
        self._ended.platforms = []
        for platform in set(ended or ()):
            self._notify(platform)

    def _view(self, row: StormRunRecord, now: float) -> StormView:
        ids = json.loads(row.puzzles)
        moves = tuple(json.loads(row.moves))
        if row.status != "running" or now >= row.ends_at or row.current >= len(ids):
            return StormView(row, now, None, None, moves)
        puzzle = bank.by_id(row.variant, ids[row.current])
        if puzzle is None:
            # A puzzle taken out of the bank since the run started: the run goes on without it.
            return StormView(row, now, None, None, moves)
        return StormView(row, now, puzzle, position_after(puzzle, list(moves)), moves)

    # -- answering -----------------------------------------------------------------------------

    def answer(self, run_id: int, index: int, ply: int, move: tuple[int, ...] | str) -> StormAnswered | None:
        """An answer to puzzle ``index`` of the run after ``ply`` moves of it: a tapped path
        (the squares) or a typed move.  None when there is no such run."""
        try:
            return in_transaction(self.storage, functools.partial(self._answer, run_id, index, ply, move))
        finally:
            self._wake_ended()

    def _opened(self, run_id: int) -> tuple[StormRunRecord | None, float]:
        """The run as its player now meets it (inside the caller's unit of work): its clock started
        if this is the first time, and finished (its result told once) if its time is up."""
        row = self.storage.storm_runs.get(run_id)
        now = self.clock()
        if row is None:
            return None, now
        row = self._open(row, now)
        if row.status == "running" and now >= row.ends_at:
            row = self._finish(row, now)
        return row, now

    def _answer(self, run_id: int, index: int, ply: int, move: tuple[int, ...] | str) -> StormAnswered | None:
        with self.storage.transaction():
            row, now = self._opened(run_id)
            if row is None:
                return None
            view = self._skip_missing(row, now)
            if view.over:
                return StormAnswered("over", view)
            if view.puzzle is None or view.position is None:
                return StormAnswered("over", view)
            if index != row.current or ply != len(view.moves):
                return StormAnswered("stale", view)
            answer: str | Move
            if isinstance(move, str):
                answer = move[:80]
            else:
                found = [m for m in view.position.legal_moves() if tuple(m.path) == move]
                if not found:
                    return StormAnswered("illegal", view, error=None)
                answer = found[0]
            judged = judge(view.puzzle, list(view.moves), answer)
            ids = json.loads(row.puzzles)
            if judged.verdict is Verdict.ILLEGAL:
                return StormAnswered("illegal", view, error=judged.error)
            if judged.verdict is Verdict.RIGHT:
                saved = self._save(row, StormChange(row.current, json.dumps([*view.moves, *judged.played]),
                                                    row.solved, row.missed, row.ends_at))
                return StormAnswered("right", self._view(saved, now), tuple(judged.played))
            if judged.verdict is Verdict.SOLVED:
                change = StormChange(row.current + 1, "[]", row.solved + 1, row.missed, row.ends_at)
                verdict = "solved"
            else:
                change = StormChange(row.current + 1, "[]", row.solved, row.missed + 1, row.ends_at - MISS_SECONDS)
                verdict = "wrong"
            saved = self._save(row, change)
            if saved.current >= len(ids) or now >= saved.ends_at:
                # Every puzzle played, or the miss took the last seconds.
                saved = self._finish(saved, now)
            solution = tuple(view.puzzle["solution"]) if verdict == "wrong" else ()
            expected = _expected(view.puzzle, list(view.moves)) if verdict == "wrong" else ""
            return StormAnswered(verdict, self._view(saved, now), tuple(judged.played), solution=solution,
                                 expected=expected)

    def _skip_missing(self, row: StormRunRecord, now: float) -> StormView:
        """The run's view, past any puzzle no longer in the bank (saved, so the page follows)."""
        view = self._view(row, now)
        ids = json.loads(row.puzzles)
        while not view.over and view.puzzle is None and row.current < len(ids):
            row = self._save(row, StormChange(row.current + 1, "[]", row.solved, row.missed, row.ends_at))
            if row.current >= len(ids):
                row = self._finish(row, now)
            view = self._view(row, now)
        return view

    def _save(self, row: StormRunRecord, change: StormChange) -> StormRunRecord:
        return self.storage.storm_runs.save(row.id, row.version, change)

    # -- ending --------------------------------------------------------------------------------

    def _finish(self, row: StormRunRecord, now: float) -> StormRunRecord:
        """End a running run (inside the caller's transaction): its result to its chat, its score
        to the chat's records, when any move was answered in it (else it ends unseen: the page
        still shows its end to its player, and nothing is a score).  The end is the earlier of now and its time."""
        at = min(now, row.ends_at)
        ended = self._save(row, StormChange(row.current, row.moves, row.solved, row.missed, row.ends_at,
                                            "finished", at))
        if row.solved + row.missed == 0 and row.moves == "[]":
            return ended
        self._ended.platforms = [*getattr(self._ended, "platforms", []), row.platform]
        self.tell(row.platform, row.chat_id, StormFinished(row.id, row.lang, row.user_id, row.name, row.variant,
                                                           row.solved, row.missed))
        if self.scores is not None:
            self.scores.record_score(row.platform, row.chat_id, MODE, row.variant, row.user_id, row.name,
                                     row.solved, at)
        return ended

    def run_due(self, platform: str | None = None, now: float | None = None) -> int:
        """Finish the runs whose time is up and that no page asked about since (each once); how
        many results were written.  Timed work: ``Clocks.run_due`` calls it."""
        now = self.clock() if now is None else now
        try:
            over = self.storage.storm_runs.over(now, platform)
        except (StorageUnavailable, StorageBusy, StorageFull, StorageGone):
            return 0            # the next round tries again
        written = 0
        for row in over:
            try:
                if in_transaction(self.storage, functools.partial(self._finish_due, row.id, now)):
                    written += 1
            except (StorageUnavailable, StorageBusy, StorageFull, StorageGone):
                break
            except Exception:
                # One damaged run must not keep the others from ending.
                log.exception("storm run %s could not be finished", row.id)
        self._wake_ended()
        return written

    def _finish_due(self, run_id: int, now: float) -> bool:
        with self.storage.transaction():
            row = self.storage.storm_runs.get(run_id)
            if row is None or row.status != "running" or now < row.ends_at:
                return False        # a page finished it meanwhile
            self._finish(row, now)
            return True


def _expected(puzzle: dict[str, Any], played: list[str]) -> str:
    """The move the puzzle wanted at the ply answered, in the position the player reached (a wrong
    move may come after a right one, which may have been another landing square the tree accepts
    than the main line's): the main line's move when it is accepted there, else the tree's first."""
    node: dict[str, Any] = puzzle.get("tree") or {}
    for move in played:
        node = node.get(move) or {}
    line = puzzle["solution"]
    main = line[len(played)] if len(played) < len(line) else ""
    return main if main in node or not node else next(iter(node))
