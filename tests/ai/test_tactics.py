"""The search finds forced wins: shots (a sacrifice, then a capture the opponent
cannot refuse) found in random playouts, each proved here by an independent
material search over the public rules API."""

import pytest
from ai_helpers import material, prove

from bot.ai import search_position
from bot.rules import Position

# (variant, FEN, plies the prover needs, the shot's key move).  In each, the side to
# move wins at least two men (or the game) by force, and no other first move wins any.
SHOTS = [
    ("italian", "W:W17,18,21,22,25,27,30,31:B3,5,6,7,8,9,10,11,13,24,K32", 5, "30-26"),
    ("italian", "B:W18,23,24,26,27,28,29,30,32:B1,3,4,6,8,9,10,12,15,17", 5, "17-21"),
    ("italian", "W:WK2,13,17,25,28,32:B15,19", 5, "28-23"),
    ("italian", "B:W18,19,24,25,26,27,28,30,31:B1,3,4,6,7,8,9,10,21", 5, "6-11"),
    ("spanish", "W:W3,4,5,9,10,11,16,26:B8,18,19,23,25,28,29,31", 5, "3-7"),
    ("spanish", "W:W4,5,7,9,10,11,16:B8,18,19,22,23,25,28,31", 5, "16-20"),
    ("spanish", "W:W1,4,9,12,16,20,K24:BK3,25,26", 5, "20-23"),
    ("spanish", "B:W5,7,17,K30:B14,21,K24,26,28,29", 5, "21-18"),
    ("triestina", "B:W11,31,32,34,35,36,39,41,42,44,45,46,47,48,50:B1,2,3,4,5,7,10,12,14,15,17,20,21,25",
     5, "25-29"),
]


def king_value(variant: str) -> int:
    return 300 if variant == "spanish" else 200


@pytest.mark.parametrize(("variant", "fen", "plies", "key"), SHOTS)
def test_the_shot_is_real(variant, fen, plies, key):
    """The data, checked without the engine: the key move wins two men, nothing else wins."""
    pos = Position.from_fen(variant, fen)
    kv = king_value(variant)
    base = material(pos, kv)
    gains = {}
    for move in pos.legal_moves():
        gains[str(move)] = -prove(pos.play(move), plies - 1, kv) - base
    assert not pos.legal_moves()[0].captured
    assert gains[key] >= 200
    assert all(g <= 0 for m, g in gains.items() if m != key)
    # And a one-ply look does not find it: it starts with a quiet move that loses material.
    assert -material(pos.play(pos.parse_move(key)), kv) - base <= 0 or gains[key] > 10_000


@pytest.mark.parametrize(("variant", "fen", "plies", "key"), SHOTS)
def test_search_finds_the_shot(variant, fen, plies, key):
    pos = Position.from_fen(variant, fen)
    result = search_position(pos, max_depth=8, seconds=1.5)
    assert str(result.move) == key
    assert result.pv[0] == result.move
