"""Puzzle runs and the chats' best: the streak (puzzles of rising difficulty one after another,
one wrong move ends the run, one skip a run), personal bests, and each chat's record per mode and
variant with the one message that shows it (edited in place when the record is beaten).

A streak's puzzles are personal posts (``Puzzles``): their boards, buttons, typed answers and
links work as for any /puzzle.  ``Puzzles`` is handed this use case as its ``RunHook``: it asks
whether a post's run has left it (a stale board of an ended run changes nothing), refuses hints on
a run's post, and after an answer asks what the run says next (the next board, or the run's end).

Hints are refused in a streak, as lichess has none: the score counts puzzles solved unaided, so a
hinted solve could not count, and one that counted would make the personal and the chat's best
mean less.  A streak is unrated, as lichess's is: it is scored by its length, and its puzzles
climb past the player's level until one is missed, so rating them would take rating for the miss
every run ends with (own-puzzle reviews are unrated too, for their own reason).

The streak's progress is a compare-and-set on the run's version, after the answer's own unit of
work: a run left behind by a crash between the two (its post solved or missed, the run not moved
on) is settled the next time the player asks for it (``/streak``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from bot.puzzles import bank
from bot.rules import Position
from bot.service.features.base import Outlet, Runtime, UseCase
from bot.service.features.games import Games
from bot.service.features.identity import DM_PREFIX, Caller
from bot.service.features.results_puzzles import (
    AnswerWrong,
    Board,
    GaveUp,
    PuzzleInPrivate,
    PuzzleOpened,
    Solved,
    Step,
)
from bot.service.notifications import ChatRecordBeaten
from bot.storage import StorageContention
from bot.storage.records import ChatBestRecord, PuzzlePostRecord, PuzzleRunRecord
from bot.storage.repositories import RunChange

STREAK = "streak"
STORM = "storm"
MODES = (STREAK, STORM)
# The streak's difficulty: the first puzzle is among the variant's easiest (its lowest rating),
# each one solved raises the target by STREAK_STEP, and a puzzle is picked among the unseen ones
# rated within STREAK_BAND above the target (else the nearest above, else the hardest left).
STREAK_STEP = 40
STREAK_BAND = 100
STREAK_SKIPS = 1


# -- results ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RecordOutcome:
    """What a finished run's score did: ``personal_before`` the player's best before it (None: none),
    ``personal_best`` whether it is their new best; ``chat_best`` the chat's record now (None: none,
    or a private chat, which keeps none), ``chat_record`` whether this score made it; the record
    it beat (``beaten_name``, ``beaten_score``; None: the first)."""

    mode: str
    variant: str
    score: int
    personal_before: int | None
    personal_best: bool
    chat_best: ChatBestRecord | None
    chat_record: bool
    beaten_name: str | None = None
    beaten_score: int | None = None

    @property
    def best(self) -> int:
        """The player's best now."""
        return max(self.score, self.personal_before or 0)


@dataclass(frozen=True)
class StreakBoard:
    """A streak's puzzle to solve now: the run (its score so far, the skip left), its board and the
    puzzle's starting rating; ``resumed``: the run was already under way; ``asked``: the variant the
    player asked a new streak of, not the running one's (which goes on: one run at a time)."""

    run: PuzzleRunRecord
    board: Board
    rating: int
    resumed: bool = False
    asked: str | None = None

    @property
    def skips_left(self) -> int:
        return max(0, STREAK_SKIPS - self.run.skips)


@dataclass(frozen=True)
class StreakInPrivate:
    """A streak asked for where nothing can be shown to one member (a Telegram group): it is played
    in the member's private chat, which ``waiting`` (a PuzzleInPrivate: its link the chat layer's
    to make) opens on the run's current puzzle; ``asked`` as for ``StreakBoard``."""

    run: PuzzleRunRecord
    waiting: PuzzleInPrivate
    asked: str | None = None


@dataclass(frozen=True)
class StreakOver:
    """The run ended (a wrong move, or given up) with ``score`` solved; what the score did."""

    run: PuzzleRunRecord
    record: RecordOutcome
    private: bool = False


@dataclass(frozen=True)
class StreakRefused:
    """Nothing was done: ``reason`` a catalog key's last part (no_run, no_skip, stale, none_left)."""

    reason: str
    private: bool = True


@dataclass(frozen=True)
class StreakBests:
    """A player's best and the chat's record in a variant (shown with /streak best)."""

    variant: str
    personal: int | None
    chat: ChatBestRecord | None


StreakResult = StreakBoard | StreakInPrivate | StreakOver | StreakRefused | StreakBests
# What a run says after an answer to its post (``Acted.follow``).
RunFollow = StreakBoard | StreakOver


# -- the use case -------------------------------------------------------------------------------------

class PuzzleRuns(UseCase):
    """Streak runs, personal bests and the chats' records (storm, H4's, records its score here)."""

    def __init__(self, runtime: Runtime, outlet: Outlet, games: Games) -> None:
        super().__init__(runtime, outlet)
        self.games = games

    # -- the chat's best ------------------------------------------------------------------------------

    def record_score(self, platform: str, chat_id: str, mode: str, variant: str, user_id: str, name: str,
                     score: int, at: float) -> RecordOutcome:
        """A finished run's ``score``: the player's personal best and the chat's record (per mode and
        variant) raised when it beats them; a new chat record puts the chat's one record message in
        the outbox, in the chat's language: the first time a new post, later an edit of that same
        message.  A private chat keeps no record (its player's best is theirs already).  Called
        inside the caller's unit of work, it joins it, and the caller wakes the platform's adapter
        after its commit when ``chat_record``."""
        if mode not in MODES:
            raise ValueError(f"unknown run mode {mode!r}")
        runs = self.storage.puzzle_runs
        with self.storage.transaction():
            before = runs.personal_best(platform, user_id, mode, variant)
            personal = score > 0 and runs.raise_personal_best(platform, user_id, mode, variant, score, at)
            if self._keeps_records(platform, chat_id):
                old = runs.chat_best(platform, chat_id, mode, variant)
                made = score > 0 and runs.raise_chat_best(platform, chat_id, mode, variant, score, user_id, name, at)
                best = runs.chat_best(platform, chat_id, mode, variant)
                if made and best is not None:
                    # The chat's language, else the record holder's (the chat has none of its own).
                    player = self.storage.players.get(platform, user_id)
                    lang = self.games.chat_lang(platform, chat_id, player.language if player is not None else None)
                    self.tell(platform, chat_id, ChatRecordBeaten(
                        mode, variant, lang, score, name, old.message_id if old is not None else None,
                        old.name if old is not None else None, old.score if old is not None else None))
            else:
                old, made, best = None, False, None
        if made and not self.storage.in_transaction():
            # Woken once the row is committed (a caller's unit of work wakes it after its own).
            self._notify(platform)
        return RecordOutcome(mode, variant, score, before, personal, best, made,
                             old.name if old is not None and made else None,
                             old.score if old is not None and made else None)

    def _keeps_records(self, platform: str, chat_id: str) -> bool:
        if chat_id.startswith(DM_PREFIX):
            return False
        chat = self.storage.players.chat(platform, chat_id)
        return chat is None or chat.kind != "private"

    def remember_record_message(self, platform: str, chat_id: str, message_id: str, record: str) -> None:
        """An adapter sent the message that shows the chat's record ``record`` ("<mode>:<variant>"):
        beating it later edits that message."""
        mode, _, variant = record.partition(":")
        self.storage.puzzle_runs.set_chat_best_message(platform, chat_id, mode, variant, message_id)

    def record_message(self, platform: str, chat_id: str, record: str) -> str | None:
        """The message that shows the chat's record ``record`` ("<mode>:<variant>") now, or None."""
        mode, _, variant = record.partition(":")
        best = self.storage.puzzle_runs.chat_best(platform, chat_id, mode, variant)
        return best.message_id if best is not None else None

    def bests(self, caller: Caller, variant: str) -> StreakBests:
        runs = self.storage.puzzle_runs
        chat = (runs.chat_best(*caller.key, STREAK, variant) if self._keeps_records(*caller.key) else None)
        return StreakBests(variant, runs.personal_best(caller.platform, caller.user_id, STREAK, variant), chat)

    # -- /streak ---------------------------------------------------------------------------------------

    def streak(self, caller: Caller, variant: str, named: bool = False) -> StreakResult:
        """/streak [variant]: the player's running streak where it stands (settled first: a post solved
        or missed moves it on), else a new one of ``variant`` from its easiest puzzles.  ``named``:
        the player named ``variant`` (a running run of another is shown saying so)."""
        runs = self.storage.puzzle_runs
        running = runs.running(caller.platform, caller.user_id, STREAK)
        if running is not None:
            settled = self._settle(caller, running)
            if isinstance(settled, StreakOver):
                return settled
            current = settled.run if settled is not None else running
            shown = self._show(caller, current)
            if named and variant != current.variant and isinstance(shown, StreakBoard | StreakInPrivate):
                return replace(shown, asked=variant)
            return shown
        puzzles = bank.load(variant)
        if not puzzles:
            return StreakRefused("none_left", private=False)
        target = min(_rating(p) for p in puzzles)
        with self.storage.transaction():
            run_id = runs.start(caller.platform, caller.user_id, caller.chat_id, STREAK, variant,
                                json.dumps({"target": target, "seen": []}), caller.at)
            if run_id is None:
                raise StorageContention("another streak of this player started at the same time")
            run = runs.get(run_id)
            assert run is not None            # made just now
            run, puzzle = self._next_post(caller, run, run.score, run.skips)
        if not caller.where.whisper and caller.where.invites and not caller.where.private:
            # A group where nothing can be shown to one member: the run is played privately.
            assert run.post_id is not None
            return StreakInPrivate(run, PuzzleInPrivate(caller.name, run.post_id))
        return self._board(caller, run, puzzle)

    def skip(self, caller: Caller, run_id: int | None = None, post_id: int | None = None) -> StreakResult:
        """The run's one skip (``/streak skip``, or the Skip button of run ``run_id`` on the board of
        post ``post_id``): the next puzzle at the same difficulty, the score unchanged.  A button
        of a puzzle the run has left, or one that does not say its puzzle (None), changes nothing:
        it would skip the puzzle being solved now, which its board never showed."""
        runs = self.storage.puzzle_runs
        run = runs.get(run_id) if run_id is not None else runs.running(caller.platform, caller.user_id, STREAK)
        if run is None or run.platform != caller.platform or run.user_id != caller.user_id:
            return StreakRefused("no_run" if run_id is None else "stale")
        if run.status != "running":
            return StreakRefused("stale")
        if run_id is not None and post_id != run.post_id:
            return StreakRefused("stale_skip")
        settled = self._settle(caller, run)
        if settled is not None:
            return settled
        if run.skips >= STREAK_SKIPS:
            return StreakRefused("no_skip")
        with self.storage.transaction():
            run, puzzle = self._next_post(caller, run, run.score, run.skips + 1)
        return self._board(caller, run, puzzle)

    def opened(self, caller: Caller, opened: object) -> StreakBoard | None:
        """A puzzle opened from a link (``PuzzleOpened``) that is the caller's running streak's
        current one, as the streak's board; None for any other."""
        if not isinstance(opened, PuzzleOpened):
            return None
        post = opened.board.post
        run = self.storage.puzzle_runs.of_post(post.id)
        if (run is None or run.status != "running" or run.post_id != post.id or run.user_id != caller.user_id
                or run.platform != caller.platform):
            return None
        puzzle = bank.by_id(run.variant, post.puzzle_id)
        if puzzle is None:
            return None
        return StreakBoard(run, opened.board, _rating(puzzle), resumed=bool(run.score or run.skips))

    # -- the hook Puzzles calls ------------------------------------------------------------------------

    def left(self, post: PuzzlePostRecord) -> bool:
        """Whether ``post`` was a run's puzzle that the run has left (ended, skipped, moved on)."""
        if post.kind != "personal":
            return False
        run = self.storage.puzzle_runs.of_post(post.id)
        return run is not None and (run.status != "running" or run.post_id != post.id)

    def no_hints(self, post: PuzzlePostRecord) -> bool:
        """Whether hints are refused on ``post`` (a streak's puzzle: see the module's docstring)."""
        return post.kind == "personal" and self.storage.puzzle_runs.of_post(post.id) is not None

    def unrated(self, post: PuzzlePostRecord) -> bool:
        """Whether an answer to ``post`` leaves the puzzle ratings alone: a streak's puzzle (see the
        module's docstring)."""
        return self.no_hints(post)

    def follow(self, caller: Caller, post: PuzzlePostRecord, step: Step) -> RunFollow | None:
        """What the run of ``post`` says after an answer came to ``step``: solved, its next puzzle; a
        wrong move (or giving up), the run's end; anything else (or no run), nothing."""
        if post.kind != "personal" or not isinstance(step, Solved | AnswerWrong | GaveUp):
            return None
        run = self.storage.puzzle_runs.of_post(post.id)
        if run is None or run.status != "running" or run.post_id != post.id or run.user_id != caller.user_id:
            return None
        try:
            return self._settle(caller, run, solved=isinstance(step, Solved))
        except StorageContention:
            # Another answer moved the run on meanwhile: that answer says what follows.
            return None

    # -- inside -------------------------------------------------------------------------------------------

    def _settle(self, caller: Caller, run: PuzzleRunRecord, solved: bool | None = None) -> RunFollow | None:
        """Move a run on from its current post when that post is done: solved (the next puzzle) or
        missed or given up (the run ends); None while it is open.  ``solved``: what the answer
        just judged (None: read from the stored attempt)."""
        if run.post_id is None:
            return None
        if solved is None:
            attempt = self.storage.puzzles.attempt(run.post_id, run.user_id)
            if attempt is None:
                return None
            if attempt.solved_at is not None and not attempt.misses:
                solved = True
            elif attempt.misses or attempt.rated_score is not None:
                solved = False
            else:
                return None
        whisper = not caller.where.private
        if solved:
            with self.storage.transaction():
                moved, puzzle = self._next_post(caller, run, run.score + 1, run.skips)
            return self._board(caller, moved, puzzle)
        with self.storage.transaction():
            ended = self.storage.puzzle_runs.save(run.id, run.version, RunChange(
                "ended", run.score, run.skips, run.post_id, run.state, caller.at))
            record = self.record_score(run.platform, run.chat_id, STREAK, run.variant, run.user_id, caller.name,
                                       run.score, caller.at)
        if record.chat_record:
            self._notify(run.platform)
        return StreakOver(ended, record, private=whisper)

    def _next_post(self, caller: Caller, run: PuzzleRunRecord, score: int,
                   skips: int) -> tuple[PuzzleRunRecord, dict[str, Any]]:
        """Give the run its next puzzle (inside the caller's unit of work): a new personal post, the
        run saved with it; the run as saved and the puzzle."""
        state = _state(run)
        target = int(state.get("target", 0)) + (STREAK_STEP if score > run.score else 0)
        seen = [str(s) for s in state.get("seen", [])]
        puzzle = self._pick(run.variant, target, set(seen))
        if puzzle is None:
            # The bank is used up: the run goes on among the puzzles seen longest ago.
            seen = []
            puzzle = self._pick(run.variant, target, set())
        assert puzzle is not None               # the bank had puzzles when the run started
        post_id = self.storage.puzzles.create_personal_post(caller.platform, caller.chat_id, caller.user_id,
                                                             run.variant, puzzle["id"], caller.at)
        saved = self.storage.puzzle_runs.save(run.id, run.version, RunChange(
            "running", score, skips, post_id, json.dumps({"target": target, "seen": [*seen, puzzle["id"]]})))
        return saved, puzzle

    def _pick(self, variant: str, target: int, seen: set[str]) -> dict[str, Any] | None:
        fresh = [p for p in bank.load(variant) if p["id"] not in seen]
        if not fresh:
            return None
        band = [p for p in fresh if target <= _rating(p) < target + STREAK_BAND]
        if band:
            return self.rng.choice(band)
        above = [p for p in fresh if _rating(p) >= target]
        if above:
            return min(above, key=lambda p: (_rating(p), p["id"]))
        return max(fresh, key=lambda p: (_rating(p), p["id"]))

    def _show(self, caller: Caller, run: PuzzleRunRecord) -> StreakResult:
        """A running run's current puzzle, where the player now stands in it."""
        post = self.storage.puzzles.post(run.post_id) if run.post_id is not None else None
        puzzle = bank.by_id(run.variant, post.puzzle_id) if post is not None else None
        if post is None or puzzle is None:
            # Its puzzle left the bank: the run goes on with another at the same difficulty.
            with self.storage.transaction():
                run, puzzle = self._next_post(caller, run, run.score, run.skips)
            return self._board(caller, run, puzzle)
        if not caller.where.whisper and caller.where.invites and not caller.where.private:
            return StreakInPrivate(run, PuzzleInPrivate(caller.name, post.id))
        return self._board(caller, run, puzzle, resumed=True)

    def _board(self, caller: Caller, run: PuzzleRunRecord, puzzle: dict[str, Any],
               resumed: bool = False) -> StreakBoard:
        assert run.post_id is not None
        post = self.storage.puzzles.post(run.post_id)
        assert post is not None
        attempt = self.storage.puzzles.attempt(post.id, run.user_id)
        progress = list(attempt.progress) if attempt is not None else []
        pos = Position.from_fen(run.variant, puzzle["fen"])
        for text in progress:
            pos = pos.play(pos.parse_move(text))
        board = Board(post, pos, len(progress), personal=True, private=not caller.where.private)
        return StreakBoard(run, board, _rating(puzzle), resumed)


def _rating(puzzle: dict[str, Any]) -> int:
    return int(round(float(puzzle.get("rating") or 0)))


def _state(run: PuzzleRunRecord) -> dict[str, Any]:
    try:
        state = json.loads(run.state)
    except ValueError:
        return {}
    return state if isinstance(state, dict) else {}
