"""Structured reasons for rejecting a move; the service words them per language."""

from __future__ import annotations

from enum import StrEnum

from .move import Move


class ErrorCode(StrEnum):
    """Why a move was rejected (docs/rules.md §5)."""

    MALFORMED = "malformed"
    NOT_YOUR_TURN = "not_your_turn"
    NO_PIECE = "no_piece"
    NOT_YOUR_PIECE = "not_your_piece"
    ILLEGAL_STEP = "illegal_step"
    CAPTURE_COMPULSORY = "capture_compulsory"
    LAW_OF_QUANTITY = "law_of_quantity"
    KING_MUST_CAPTURE = "king_must_capture"
    LAW_OF_QUALITY = "law_of_quality"
    KING_EARLIEST = "king_earliest"
    MAN_CANNOT_TAKE_KING = "man_cannot_take_king"
    CAPTURE_NOT_FINISHED = "capture_not_finished"
    ILLEGAL_CAPTURE = "illegal_capture"
    AMBIGUOUS = "ambiguous"
    GAME_OVER = "game_over"


class Detail(StrEnum):
    """Which rule inside ``illegal_step`` / ``illegal_capture`` the move breaks, when one rule
    can be named (the codes themselves stay the documented contract)."""

    MAN_BACKWARD = "man_backward"          # a man going back: it never does
    KING_ONE_SQUARE = "king_one_square"    # a short-range king going further than one square
    OWN_PIECE = "own_piece"                # a jump over a piece of one's own colour
    CROWNED_STOPS = "crowned_stops"        # a capture typed on past the square where the man is crowned
    TWO_IN_A_ROW = "two_in_a_row"          # a flying king's jump over two pieces with no gap between them


class IllegalMove(Exception):
    """A rejected move: a code plus the squares and moves the reason refers to."""

    def __init__(
        self,
        code: ErrorCode,
        squares: tuple[int, ...] = (),
        moves: tuple[Move, ...] = (),
        attempted: Move | None = None,
        detail: Detail | None = None,
    ) -> None:
        self.code = ErrorCode(code)
        self.detail = Detail(detail) if detail is not None else None
        self.squares = tuple(squares)
        self.moves = tuple(moves)
        self.attempted = attempted
        parts = [self.code.value]
        if self.squares:
            parts.append("squares " + ",".join(map(str, self.squares)))
        if self.moves:
            parts.append("moves " + " ".join(map(str, self.moves)))
        if attempted is not None:
            parts.append(f"attempted {attempted}")
        super().__init__("; ".join(parts))
