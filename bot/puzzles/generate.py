"""Finding golpes in real play: championship games, then engine games at human-like levels.

Candidates are the positions of games, never random piece scatter, so puzzles look like games.
Each candidate goes through ``prove``; a proven one becomes a puzzle record with tags and a
starting difficulty rating.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.ai import search_position
from bot.rules import Move, Position, Variant, read_pdn

from .prove import Golpe, centi_balance, line_tags, material_search, prove, verify

# A player for engine games: picks a move in a position.
Player = Callable[[Position, random.Random], Move]


@dataclass(frozen=True)
class Candidate:
    """A position met in a game, and where it was met."""

    position: Position
    source: str
    game: str = ""          # positions of one game share this; puzzles from one game are spread out
    ply: int = 0
    moves: int = 0          # the most solver moves to prove (0: GENERATE_MOVES)
    played: bool = True     # the game's own position (not one after a move it did not play)


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
                                    game, ply, played=False)
            pos = pos.play(move)
            if ply > opening:
                yield Candidate(pos, f"engine game {number}, ply {ply}", game, ply)


def tempting_moves(pos: Position, played: Move) -> list[Move]:
    """The moves other than ``played`` after which the opponent has no capture that wins
    material at once (captures played out): the slips that look safe at a glance."""
    search = material_search(pos.variant)
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
RATING_MIN, RATING_MAX = 600, 3000
# Above this the sum counts half: long combinations add up fast (500 a move, 280 a sacrifice), and
# under a plain cap they all started at it, so the hardest tenth of the bank could not be told apart
# (a review found every built four-mover at the old cap, 2600).  Halving keeps the order.
RATING_KNEE = 2200
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
    if raw > RATING_KNEE:
        raw = RATING_KNEE + (raw - RATING_KNEE) / 2
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
# A long combination: the bank wants 15 % of its puzzles at least this long (issue 33).
LONG_MOVES = 4
# The longest line ``--long`` proves: each solver move more multiplies the proof's cost.
MAX_LONG_MOVES = 5


def find(candidates: Iterable[Candidate], count: int, seen: set[tuple] | None = None,
         progress: Callable[[int, int], None] | None = None,
         on_found: Callable[[dict[str, Any]], None] | None = None,
         min_moves: int = 2, earlier: bool = False,
         on_proven: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """Up to ``count`` new puzzles of at least ``min_moves`` solver moves from the candidates,
    skipping positions already in ``seen``.  With ``earlier``, each puzzle found in a game sends
    the prover back to the game's own positions two and four plies before it, allowed one and two
    solver moves more: where the game played into the combination, its start is there.
    ``on_proven`` hears of every proven puzzle, also those shorter than ``min_moves``."""
    seen = set() if seen is None else seen
    found: list[dict[str, Any]] = []
    last_found: dict[str, int] = {}
    played: dict[str, dict[int, Position]] = {}
    retried: set[tuple] = set()

    def keep(puzzle: dict[str, Any], cand: Candidate) -> None:
        if on_proven:
            on_proven(puzzle)
        if puzzle["tags"]["moves"] < min_moves:
            return
        found.append(puzzle)
        last_found[cand.game] = max(cand.ply, last_found.get(cand.game, cand.ply))
        if on_found:
            on_found(puzzle)

    for examined, cand in enumerate(candidates, start=1):
        key = (cand.position.variant.id, cand.position.key)
        if earlier and cand.played and cand.game:
            recent = played.setdefault(cand.game, {})
            recent[cand.ply] = cand.position
            recent.pop(cand.ply - 6, None)          # only the last few plies are ever gone back to
        if key in seen or (cand.game in last_found and cand.ply - last_found[cand.game] < SPACING):
            continue
        seen.add(key)
        puzzle = accept(prove(cand.position, cand.moves or GENERATE_MOVES), cand.source)
        if puzzle is not None and earlier and cand.game in played:
            # The same combination started earlier is the one puzzle kept of the two.
            puzzle, cand = _earlier(puzzle, cand, played[cand.game], retried)
        if puzzle is not None:
            keep(puzzle, cand)
        if progress:
            progress(len(found), examined)
        if len(found) >= count:
            break
    return found


def _earlier(puzzle: dict[str, Any], cand: Candidate, recent: dict[int, Position],
             retried: set[tuple]) -> tuple[dict[str, Any], Candidate]:
    """The longest puzzle among ``puzzle`` and the game's positions two and four plies before
    it, proven with one and two solver moves more (and where it was met)."""
    for back in (4, 2):
        before = recent.get(cand.ply - back)
        more = min(puzzle["tags"]["moves"] + back // 2, MAX_LONG_MOVES)
        if before is None or (before.key, more) in retried:
            continue
        retried.add((before.key, more))
        where = cand.source.split(", ply ")[0] + f", ply {cand.ply - back}" if ", ply " in cand.source else cand.source
        longer = accept(prove(before, more), where)
        if longer is not None and longer["tags"]["moves"] > puzzle["tags"]["moves"]:
            return longer, Candidate(before, where, cand.game, cand.ply - back)
    return puzzle, cand


# -- long combinations built back from proven ones --------------------------------------------------
#
# The plain generator proves three solver moves at most, and a game seldom holds a four-move
# combination whose every turn has one winning move (about 1 in 100 puzzles, and proving five
# moves on every candidate costs five times more).  A proven combination is cheaper to lengthen
# from its end: two plies before its start, the solver may have had a man (or king) to give that
# the opponent had to take, landing where the puzzle's position has it.  Those positions are
# built back from the puzzle (``predecessors``) and proven with one solver move more; each kept
# one is a puzzle of its own, held to the bank's whole standard (``verify``) like any other.


def _fen(turn: str, pieces: dict[int, str]) -> str:
    def side(colour: str) -> str:
        return ",".join(("K" if code.isupper() else "") + str(sq)
                        for sq, code in sorted(pieces.items()) if code.lower() == colour)
    return f"{turn}:W{side('w')}:B{side('b')}"


def _origins(variant: Variant, square: int, code: str, occupied: dict[int, str]) -> list[int]:
    """The squares a piece ``code`` on ``square`` may have come from with one move that took
    nothing (a man moves forward; a king any way, flying ones across empty squares)."""
    row, col = variant.square_to_rc(square)
    if code.islower():
        back = 1 if code == "w" else -1             # white men move up the board (row 0 on top)
        return [sq for dc in (-1, 1) if (sq := variant.rc_to_square(row + back, col + dc)) is not None]
    out = []
    for dr in (-1, 1):
        for dc in (-1, 1):
            step = 1
            while (sq := variant.rc_to_square(row + step * dr, col + step * dc)) is not None and sq not in occupied:
                out.append(sq)
                if not variant.flying_kings:
                    break
                step += 1
    return out


def predecessors(pos: Position) -> list[Position]:
    """The positions two plies before ``pos`` (same side to move) in which that side moved a piece
    without capturing and the opponent then had to capture (captures are compulsory), one of its
    captures a man taking one piece and landing where ``pos`` has it: the sacrifice (or the
    opened landing square) that a longer combination starts with.  The opponent's other captures,
    if any, are the prover's to answer."""
    variant, solver = pos.variant, pos.turn
    mine, theirs = solver.lower(), ("b" if solver == "W" else "w")
    start = Position.start(variant)
    most = {c: sum(start.count(c.upper())) for c in "wb"}
    pieces = pos.pieces()
    seen: set[str] = set()
    out = []
    for land, code in pieces.items():
        if code != theirs:
            continue
        row, col = variant.square_to_rc(land)
        for dr in (-1, 1):
            for dc in (-1, 1):
                taken = variant.rc_to_square(row - dr, col - dc)
                origin = variant.rc_to_square(row - 2 * dr, col - 2 * dc)
                if taken is None or origin is None or taken in pieces or origin in pieces:
                    continue
                for victim in (mine, mine.upper()):
                    before = {sq: c for sq, c in pieces.items() if sq != land}
                    before[origin], before[taken] = theirs, victim
                    if sum(1 for c in before.values() if c.lower() == mine) > most[mine]:
                        continue
                    for square, piece in list(before.items()):
                        if piece.lower() != mine:
                            continue
                        for came in _origins(variant, square, piece, before):
                            if came == origin or (came in before and came != land):
                                continue
                            earlier = {sq: c for sq, c in before.items() if sq != square}
                            earlier[came] = piece
                            fen = _fen(solver, earlier)
                            if fen in seen:
                                continue
                            seen.add(fen)
                            found = _forced_into(variant, fen, came, square, pos)
                            if found is not None:
                                out.append(found)
    return out


def _forced_into(variant: Variant, fen: str, came: int, went: int, target: Position) -> Position | None:
    """The position of ``fen`` when the move ``came``-``went`` is legal there and leaves the
    opponent a capture to make, one of which leads to ``target``; else None."""
    try:
        pos = Position.from_fen(variant, fen)
    except ValueError:
        return None
    move = next((m for m in pos.legal_moves() if m.path == (came, went) and not m.captured), None)
    if move is None:
        return None
    after = pos.play(move)
    if not any(reply.captured and after.play(reply).key == target.key for reply in after.legal_moves()):
        return None
    return pos


class Lengthen:
    """Candidates two plies before proven puzzles (``predecessors``), each to be proven with one
    solver move more, longest puzzles first; a puzzle proven from them may be ``offer``-ed back
    and is lengthened in turn (a two-mover becomes a three-mover, then a four-mover).  Each
    candidate's source names the bank puzzle it was built back from and how many plies before it.
    At most ``per_puzzle`` puzzles of ``LONG_MOVES`` or more are built back from one bank puzzle
    (they all end with its combination): the ones ``offer`` hears of count."""

    def __init__(self, puzzles: Iterable[dict[str, Any]], most: int = MAX_LONG_MOVES, per_puzzle: int = 1) -> None:
        self.most = most
        self.per_puzzle = per_puzzle
        self.queue: deque[dict[str, Any]] = deque(sorted(puzzles, key=lambda p: -p["tags"]["moves"]))
        self.origin: dict[str, tuple[str, int, str]] = {}
        self.kept: dict[str, int] = {}
        self.built = 0

    def offer(self, puzzle: dict[str, Any]) -> None:
        """A puzzle just proven from these candidates: lengthen it too."""
        if puzzle["id"] in self.origin:
            root = self.origin[puzzle["id"]][2]
            if puzzle["tags"]["moves"] >= LONG_MOVES:
                self.kept[root] = self.kept.get(root, 0) + 1
            self.queue.appendleft(puzzle)

    def __iter__(self) -> Iterator[Candidate]:
        while self.queue:
            puzzle = self.queue.popleft()
            length = puzzle["tags"]["moves"]
            if length >= self.most:
                continue
            base, plies, root = self.origin.get(
                puzzle["id"], (f"{puzzle['id']} ({puzzle['tags'].get('source', '')})", 0, puzzle["id"]))
            pos = Position.from_fen(puzzle["variant"], puzzle["fen"])
            for before in predecessors(pos):
                if self.kept.get(root, 0) >= self.per_puzzle:
                    break
                self.origin[puzzle_id(puzzle["variant"], before.fen())] = (base, plies + 2, root)
                self.built += 1
                # With one long puzzle a bank puzzle, its candidates are one game (the generator
                # keeps one puzzle a game), whoever listens to offer.
                game = f"before {root}" if self.per_puzzle == 1 else f"before {root} {self.built}"
                yield Candidate(before, f"built {plies + 2} plies before puzzle {base}", game,
                                0, moves=length + 1, played=False)
