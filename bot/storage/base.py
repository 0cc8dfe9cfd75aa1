"""The store the service sees: the flat contract (contract.py) and, on it, the repositories per
aggregate (repositories.py: ``store.games``, ``store.players``, ``store.outbox``, ...).

The errors and the field sets of the contract are re-exported here, where they have always been
imported from.
"""

from __future__ import annotations

import functools

from .contract import (
    BOT_ID,
    CHAT_SETTINGS,
    GAME_UPDATE_FIELDS,
    MOVE_FIELDS,
    NEW_CHALLENGE_FIELDS,
    NEW_CHALLENGE_OPTIONAL,
    NEW_GAME_FIELDS,
    NEW_GAME_OPTIONAL,
    Contract,
    check_fields,
)
from .errors import (
    StaleGame,
    StorageBusy,
    StorageContention,
    StorageDamaged,
    StorageError,
    StorageFull,
    StorageGone,
    StorageUnavailable,
)
from .repositories import (
    ChallengesRepository,
    GamesRepository,
    OutboxRepository,
    OwnPuzzlesRepository,
    PlayersRepository,
    PuzzleRunsRepository,
    PuzzlesRepository,
    RatingsRepository,
    SendsRepository,
    SettingsRepository,
    StormRunsRepository,
    TournamentsRepository,
)

__all__ = [
    "BOT_ID", "CHAT_SETTINGS", "GAME_UPDATE_FIELDS", "MOVE_FIELDS", "NEW_CHALLENGE_FIELDS", "NEW_CHALLENGE_OPTIONAL",
    "NEW_GAME_FIELDS", "NEW_GAME_OPTIONAL", "StaleGame", "StorageBusy", "StorageContention", "StorageDamaged",
    "StorageError", "StorageFull", "StorageGone", "StorageUnavailable", "Store", "check_fields",
]


class Store(Contract):
    """A database for the service: the contract's methods, and the repositories that will be the
    only way the service reaches them (docs/storage.md, Repositories)."""

    @functools.cached_property
    def players(self) -> PlayersRepository:
        return PlayersRepository(self)

    @functools.cached_property
    def challenges(self) -> ChallengesRepository:
        return ChallengesRepository(self)

    @functools.cached_property
    def games(self) -> GamesRepository:
        return GamesRepository(self)

    @functools.cached_property
    def puzzles(self) -> PuzzlesRepository:
        return PuzzlesRepository(self)

    @functools.cached_property
    def ratings(self) -> RatingsRepository:
        return RatingsRepository(self)

    @functools.cached_property
    def settings(self) -> SettingsRepository:
        return SettingsRepository(self)

    @functools.cached_property
    def outbox(self) -> OutboxRepository:
        return OutboxRepository(self)

    @functools.cached_property
    def sends(self) -> SendsRepository:
        return SendsRepository(self)

    @functools.cached_property
    def tournaments(self) -> TournamentsRepository:
        return TournamentsRepository(self)

    @functools.cached_property
    def storm_runs(self) -> StormRunsRepository:
        return StormRunsRepository(self)

    @functools.cached_property
    def puzzle_runs(self) -> PuzzleRunsRepository:
        return PuzzleRunsRepository(self)

    @functools.cached_property
    def own_puzzles(self) -> OwnPuzzlesRepository:
        return OwnPuzzlesRepository(self)
