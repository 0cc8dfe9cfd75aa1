"""A variant's rules are data: the test-only Brazilian and Russian variants (tests/extra_variants.py),
declared with flags no shipped variant uses, are played by all three move generators (the move list,
the fast generator, the compiled one) exactly as pydraughts, an independent program, plays them.

pydraughts draws the board mirrored (its dark corner is White's left) and numbers it from White's
side; the helpers here map its squares to ours through rows and columns.  No generator names a
variant: registering the two is all it took.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from extra_variants import BRAZILIAN, RUSSIAN, TEST_ONLY, require_pydraughts

from bot.ai import jit
from bot.rules import VARIANTS, Detail, IllegalMove, Position, movegen, perft
from bot.rules.variants import CapturePriority, Crowning, Variant, VariantWords, get_variant, register, registered

draughts = require_pydraughts()


# -- pydraughts, mapped ---------------------------------------------------------------------


def _their_square(v: Variant, ours: int) -> str:
    """Our square number as pydraughts' algebraic square (its board is ours mirrored left-right)."""
    row, col = v.square_to_rc(ours)
    return "abcdefgh"[v.size - 1 - col] + str(v.size - row)


def _our_square(v: Variant, theirs: int) -> int:
    """pydraughts' square number (1 = a1, along the ranks from White's side) as ours."""
    rank, k = divmod(theirs - 1, v.size // 2)
    col = 2 * k + rank % 2
    square = v.rc_to_square(v.size - 1 - rank, v.size - 1 - col)
    assert square is not None
    return square


def their_board(pos: Position) -> object:
    v = pos.variant
    sides = []
    for colour, men, kings in (("W", pos.wm, pos.wk), ("B", pos.bm, pos.bk)):
        items = [_their_square(v, sq) for sq in v.mask_to_squares(men)]
        items += ["K" + _their_square(v, sq) for sq in v.mask_to_squares(kings)]
        sides.append(colour + ",".join(items))
    return draughts.Board(variant=v.id, fen=":".join([pos.turn, *sides]))


def their_moves(pos: Position) -> set[tuple[int, int, frozenset[int]]]:
    """pydraughts' legal moves as (start, end, captured squares) in our numbering."""
    v = pos.variant
    out = set()
    for move in their_board(pos).legal_moves():
        steps = move.steps_move
        out.add((_our_square(v, steps[0]), _our_square(v, steps[-1]),
                 frozenset(_our_square(v, sq) for sq in move.captures)))
    return out


def their_perft(board: object, depth: int) -> int:
    moves = board.legal_moves()  # type: ignore[attr-defined]
    if depth == 1:
        return len(moves)
    total = 0
    for move in moves:
        board.push(move)  # type: ignore[attr-defined]
        total += their_perft(board, depth - 1)
        board.pop()  # type: ignore[attr-defined]
    return total


# -- our three generators -------------------------------------------------------------------


def list_moves(pos: Position) -> set[tuple[int, int, frozenset[int]]]:
    return {(m.start, m.end, frozenset(m.captured)) for m in pos.legal_moves()}


def fast_moves(pos: Position) -> set[tuple[int, int, frozenset[int]]]:
    v = pos.variant
    return {(v.bit_to_sq[key & 0xFF], v.bit_to_sq[key >> 8 & 0xFF], frozenset(v.mask_to_squares(key >> 16)))
            for key, *_child in movegen.fast(v).moves(*pos.sides(), pos.white)}


def compiled_moves(pos: Position) -> set[tuple[int, int, frozenset[int]]]:
    v = pos.variant
    lay = jit.layout(v)
    ctx = jit._context()
    ctx.begin([])
    d = lay.dense
    um, uk, tm, tk = pos.sides()
    n = jit.gen_moves(lay.g, lay.tabs, ctx.bufs, ctx.st, 0, d(um), d(uk), d(tm), d(tk), pos.white)
    out = set()
    for i in range(n):
        key = lay.key_to_full(int(ctx.bufs[0][0, i]), int(ctx.bufs[1][0, i]))
        out.add((v.bit_to_sq[key & 0xFF], v.bit_to_sq[key >> 8 & 0xFF], frozenset(v.mask_to_squares(key >> 16))))
    return out


def list_perft(pos: Position, depth: int) -> int:
    moves = pos.legal_moves()
    if depth == 1:
        return len(moves)
    return sum(list_perft(pos.play(m), depth - 1) for m in moves)


def compiled_perft(pos: Position, depth: int) -> int:
    lay = jit.layout(pos.variant)
    ctx = jit._context()
    d = lay.dense
    um, uk, tm, tk = pos.sides()
    st = np.zeros(jit.S_LEN, np.int64)
    return int(jit.perft(lay.g, lay.tabs, ctx.bufs, st, 0, d(um), d(uk), d(tm), d(tk), pos.white, depth))


# -- the registry ---------------------------------------------------------------------------


def test_the_bot_offers_only_its_own_variants_and_the_engine_knows_the_tests_ones():
    assert list(VARIANTS) == ["spanish", "italian", "triestina"]
    assert [v.id for v in registered()] == ["spanish", "italian", "triestina", "brazilian", "russian"]
    assert get_variant("Russian") is RUSSIAN and get_variant(BRAZILIAN) is BRAZILIAN
    # Nothing the chat reads names them.
    assert "russian" not in VariantWords() and "brazilian" not in VariantWords()
    # Positions of a registered variant pickle by id like the others.
    import pickle
    pos = Position.start(RUSSIAN)
    assert pickle.loads(pickle.dumps(pos)) == pos


def test_a_taken_id_is_refused_and_registering_again_is_harmless():
    register(RUSSIAN)
    clash = Variant(id="spanish", size=8, flying_kings=True, men_capture_kings=True,
                    priority=CapturePriority.FREE, no_progress_plies=50, numbering="italian",
                    pdn_gametype="25,W,8,8,A0,0", start_rows=3)
    with pytest.raises(ValueError, match="already taken"):
        register(clash)
    assert get_variant("spanish").priority is CapturePriority.QUANTITY_QUALITY


def test_the_rules_key_tells_the_new_flags_apart():
    keys = {v.rules_key for v in registered()}
    assert len(keys) == 4      # italian and triestina play alike
    assert BRAZILIAN.rules_key != RUSSIAN.rules_key


# -- against pydraughts ---------------------------------------------------------------------


@pytest.mark.parametrize("variant", [v.id for v in TEST_ONLY])
def test_perft_from_the_start_is_pydraughts_in_all_three_generators(variant):
    pos = Position.start(variant)
    board = draughts.Board(variant=variant)
    for depth in range(1, 5):
        want = their_perft(board, depth)
        assert list_perft(pos, depth) == want, depth
        assert perft(pos, depth) == want, depth
        assert compiled_perft(pos, depth) == want, depth


@pytest.mark.slow
@pytest.mark.parametrize("variant", [v.id for v in TEST_ONLY])
def test_perft_5_from_the_start_is_pydraughts(variant):
    pos = Position.start(variant)
    want = their_perft(draughts.Board(variant=variant), 5)
    assert perft(pos, 5) == compiled_perft(pos, 5) == want


@pytest.mark.parametrize("variant", [v.id for v in TEST_ONLY])
def test_every_position_of_random_games_has_pydraughts_moves_in_all_three_generators(variant):
    rng = random.Random(len(variant))
    checked = captures = crowned_mid_capture = backwards = 0
    for _game in range(12):
        pos = Position.start(variant)
        for _ply in range(120):
            want = their_moves(pos)
            assert list_moves(pos) == want, pos.fen()
            assert fast_moves(pos) == want, pos.fen()
            assert compiled_moves(pos) == want, pos.fen()
            checked += 1
            moves = pos.legal_moves()
            if not moves:
                break
            move = rng.choice(moves)
            captures += bool(move.captured)
            v = pos.variant
            rows = [v.square_to_rc(sq)[0] for sq in move.path]
            far = 0 if pos.white else v.size - 1
            crowned_mid_capture += far in rows[1:-1] and pos.piece_at(move.start) in ("w", "b")
            backwards += pos.piece_at(move.start) in ("w", "b") and (rows[1] > rows[0]) == pos.white
            pos = pos.play(move)
    # The games do reach the rules the flags describe.
    assert checked > 500 and captures > 100 and backwards > 5 and crowned_mid_capture >= 1


# -- the flags on worked cases (italian numbering: square 1 top-left, White moves up) ---------


def test_a_man_captures_backwards_where_the_variant_says_so():
    # White man on 14, black man on 18 behind it (down the board), 23 empty.
    for v, backwards in ((BRAZILIAN, True), (RUSSIAN, True), (get_variant("italian"), False)):
        pos = Position.from_fen(v, "W:W14:B18,1")
        assert any(m.captured == (18,) for m in pos.legal_moves()) is backwards, v.id


def test_majority_capture_is_compulsory_in_brazilian_and_any_capture_is_free_in_russian():
    # White men on 21 and 22; black men on 18, 10 and 19: 21x14x5, 21x14x23 (backwards) and
    # 22x13x6 take two, 22x15 one.
    fen = "W:W21,22:B18,10,19,1"
    moves = {v.id: sorted(str(m) for m in Position.from_fen(v, fen).legal_moves()) for v in TEST_ONLY}
    assert moves["brazilian"] == ["21x14x23", "21x14x5", "22x13x6"]
    assert moves["russian"] == ["21x14x23", "21x14x5", "22x13x6", "22x15"]


def test_a_man_crowned_mid_capture_goes_on_as_a_king_only_in_russian():
    # White man on 10 jumps 6 and lands on 3, the far row.  From 3 a king flies down over 7 to
    # take the man on 12 and land on 16; a man cannot (12 is not next to it).
    fen = "W:W10:B6,12,25"
    russian = Position.from_fen(RUSSIAN, fen).legal_moves()
    assert [(str(m), m.promotes) for m in russian] == [("10x3x16", True)]
    # Brazilian: the man passes the far row as a man, has nothing more to take, and is crowned
    # because its move ends there.
    brazilian = Position.from_fen(BRAZILIAN, fen).legal_moves()
    assert [(str(m), m.promotes) for m in brazilian] == [("10x3", True)]
    assert RUSSIAN.crowning is Crowning.CONTINUES_AS_KING and BRAZILIAN.crowning is Crowning.PASSES


def test_refusals_are_explained_by_the_flags():
    def refusal(v: Variant, fen: str, text: str) -> tuple[str, object, list[str]]:
        with pytest.raises(IllegalMove) as err:
            Position.from_fen(v, fen).parse_move(text)
        return err.value.code.value, err.value.detail, [str(m) for m in err.value.moves]

    fen = "W:W21,22:B18,10,19,1"
    assert refusal(BRAZILIAN, fen, "22x15") == ("law_of_quantity", None, ["21x14x5", "21x14x23", "22x13x6"])
    assert str(Position.from_fen(RUSSIAN, fen).parse_move("22x15")) == "22x15"
    # Men still step forwards only, whatever they capture.
    assert refusal(BRAZILIAN, "W:W14:B1", "14-18") == ("illegal_step", Detail.MAN_BACKWARD, [])
    # Crowned on 3, the Russian man must go on as a king; the Brazilian one cannot.
    assert refusal(RUSSIAN, "W:W10:B6,12,25", "10x3") == ("capture_not_finished", None, ["10x3x16"])
    assert refusal(BRAZILIAN, "W:W10:B6,12,25", "10x3x16")[0] == "illegal_capture"


def test_the_endgame_tables_key_names_the_new_flags_without_changing_the_shipped_ones():
    from bot.ai.egtb.store import rules_tag

    assert rules_tag(get_variant("spanish")) == ["spanish", 8, True, True, "quantity_quality"]
    assert rules_tag(get_variant("italian")) == ["italian", 8, False, False, "italian"]
    assert rules_tag(BRAZILIAN) == ["brazilian", 8, True, True, "majority", "men_capture_backwards",
                                    "crowning=passes"]
    assert rules_tag(RUSSIAN)[-1] == "crowning=continues_as_king"
