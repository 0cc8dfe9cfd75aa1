"""Storage behind one typed contract (``base.Store``, records in ``records``); the SQLite backend
(``sqlite.SQLiteStore``) is the one in production.  Reached only through the game service."""

from .base import BOT_ID, StaleGame, StorageBusy, StorageDamaged, StorageError, StorageFull, StorageGone, Store
from .records import ChallengeRecord, ChatRecord, GameRecord, MoveRecord, NotifyRecord, OutboxRecord, PlayerRecord
from .sqlite import DEFAULT_BUSY_TIMEOUT, MIGRATIONS, SQLiteStore

# The name the service and its tests have always used for the production store.
Storage = SQLiteStore

__all__ = [
    "BOT_ID", "DEFAULT_BUSY_TIMEOUT", "MIGRATIONS", "ChallengeRecord", "ChatRecord", "GameRecord", "MoveRecord",
    "NotifyRecord", "OutboxRecord", "PlayerRecord", "SQLiteStore", "StaleGame", "Storage", "StorageBusy",
    "StorageError", "Store", "StorageDamaged", "StorageFull", "StorageGone",
]
