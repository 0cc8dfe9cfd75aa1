"""Storage behind one typed contract (``base.Store``: the flat methods of ``contract`` and the
repositories on them; records in ``records``), each query written once (``sql.SqlStore``, with a
``Dialect`` per database).  The SQLite backend (``sqlite.SQLiteStore``) is the default; the
PostgreSQL one (``postgres.PostgresStore``, for a ``postgresql://`` URL: ``opening.open_store``)
needs the ``postgres`` extra and is imported only when such a URL is opened.  Reached only through
the game service."""

from .base import (
    BOT_ID,
    StaleGame,
    StorageBusy,
    StorageContention,
    StorageDamaged,
    StorageError,
    StorageFull,
    StorageGone,
    StorageUnavailable,
    Store,
)
from .records import ChallengeRecord, ChatRecord, GameRecord, MoveRecord, NotifyRecord, OutboxRecord, PlayerRecord
from .repositories import ChatSettings, GameChange, NewChallenge, NewGame, NewMove
from .retry import RetryPolicy, in_transaction, retry_contention
from .sqlite import DEFAULT_BUSY_TIMEOUT, MIGRATIONS, SQLiteStore

# The name the service and its tests have always used for the production store.
Storage = SQLiteStore

__all__ = [
    "BOT_ID", "DEFAULT_BUSY_TIMEOUT", "MIGRATIONS", "ChallengeRecord", "ChatRecord", "ChatSettings", "GameChange",
    "GameRecord", "MoveRecord", "NewChallenge", "NewGame", "NewMove", "NotifyRecord", "RetryPolicy",
    "StorageContention", "in_transaction", "retry_contention", "OutboxRecord", "PlayerRecord", "SQLiteStore",
    "StaleGame", "Storage", "StorageBusy",
    "StorageError", "Store", "StorageDamaged", "StorageFull", "StorageGone",
    "StorageUnavailable",
]
