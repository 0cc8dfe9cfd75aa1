"""Helpers the web board tests share (a module of its own: ``from conftest import`` would find
whichever conftest another test folder loaded first)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from bot.rules import get_variant
from bot.service import ChatEvent, GameService, Reply
from bot.storage import Storage

T0 = 1_700_000_000.0
PLATFORM = "test"
GROUP = "group-1"


class WebChat:
    """One group chat on a real service; users are lower-case ids ('ana'), shown capitalized."""

    def __init__(self, db_path: Path, now: list[float]) -> None:
        self.now = now
        self.storage = Storage(db_path)
        self.service = GameService(self.storage, clock=lambda: self.now[0], rng=random.Random(1))

    def say(self, user: str, text: str, lang: str = "en", admin: bool = False) -> list[Reply]:
        event = ChatEvent(platform=PLATFORM, chat_id=GROUP, user_id=user, user_name=user.capitalize(),
                          username=user, language=lang, text=text, is_admin=admin)
        return self.service.handle(event)

    def new_game(self, variant: str = "italian", white: str = "ana", black: str = "bob") -> int:
        self.say(white, f"/new {variant} white")
        replies = self.say(black, "/accept")
        game_id = replies[0].game_id
        assert game_id is not None, [r.text for r in replies]
        return game_id

    def set_position(self, game_id: int, fen: str) -> None:
        """Put a game (at ply 0) on another position, as if it had started there."""
        row = self.storage.game(game_id)
        assert row is not None
        self.storage.update_game(game_id, row.version, {"fen": fen, "start_fen": fen})

    def outbox_notices(self) -> list[dict[str, Any]]:
        import json
        return [json.loads(r.payload) for r in self.storage.find_outbox(PLATFORM, "pending")]


def fen_of(variant: str, white: list[tuple[int, int]], black: list[tuple[int, int]], turn: str = "W") -> str:
    """A FEN from (row, column) places seen from White (row 0 at the top): men only."""
    v = get_variant(variant)

    def squares(places: list[tuple[int, int]]) -> str:
        found = [v.rc_to_square(r, c) for r, c in places]
        assert all(sq is not None for sq in found), places
        return ",".join(str(sq) for sq in sorted(sq for sq in found if sq is not None))
    return f"{turn}:W{squares(white)}:B{squares(black)}"


def two_routes(variant: str) -> str:
    """White to move, one man that captures two men by two routes ending on one square: from
    (6,2) over (5,1) and (3,1), or over (5,3) and (3,3), to (2,2); one more black man far away."""
    return fen_of(variant, [(6, 2)], [(5, 1), (3, 1), (5, 3), (3, 3), (0, 6)])


