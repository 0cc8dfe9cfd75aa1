"""What every feature of the service shares: limits and small helpers."""

from __future__ import annotations

import logging

from bot.rules import (
    Color,
    Position,
    Result,
)
from bot.storage import BOT_ID
from bot.storage.records import GameRecord

log = logging.getLogger("bot.service")

# A personal post of a puzzle from the player's own game names it "own:<number>" (bank ids have no colon).
OWN_PREFIX = "own:"


def own_number(puzzle_id: str) -> int | None:
    """The number of the player's own puzzle a post's puzzle id names, or None (a bank puzzle)."""
    rest = puzzle_id[len(OWN_PREFIX):] if puzzle_id.startswith(OWN_PREFIX) else ""
    return int(rest) if rest.isascii() and rest.isdigit() else None

MAX_OPEN_CHALLENGES = 5
# A move's time when a challenge or a game against the bot names none.
DEFAULT_MOVE_SECONDS = 24 * 3600
# An open challenge nobody takes lapses after a day, or after its move time when that is longer.
CHALLENGE_LIFETIME = 24 * 3600
# A second /resign within this many seconds confirms the first.
RESIGN_CONFIRM_SECONDS = 60
BUTTONS_PER_ROW = 5
# A listing (/games) shows at most this many entries a page: one message on every platform.
LISTED_PER_PAGE = 15
# A running process notes it is alive at most this often (from tick); a start-up finding the
# last note older than the threshold treats the gap as downtime and extends the deadlines.
HEARTBEAT_SECONDS = 30.0
DOWNTIME_THRESHOLD = 120.0
MAX_BUTTON_ROWS = 5      # Discord's limit: 5 rows of 5
# Outbox retries (defined with the outbox).
from bot.service.outbox import OUTBOX_FIRST_RETRY, OUTBOX_MAX_ATTEMPTS, OUTBOX_MAX_RETRY  # noqa: E402,F401


def reply_flipped(row: GameRecord) -> bool:
    """Boards are seen from the side to move (from White's side once the game is over); a game
    against the bot is always seen from the human's side."""
    if row.bot_level is not None:
        return row.white_id == BOT_ID
    if row.status != "active":
        return False
    return Position.from_fen(row.variant, row.fen).turn == Color.BLACK


def bot_to_move(row: GameRecord, pos: Position | None = None) -> bool:
    """Whether it is the bot's turn in this game (only games against the bot have one)."""
    if row.bot_level is None or row.status != "active":
        return False
    turn = (pos or Position.from_fen(row.variant, row.fen)).turn
    return (row.white_id if turn == Color.WHITE else row.black_id) == BOT_ID


def _last_move(row: GameRecord) -> tuple[list[int], list[int]]:
    """The squares of a game's last move and the squares it captured on."""
    return list(row.last_path), list(row.last_captured)


def _stored_result(row: GameRecord) -> Result:
    """The result a finished game stored (finish_game writes score and reason together)."""
    if row.result_score is None or row.result_reason is None:
        raise ValueError(f"game {row.id} has no stored result")
    return Result(row.result_score, row.result_reason, row.winner)


def _resign_key(game_id: int, user_id: str) -> str:
    return f"resign:{game_id}:{user_id}"


def _ids(ids: list[int]) -> str:
    return ", ".join(f"#{i}" for i in ids)
