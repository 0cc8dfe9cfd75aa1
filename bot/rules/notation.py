"""Reading what people type, and explaining why a move is rejected (docs/rules.md §2, §5)."""

from __future__ import annotations

import re
from typing import Protocol

from . import movegen
from .errors import Detail, ErrorCode, IllegalMove
from .move import Move
from .variants import CapturePriority, Color, Crowning, Variant


class Board(Protocol):
    """What reading and explaining a move asks of a position (``position.Position`` is one).

    Declared here so that this module needs nothing of ``position``, which builds on it
    (``Position.play`` explains a refused move with ``explain``)."""

    @property
    def variant(self) -> Variant: ...

    @property
    def white(self) -> bool: ...

    @property
    def turn(self) -> Color: ...

    def sides(self) -> tuple[int, int, int, int]: ...

    def piece_at(self, square: int) -> str | None: ...

    def legal_moves(self) -> list[Move]: ...

# Separators people use between squares: '-', 'x', ':', dashes (hyphen, en, em, minus sign, as
# phones and word processors turn '-' into them), the times sign, or just a space.  Each
# alternative starts differently, so matching is linear: a pattern where a space could belong to
# either of two parts backtracks exponentially on "1  1  1  1 ... x".
_MOVE_RE = re.compile(r"[0-9]{1,3}(?: ?[-xX:\u2010\u2013\u2014\u2212\u00d7] ?[0-9]{1,3}| [0-9]{1,3})+")
_SQUARE_RE = re.compile(r"[0-9]{1,3}")
MAX_MOVE_TEXT = 200


def looks_like_move(text: str) -> bool:
    """Whether a text has the shape of a move (``22-18``, ``29x22x15``, ``22 18``)."""
    return isinstance(text, str) and len(text) <= MAX_MOVE_TEXT and bool(_MOVE_RE.fullmatch(" ".join(text.split())))


def split_squares(text: str) -> tuple[list[int], bool]:
    """The squares named in a move text and whether it marks a capture; IllegalMove if malformed."""
    if not looks_like_move(text):
        raise IllegalMove(ErrorCode.MALFORMED)
    squares = [int(s) for s in _SQUARE_RE.findall(text)]
    return squares, bool(re.search(r"[xX\u00d7]", text))


def _is_subsequence(typed: list[int], path: tuple[int, ...]) -> bool:
    """Typed squares appear in order in the path, with the same first and last square
    (for "from x to", just the same ends)."""
    if typed[0] != path[0] or typed[-1] != path[-1] or len(typed) > len(path):
        return False
    it = iter(path)
    return all(sq in it for sq in typed)


def capture_routes(pos: Board, legal_only: bool) -> list[tuple[tuple[int, ...], movegen.Raw]]:
    """Every capture path in square numbers with its raw record (before merging)."""
    v = pos.variant
    raws = movegen.all_captures(v, *pos.sides(), pos.white)
    if legal_only:
        raws = movegen.best_captures(v, raws)
    return [(tuple(v.bit_to_sq[b] for b in r[0]), r) for r in raws]


def _raw_to_move(pos: Board, raw: movegen.Raw) -> Move:
    v = pos.variant
    return Move(tuple(v.bit_to_sq[b] for b in raw[0]), tuple(v.mask_to_squares(raw[1])), raw[4])


def _legal_by_route(pos: Board) -> list[tuple[tuple[int, ...], Move]]:
    """Each legal move under every path that reaches it (merged paths included)."""
    legal = pos.legal_moves()
    if not legal or not legal[0].captured:
        return [(m.path, m) for m in legal]
    by_key = {(m.start, m.end, m.captured): m for m in legal}
    out = []
    for path, raw in capture_routes(pos, legal_only=True):
        move = by_key[(path[0], path[-1], tuple(pos.variant.mask_to_squares(raw[1])))]
        out.append((path, move))
    return out


def parse_move(pos: Board, text: str) -> Move:
    """The legal move a text names (full path, or the short form when unique)."""
    squares, capture_hint = split_squares(text)
    return match_squares(pos, squares, capture_hint)


def match_squares(pos: Board, squares: list[int], capture_hint: bool = False) -> Move:
    """The legal move these squares name, or IllegalMove explaining why there is none."""
    _check_piece(pos, squares)
    routes = _legal_by_route(pos)
    for path, move in routes:
        if list(path) == squares:
            return move
    # Only the short form "from x to" abbreviates (docs/rules.md §2): a longer path is taken
    # literally, so a capture the user spelled out is never swapped for another one.
    candidates: list[Move] = []
    if len(squares) == 2:
        for path, move in routes:
            if _is_subsequence(squares, path) and move not in candidates:
                candidates.append(move)
    if len(candidates) == 1:
        return candidates[0]
    if candidates:
        raise IllegalMove(ErrorCode.AMBIGUOUS, squares=tuple(squares), moves=tuple(candidates))
    raise explain(pos, squares, capture_hint)


def _check_piece(pos: Board, squares: list[int]) -> str:
    """The piece on the first square, once the squares name one of the mover's pieces."""
    v = pos.variant
    for sq in squares:
        if not 1 <= sq <= v.squares:
            raise IllegalMove(ErrorCode.MALFORMED, squares=(sq,))
    if len(squares) < 2:
        raise IllegalMove(ErrorCode.MALFORMED, squares=tuple(squares))
    piece = pos.piece_at(squares[0])
    if piece is None:
        raise IllegalMove(ErrorCode.NO_PIECE, squares=(squares[0],))
    if piece.upper() != pos.turn:
        raise IllegalMove(ErrorCode.NOT_YOUR_PIECE, squares=(squares[0],))
    return piece


def _outranked(pos: Board, attempted: movegen.Raw, legal: list[Move]) -> IllegalMove:
    """Which priority rule makes a possible capture illegal."""
    v = pos.variant
    best = movegen.best_captures(v, movegen.all_captures(v, *pos.sides(), pos.white))[0]
    count, best_count = attempted[1].bit_count(), best[1].bit_count()
    if count < best_count:
        code = ErrorCode.LAW_OF_QUANTITY
    elif v.priority is CapturePriority.ITALIAN and best[3] and not attempted[3]:
        code = ErrorCode.KING_MUST_CAPTURE
    elif len(attempted[2]) < len(best[2]) or v.priority is not CapturePriority.ITALIAN:
        code = ErrorCode.LAW_OF_QUALITY
    else:
        code = ErrorCode.KING_EARLIEST
    return IllegalMove(code, moves=tuple(legal), attempted=_raw_to_move(pos, attempted))


def explain(pos: Board, squares: list[int], capture_hint: bool = False) -> IllegalMove:
    """The reason no legal move matches these squares (the piece checks included)."""
    try:
        piece = _check_piece(pos, squares)
    except IllegalMove as err:
        return err
    v = pos.variant
    legal = pos.legal_moves()
    captures = [m for m in legal if m.captured]
    pseudo = capture_routes(pos, legal_only=False)
    # A capture the board allows but a priority rule forbids, typed in full.
    for path, raw in pseudo:
        if list(path) == squares:
            return _outranked(pos, raw, captures)
    # A legal capture stopped half-way (along any of its paths).
    n = len(squares)
    unfinished: list[Move] = []
    for path, move in _legal_by_route(pos):
        if len(path) > n and list(path[:n]) == squares and move.captured and move not in unfinished:
            unfinished.append(move)
    if unfinished:
        return IllegalMove(ErrorCode.CAPTURE_NOT_FINISHED, squares=tuple(squares), moves=tuple(unfinished))
    # A short form, or a capture stopped half-way, of a capture a priority rule forbids.
    for path, raw in pseudo:
        if (n == 2 and _is_subsequence(squares, path)) or (len(path) > n and list(path[:n]) == squares):
            return _outranked(pos, raw, captures)
    um, uk, tm, tk = pos.sides()
    # A plain move that would be legal if no capture were compulsory.
    if len(squares) == 2:
        quiet = movegen.quiet_moves(v, um, uk, tm, tk, pos.white)
        step = (v.sq_to_bit[squares[0]], v.sq_to_bit[squares[1]])
        if step in quiet and captures:
            return IllegalMove(ErrorCode.CAPTURE_COMPULSORY, squares=tuple(squares), moves=tuple(captures))
    is_man = piece.islower()
    if is_man and _crowned_before_end(pos, squares, pseudo):
        # What stops the typed path is the crowning (§3.7), not whatever lies beyond it.
        return IllegalMove(ErrorCode.ILLEGAL_CAPTURE, squares=tuple(squares), moves=tuple(captures),
                           detail=Detail.CROWNED_STOPS)
    jumps = _jumped_squares(pos, squares)
    if is_man and not v.men_capture_kings:
        for sq in jumps:
            if sq is not None and (jumped := pos.piece_at(sq) or "").isupper() and jumped.upper() != pos.turn:
                return IllegalMove(ErrorCode.MAN_CANNOT_TAKE_KING, squares=(sq,), moves=tuple(captures))
    detail = _detail(pos, squares, capture_hint)
    if detail is None and not is_man and v.flying_kings and _two_in_a_row(pos, squares):
        detail = Detail.TWO_IN_A_ROW
    if (capture_hint or len(squares) > 2 or any(sq is not None for sq in jumps)
            or detail in (Detail.OWN_PIECE, Detail.TWO_IN_A_ROW)):
        return IllegalMove(ErrorCode.ILLEGAL_CAPTURE, squares=tuple(squares), moves=tuple(captures), detail=detail)
    if captures:
        return IllegalMove(ErrorCode.CAPTURE_COMPULSORY, squares=tuple(squares), moves=tuple(captures))
    return IllegalMove(ErrorCode.ILLEGAL_STEP, squares=tuple(squares), detail=detail)


def _detail(pos: Board, squares: list[int], capture_hint: bool) -> Detail | None:
    """The one rule a refused step or jump breaks, when the first hop shows it: a man going
    back, a short-range king going further than one square, a jump over one's own piece."""
    v = pos.variant
    (r1, c1), (r2, c2) = v.square_to_rc(squares[0]), v.square_to_rc(squares[1])
    dr, dc = r2 - r1, c2 - c1
    if abs(dr) != abs(dc) or dr == 0:
        return None
    piece = pos.piece_at(squares[0]) or ""
    if piece.islower() and not (v.men_capture_backwards and abs(dr) == 2):
        # Row 0 is Black's side: White's men go up the rows, Black's down.
        if (dr > 0) == (pos.turn == "W"):
            return Detail.MAN_BACKWARD
    sr, sc = (1 if dr > 0 else -1), (1 if dc > 0 else -1)
    between = [v.rc_to_square(r1 + i * sr, c1 + i * sc) for i in range(1, abs(dr))]
    own = any((pos.piece_at(sq) or "").upper() == pos.turn for sq in between if sq is not None)
    if piece.isupper() and not v.flying_kings and (abs(dr) > 2 or (abs(dr) == 2 and not capture_hint)):
        # Someone used to flying kings: the reason is the king's range, whatever it passes.
        return Detail.KING_ONE_SQUARE
    if own:
        return Detail.OWN_PIECE
    return None


def _jumped_squares(pos: Board, squares: list[int]) -> list[int | None]:
    """For each hop of the typed path, the occupied square it jumps over, if it is a jump."""
    v = pos.variant
    out: list[int | None] = []
    for a, b in zip(squares, squares[1:], strict=False):
        (r1, c1), (r2, c2) = v.square_to_rc(a), v.square_to_rc(b)
        dr, dc = r2 - r1, c2 - c1
        if abs(dr) != abs(dc) or abs(dr) < 2:
            out.append(None)
            continue
        sr, sc = (1 if dr > 0 else -1), (1 if dc > 0 else -1)
        # Squares between two squares on one diagonal are on the board: never None.
        between = [v.rc_to_square(r1 + i * sr, c1 + i * sc) for i in range(1, abs(dr))]
        occupied = [sq for sq in between if sq is not None and pos.piece_at(sq) is not None]
        out.append(occupied[0] if len(occupied) == 1 else None)
    return out


def _crowned_before_end(pos: Board, squares: list[int], pseudo: list[tuple[tuple[int, ...], movegen.Raw]]) -> bool:
    """Whether the typed path follows a capture of a man that ends crowned on the far row and
    then goes on: the crowning ends the move there (docs/rules.md §3.7)."""
    v = pos.variant
    if v.crowning is not Crowning.STOPS:
        return False
    far_row = 0 if pos.white else v.size - 1
    return any(len(path) < len(squares) and list(path) == squares[:len(path)]
               and v.square_to_rc(path[-1])[0] == far_row for path, _raw in pseudo)


def _two_in_a_row(pos: Board, squares: list[int]) -> bool:
    """Whether a hop of the typed path crosses two pieces standing next to each other on the
    diagonal, which a flying king cannot jump at once (docs/rules.md §4, spanish)."""
    v = pos.variant
    for a, b in zip(squares, squares[1:], strict=False):
        (r1, c1), (r2, c2) = v.square_to_rc(a), v.square_to_rc(b)
        dr, dc = r2 - r1, c2 - c1
        if abs(dr) != abs(dc) or abs(dr) < 3:
            continue
        sr, sc = (1 if dr > 0 else -1), (1 if dc > 0 else -1)
        # Squares between two squares on one diagonal are on the board: never None.
        between = [v.rc_to_square(r1 + i * sr, c1 + i * sc) for i in range(1, abs(dr))]
        taken = [sq is not None and pos.piece_at(sq) is not None for sq in between]
        if any(x and y for x, y in zip(taken, taken[1:], strict=False)):
            return True
    return False
