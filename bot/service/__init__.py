"""The game service: what a chat can ask, for every platform."""

from .events import DM_PREFIX, Button, ChatEvent, Mention, OutboxItem, Outgoing, Reply, dm_chat, mention_at
from .service import GameService

__all__ = ["DM_PREFIX", "Button", "ChatEvent", "GameService", "Mention", "OutboxItem", "Outgoing", "Reply", "dm_chat",
           "mention_at"]
