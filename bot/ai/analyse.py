"""Game analysis: the engine's opinion of every move of a game, as notes or annotated PDN."""

from __future__ import annotations

from dataclasses import dataclass

from bot.rules import Game, Move, write_pdn

from . import search_position
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

# What a move did, when numbers of men would not say it (MoveNote.cost).
STILL_WINNING = "still_winning"
MISSES_WIN = "misses_win"
ALLOWS_WIN = "allows_win"


def _clamp(score: int) -> int:
    return max(-DECIDED, min(DECIDED, score))


@dataclass(frozen=True)
class MoveNote:
    """What the engine thinks of one move: scores for the player who made it."""

    ply: int
    move: Move
    best: Move
    best_score: int
    played_score: int
    forced: bool = False          # the only legal move: never marked, not commented in the PDN

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


def analyse_game(game: Game, seconds: float = 0.3) -> list[MoveNote]:
    """A note per move of ``game``: the engine's best move there and what the played one cost.
    Pure: the game is read, not changed."""
    notes: list[MoveNote] = []
    fens = [game.start.fen()]
    for ply, (pos, move) in enumerate(zip(game.positions, game.moves, strict=False)):
        before = fens[:-1]
        if len(pos.legal_moves()) == 1:
            # Searched anyway: the evaluation graph has a point for every ply.
            score = search_position(pos, 64, seconds, history=before).score
            notes.append(MoveNote(ply, move, move, score, score, forced=True))
        else:
            best = search_position(pos, 64, seconds, history=before)
            if best.move == move:
                played_score = best.score
            else:
                after = pos.play(move)
                if after.legal_moves():
                    reply = search_position(after, 64, seconds, history=fens)
                    played_score = -reply.score
                else:
                    played_score = best.score
            notes.append(MoveNote(ply, move, best.move, best.score, played_score))
        fens.append(game.positions[ply + 1].fen())
    return notes


def _score_text(score: int) -> str:
    if abs(score) > 99_000:
        return "win" if score > 0 else "loss"
    return f"{score / 100:+.2f}"


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
        if note.mark:
            words.append(f"{{{_score_text(sign * note.played_score)}; better {note.best} "
                         f"{_score_text(sign * note.best_score)}}}")
        elif not note.forced:
            words.append(f"{{{_score_text(sign * note.played_score)}}}")
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
