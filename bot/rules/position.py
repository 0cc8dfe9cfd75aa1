"""Positions and moves: FEN, legal moves, playing a move."""

from __future__ import annotations

import re

from . import movegen, notation
from .errors import IllegalMove
from .move import Move, format_move
from .variants import BLACK, WHITE, Color, Variant, get_variant

__all__ = ["Move", "Position", "format_move"]


_FEN_SIDE = re.compile(r"^\s*([WB])\s*$", re.I)
_FEN_ITEM = re.compile(r"(\d+)(?:\s*-\s*(\d+))?")


class Position:
    """An immutable position of one variant: pieces and side to move."""

    __slots__ = ("variant", "wm", "wk", "bm", "bk", "white", "_legal", "_by_key")

    def __init__(self, variant: Variant | str, wm: int, wk: int, bm: int, bk: int, white: bool) -> None:
        self.variant = get_variant(variant)
        self.wm, self.wk, self.bm, self.bk = wm, wk, bm, bk
        self.white = white
        self._legal: dict[Move, tuple[int, int, int, bool]] | None = None
        self._by_key: dict[int, Move] | None = None

    def __reduce__(self) -> tuple:
        # Pickle the variant by id: its geometry tables are rebuilt once per process,
        # so a position sent to a process pool is a few ints.
        return (_unpickle, (self.variant.id, self.wm, self.wk, self.bm, self.bk, self.white))

    # -- construction -------------------------------------------------------

    @classmethod
    def start(cls, variant: Variant | str) -> Position:
        """The variant's start position, White to move."""
        v = get_variant(variant)
        return cls(v, v.start_white, 0, v.start_black, 0, True)

    @classmethod
    def from_sides(cls, variant: Variant | str, um: int, uk: int, tm: int, tk: int, white: bool) -> Position:
        """The position from bitboards seen by the side to move (the inverse of ``sides()``)."""
        if white:
            return cls(variant, um, uk, tm, tk, True)
        return cls(variant, tm, tk, um, uk, False)

    @classmethod
    def from_fen(cls, variant: Variant | str, fen: str) -> Position:
        """Read a PDN-style FEN such as ``W:W21-32:B1,2,K3``; ValueError if it is not valid."""
        v = get_variant(variant)
        text = str(fen).strip().strip('"').rstrip(".")
        parts = [p for p in text.split(":")]
        if len(parts) < 2 or not _FEN_SIDE.match(parts[0]):
            raise ValueError(f"not a FEN: {fen!r} (expected like W:W21,22:B1,2)")
        white_to_move = parts[0].strip().upper() == WHITE
        boards = {WHITE: [0, 0], BLACK: [0, 0]}
        seen_colors: set[Color] = set()
        occupied = 0
        for part in parts[1:]:
            part = part.strip()
            if not part:
                continue
            letter = part[0].upper()
            if letter not in boards or letter in seen_colors:
                raise ValueError(f"bad FEN section {part!r}: expected W... or B..., once each")
            color = Color(letter)
            seen_colors.add(color)
            for item in part[1:].split(","):
                item = item.strip()
                if not item:
                    continue
                king = item[0] in "Kk"
                body = item[1:] if king else item
                if body.isascii() and body.isdigit():
                    # The common case, without the pattern: games and puzzles are stored as FEN,
                    # and reading them is most of what a position costs to build.
                    lo = hi = int(body)
                else:
                    m = _FEN_ITEM.fullmatch(body)
                    if not m:
                        raise ValueError(f"bad square {item!r} in FEN")
                    lo = int(m.group(1))
                    hi = int(m.group(2) or lo)
                if lo > hi or lo < 1 or hi > v.squares:
                    raise ValueError(f"square {item!r} is not on the {v.id} board (1-{v.squares})")
                for sq in range(lo, hi + 1):
                    bit = 1 << v.sq_to_bit[sq]
                    if occupied & bit:
                        raise ValueError(f"square {sq} appears twice in FEN")
                    occupied |= bit
                    boards[color][1 if king else 0] |= bit
        wm, wk = boards[WHITE]
        bm, bk = boards[BLACK]
        if wm & v.white_promo or bm & v.black_promo:
            raise ValueError("a man stands on its own promotion row; it would be a king")
        return cls(v, wm, wk, bm, bk, white_to_move)

    def fen(self) -> str:
        """FEN with explicit, sorted square lists, kings marked K."""
        v = self.variant

        def side(color: str, men: int, kings: int) -> str:
            items = [(sq, "") for sq in v.mask_to_squares(men)]
            items += [(sq, "K") for sq in v.mask_to_squares(kings)]
            items.sort()
            return color + ",".join(f"{k}{sq}" for sq, k in items)

        return ":".join((self.turn, side(WHITE, self.wm, self.wk), side(BLACK, self.bm, self.bk)))

    # -- queries --------------------------------------------------------------

    @property
    def turn(self) -> Color:
        """The side to move (``Color.WHITE`` reads as ``W``)."""
        return WHITE if self.white else BLACK

    @property
    def key(self) -> tuple[bool, int, int, int, int]:
        """Exact identity of the pieces and the side to move (for repetition and tables)."""
        return (self.white, self.wm, self.wk, self.bm, self.bk)

    def sides(self) -> tuple[int, int, int, int]:
        """Bitboards (our men, our kings, their men, their kings) for the side to move."""
        if self.white:
            return self.wm, self.wk, self.bm, self.bk
        return self.bm, self.bk, self.wm, self.wk

    def piece_at(self, square: int) -> str | None:
        """``w``/``W`` white man/king, ``b``/``B`` black man/king, or None."""
        v = self.variant
        if not 1 <= square <= v.squares:
            return None
        bit = 1 << v.sq_to_bit[square]
        for code, board in (("w", self.wm), ("W", self.wk), ("b", self.bm), ("B", self.bk)):
            if board & bit:
                return code
        return None

    def pieces(self) -> dict[int, str]:
        """Every piece by square number."""
        v = self.variant
        out: dict[int, str] = {}
        for code, board in (("w", self.wm), ("W", self.wk), ("b", self.bm), ("B", self.bk)):
            for sq in v.mask_to_squares(board):
                out[sq] = code
        return out

    def count(self, color: str) -> tuple[int, int]:
        """(men, kings) of a color."""
        if color == WHITE:
            return self.wm.bit_count(), self.wk.bit_count()
        return self.bm.bit_count(), self.bk.bit_count()

    # -- moves ------------------------------------------------------------------

    def _legal_table(self) -> dict[Move, tuple[int, int, int, bool]]:
        if self._legal is None:
            v = self.variant
            um, uk, tm, tk = self.sides()
            sq = v.bit_to_sq
            table: dict[Move, tuple[int, int, int, bool]] = {}
            raws = movegen.legal_captures(v, um, uk, tm, tk, self.white)
            if raws:
                for path, capmask, _kj, by_king, promotes in raws:
                    move = Move(tuple(sq[b] for b in path), tuple(v.mask_to_squares(capmask)), promotes)
                    table[move] = (path[0], path[-1], capmask, by_king or promotes)
            else:
                promo = v.white_promo if self.white else v.black_promo
                for frm, to in movegen.quiet_moves(v, um, uk, tm, tk, self.white):
                    is_king = bool(uk >> frm & 1)
                    promotes = not is_king and bool(promo >> to & 1)
                    table[Move((sq[frm], sq[to]), (), promotes)] = (frm, to, 0, is_king or promotes)
            self._legal = dict(sorted(table.items(), key=lambda item: item[0].path))
        return self._legal

    def fast_moves(self) -> list[movegen.KeyedChild]:
        """The legal moves without building ``Move`` objects: ``(key, um, uk, tm, tk)`` each,
        the bitboards after the move seen by the opponent (see ``movegen.fast``).

        For search: ``Position.from_sides(v, um, uk, tm, tk, not pos.white)`` rebuilds a
        child, ``move_for_key`` names a move, ``movegen.fast(v).moves`` skips the object."""
        return movegen.fast(self.variant).moves(*self.sides(), self.white)

    def move_for_key(self, key: int) -> Move:
        """The legal ``Move`` a fast-generator key stands for; KeyError if none."""
        if self._by_key is None:
            self._by_key = {
                frm | to << 8 | capmask << 16: move
                for move, (frm, to, capmask, _king) in self._legal_table().items()
            }
        return self._by_key[key]

    def key_for_move(self, move: Move) -> int:
        """The fast-generator key of a legal move; KeyError if it is not legal."""
        frm, to, capmask, _king = self._legal_table()[move]
        return frm | to << 8 | capmask << 16

    def legal_moves(self) -> list[Move]:
        """Every legal move, captures merged and filtered by the variant's priority."""
        return list(self._legal_table())

    def is_legal(self, move: Move) -> bool:
        """Whether the move is one of ``legal_moves()``."""
        return move in self._legal_table()

    def play(self, move: Move) -> Position:
        """The position after a legal move; IllegalMove if it is not one."""
        entry = self._legal_table().get(move)
        if entry is None:
            if len(move.path) > 2:
                # Another route of a merged capture (docs/rules.md §3.12) is the same move.
                try:
                    same = notation.match_squares(self, list(move.path), True)
                except IllegalMove:
                    same = None
                if same is not None and same.captured == move.captured:
                    return self.play(same)
            raise notation.explain(self, list(move.path), capture_hint=bool(move.captured))
        frm, to, capmask, king_after = entry
        return self._after(frm, to, capmask, king_after)

    def _after(self, frm: int, to: int, capmask: int, king_after: bool) -> Position:
        um, uk, tm, tk = self.sides()
        fbit = 1 << frm
        tbit = 1 << to
        if uk & fbit:
            uk ^= fbit
        else:
            um ^= fbit
        if king_after:
            uk |= tbit
        else:
            um |= tbit
        tm &= ~capmask
        tk &= ~capmask
        if self.white:
            return Position(self.variant, um, uk, tm, tk, False)
        return Position(self.variant, tm, tk, um, uk, True)

    def parse_move(self, text: str) -> Move:
        """The legal move the text names, or IllegalMove saying why there is none."""
        return notation.parse_move(self, text)

    # -- identity -----------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Position)
            and other.variant == self.variant
            and other.key == self.key
        )

    def __hash__(self) -> int:
        return hash((self.variant.id, self.key))

    def __repr__(self) -> str:
        return f"Position({self.variant.id!r}, {self.fen()!r})"


def _unpickle(variant: str, wm: int, wk: int, bm: int, bk: int, white: bool) -> Position:
    return Position(variant, wm, wk, bm, bk, white)
