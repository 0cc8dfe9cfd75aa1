"""Game analysis: the engine's opinion of every move of a game, as notes or annotated PDN."""

from __future__ import annotations

from dataclasses import dataclass

from bot.rules import Game, Move, write_pdn

from . import search_position

# Centi-man losses that earn a mark: a lost man is a mistake, two a blunder.
MISTAKE = 90
BLUNDER = 190


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
    def loss(self) -> int:
        return max(0, self.best_score - self.played_score)

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
