"""What the bot says after a right move in a puzzle, worked out from the puzzle itself, for the
service's and both platforms' puzzle tests."""

from __future__ import annotations

from typing import Any

from bot.i18n import t
from bot.rules import Position


def right_text(p: dict[str, Any], reply: str, lang: str = "en") -> str:
    """The answer to a right move: 'forced' when the defender had no other move, else the
    defending side and its reply."""
    pos = Position.from_fen(p["variant"], p["fen"])
    line = p["solution"]
    at_reply = next(i for i in range(1, len(line), 2) if line[i] == reply)
    for move in line[:at_reply]:
        pos = pos.play(pos.parse_move(move))
    if len(pos.legal_moves()) == 1:
        return t(lang, "puzzle.right_forced", reply=reply)
    replier = "B" if p["fen"].startswith("W") else "W"
    return t(lang, "puzzle.right", reply=reply, side=t(lang, f"puzzle.replier.{replier}"))
