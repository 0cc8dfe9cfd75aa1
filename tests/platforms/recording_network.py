"""A chat network for the adapters' shared code (bot/platforms/base.py): the platform takes every
message and notes it, in the order it went out."""

from __future__ import annotations

from bot.platforms.base import ChatAdapter, Piece
from bot.service import GameService

PLATFORM = "test"


class Network(ChatAdapter):
    """``sent`` holds (chat, text) of each message, ``went_out`` (chat, piece) with its picture
    (not ``pieces``: that name is the adapter's own)."""

    platform = PLATFORM
    text_limit = 4096
    caption_limit = 1024

    def __init__(self, service: GameService) -> None:
        super().__init__(service)
        self.sent: list[tuple[str, str]] = []
        self.went_out: list[tuple[str, Piece]] = []

    async def send_piece(self, chat_id: str, piece: Piece, *, reply_to: str | None = None) -> str | None:
        self.sent.append((chat_id, piece.text))
        self.went_out.append((chat_id, piece))
        return str(len(self.sent))

    def texts(self, chat_id: str) -> list[str]:
        return [text for chat, text in self.sent if chat == chat_id]
