"""Typed requests and results of the ratings, history, analysis and settings use cases: what a
player's record is, who leads, which games ended, what the chat is set to.  They carry data
(ratings as numbers and shown strings, counts, records); ``bot.service.chat.present_stats`` words and
draws them for a chat."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from bot.ai import MoveNote
from bot.rules import Color, Position
from bot.service.features.results import GameStarted
from bot.service.features.results_games import BotGameStarted, ChallengeChoice, ChallengeOpened, Refused
from bot.storage.records import GameRecord


@dataclass(frozen=True)
class Record:
    """Games, wins, draws and losses."""

    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0


# -- refusals shared by several commands ---------------------------------------------------------------

@dataclass(frozen=True)
class Usage:
    """The command's words could not be read: its usage is the answer (``command``: its name)."""

    command: str


@dataclass(frozen=True)
class UnknownPlayer:
    """An @handle nobody on this platform has."""

    handle: str


@dataclass(frozen=True)
class UnknownVariant:
    """Words that name no variant."""

    words: str


# -- /stats ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class StatsRequest:
    """/stats: nobody (the asker), one @handle, or two (their games together)."""

    handles: tuple[str, ...] = ()


@dataclass(frozen=True)
class PoolStats:
    """A player's standing in one pool: ``variant``, against the bot or people; ``rating``: as
    shown ('1500?' while provisional; None: never rated, only unrated games); ``deviation``:
    today's, rounded."""

    variant: str
    vs_bot: bool
    rating: str | None
    deviation: int | None
    record: Record


@dataclass(frozen=True)
class PuzzleStats:
    rating: str
    solved: int
    streak: int
    best: int


@dataclass(frozen=True)
class PlayerStats:
    """A player's ratings, results and puzzles; ``series``: the rating over time of each pool
    between people (variant, [(epoch, rating)]) for a chart."""

    name: str
    pools: list[PoolStats]
    puzzles: PuzzleStats | None
    series: list[tuple[str, list[tuple[float, float]]]]


@dataclass(frozen=True)
class HeadToHead:
    """Two players' finished games together, per pool, from ``a``'s side."""

    a: str
    b: str
    pools: list[tuple[str, Record]]


StatsOutcome = PlayerStats | HeadToHead | Usage | UnknownPlayer


# -- /top ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TopRequest:
    """/top: ``scope`` 'chat', 'global' or 'puzzles'; ``variant``: one variant (None: every
    variant with ranked players, the chat's own first)."""

    scope: Literal["chat", "global", "puzzles"] = "chat"
    variant: str | None = None


@dataclass(frozen=True)
class RankedPlayer:
    name: str
    rating: str
    games: int


@dataclass(frozen=True)
class VariantRanking:
    """One variant's leaderboard (``everywhere``: every chat of the platform); empty: nobody has
    ``min_games`` rated games yet."""

    variant: str
    everywhere: bool
    entries: list[RankedPlayer]
    min_games: int


@dataclass(frozen=True)
class PuzzleSolver:
    name: str
    points: float
    solved: int
    streak: int
    rating: str


@dataclass(frozen=True)
class PuzzleRanking:
    entries: list[PuzzleSolver]


TopOutcome = list[VariantRanking] | PuzzleRanking


# -- /history --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class HistoryRequest:
    """/history [@user]: ``handle`` as typed, '@' and all (None: everybody's games in this chat)."""

    handle: str | None = None


@dataclass(frozen=True)
class FinishedGames:
    """The chat's last finished games, newest first (empty: none)."""

    games: list[GameRecord]


HistoryOutcome = FinishedGames | UnknownPlayer


@dataclass(frozen=True)
class RematchRefused:
    """The Rematch button did nothing: 'invalid' (no finished game of this chat), 'not_player',
    or 'open' (the rematch challenge ``game_id`` is already open)."""

    reason: Literal["invalid", "not_player", "open"]
    game_id: int | None = None


@dataclass(frozen=True)
class Rematched:
    """What the Rematch button became: a game against the bot started at once ('bot'), the
    opponent's open rematch challenge accepted ('accept'), or a new challenge to them ('challenge');
    ``outcome`` is that use case's own typed answer."""

    how: Literal["bot", "accept", "challenge"]
    outcome: BotGameStarted | GameStarted | ChallengeChoice | ChallengeOpened | Refused


RematchOutcome = RematchRefused | Rematched


# -- /analysis -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class AnalysisRequest:
    """Analyse ``game`` (None: the board replied to, else the asker's last finished game here);
    ``lang``: the language the report will be written in when it comes (through the outbox)."""

    game: int | None
    lang: str


@dataclass(frozen=True)
class AnalysisStarted:
    game_id: int
    seconds: int


AnalysisRefusal = Literal["unknown", "active", "none", "busy", "pool_busy", "no_moves"]


@dataclass(frozen=True)
class AnalysisRefused:
    """No analysis started: ``reason``; ``game_id``: the game meant (for 'busy': the one running)."""

    reason: AnalysisRefusal
    game_id: int | None = None


AnalysisOutcome = AnalysisStarted | AnalysisRefused


@dataclass(frozen=True)
class Ending:
    """A move in a known ending (the endgame tables' positions): the first move played in one
    (``entered``), or a move that changed its result.  ``by_white``: White played it."""

    number: str
    note: MoveNote
    by_white: bool
    entered: bool


@dataclass(frozen=True)
class Mistake:
    """One of the worst moves of a side: its move number ('12.' or '12...'), the engine's note on
    it (the move, the better one, what it cost), and the position it was played in, to draw."""

    number: str
    note: MoveNote
    before: Position


@dataclass(frozen=True)
class AnalysisReport:
    """The engine's notes on a finished game: per side (white first) its worst mistakes, the
    evaluation after every ply from White's side, and the annotated PDN."""

    game: GameRecord
    mistakes: list[tuple[Color, list[Mistake]]]
    evaluations: list[float]
    pdn: str
    endings: list[Ending] = field(default_factory=list)


# -- settings --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RulesOf:
    variant: str


@dataclass(frozen=True)
class LanguageSet:
    lang: str


@dataclass(frozen=True)
class ChatSettings:
    """The chat's default variant as it is (its language is the one the answer is in)."""

    variant: str


@dataclass(frozen=True)
class VariantSet:
    variant: str


@dataclass(frozen=True)
class SettingsRequest:
    """/settings: show (both None) or set the default ``variant`` or the ``lang``uage."""

    variant: str | None = None
    lang: str | None = None


SettingsOutcome = ChatSettings | VariantSet | LanguageSet


@dataclass(frozen=True)
class NotifyShown:
    """Whether the user hears of their turn privately."""

    private: bool


@dataclass(frozen=True)
class NotifySet:
    """/notify on|off was stored; ``start_link``: where the user must start the bot first for it
    to write to them (a platform where the bot may write only to users who started it)."""

    on: bool
    start_link: str | None = None


NotifyOutcome = NotifyShown | NotifySet

