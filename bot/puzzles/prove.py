"""Proving a golpe: a forced series of moves that wins material or the game.

A solver move *ends the line successfully* when, after it, the opponent has no legal move, or the
endgame tables (``bot.ai.egtb``) know the position lost for the opponent, or -- in a position they
do not hold -- the solver is at least ``GAIN`` ahead (absolute: a man counts 1, a king
``king_value``), has won at least a man on the start, and the opponent has no capture pending.  A
solver node is won when one of its moves ends the line or leads to an opponent node whose every
reply leads to a won solver node again, within the number of solver moves allowed.  Pure: the
rules engine and the endgame tables (read once per process), no other I/O.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from bot.ai import egtb, jit
from bot.rules import Move, Position, Variant, get_variant, movegen

MAN_VALUE = 1.0
KING_VALUE = 2.0          # a king that moves one square (italian, triestina) ...
FLYING_KING_VALUE = 2.5   # ... and a flying one (spanish), in men
GAIN = 2.0
MIN_GAIN = 1.0
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
    """Men count 1, kings ``king_value``."""
    men, kings = pos.count(color)
    return men * MAN_VALUE + kings * king_value(pos.variant)


def king_value(variant: Variant | str) -> float:
    """What a king is worth in men: more than a man always, most when it flies."""
    return FLYING_KING_VALUE if get_variant(variant).flying_kings else KING_VALUE


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
    _moves: dict[tuple, tuple[list[Move], list[tuple[Position, bool]]]] = field(
        default_factory=dict)
    _answers: dict[tuple, tuple[list[Move], list[tuple[str, Position]]]] = field(default_factory=dict)
    _tables: dict[str, egtb.Tables | None] = field(default_factory=dict)

    def solver_node(self, pos: Position, depth: int, first_only: bool = False) -> Tree:
        """Every solver move that wins within ``depth`` solver moves (the first one found when
        ``first_only``), with its proof."""
        key = (pos.key, depth, first_only)
        if key in self._cache:
            return self._cache[key]
        won: Tree = {}
        moves, done = self._solver_moves(pos)
        for i, move in enumerate(moves):
            self._tick()
            if i == len(done):
                done.append(self._solver_move(pos, move))
            after, ends = done[i]
            if ends:
                won[str(move)] = {}
            elif depth > 1:
                node = self.opponent_node(after, after.legal_moves(), depth - 1)
                if node is not None:
                    won[str(move)] = node
            if won and first_only:
                break
        self._cache[key] = won
        return won

    def opponent_node(self, pos: Position, replies: list[Move], depth: int) -> dict[str, Tree] | None:
        """The solver's answer to every reply, or None when one reply escapes."""
        node: dict[str, Tree] = {}
        ordered, done = self._replies(pos, replies)
        for i, reply in enumerate(ordered):
            self._tick()
            if i == len(done):
                done.append((str(reply), pos.play(reply)))
            text, after = done[i]
            won = self.solver_node(after, depth)
            if not won:
                return None
            node[text] = won
        return node

    # The same positions come back at every depth the proof tries (and with and without
    # ``first_only``): what is worked out of a position is kept for the proof's length, each move
    # the first time it is tried (a node left early leaves the rest of its moves unmade).

    def _solver_moves(self, pos: Position) -> tuple[list[Move], list[tuple[Position, bool]]]:
        got = self._moves.get(pos.key)
        if got is None:
            got = self._moves[pos.key] = (_ordered(pos), [])
        return got

    def _solver_move(self, pos: Position, move: Move) -> tuple[Position, bool]:
        """The position after a solver move, and whether the line ends successfully with it.  Most
        are tried last (at depth 1), where the replies need not be made: whether there is one, and
        whether it is a capture (captures are compulsory: all are, or none), is what the end of a
        line asks."""
        after = pos.play(move)
        sides = (*after.sides(), after.white)
        fast = movegen.fast(after.variant)
        capture = fast.can_capture(*sides)
        no_reply = not capture and not fast.count(*sides)
        lead = balance(after, self.solver)
        found = self._verdict(after)
        known = None if found is None else found.result
        ends = no_reply or known == egtb.LOSS or (
            known is None and lead >= GAIN and lead - self.base >= MIN_GAIN and not capture)
        return after, ends

    def _replies(self, pos: Position, replies: list[Move]) -> tuple[list[Move], list[tuple[str, Position]]]:
        got = self._answers.get(pos.key)
        if got is None:
            # Captures first: they are what a golpe forces, and refutations are found sooner.
            got = self._answers[pos.key] = (sorted(replies, key=lambda m: -len(m.captured)), [])
        return got

    def _verdict(self, pos: Position) -> egtb.Verdict | None:
        # The tables are looked up once a proof (``egtb.verdict`` reads the settings each time).
        v = pos.variant.id
        if v not in self._tables:
            self._tables[v] = egtb.tables(pos.variant)
        tb = self._tables[v]
        return None if tb is None else tb.verdict(pos)

    def _tick(self) -> None:
        self.nodes += 1
        if self.nodes > self.budget:
            raise BudgetExceeded


def table_result(pos: Position) -> str | None:
    """What the endgame tables say of ``pos`` for its side to move (egtb.WIN, LOSS or DRAW), or
    None when it is not in them.  A line may end in a position they know lost for the defender
    (a won ending is a win, however few men it is ahead), never in one they know drawn (a man
    up in a drawn ending is no win)."""
    found = egtb.verdict(pos)
    return None if found is None else found.result


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
    if not wins_materially(pos, 2 * max_moves - 1, budget):
        return None
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
    if len({same_capture(pos, m) for m in winners}) != 1:
        return None
    # Several winners are the same capture landing on different squares: those that win within
    # the puzzle's length are accepted (a landing square that needs a move more would leave a
    # defence unanswered once the tree is cut to that length).
    tree = {key: _trim(sub, depth - 1, prover) for key, sub in winners.items() if line_length({key: sub}) <= depth}
    return Golpe(pos.fen(), pos.variant.id, solver, tree, main_line(tree), len(legal) - 1)


def _trim(node: dict[str, Tree], depth: int, prover: Prover) -> dict[str, Tree]:
    """Keep, at each later solver turn, only the moves that win within the puzzle's length."""
    out: dict[str, Tree] = {}
    for reply, solver_moves in node.items():
        kept = {m: sub for m, sub in solver_moves.items() if line_length({m: sub}) <= depth}
        out[reply] = {m: _trim(sub, depth - 1, prover) for m, sub in kept.items()}
    return out


# -- the strict proof: a material search deeper than the line ---------------------------------
#
# The bank's standard (issue 17), what lichess-puzzler asks of a puzzle: at every solver turn of
# the main line exactly one move wins and every other is refuted by a clear margin in a search
# deeper than the line; every defence is answered; after the line the solver is at least two men
# ahead (absolute, a king counting ``king_value``), or the opponent has no move.  Scores below are in
# hundredths of a man from the side to move's point of view.

MAN = 100
WIN = int(GAIN * 100)           # the solver's material lead, at least, after the line
MARGIN = 100                    # the key beats every other move by a man (a decisive margin) ...
MIN_WIN_GAIN = int(MIN_GAIN * 100)             # ... and the line wins at least a man on the start
# The search goes this far beyond the end of the line.  Two plies let through puzzles whose key
# another move ties two plies later (issue 28: 185 of the bank's 1,278), so the standard looks four.
EXTRA_PLIES = 4
NO_MOVE = 10_000                # the side to move has no move: lost
INF = 1_000_000


class Search:
    """Alpha-beta on material with captures played out (captures are compulsory, so a position
    with a capture pending is never scored).  A transposition table keeps bounds per depth."""

    def __init__(self, variant: Variant | str, budget: int | None = None) -> None:
        self.variant = get_variant(variant)
        fast = movegen.fast(self.variant)
        self.gen = fast.moves
        # At the horizon only captures are searched on: finding that there is none, and that a
        # move is left, costs far less than making every quiet move (most nodes are there).
        self.captures = fast.captures
        self.count = fast.count
        self.king = round(king_value(self.variant) * MAN)
        self.table: dict[tuple, tuple[int, int, int]] = {}
        self.budget = budget
        self.nodes = 0

    def value(self, um: int, uk: int, tm: int, tk: int, white: bool, depth: int, alpha: int, beta: int) -> int:
        self.nodes += 1
        if self.budget is not None and self.nodes > self.budget:
            raise BudgetExceeded
        if depth <= 0:
            moves = self.captures(um, uk, tm, tk, white)
            if not moves:
                if not self.count(um, uk, tm, tk, white):
                    return -NO_MOVE
                return (um.bit_count() - tm.bit_count()) * MAN + (uk.bit_count() - tk.bit_count()) * self.king
        else:
            moves = self.gen(um, uk, tm, tk, white)
            if not moves:
                return -NO_MOVE
        key = (um, uk, tm, tk, white)
        entry = self.table.get(key)
        if entry is not None and entry[0] >= depth:
            _d, low, high = entry
            if low >= beta:
                return low
            if high <= alpha:
                return high
            alpha, beta = max(alpha, low), min(beta, high)
            if alpha >= beta:
                return low
        best = -INF
        start_alpha = alpha
        nxt = depth - 1 if depth > 0 else 0
        for _key, cm, ck, cum, cuk in moves:
            v = -self.value(cm, ck, cum, cuk, not white, nxt, -beta, -alpha)
            if v > best:
                best = v
                if v > alpha:
                    alpha = v
                    if alpha >= beta:
                        break
        low, high = -INF, INF
        if best >= beta:
            low = best
        elif best <= start_alpha:
            high = best
        else:
            low = high = best
        if entry is not None and entry[0] == depth:
            low, high = max(low, entry[1]), min(high, entry[2])
        self.table[key] = (depth, low, high)
        return best

    def score(self, pos: Position, depth: int, alpha: int = -INF, beta: int = INF) -> int:
        """The value of ``pos`` for the side to move, ``depth`` plies then captures played out."""
        return self.value(*pos.sides(), pos.white, depth, alpha, beta)

    def after(self, pos: Position, move: Move, depth: int, alpha: int = -INF, beta: int = INF) -> int:
        """The value of ``move`` for the side playing it, searched ``depth`` plies after it."""
        return -self.score(pos.play(move), depth, -beta, -alpha)


def material_search(variant: Variant | str, budget: int | None = None) -> Search:
    """A ``Search``: the compiled twin (``CompiledSearch``, the same values several times faster)
    where it runs, else the Python one."""
    v = get_variant(variant)
    return CompiledSearch(v, budget) if compiled_available(v) else Search(v, budget)


# -- the compiled twin -------------------------------------------------------------------------------
#
# ``Search`` run by ``bot.ai.jit.material_value``.  ``Search`` stays the definition and the fallback
# (no numba, a variant the compiled generator does not play, ``DRAUGHTS_JIT=off``); the twin gives
# the same value for every call, counts the same nodes against the same budget, and keeps the same
# bounds in a table of its own (compiled, keyed by the position exactly as the Python one is).
# ``tests/puzzles/test_fastprove.py`` holds them equal.

_LOCAL = threading.local()
_compiled = False


def _compile_once() -> None:
    """On a machine without the compiled code (a fresh clone), the engine's one-time compile makes it,
    under its lock: ``puzzles check``'s worker processes would otherwise each compile it at once."""
    global _compiled
    if not _compiled:
        if jit.needs_compiling():
            jit.warm()
        _compiled = True


def _buffers() -> tuple[tuple, Any]:
    # One set per thread: a search's calls nest only through its own recursion, never another's.
    got = getattr(_LOCAL, "buffers", None)
    if got is None:
        got = _LOCAL.buffers = jit.material_buffers()
    return got


class CompiledSearch(Search):
    """``Search`` whose ``value`` is the compiled ``jit.material_value``."""

    def __init__(self, variant: Variant | str, budget: int | None = None) -> None:
        super().__init__(variant, budget)
        _compile_once()
        self.layout = jit.layout(self.variant)
        self.settings = jit.material_settings(self.variant, MAN, self.king, NO_MOVE, INF)
        # Not ``count``: that is the move counter the Python search (the fallback below) calls.
        self.bounds, self.bound_count = jit.material_table()
        # A buffer overflow (never met in a game's position) hands the search to Python for good.
        self.fallback = False

    def value(self, um: int, uk: int, tm: int, tk: int, white: bool, depth: int, alpha: int, beta: int) -> int:
        if self.fallback:
            return super().value(um, uk, tm, tk, white, depth, alpha, beta)
        bufs, st = _buffers()
        before = self.nodes
        st[:] = 0
        st[jit.S_NODES] = self.nodes
        st[jit.S_NODE_LIMIT] = self.budget if self.budget is not None else jit.NO_NODE_LIMIT
        lay = self.layout
        d = lay.dense
        score = jit.material_value(lay.g, lay.tabs, bufs, st, self.settings, self.bounds, self.bound_count, d(um),
                                   d(uk), d(tm), d(tk), white, depth, alpha, beta, 0)
        self.nodes = int(st[jit.S_NODES])
        if st[jit.S_ABORT]:
            if not st[jit.S_OVERFLOW]:
                raise BudgetExceeded
            # The call is searched again in Python; the bounds the compiled one stored on the way are
            # kept (true bounds all the same, though the Python search alone would not hold them yet).
            self._to_python()
            self.nodes = before
            return super().value(um, uk, tm, tk, white, depth, alpha, beta)
        return int(score)

    def _to_python(self) -> None:
        """Go on in Python with the bounds found so far (on full boards, as the Python table keys them)."""
        full = self.layout.full
        for (um, uk, tm, tk, white), bound in jit.material_bounds(self.bounds).items():
            self.table[(full(um), full(uk), full(tm), full(tk), white)] = bound
        self.fallback = True


def compiled_available(variant: Variant) -> bool:
    """Whether the compiled search runs ``variant`` here."""
    if not jit.available(variant):
        return False
    try:
        jit.layout(variant)
    except ValueError:
        return False
    return True


def centi_balance(pos: Position, color: str) -> int:
    """``balance`` in hundredths of a man."""
    return round(balance(pos, color) * 100)


def leaf_won(pos: Position, solver: str, base: int) -> bool:
    """Whether the line may end here (the opponent to move): the opponent has no move, or the
    solver is WIN ahead, has won at least MIN_WIN_GAIN on the start, and no capture is pending."""
    replies = pos.legal_moves()
    if not replies:
        return True
    known = table_result(pos)
    if known is not None:
        return known == egtb.LOSS
    lead = centi_balance(pos, solver)
    return lead >= WIN and lead - base >= MIN_WIN_GAIN and not replies[0].is_capture


def verify(puzzle: dict, extra_plies: int = EXTRA_PLIES, search: Search | None = None) -> list[str]:
    """Every way the puzzle falls short of the bank's standard (an empty list: it is proven).

    Checks the tree (every accepted move legal, one move at each solver turn of the main line,
    every legal defence answered, every leaf won), the main line (a path of the tree, the
    defender's most stubborn reply), the margin of the key over every other move at each solver
    turn (searched ``extra_plies`` beyond the line), and the tags against the line."""
    problems: list[str] = []
    try:
        start = Position.from_fen(puzzle["variant"], puzzle["fen"])
    except (ValueError, KeyError) as err:
        return [f"bad position: {err}"]
    solver = start.turn
    base = centi_balance(start, solver)
    if base >= WIN:
        problems.append("[start] the solver is already two men ahead")
    tree: Tree = puzzle.get("tree") or {}
    line: list[str] = list(puzzle.get("solution") or [])
    if not tree or not line or len(line) % 2 == 0:
        return problems + ["[line] no solution tree or no main line ending on a solver move"]

    def walk(pos: Position, node: Tree, path: list[str], on_line: bool) -> None:
        if not node:
            problems.append(f"[tree] after {' '.join(path) or 'the start'}: no solver move")
            return
        if on_line and len({same_capture(pos, m) for m in node}) != 1:
            turn = "first" if not path else "later"
            problems.append(f"[{turn}] after {' '.join(path) or 'the start'}: {len(node)} moves accepted "
                            f"({', '.join(sorted(node))})")
        for text, replies in node.items():
            try:
                move = pos.parse_move(text)
            except Exception as err:            # IllegalMove or malformed text
                problems.append(f"[tree] {text}: {err}")
                continue
            if str(move) != text:
                problems.append(f"[tree] {text}: not in full notation ({move})")
            after = pos.play(move)
            here = [*path, text]
            if not replies:
                if not leaf_won(after, solver, base):
                    where = "end" if on_line and here == line else "branch"
                    problems.append(f"[{where}] after {' '.join(here)}: the line ends without the win "
                                    f"(lead {centi_balance(after, solver) / 100:+.1f})")
                continue
            legal = {str(m) for m in after.legal_moves()}
            if set(replies) != legal:
                missing, extra = sorted(legal - set(replies)), sorted(set(replies) - legal)
                problems.append(f"[defence] after {' '.join(here)}: defences missing {missing} or illegal {extra}")
            for reply, sub in replies.items():
                if reply in legal:
                    nxt_line = on_line and line[len(path):len(here) + 1] == [text, reply]
                    walk(after.play(after.parse_move(reply)), sub, [*here, reply], nxt_line)

    walk(start, tree, [], True)
    if any(p.startswith("[tree]") for p in problems):
        return problems
    # The main line: a path of the tree to a leaf, the defender's most stubborn reply each time.
    node: Tree = tree
    for i, text in enumerate(line):
        if i % 2 == 0:
            if text not in node:
                return problems + [f"[line] main line move {text} is not in the tree"]
            replies = node[text]
            if i == len(line) - 1 and replies:
                return problems + ["[line] the main line stops before the end of the tree"]
            node_replies = replies
        else:
            if text not in node_replies:
                return problems + [f"[line] main line reply {text} is not in the tree"]
            stubborn = max(line_length(s) for s in node_replies.values())
            if line_length(node_replies[text]) != stubborn:
                problems.append(f"[line] {text} is not the most stubborn defence")
            node = node_replies[text]
    # The margin: the key against every other move, at every solver turn of the main line.
    search = search or material_search(start.variant)
    pos = start
    node = tree
    for i, text in enumerate(line):
        node = node if i % 2 == 0 else node[line[i - 1]][text]
        if i % 2 == 0:
            problems.extend(f"[{'first' if i == 0 else 'later'}] {p}"
                            for p in _margin(search, pos, text, len(line) - i - 1 + extra_plies, set(node)))
        pos = pos.play(pos.parse_move(text))
    expected = line_tags(puzzle["variant"], puzzle["fen"], line)
    tags = puzzle.get("tags", {})
    for name, value in expected.items():
        if tags.get(name) != value:
            problems.append(f"[tags] tag {name} is {tags.get(name)!r}, the line says {value!r}")
    return problems


def same_capture(pos: Position, move: Move | str) -> tuple:
    """What makes two moves one answer: a capture by the same piece of the same pieces is one,
    wherever the flying king lands; any other move is itself."""
    if isinstance(move, str):
        move = pos.parse_move(move)
    if move.captured:
        return move.path[0], tuple(sorted(move.captured))
    return move.path


def _margin(search: Search, pos: Position, key: str, depth: int,
            accepted: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """Why ``key`` is not the only winning move of ``pos`` (searched ``depth`` plies after each
    move), or nothing.  The ``accepted`` moves (the key's other landing squares) are not
    alternatives."""
    moves = pos.legal_moves()
    key_move = pos.parse_move(key)
    key_score = search.after(pos, key_move, depth)
    if key_score < WIN:
        return [f"{key}: does not win in a deeper search ({key_score / 100:+.1f})"]
    # An alternative is refuted when it does not win and falls MARGIN short of the key.
    bar = min(WIN, key_score - MARGIN + 1)
    out = []
    for move in moves:
        if move == key_move or str(move) in accepted:
            continue
        score = search.after(pos, move, depth, bar - 1, bar)
        if score >= bar:
            out.append(f"{move}: also wins, or comes within {MARGIN / 100:.1f} of {key} "
                       f"({score / 100:+.1f} vs {key_score / 100:+.1f})")
    return out


# The themes a puzzle's line can show, in the order they are listed to players: the phase
# (exactly one of the first three), then what the solver does, then the line's length.  Each is
# defined in ``line_tags``; their names in each language are the catalogs' ``puzzle.theme.<name>``.
THEMES = ("opening", "middlegame", "endgame", "sacrifice", "shot", "double_capture", "promotion",
          "king_capture", "quiet_move", "blockade", "breakthrough", "long_combination", "defence",
          "king_play", "short")


def phase(pos: Position) -> str:
    """The game's phase by the material on the board, measured against the variant's starting
    count S (24 pieces on 8x8, 40 on 10x10, so the sizes compare): the endgame has at most 5/12 of
    S (10 pieces on 8x8, 16 on 10x10); the opening keeps at least 3/4 of S (18 on 8x8, 30 on 10x10)
    and no king; anything between is the middlegame."""
    start = sum(Position.start(pos.variant).count("W")) * 2
    white, black = pos.count("W"), pos.count("B")
    pieces = sum(white) + sum(black)
    if 12 * pieces <= 5 * start:
        return "endgame"
    if 4 * pieces >= 3 * start and not white[1] and not black[1]:
        return "opening"
    return "middlegame"


def line_tags(variant: str, fen: str, line: list[str]) -> dict[str, Any]:
    """The tags the main line itself shows: counts, and the themes (``THEMES``) it shows.

    - **opening / middlegame / endgame**: the phase of the start position (``phase``); every
      puzzle has exactly one.
    - **sacrifice**: a solver move after which the defender's reply leaves the solver worse off
      than before it, and which the solver's next move does not simply win back (an equal
      exchange is no sacrifice); ``sacrifices`` counts them.
    - **shot**: a solver capture takes two or more pieces in one move (``longest_capture``).
    - **double_capture**: the solver captures on two or more of its moves of the line.
    - **promotion**: a solver man is crowned on a move of the line.
    - **king_capture**: a solver capture takes a king.
    - **quiet_move**: a solver move that neither captures nor forces a capture (the defender's
      reply to it is not a capture, or it is the last move and the defender can still move).
    - **blockade**: after the line the defender still has pieces but none can move (the
      zugzwang-like lock; a side left with no pieces is no lock).
    - **breakthrough**: a solver man is crowned after an earlier solver move of the line was a
      sacrifice (the material given opens the way to the king row).
    - **long_combination**: four or more solver moves.
    - **defence**: the solver starts behind in material (a man 1, a king ``king_value``).
    - **king_play**: a solver king moves in the line.
    - **short**: exactly two solver moves (the fewest a puzzle has)."""
    pos = Position.from_fen(variant, fen)
    solver = pos.turn
    balances = [centi_balance(pos, solver)]
    positions = [pos]
    moves: list[Move] = []
    for text in line:
        move = pos.parse_move(text)
        moves.append(move)
        pos = pos.play(move)
        positions.append(pos)
        balances.append(centi_balance(pos, solver))
    sacrifices = longest = captures = 0
    promotion = king_capture = quiet = king_play = breakthrough = False
    for i in range(0, len(line), 2):
        move = moves[i]
        before = positions[i]
        longest = max(longest, len(move.captured))
        captures += move.is_capture
        breakthrough = breakthrough or (move.promotes and sacrifices > 0)
        promotion = promotion or move.promotes
        king_capture = king_capture or any(before.piece_at(sq) in ("W", "B") for sq in move.captured)
        king_play = king_play or before.piece_at(move.path[0]) in ("W", "B")
        if i + 1 < len(line):
            reply = moves[i + 1]
            if not move.is_capture and not reply.is_capture:
                quiet = True
            after_reply = balances[i + 2]
            back = balances[i + 3] if i + 3 <= len(line) else after_reply
            if after_reply < balances[i] and back != balances[i]:
                sacrifices += 1
        elif not move.is_capture and positions[i + 1].legal_moves():
            quiet = True
    length = (len(line) + 1) // 2
    # A lock: the defender still has pieces but none can move (a side with nothing left lost by
    # capture, which every other golpe does too; a review found 58 of 69 "blockades" were that).
    end = positions[-1]
    blockade = not end.legal_moves() and sum(end.count(end.turn)) > 0
    shown = {
        phase(positions[0]): True,
        "sacrifice": sacrifices > 0,
        "shot": longest >= 2,
        "double_capture": captures >= 2,
        "promotion": promotion,
        "king_capture": king_capture,
        "quiet_move": quiet,
        "blockade": blockade,
        "breakthrough": breakthrough,
        "long_combination": length >= 4,
        "defence": balances[0] < 0,
        "king_play": king_play,
        "short": length == 2,
    }
    themes = [name for name in THEMES if shown.get(name)]
    return {"sacrifices": sacrifices, "longest_capture": longest, "promotion": promotion,
            "moves": length, "themes": themes}


def wins_materially(pos: Position, plies: int, budget: int = NODE_BUDGET) -> bool:
    """Whether the side to move reaches a lead of WIN within ``plies`` (captures played out): the
    quick test before a solution tree is searched (False when it needs more than ``budget``)."""
    search = material_search(pos.variant, budget * 10)
    try:
        for depth in range(1, plies + 1, 2):
            if search.score(pos, depth, WIN - 1, WIN) >= WIN:
                return True
    except BudgetExceeded:
        return False
    return False
