"""The rules of Spanish, Italian and Triestina draughts: pure, no I/O."""

from .errors import ErrorCode, IllegalMove
from .position import Move, Position, format_move
from .variants import BLACK, VARIANTS, WHITE, Variant, get_variant

__all__ = [
    "BLACK", "VARIANTS", "WHITE", "ErrorCode", "IllegalMove", "Move", "Position",
    "Variant", "format_move", "get_variant",
]
from .game import Game, Result  # noqa: E402

__all__ += ["Game", "Result"]
from .pdn import read_pdn, write_pdn  # noqa: E402

__all__ += ["read_pdn", "write_pdn"]
from .perft import perft  # noqa: E402

__all__ += ["perft"]
