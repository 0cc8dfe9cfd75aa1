"""SQLite storage (through sqlite-utils); reached only through the game service."""

from .db import StaleGame, Storage, StorageBusy, StorageError

__all__ = ["Storage", "StaleGame", "StorageBusy", "StorageError"]
