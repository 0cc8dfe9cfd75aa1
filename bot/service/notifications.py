"""What the service says on its own, as small typed notifications (issue 18): what happened, in
which game, in which language, and the few facts the message shows as they were then.

A use case writes a notification to the outbox (``Outlet.notify``) instead of a finished message;
the outbox stores it as a small JSON object tagged with its ``notice`` kind and turns it into a
``Reply`` only when it is delivered, by the presenter registered for it
(``bot.service.chat.present_notices``), for the platform it goes to.  A web client could be given the
same notification as state.

What a message shows must be what it showed when it was written, whatever the game did since:
a notification about a game carries the game's changing fields as they stood (``GameState``);
the fields a game never changes (players, variant, level) are read from storage when it is shown.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, ClassVar

from bot.rules import Color, ResultReason
from bot.service.events import Mention
from bot.storage.records import GameRecord


@dataclass(frozen=True)
class GameState:
    """The fields of a game that change as it goes on, as they stood at a notification."""

    fen: str
    ply: int
    status: str = "active"
    deadline_at: float | None = None
    last_path: tuple[int, ...] = ()
    last_captured: tuple[int, ...] = ()
    result_score: str | None = None
    result_reason: str | None = None
    winner: str | None = None
    draw_offer: str | None = None

    @classmethod
    def of(cls, row: GameRecord) -> GameState:
        return cls(row.fen, row.ply, row.status, row.deadline_at, tuple(row.last_path), tuple(row.last_captured),
                   row.result_score, row.result_reason, row.winner, row.draw_offer)

    def on(self, row: GameRecord) -> GameRecord:
        """``row`` (the game as stored now) as it stood then."""
        return dataclasses.replace(row, fen=self.fen, ply=self.ply, status=self.status,
                                   deadline_at=self.deadline_at, last_path=self.last_path,
                                   last_captured=self.last_captured, result_score=self.result_score,
                                   result_reason=ResultReason(self.result_reason) if self.result_reason else None,
                                   winner=Color(self.winner) if self.winner else None,
                                   draw_offer=Color(self.draw_offer) if self.draw_offer else None)


@dataclass(frozen=True)
class Notification:
    """Something the service tells a chat on its own; ``kind`` tags it when it is stored."""

    kind: ClassVar[str] = ""


@dataclass(frozen=True)
class GameNotice(Notification):
    """A notification about game ``game_id``, told in ``lang``."""

    game_id: int
    lang: str


@dataclass(frozen=True)
class PostNotice(Notification):
    """A notification about puzzle post ``post_id``, told in ``lang``."""

    post_id: int
    lang: str


@dataclass(frozen=True)
class ChallengeNotice(Notification):
    """A notification about challenge ``challenge_id``, told in ``lang``."""

    challenge_id: int
    lang: str


@dataclass(frozen=True)
class BotMoved(GameNotice):
    """The bot played ``move`` from position ``before``; ``state``: the game after it; ``at``: when
    (the clock line counts from it); ``mention``: the player to move, pinged on the board."""

    kind: ClassVar[str] = "bot_moved"
    move: str
    before: str
    state: GameState
    at: float
    mention: Mention | None = None


@dataclass(frozen=True)
class LostOnTime(GameNotice):
    """The side to move ran out of time; ``state``: the game as it ended."""

    kind: ClassVar[str] = "lost_on_time"
    state: GameState


@dataclass(frozen=True)
class TournamentGameEnded(LostOnTime):
    """A tournament ended the game (adjudicated at its round's deadline, or forfeited by a player's
    withdrawal); delivered as a loss on time is, the final board and how it ended."""

    kind: ClassVar[str] = "game_ended_by_tournament"   # a game notice (game_id), not a tournament_* one


@dataclass(frozen=True)
class Reminder(GameNotice):
    """A tenth of the move time is left to ``color``, the side to move; ``left``: seconds left then;
    ``mention``: the player, pinged on it."""

    kind: ClassVar[str] = "reminder"
    color: str
    left: float
    mention: Mention | None = None


@dataclass(frozen=True)
class PrivateReminder(GameNotice):
    """The clock reminder, sent to the player's private chat instead of the group."""

    kind: ClassVar[str] = "private_reminder"
    color: str
    left: float


@dataclass(frozen=True)
class PrivateTurn(GameNotice):
    """'Your turn in game #N', in the player's private chat; ``left``: seconds left then."""

    kind: ClassVar[str] = "private_turn"
    left: float


@dataclass(frozen=True)
class TurnPing(GameNotice):
    """A short message in the group that pings the player to move."""

    kind: ClassVar[str] = "turn_ping"
    mention: Mention


@dataclass(frozen=True)
class AnalysisFailed(GameNotice):
    """The engine could not analyse the game."""

    kind: ClassVar[str] = "analysis_failed"


@dataclass(frozen=True)
class AnalysisReady(GameNotice):
    """The engine's notes on the game as it stood at ``ply`` are in storage (``Store.analysis``):
    the report, its picture and the annotated PDN are made from them when this is delivered."""

    kind: ClassVar[str] = "analysis_ready"
    ply: int


@dataclass(frozen=True)
class DailyPosted(PostNotice):
    """The puzzle of the day, posted (``post_id``: the post, which holds the day and the puzzle)."""

    kind: ClassVar[str] = "daily_posted"


@dataclass(frozen=True)
class DaySummary(PostNotice):
    """Who solved the day before's puzzle (post ``post_id``) by ``at``, and its solution."""

    kind: ClassVar[str] = "day_summary"
    at: float


@dataclass(frozen=True)
class FirstSolver(PostNotice):
    """``name`` solved the daily post first (elsewhere); ``streak``: their daily streak then."""

    kind: ClassVar[str] = "first_solver"
    name: str
    streak: int


@dataclass(frozen=True)
class ChallengeLapsed(ChallengeNotice):
    """Nobody took the challenge in time: it is closed."""

    kind: ClassVar[str] = "challenge_lapsed"


@dataclass(frozen=True)
class ChallengeEdited(ChallengeNotice):
    """A message of the bot showing the challenge (``message_id``) becomes what became of it
    (``status``: accepted, declined, cancelled, expired; ``by`` whom; the game it ``started``)."""

    kind: ClassVar[str] = "challenge_edited"
    status: str
    message_id: str
    by: str | None = None
    started: int | None = None


@dataclass(frozen=True)
class WebMoved(GameNotice):
    """``mover`` played ``move`` on the game's web page, from position ``before``; ``state``: the
    game after it; ``at``: when; ``draw_declined``: the move turned down the opponent's offer;
    ``mention``: the player to move, pinged on the board.  Delivered as the board reply a typed
    move gets."""

    kind: ClassVar[str] = "web_moved"
    move: str
    before: str
    state: GameState
    at: float
    mover: str
    draw_declined: bool = False
    mention: Mention | None = None


@dataclass(frozen=True)
class WebDrawOffered(GameNotice):
    """``offerer`` (playing ``color``) offered a draw on the game's web page; ``state``: the game
    then.  Delivered as /draw's answer, with its button to accept."""

    kind: ClassVar[str] = "web_draw_offered"
    state: GameState
    offerer: str
    color: str | None = None


@dataclass(frozen=True)
class WebGameEnded(GameNotice):
    """A player ended the game on its web page (resigned, accepted a draw) or found it lost on
    time there; ``state``: the game as it ended.  Delivered as the chat's final board."""

    kind: ClassVar[str] = "web_game_ended"
    state: GameState


@dataclass(frozen=True)
class TournamentNotice(Notification):
    """A notification about tournament ``tournament_id``, told in ``lang``.  What it shows of the
    tournament (pairings, standings) is read when it is delivered through
    ``Tournaments.pairings_of`` / ``Tournaments.standings_after``: a round's pairings and the
    standings after a complete round never change, so it shows what it showed when written."""

    tournament_id: int
    lang: str


@dataclass(frozen=True)
class TournamentRoundPaired(TournamentNotice):
    """Round ``round`` was paired and its games created: the pairings post (each board: white,
    black, the game's number; the bye), once, in the tournament's chat; ``deadline`` the round's."""

    kind: ClassVar[str] = "tournament_round_paired"
    round: int
    deadline: float


@dataclass(frozen=True)
class TournamentGameReady(TournamentNotice):
    """A player's game of round ``round`` is game ``game_id``, where they play ``color`` against
    ``opponent``: a ping of that player (``mention``) in the tournament's chat."""

    kind: ClassVar[str] = "tournament_game_ready"
    round: int
    game_id: int
    color: str
    opponent: str
    mention: Mention


@dataclass(frozen=True)
class TournamentBye(TournamentNotice):
    """A player has the bye in round ``round`` (``points`` without a game): a ping of that player
    (``mention``) in the tournament's chat, so they know they are not forgotten and wait a round."""

    kind: ClassVar[str] = "tournament_bye"
    round: int
    points: float
    mention: Mention


@dataclass(frozen=True)
class TournamentRoundEnded(TournamentNotice):
    """Round ``round`` is complete: the standings after it (a picture and text; a cross table for a
    round robin).  ``adjudicated``/``forfeited``: game numbers its deadline ended so."""

    kind: ClassVar[str] = "tournament_round_ended"
    round: int
    adjudicated: tuple[int, ...] = ()
    forfeited: tuple[int, ...] = ()


@dataclass(frozen=True)
class TournamentFinished(TournamentNotice):
    """The tournament is over: ``winner_name`` (``winner_id``) won with ``points``; the final
    standings follow (``Tournaments.standings_after`` with no round)."""

    kind: ClassVar[str] = "tournament_finished"
    winner_id: str
    winner_name: str
    points: float


@dataclass(frozen=True)
class StormFinished(Notification):
    """Storm run ``run_id`` ended: ``name`` (``user_id``) solved ``solved`` puzzles of ``variant``
    with ``missed`` wrong moves; told in the chat where /storm was asked, in ``lang``."""

    kind: ClassVar[str] = "storm_finished"
    run_id: int
    lang: str
    user_id: str
    name: str
    variant: str
    solved: int
    missed: int


@dataclass(frozen=True)
class ChatRecordBeaten(Notification):
    """``name`` made the chat's record of ``mode`` (streak, storm) in ``variant`` with ``score``, told
    in ``lang``: the chat's record message is edited to say so (the one the adapter knows when it
    delivers this; none yet: a new one is posted); ``message_id`` the one known when this was written
    (kept for the record, not used: it may be unknown yet); ``beaten_name`` and ``beaten_score`` the
    record it beat (None: the first)."""

    kind: ClassVar[str] = "chat_record"
    mode: str
    variant: str
    lang: str
    score: int
    name: str
    message_id: str | None = None
    beaten_name: str | None = None
    beaten_score: int | None = None


@dataclass(frozen=True)
class OwnPuzzlesDue(Notification):
    """``due`` puzzles from the player's own games are due (``mention``: the player), told in ``lang``
    in the chat where they asked to be reminded."""

    kind: ClassVar[str] = "own_puzzles_due"
    lang: str
    due: int
    mention: Mention


KINDS: dict[str, type[Notification]] = {cls.kind: cls for cls in (
    BotMoved, LostOnTime, Reminder, PrivateReminder, PrivateTurn, TurnPing, AnalysisFailed, DailyPosted, DaySummary,
    FirstSolver, OwnPuzzlesDue, ChallengeLapsed, ChallengeEdited, AnalysisReady, WebMoved, WebDrawOffered, WebGameEnded,
    TournamentRoundPaired, TournamentGameReady, TournamentBye, TournamentRoundEnded, TournamentFinished,
    TournamentGameEnded, StormFinished, ChatRecordBeaten)}


def _plain(value: Any) -> Any:
    if isinstance(value, GameState):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)
                if getattr(value, f.name) != f.default or f.default is dataclasses.MISSING}
    if isinstance(value, Mention):
        return [value.user_id, value.name, value.username]
    if isinstance(value, tuple):
        return list(value)
    return value


def to_json(notice: Notification) -> str:
    """The notification as stored: its fields, tagged with its kind (``notice``); a game's id as
    ``game_id``, as every stored message has it."""
    data: dict[str, Any] = {"notice": notice.kind}
    for f in dataclasses.fields(notice):
        value = getattr(notice, f.name)
        if value is None and f.default is None:
            continue
        data[f.name] = _plain(value)
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def is_notice(data: Any) -> bool:
    """Whether a stored row (parsed) is a notification, not a finished reply."""
    return isinstance(data, dict) and "notice" in data


def from_json(data: dict[str, Any]) -> Notification:
    """The notification ``to_json`` wrote (parsed); ValueError for an unknown kind."""
    cls = KINDS.get(data["notice"])
    if cls is None:
        raise ValueError(f"unknown notification {data['notice']!r}")
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name not in data:
            continue
        value = data[f.name]
        if f.name == "state":
            state: dict[str, Any] = {key: tuple(v) if isinstance(v, list) else v for key, v in value.items()}
            value = GameState(**state)
        elif f.name == "mention" and value is not None:
            value = Mention(*value)
        elif isinstance(value, list):
            value = tuple(value)
        values[f.name] = value
    return cls(**values)
