"""Putting rule errors, results and clocks into words in the chat's language."""

from __future__ import annotations

from collections.abc import Sequence

from bot.i18n import t
from bot.rules import ErrorCode, IllegalMove, Move, Position, Result

MAX_LISTED = 8


def move_list(moves: Sequence[Move]) -> str:
    """Moves in notation, comma separated, the list cut after a few."""
    names = [str(m) for m in moves[:MAX_LISTED]]
    if len(moves) > MAX_LISTED:
        names.append("…")
    return ", ".join(names)


def variant_name(lang: str, variant: str) -> str:
    return t(lang, f"variant.{variant}")


def _kings(pos: Position, squares) -> int:
    return sum(1 for sq in squares if (pos.piece_at(sq) or "").isupper())


def explain(lang: str, err: IllegalMove, pos: Position, typed: str = "", to_move: str = "") -> str:
    """The rule that forbids a move, in words (docs/rules.md §5)."""
    code = err.code
    sq = err.squares[0] if err.squares else ""
    best = err.moves[0] if err.moves else None
    v = pos.variant
    if code == ErrorCode.MALFORMED:
        if err.squares and not 1 <= err.squares[0] <= v.squares:
            return t(lang, "err.no_such_square", square=sq, max=v.squares)
        return t(lang, "err.malformed", max=v.squares)
    if code == ErrorCode.NOT_YOUR_TURN:
        return t(lang, "err.not_your_turn", name=to_move)
    if code in (ErrorCode.NO_PIECE, ErrorCode.NOT_YOUR_PIECE):
        return t(lang, f"err.{code.value}", square=sq)
    if code == ErrorCode.ILLEGAL_STEP:
        kings = "rule.king_flying" if v.flying_kings else "rule.king_short"
        return t(lang, "err.illegal_step", move="-".join(map(str, err.squares)), king_rule=t(lang, kings))
    if code == ErrorCode.CAPTURE_COMPULSORY:
        key = "err.capture_compulsory" if len(err.moves) == 1 else "err.capture_compulsory_many"
        return t(lang, key, moves=move_list(err.moves))
    if code in (ErrorCode.LAW_OF_QUANTITY, ErrorCode.LAW_OF_QUALITY, ErrorCode.KING_MUST_CAPTURE,
                ErrorCode.KING_EARLIEST):
        attempted = err.attempted
        return t(lang, f"err.{code.value}", best=move_list(err.moves), attempted=attempted,
                 best_count=len(best.captured) if best else 0,
                 count=len(attempted.captured) if attempted else 0,
                 best_kings=_kings(pos, best.captured) if best else 0,
                 kings=_kings(pos, attempted.captured) if attempted else 0)
    if code == ErrorCode.MAN_CANNOT_TAKE_KING:
        return t(lang, "err.man_cannot_take_king", variant=variant_name(lang, v.id), square=sq)
    if code == ErrorCode.CAPTURE_NOT_FINISHED:
        return t(lang, "err.capture_not_finished", typed=typed or "x".join(map(str, err.squares)),
                 moves=move_list(err.moves))
    if code == ErrorCode.ILLEGAL_CAPTURE:
        text = t(lang, "err.illegal_capture", typed=typed or "x".join(map(str, err.squares)))
        if err.moves:
            text += " " + t(lang, "err.available", moves=move_list(err.moves))
        return text
    if code == ErrorCode.AMBIGUOUS:
        return t(lang, "err.ambiguous", typed=typed, moves=move_list(err.moves))
    return t(lang, "err.game_over")


def result_text(lang: str, result: Result, white: str, black: str) -> str:
    """How the game ended, e.g. 'Ana wins: Luca has no legal move.'"""
    if result.winner is None:
        return t(lang, f"result.draw.{result.reason}")
    winner, loser = (white, black) if result.winner == "W" else (black, white)
    return t(lang, f"result.win.{result.reason}", winner=winner, loser=loser)


def duration(lang: str, seconds: float) -> str:
    """A short human duration: '2d 3h', '5h 10m', '4m'."""
    seconds = max(0, int(seconds))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes = max(1, rest // 60) if not (days or hours) else rest // 60
    parts = []
    if days:
        parts.append(f"{days}{t(lang, 'unit.d')}")
    if hours:
        parts.append(f"{hours}{t(lang, 'unit.h')}")
    if minutes and not days:
        parts.append(f"{minutes}{t(lang, 'unit.m')}")
    return " ".join(parts)
