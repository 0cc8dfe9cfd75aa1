"""The fast generator as a public API (issue 7): same moves as ``legal_moves()``,
small pickles, and no runtime import between position and notation."""

import ast
import pickle
import random
from pathlib import Path

import pytest

from bot.rules import Position, get_variant, movegen, read_pdn
from bot.rules.variants import registered

# Every variant the engine knows, the tests' own included (tests/extra_variants.py).
ALL = [v.id for v in registered()]

ROOT = Path(__file__).resolve().parents[2]


def _playout_positions(variant: str, games: int, seed: int) -> list[Position]:
    rng = random.Random(seed)
    out = []
    for _ in range(games):
        pos = Position.start(variant)
        for _ply in range(150):
            moves = pos.legal_moves()
            if not moves:
                break
            out.append(pos)
            pos = pos.play(rng.choice(moves))
    return out


def _agree(pos: Position) -> None:
    fast = pos.fast_moves()
    legal = pos.legal_moves()
    assert len(fast) == len(legal), pos.fen()
    assert len({k for k, *_ in fast}) == len(fast), pos.fen()
    for key, um, uk, tm, tk in fast:
        move = pos.move_for_key(key)
        assert pos.key_for_move(move) == key
        child = Position.from_sides(pos.variant, um, uk, tm, tk, not pos.white)
        assert child == pos.play(move), (pos.fen(), str(move))
    gen = movegen.fast(pos.variant)
    caps = gen.captures(*pos.sides(), pos.white)
    assert gen.can_capture(*pos.sides(), pos.white) == bool(legal and legal[0].captured)
    assert sorted(caps) == (sorted(fast) if legal and legal[0].captured else [])


@pytest.mark.parametrize("variant", ALL)
def test_fast_moves_are_the_legal_moves_on_random_playouts(variant):
    positions = _playout_positions(variant, 6, seed=7)
    # Playouts must reach kings and captures, or this test proves little.
    assert any(p.wk or p.bk for p in positions)
    assert sum(bool(p.legal_moves()[0].captured) for p in positions) > 20
    for pos in positions:
        _agree(pos)


def test_fast_moves_on_the_championship_games():
    text = (ROOT / "tests/data/italian_championship_2005.pdn").read_text(encoding="utf-8")
    games = read_pdn(text)[:15]
    for game in games:
        for pos in game.positions:
            _agree(pos)


def test_position_and_variant_pickle_small_by_id():
    for variant in ALL:
        positions = _playout_positions(variant, 1, seed=3)
        pos = positions[len(positions) // 2]
        data = pickle.dumps(pos)
        assert len(data) < 200
        back = pickle.loads(data)
        assert back == pos and back.variant is get_variant(variant)
        assert back.legal_moves() == pos.legal_moves()
        assert len(pickle.dumps(get_variant(variant))) < 120


def test_notation_does_not_import_position_at_run_time():
    tree = ast.parse((ROOT / "bot/rules/notation.py").read_text(encoding="utf-8"))
    runtime = [n for n in tree.body if isinstance(n, ast.ImportFrom)]
    assert all(n.module not in ("position", "game", "pdn") for n in runtime)


def _rules_imports() -> dict[str, set[str]]:
    """Every import between modules of bot.rules, wherever it is written (module level, inside
    functions, under TYPE_CHECKING)."""
    package = ROOT / "bot/rules"
    modules = {p.stem for p in package.glob("*.py")}
    graph: dict[str, set[str]] = {}
    for name in modules:
        deps: set[str] = set()
        for node in ast.walk(ast.parse((package / f"{name}.py").read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level == 1 or base.startswith("bot.rules"):
                    base = base.removeprefix("bot.rules").lstrip(".") if node.level == 0 else base
                    if base:
                        deps.add(base.split(".")[0])
                    else:
                        deps.update(a.name for a in node.names if a.name in modules)
                        if any(a.name not in modules for a in node.names):
                            deps.add("__init__")
            elif isinstance(node, ast.Import):
                deps.update(a.name.split(".")[2] if a.name.count(".") >= 2 else "__init__"
                            for a in node.names if a.name.startswith("bot.rules"))
        graph[name] = deps & modules - {name}
    return graph


def test_no_module_of_the_rules_is_in_an_import_cycle():
    graph = _rules_imports()
    assert graph["notation"] >= {"movegen", "errors", "move", "variants"}   # the walk does see imports

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            for dep in graph[todo.pop()] - seen:
                if dep == goal:
                    return True
                seen.add(dep)
                todo.append(dep)
        return False

    assert [m for m in sorted(graph) if m != "__init__" and reaches(m, m)] == []
