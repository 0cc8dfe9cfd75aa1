"""The chat side of puzzle runs: /streak's words read into a request, its results and what a run
says after an answer (``features.puzzle_runs``) turned into replies, and the chat's record message
(the outbox's ``ChatRecordBeaten``: a new post the first time, an edit of that message after).

A streak's board is a puzzle board (``present_puzzles.puzzle_board``, handed in: that module shows
what follows an answer through this one) without the Hint button, with Skip while the run has it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from bot.i18n import t
from bot.service.chat.commands import parse_variant
from bot.service.chat.registry import ButtonKind, action
from bot.service.chat.wording import variant_name
from bot.service.events import Button, Reply
from bot.service.features.puzzle_runs import (
    RecordOutcome,
    StreakBests,
    StreakBoard,
    StreakInPrivate,
    StreakOver,
    StreakRefused,
    StreakResult,
)
from bot.service.features.results_puzzles import Board
from bot.service.notifications import ChatRecordBeaten

# A puzzle board as present_puzzles draws it: (lang, board, text) -> its reply.
BoardReply = Callable[[str, Board, str], Reply]

SKIP_WORDS = ("skip", "saltar", "salta", "pasar", "passa", "salto")
BEST_WORDS = ("best", "record", "records", "récord", "mejor", "migliore")


@dataclass(frozen=True)
class StreakRequest:
    """/streak: ``action`` "start" (of ``variant``; None: the chat's), "skip" or "best"."""

    action: str
    variant: str | None = None


def parse_streak(args: list[str]) -> StreakRequest | None:
    """/streak [variant] | skip | best [variant] as a request, or None (words that mean nothing)."""
    words = [w.lower() for w in args]
    if words and words[0] in SKIP_WORDS:
        return StreakRequest("skip") if len(words) == 1 else None
    action_ = "start"
    if words and words[0] in BEST_WORDS:
        action_, args = "best", args[1:]
    if not args:
        return StreakRequest(action_)
    variant = parse_variant(args)
    return None if variant is None else StreakRequest(action_, variant)


def record_key(mode: str, variant: str) -> str:
    """What a chat's record message is remembered by (``Reply.record``)."""
    return f"{mode}:{variant}"


# -- /streak ------------------------------------------------------------------------------------------

def streak_board(lang: str, result: StreakBoard, draw: BoardReply, text: str) -> Reply:
    """A streak's board: no Hint (a streak is solved unaided), Skip while the run has it."""
    reply = draw(lang, result.board, text)
    hint = action(ButtonKind.PUZZLE_HINT, result.board.post.id, result.board.step)
    rows = [[b for b in row if b.action != hint] for row in reply.buttons]
    rows = [row for row in rows if row]
    if result.skips_left:
        skip = Button(t(lang, "streak.button_skip"), action(ButtonKind.STREAK_SKIP_AT, result.run.id,
                                                            result.board.post.id), "/streak skip", style="back")
        if rows and len(rows[-1]) < 5:
            rows[-1] = [*rows[-1], skip]
        else:
            rows.append([skip])
    return replace(reply, buttons=rows)


def _side(lang: str, board: Board) -> str:
    return t(lang, f"puzzle.to_win.{board.position.turn}")


def _board_text(lang: str, result: StreakBoard, key: str) -> str:
    return t(lang, key, variant=variant_name(lang, result.run.variant), score=result.run.score,
             rating=result.rating, side=_side(lang, result.board), number=result.run.score + 1)


def over_text(lang: str, over: StreakOver) -> str:
    """A run's end for its player: the score, their best, the chat's record when it made one."""
    record = over.record
    lines = [t(lang, "streak.over", score=over.run.score)]
    if record.personal_best:
        lines.append(t(lang, "streak.best_new", best=record.best))
    else:
        lines.append(t(lang, "streak.best", best=record.best))
    if record.chat_record:
        lines.append(t(lang, "streak.chat_record"))
    return "\n".join(lines)


def present_streak(lang: str, result: StreakResult, draw: BoardReply) -> list[Reply]:
    """/streak's answer (and the Skip button's)."""
    if isinstance(result, StreakRefused):
        key = "puzzle.none_left" if result.reason == "none_left" else f"streak.{result.reason}"
        return [Reply(t(lang, key), private=result.private)]
    if isinstance(result, StreakInPrivate):
        text = t(lang, "streak.in_private", name=result.waiting.name, link=result.waiting.link)
        return [Reply(_other_running(lang, result.run.variant, result.asked) + text)]
    if isinstance(result, StreakOver):
        return [Reply(over_text(lang, result), private=result.private)]
    if isinstance(result, StreakBests):
        return [Reply(bests_text(lang, result))]
    if result.resumed:
        key = "streak.resume"
    elif result.run.score == 0 and result.run.skips == 0:
        key = "streak.start"
    else:
        key = "streak.next"
    text = _other_running(lang, result.run.variant, result.asked) + _board_text(lang, result, key)
    return [streak_board(lang, result, draw, text)]


def _other_running(lang: str, running: str, asked: str | None) -> str:
    """The line that says a streak of another variant than the one asked for is running (one run at
    a time: the asked one starts once that one ends); "" when none was asked for."""
    if asked is None:
        return ""
    return t(lang, "streak.other_running", running=variant_name(lang, running),
             asked=variant_name(lang, asked)) + "\n"


def bests_text(lang: str, bests: StreakBests) -> str:
    variant = variant_name(lang, bests.variant)
    mine = (t(lang, "streak.best", best=bests.personal) if bests.personal is not None
            else t(lang, "streak.best_none"))
    lines = [t(lang, "streak.bests_title", variant=variant), mine]
    if bests.chat is not None:
        lines.append(t(lang, "streak.chat_best", score=bests.chat.score, name=bests.chat.name))
    return "\n".join(lines)


def follow_replies(lang: str, follow: object, draw: BoardReply) -> list[Reply]:
    """What a run says after an answer to its puzzle (``Acted.follow``): its next board, or its end."""
    if isinstance(follow, StreakBoard):
        return [streak_board(lang, follow, draw, _board_text(lang, follow, "streak.next"))]
    if isinstance(follow, StreakOver):
        return [Reply(over_text(lang, follow), private=follow.private)]
    return []


# -- the chat's record message ---------------------------------------------------------------------------

def record_text(lang: str, mode: str, variant: str, score: int, name: str, beaten_name: str | None = None,
                beaten_score: int | None = None) -> str:
    text = t(lang, "records.message", mode=t(lang, f"records.mode.{mode}"), variant=variant_name(lang, variant),
             score=score, name=name)
    if beaten_name is not None and beaten_score is not None:
        text += "\n" + t(lang, "records.beaten", name=beaten_name, score=beaten_score)
    return text


def record_message(notice: ChatRecordBeaten) -> Reply:
    """The chat's record message for a new record (``Reply.record``): the adapter edits the message
    known when it delivers it, else posts a new one and reports its id.  The notice's
    ``message_id`` (the one known when it was written) is not used: a record queued before the
    first post's id was known would post a second message."""
    text = record_text(notice.lang, notice.mode, notice.variant, notice.score, notice.name, notice.beaten_name,
                       notice.beaten_score)
    return Reply(text, record=record_key(notice.mode, notice.variant))


def outcome_lines(lang: str, record: RecordOutcome) -> list[str]:
    """A finished run's score for its player (storm's result can say the same)."""
    lines = [t(lang, "streak.best_new" if record.personal_best else "streak.best", best=record.best)]
    if record.chat_record:
        lines.append(t(lang, "streak.chat_record"))
    return lines
