"""/analysis: the engine's view of a finished game, as a short report, a board picture of the
biggest mistakes and an annotated PDN.

The analysis runs in the engine pool like the bot's moves; a chat has at most one analysis at a
time (so one chat cannot keep the pool to itself), and the result comes through the outbox.
"""

from __future__ import annotations

import logging
from typing import Any

from bot.ai import MoveNote, annotate_pdn
from bot.ai.analyse import ALLOWS_WIN, MISSES_WIN, STILL_WINNING
from bot.i18n import t
from bot.rules import Color
from bot.service import boards
from bot.service.commands import game_ref
from bot.service.events import Reply
from bot.service.features.base import Outlet, Runtime, UseCase
from bot.service.features.common import Ctx
from bot.service.features.games import Games
from bot.service.thinking import analysis_job
from bot.storage.records import GameRecord
from renderers.panels import render_analysis

log = logging.getLogger("bot.service")

# Seconds of search per position looked at (two per move that was not the engine's choice).
ANALYSIS_SECONDS = 0.1
# Mistakes shown per side, and the least loss (hundredths of a man) that counts as one.
MISTAKES_SHOWN = 3
MIN_MISTAKE = 30
# At most this many analyses at once in the whole pool, so the bot's own moves always find a worker.
MAX_RUNNING = 2


COST_KEYS = {MISSES_WIN: "analysis.cost_misses_win", ALLOWS_WIN: "analysis.cost_allows_win",
             STILL_WINNING: "analysis.cost_still_winning"}


def cost_text(lang: str, note: MoveNote) -> str:
    """What a mistake cost, for the report: in words when a forced win is involved, else in men
    with the language's decimal separator."""
    if note.cost is not None:
        return t(lang, COST_KEYS[note.cost])
    return f"{note.loss / 100:.1f}".replace(".", t(lang, "analysis.decimal_point"))


def mistake_entry(lang: str, number: str, note: MoveNote) -> str:
    """One line of the report: the move, its mark, the better move and the cost."""
    move = f"{note.move}{note.mark}"
    if note.cost is not None:
        return t(lang, "analysis.mistake_words", number=number, move=move, best=str(note.best),
                 cost=cost_text(lang, note))
    return t(lang, "analysis.mistake", number=number, move=move, best=str(note.best), loss=cost_text(lang, note))


def _move_number(start_white: bool, ply: int) -> str:
    """'12.' for White's 12th move, '12...' for Black's."""
    offset = 0 if start_white else 1
    number = (ply + offset) // 2 + 1
    white = (ply + offset) % 2 == 0
    return f"{number}." if white else f"{number}..."


class Analysis(UseCase):
    """Analysis of finished games."""

    def __init__(self, runtime: Runtime, outlet: Outlet, games: Games) -> None:
        super().__init__(runtime, outlet)
        self.games = games

    def cmd_analysis(self, ctx: Ctx, args: list[str]) -> list[Reply]:
        """Analyse a finished game of this chat: #id, the board replied to, else your last one."""
        ref, rest = game_ref(args)
        if rest:
            return [Reply(t(ctx.lang, "error.ref_only", command="analysis"))]
        row = self._analysis_game(ctx, ref)
        if isinstance(row, Reply):
            return [row]
        running = self.thinker.running("analysis")
        for _kind, platform, chat_id, game_id in running:
            if (platform, chat_id) == ctx.key:
                return [Reply(t(ctx.lang, "analysis.busy", id=game_id))]
        # Never every worker: on a small machine the bot's moves still find one (one worker: one analysis).
        if len(running) >= max(1, min(MAX_RUNNING, self.thinker.workers - 1)):
            return [Reply(t(ctx.lang, "analysis.pool_busy"))]
        moves = [m.notation for m in self.storage.moves(row.id)]
        if not moves:
            return [Reply(t(ctx.lang, "analysis.no_moves", id=row.id))]
        lang = ctx.lang
        key = ("analysis", row.platform, row.chat_id, row.id)
        started = self.thinker.submit(key, analysis_job, (row.variant, row.start_fen, moves, ANALYSIS_SECONDS),
                                      on_done=lambda notes: self._analysed(row, lang, notes),
                                      on_error=lambda err: self._analysis_failed(row, lang),
                                      chat=ctx.key, user=(ctx.event.platform, ctx.event.user_id),
                                      seconds=len(moves) * ANALYSIS_SECONDS * 2)
        if not started:
            return [Reply(t(ctx.lang, "analysis.busy", id=row.id))]
        seconds = max(5, round(len(moves) * ANALYSIS_SECONDS * 2))
        return [Reply(t(ctx.lang, "analysis.started", id=row.id, seconds=seconds))]

    def _analysis_game(self, ctx: Ctx, ref: int | None) -> GameRecord | Reply:
        if ref is None and ctx.event.reply_to:
            ref = self.storage.game_of_message(ctx.event.platform, ctx.event.chat_id, str(ctx.event.reply_to))
        if ref is not None:
            row = self.storage.game(ref)
            if row is None or (row.platform, row.chat_id) != ctx.key:
                return Reply(t(ctx.lang, "game.unknown", id=ref))
            if row.status == "active":
                return Reply(t(ctx.lang, "analysis.active", id=row.id))
            return row
        mine = [g for g in self.storage.recent_games(*ctx.key, ctx.event.user_id, limit=10) if g.status == "finished"]
        if mine:
            return mine[0]
        last = self.storage.find_games(*ctx.key, status="finished", limit=1)
        if last:
            return last[0]
        return Reply(t(ctx.lang, "analysis.none"))

    def _analysis_failed(self, row: GameRecord, lang: str) -> None:
        self.say(row.platform, row.chat_id, Reply(t(lang, "analysis.failed", id=row.id)))
        self._notify(row.platform)

    def _analysed(self, row: GameRecord, lang: str, raw: list[dict[str, Any]]) -> None:
        """The engine's notes are in: the report, its picture and the annotated PDN, to the chat."""
        game = self.games.stored_game(row)
        notes = []
        for note, before in zip(raw, game.positions, strict=False):
            notes.append(MoveNote(note["ply"], before.parse_move(note["move"]), before.parse_move(note["best"]),
                                  note["best_score"], note["played_score"], note.get("forced", False)))
        white_to_start = game.start.white
        white, black = self.games.names(lang, row)
        lines = [t(lang, "analysis.title", id=row.id, white=white, black=black)]
        views, captions = [], []
        for side, name in ((Color.WHITE, white), (Color.BLACK, black)):
            own = [n for n in notes if (n.ply % 2 == 0) == (white_to_start == (side == Color.WHITE))]
            worst = sorted((n for n in own if n.loss >= MIN_MISTAKE and n.move != n.best),
                           key=lambda n: (-n.loss, n.ply))[:MISTAKES_SHOWN]
            if not worst:
                lines.append(t(lang, "analysis.clean", name=name))
                continue
            lines.append(t(lang, "analysis.side", name=name))
            for n in sorted(worst, key=lambda n: n.ply):
                entry = mistake_entry(lang, _move_number(white_to_start, n.ply), n)
                lines.append("• " + entry)
                before = game.positions[n.ply]
                views.append(boards.board_view(before, n.move.path, n.move.captured, routes=[n.best.path],
                                               flipped=False))
                captions.append(entry)
        lines.append(t(lang, "analysis.legend_arrow" if views else "analysis.legend_graph"))
        # The evaluation after every ply from White's side, for the graph.
        evaluations = [n.played_score if (n.ply % 2 == 0) == white_to_start else -n.played_score for n in notes]
        image = render_analysis(views, captions, evaluations, title=lines[0],
                                graph_title=t(lang, "analysis.graph_title")) if notes else None
        game.tags["Annotator"] = "draughts-bot"
        pdn = annotate_pdn(game, notes)
        self.say(row.platform, row.chat_id, Reply("\n".join(lines), image=image,
                                                  document=(f"game-{row.id}-analysis.pdn", pdn.encode("utf-8"))))
        self._notify(row.platform)
