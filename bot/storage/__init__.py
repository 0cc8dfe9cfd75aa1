"""SQLite storage (through sqlite-utils); reached only through the game service."""

from .db import Storage, StaleGame

__all__ = ["Storage", "StaleGame"]
