"""The game service: what a chat can ask, for every platform."""

from .events import Button, ChatEvent, OutboxItem, Outgoing, Reply
from .service import GameService

__all__ = ["Button", "ChatEvent", "GameService", "OutboxItem", "Outgoing", "Reply"]
