"""Puzzles from a player's own games: the golpes a game's players missed or allowed.

Every position of a finished game is a candidate, as the generator's are, and goes through the
same proof and the same standard (``generate.accept``: ``prove`` then ``verify`` with its deeper
margin), so a game's puzzle is as trustworthy as the bank's.  Pure: the rules engine and the
prover, no I/O.

A position with a proven golpe gives up to two puzzles, one per player, both of that position
(the golpe's side to move solves it):

* **missed** -- the side to move had the golpe and played something else: its own puzzle, the
  move it should have found;
* **allowed** -- the other side's previous move let the golpe in (that side had a move after
  which the opponent wins no material in the golpe's number of moves, so the position was not
  already lost): the puzzle of the side that allowed it, solved from the opponent's side, whether
  or not the opponent then played it ("see what your move allowed").

One idea is one puzzle: after a golpe of a side, that side's golpes of the next ``SPACING`` plies
(the generator's spacing) are not looked at (the same combination a move later, or still there
after a miss, is no new puzzle); the other side's are; a position met again is not tried again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot.rules import BLACK, WHITE, Move, Position, get_variant

from .generate import GENERATE_MOVES, SPACING, describe
from .prove import NODE_BUDGET, BudgetExceeded, Golpe, material_search, prove, verify, wins_materially

# The standard's deeper search (``verify``) gets ten times the prover's budget: the bank's short
# puzzles need at most 130,000 nodes (60 a variant sampled), a rejected golpe of a long endgame
# up to 470,000 (two seconds).  Stopping gives no puzzle; one that finishes is the same proof.
VERIFY_FACTOR = 10

MISSED = "missed"
ALLOWED = "allowed"
SIDES = {WHITE: "white", BLACK: "black"}


@dataclass(frozen=True)
class GamePuzzle:
    """One proven puzzle of a game, and whose it is.

    ``ply`` is the 0-based index into the game's moves: the puzzle is the position before
    ``moves[ply]`` (``ply == len(moves)``: the final position, only ever an "allowed" puzzle).
    ``side`` ("white" or "black") is the player it belongs to; ``kind`` is ``MISSED`` (``side`` was
    to move at ``ply``, had the golpe and played another move) or ``ALLOWED`` (``side`` played
    ``moves[ply - 1]``, which let the opponent, to move at ``ply``, in).  ``puzzle`` is a bank record
    (``generate.describe``: id, variant, fen, solution, tree, tags, rating)."""

    ply: int
    side: str
    kind: str
    puzzle: dict[str, Any]
    # The move number as a PDN of the game counts it (Black's first move after a "B:" start
    # position is move 1, White's next one move 2) of the move the puzzle is about: the one
    # missed (played at the puzzle's position) or the one that allowed it (``moves[ply - 1]``).
    move_number: int = 0


def replay(variant: str, start_fen: str | None, moves: Sequence[str | Move]) -> tuple[list[Position], list[Move]]:
    """The positions of a game (the start first, the final one last) and its moves; ValueError for
    a bad FEN or a move that cannot be played (named by its ply)."""
    v = get_variant(variant)
    pos = Position.from_fen(v, start_fen) if start_fen else Position.start(v)
    positions, played = [pos], []
    for ply, move in enumerate(moves):
        try:
            played.append(pos.parse_move(move) if isinstance(move, str) else move)
            pos = pos.play(played[-1])
        except Exception as err:
            raise ValueError(f"ply {ply} ({move}) cannot be played: {err}") from err
        positions.append(pos)
    return positions, played


def allowed(before: Position, move: Move, plies: int, budget: int = NODE_BUDGET) -> bool:
    """Whether ``move`` let the opponent in: after it the opponent wins material within
    ``plies`` (captures played out), and some other move of ``before`` would not have allowed
    that (a position already lost, or a forced move, allows nothing)."""
    if not wins_materially(before.play(move), plies, budget):
        return False
    others = [m for m in before.legal_moves() if m != move]
    return any(not wins_materially(before.play(m), plies, budget) for m in others)


def accept(golpe: Golpe | None, source: str, budget: int = NODE_BUDGET) -> dict[str, Any] | None:
    """``generate.accept`` with the deeper search bounded to ``VERIFY_FACTOR * budget`` nodes: the
    puzzle record when it meets the bank's standard, else None (also when the search stops)."""
    if golpe is None:
        return None
    puzzle = describe(golpe, source)
    try:
        problems = verify(puzzle, search=material_search(golpe.variant, VERIFY_FACTOR * budget))
    except BudgetExceeded:
        return None
    return None if problems else puzzle


def scan_game(variant: str, start_fen: str | None, moves: Sequence[str | Move], *,
              budget: int | None = None, source: str = "game",
              solver_moves: int = GENERATE_MOVES) -> list[GamePuzzle]:
    """The proven puzzles of a game, in the order of the game (at one ply a "missed" puzzle before
    the "allowed" one).  ``budget`` is the prover's node budget per position (default
    ``prove.NODE_BUDGET``; its quick test and the standard's deeper search get ten times as many):
    a position whose proof needs more gives no puzzle, so the cost of a scan is bounded by the
    game's length.  ``solver_moves`` is the longest golpe looked for, as the
    generator's (bench/puzzle_scan.py: four instead of three finds a ninth more puzzles for four
    times the time).  ``source`` starts the puzzles' ``tags.source`` (", ply N" follows).
    ValueError when the game cannot be replayed."""
    nodes = NODE_BUDGET if budget is None else budget
    positions, played = replay(variant, start_fen, moves)
    # Plies a golpe takes at most, solver and defender moves: what "lets the opponent in" means.
    plies = 2 * solver_moves - 1
    shift = 0 if positions[0].white else 1

    def number(ply: int) -> int:
        return (ply + shift) // 2 + 1

    last: dict[str, int] = {}
    # A position met again (kings going to and fro) is the same idea: tried once.
    tried: set[tuple[bool, int, int, int, int]] = set()
    found: list[GamePuzzle] = []
    for ply, pos in enumerate(positions):
        solver = pos.turn
        if (solver in last and ply - last[solver] < SPACING) or pos.key in tried:
            continue
        tried.add(pos.key)
        puzzle = accept(prove(pos, solver_moves, nodes), f"{source}, ply {ply}", nodes)
        if puzzle is None:
            continue
        last[solver] = ply
        if ply < len(played) and str(played[ply]) not in puzzle["tree"]:
            found.append(GamePuzzle(ply, SIDES[solver], MISSED, puzzle, number(ply)))
        if ply > 0 and allowed(positions[ply - 1], played[ply - 1], plies, nodes):
            # Numbered by the move that let it in, the one the player remembers (Black's slip
            # "5... 4-7" is move 5; the position after it is White's move 6).
            found.append(GamePuzzle(ply, SIDES[positions[ply - 1].turn], ALLOWED, puzzle, number(ply - 1)))
    return found
