"""The game service: what a chat can ask, for every platform."""

from .events import Button, ChatEvent, Outgoing, Reply
from .service import GameService

__all__ = ["Button", "ChatEvent", "GameService", "Outgoing", "Reply"]
