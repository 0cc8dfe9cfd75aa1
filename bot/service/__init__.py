"""The game service: what a chat can ask, for every platform.

The storage failures a platform must tell apart (a busy, full, vanished or damaged database) are
part of this face too, so adapters need not reach below the service for them."""

from bot.storage import StorageBusy, StorageDamaged, StorageError, StorageFull, StorageGone, StorageUnavailable

from .chat.commands import parse_duration
from .events import DM_PREFIX, Button, ChatEvent, Mention, OutboxItem, Outgoing, Reply, dm_chat, mention_at
from .service import GameService

__all__ = ["DM_PREFIX", "Button", "ChatEvent", "GameService", "Mention", "OutboxItem", "Outgoing", "Reply",
           "StorageBusy", "StorageDamaged", "StorageError", "StorageFull", "StorageGone", "StorageUnavailable",
           "dm_chat", "mention_at", "parse_duration"]
