"""Shared helpers for the spec tests (tests/rules/test_spec_*.py).

The helpers here are written from docs/rules.md only (no engine code):

* square numbering (docs/rules.md section 1): italian/triestina square 1 is the
  top-left corner, numbered left to right, top to bottom; spanish square 1 is
  White's lower-right corner, numbered right to left, bottom to top, so that
  spanish n == italian 33 - n.  Dark squares are (row + col) even, row 0 at
  the top (Black's side).
* ASCII diagrams: one text row per board row, one token per column:
      '.'  light square (never holds a piece)
      '-'  empty dark square
      'w'  white man   'W' white king   'b' black man   'B' black king
  Every worked-case test gives both a FEN and a diagram; the ``position``
  fixture checks that they describe the same board before asking the engine.

Slow tests (``@pytest.mark.slow``) are skipped unless RUN_SLOW=1.
"""

import os

import pytest
from extra_variants import register_all

# Before the test modules are collected: generator tests parametrise over every registered variant.
register_all()

SIZES = {"spanish": 8, "italian": 8, "triestina": 10}


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: long-running test, run only with RUN_SLOW=1")


def pytest_collection_modifyitems(config, items):
    if os.environ.get("RUN_SLOW") == "1":
        return
    here = os.path.dirname(os.path.abspath(__file__))
    skip = pytest.mark.skip(reason="slow test: set RUN_SLOW=1 to run")
    for item in items:
        if "slow" in item.keywords and str(item.path).startswith(here):
            item.add_marker(skip)


# --------------------------------------------------------------------------
# numbering, written from docs/rules.md section 1


def spec_square_to_rc(variant, n):
    size = SIZES[variant]
    per_row = size // 2
    if variant == "spanish":
        n = 33 - n
    row = (n - 1) // per_row
    col = 2 * ((n - 1) % per_row) + (row % 2)
    return row, col


def spec_rc_to_square(variant, row, col):
    size = SIZES[variant]
    if not (0 <= row < size and 0 <= col < size) or (row + col) % 2:
        return None
    n = row * (size // 2) + col // 2 + 1
    return 33 - n if variant == "spanish" else n


def spec_squares(variant):
    return range(1, SIZES[variant] ** 2 // 2 + 1)


# --------------------------------------------------------------------------
# independent FEN / diagram readers


def spec_parse_fen(fen):
    """(turn, {square: code}) from a PDN FEN; codes 'w','W','b','B'."""
    turn, *sections = fen.strip().split(":")
    pieces = {}
    for section in sections:
        color, body = section[0], section[1:]
        for token in filter(None, body.split(",")):
            king = token.startswith("K")
            token = token[1:] if king else token
            if "-" in token:
                lo, hi = map(int, token.split("-"))
                squares = range(lo, hi + 1)
            else:
                squares = [int(token)]
            for s in squares:
                assert s not in pieces, f"square {s} twice in {fen}"
                pieces[s] = color if king else color.lower()
    return turn, pieces


def spec_diagram(variant, diagram):
    """{square: code} from an ASCII diagram (see module docstring)."""
    size = SIZES[variant]
    rows = [line.split() for line in diagram.strip().splitlines() if line.strip()]
    assert len(rows) == size, f"diagram has {len(rows)} rows, expected {size}"
    pieces = {}
    for r, tokens in enumerate(rows):
        assert len(tokens) == size, f"diagram row {r} has {len(tokens)} cells: {tokens}"
        for c, tok in enumerate(tokens):
            square = spec_rc_to_square(variant, r, c)
            if square is None:
                assert tok == ".", f"light square ({r},{c}) must be '.', got {tok!r}"
                continue
            assert tok in "-wWbB" and len(tok) == 1, f"dark square ({r},{c}) = {tok!r}"
            if tok != "-":
                pieces[square] = tok
    return pieces


def spec_fen(turn, pieces):
    """Explicit sorted FEN as docs/rules.md section 2 prescribes."""
    parts = [turn]
    for color in "WB":
        squares = sorted(s for s, p in pieces.items() if p.upper() == color)
        parts.append(color + ",".join(("K" if pieces[s].isupper() else "") + str(s) for s in squares))
    return ":".join(parts)


@pytest.fixture
def position():
    """position(variant, fen, diagram) -> bot.rules.Position, after checking
    that the FEN and the diagram describe the same board."""
    from bot.rules import Position

    def make(variant, fen, diagram=None):
        if diagram is not None:
            _, from_fen = spec_parse_fen(fen)
            from_diagram = spec_diagram(variant, diagram)
            assert from_fen == from_diagram, f"test bug: FEN {fen} and diagram disagree: {from_fen} != {from_diagram}"
        return Position.from_fen(variant, fen)

    return make


def move_strings(pos):
    return sorted(str(m) for m in pos.legal_moves())


def move_signature(move):
    """(from, to, captured set): the identity of a move per docs/rules.md §3.12."""
    return (move.path[0], move.path[-1], frozenset(move.captured))


@pytest.fixture
def helpers():
    """Access to the pure helpers above from test modules."""
    import types

    return types.SimpleNamespace(
        spec_square_to_rc=spec_square_to_rc,
        spec_rc_to_square=spec_rc_to_square,
        spec_squares=spec_squares,
        spec_parse_fen=spec_parse_fen,
        spec_diagram=spec_diagram,
        spec_fen=spec_fen,
        move_strings=move_strings,
        move_signature=move_signature,
    )
