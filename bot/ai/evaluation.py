"""Static evaluation per variant: a weighted sum of features, plus endgame knowledge.

Features are counted White minus Black (see ``FEATURES``); the weights in
``weights.py`` are fitted per variant by ``bot/ai/tune.py`` on positions from
engine self-play.  The endgame rules below are not fitted: they say which
endings cannot be won, so the stronger side does not count on them and the
weaker side heads for them.
"""

from __future__ import annotations

from collections.abc import Callable

from bot.rules import Variant, get_variant

from .weights import weights_for

FEATURES = (
    "men",          # pieces on the board
    "kings",
    "advance",      # sum over men of the rows already advanced
    "back_rank",    # men still guarding their own first row (keeps the other side from crowning)
    "centre",       # men on the central squares
    "mobility",     # plain moves available (men forward steps, king moves)
    "tempo",        # men already in the opponent's half
    "runaway",      # men with no enemy piece between them and the crowning row
    "diagonal",     # kings on the long diagonal (the one that holds Spanish endings)
)

# Endgame scores: a won ending must still beat any material count so the winner keeps it.
DRAW = 0


class Geometry:
    """Masks the features need, built once per variant."""

    def __init__(self, v: Variant) -> None:
        self.v = v
        size, pitch = v.size, v.pitch
        bits = [v.sq_to_bit[n] for n in range(1, v.squares + 1)]
        self.rows = [0] * size
        for b in bits:
            self.rows[b // pitch] |= 1 << b
        # White men advance towards row 0: a man on row r has advanced size-1-r rows.
        self.white_adv = [(size - 1 - r, self.rows[r]) for r in range(size) if size - 1 - r > 0]
        self.black_adv = [(r, self.rows[r]) for r in range(size) if r > 0]
        self.white_back = self.rows[size - 1]
        self.black_back = self.rows[0]
        half = size // 2
        self.white_far_half = 0
        self.black_far_half = 0
        for r in range(half):
            self.white_far_half |= self.rows[r]
        for r in range(half, size):
            self.black_far_half |= self.rows[r]
        lo, hi = (2, 5) if size == 8 else (3, 6)
        self.centre = 0
        for b in bits:
            r, c = divmod(b, pitch)
            if lo <= c <= hi and half - 2 <= r <= half + 1:
                self.centre |= 1 << b
        self.diagonal = 0
        for b in bits:
            r, c = divmod(b, pitch)
            if r == c:
                self.diagonal |= 1 << b
        # cone[color][b]: squares from which an enemy piece could stop a man on b
        # before it crowns (the triangle in front of it, one column wider each row).
        self.white_cone: dict[int, int] = {}
        self.black_cone: dict[int, int] = {}
        for b in bits:
            r, c = divmod(b, pitch)
            wc = bc = 0
            for b2 in bits:
                r2, c2 = divmod(b2, pitch)
                if r2 < r and abs(c2 - c) <= r - r2 + 1:
                    wc |= 1 << b2
                if r2 > r and abs(c2 - c) <= r2 - r + 1:
                    bc |= 1 << b2
            self.white_cone[b] = wc
            self.black_cone[b] = bc
        # Only men this close to the crowning row are tested for a free run.
        near = 3
        self.white_near = 0
        self.black_near = 0
        for r in range(1, near + 1):
            self.white_near |= self.rows[r]
            self.black_near |= self.rows[size - 1 - r]


def _features_fn(v: Variant) -> Callable[[int, int, int, int], list[int]]:
    g = Geometry(v)
    valid = v.valid
    s1, s2 = v.pitch - 1, v.pitch + 1
    flying = v.flying_kings
    white_adv, black_adv = g.white_adv, g.black_adv
    white_back, black_back = g.white_back, g.black_back
    centre, diagonal = g.centre, g.diagonal
    wfar, bfar = g.white_far_half, g.black_far_half
    wcone, bcone = g.white_cone, g.black_cone
    wnear, bnear = g.white_near, g.black_near

    def king_moves(k: int, empty: int) -> int:
        n = 0
        if flying:
            for s in (s1, s2):
                f = k
                while f:
                    f = (f >> s) & empty
                    n += f.bit_count()
                f = k
                while f:
                    f = (f << s) & empty
                    n += f.bit_count()
        else:
            n = (((k >> s1) & empty).bit_count() + ((k >> s2) & empty).bit_count()
                 + ((k << s1) & empty).bit_count() + ((k << s2) & empty).bit_count())
        return n

    def runaways(men: int, enemies: int, cones: dict[int, int]) -> int:
        n = 0
        while men:
            low = men & -men
            men ^= low
            if not cones[low.bit_length() - 1] & enemies:
                n += 1
        return n

    def features(wm: int, wk: int, bm: int, bk: int) -> list[int]:
        empty = valid & ~(wm | wk | bm | bk)
        adv = 0
        for n, mask in white_adv:
            adv += n * (wm & mask).bit_count()
        for n, mask in black_adv:
            adv -= n * (bm & mask).bit_count()
        mob = (((wm >> s1) & empty).bit_count() + ((wm >> s2) & empty).bit_count()
               - ((bm << s1) & empty).bit_count() - ((bm << s2) & empty).bit_count())
        if wk:
            mob += king_moves(wk, empty)
        if bk:
            mob -= king_moves(bk, empty)
        run = 0
        if wm & wnear:
            run += runaways(wm & wnear, bm | bk, wcone)
        if bm & bnear:
            run -= runaways(bm & bnear, wm | wk, bcone)
        return [
            wm.bit_count() - bm.bit_count(),
            wk.bit_count() - bk.bit_count(),
            adv,
            (wm & white_back).bit_count() - (bm & black_back).bit_count(),
            (wm & centre).bit_count() - (bm & centre).bit_count(),
            mob,
            (wm & wfar).bit_count() - (bm & bfar).bit_count(),
            run,
            (wk & diagonal).bit_count() - (bk & diagonal).bit_count(),
        ]

    return features


def _endgame_fn(v: Variant) -> Callable[[int, int, int, int], int | None]:
    """Score (White's view) for endings whose result the features cannot see; None otherwise."""
    diagonal = Geometry(v).diagonal
    spanish = v.flying_kings

    def endgame(wm: int, wk: int, bm: int, bk: int) -> int | None:
        if wm or bm:
            return None
        nw, nb = wk.bit_count(), bk.bit_count()
        if spanish:
            # Flying kings: one king cannot be caught by two, and three catch it only
            # when it does not hold the long diagonal.
            if nb == 1 and (nw <= 2 or (nw == 3 and bk & diagonal)):
                return DRAW
            if nw == 1 and (nb <= 2 or (nb == 3 and wk & diagonal)):
                return DRAW
            return None
        if nw == 1 and nb == 1:
            return DRAW
        return None

    return endgame


class Evaluator:
    """``evaluate(um, uk, tm, tk, white)``: the score for the side to move, in hundredths of a man."""

    def __init__(self, variant: Variant | str, weights: dict[str, float] | None = None) -> None:
        v = get_variant(variant)
        self.variant = v
        w = dict(weights_for(v)) if weights is None else dict(weights)
        self.weights = [float(w.get(name, 0.0)) for name in FEATURES]
        self.features = _features_fn(v)
        self.endgame = _endgame_fn(v)
        ws = self.weights
        features = self.features
        endgame = self.endgame
        # Bonus for the side that is ahead in an ending it can win (three kings
        # against one off the diagonal): without it the search may let the lone
        # king reach the diagonal since the material count is the same.
        win_bonus = 300 if v.flying_kings else 0
        diagonal = Geometry(v).diagonal

        def evaluate(um: int, uk: int, tm: int, tk: int, white: bool) -> int:
            if white:
                wm, wk, bm, bk = um, uk, tm, tk
            else:
                wm, wk, bm, bk = tm, tk, um, uk
            if not (wm or bm):
                fixed = endgame(wm, wk, bm, bk)
                if fixed is not None:
                    return fixed
            f = features(wm, wk, bm, bk)
            score = 0.0
            for a, b in zip(ws, f, strict=True):
                score += a * b
            if win_bonus and not (wm or bm):
                nw, nb = wk.bit_count(), bk.bit_count()
                if nb == 1 and nw >= 3 and not bk & diagonal:
                    score += win_bonus
                elif nw == 1 and nb >= 3 and not wk & diagonal:
                    score -= win_bonus
            s = int(score)
            return s if white else -s

        self.evaluate = evaluate

    def features_of(self, wm: int, wk: int, bm: int, bk: int) -> list[int]:
        """The feature vector (White minus Black) of a board."""
        return self.features(wm, wk, bm, bk)


_EVALUATORS: dict[str, Evaluator] = {}


def evaluator(variant: Variant | str) -> Evaluator:
    """The evaluator with the tuned weights of a variant (built once)."""
    v = get_variant(variant)
    ev = _EVALUATORS.get(v.id)
    # By identity too: a variant registered for a while (a test's) may reuse an id.
    if ev is None or ev.variant is not v:
        ev = _EVALUATORS[v.id] = Evaluator(v)
    return ev
