"""Iterative deepening from one position: ``search_position`` and the ``SearchResult`` it returns.

Below the package's face (``bot.ai``, which picks a level's move with it) and the game analysis
(``bot.ai.analyse``, which scores every move with it), so both import it and neither the other.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from bot.rules import Move, Position, Variant

from . import egtb, jit
from .egtb import Tables
from .evaluation import Evaluator, evaluator
from .search import MATE, MATE_BOUND, NO_NODE_LIMIT, Searcher, State, Timeout, frame_order, now

CROWN_SLACK = 80
# Share of a search's budget (time or nodes) past which no new iteration is started: the next one
# would rarely finish.
SOFT = 0.45


@dataclass(frozen=True)
class SearchResult:
    """The chosen move, its score for the side to move (hundredths of a man; beyond
    ``±99000`` a forced win or loss), the depth finished, nodes searched, and the
    principal variation starting with the move; ``scores``, when the search was given its root
    moves, the exact score of each of them in the last finished iteration, best first."""

    move: Move
    score: int
    depth: int
    nodes: int
    pv: tuple[Move, ...]
    seconds: float
    scores: tuple[tuple[Move, int], ...] = ()


def _state(pos: Position) -> State:
    return (*pos.sides(), pos.white)


def _history(variant: Variant, history: list[str] | None, pos: Position) -> tuple[set[State], int]:
    """Positions since the last capture or man move that can repeat, and how many plies
    that is (for the no-progress rule), from the earlier positions of the game."""
    if not history:
        return set(), 0
    earlier = [Position.from_fen(variant, fen) for fen in history]
    if earlier and earlier[-1] == pos:
        earlier.pop()
    seen: set[State] = set()
    quiet = 0
    later = pos
    for before in reversed(earlier):
        # A move is reversible only when no piece was taken and no man moved or crowned.
        if (before.wm, before.bm) != (later.wm, later.bm) or before.count("W")[1] + before.count("B")[1] \
                != later.count("W")[1] + later.count("B")[1]:
            break
        seen.add(_state(before))
        quiet += 1
        later = before
    return seen, quiet


def search_position(
    pos: Position,
    max_depth: int,
    seconds: float,
    margin: int = 0,
    history: list[str] | None = None,
    rng: random.Random | None = None,
    ev: Evaluator | None = None,
    quiet_plies: int | None = None,
    nodes: int | None = None,
    moves: Sequence[Move] | None = None,
) -> SearchResult:
    """Iterative deepening from ``pos`` until ``max_depth`` or about ``seconds``.

    ``quiet_plies`` overrides the count of plies without a capture or a man move that
    ``history`` implies (the no-progress rule draws at the variant's limit).  ``nodes`` is a
    budget in nodes, as ``seconds`` is one in time (at most that many; no iteration is started
    past ``SOFT`` of it): with ``seconds`` infinite the answer is the same on every machine and
    under any load.  ``moves`` restricts the root to those legal moves and scores each exactly
    (``SearchResult.scores``), for comparing them at one depth."""
    v = pos.variant
    ev = ev or evaluator(v)
    tb = _tables_for(pos)
    use_jit = type(ev) is Evaluator and jit.available(v)
    if use_jit:
        # Before the clock starts: loading (or compiling) it, and reading the tables, is not the move's time.
        jit.warm(tb)
    started = now()
    # Leave room for building the answer and for the process's own start-up jitter.
    deadline = started + max(0.01, seconds * 0.85 - 0.02)
    soft = started + seconds * SOFT
    node_limit = NO_NODE_LIMIT if nodes is None else max(1, nodes)
    soft_nodes = node_limit * SOFT
    history_keys, quiet = _history(v, history, pos)
    if quiet_plies is not None:
        quiet = quiet_plies
    searcher: Searcher
    if use_jit:
        searcher = jit.JitSearcher(v, ev, deadline, history_keys, quiet, tb, node_limit)
    else:
        searcher = Searcher(v, ev.evaluate, deadline, history_keys, quiet,
                            tb.probe if tb is not None else None, tb.pieces if tb is not None else 0, node_limit)
    state = _state(pos)
    root_moves = searcher.gen_moves(*state)
    if not root_moves:
        raise ValueError("no legal move: the game is over")
    root_moves = frame_order(v, root_moves, pos.white)
    if moves is not None:
        wanted = set(moves)
        root_moves = [m for m in root_moves if pos.move_for_key(m[0]) in wanted]
        if len(root_moves) != len(wanted):
            raise ValueError("moves must be legal moves of the position")
    exact_all = margin > 0 or moves is not None
    rng = rng or random.Random()
    best_scored: list[tuple[int, tuple]] = [(0, root_moves[0])]
    done_depth = 0
    # A forced move is searched like any other: its choice is known, but its score is the
    # position's (an exchange is not an equal position), and analysis compares scores.
    for depth in range(1, max_depth + 1):
        searcher.partial = []
        try:
            scored = searcher.root(state, depth, root_moves, exact_all=exact_all)
        except Timeout:
            part = searcher.partial
            # The first move searched is last iteration's best: a different move
            # that already beat it in this iteration is the better choice.
            if not exact_all and part and max(part, key=lambda sm: sm[0])[0] > part[0][0]:
                best_scored = [max(part, key=lambda sm: sm[0])]
            break
        best_scored = scored
        done_depth = depth
        root_moves = [m for _s, m in scored]
        if abs(scored[0][0]) > MATE_BOUND or searcher.nodes > soft_nodes or now() > soft:
            break
    score, move = best_scored[0]
    kings = state[1].bit_count()
    if margin and len(best_scored) > 1:
        # A forced win is kept to its quickest line: a looser choice could walk round it for ever.
        near = [m for s, m in best_scored if s >= (score if score > MATE_BOUND else score - margin)]
        move = rng.choice(near)
        score = next(s for s, m in best_scored if m is move)
    # Crown a man when it is free.  The linear evaluation can count a man on the row
    # before crowning (advanced, runaway) at about a king, so without this the engine
    # may leave it there; a crowning within CROWN_SLACK of the choice is taken instead.
    # Only for the levels that choose loosely anyway: the strong ones follow the search.
    if margin and score <= MATE_BOUND and not move[4].bit_count() > kings and len(best_scored) > 1:
        crowning = [(s, m) for s, m in best_scored if m[4].bit_count() > kings and s >= score - CROWN_SLACK]
        if crowning:
            score, move = max(crowning, key=lambda sm: sm[0])
    # A forced end (seen by the search or known from the tables) is shown to its last move.
    plies = min(64, MATE - abs(score)) if abs(score) > MATE_BOUND else 0
    keys = searcher.pv(state, move[0], max(done_depth, 1, plies))
    line: list[Move] = []
    p = pos
    for key in keys:
        mv = p.move_for_key(key)
        line.append(mv)
        p = p.play(mv)
    scores = tuple((pos.move_for_key(m[0]), int(s)) for s, m in best_scored) if moves is not None else ()
    return SearchResult(line[0], int(score), done_depth, searcher.nodes, tuple(line), now() - started, scores)


# The tables are read (once per process) only for a position this close to them: a search from
# a full board never gets down to their few pieces, and reading them costs a search's time.
TABLES_FROM_PIECES = 12


def _tables_for(pos: Position) -> Tables | None:
    if (pos.wm | pos.wk | pos.bm | pos.bk).bit_count() > TABLES_FROM_PIECES:
        return None
    return egtb.tables(pos.variant)
