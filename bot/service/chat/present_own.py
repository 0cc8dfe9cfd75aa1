"""The chat side of the puzzles from the players' own games: ``/puzzle mine`` and ``/puzzle remind``
read into typed requests, and what ``features.own_puzzles`` returns worded (catalog keys ``own.*``).
The puzzle itself is a personal puzzle: its board and every answer are the puzzles' presenter's."""

from __future__ import annotations

from dataclasses import dataclass, replace

from bot.i18n import t, tn
from bot.service.chat import present_puzzles
from bot.service.chat.registry import DAILY_OFF_WORDS, DAILY_ON_WORDS, fold
from bot.service.chat.wording import duration
from bot.service.events import Reply
from bot.service.features.own_puzzles import OwnGiven, OwnNoneDue, OwnOrigin, OwnResult
from bot.service.features.results_puzzles import PuzzleGiven, PuzzleInPrivate, PuzzleResult
from bot.service.notifications import OwnPuzzlesDue

# /puzzle mine: the words for one's own puzzles in our languages (folded: accents and case away).
MINE_WORDS = ("mine", "my", "own", "mios", "mias", "mio", "mia", "miei", "mie", "mine_puzzles")
# /puzzle remind [on|off].
REMIND_WORDS = ("remind", "reminder", "reminders", "recordar", "recordatorio", "recordatorios", "avviso", "avvisi",
                "promemoria", "ricorda")
ON_WORDS = tuple(fold(word) for word in DAILY_ON_WORDS)
OFF_WORDS = tuple(fold(word) for word in DAILY_OFF_WORDS)


@dataclass(frozen=True)
class OwnRequest:
    """``action`` "mine" (the due puzzle) or "remind" (``active``: on, off, None: the setting)."""

    action: str
    active: bool | None = None


def parse_own(lang: str, args: list[str]) -> OwnRequest | Reply | None:
    """/puzzle mine | remind [on|off] as a request, the reply that refuses it (a word too many), or
    None when the words are not about one's own puzzles (the rest of /puzzle reads them)."""
    words = [fold(word) for word in args]
    if not words:
        return None
    if words[0] in MINE_WORDS:
        return OwnRequest("mine") if len(words) == 1 else Reply(t(lang, "own.usage"))
    if words[0] not in REMIND_WORDS:
        return None
    if len(words) == 1:
        return OwnRequest("remind")
    if len(words) == 2 and words[1] in ON_WORDS:
        return OwnRequest("remind", True)
    if len(words) == 2 and words[1] in OFF_WORDS:
        return OwnRequest("remind", False)
    return Reply(t(lang, "own.usage"))


def linked(given: OwnGiven, outcome: PuzzleResult) -> OwnGiven:
    """``given`` with its puzzle as the chat layer made it (a private chat's link added)."""
    return replace(given, given=outcome) if isinstance(outcome, PuzzleGiven | PuzzleInPrivate) else given


def intro(lang: str, origin: OwnOrigin) -> str:
    """'From your game #12 against Ana, move 17: ...' and how many are due."""
    text = t(lang, f"own.intro.{origin.kind}", game=origin.game_id, opponent=origin.opponent,
             move=origin.move_number)
    if origin.due > 1:
        text += " " + tn(lang, "own.due", origin.due)
    return text


def present(lang: str, result: OwnResult) -> list[Reply]:
    """The replies to /puzzle mine and /puzzle remind."""
    if isinstance(result, OwnGiven):
        replies = present_puzzles.present(lang, result.given)
        if isinstance(result.given, PuzzleGiven) and replies:
            # Where the puzzle is shown, the words say where it comes from (a puzzle waiting in a
            # private chat keeps the group's message short).
            first = replies[0]
            replies[0] = replace(first, text=intro(lang, result.origin) + "\n" + first.text)
        return replies
    if isinstance(result, OwnNoneDue):
        if not result.waiting or result.next_due is None:
            text = t(lang, "own.none")
        else:
            text = tn(lang, "own.waiting", result.waiting, when=duration(lang, result.next_due - result.now))
        if result.scanning:
            text += " " + tn(lang, "own.scanning", result.scanning)
        return [Reply(text, private=True)]
    due = tn(lang, "own.due", result.due) if result.due else t(lang, "own.due_none")
    if not result.changed:
        return [Reply(t(lang, "own.remind_is_on" if result.active else "own.remind_is_off") + " " + due, private=True)]
    return [Reply(t(lang, "own.remind_on" if result.active else "own.remind_off") + " " + due, private=True)]


def opened(lang: str, result: PuzzleResult, origin: OwnOrigin | None) -> list[Reply]:
    """A puzzle opened by its start link (a private chat): the puzzles' replies, and where it comes
    from when it is one of the user's own."""
    replies = present_puzzles.present(lang, result)
    if origin is not None and replies:
        replies[0] = replace(replies[0], text=intro(lang, origin) + "\n" + replies[0].text)
    return replies


def reminder(notice: OwnPuzzlesDue) -> Reply:
    """The daily reminder of a player's due puzzles, pinging them."""
    mention = notice.mention
    return Reply(tn(notice.lang, "own.reminder", notice.due, name=mention.name), mentions=[mention])
