"""Typed requests and results of use cases: what happened, for a presenter (``bot.service.chat.presenters``) to turn
into replies for a chat, or for any other client (a web board) to show as state."""

from __future__ import annotations

from dataclasses import dataclass

from bot.rules import IllegalMove, Move, Position, Result
from bot.service.features.identity import Mention
from bot.service.features.results_games import ChallengeClosed
from bot.storage.records import GameRecord


@dataclass(frozen=True)
class MoveRequest:
    """A move to play (or a puzzle answer: one move or a line), in the game ``game`` (its number:
    typed, or the board the message replied to), else the user's only game here; or the answer to
    puzzle post ``post`` (the puzzle the message replied to).  ``aimed``: the request named what it
    is for (a reply to some message): no open puzzle of the user is guessed then."""

    move: str
    game: int | None = None
    post: int | None = None
    aimed: bool = False


@dataclass(frozen=True)
class MoveMade:
    """A move was played and stored.  ``game``: the game after it; ``before``: the position it
    was played in; ``turn``: whom to tell it is their turn (None: nobody, or they were told in
    their private chat already); ``draw_declined``: the move turned down the opponent's offer."""

    game: GameRecord
    before: Position
    played: Move
    mover: str
    result: Result | None
    draw_declined: bool
    bot_next: bool
    now: float
    turn: Mention | None = None


@dataclass(frozen=True)
class MoveIllegal:
    """A move the rules refuse, as typed (or pressed) in ``before``; ``to_move``: whose turn it is
    (as stored: ``game``, when given, names the bot in the reader's language)."""

    error: IllegalMove
    before: Position
    typed: str
    to_move: str
    game: GameRecord | None = None


@dataclass(frozen=True)
class MoveStale:
    """The game changed while the move was being played (another move, a resignation): nothing
    was written; ``game`` as it is now."""

    game: GameRecord


MoveOutcome = MoveMade | MoveIllegal | MoveStale


@dataclass(frozen=True)
class GameStarted:
    """A challenge was accepted: ``game`` began.  ``withdrawn``: the challenger's other open
    challenges, closed because she now has a game; ``edits``: the closed challenges' messages in
    this chat, updated; ``turn``: whom to ping that it is their move (None: nobody here)."""

    game: GameRecord
    challenger_name: str
    withdrawn: list[int]
    edits: list[ChallengeClosed]
    now: float
    turn: Mention | None = None
