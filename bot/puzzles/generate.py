"""Finding golpes in real play: championship games and engine games from varied openings.

Candidates are the positions of games, never random piece scatter, so puzzles look like games.
Each candidate goes through ``prove``; a proven one becomes a puzzle record with tags and a
starting difficulty rating.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.rules import Move, Position, read_pdn

from .prove import Golpe, balance, prove

# A player for engine games: picks a move in a position.
Player = Callable[[Position, random.Random], Move]


@dataclass(frozen=True)
class Candidate:
    """A position met in a game, and where it was met."""

    position: Position
    source: str
    game: str = ""          # positions of one game share this; puzzles from one game are spread out
    ply: int = 0


def from_pdn(path: str | Path, variant: str = "italian") -> Iterator[Candidate]:
    """Every position (after each ply) of every game of a PDN file."""
    for number, game in enumerate(read_pdn(Path(path).read_text(encoding="utf-8"), variant), start=1):
        white, black = game.tags.get("White", "?"), game.tags.get("Black", "?")
        for ply, pos in enumerate(game.positions[1:], start=1):
            yield Candidate(pos, f"{white} - {black} (game {number}), ply {ply}", f"pdn {number}", ply)


def noisy_greedy(pos: Position, rng: random.Random, blunder: float = 0.3) -> Move:
    """A club player in a hurry: the move that keeps the most material two plies on, and now and
    then any move (the mistakes that golpes punish)."""
    legal = pos.legal_moves()
    if len(legal) == 1 or rng.random() < blunder:
        return rng.choice(legal)
    me = pos.turn
    best: list[Move] = []
    best_score = float("-inf")
    for move in legal:
        after = pos.play(move)
        replies = after.legal_moves()
        score = min((balance(after.play(r), me) for r in replies), default=100.0)
        if score > best_score:
            best, best_score = [move], score
        elif score == best_score:
            best.append(move)
    return rng.choice(best)


def from_selfplay(variant: str, games: int, rng: random.Random, player: Player = noisy_greedy,
                  opening_plies: tuple[int, int] = (4, 10), max_plies: int = 160) -> Iterator[Candidate]:
    """Positions of engine games, each from a different random opening."""
    for number in range(1, games + 1):
        pos = Position.start(variant)
        opening = rng.randint(*opening_plies)
        for ply in range(1, max_plies + 1):
            legal = pos.legal_moves()
            if not legal:
                break
            move = rng.choice(legal) if ply <= opening else player(pos, rng)
            pos = pos.play(move)
            if ply > opening:
                yield Candidate(pos, f"engine game {number}, ply {ply}", f"{variant} engine {number}", ply)


def puzzle_id(variant: str, fen: str) -> str:
    """A stable id: the same position always gets the same id."""
    return variant[:2] + "-" + hashlib.sha1(f"{variant}|{fen}".encode()).hexdigest()[:10]


def describe(golpe: Golpe, source: str) -> dict[str, Any]:
    """The puzzle record: id, variant, fen, main line, tree, tags and starting rating."""
    pos = Position.from_fen(golpe.variant, golpe.fen)
    sacrifices = longest = 0
    promotion = False
    for i, text in enumerate(golpe.line):
        move = pos.parse_move(text)
        nxt = pos.play(move)
        if i % 2 == 0:                                   # the solver's moves
            longest = max(longest, len(move.captured))
            promotion = promotion or move.promotes
            if i + 1 < len(golpe.line) and "x" in golpe.line[i + 1]:
                sacrifices += 1
        pos = nxt
    start = Position.from_fen(golpe.variant, golpe.fen)
    key = golpe.line[0]
    tempting = 0
    for move in start.legal_moves():
        if str(move) == key:
            continue
        after = start.play(move)
        replies = after.legal_moves()
        if move.is_capture or (replies and replies[0].is_capture):
            tempting += 1
    length = (len(golpe.line) + 1) // 2
    # Starting difficulty: longer lines, more sacrifices and more tempting wrong tries are harder;
    # solvers' results move it later.
    rating = 1000 + 150 * (length - 1) + 60 * sacrifices + 40 * tempting + (80 if promotion else 0)
    return {
        "id": puzzle_id(golpe.variant, golpe.fen),
        "variant": golpe.variant,
        "fen": golpe.fen,
        "solution": golpe.line,
        "tree": golpe.tree,
        "tags": {"sacrifices": sacrifices, "longest_capture": longest, "promotion": promotion,
                 "moves": length, "source": source},
        "rating": min(rating, 2400),
    }


# Plies after a puzzle during which the same game gives no other: the same idea a move later is
# not a new puzzle.
SPACING = 12
MIN_SACRIFICES = 1


def find(candidates: Iterable[Candidate], count: int, seen: set[tuple] | None = None,
         progress: Callable[[int, int], None] | None = None) -> list[dict[str, Any]]:
    """Up to ``count`` new puzzles from the candidates, skipping positions already in ``seen``."""
    seen = set() if seen is None else seen
    found: list[dict[str, Any]] = []
    last_found: dict[str, int] = {}
    for examined, cand in enumerate(candidates, start=1):
        key = (cand.position.variant.id, cand.position.key)
        if key in seen or (cand.game in last_found and cand.ply - last_found[cand.game] < SPACING):
            continue
        seen.add(key)
        golpe = prove(cand.position)
        puzzle = describe(golpe, cand.source) if golpe is not None else None
        # A golpe gives something away to get more back; a plain promotion race is no golpe.
        if puzzle is not None and puzzle["tags"]["sacrifices"] >= MIN_SACRIFICES:
            found.append(puzzle)
            last_found[cand.game] = cand.ply
        if progress:
            progress(len(found), examined)
        if len(found) >= count:
            break
    return found
