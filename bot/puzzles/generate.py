"""Finding golpes in real play: championship games, then engine games at human-like levels.

Candidates are the positions of games, never random piece scatter, so puzzles look like games.
Each candidate goes through ``prove``; a proven one becomes a puzzle record with tags and a
starting difficulty rating.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.ai import search_position
from bot.rules import Move, Position, read_pdn

from .prove import Golpe, Search, centi_balance, line_tags, prove, verify

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


# The engine levels that play the games puzzles are looked for in: club players who miss
# combinations now and then, never random moves (issue 17).
GAME_LEVELS = (2, 2, 2, 3, 3, 4)


def from_fens(path: Path, variant: str, label: str = "earlier bank") -> Iterator[Candidate]:
    """The positions of a JSON-lines file of puzzles (an earlier bank), with their sources
    after ``label``."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            record = json.loads(line)
            source = record.get("tags", {}).get("source") or f"line {number}"
            yield Candidate(Position.from_fen(variant, record["fen"]), f"{label}: {source}",
                            f"fens {number}", 0)


# The searches that play those games, by the number they had as bot levels when the bank was made:
# (depth, seconds, margin).  Kept here, not read from the bot's LEVELS, so that recalibrating the
# levels players meet (issue 28 made levels 1-3 look at the board instead of searching) does not
# change the games the bank's puzzles come from.
GAME_SEARCHES: dict[int, tuple[int, float, int]] = {2: (2, 0.4, 0), 3: (4, 0.6, 8), 4: (6, 1.0, 0)}


def engine_player(level: int) -> Player:
    """A searching player of strength ``level`` of ``GAME_SEARCHES`` (its looseness makes the games vary)."""
    depth, seconds, margin = GAME_SEARCHES[level]

    def play(pos: Position, rng: random.Random) -> Move:
        return search_position(pos, depth, seconds, margin, rng=rng).move

    return play


def from_selfplay(variant: str, games: int, rng: random.Random, levels: tuple[int, ...] = GAME_LEVELS,
                  opening_plies: tuple[int, int] = (6, 12), max_plies: int = 160,
                  first: int = 1, tempting: bool = True) -> Iterator[Candidate]:
    """Positions of engine games at human-like levels (``levels`` drawn for each side of each
    game); the opening is played by level 2, the loosest of them, so the games differ.  With
    ``tempting``, also the position after each other move that looks safe at a glance (the slip
    a club player makes), just before the position after the move the engine played."""
    loose = engine_player(2)
    for number in range(first, first + games):
        white, black = engine_player(rng.choice(levels)), engine_player(rng.choice(levels))
        pos = Position.start(variant)
        opening = rng.randint(*opening_plies)
        for ply in range(1, max_plies + 1):
            legal = pos.legal_moves()
            if not legal:
                break
            if len(legal) == 1:
                move = legal[0]
            elif ply <= opening:
                move = loose(pos, rng)
            else:
                move = (white if pos.white else black)(pos, rng)
            game = f"{variant} engine {number}"
            if ply > opening and tempting:
                # The slips a player could make here: moves that leave nothing to take at once
                # (they look safe), which the opponent may punish with a combination.
                for other in tempting_moves(pos, move):
                    yield Candidate(pos.play(other), f"engine game {number}, ply {ply}, {other} instead of {move}",
                                    game, ply)
            pos = pos.play(move)
            if ply > opening:
                yield Candidate(pos, f"engine game {number}, ply {ply}", game, ply)


def tempting_moves(pos: Position, played: Move) -> list[Move]:
    """The moves other than ``played`` after which the opponent has no capture that wins
    material at once (captures played out): the slips that look safe at a glance."""
    search = Search(pos.variant)
    now = centi_balance(pos, pos.turn)
    return [m for m in pos.legal_moves() if m != played and search.after(pos, m, 0) >= now + 100 * len(m.captured)]


def puzzle_id(variant: str, fen: str) -> str:
    """A stable id: the same position always gets the same id."""
    return variant[:2] + "-" + hashlib.sha1(f"{variant}|{fen}".encode()).hexdigest()[:10]


# The starting rating (issue 33): a sum of difficulty signals, each weight non-negative so the
# rating never falls when a signal grows, calibrated so that the bank spreads from about 1000 at its
# 10th percentile to about 2100 at its 90th (it was 1300-1720: every puzzle started near 1450, so the
# first solvers of a hard one gained too little and of an easy one lost too much).  Solvers' results
# move it later (Glicko-2 on the puzzle).  Each count is capped where more stops meaning harder.
RATING_BASE = 250
RATING_MIN, RATING_MAX = 600, 2600
PER_EXTRA_MOVE = 500          # each solver move beyond two: the line to see grows by two plies
PER_SACRIFICE = 280           # material given that is not an exchange
PER_LATER_QUIET = 250         # a quiet solver move after the key (the key is nearly always quiet)
PER_TEMPTING = 80             # a wrong first move that captures or forces a capture (at most 10)
PER_ALTERNATIVE = 35          # any other legal first move (at most 20)
PER_CAPTURED = 110            # each piece beyond one in the longest solver capture: a longer chain to foresee
PER_KING = 80                 # each king on the board (at most 4): their long moves are harder to read
FOR_PROMOTION = 60            # a man crowned in the line


def starting_rating(variant: str, fen: str, line: list[str], tags: dict[str, Any]) -> int:
    """The puzzle's starting rating from its position and main line (``tags`` from ``line_tags``),
    between ``RATING_MIN`` and ``RATING_MAX``, in steps of 10."""
    start = Position.from_fen(variant, fen)
    key = line[0]
    tempting = alternatives = 0
    for move in start.legal_moves():
        if str(move) == key:
            continue
        alternatives += 1
        replies = start.play(move).legal_moves()
        if move.is_capture or (replies and replies[0].is_capture):
            tempting += 1
    later_quiet = sum(1 for i in range(2, len(line), 2) if "x" not in line[i])
    kings = start.count("W")[1] + start.count("B")[1]
    raw = (RATING_BASE + PER_EXTRA_MOVE * (tags["moves"] - 2) + PER_SACRIFICE * tags["sacrifices"]
           + PER_LATER_QUIET * later_quiet + PER_TEMPTING * min(tempting, 10)
           + PER_ALTERNATIVE * min(alternatives, 20) + PER_CAPTURED * max(tags["longest_capture"] - 1, 0)
           + PER_KING * min(kings, 4) + (FOR_PROMOTION if tags["promotion"] else 0))
    return max(RATING_MIN, min(RATING_MAX, round(raw / 10) * 10))


def describe(golpe: Golpe, source: str) -> dict[str, Any]:
    """The puzzle record: id, variant, fen, main line, tree, tags (from the line) and starting rating."""
    tags = line_tags(golpe.variant, golpe.fen, golpe.line)
    return {
        "id": puzzle_id(golpe.variant, golpe.fen),
        "variant": golpe.variant,
        "fen": golpe.fen,
        "solution": golpe.line,
        "tree": golpe.tree,
        "tags": {**tags, "source": source},
        "rating": starting_rating(golpe.variant, golpe.fen, golpe.line, tags),
    }


def retag(puzzle: dict[str, Any]) -> dict[str, Any]:
    """The puzzle with its tags and starting rating computed again from its line (its source
    kept, every other field as it was): what ``python -m bot puzzles retag`` writes."""
    tags = line_tags(puzzle["variant"], puzzle["fen"], puzzle["solution"])
    source = puzzle.get("tags", {}).get("source", "")
    rating = starting_rating(puzzle["variant"], puzzle["fen"], puzzle["solution"], tags)
    return {**puzzle, "tags": {**tags, "source": source}, "rating": rating}


def accept(golpe: Golpe | None, source: str) -> dict[str, Any] | None:
    """The puzzle record of a proven golpe when it meets the bank's standard (``verify``), else None."""
    if golpe is None:
        return None
    puzzle = describe(golpe, source)
    return puzzle if not verify(puzzle) else None


# Plies after a puzzle during which the same game gives no other: the same idea a move later is
# not a new puzzle.
SPACING = 12
# Solver moves the generator looks for: longer proofs cost five times more and most fail the
# uniqueness of a later turn anyway.
GENERATE_MOVES = 3


def find(candidates: Iterable[Candidate], count: int, seen: set[tuple] | None = None,
         progress: Callable[[int, int], None] | None = None,
         on_found: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """Up to ``count`` new puzzles from the candidates, skipping positions already in ``seen``."""
    seen = set() if seen is None else seen
    found: list[dict[str, Any]] = []
    last_found: dict[str, int] = {}
    for examined, cand in enumerate(candidates, start=1):
        key = (cand.position.variant.id, cand.position.key)
        if key in seen or (cand.game in last_found and cand.ply - last_found[cand.game] < SPACING):
            continue
        seen.add(key)
        puzzle = accept(prove(cand.position, GENERATE_MOVES), cand.source)
        if puzzle is not None:
            found.append(puzzle)
            last_found[cand.game] = cand.ply
            if on_found:
                on_found(puzzle)
        if progress:
            progress(len(found), examined)
        if len(found) >= count:
            break
    return found
