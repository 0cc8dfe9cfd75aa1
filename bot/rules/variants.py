"""The variants as data, and the board geometry each one implies.

A variant is declared once, here: its rules, its board and the words that name it.  Everything
else (the chat's variant words, Discord's choices, PDN tags, the engine's weights, the lists of
variants in the catalogs) is derived from ``VARIANTS``.

Squares are stored as bit indices on a board padded with one ghost column
(pitch = size + 1).  A diagonal step is then a plain shift by ``pitch - 1``
or ``pitch + 1``; a step off the left or right edge lands on a ghost column
and a step off the top or bottom leaves the board, so masking with the set
of playable squares removes every wrap-around without per-edge masks.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum


class Color(StrEnum):
    """A side.  The values are the FEN letters, so a colour reads and stores as ``W``/``B``."""

    WHITE = "W"
    BLACK = "B"

    @property
    def other(self) -> Color:
        """The opponent's colour."""
        return Color.BLACK if self is Color.WHITE else Color.WHITE


class CapturePriority(StrEnum):
    """Which captures a variant makes compulsory among all available (docs/rules.md §4)."""

    QUANTITY_QUALITY = "quantity_quality"    # spanish: most pieces, then most kings
    ITALIAN = "italian"                      # most pieces, with a king, most kings, king earliest
    MAJORITY = "majority"                    # most pieces, kings and men alike (international)
    FREE = "free"                            # any complete capture (russian)


class Crowning(StrEnum):
    """What a man does on reaching the far row in the middle of a capture."""

    STOPS = "stops"                          # crowned there, the capture ends (docs/rules.md §3.7)
    PASSES = "passes"                        # stays a man and goes on; crowned only if the move ends there
    CONTINUES_AS_KING = "continues_as_king"  # crowned at once and goes on capturing as a king (russian)


WHITE = Color.WHITE
BLACK = Color.BLACK

# Direction order used by every table: up-left, up-right, down-left, down-right
# (up = towards row 0, Black's side, where White promotes).
UP_LEFT, UP_RIGHT, DOWN_LEFT, DOWN_RIGHT = range(4)
WHITE_FORWARD = (UP_LEFT, UP_RIGHT)
BLACK_FORWARD = (DOWN_LEFT, DOWN_RIGHT)


@dataclass(frozen=True, eq=False)
class Variant:
    """One variant's rules and geometry; compare variants by ``id``."""

    id: str
    size: int
    flying_kings: bool
    men_capture_kings: bool
    # "quantity_quality" (spanish) or "italian" (four criteria).
    priority: CapturePriority
    # Plies in a row with no capture and no man move that draw the game.
    no_progress_plies: int
    # "italian": square 1 top-left, left to right, top to bottom.
    # "spanish": square 1 White's lower-right corner, right to left, bottom to top.
    numbering: str
    pdn_gametype: str
    start_rows: int
    # The words that name it, by language code ("es", "it", "en"), as written there; the first of a
    # language is the one the bot shows (help lines, usage texts).  Typed words are compared
    # without case and accents.  A language without words shows the id, which always names it.
    words: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # Men capture backwards as well as forwards (they still step forwards only).
    men_capture_backwards: bool = False
    crowning: Crowning = Crowning.STOPS
    pitch: int = field(init=False)
    squares: int = field(init=False)
    sq_to_bit: tuple[int, ...] = field(init=False, repr=False)   # index 0 unused
    bit_to_sq: dict[int, int] = field(init=False, repr=False)
    valid: int = field(init=False, repr=False)
    white_promo: int = field(init=False, repr=False)
    black_promo: int = field(init=False, repr=False)
    # steps[d][b]: bit index one step from b in direction d, or -1.
    steps: tuple[tuple[int, ...], ...] = field(init=False, repr=False)
    # rays[b]: for each direction, the tuple of (index, mask) along it.
    rays: tuple[tuple[tuple[tuple[int, int], ...], ...], ...] = field(init=False, repr=False)
    # jumps[kind][b]: (mid mask, landing index, landing mask) for single jumps;
    # kind 0 = white man, 1 = black man (all four directions when men capture backwards),
    # 2 = short-range king.
    jumps: tuple[tuple[tuple[tuple[int, int, int], ...], ...], ...] = field(init=False, repr=False)
    start_white: int = field(init=False, repr=False)
    start_black: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
        size = self.size
        pitch = size + 1
        half = size // 2
        put = object.__setattr__
        put(self, "pitch", pitch)
        put(self, "squares", size * half)
        sq_to_bit = [0] * (size * half + 1)
        for row in range(size):
            for col in range(size):
                if (row + col) % 2 == 0:
                    n = row * half + col // 2 + 1
                    if self.numbering == "spanish":
                        n = size * half + 1 - n
                    sq_to_bit[n] = row * pitch + col
        put(self, "sq_to_bit", tuple(sq_to_bit))
        put(self, "bit_to_sq", {b: n for n, b in enumerate(sq_to_bit) if n})
        valid = 0
        for b in sq_to_bit[1:]:
            valid |= 1 << b
        put(self, "valid", valid)
        top = bottom = 0
        for col in range(size):
            if col % 2 == 0:
                top |= 1 << col
            if (size - 1 + col) % 2 == 0:
                bottom |= 1 << ((size - 1) * pitch + col)
        put(self, "white_promo", top)
        put(self, "black_promo", bottom)
        deltas = (-(pitch + 1), -(pitch - 1), pitch - 1, pitch + 1)
        nbits = size * pitch
        steps: list[tuple[int, ...]] = []
        for d in deltas:
            targets = [-1] * nbits
            for b in sq_to_bit[1:]:
                t = b + d
                if 0 <= t < nbits and valid >> t & 1:
                    targets[b] = t
            steps.append(tuple(targets))
        put(self, "steps", tuple(steps))
        rays: list[tuple[tuple[tuple[int, int], ...], ...]] = [()] * nbits
        for b in sq_to_bit[1:]:
            per_dir = []
            for d in range(4):
                ray: list[tuple[int, int]] = []
                t = steps[d][b]
                while t >= 0:
                    ray.append((t, 1 << t))
                    t = steps[d][t]
                per_dir.append(tuple(ray))
            rays[b] = tuple(per_dir)
        put(self, "rays", tuple(rays))
        jumps = []
        men_dirs = (range(4), range(4)) if self.men_capture_backwards else (WHITE_FORWARD, BLACK_FORWARD)
        for dirs in (*men_dirs, range(4)):
            table: list[tuple[tuple[int, int, int], ...]] = [()] * nbits
            for b in sq_to_bit[1:]:
                options: list[tuple[int, int, int]] = []
                for d in dirs:
                    mid = steps[d][b]
                    if mid >= 0 and steps[d][mid] >= 0:
                        land = steps[d][mid]
                        options.append((1 << mid, land, 1 << land))
                table[b] = tuple(options)
            jumps.append(tuple(table))
        put(self, "jumps", tuple(jumps))
        white = black = 0
        for b in sq_to_bit[1:]:
            row = b // pitch
            if row < self.start_rows:
                black |= 1 << b
            elif row >= size - self.start_rows:
                white |= 1 << b
        put(self, "start_white", white)
        put(self, "start_black", black)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Variant) and other.id == self.id

    def __hash__(self) -> int:
        return hash(self.id)

    def __reduce__(self) -> tuple:
        # By id: the tables are derived data, and a pickle must stay small (process pools).
        return (get_variant, (self.id,))

    def square_to_rc(self, square: int) -> tuple[int, int]:
        """Row and column of a square number (row 0 at the top, seen from White)."""
        if not 1 <= square <= self.squares:
            raise ValueError(f"no square {square} on a {self.size}x{self.size} board")
        return divmod(self.sq_to_bit[square], self.pitch)

    def rc_to_square(self, row: int, col: int) -> int | None:
        """Square number at a row and column, or None for a light or off-board square."""
        if not (0 <= row < self.size and 0 <= col < self.size):
            return None
        return self.bit_to_sq.get(row * self.pitch + col)

    def word(self, lang: str) -> str:
        """The word the bot shows for this variant in a language ('española'; else its id)."""
        return next(iter(self.words.get(lang, ())), self.id)

    @property
    def rules_key(self) -> tuple[bool, bool, CapturePriority, int, bool, Crowning]:
        """What decides the play apart from the board: variants with equal keys play alike."""
        return (self.flying_kings, self.men_capture_kings, self.priority, self.no_progress_plies,
                self.men_capture_backwards, self.crowning)

    def mask_to_squares(self, mask: int) -> list[int]:
        """Sorted square numbers of the set bits of a bitboard."""
        out = []
        while mask:
            low = mask & -mask
            out.append(self.bit_to_sq[low.bit_length() - 1])
            mask ^= low
        out.sort()
        return out


SPANISH = Variant(
    id="spanish", size=8, flying_kings=True, men_capture_kings=True,
    priority=CapturePriority.QUANTITY_QUALITY, no_progress_plies=50, numbering="spanish",
    pdn_gametype="24,W,8,8,N1,1", start_rows=3,
    words={"en": ("spanish",), "es": ("española", "españolas", "español", "es"), "it": ("spagnola", "spagnole")},
)
ITALIAN = Variant(
    id="italian", size=8, flying_kings=False, men_capture_kings=False,
    priority=CapturePriority.ITALIAN, no_progress_plies=80, numbering="italian",
    pdn_gametype="22,W,8,8,N2,1", start_rows=3,
    words={"en": ("italian",), "es": ("italiana", "italianas"), "it": ("italiana", "italiane", "it")},
)
TRIESTINA = Variant(
    id="triestina", size=10, flying_kings=False, men_capture_kings=False,
    priority=CapturePriority.ITALIAN, no_progress_plies=80, numbering="italian",
    pdn_gametype="22,W,10,10,N2,1", start_rows=4,
    words={"en": ("triestina", "trieste"), "es": ("triestina", "triestinas"), "it": ("triestina", "triestine")},
)

# The variants the bot offers.
VARIANTS: dict[str, Variant] = {v.id: v for v in (SPANISH, ITALIAN, TRIESTINA)}
# Variants the rules engine plays without the bot offering them (registered by ``register``:
# the tests' own variants, which prove the generators follow the flags alone).
_REGISTERED: dict[str, Variant] = {}


def register(variant: Variant) -> Variant:
    """Make ``get_variant`` (and so positions and every generator) know a variant the bot does not
    offer; registering the same one again is harmless.  ValueError if its id is taken.

    The registry is per process: a variant is known only in the process that registered it.
    Positions pickle by variant id, so one unpickled in another interpreter (the engine pool's
    workers start by forkserver/spawn) raises ValueError ("unknown variant") there: those workers
    know only the shipped variants unless the variant is also registered in the pool's
    initializer."""
    known = VARIANTS.get(variant.id) or _REGISTERED.get(variant.id)
    if known is not None and known is not variant:
        raise ValueError(f"variant id {variant.id!r} is already taken")
    _REGISTERED[variant.id] = variant
    return variant


def registered() -> tuple[Variant, ...]:
    """Every variant the engine knows: the offered ones, then those given to ``register``."""
    return (*VARIANTS.values(), *(v for v in _REGISTERED.values() if v.id not in VARIANTS))


def get_variant(variant: str | Variant) -> Variant:
    """The Variant for an id (or the Variant itself); ValueError for an unknown id."""
    if isinstance(variant, Variant):
        return variant
    key = str(variant).strip().lower()
    found = VARIANTS.get(key) or _REGISTERED.get(key)
    if found is None:
        raise ValueError(f"unknown variant {variant!r}; one of {', '.join(VARIANTS)}")
    return found


def fold_word(word: str) -> str:
    """Lower case without accents: 'Españolas' and 'espanolas' are the same word."""
    return "".join(ch for ch in unicodedata.normalize("NFD", word.lower()) if not unicodedata.combining(ch))


class VariantWords(Mapping[str, str]):
    """Every word that names a variant, folded (see ``fold_word``) -> the variant's id.

    Read from ``VARIANTS`` at each use (rebuilt when the table changes), so a variant added to the
    table is named by its words without any other change."""

    def __init__(self) -> None:
        self._made_from: tuple[int, ...] = ()
        self._table: dict[str, str] = {}

    def _words(self) -> dict[str, str]:
        made_from = tuple(id(v) for v in VARIANTS.values())
        if made_from != self._made_from:
            table: dict[str, str] = {}
            for v in VARIANTS.values():
                for word in (v.id, *(w for words in v.words.values() for w in words)):
                    table.setdefault(fold_word(word), v.id)
            self._table, self._made_from = table, made_from
        return self._table

    def __getitem__(self, word: str) -> str:
        return self._words()[word]

    def __iter__(self) -> Iterator[str]:
        return iter(self._words())

    def __len__(self) -> int:
        return len(self._words())

    def __contains__(self, word: object) -> bool:
        return word in self._words()
