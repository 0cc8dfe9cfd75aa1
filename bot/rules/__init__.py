"""The rules of Spanish, Italian and Triestina draughts: pure, no I/O.

For search: ``movegen.fast(variant)`` is the generator perft uses, callable on its own
(moves as int keys plus the bitboards after them, no ``Move`` objects), with
``Position.fast_moves``, ``Position.from_sides`` and ``Position.move_for_key`` to move
between it and the ``Move`` API.  Positions and variants pickle by variant id.
"""

from . import movegen
from .errors import Detail, ErrorCode, IllegalMove
from .position import Move, Position, format_move
from .variants import BLACK, VARIANTS, WHITE, CapturePriority, Color, Variant, get_variant

__all__ = [
    "movegen", "BLACK", "VARIANTS", "WHITE", "CapturePriority", "Color", "Detail", "ErrorCode", "IllegalMove", "Move",
    "Position", "Variant", "format_move", "get_variant",
]
from .game import Game, Result, ResultReason  # noqa: E402

__all__ += ["Game", "Result", "ResultReason"]
from .pdn import read_pdn, write_pdn  # noqa: E402

__all__ += ["read_pdn", "write_pdn"]
from .perft import perft  # noqa: E402

__all__ += ["perft"]
