"""Game analysis: the engine's opinion of every move of a game, as notes or annotated PDN."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from bot.rules import Game, Move, Position, write_pdn

from . import egtb
from .deepening import SearchResult, search_position
from .search import MATE_BOUND

# Centi-man losses that earn a mark: a lost man is a mistake, two a blunder.
MISTAKE = 90
BLUNDER = 190
# From this many hundredths of a man (three men up, or a forced win seen) a side is winning:
# a move that keeps it winning is no mistake, whatever the search's numbers say.
WINNING = 300
# A forced win or loss counts as this many hundredths of a man in a loss (the search's own
# scores for them, about 1000 men, are no amount anyone would lose).
DECIDED = 1000

# The analysis's budget is in nodes, not seconds, so a game gets the same analysis on every
# machine and under any load.  Each position gets a search of SCAN_NODES (about a tenth of a second
# of the compiled search); a move that was not the engine's choice is compared with that choice by a
# search of those two moves alone, and a cost from CONFIRM_FROM on only stands after a search of the
# two moves with CONFIRM_NODES (bench/analysis_accuracy.py compares what it keeps with 3 s searches;
# a quarter of that budget was 0.9 man off one of them).  A cost that a search of the two moves with
# a SIEVE of that budget already finds below CONFIRM_FROM is dropped there: most candidates are.
SCAN_NODES = 60_000
CONFIRM_NODES = 2_400_000
SIEVE = 4
CONFIRM_FROM = 30

# What a move did, when numbers of men would not say it (MoveNote.cost).
STILL_WINNING = "still_winning"
MISSES_WIN = "misses_win"
ALLOWS_WIN = "allows_win"


def _clamp(score: int) -> int:
    return max(-DECIDED, min(DECIDED, score))


@dataclass(frozen=True)
class TableNote:
    """What the endgame tables say of a move, for the side that played it: ``before`` and
    ``after`` are (result, plies): 'win', 'loss' or 'draw' and the plies to the end of the game
    with best play; ``material`` the pieces before the move (the mover's men and kings first);
    ``why`` / ``why_after`` a catalog key with the classic reason for a drawn ending before / after
    the move, or None."""

    material: tuple[int, int, int, int]
    before: tuple[str, int]
    after: tuple[str, int]
    why: str | None = None
    why_after: str | None = None

    @property
    def changed(self) -> bool:
        """The move changed the result (a win let go, a draw lost)."""
        return self.before[0] != self.after[0]

    def as_dict(self) -> dict[str, Any]:
        return {"material": list(self.material), "before": list(self.before), "after": list(self.after),
                "why": self.why, "why_after": self.why_after}

    @classmethod
    def from_dict(cls, raw: dict[str, Any] | None) -> TableNote | None:
        if not raw:
            return None
        m = raw["material"]
        return cls((int(m[0]), int(m[1]), int(m[2]), int(m[3])), (str(raw["before"][0]), int(raw["before"][1])),
                   (str(raw["after"][0]), int(raw["after"][1])), raw.get("why"), raw.get("why_after"))


def table_note(pos: Position, move: Move) -> TableNote | None:
    """The tables' note on ``move`` in ``pos``, or None when the position is not in them."""
    tb = egtb.tables(pos.variant)
    if tb is None:
        return None
    before = tb.verdict(pos)
    if before is None:
        return None
    after = tb.after(pos, move)
    child = pos.play(move)
    theirs = tb.verdict(child)
    why_after = egtb.explain(child, theirs) if theirs is not None else None
    return TableNote(before.material, (before.result, before.plies), (after.result, after.plies),
                     egtb.explain(pos, before), why_after)


@dataclass(frozen=True)
class MoveNote:
    """What the engine thinks of one move: scores for the player who made it."""

    ply: int
    move: Move
    best: Move
    best_score: int
    played_score: int
    forced: bool = False          # the only legal move: never marked, not commented in the PDN
    # The endgame tables' word when the position has few enough pieces (see TableNote).
    table: TableNote | None = None

    @property
    def keeps_result(self) -> bool:
        """Winning before and after (or lost before and after): nothing to reproach."""
        best, played = self.best_score, self.played_score
        return (best >= WINNING and played >= WINNING) or (best <= -WINNING and played <= -WINNING)

    @property
    def loss(self) -> int:
        """What the move cost in hundredths of a man, forced wins and losses counted as DECIDED."""
        if self.keeps_result:
            return 0
        return max(0, _clamp(self.best_score) - _clamp(self.played_score))

    @property
    def cost(self) -> str | None:
        """The cost in words when a forced win is involved (STILL_WINNING, MISSES_WIN, ALLOWS_WIN),
        None when ``loss`` in men says it."""
        if self.best_score >= WINNING and self.played_score >= WINNING:
            return STILL_WINNING if max(self.best_score, self.played_score) > MATE_BOUND else None
        if self.played_score < -MATE_BOUND and self.best_score > -WINNING:
            return ALLOWS_WIN
        if self.best_score > MATE_BOUND and self.played_score < WINNING:
            return MISSES_WIN
        return None

    @property
    def mark(self) -> str:
        if self.move == self.best:
            return ""
        if self.loss >= BLUNDER:
            return "??"
        if self.loss >= MISTAKE:
            return "?"
        return ""


def analyse_game(game: Game, seconds: float | None = None, *, nodes: int = SCAN_NODES,
                 confirm_nodes: int = CONFIRM_NODES) -> list[MoveNote]:
    """A note per move of ``game``: the engine's best move there and what the played one cost.
    Searches of ``nodes`` nodes (or of ``seconds`` each when given: then the notes depend on the
    machine's speed); every cost of CONFIRM_FROM or more is the result of a search of the played
    and the better move with ``confirm_nodes``.  Pure: the game is read, not changed."""
    notes: list[MoveNote] = []
    fens = [game.start.fen()]

    def search(pos: Position, history: list[str], moves: list[Move] | None = None,
               budget: int | None = None) -> SearchResult:
        if seconds is not None and budget is None:
            return search_position(pos, 64, seconds, history=history, moves=moves)
        return search_position(pos, 64, math.inf, history=history, nodes=budget or nodes, moves=moves)

    for ply, (pos, move) in enumerate(zip(game.positions, game.moves, strict=False)):
        before = fens[:-1]
        if len(pos.legal_moves()) == 1:
            # Searched anyway: the evaluation graph has a point for every ply.
            score = search(pos, before).score
            notes.append(MoveNote(ply, move, move, score, score, forced=True, table=table_note(pos, move)))
        else:
            best = search(pos, before)
            note = MoveNote(ply, move, best.move, best.score, best.score, table=table_note(pos, move))
            if best.move != move and pos.play(move).legal_moves():
                # The two moves side by side in one search: their scores come from the same depth.
                note = _compared(note, search(pos, before, [best.move, move]))
                for budget in (confirm_nodes // SIEVE, confirm_nodes):
                    if note.loss >= CONFIRM_FROM:
                        note = _compared(note, search(pos, before, [note.best, move], max(1, budget)))
            notes.append(note)
        fens.append(game.positions[ply + 1].fen())
    return notes


def _compared(note: MoveNote, result: SearchResult) -> MoveNote:
    """``note`` with the scores of a search of its better and its played move alone; the played
    move is the better one when it scores at least as well."""
    scores = dict(result.scores)
    best_score = scores.get(note.best, note.best_score)
    played = scores.get(note.move, note.played_score)
    if played >= best_score:
        return replace(note, best=note.move, best_score=played, played_score=played)
    return replace(note, best_score=best_score, played_score=played)


def _score_text(score: int) -> str:
    if abs(score) > 99_000:
        return "win" if score > 0 else "loss"
    return f"{score / 100:+.2f}"


def _table_text(result: tuple[str, int], mover_is_white: bool) -> str:
    """A table result for the mover, said from the board: 'White wins in 9', 'draw'."""
    kind, plies = result
    if kind == egtb.DRAW:
        return "draw"
    white_wins = (kind == egtb.WIN) == mover_is_white
    return f"{'White' if white_wins else 'Black'} wins in {plies} plies"


def annotate_pdn(game: Game, notes: list[MoveNote]) -> str:
    """The game's PDN with a comment after every move that was searched: the evaluation after it
    from White's side and, for a marked move, the better move and what it would have kept."""
    header = write_pdn(game).split("\n\n", 1)[0]
    words: list[str] = []
    white_to_move = game.start.white
    number = 1
    for i, note in enumerate(notes):
        text = f"{note.move}{note.mark}"
        if white_to_move:
            words.append(f"{number}. {text}")
        elif i == 0:
            words.append(f"{number}... {text}")
        else:
            words.append(text)
        # Evaluations from White's side, as PDN readers show them.
        sign = 1 if white_to_move else -1
        # The tables' word where the game enters them and wherever a move changes it.
        table = note.table
        known = ""
        if table is not None and (table.changed or i == 0 or notes[i - 1].table is None):
            known = f"; tables: {_table_text(table.after, white_to_move)}"
        if note.mark:
            words.append(f"{{{_score_text(sign * note.played_score)}; better {note.best} "
                         f"{_score_text(sign * note.best_score)}{known}}}")
        elif not note.forced or known:
            words.append(f"{{{_score_text(sign * note.played_score)}{known}}}")
        if not white_to_move:
            number += 1
        white_to_move = not white_to_move
    words.append(game.result.score if game.result else "*")
    lines, line = [], ""
    for w in words:
        if line and len(line) + 1 + len(w) > 79:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}" if line else w
    lines.append(line)
    return header + "\n\n" + "\n".join(lines) + "\n"
