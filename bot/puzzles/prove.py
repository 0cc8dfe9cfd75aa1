"""Proving a golpe: a forced series of moves that wins material or the game.

A solver move *ends the line successfully* when, after it, the opponent has no legal move, or the
solver is at least ``GAIN`` ahead of where it started (a man counts 1, a king 2.5) and the
opponent has no capture pending.  A solver node is won when one of its moves ends the line or
leads to an opponent node whose every reply leads to a won solver node again, within the number of
solver moves allowed.  Pure: the rules engine only, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.rules import Move, Position

MAN_VALUE = 1.0
KING_VALUE = 2.5
GAIN = 2.0
MAX_SOLVER_MOVES = 4
MIN_SOLVER_MOVES = 2
NODE_BUDGET = 30_000

# A solution tree: at a solver node, each accepted move (full notation) maps to the opponent
# node after it; at an opponent node, each reply maps to the next solver node.  An empty
# opponent node means the line ended successfully with that solver move.
Tree = dict[str, dict[str, "Tree"]]


class BudgetExceeded(Exception):
    """The proof needs more nodes than allowed: the position is not taken as a puzzle."""


def material(pos: Position, color: str) -> float:
    """Men count 1, kings 2.5."""
    men, kings = pos.count(color)
    return men * MAN_VALUE + kings * KING_VALUE


def balance(pos: Position, color: str) -> float:
    """Material of ``color`` minus the opponent's."""
    other = "B" if color == "W" else "W"
    return material(pos, color) - material(pos, other)


@dataclass
class Prover:
    """Searches solution trees for one solver, counting nodes against a budget."""

    solver: str
    base: float
    budget: int = NODE_BUDGET
    nodes: int = 0
    _cache: dict[tuple, Tree] = field(default_factory=dict)

    def solver_node(self, pos: Position, depth: int, first_only: bool = False) -> Tree:
        """Every solver move that wins within ``depth`` solver moves (the first one found when
        ``first_only``), with its proof."""
        key = (pos.key, depth, first_only)
        if key in self._cache:
            return self._cache[key]
        won: Tree = {}
        for move in _ordered(pos):
            self._tick()
            after = pos.play(move)
            replies = after.legal_moves()
            if not replies or (balance(after, self.solver) - self.base >= GAIN and not replies[0].is_capture):
                won[str(move)] = {}
            elif depth > 1:
                node = self.opponent_node(after, replies, depth - 1)
                if node is not None:
                    won[str(move)] = node
            if won and first_only:
                break
        self._cache[key] = won
        return won

    def opponent_node(self, pos: Position, replies: list[Move], depth: int) -> dict[str, Tree] | None:
        """The solver's answer to every reply, or None when one reply escapes."""
        node: dict[str, Tree] = {}
        # Captures first: they are what a golpe forces, and refutations are found sooner.
        for reply in sorted(replies, key=lambda m: -len(m.captured)):
            self._tick()
            won = self.solver_node(pos.play(reply), depth)
            if not won:
                return None
            node[str(reply)] = won
        return node

    def _tick(self) -> None:
        self.nodes += 1
        if self.nodes > self.budget:
            raise BudgetExceeded


def _ordered(pos: Position) -> list[Move]:
    """Captures, then moves after which the opponent must capture come first; stable otherwise."""
    return sorted(pos.legal_moves(), key=lambda m: -len(m.captured))


def line_length(tree: Tree) -> int:
    """Solver moves in the main line: the quickest win against the most stubborn defence."""
    return min(1 + max((line_length(sub) for sub in node.values()), default=0) for node in tree.values())


def main_line(tree: Tree) -> list[str]:
    """The key move, then the opponent's and the solver's moves in turn (best defence, fastest win)."""
    line: list[str] = []
    while tree:
        move = min(tree, key=lambda m: (1 + max((line_length(s) for s in tree[m].values()), default=0), m))
        line.append(move)
        replies = tree[move]
        if not replies:
            break
        reply = max(replies, key=lambda r: (line_length(replies[r]), r))
        line.append(reply)
        tree = replies[reply]
    return line


@dataclass(frozen=True)
class Golpe:
    """A proven puzzle position: the only winning first move and every accepted continuation."""

    fen: str
    variant: str
    solver: str
    tree: Tree
    line: list[str]
    alternatives: int      # legal first moves that do not win (the wrong tries)


def prove(pos: Position, max_moves: int = MAX_SOLVER_MOVES, budget: int = NODE_BUDGET) -> Golpe | None:
    """The golpe of this position, or None when there is none, when more than one first move
    wins, when a single move wins at once, when the solver is already clearly ahead, or when
    proving it exceeds the budget."""
    solver = pos.turn
    base = balance(pos, solver)
    if base >= GAIN:
        return None                     # already winning easily: no puzzle
    legal = pos.legal_moves()
    if len(legal) < 2:
        return None                     # a forced move is no puzzle
    try:
        prover = Prover(solver, base, budget)
        # The shortest depth at which something wins decides the line length ...
        for depth in range(1, max_moves + 1):
            if prover.solver_node(pos, depth, first_only=True):
                break
        else:
            return None
        if depth < MIN_SOLVER_MOVES:
            return None                 # picking one good capture is not a combination
        # ... and uniqueness is checked with the full depth, so a longer second win also counts.
        winners = prover.solver_node(pos, max_moves)
    except BudgetExceeded:
        return None
    if len(winners) != 1:
        return None
    key = next(iter(winners))
    tree = {key: _trim(winners[key], depth - 1, prover)}
    return Golpe(pos.fen(), pos.variant.id, solver, tree, main_line(tree), len(legal) - 1)


def _trim(node: dict[str, Tree], depth: int, prover: Prover) -> dict[str, Tree]:
    """Keep, at each later solver turn, only the moves that win within the puzzle's length."""
    out: dict[str, Tree] = {}
    for reply, solver_moves in node.items():
        kept = {m: sub for m, sub in solver_moves.items() if line_length({m: sub}) <= depth}
        out[reply] = {m: _trim(sub, depth - 1, prover) for m, sub in kept.items()}
    return out
