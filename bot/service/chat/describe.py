"""A position in words, for readers who cannot see the board: whose turn, then each side's men and
kings by square.  The chat's picture replies carry it (Telegram captions, Discord alt text) and the
web board reads the same words into its text alternative, so a screen reader hears one wording
everywhere."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from bot.i18n import t
from bot.rules import Position
from bot.service.events import BoardSpec, Rendered, Reply

# Pieces as the engine and the web board's JSON code them: colour, then man or king.
_CODES = {"W": ("w", "W"), "B": ("b", "B")}


def describe_pieces(lang: str, pieces: Mapping[int, str], turn: str) -> str:
    """``pieces`` (square -> w, W, b or B) and ``turn`` (W or B) in words in ``lang``."""
    parts = [t(lang, f"describe.turn.{turn}")]
    for side in ("W", "B"):
        man, king = _CODES[side]
        men = sorted(sq for sq, code in pieces.items() if code == man)
        kings = sorted(sq for sq, code in pieces.items() if code == king)
        groups = []
        if men:
            groups.append(t(lang, "describe.men", squares=", ".join(map(str, men))))
        if kings:
            groups.append(t(lang, "describe.kings", squares=", ".join(map(str, kings))))
        listed = t(lang, "describe.sep").join(groups) if groups else t(lang, "describe.none")
        parts.append(t(lang, "describe.side", side=t(lang, f"describe.side.{side}"), pieces=listed))
    return " ".join(parts)


def describe(lang: str, pos: Position) -> str:
    """The position ``pos`` in words in ``lang`` (see ``describe_pieces``)."""
    return describe_pieces(lang, pos.pieces(), pos.turn.value)


def with_alt(lang: str, reply: Reply) -> Reply:
    """``reply`` with its board picture in words (``Reply.alt``) when it carries one drawn from a
    position; other pictures (the analysis panels, charts) are left as they are."""
    image = reply.image
    if reply.alt is not None or not isinstance(image, Rendered) or not isinstance(image.spec, BoardSpec):
        return reply
    return replace(reply, alt=describe(lang, Position.from_fen(image.spec.variant, image.spec.fen)))


def with_alts(lang: str, replies: list[Reply]) -> list[Reply]:
    """``with_alt`` of each reply."""
    return [with_alt(lang, reply) for reply in replies]
