"""Typed requests and results of the puzzle use cases (``bot.service.features.puzzles``): what
happened to a post and a solver, for ``bot.service.chat.present_puzzles`` to word, draw and give
buttons, or for any other client to show as state."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal

from bot.rules import IllegalMove, Position
from bot.storage.records import PuzzlePostRecord, SubscriptionRecord

# How the last moves of a line are drawn: the earlier ones' paths, the last one's path, and every
# square a piece was taken from.
Drawn = tuple[list[list[int]], list[int], list[int]]
SolvedHow = Literal["personal", "first", "first_elsewhere", "nth"]
HistoryOutcome = Literal["solved", "gave_up", "failed", "open"]


# -- requests ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class DailyRequest:
    """/daily: ``action`` "show", "on" (at ``time`` in ``zone``, of ``variant``; None: the chat's
    zone or the default, the chat's variant; the posts in ``language``) or "off"."""

    action: str
    time: str = "09:00"
    zone: str | None = None
    variant: str | None = None
    language: str | None = None


@dataclass(frozen=True)
class PuzzleRequest:
    """/puzzle: ``action`` "new" (of ``variant``; None: the chat's), "history" or "give_up" (the
    post ``ref``, else the one the event means)."""

    action: str
    variant: str | None = None
    ref: int | None = None
    # "new": only puzzles whose line shows this theme (``bank.THEMES``); "themes" lists them.
    theme: str | None = None


# -- /daily --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class DailySetting:
    """The chat's daily puzzle setting (None: not subscribed)."""

    subscription: SubscriptionRecord | None


@dataclass(frozen=True)
class DailyOff:
    """The daily puzzle was turned off (``was_on`` False: there was none to turn off)."""

    was_on: bool


@dataclass(frozen=True)
class DailyOn:
    time: str
    zone: str
    variant: str


DailyResult = DailySetting | DailyOff | DailyOn


# -- acting on a post -------------------------------------------------------------------------------------

class Refusal(Enum):
    """Why nothing was done with a post (or no post was found)."""

    NO_PUZZLE = "none"                  # no open puzzle the event means
    UNKNOWN = "unknown"                 # no such post here, or its puzzle left the bank
    NOT_YOURS = "not_yours"             # someone else's personal puzzle
    NOT_MEMBER = "not_member"           # a daily of a chat the user did not act in
    OVER = "over"                       # a daily the next day's post replaced
    ALREADY = "already"                 # solved already
    GAVE_UP = "gave_up_already"         # given up already (``solution`` shown again)
    LINK_INVALID = "link_invalid"       # a /start link not signed for this user
    NONE_LEFT = "none_left"             # the bank has no puzzle of the variant
    STALE = "stale"                     # a button of a board that changed
    NO_HINTS = "no_hints"               # a streak's puzzle (puzzle_runs: solved unaided)
    MOVE_USAGE = "move_usage"           # an answer with no move in it


class Reaction(Enum):
    """How an act went, where a reaction to the user's message stands in for the private replies."""

    RIGHT = "right"
    WRONG = "wrong"
    SOLVED = "solved"
    OTHER = "other"


@dataclass(frozen=True)
class Refused:
    reason: Refusal
    private: bool = False
    day: str | None = None              # OVER: the day of the post
    solution: tuple[str, ...] = ()      # GAVE_UP: the solution


@dataclass(frozen=True)
class Board:
    """A post's position for one user (or the chat) to act on, with its buttons: the pieces that
    can move, a hint, giving up (``give_up``).  ``personal``: the board is the acting user's own
    (the chat layer writes their pass into the start link of a private chat); False: the shared
    post."""

    post: PuzzlePostRecord
    position: Position
    step: int
    personal: bool = False
    private: bool = False
    drawn: Drawn | None = None
    picture: tuple[bytes, str] | None = None

    @property
    def give_up(self) -> bool:
        return self.step > 0 or self.personal


@dataclass(frozen=True)
class YourPosition:
    """The user's own position in a post (a button of another step was pressed)."""

    board: Board


@dataclass(frozen=True)
class PieceSelected:
    """A piece was chosen on a puzzle board: where it may go."""

    board: Board
    square: int
    ends: tuple[int, ...]


@dataclass(frozen=True)
class PathToChoose:
    """A destination reached by several captures: the ones to choose from (their indexes among
    the position's legal moves, to press; the move; its path)."""

    board: Board
    paths: tuple[tuple[int, str, list[int]], ...]
    start: int
    end: int


@dataclass(frozen=True)
class RatingChange:
    rating: str
    delta: float


@dataclass(frozen=True)
class AnswerIllegal:
    """A move the rules refuse (``error`` None: no move could be read)."""

    error: IllegalMove | None
    position: Position
    typed: str
    private: bool


@dataclass(frozen=True)
class AnswerWrong:
    """A wrong move: the moves of the answer that were right before it, the move, how the
    defender refutes it (may be empty); the board to go on from (the chat layer shows it where the
    move was pressed on one)."""

    played: tuple[str, ...]
    wrong: str
    refutation: tuple[str, ...]
    rating: RatingChange | None
    private: bool
    board: Board


@dataclass(frozen=True)
class AnswerRight:
    """A right move, and the defender's reply (``forced``: it had no other; ``replier``: "W" or "B")."""

    reply: str
    forced: bool
    replier: str
    board: Board


@dataclass(frozen=True)
class Solved:
    """The puzzle was solved with ``line``.  ``how``: "personal", "first" (the post's first solver,
    announced in the chat), "first_elsewhere" (the first, solved in a private chat: the post's chat
    was told in the outbox) or "nth" (the ``number``-th solver).  ``tags``: the puzzle's themes."""

    post: PuzzlePostRecord
    line: tuple[str, ...]
    how: SolvedHow
    name: str
    streak: int
    number: int
    tags: dict[str, Any]
    rating: RatingChange | None


@dataclass(frozen=True)
class HintGiven:
    square: int
    private: bool


@dataclass(frozen=True)
class GaveUp:
    post: PuzzlePostRecord
    solution: tuple[str, ...]
    private: bool


Step = Refused | YourPosition | PieceSelected | PathToChoose | AnswerIllegal | AnswerWrong | AnswerRight | Solved \
    | HintGiven | GaveUp


@dataclass(frozen=True)
class Acted:
    """What an act on a post came to, for its user: ``step``.  ``private``: the answers go to them
    alone (a group); ``stand_in``: nothing can be shown to one member here (a Telegram group), so
    a reaction (``reaction``) stands in for the private answers, which carry the link to the
    private chat instead (with the user's pass, signed by the chat layer); ``label``: the user has
    several puzzles open here (the chat layer says which one a typed answer went to)."""

    post: PuzzlePostRecord
    step: Step
    private: bool = False
    reaction: Reaction = Reaction.OTHER
    stand_in: bool = False
    label: bool = False
    # What the run the post belongs to says next (``features.puzzle_runs``: its next board, or its
    # end), shown after the step; None: no run, or nothing follows.
    follow: Any = None
    # Whether hints may be asked for on this post (a streak's puzzle: none, so no Hint button).
    hints: bool = True


@dataclass(frozen=True)
class PuzzleGiven:
    """/puzzle: a personal puzzle, its board (``rating``: the puzzle's)."""

    board: Board
    rating: Any
    theme: str | None = None           # the theme asked for (/puzzle [variant] theme)


@dataclass(frozen=True)
class PuzzleInPrivate:
    """/puzzle where nothing can be shown to one member: post ``post_id`` waits in the member's
    private chat with the bot; ``link``: the link that opens it there with their pass (the chat
    layer's to make and sign: the use cases know no deep links)."""

    name: str
    post_id: int
    link: str = ""


@dataclass(frozen=True)
class PuzzleOpened:
    """``/start p<post>``: the user's own way through that post, here."""

    board: Board


@dataclass(frozen=True)
class HistoryEntry:
    """One puzzle of /puzzle history: ``outcome`` "solved", "gave_up", "failed" or "open"."""

    post: PuzzlePostRecord
    rating: Any
    outcome: HistoryOutcome
    misses: int


@dataclass(frozen=True)
class PuzzleHistory:
    entries: tuple[HistoryEntry, ...]
    private: bool


@dataclass(frozen=True)
class ThemeCounts:
    """/puzzle themes: how many of the variant's puzzles show each theme (``bank.THEMES``' order)."""

    variant: str
    counts: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class ThemeEmpty:
    """/puzzle [variant] theme: no puzzle of the variant shows that theme."""

    variant: str
    theme: str


PuzzleResult = (Refused | Acted | PuzzleGiven | PuzzleInPrivate | PuzzleOpened | PuzzleHistory | ThemeCounts
                | ThemeEmpty)


@dataclass(frozen=True)
class Solvers:
    """A past daily post's solvers (for the summary posted with the next day's)."""

    post: PuzzlePostRecord
    names: tuple[str, ...] = field(default_factory=tuple)
    solution: tuple[str, ...] = ()
