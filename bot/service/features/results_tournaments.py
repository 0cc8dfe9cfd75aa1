"""Typed requests and results of the tournaments' use case (``features/tournaments.py``): what
happened, for the chat layer's presenters to word and draw, or for the web board and the CLI to show.

Players are named by their platform user ids (``player_id``) and shown by ``name`` as they joined.
Results are written from white's side: "1-0", "0-1", "1/2-1/2", forfeits "+-" / "-+", None while
the game runs.
"""

from __future__ import annotations

from dataclasses import dataclass

# A round's deadline when the creator names none: a week, correspondence pace.
DEFAULT_ROUND_SECONDS = 7 * 24 * 3600
# A tournament still registering this long after its creation lapses (cancelled), so a forgotten
# one does not hold the chat's one slot for ever.
LAPSE_SECONDS = 14 * 24 * 3600


@dataclass(frozen=True)
class NewTournamentArgs:
    """/tournament new: ``format`` "swiss" or "roundrobin"; ``variant`` None: the chat's;
    ``rounds`` a Swiss's number of rounds (None for a round robin, whose rounds follow from its
    players); ``move_seconds`` each game's time a move (as /new reads it); ``round_seconds`` the
    round's deadline from its pairing; ``cycles`` 2: a double round robin; ``bye_points`` 1 or 0.5."""

    format: str
    variant: str | None = None
    rounds: int | None = None
    move_seconds: int = 24 * 3600
    round_seconds: int = DEFAULT_ROUND_SECONDS
    cycles: int = 1
    bye_points: float = 1.0
    name: str | None = None


@dataclass(frozen=True)
class Entrant:
    """A player of a tournament: ``withdrawn`` once they left after the start."""

    player_id: str
    name: str
    withdrawn: bool = False


@dataclass(frozen=True)
class PairingView:
    """One board of a round: a game (``game_id`` the bot's game number, ``black_id`` set) or a bye
    (``black_id`` None, ``game_id`` None).  ``result`` from white's side, None while running; a
    forfeit ("+-", "-+") may have a game (never moved in) or none (a withdrawn player's)."""

    board: int
    white_id: str
    white_name: str
    black_id: str | None
    black_name: str | None
    game_id: int | None
    result: str | None

    @property
    def is_bye(self) -> bool:
        return self.black_id is None


@dataclass(frozen=True)
class RoundView:
    """Round ``number`` (1-based) with its boards; ``deadline`` when it ends by rule (forfeits and
    adjudication), ``complete`` every result is in."""

    number: int
    pairings: tuple[PairingView, ...]
    deadline: float | None
    complete: bool


@dataclass(frozen=True)
class TournamentInfo:
    """A tournament as it stands: ``id`` its number; ``platform``/``chat_id`` the chat it belongs to,
    where its posts and games go (a tournament's own place, a forum topic or a thread, is that chat:
    the adapter hands /tournament new over as written there); ``place`` always None (kept for the
    CLI's JSON, a contract); ``format`` "swiss"/"roundrobin"; ``status`` "registering", "running", "finished" or
    "cancelled" (by /tournament cancel, or lapsed while registering: it stopped where it stood);
    ``rounds_total`` None for a round robin still registering; ``round`` the number of rounds paired;
    ``winner_id``/``winner_name`` once finished."""

    id: int
    platform: str
    chat_id: str
    place: str | None
    name: str
    format: str
    variant: str
    move_seconds: int
    round_seconds: int
    bye_points: float
    cycles: int
    status: str
    rounds_total: int | None
    round: int
    players: tuple[Entrant, ...]
    created_by: str
    created_at: float
    finished_at: float | None = None
    winner_id: str | None = None
    winner_name: str | None = None


@dataclass(frozen=True)
class StandingRow:
    """One line of the standings: ``tiebreaks`` (FIDE's short names: "BH", "BH-C1", "SB", "DE",
    "WIN") in the tournament's order, with their values; ``played`` games over the board."""

    rank: int
    player_id: str
    name: str
    points: float
    tiebreaks: tuple[tuple[str, float], ...]
    played: int
    withdrawn: bool


@dataclass(frozen=True)
class StandingsView:
    """The standings after ``through`` complete rounds, in rank order.  ``cross``: for a round
    robin, the cross table in the rows' order: ``cross[i][j]`` what row i scored against row j
    ("1", "½", "0", "+", "-", several for a double round robin joined by " ", None when not played
    yet, "x" on the diagonal); None for a Swiss.  ``final``: the tournament is over."""

    tournament: TournamentInfo
    rows: tuple[StandingRow, ...]
    through: int
    cross: tuple[tuple[str | None, ...], ...] | None
    final: bool


# --- results -------------------------------------------------------------------------------


@dataclass(frozen=True)
class TournamentCreated:
    """/tournament new: the chat's tournament is open for joining (the creator is not entered)."""

    tournament: TournamentInfo


@dataclass(frozen=True)
class Joined:
    """``player_id`` joined; ``tournament`` as it is now (its players listed)."""

    tournament: TournamentInfo
    player_id: str
    name: str


@dataclass(frozen=True)
class Left:
    """``player_id`` left: ``removed`` before the start (gone from the list); else withdrawn, the
    games still running lost by forfeit (``forfeited``: their game numbers)."""

    tournament: TournamentInfo
    player_id: str
    name: str
    removed: bool
    forfeited: tuple[int, ...] = ()


@dataclass(frozen=True)
class Started:
    """/tournament start: seeded and round 1 paired, its games created (``round``).  The pairings
    post and the pings also go to the outbox (``RoundPairedNotice``, ``YourTournamentGame``)."""

    tournament: TournamentInfo
    round: RoundView


@dataclass(frozen=True)
class RoundsSet:
    """/tournament rounds N: a Swiss still registering now has ``tournament.rounds_total`` rounds."""

    tournament: TournamentInfo


@dataclass(frozen=True)
class Cancelled:
    """/tournament cancel: the tournament ended where it stood (status "cancelled", kept in the
    history as such); ``games``: its round's games still running, which go on as ordinary games
    (rated as any game) no longer counting for it."""

    tournament: TournamentInfo
    games: tuple[int, ...] = ()


@dataclass(frozen=True)
class TournamentShown:
    """/tournament alone: the chat's tournament and its current round (None before round 1)."""

    tournament: TournamentInfo
    round: RoundView | None


@dataclass(frozen=True)
class PairingsShown:
    """/tournament pairings: round ``round`` (the current one by default)."""

    tournament: TournamentInfo
    round: RoundView


@dataclass(frozen=True)
class TournamentHistory:
    """/tournament history: the chat's finished (and cancelled) tournaments, newest first."""

    tournaments: tuple[TournamentInfo, ...]


@dataclass(frozen=True)
class NoTournament:
    """The chat has no tournament open or running (``history``: whether it had finished ones)."""

    history: bool = False


@dataclass(frozen=True)
class TournamentRefused:
    """Nothing was done.  ``code``: the core's ``TournamentError.code`` (already_joined,
    already_started, too_few, full, not_in, already_left, finished, too_many_rounds, bad_rounds,
    bad_cycles, bad_bye_points, no_such_round) or the service's own: not_admin (the chat layer's
    check), already_running (the chat has a tournament open or running), unknown_variant,
    bad_move_time, bad_round_time, no_round (pairings asked before round 1), running (start or
    rounds on a running tournament; round), rounds_roundrobin (rounds set on a round robin).  ``values``: what its
    sentence names (too_few: least, count; too_many_rounds: count, most; full and bad_rounds: most;
    no_such_round: round, count; unknown_variant, bad_move_time, bad_round_time: word)."""

    code: str
    values: tuple[tuple[str, object], ...] = ()


TournamentOutcome = (TournamentCreated | Joined | Left | Started | TournamentShown | PairingsShown
                     | TournamentHistory | NoTournament | TournamentRefused | StandingsView | Cancelled
                     | RoundsSet)
