"""The local console chat: each input line is a message (the embedded default)."""

from .chat import PLATFORM, ConsoleChat

__all__ = ["ConsoleChat", "PLATFORM"]
