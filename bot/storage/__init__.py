"""SQLite storage (through sqlite-utils); reached only through the game service."""

from .db import StaleGame, Storage

__all__ = ["Storage", "StaleGame"]
