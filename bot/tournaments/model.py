"""A tournament as plain immutable data: its settings, players, rounds and results.

Every change (``flow``) returns a new ``Tournament``; nothing here does I/O, so the service can
store a tournament as it is, run a change again after a crash and get the same state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal, get_args

# From white's side: a forfeit ("+-", "-+") is a result without a game, scored as a win and a loss.
Result = Literal["1-0", "0-1", "1/2-1/2", "+-", "-+"]
RESULTS: tuple[Result, ...] = get_args(Result)
PLAYED: frozenset[Result] = frozenset({"1-0", "0-1", "1/2-1/2"})
FORFEITS: frozenset[Result] = frozenset({"+-", "-+"})

# Points of each side, (white, black).
RESULT_POINTS: dict[Result, tuple[float, float]] = {
    "1-0": (1.0, 0.0), "0-1": (0.0, 1.0), "1/2-1/2": (0.5, 0.5), "+-": (1.0, 0.0), "-+": (0.0, 1.0),
}

MIN_PLAYERS = 3
MAX_ROUND_ROBIN_PLAYERS = 16


class Format(StrEnum):
    ROUND_ROBIN = "roundrobin"
    SWISS = "swiss"


class Status(StrEnum):
    REGISTERING = "registering"
    RUNNING = "running"
    FINISHED = "finished"


class Tiebreak(StrEnum):
    """FIDE's names (Tie-Break Regulations, C.07): docs/tournaments.md says how each is computed."""

    BUCHHOLZ = "BH"
    BUCHHOLZ_CUT1 = "BH-C1"
    SONNEBORN_BERGER = "SB"
    DIRECT_ENCOUNTER = "DE"
    WINS = "WIN"


# The order FIDE recommends for each format (docs/tournaments.md); the last resort, where FIDE
# draws lots, is the starting number, so a standing never depends on chance or on the clock.
DEFAULT_TIEBREAKS: dict[Format, tuple[Tiebreak, ...]] = {
    Format.ROUND_ROBIN: (Tiebreak.DIRECT_ENCOUNTER, Tiebreak.WINS, Tiebreak.SONNEBORN_BERGER),
    Format.SWISS: (Tiebreak.BUCHHOLZ_CUT1, Tiebreak.BUCHHOLZ, Tiebreak.SONNEBORN_BERGER,
                   Tiebreak.DIRECT_ENCOUNTER, Tiebreak.WINS),
}


class TournamentError(ValueError):
    """Bad input for a tournament: ``code`` names the case (the service words it from the catalogs);
    the tournament it was given is unchanged."""

    def __init__(self, code: str, detail: str = "") -> None:
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code


@dataclass(frozen=True)
class Settings:
    format: Format
    # Swiss: chosen at creation; a round robin's follow from its players at the start (None).
    rounds: int | None = None
    # A round robin played once or twice (colours reversed the second time).
    cycles: int = 1
    # What a bye scores: 1 or 1/2.
    bye_points: float = 1.0
    # Round 1's colour of the first seed (FIDE draws it by lot: the service may).
    initial_color: Literal["white", "black"] = "white"
    tiebreaks: tuple[Tiebreak, ...] = ()
    name: str = "Tournament"

    def __post_init__(self) -> None:
        if not self.tiebreaks:
            object.__setattr__(self, "tiebreaks", DEFAULT_TIEBREAKS[self.format])

    def validate(self) -> None:
        if self.format is Format.SWISS and (self.rounds is None or self.rounds < 1):
            raise TournamentError("bad_rounds", f"a Swiss needs at least one round, not {self.rounds}")
        if self.format is Format.ROUND_ROBIN and self.rounds is not None:
            raise TournamentError("bad_rounds", "a round robin's rounds follow from its players")
        if self.cycles not in (1, 2) or (self.format is Format.SWISS and self.cycles != 1):
            raise TournamentError("bad_cycles", str(self.cycles))
        if self.bye_points not in (1.0, 0.5):
            raise TournamentError("bad_bye_points", str(self.bye_points))
        if self.initial_color not in ("white", "black"):
            raise TournamentError("bad_colour", str(self.initial_color))


@dataclass(frozen=True)
class Player:
    id: str
    name: str
    # Seeds the pairing numbers (highest first; equal ratings keep the order of joining).
    rating: int = 0


@dataclass(frozen=True)
class Pairing:
    """A game (``black`` set) or a bye (``black`` None, no result: it scores ``bye_points``)."""

    white: str
    black: str | None
    result: Result | None = None

    @property
    def is_bye(self) -> bool:
        return self.black is None

    @property
    def decided(self) -> bool:
        return self.is_bye or self.result is not None

    def players(self) -> tuple[str, ...]:
        return (self.white,) if self.black is None else (self.white, self.black)

    def points(self, player: str, bye_points: float) -> float | None:
        """What ``player`` scored here (None while the game runs)."""
        if self.black is None:
            return bye_points
        if self.result is None:
            return None
        white, black = RESULT_POINTS[self.result]
        return white if player == self.white else black


@dataclass(frozen=True)
class Round:
    number: int
    pairings: tuple[Pairing, ...]

    @property
    def complete(self) -> bool:
        return all(p.decided for p in self.pairings)

    def pairing_of(self, player: str) -> Pairing | None:
        return next((p for p in self.pairings if player in p.players()), None)


@dataclass(frozen=True)
class Tournament:
    settings: Settings
    # In joining order while registering; from the start, in starting-number order (seed 1 first).
    players: tuple[Player, ...] = ()
    rounds: tuple[Round, ...] = ()
    started: bool = False
    # Players who left after the start, with the number of rounds paired when they left.
    withdrawn: tuple[tuple[str, int], ...] = ()
    # A Swiss whose next round has no legal pairing (too few players left) ends there.
    ended_early: bool = False
    _index: dict[str, int] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", {p.id: i for i, p in enumerate(self.players)})

    @property
    def total_rounds(self) -> int:
        if self.settings.format is Format.SWISS:
            assert self.settings.rounds is not None
            return self.settings.rounds
        n = len(self.players)
        return (n - 1 if n % 2 == 0 else n) * self.settings.cycles

    @property
    def status(self) -> Status:
        if not self.started:
            return Status.REGISTERING
        if self.ended_early or (len(self.rounds) == self.total_rounds and self.rounds[-1].complete):
            return Status.FINISHED
        return Status.RUNNING

    @property
    def current_round(self) -> Round | None:
        return self.rounds[-1] if self.rounds else None

    def player(self, player_id: str) -> Player:
        return self.players[self._index[player_id]]

    def has(self, player_id: str) -> bool:
        return player_id in self._index

    def starting_number(self, player_id: str) -> int:
        return self._index[player_id] + 1

    def withdrawn_after(self, player_id: str) -> int | None:
        """Rounds paired when ``player_id`` left, or None while they play."""
        return next((after for pid, after in self.withdrawn if pid == player_id), None)

    def active(self) -> tuple[Player, ...]:
        gone = {pid for pid, _ in self.withdrawn}
        return tuple(p for p in self.players if p.id not in gone)
