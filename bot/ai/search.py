"""Iterative deepening principal-variation search on the fast move generator.

Negamax with a transposition table, hash move / killer / history ordering,
captures followed to a quiet position (a capture is compulsory, so there is no
standing pat while one is pending, and a position where the opponent threatens
to capture is searched one ply further), and single-reply extensions.  Draws by
repetition and by the variant's no-progress rule are scored as 0 inside the
tree.  The search raises ``Timeout`` inside the tree when the deadline passes;
the caller keeps the last finished iteration (and any root move already proved
better in the unfinished one).  A search may also be given a node budget instead: it then stops
at the same node on every machine, however busy (game analysis uses it).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from bot.rules import Variant, movegen

MATE = 100_000
MATE_BOUND = MATE - 1_000
INF = MATE + 1
EXACT, LOWER, UPPER = 0, 1, 2
TT_LIMIT = 1_500_000
EVAL_LIMIT = 500_000
# Nodes between two looks at the clock: a node can cost a millisecond in a
# Spanish position full of flying kings with long captures, so keep it small.
CLOCK_EVERY = 63
# Late move reductions: from this depth, quiet moves after the first LMR_AFTER go one ply shallower first.
LMR_DEPTH = 3
LMR_AFTER = 3

State = tuple[int, int, int, int, bool]
# No node budget: more nodes than any search visits.
NO_NODE_LIMIT = 1 << 62

# The engine's clock.  Every deadline is set from it and every search reads it, the compiled one
# too (bot/ai/jit.py calls ``now``), so a test that replaces it times all of them at once.
clock: Callable[[], float] = time.perf_counter


def now() -> float:
    """The engine's clock's time in seconds (``clock``, read when called so it can be replaced)."""
    return clock()


_FRAMES: dict[str, tuple[list[int], list[int]]] = {}


def _frames(v: Variant) -> tuple[list[int], list[int]]:
    """Tie-break ranks by ``from | to << 8`` (higher first) for White and for Black, mirror
    images: the piece nearest the far side first, then the destination nearest it, each in the
    mover's own frame (White plays towards bit 0; Black's frame is the board turned half round)."""
    got = _FRAMES.get(v.id)
    if got is None:
        top = (v.size - 1) * (v.pitch + 1)
        bits = [b for b in range(top + 1) if v.valid >> b & 1]
        white, black = [0] * (1 << 16), [0] * (1 << 16)
        for f in bits:
            for t in bits:
                white[f | t << 8] = 0xFFFF - (f << 8 | t)
                black[f | t << 8] = 0xFFFF - ((top - f) << 8 | (top - t))
        got = _FRAMES[v.id] = (white, black)
    return got


def frame_order(v: Variant, moves: list[tuple], white: bool) -> list[tuple]:
    """Moves in the tie-break order of the search (the root's first iteration uses it)."""
    frame = _frames(v)[0 if white else 1]
    return sorted(moves, key=lambda m: frame[m[0] & 0xFFFF], reverse=True)


class Timeout(Exception):
    """The deadline passed inside the tree."""


class Searcher:
    """One search: its table, ordering heuristics, counters and clock."""

    def __init__(
        self,
        variant: Variant,
        evaluate: Callable[[int, int, int, int, bool], int],
        deadline: float,
        history_keys: set[State] | None = None,
        quiet_plies: int = 0,
        probe: Callable[[int, int, int, int, bool], int] | None = None,
        probe_pieces: int = 0,
        node_limit: int = NO_NODE_LIMIT,
    ) -> None:
        self.v = variant
        gen = movegen.fast(variant)
        self.gen_moves = gen.moves
        self.can_capture = gen.can_capture
        self.count = gen.count
        self.evaluate = evaluate
        self.deadline = deadline
        self.no_progress = variant.no_progress_plies
        self.history_keys = history_keys or set()
        self.root_quiet = quiet_plies
        self.tt: dict[State, tuple[int, int, int, int]] = {}
        self.evals: dict[State, int] = {}
        self.history: dict[int, int] = {}
        self.killers: list[list[int]] = [[0, 0] for _ in range(256)]
        self.path: list[State] = []
        self.nodes = 0
        # A search past ``node_limit`` nodes stops as one past its deadline does (checked when the
        # clock is, so both searches stop at the same node).
        self.node_limit = node_limit
        self.max_ply = 0
        self.clock = now
        # Endgame tables (bot/ai/egtb): a position of at most probe_pieces pieces is known exactly.
        self.probe = probe
        self.probe_pieces = probe_pieces if probe is not None else 0
        self.tb_hits = 0
        self.white_frame, self.black_frame = _frames(variant)
        top = (variant.size - 1) * (variant.pitch + 1)

        def turn(mask: int) -> int:
            out = 0
            while mask:
                low = mask & -mask
                mask ^= low
                out |= 1 << (top - low.bit_length() + 1)
            return out

        self.turn = turn

    # -- the tree -----------------------------------------------------------------------

    def search(self, um: int, uk: int, tm: int, tk: int, white: bool, depth: int,
               alpha: int, beta: int, ply: int, quiet: int) -> int:
        self.nodes += 1
        if not self.nodes & CLOCK_EVERY and (self.nodes > self.node_limit or self.clock() > self.deadline):
            raise Timeout
        state = (um, uk, tm, tk, white)
        path = self.path
        if quiet >= 4:
            if quiet >= self.no_progress:
                return 0
            # Only king moves since the last capture or man move: a position can repeat.
            start = len(path) - quiet
            if state in path[max(start, 0):] or (start < 0 and state in self.history_keys):
                return 0
        if (um | uk | tm | tk).bit_count() <= self.probe_pieces:
            byte = self.probe(um, uk, tm, tk, white)  # type: ignore[misc]
            if byte >= 0:
                self.tb_hits += 1
                if not byte:
                    return 0
                # byte - 1 plies to the end of the game: odd, the side to move wins.
                end = ply + byte - 1
                return MATE - end if byte & 1 == 0 else end - MATE
        if depth <= 0 and not self.can_capture(um, uk, tm, tk, white):
            # A quiet leaf: no need to build the moves, only to know one exists.
            if not self.count(um, uk, tm, tk, white):
                return -MATE + ply
            # A pending capture by the opponent is not a quiet position: look one more
            # ply (bounded, so threats cannot extend the tree without end).
            if ply >= self.ext_limit or not self.can_capture(tm, tk, um, uk, not white):
                # Iterative deepening meets the same leaves again: their scores are kept.
                score = self.evals.get(state)
                if score is None:
                    if len(self.evals) > EVAL_LIMIT:
                        self.evals.clear()
                    score = self.evals[state] = self.evaluate(um, uk, tm, tk, white)
                return score
            depth = 1
        if ply > self.max_ply:
            self.max_ply = ply
        tt_move = 0
        entry = None
        if depth > 0:
            entry = self.tt.get(state)
            if entry is not None:
                e_depth, flag, e_score, tt_move = entry
                if e_depth >= depth and ply:
                    if e_score > MATE_BOUND:
                        e_score -= ply
                    elif e_score < -MATE_BOUND:
                        e_score += ply
                    if flag == EXACT:
                        return e_score
                    if flag == LOWER and e_score >= beta:
                        return e_score
                    if flag == UPPER and e_score <= alpha:
                        return e_score
        # Moves are made only past the table's cut-offs (an entry is only stored for a position
        # that has moves).
        moves = self.gen_moves(um, uk, tm, tk, white)
        if not moves:
            return -MATE + ply
        capture = moves[0][0] >> 16
        n = len(moves)
        if n > 1:
            # Ties go in the mover's own frame (most advanced piece first for either colour), so a
            # position and its colour mirror are searched alike (tests/ai/test_ai_colour.py).
            frame = self.white_frame if white else self.black_frame
            if capture:
                # Two captures may share their start and end: then the captured pieces decide,
                # also seen in the mover's frame.
                if white:
                    moves.sort(key=lambda m: ((m[0] == tt_move) << 16 | frame[m[0] & 0xFFFF], -(m[0] >> 16)),
                               reverse=True)
                else:
                    turn = self.turn
                    moves.sort(key=lambda m: ((m[0] == tt_move) << 16 | frame[m[0] & 0xFFFF],
                                              -turn(m[0] >> 16)), reverse=True)
            else:
                hist = self.history
                k1, k2 = self.killers[ply]

                def order(m: tuple) -> int:
                    k = m[0]
                    if k == tt_move:
                        return 1 << 60
                    if k == k1:
                        return 1 << 59
                    if k == k2:
                        return 1 << 58
                    return hist.get(k, 0) << 16 | frame[k & 0xFFFF]

                moves.sort(key=order, reverse=True)
        # A forced reply costs nothing to look through: keep the depth.
        child_depth = depth if n == 1 and ply < self.ext_limit else depth - 1
        nxt = not white
        best = -INF
        best_key = 0
        orig_alpha = alpha
        # Late quiet moves of a well-ordered list are searched a ply shallower first (and again at
        # full depth only if they turn out better): the depth goes to the moves that matter.
        reduce_from = LMR_AFTER if depth >= LMR_DEPTH and not capture and n > LMR_AFTER else n
        k1, k2 = self.killers[ply]
        path.append(state)
        try:
            first = True
            for i, (key, a, b, c, d) in enumerate(moves):
                child_quiet = 0 if key >> 16 or c != um else quiet + 1
                if first:
                    score = -self.search(a, b, c, d, nxt, child_depth, -beta, -alpha, ply + 1, child_quiet)
                    first = False
                else:
                    if i >= reduce_from and key != k1 and key != k2:
                        score = -self.search(a, b, c, d, nxt, child_depth - 1, -alpha - 1, -alpha, ply + 1,
                                             child_quiet)
                        if score <= alpha:
                            continue
                    score = -self.search(a, b, c, d, nxt, child_depth, -alpha - 1, -alpha, ply + 1, child_quiet)
                    if alpha < score < beta:
                        score = -self.search(a, b, c, d, nxt, child_depth, -beta, -score, ply + 1, child_quiet)
                if score > best:
                    best = score
                    best_key = key
                    if score > alpha:
                        alpha = score
                        if alpha >= beta:
                            if not key >> 16:
                                killers = self.killers[ply]
                                if killers[0] != key:
                                    killers[1] = killers[0]
                                    killers[0] = key
                                self.history[key] = self.history.get(key, 0) + depth * depth
                            break
        finally:
            path.pop()
        if depth > 0:
            if best >= beta:
                flag = LOWER
            elif best > orig_alpha:
                flag = EXACT
            else:
                flag = UPPER
            stored = best
            if stored > MATE_BOUND:
                stored += ply
            elif stored < -MATE_BOUND:
                stored -= ply
            if len(self.tt) > TT_LIMIT:
                self.tt.clear()
            self.tt[state] = (depth, flag, stored, best_key)
        return best

    # -- the root ------------------------------------------------------------------------

    def root(self, state: State, depth: int, root_moves: list[tuple], exact_all: bool) -> list[tuple[int, tuple]]:
        """Scores of the root moves at ``depth`` (best first).  With ``exact_all`` every
        move gets an exact score (for levels that choose among near-best moves);
        otherwise the others only get a bound below the best."""
        um, uk, tm, tk, white = state
        self.ext_limit = depth + 8
        scored: list[tuple[int, tuple]] = []
        alpha = -INF
        beta = INF
        self.path.append(state)
        try:
            for i, move in enumerate(root_moves):
                key, a, b, c, d = move
                child_quiet = 0 if key >> 16 or c != um else self.root_quiet + 1
                if exact_all or i == 0:
                    # Full window: alpha is still -INF for the first move, and stays so
                    # when every move needs its exact score.
                    score = -self.search(a, b, c, d, not white, depth - 1, -beta, INF, 1, child_quiet)
                else:
                    score = -self.search(a, b, c, d, not white, depth - 1, -alpha - 1, -alpha, 1, child_quiet)
                    if score > alpha:
                        score = -self.search(a, b, c, d, not white, depth - 1, -beta, -alpha, 1, child_quiet)
                scored.append((score, move))
                if score > alpha and not exact_all:
                    alpha = score
                # Publish progress so an interrupted iteration can still use a proved better move.
                self.partial = scored
        finally:
            self.path.pop()
        scored.sort(key=lambda sm: sm[0], reverse=True)
        if not exact_all and scored:
            self.remember(state, depth, scored[0][0], scored[0][1][0])
        return scored

    def remember(self, state: State, depth: int, score: int, key: int) -> None:
        """Store the root's exact score and best move in the table."""
        self.tt[state] = (depth, EXACT, score, key)

    def tt_move(self, state: State) -> int:
        """The table's best move key for ``state``; 0 when it has none."""
        entry = self.tt.get(state)
        return entry[3] if entry is not None else 0

    def _table_move(self, state: State) -> tuple | None:
        """The tables' best move in ``state`` (the quickest win, a draw, the longest loss), or
        None when the position is not in them."""
        um, uk, tm, tk, white = state
        if self.probe is None or (um | uk | tm | tk).bit_count() > self.probe_pieces:
            return None
        best: tuple | None = None
        best_score = -INF
        for move in self.gen_moves(*state):
            _key, a, b, c, d = move
            if not (a | b):
                return move
            byte = self.probe(a, b, c, d, not white)
            if byte < 0:
                return None
            # The child's byte is for the opponent: its loss in byte-1 plies is our win.
            score = 0 if not byte else (MATE - byte if byte & 1 else byte - MATE)
            if score > best_score:
                best, best_score = move, score
        return best

    def pv(self, state: State, first: int, limit: int) -> list[int]:
        """The principal variation's move keys, following the table from the root move."""
        keys = [first]
        seen = {state}
        moves = self.gen_moves(*state)
        child = next((m for m in moves if m[0] == first), None)
        white = state[4]
        while child is not None and len(keys) < limit:
            white = not white
            st = (child[1], child[2], child[3], child[4], white)
            if st in seen:
                break
            seen.add(st)
            known = self.tt_move(st)
            if known:
                nxt = next((m for m in self.gen_moves(*st) if m[0] == known), None)
            else:
                nxt = self._table_move(st)
            if nxt is None:
                break
            keys.append(nxt[0])
            child = nxt
        return keys
