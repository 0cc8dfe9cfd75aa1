"""Which stage of its game each board message shows, kept where every process sees it.

A board message is edited by whichever process handled the press (webhook workers, shards), and an
edit may be retried seconds later after a 5xx: an older board can reach the platform after a newer
one.  So before each attempt an edit asks ``claim_edit``: in one write transaction the game must
not have moved past the board, and no later board may have been written to that message; the
board's stage is then recorded for the message (a compare-and-set), and the edit goes ahead.  A
board drawn before the game moved on is dropped instead: the message already shows, or is about to
show, a later one.

A stage is ``2 x ply``, one more once the game is over: it only grows while a game is played (a
move, then the end), whatever else changes the game's version (a draw offer changes no board).
Boards of one stage (a piece chosen, then Back) follow each other in the order they claim.
"""

from __future__ import annotations

from bot.storage import GameRecord, Store, in_transaction


def board_stage(ply: int, over: bool) -> int:
    """The stage a board of a game at ``ply`` shows (``over``: the game has ended)."""
    return 2 * ply + (1 if over else 0)


def stage_of(row: GameRecord) -> int:
    """The stage of a game as stored."""
    return board_stage(row.ply, row.status != "active")


def _key(platform: str, chat_id: str, message_id: str) -> str:
    return f"board-stage:{platform}:{chat_id}:{message_id}"


def written_stage(store: Store, platform: str, chat_id: str, message_id: str) -> int | None:
    """The stage last claimed for a board message, or None."""
    value = store.settings.pending(_key(platform, chat_id, message_id))
    return value if isinstance(value, int) else None


def claim_edit(store: Store, platform: str, chat_id: str, message_id: str, game_id: int, stage: int) -> bool:
    """Whether a board of ``stage`` may be written to a message now (and, if so, it is recorded as
    the message's stage, in the same write transaction): False when the game is already past it or
    a later board was written to that message."""
    def claim() -> bool:
        row = store.games.get(game_id)
        if row is not None and stage_of(row) > stage:
            return False
        key = _key(platform, chat_id, message_id)
        written = store.settings.pending(key)
        if isinstance(written, int) and written > stage:
            return False
        if written != stage:
            store.settings.set_pending(key, stage)
        return True

    return in_transaction(store, claim)


def still_current(store: Store, game_id: int, stage: int) -> bool:
    """Whether a board of ``stage`` is still the game's latest (a new board message need not be
    sent for a game that moved on)."""
    row = store.games.get(game_id)
    return row is None or stage_of(row) <= stage
