"""Typed results of the games' use cases (games, play, the bot opponent): what happened, for a
presenter (``bot.service.chat.present_games``) to word and draw, or for any other client to show."""

from __future__ import annotations

from dataclasses import dataclass

from bot.rules import Move, Result
from bot.storage.records import ChallengeRecord, GameRecord


@dataclass(frozen=True)
class NewGameArgs:
    """A challenge to open: of ``variant`` (None: the chat's), the challenger playing ``color``
    (white, black or random), to the @handle ``target`` (None: anyone), with ``move_seconds`` a move."""

    variant: str | None
    color: str
    target: str | None
    move_seconds: int


@dataclass(frozen=True)
class PlayArgs:
    """A game against the bot: of ``variant`` (None: the chat's), at ``level``, the human playing
    ``color`` (white, black or random), with ``move_seconds`` a move."""

    variant: str | None
    level: int
    color: str
    move_seconds: int


@dataclass(frozen=True)
class GameRef:
    """A request about one game: ``game`` (its number), or the one the event means (the board
    replied to, the user's only game here) when None."""

    game: int | None = None


@dataclass(frozen=True)
class ChallengeRef:
    """A request about one challenge: ``challenge`` (its number), or, when None, the one the user
    can only mean (or all of theirs, to withdraw)."""

    challenge: int | None = None


@dataclass(frozen=True)
class Refused:
    """Nothing was done, for the reason ``reason`` (a catalog key, with its ``values``).
    ``game``: the game it is about, shown as a board when ``board``; ``private``: only the user who
    acted needs to see it (a button press); ``replaces``: the board edits the pressed one."""

    reason: str
    game: GameRecord | None = None
    private: bool = False
    board: bool = False
    replaces: bool = False
    values: tuple[tuple[str, object], ...] = ()
    # A second catalog key said after the first (how to use the command, after what was wrong).
    then: str | None = None


@dataclass(frozen=True)
class NoGame:
    """No game could be meant: ``reason`` is one of unknown (``ref`` is not a game of this chat),
    over, not_player, recently_over (``games[0]`` just ended), spectator, none, which (``games``:
    the user's games here, one must be named) and stale."""

    reason: str
    ref: int | None = None
    games: tuple[GameRecord, ...] = ()
    private: bool = False


@dataclass(frozen=True)
class TimedOut:
    """The game meant had run out of time before the scheduler noticed: it was ended on time
    (``game`` as it is now, ``result`` the loss on time) and nothing else was done.  ``private``:
    said only to the user who acted (a button press)."""

    game: GameRecord
    result: Result
    private: bool = False


@dataclass(frozen=True)
class BoardShown:
    """/board: the game as it is at ``now``."""

    game: GameRecord
    now: float


@dataclass(frozen=True)
class PdnText:
    """/pdn: the game ``game_id`` written as PDN."""

    game_id: int
    text: str


@dataclass(frozen=True)
class GameEnded:
    """The players ended the game (a resignation, a draw agreed): ``game`` as it is now."""

    game: GameRecord
    result: Result


@dataclass(frozen=True)
class ResignAsked:
    """A first /resign: ``asker`` (playing ``color``) is asked to confirm."""

    game: GameRecord
    asker: str
    color: str | None


@dataclass(frozen=True)
class DrawOffered:
    """``offerer`` (playing ``color``) offered a draw; stored on ``game``."""

    game: GameRecord
    offerer: str
    color: str | None


@dataclass(frozen=True)
class PiecesShown:
    """The Back button: the game's board with its piece buttons again."""

    game: GameRecord
    now: float


@dataclass(frozen=True)
class PiecePicked:
    """A piece button: the squares the piece on ``square`` can go to are to be offered."""

    game: GameRecord
    square: int


@dataclass(frozen=True)
class PathsOffered:
    """A destination several captures reach: the routes ``matching`` to choose from (``legal``:
    all legal moves, whose indexes the route buttons carry)."""

    game: GameRecord
    legal: tuple[Move, ...]
    matching: tuple[Move, ...]


@dataclass(frozen=True)
class RepeatedPress:
    """A second press of the button that just played ``notation`` (a double tap): the same answer
    the first press gave."""

    game: GameRecord
    mover: str
    notation: str
    now: float


@dataclass(frozen=True)
class BotDrawAnswer:
    """The bot's answer to a draw offer: ``result`` when it accepted (``game`` is then over)."""

    game: GameRecord
    result: Result | None


@dataclass(frozen=True)
class BotGameStarted:
    """/play: a game against the bot began; ``player`` plays ``color``."""

    game: GameRecord
    player: str
    color: str
    now: float




# -- challenges ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChallengeClosed:
    """A message showing ``challenge`` (``message_id``, in the chat that acted) is to be edited:
    what became of it (``status``: accepted, declined, cancelled, expired; ``by`` whom; the
    ``game_id`` it started), with no buttons any more.  ``chat_lang``: the language of its chat."""

    challenge: ChallengeRecord
    status: str
    message_id: str
    chat_lang: str
    by: str | None = None
    game_id: int | None = None


@dataclass(frozen=True)
class ChallengeOpened:
    """/new: ``challenge`` is open (to the chat, or to its target)."""

    challenge: ChallengeRecord


@dataclass(frozen=True)
class ChallengeChoice:
    """Several challenges could be meant (``reason``: accept.which or decline.which): they are
    listed for the user to name one."""

    reason: str
    challenges: tuple[ChallengeRecord, ...]
    private: bool = False


@dataclass(frozen=True)
class ChallengeDeclined:
    """``challenge`` was declined by ``by``; ``edits``: its messages in this chat, to update."""

    challenge: ChallengeRecord
    by: str
    edits: tuple[ChallengeClosed, ...]


@dataclass(frozen=True)
class ChallengesCancelled:
    """The challenges ``ids`` were withdrawn; ``edits``: their messages in this chat, to update."""

    ids: tuple[int, ...]
    edits: tuple[ChallengeClosed, ...]


@dataclass(frozen=True)
class GamesPage:
    """/games: page ``page`` of ``pages`` of the chat's active games and open challenges
    (``total`` in all; ``games`` and ``challenges`` on this page, ``later`` after it)."""

    page: int
    pages: int
    total: int
    games: tuple[GameRecord, ...]
    challenges: tuple[ChallengeRecord, ...]
    later: int


ChallengeResult = ChallengeOpened | ChallengeChoice | ChallengeDeclined | ChallengesCancelled | GamesPage


GameResult = (Refused | NoGame | TimedOut | BoardShown | PdnText | GameEnded | ResignAsked | DrawOffered
              | PiecesShown | PiecePicked | PathsOffered | RepeatedPress | BotDrawAnswer | BotGameStarted
              | ChallengeResult)
