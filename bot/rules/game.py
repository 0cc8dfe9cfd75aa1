"""A game: moves played in order, and how it ends (docs/rules.md §3.11, §4)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from enum import StrEnum

from .errors import ErrorCode, IllegalMove
from .position import Move, Position
from .variants import BLACK, WHITE, Color, Variant, get_variant

WIN_SCORE = {WHITE: "1-0", BLACK: "0-1"}
DRAW_SCORE = "1/2-1/2"


class ResultReason(StrEnum):
    """Why a game ended (the values are what storage and the catalogs use)."""

    NO_MOVES = "no_moves"          # the side to move has no legal move (or no pieces)
    RESIGN = "resign"
    AGREEMENT = "agreement"
    REPETITION = "repetition"
    NO_PROGRESS = "no_progress"    # the variant's count of moves without capture or man move
    TIME = "time"
    RECORDED = "recorded"          # a PDN record's result tag; no game the bot plays ends so
    ADJUDICATED = "adjudicated"    # a tournament round's deadline ended it by the stated rule (docs/tournaments.md)
    FORFEIT = "forfeit"            # its player withdrew from the tournament: scored there +/-, never rated


@dataclass(frozen=True)
class Result:
    """How a game ended: the PDN score, why, and the winner (None for a draw)."""

    score: str
    reason: ResultReason
    winner: Color | None = None


def other(color: str) -> Color:
    return BLACK if color == WHITE else WHITE


class Game:
    """A sequence of legal moves from a start position, with its result once it ends."""

    def __init__(self, variant: Variant | str, fen: str | None = None, *, draw_rules: bool = True) -> None:
        """``draw_rules=False`` ends games only by the board (for replaying recorded games,
        whose players may go on past a repetition our house rules would call a draw)."""
        self.draw_rules = draw_rules
        self.variant = get_variant(variant)
        start = Position.from_fen(self.variant, fen) if fen else Position.start(self.variant)
        self.start = start
        self.start_fen: str | None = start.fen() if fen else None
        self.position = start
        self.positions: list[Position] = [start]
        self.moves: list[Move] = []
        self.result: Result | None = None
        self.tags: dict[str, str] = {}
        self._seen: Counter = Counter({start.key: 1})
        # Plies in a row with no capture and no man move.
        self.quiet_plies = 0
        self._check_end()

    @classmethod
    def resume(
        cls,
        variant: Variant | str,
        start_fen: str | None,
        recent_fens: list[str],
        quiet_plies: int,
        result: Result | None = None,
    ) -> Game:
        """A game continued from storage without replaying it: ``recent_fens`` are the
        positions since the last capture or man move, current last.  Only those can
        repeat, so they are all the repetition rule needs.  ``moves`` stays empty."""
        game = cls(variant, start_fen)
        current = Position.from_fen(game.variant, recent_fens[-1])
        game.position = current
        game.positions = [current]
        game._seen = Counter(Position.from_fen(game.variant, f).key for f in recent_fens)
        game.quiet_plies = quiet_plies
        game.result = result
        if result is None:
            game._check_end()
        return game

    @property
    def turn(self) -> str:
        return self.position.turn

    def play(self, move: Move | str, by: str | None = None) -> Move:
        """Play a move (a Move or typed text) for the side to move; IllegalMove if it is not legal."""
        if self.result is not None:
            raise IllegalMove(ErrorCode.GAME_OVER)
        if by is not None and by != self.position.turn:
            raise IllegalMove(ErrorCode.NOT_YOUR_TURN)
        pos = self.position
        if isinstance(move, str):
            move = pos.parse_move(move)
        man_moved = (pos.piece_at(move.start) or "").islower()
        after = pos.play(move)
        self.moves.append(move)
        self.positions.append(after)
        self.position = after
        self._seen[after.key] += 1
        self.quiet_plies = 0 if (move.captured or man_moved) else self.quiet_plies + 1
        self._check_end()
        return move

    def _check_end(self) -> None:
        pos = self.position
        if not pos.legal_moves():
            winner = other(pos.turn)
            self.result = Result(WIN_SCORE[winner], ResultReason.NO_MOVES, winner)
        elif not self.draw_rules:
            return
        elif self._seen[pos.key] >= 3:
            self.result = Result(DRAW_SCORE, ResultReason.REPETITION)
        elif self.quiet_plies >= self.variant.no_progress_plies:
            self.result = Result(DRAW_SCORE, ResultReason.NO_PROGRESS)

    def resign(self, color: str) -> Result:
        """The player of ``color`` resigns."""
        return self._finish(Result(WIN_SCORE[other(color)], ResultReason.RESIGN, other(color)))

    def agree_draw(self) -> Result:
        """Both players agreed to a draw."""
        return self._finish(Result(DRAW_SCORE, ResultReason.AGREEMENT))

    def lose_on_time(self, color: str) -> Result:
        """The player of ``color`` ran out of time."""
        return self._finish(Result(WIN_SCORE[other(color)], ResultReason.TIME, other(color)))

    def _finish(self, result: Result) -> Result:
        if self.result is not None:
            raise IllegalMove(ErrorCode.GAME_OVER)
        self.result = result
        return result

    def repetitions(self) -> int:
        """How many times the current position has occurred."""
        return self._seen[self.position.key]
