"""Putting rule errors, results and clocks into words in the chat's language."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence

from bot.i18n import STANDING_VALUES, catalog, t, tn
from bot.rules import VARIANTS, Color, Detail, ErrorCode, IllegalMove, Move, Position, Result, ResultReason
from bot.service.events import Button
from bot.service.features.common import BUTTONS_PER_ROW, LISTED_PER_PAGE, MAX_BUTTON_ROWS

MAX_LISTED = 8


def move_list(moves: Sequence[Move], lang: str = "en") -> str:
    """Moves in notation, comma separated, the list cut after a few ('… and 3 more': a bare '…'
    before the sentence's full stop read as ', ….')."""
    text = ", ".join(str(m) for m in moves[:MAX_LISTED])
    if len(moves) > MAX_LISTED:
        text += t(lang, "moves.more", n=len(moves) - MAX_LISTED)
    return text


def variant_name(lang: str, variant: str) -> str:
    return t(lang, f"variant.{variant}")


def _kings(pos: Position, squares: Iterable[int]) -> int:
    return sum(1 for sq in squares if (pos.piece_at(sq) or "").isupper())


def illegal_move_text(lang: str, err: IllegalMove, pos: Position, typed: str = "", to_move: str = "") -> str:
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
        return t(lang, "err.not_your_turn", name=to_move, to_name=to_name(lang, to_move))
    if code in (ErrorCode.NO_PIECE, ErrorCode.NOT_YOUR_PIECE):
        return t(lang, f"err.{code.value}", square=sq)
    if _has_detail(err):
        return _detail_text(lang, err, pos, typed)
    if code == ErrorCode.ILLEGAL_STEP:
        move = "-".join(map(str, err.squares))
        if (pos.piece_at(err.squares[0]) or "").isupper():
            kings = "rule.king_flying" if v.flying_kings else "rule.king_short"
            text = t(lang, "err.illegal_step_king", move=move, king_rule=t(lang, kings))
        else:
            # A man's mistake is about men: quoting how kings move would only confuse.
            text = t(lang, "err.illegal_step", move=move)
        return _with_possible(lang, text, pos, err.squares[0])
    if code == ErrorCode.CAPTURE_COMPULSORY:
        key = "err.capture_compulsory" if len(err.moves) == 1 else "err.capture_compulsory_many"
        return t(lang, key, moves=move_list(err.moves, lang))
    if code in (ErrorCode.LAW_OF_QUANTITY, ErrorCode.LAW_OF_QUALITY, ErrorCode.KING_MUST_CAPTURE,
                ErrorCode.KING_EARLIEST):
        attempted = err.attempted
        taken_kings = _kings(pos, attempted.captured) if attempted else 0
        key = f"err.{code.value}"
        if code == ErrorCode.LAW_OF_QUALITY and taken_kings == 0:
            key = "err.law_of_quality_none"      # "takes none", not "only 0"
        return t(lang, key, best=move_list(err.moves, lang), attempted=attempted,
                 best_count=len(best.captured) if best else 0,
                 count=len(attempted.captured) if attempted else 0,
                 best_kings=_kings(pos, best.captured) if best else 0,
                 kings=taken_kings)
    if code == ErrorCode.MAN_CANNOT_TAKE_KING:
        return t(lang, "err.man_cannot_take_king", variant=variant_name(lang, v.id), square=sq)
    if code == ErrorCode.CAPTURE_NOT_FINISHED:
        return t(lang, "err.capture_not_finished", typed=typed or "x".join(map(str, err.squares)),
                 moves=move_list(err.moves, lang))
    if code == ErrorCode.ILLEGAL_CAPTURE:
        text = t(lang, "err.illegal_capture", typed=typed or "x".join(map(str, err.squares)))
        # With no capture on the board the rules give no alternatives: the legal moves guide instead.
        if err.moves:
            return text + " " + t(lang, "err.available", moves=move_list(err.moves, lang))
        return _with_possible(lang, text, pos, err.squares[0] if err.squares else None)
    if code == ErrorCode.AMBIGUOUS:
        return t(lang, "err.ambiguous", typed=typed, moves=move_list(err.moves, lang))
    return t(lang, "err.game_over")


def _has_detail(err: IllegalMove) -> bool:
    """Whether the refusal names one rule of its own (a man backwards, a jump over an own piece)."""
    # A king's plain step too far is already answered by how kings of the variant move.
    return err.detail is not None and bool(err.squares) and (
        err.code == ErrorCode.ILLEGAL_CAPTURE
        or (err.code == ErrorCode.ILLEGAL_STEP and err.detail != Detail.KING_ONE_SQUARE))


def _detail_rule(lang: str, err: IllegalMove, pos: Position, typed: str) -> str:
    """The one rule a refused step or jump breaks, in words."""
    sep = "x" if err.code == ErrorCode.ILLEGAL_CAPTURE else "-"
    move = typed or sep.join(map(str, err.squares))
    if err.detail == Detail.OWN_PIECE:
        king = (pos.piece_at(err.squares[0]) or "").isupper()
        return t(lang, "err.own_piece_king" if king else "err.own_piece_man", move=move)
    return t(lang, f"err.{err.detail}", move=move, variant=variant_name(lang, pos.variant.id))


def _detail_text(lang: str, err: IllegalMove, pos: Position, typed: str) -> str:
    """A refused step or jump that breaks one nameable rule: that rule, then what is possible."""
    text = _detail_rule(lang, err, pos, typed)
    if err.moves:
        return text + " " + t(lang, "err.available", moves=move_list(err.moves, lang))
    return _with_possible(lang, text, pos, err.squares[0])


def _with_possible(lang: str, text: str, pos: Position, square: int | None) -> str:
    """The text followed by the moves that are possible: the piece's own when it has some."""
    legal = pos.legal_moves()
    own = [m for m in legal if m.start == square]
    moves = own or legal
    if not moves:
        return text
    return text + " " + t(lang, "err.available", moves=move_list(moves, lang))


def result_text(lang: str, result: Result, white: str, black: str, final: Position) -> str:
    """How the game ended, e.g. 'Ana wins: Luca has no legal move.'  ``final`` (the last
    position) says whether the loser was left without pieces and how long a draw took."""
    if result.winner is None:
        if result.reason == "no_progress":
            return t(lang, "result.draw.no_progress", moves=final.variant.no_progress_plies // 2)
        return t(lang, f"result.draw.{result.reason}")
    winner, loser = (white, black) if result.winner == Color.WHITE else (black, white)
    reason: str = result.reason
    loser_color = Color.BLACK if result.winner == Color.WHITE else Color.WHITE
    # Not a reason of the rules: the catalog words "no moves" apart when no piece was left at all.
    if reason == ResultReason.NO_MOVES and not _has_pieces(final, loser_color):
        reason = "no_pieces"
    return t(lang, f"result.win.{reason}", winner=winner, loser=loser)


def _has_pieces(pos: Position, color: str) -> bool:
    return any(code.upper() == color for code in pos.pieces().values())


def _parts(seconds: float) -> list[tuple[str, int]]:
    seconds = max(0, int(seconds))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes = rest // 60
    parts = [("unit.d", days), ("unit.h", hours)]
    if not days:
        parts.append(("unit.m", minutes))
    return [(key, n) for key, n in parts if n]


def duration(lang: str, seconds: float) -> str:
    """A short human duration: '2d 3h', '5h 10m', '4m' ('1 día', '2 h' in Spanish),
    'less than a minute'."""
    if max(0, int(seconds)) < 60:
        # Rounding 20 s up to '1m' would promise time the player does not have.
        return t(lang, "time.under_minute")
    return " ".join(tn(lang, key, n) for key, n in _parts(seconds))


def duration_count(seconds: float) -> int:
    """The count a verb agrees with ('le queda 1 h', 'le quedan 2 h', 'le quedan 1 día y 3 h')."""
    parts = _parts(seconds)
    return parts[0][1] if len(parts) == 1 else 2


def to_move(lang: str, name: str, turn: str, seconds_left: float) -> str:
    """'Ana (white) to move; 5h left.' (its own sentence in the last minute)."""
    color = t(lang, "color.white" if turn == Color.WHITE else "color.black")
    if seconds_left < 60:
        return t(lang, "game.to_move_last_minute", name=name, color=color, to_name=to_name(lang, name))
    return tn(lang, "game.to_move", duration_count(seconds_left), name=name, color=color,
              left=duration(lang, seconds_left), to_name=to_name(lang, name))


def reminder(lang: str, name: str, game_id: int, seconds_left: float) -> str:
    """The clock reminder: 'Ana: 5m left to move in game #3.' ('less than a minute' at the end)."""
    if seconds_left < 60:
        return t(lang, "clock.reminder_last_minute", name=name, id=game_id)
    return tn(lang, "clock.reminder", duration_count(seconds_left), name=name, id=game_id,
              left=duration(lang, seconds_left))


def illegal_rule_text(lang: str, err: IllegalMove, pos: Position, typed: str = "") -> str:
    """The rule that forbids a move in a puzzle, without naming moves that are allowed (in a
    puzzle the list of legal moves can be the answer itself)."""
    code = err.code
    if _has_detail(err):
        return _detail_rule(lang, err, pos, typed)
    if code == ErrorCode.ILLEGAL_STEP:
        move = "-".join(map(str, err.squares))
        if (pos.piece_at(err.squares[0]) or "").isupper():
            kings = "rule.king_flying" if pos.variant.flying_kings else "rule.king_short"
            return t(lang, "err.illegal_step_king", move=move, king_rule=t(lang, kings))
        return t(lang, "err.illegal_step", move=move)
    if code in (ErrorCode.CAPTURE_COMPULSORY, ErrorCode.LAW_OF_QUANTITY, ErrorCode.LAW_OF_QUALITY,
                ErrorCode.KING_MUST_CAPTURE, ErrorCode.KING_EARLIEST):
        return t(lang, f"puzzle.rule.{code.value}")
    if code == ErrorCode.CAPTURE_NOT_FINISHED:
        return t(lang, "puzzle.rule.capture_not_finished", typed=typed or "x".join(map(str, err.squares)))
    if code == ErrorCode.ILLEGAL_CAPTURE:
        return t(lang, "err.illegal_capture", typed=typed or "x".join(map(str, err.squares)))
    return illegal_move_text(lang, err, pos, typed=typed)


def to_name(lang: str, name: str) -> str:
    """'a Luca', 'ad Ana' in Italian (the euphonic d before a vowel a); the name elsewhere."""
    key = "name.to_vowel" if name[:1].lower() in ("a", "á", "à") else "name.to"
    return t(lang, key, name=name)


def day_words(lang: str, day: str | dt.date, weekday: bool = False) -> str:
    """A date in words: '2 de marzo', '2 marzo', 'March 2' (with the weekday: 'lunes 2 de marzo')."""
    if isinstance(day, str):
        try:
            parsed = dt.date.fromisoformat(day)
        except ValueError:
            return day   # not a date: shown as it was given
        day = parsed
    values = {"day": day.day, "month": t(lang, f"month.{day.month}"), "year": day.year}
    if weekday:
        return t(lang, "date.weekday", weekday=t(lang, f"weekday.{day.weekday()}"), **values)
    return t(lang, "date.day", **values)


def ordinal(lang: str, n: int) -> str:
    """'4.º', 'quarto', '4th': a catalog's own word for small numbers, else its pattern."""
    word = catalog(lang).get(f"ordinal.{n}")
    return word if word is not None else t(lang, "ordinal.other", n=n)


# A listing is one message on every platform (Discord's 2,000 characters are the smallest limit):
# at most LISTED_PER_PAGE entries (the use cases page by it), each cut to LISTED_LINE characters,
# the rest summed up or paged.
LISTED_LINE = 110


def clip_line(line: str, limit: int = LISTED_LINE) -> str:
    """One entry of a listing, cut (with '…') when names make it long."""
    return line if len(line) <= limit else line[:limit - 1] + "…"


def short_list(lang: str, lines: Sequence[str], limit: int = LISTED_PER_PAGE) -> str:
    """Listing lines as one message: the first ``limit`` (clipped), then how many more there are."""
    shown = [clip_line(line) for line in lines[:limit]]
    if len(lines) > limit:
        shown.append(t(lang, "list.more", count=len(lines) - limit))
    return "\n".join(shown)


# -- the lists of variants in help and usage lines, from bot.rules.VARIANTS --------------------------


def _listed(lang: str, items: list[str], last_joint: str) -> str:
    """'a, b and c' ('a, b or c'): the last two joined by a catalog word."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + t(lang, last_joint) + items[-1]


def variant_words(lang: str) -> str:
    """'spanish|italian|triestina': the word of each variant in the language, as typed."""
    return "|".join(v.word(lang) for v in VARIANTS.values())


def variant_choice_list(lang: str) -> str:
    """'spanish, italian or triestina'."""
    return _listed(lang, [v.word(lang) for v in VARIANTS.values()], "help.or")


def variant_intro_list(lang: str) -> str:
    """'Spanish, Italian and Triestina (Italian rules on 10x10)': each variant's ``help.intro.<id>``,
    or its name (``variant.<id>``) for one without that line."""
    return _listed(lang, [t(lang, f"help.intro.{v.id}" if f"help.intro.{v.id}" in catalog("en") else f"variant.{v.id}")
                          for v in VARIANTS.values()], "help.and")


STANDING_VALUES.update(variant_words=variant_words, variant_choice_list=variant_choice_list,
                       variant_intro_list=variant_intro_list)


def button_rows(buttons: list[Button], reserve: int = 0) -> list[list[Button]]:
    """Buttons in rows that fit every platform (Discord: 5 rows of 5), ``reserve`` rows kept free."""
    limit = (MAX_BUTTON_ROWS - reserve) * BUTTONS_PER_ROW
    buttons = buttons[:limit]
    return [buttons[i:i + BUTTONS_PER_ROW] for i in range(0, len(buttons), BUTTONS_PER_ROW)]
