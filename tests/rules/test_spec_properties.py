"""Property tests (hypothesis): random legal games in each variant.

Checked on every ply:
* the mover's piece count is unchanged, the opponent's falls by exactly
  len(move.captured), and the captured squares held opponent pieces;
* move.captured has no duplicates and is sorted; the path starts on a piece
  of the side to move and the piece ends on path[-1];
* a move promotes exactly when a man ends on its far row (docs/rules.md §3.7);
* if any legal move is a capture, all are (docs/rules.md §3.3); no two legal moves
  have the same (from, to, captured set) (docs/rules.md §3.12);
* FEN round-trips: Position.from_fen(v, p.fen()) == p, with the same key;
* parse_move(str(m)) gives back m.
Also: a transposition (two quiet moves per side in swapped order) gives
equal positions with equal keys.
"""

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.rules import Position
from bot.rules.variants import Crowning, Variant, get_variant, registered

# Every variant the engine knows (tests/rules/conftest.py registers the test-only ones before
# collection): what the generator must do is read from each variant's flags and geometry below.
VARIANTS = [v.id for v in registered()]

# The shipped variants' board, written from docs/rules.md section 1 (not from the engine): the
# geometry the checks derive for every variant must give these back.
SPEC_SQUARES = {"italian": 32, "spanish": 32, "triestina": 50}
# Plies without a capture or a man's move that draw (docs/rules.md section 4).
SPEC_NO_PROGRESS = {"italian": 80, "spanish": 50, "triestina": 80}
SPEC_FAR_ROW = {
    ("spanish", "W"): set(range(29, 33)),
    ("spanish", "B"): set(range(1, 5)),
    ("italian", "W"): set(range(1, 5)),
    ("italian", "B"): set(range(29, 33)),
    ("triestina", "W"): set(range(1, 6)),
    ("triestina", "B"): set(range(46, 51)),
}


def far_row(v: Variant, color: str) -> set[int]:
    """The squares where a man of `color` is crowned: White's on row 0 (Black's side), Black's on
    the last row."""
    row = 0 if color == "W" else v.size - 1
    return {s for s in range(1, v.squares + 1) if v.square_to_rc(s)[0] == row}


@pytest.mark.parametrize("variant", sorted(SPEC_SQUARES))
def test_derived_geometry_is_the_spec_for_the_shipped_variants(variant):
    v = get_variant(variant)
    assert v.squares == SPEC_SQUARES[variant]
    assert v.no_progress_plies == SPEC_NO_PROGRESS[variant]
    for color in "WB":
        assert far_row(v, color) == SPEC_FAR_ROW[(variant, color)]


def test_every_registered_variant_is_checked():
    # The shipped three and the test-only ones (tests/extra_variants.py) with their own flags.
    assert set(SPEC_SQUARES) < set(VARIANTS)
    assert {get_variant(v).crowning for v in VARIANTS} == set(Crowning)


SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def count(pos, color):
    return sum(1 for p in pos.pieces().values() if p.upper() == color)


def other(color):
    return "B" if color == "W" else "W"


def check_position(pos):
    variant = pos.variant.id
    again = Position.from_fen(variant, pos.fen())
    assert again == pos
    assert again.key == pos.key
    assert hash(again.key) == hash(pos.key)
    assert again.fen() == pos.fen()

    legal = pos.legal_moves()
    if any(m.is_capture for m in legal):
        assert all(m.is_capture for m in legal), [str(m) for m in legal]
    signatures = [(m.path[0], m.path[-1], frozenset(m.captured)) for m in legal]
    assert len(signatures) == len(set(signatures)), [str(m) for m in legal]
    return legal


def check_move(pos, move):
    me, them = pos.turn, other(pos.turn)
    piece = pos.piece_at(move.path[0])
    assert piece is not None and piece.upper() == me
    assert len(move.captured) == len(set(move.captured))
    assert list(move.captured) == sorted(move.captured)
    assert move.is_capture == bool(move.captured)
    for s in move.captured:
        p = pos.piece_at(s)
        assert p is not None and p.upper() == them, (str(move), s, p)
    v = pos.variant
    if not v.men_capture_kings and piece.islower():
        # italian/triestina: a man never takes a king
        assert all(pos.piece_at(s).islower() for s in move.captured), str(move)
    far = far_row(v, me)
    if piece.islower():
        landings = move.path[1:]
        if v.crowning is Crowning.CONTINUES_AS_KING:
            # crowned where it first reaches the far row, mid-capture too, and goes on as a king
            crowned = any(s in far for s in landings)
        else:
            # STOPS and PASSES: crowned only where the move ends (docs/rules.md §3.7)
            crowned = move.path[-1] in far
            if v.crowning is Crowning.STOPS:
                # a man reaching the far row mid-capture stops there
                assert not any(s in far for s in landings[:-1]), str(move)
    else:
        crowned = False
    assert move.promotes == crowned, str(move)

    assert pos.parse_move(str(move)) == move

    after = pos.play(move)
    assert after.turn == them
    assert count(after, me) == count(pos, me)
    assert count(after, them) == count(pos, them) - len(move.captured)
    for s in move.captured:
        assert after.piece_at(s) is None
    expected = me if (piece.isupper() or move.promotes) else me.lower()
    assert after.piece_at(move.path[-1]) == expected
    if move.path[0] != move.path[-1]:
        assert after.piece_at(move.path[0]) is None
    return after


def random_game(variant, seed, length, start=None):
    """Play `length` random legal plies (or until no move is left)."""
    rnd = random.Random(seed)
    pos = start if start is not None else Position.start(variant)
    for _ in range(length):
        legal = check_position(pos)
        if not legal:
            break
        pos = check_move(pos, rnd.choice(legal))
    return pos


SEEDS = st.integers(min_value=0, max_value=2**32 - 1)


@pytest.mark.parametrize("variant", VARIANTS)
@SETTINGS
@given(seed=SEEDS, length=st.integers(min_value=1, max_value=150))
def test_random_games_from_start(variant, seed, length):
    random_game(variant, seed, length)


@st.composite
def random_positions(draw, variant):
    """Arbitrary legal-looking positions: men never on their own far row."""
    v = get_variant(variant)
    n = v.squares
    squares = draw(st.lists(st.integers(1, n), min_size=2, max_size=min(n, 24), unique=True))
    pieces = {}
    for i, s in enumerate(squares):
        color = "W" if i % 2 == 0 else "B"
        king = draw(st.booleans())
        if not king and s in far_row(v, color):
            king = True
        pieces[s] = color if king else color.lower()
    turn = draw(st.sampled_from("WB"))
    parts = [turn]
    for color in "WB":
        items = sorted(s for s, p in pieces.items() if p.upper() == color)
        parts.append(color + ",".join(("K" if pieces[s].isupper() else "") + str(s) for s in items))
    return Position.from_fen(variant, ":".join(parts)), ":".join(parts)


@pytest.mark.parametrize("variant", VARIANTS)
@SETTINGS
@given(data=st.data())
def test_random_games_from_random_positions(variant, data):
    pos, fen = data.draw(random_positions(variant))
    assert pos.fen() == fen
    random_game(variant, data.draw(SEEDS), data.draw(st.integers(1, 60)), start=pos)


# ---------------------------------------------------------------------------
# transpositions

TRANSPOSITIONS = {
    # (white a, black a, white b, black b): order 1 = wa ba wb bb, order 2 = wb bb wa ba.
    # Keyed by what decides the start position and its numbers (numbering, size, start rows).
    ("italian", 8, 3): ("21-17", "9-13", "24-20", "12-16"),
    ("spanish", 8, 3): ("12-16", "24-20", "9-13", "21-17"),
    ("italian", 10, 4): ("31-26", "16-21", "35-30", "20-25"),
}


@pytest.mark.parametrize("variant", VARIANTS)
def test_transposition_same_key(variant):
    v = get_variant(variant)
    wa, ba, wb, bb = TRANSPOSITIONS[(v.numbering, v.size, v.start_rows)]
    one = Position.start(variant)
    for text in (wa, ba, wb, bb):
        one = one.play(one.parse_move(text))
    two = Position.start(variant)
    for text in (wb, bb, wa, ba):
        two = two.play(two.parse_move(text))
    assert one == two
    assert one.key == two.key
    assert hash(one.key) == hash(two.key)
    assert one.fen() == two.fen()


@pytest.mark.parametrize("variant", VARIANTS)
@SETTINGS
@given(seed=SEEDS, length=st.integers(min_value=0, max_value=60))
def test_random_transposition_of_quiet_moves(variant, seed, length):
    """Play a random game, then look for two quiet moves of the side to move that
    commute around the same reply, and check both orders give the same key."""
    rnd = random.Random(seed)
    pos = Position.start(variant)
    for _ in range(length):
        legal = pos.legal_moves()
        if not legal:
            return
        pos = pos.play(rnd.choice(legal))
    me = pos.turn
    quiet = [m for m in pos.legal_moves() if not m.is_capture]
    for i, wa in enumerate(quiet):
        for wb in quiet[i + 1 :]:
            if {wa.path[0], wa.path[-1]} & {wb.path[0], wb.path[-1]}:
                continue
            a1 = pos.play(wa)
            b1 = pos.play(wb)
            for ba in a1.legal_moves():
                if ba.is_capture:
                    continue
                if ba not in b1.legal_moves():
                    continue
                x = a1.play(ba)
                y = b1.play(ba)
                # need wb legal after wa,ba and wa legal after wb,ba
                if wb not in x.legal_moves() or wa not in y.legal_moves():
                    continue
                x2 = x.play(wb)
                y2 = y.play(wa)
                assert x2.turn == y2.turn == other(me)
                assert x2 == y2
                assert x2.key == y2.key
                assert hash(x2.key) == hash(y2.key)
                return


# ---------------------------------------------------------------------------
# Game results against independent bookkeeping (docs/rules.md §3.11 and section 4 draws)


def expected_outcomes(game, mover, counts, quiet, limit):
    out = set()
    if not game.position.legal_moves():
        out.add(("no_moves", mover))
    if counts[game.position.fen()] >= 3:
        out.add(("repetition", None))
    if quiet >= limit:
        out.add(("no_progress", None))
    return out


def play_random_game(game, rnd, length):
    limit = game.position.variant.no_progress_plies
    counts = {game.position.fen(): 1}
    quiet = 0
    for _ in range(length):
        assert game.result is None
        legal = game.position.legal_moves()
        assert legal, "side to move has no move but the game has no result"
        move = rnd.choice(legal)
        mover = game.position.turn
        man = game.position.piece_at(move.path[0]).islower()
        game.play(move)
        quiet = 0 if (move.is_capture or man) else quiet + 1
        fen = game.position.fen()
        counts[fen] = counts.get(fen, 0) + 1
        outcomes = expected_outcomes(game, mover, counts, quiet, limit)
        if not outcomes:
            assert game.result is None, (game.result, quiet, counts[fen])
            continue
        result = game.result
        assert result is not None, outcomes
        assert (result.reason, result.winner) in outcomes, (result, outcomes)
        if result.reason == "no_moves":
            assert result.score == ("1-0" if mover == "W" else "0-1")
        else:
            assert result.score == "1/2-1/2"
        return


@pytest.mark.parametrize("variant", VARIANTS)
@SETTINGS
@given(seed=SEEDS, length=st.integers(min_value=1, max_value=300))
def test_random_game_results_from_start(variant, seed, length):
    from bot.rules import Game

    play_random_game(Game(variant), random.Random(seed), length)


@pytest.mark.parametrize("variant", VARIANTS)
@SETTINGS
@given(seed=SEEDS, data=st.data())
def test_random_game_results_kings_only(variant, seed, data):
    """Few kings each side: repetitions and no-progress draws come up often."""
    from bot.rules import Game

    n = get_variant(variant).squares
    squares = data.draw(st.lists(st.integers(1, n), min_size=2, max_size=5, unique=True))
    white = sorted(squares[::2])
    black = sorted(squares[1::2])
    fen = "W:W" + ",".join(f"K{s}" for s in white) + ":B" + ",".join(f"K{s}" for s in black)
    game = Game(variant, fen)
    if game.result is not None:
        return
    play_random_game(game, random.Random(seed), 200)
