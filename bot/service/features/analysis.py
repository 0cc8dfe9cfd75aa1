"""/analysis: the engine's view of a finished game, as a short report, a board picture of the
biggest mistakes and an annotated PDN.

The analysis runs in the engine pool like the bot's moves; a chat has at most one analysis at a
time (so one chat cannot keep the pool to itself), and the result comes through the outbox.
"""

from __future__ import annotations

import logging
from typing import Any

from bot.ai import MoveNote, TableNote, annotate_pdn
from bot.ai.analyse import CONFIRM_FROM, CONFIRM_NODES, SCAN_NODES
from bot.rules import Color
from bot.service.features.base import Outlet, Runtime, UseCase
from bot.service.features.games import Games
from bot.service.features.identity import Caller
from bot.service.features.results_stats import (
    AnalysisOutcome,
    AnalysisRefused,
    AnalysisReport,
    AnalysisRequest,
    AnalysisStarted,
    Ending,
    Mistake,
)
from bot.service.notifications import AnalysisFailed, AnalysisReady
from bot.service.thinking import analysis_job
from bot.storage import in_transaction
from bot.storage.records import GameRecord

log = logging.getLogger("bot.service")

# The analysis's search budget in nodes, a position and to confirm a cost (bot/ai/analyse.py):
# nodes, not seconds, so a game gets the same analysis on any machine under any load.
ANALYSIS_NODES = (SCAN_NODES, CONFIRM_NODES)
# What that costs a move, about, on a small machine (bench/analysis_accuracy.py measures a 60-ply
# analysis): for the notice that the analysis started and for the pool's queue.
ANALYSIS_SECONDS = 0.3
# Mistakes shown per side, and the least loss (hundredths of a man) that counts as one: every such
# cost was confirmed by the analysis's deeper search.
MISTAKES_SHOWN = 3
MIN_MISTAKE = CONFIRM_FROM
# At most this many analyses at once in the whole pool, so the bot's own moves always find a worker.
MAX_RUNNING = 2


def _move_number(start_white: bool, ply: int) -> str:
    """'12.' for White's 12th move, '12...' for Black's."""
    offset = 0 if start_white else 1
    number = (ply + offset) // 2 + 1
    white = (ply + offset) % 2 == 0
    return f"{number}." if white else f"{number}..."


class Analysis(UseCase):
    """Analysis of finished games.  The report comes later, through the outbox: the engine's
    notes are kept in storage and the chat is sent a small notification (``AnalysisReady``),
    which the chat layer's presenter turns into the report (``stored_report``) in the language the
    request named when it is delivered; that the analysis could not be made is a notification
    too (``AnalysisFailed``)."""

    def __init__(self, runtime: Runtime, outlet: Outlet, games: Games) -> None:
        super().__init__(runtime, outlet)
        self.games = games

    def analyse(self, caller: Caller, request: AnalysisRequest) -> AnalysisOutcome:
        """Analyse a finished game of this chat: #id (typed, or the board replied to), else the
        asker's last one."""
        row = self._analysis_game(caller, request.game)
        if isinstance(row, AnalysisRefused):
            return row
        running = self.thinker.running("analysis")
        for key in running:
            # The keys are ("analysis", platform, chat id, game id), as submitted below.
            if isinstance(key, tuple) and len(key) == 4 and (key[1], key[2]) == caller.key:
                return AnalysisRefused("busy", int(key[3]))
        # Never every worker: on a small machine the bot's moves still find one (one worker: one analysis).
        if len(running) >= max(1, min(MAX_RUNNING, self.thinker.workers - 1)):
            return AnalysisRefused("pool_busy")
        moves = [m.notation for m in self.storage.games.moves(row.id)]
        if not moves:
            return AnalysisRefused("no_moves", row.id)
        lang = request.lang
        started = self.thinker.submit(("analysis", row.platform, row.chat_id, row.id), analysis_job,
                                      (row.variant, row.start_fen, moves, ANALYSIS_NODES),
                                      on_done=lambda notes: self._analysed(row, lang, notes),
                                      on_error=lambda err: self._analysis_failed(row, lang),
                                      chat=caller.key, user=(caller.platform, caller.user_id),
                                      seconds=len(moves) * ANALYSIS_SECONDS)
        if not started:
            return AnalysisRefused("busy", row.id)
        return AnalysisStarted(row.id, max(5, round(len(moves) * ANALYSIS_SECONDS)))

    def _analysis_game(self, caller: Caller, ref: int | None) -> GameRecord | AnalysisRefused:
        if ref is not None:
            row = self.storage.games.get(ref)
            if row is None or (row.platform, row.chat_id) != caller.key:
                return AnalysisRefused("unknown", ref)
            if row.status == "active":
                return AnalysisRefused("active", row.id)
            return row
        mine = [g for g in self.storage.games.recent(*caller.key, caller.user_id, limit=10) if g.status == "finished"]
        if mine:
            return mine[0]
        last = self.storage.games.find(*caller.key, status="finished", limit=1)
        if last:
            return last[0]
        return AnalysisRefused("none")

    def _analysis_failed(self, row: GameRecord, lang: str) -> None:
        self.tell(row.platform, row.chat_id, AnalysisFailed(row.id, lang))
        self._notify(row.platform)

    def report(self, row: GameRecord, raw: list[dict[str, Any]]) -> AnalysisReport:
        """The engine's notes on a game made a report: each side's worst mistakes, the evaluation
        graph's points and the annotated PDN."""
        game = self.games.stored_game(row)
        notes = []
        for note, before in zip(raw, game.positions, strict=False):
            notes.append(MoveNote(note["ply"], before.parse_move(note["move"]), before.parse_move(note["best"]),
                                  note["best_score"], note["played_score"], note.get("forced", False),
                                  TableNote.from_dict(note.get("table"))))
        white_to_start = game.start.white
        mistakes = []
        for side in (Color.WHITE, Color.BLACK):
            own = [n for n in notes if (n.ply % 2 == 0) == (white_to_start == (side == Color.WHITE))]
            worst = sorted((n for n in own if n.loss >= MIN_MISTAKE and n.move != n.best),
                           key=lambda n: (-n.loss, n.ply))[:MISTAKES_SHOWN]
            mistakes.append((side, [Mistake(_move_number(white_to_start, n.ply), n, game.positions[n.ply])
                                    for n in sorted(worst, key=lambda n: n.ply)]))
        # The evaluation after every ply from White's side, for the graph.
        evaluations = [float(n.played_score if (n.ply % 2 == 0) == white_to_start else -n.played_score)
                       for n in notes]
        # Where the game became a known ending, and each move that changed what it is.
        endings = [Ending(_move_number(white_to_start, n.ply), n, (n.ply % 2 == 0) == white_to_start,
                          i == 0 or notes[i - 1].table is None)
                   for i, n in enumerate(notes)
                   if n.table is not None and (n.table.changed or i == 0 or notes[i - 1].table is None)]
        game.tags["Annotator"] = "draughts-bot"
        return AnalysisReport(row, mistakes, evaluations, annotate_pdn(game, notes), endings)

    def stored_report(self, game_id: int, ply: int) -> AnalysisReport:
        """The report of the analysis kept for a game at ``ply``; LookupError when the game or
        its notes are not in storage (the notification is then undeliverable)."""
        row = self.games.game_row(game_id)
        kept = self.storage.games.analysis(game_id, ply)
        if kept is None:
            raise LookupError(f"the analysis of game {game_id} at ply {ply} is not stored")
        return self.report(row, list(kept.notes))

    def kept(self, game_id: int) -> tuple[AnalysisReport, list[dict[str, Any]]] | None:
        """The report of the analysis kept for a finished game at its last ply, with the engine's
        raw notes (the web board's view: marks, better moves, refutation lines); None when the game
        is not finished or has none."""
        row = self.storage.games.get(game_id)
        if row is None or row.status == "active":
            return None
        kept = self.storage.games.analysis(game_id, row.ply)
        if kept is None:
            return None
        raw = list(kept.notes)
        return self.report(row, raw), raw

    def running_for(self, game_id: int) -> bool:
        """An analysis of the game is being made or waits in the pool's queue."""
        return any(isinstance(key, tuple) and len(key) == 4 and key[3] == game_id
                   for key in self.thinker.running("analysis"))

    def _analysed(self, row: GameRecord, lang: str, raw: list[dict[str, Any]]) -> None:
        """The engine's notes are in: kept, and the chat told (the report is made when the
        notification is delivered: an outbox row stays small)."""
        def keep() -> None:
            self.storage.games.save_analysis(row.id, row.ply, raw, self.clock())
            self.tell(row.platform, row.chat_id, AnalysisReady(row.id, lang, row.ply))

        # Run again if it loses a race (a serialization failure on a server with row locks).
        in_transaction(self.storage, keep)
        self._notify(row.platform)
