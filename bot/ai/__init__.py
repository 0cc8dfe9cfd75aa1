"""The draughts engine: ``choose_move`` picks a move for a position at a level 1-5.

Pure: no I/O, no global state that changes a result; every input pickles, so
calls can go to a process pool.  Built on the rules engine's fast generator
(``bot.rules.movegen.fast``); moves come back as rules ``Move`` objects.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from bot.rules import Position, Variant, get_variant

# The engine's parts a caller reaches through the package (bot.ai.egtb, bot.ai.jit).
from . import egtb as egtb
from . import jit as jit
from .analyse import MoveNote, TableNote, analyse_game, annotate_pdn
from .deepening import SOFT as SOFT
from .deepening import SearchResult, search_position
from .deepening import _history as _history
from .deepening import _state as _state
from .evaluation import evaluator
from .human import Vision, human_move
from .search import now

__all__ = ["LEVELS", "Level", "MoveNote", "SearchResult", "TableNote", "Vision", "analyse_game", "annotate_pdn",
           "choose_move", "level_move", "move_seconds", "search_position"]


@dataclass(frozen=True)
class Level:
    """How one level plays: depth cap, time per move, and how loosely it chooses.

    A level with ``margin`` picks at random among the root moves whose exact score is
    within ``margin`` of the best (a man is 100), so it varies its play but never
    gives away a man, or a free king, that its search sees.  A level with ``vision`` does
    not search: it plays like a beginner who sees that much (see ``bot/ai/human.py``), at once
    (``seconds`` is only its cap; ``max_depth`` the plies it may look at, as reported).
    """

    max_depth: int
    seconds: float
    margin: int = 0
    vision: Vision | None = None


# A ladder of steps, not a cliff (bench/ai_ladder.py measures it): a player that holds its own
# against one level gets some points against the next, which still clearly beats the one below.
# The rungs are scripted players that count material one, two and three plies ahead (mat1-3):
# mat1 scores at least half against level 1 and mat2 against level 2; mat2 gets at least 0.15
# against level 3, mat3 at least 0.15 against level 4, and each of levels 3 and 4 scores at
# least 0.6 against the level below.  Levels 1-3 are people who look at the board (bot/ai/human.py):
# level 1 never looks at the replies and likes to threaten a man, level 2 mostly looks at them,
# level 3 always does, often sees its own recapture and closes in on a won ending.  Level 4
# searches one ply (captures followed to the end, so it never leaves a man to be taken at once,
# but it misses the opponent's shots) and chooses loosely among moves within nearly a man; level
# 5 is the full search.
LEVELS: dict[int, Level] = {
    1: Level(max_depth=1, seconds=0.3, vision=Vision(replies=0.0, recapture=0.0, noise=60, rush=150, attack=50)),
    2: Level(max_depth=2, seconds=0.4, vision=Vision(replies=0.9, recapture=0.3, noise=40)),
    3: Level(max_depth=3, seconds=0.6, vision=Vision(replies=1.0, recapture=0.6, noise=30, hunt=10)),
    4: Level(max_depth=1, seconds=1.0, margin=90),
    5: Level(max_depth=64, seconds=2.0),
}


def move_seconds(level: int, time_limit: float | None = None) -> float:
    """How long ``choose_move`` searches at ``level`` with ``time_limit`` (what a scheduler may
    expect a move to cost).  KeyError for an unknown level."""
    spec = LEVELS[level]
    if time_limit is None:
        return spec.seconds
    # Level 5 uses all the time it is given; the others never need more than their own.
    return float(time_limit) if level == 5 else min(spec.seconds, float(time_limit))


def choose_move(
    variant: str | Variant,
    fen: str,
    level: int = 3,
    time_limit: float | None = None,
    history: list[str] | None = None,
    rng: random.Random | int | None = None,
) -> SearchResult:
    """The engine's move for the side to move in ``fen``.

    ``level`` 1 (beginner) to 5 (strongest); ``time_limit`` in seconds caps the level's
    own time (the answer comes within it); ``history`` the FENs of the earlier positions
    of the game, oldest first, so the search sees repetitions and the no-progress count;
    ``rng`` a ``random.Random`` or a seed for the lower levels' choice among equals.
    ValueError for an unknown variant or level, a bad FEN, or a finished position.
    """
    v = get_variant(variant)
    if level not in LEVELS:
        raise ValueError(f"level must be 1-5, not {level!r}")
    seconds = move_seconds(level, time_limit)
    if seconds <= 0:
        raise ValueError("time_limit must be positive")
    if not isinstance(rng, random.Random):
        rng = random.Random(rng)
    pos = Position.from_fen(v, fen)
    return level_move(pos, level, seconds, history, rng)


def level_move(pos: Position, level: int, seconds: float, history: list[str] | None,
               rng: random.Random) -> SearchResult:
    """The move of ``level`` in ``pos`` within ``seconds`` (``choose_move`` without the parsing)."""
    spec = LEVELS[level]
    if spec.vision is None:
        return search_position(pos, spec.max_depth, seconds, spec.margin, history, rng)
    started = now()
    move, value, nodes = human_move(pos, spec.vision, evaluator(pos.variant).evaluate, rng)
    return SearchResult(move, value, spec.max_depth, nodes, (move,), now() - started)

