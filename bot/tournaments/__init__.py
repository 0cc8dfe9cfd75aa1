"""Tournaments: round robin (FIDE Berger tables) and Swiss (FIDE Dutch system), as pure data and
functions (no I/O; the service stores and schedules them).  docs/tournaments.md has the rules."""

from .codec import from_data, to_data
from .flow import join, leave, new, pair_next_round, pairings_of, record_result, round_complete, start, winner
from .model import (
    DEFAULT_TIEBREAKS,
    FORFEITS,
    PLAYED,
    RESULTS,
    Format,
    Pairing,
    Player,
    Result,
    Round,
    Settings,
    Status,
    Tiebreak,
    Tournament,
    TournamentError,
)
from .standings import Standing, final_standings, standings
from .trf import to_trf

__all__ = [
    "DEFAULT_TIEBREAKS", "FORFEITS", "PLAYED", "RESULTS", "Format", "Pairing", "Player", "Result", "Round",
    "Settings", "Standing", "Status", "Tiebreak", "Tournament", "TournamentError", "final_standings", "from_data",
    "join", "leave", "new", "pair_next_round", "pairings_of", "record_result", "round_complete", "standings", "start",
    "to_data", "to_trf", "winner",
]
