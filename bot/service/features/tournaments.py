"""Tournaments in a chat: round robin and Swiss at correspondence pace (issue 32).

The pure core (``bot.tournaments``) pairs and ranks; this use case stores a tournament as one row
(its core state as JSON, with a version for compare-and-set), creates each round's games as
challenges create theirs, follows ``GameFinished`` to record a result in the same transaction (the
round's last result pairs the next round in that transaction too), and at a round's deadline
forfeits the players who never moved and adjudicates the games still running.

Who may create or start a tournament (a group's admins) is the chat layer's check, as for the
other admin-only commands (/daily, /settings): the use case trusts it.
"""

from __future__ import annotations

from bot.service.features.base import Outlet, Runtime, UseCase
from bot.service.features.identity import Caller, Where
from bot.service.features.results_tournaments import (
    Joined,
    Left,
    NewTournamentArgs,
    NoTournament,
    PairingsShown,
    StandingsView,
    Started,
    TournamentCreated,
    TournamentHistory,
    TournamentInfo,
    TournamentRefused,
    TournamentShown,
)


class Tournaments(UseCase):
    """The chat's tournament: creating, joining, leaving, starting; its rounds' games, results,
    deadlines; standings, pairings and history."""

    def __init__(self, runtime: Runtime, outlet: Outlet) -> None:
        super().__init__(runtime, outlet)

    def create(self, caller: Caller, args: NewTournamentArgs, lang: str) -> TournamentCreated | TournamentRefused:
        """/tournament new: open the chat's tournament for joining (refused: already_running when
        one is open or running here; the core's codes for bad settings).  ``lang``: the chat's
        language, the last guess of its variant."""
        raise NotImplementedError

    def join(self, caller: Caller) -> Joined | NoTournament | TournamentRefused:
        """/tournament join (and the Join button): the caller joins the chat's open tournament."""
        raise NotImplementedError

    def leave(self, caller: Caller) -> Left | NoTournament | TournamentRefused:
        """/tournament leave: removed before the start; withdrawn after it (games still running are
        forfeits, past results stand)."""
        raise NotImplementedError

    def start(self, caller: Caller) -> Started | NoTournament | TournamentRefused:
        """/tournament start: seed, pair round 1 and create its games (at least 3 players)."""
        raise NotImplementedError

    def current(self, where: Where) -> TournamentShown | NoTournament:
        """/tournament alone: the chat's open or running tournament (else NoTournament)."""
        raise NotImplementedError

    def view(self, tournament_id: int) -> TournamentInfo | None:
        """Tournament #``tournament_id`` as it stands (the web board, the CLI)."""
        raise NotImplementedError

    def standings(self, where: Where, tournament_id: int | None = None) -> StandingsView | NoTournament:
        """/tournament standings: of tournament #``tournament_id``, else the chat's current one, else
        its last finished one."""
        raise NotImplementedError

    def pairings(self, where: Where, round_number: int | None = None,
                 tournament_id: int | None = None) -> PairingsShown | NoTournament | TournamentRefused:
        """/tournament pairings [round]: a round's boards (the current round by default)."""
        raise NotImplementedError

    def history(self, where: Where) -> TournamentHistory | NoTournament:
        """/tournament history: the chat's finished tournaments, newest first."""
        raise NotImplementedError
