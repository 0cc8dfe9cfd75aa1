"""How bot/storage is laid out (issue 31, item 4 and item 2's storage knot): each query is written
once (sql.py) and a backend keeps only what its database does its own way; no module of the
package is in an import cycle, counting every import (module level, inside functions, under
TYPE_CHECKING)."""

from __future__ import annotations

import ast
from pathlib import Path

STORAGE = Path(__file__).resolve().parents[2] / "bot" / "storage"

# The contract's public methods a backend may define itself: its lifetime and unit of work, and
# what its database does its own way (docs/storage.md, "One query layer").
LIFETIME = {"transaction", "in_transaction", "close", "check_file", "verify", "dump", "lock_ratings"}
OWN = {
    "sqlite.py": LIFETIME,
    "postgres.py": LIFETIME | {"update_game", "reserve_sends", "claim_messages", "hold_messages",
                               "reset_sequences", "listen_games"},
}


def _module(path: Path) -> str:
    parts = path.relative_to(STORAGE.parent.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every bot.storage module a file imports, wherever the import stands."""
    package = _module(path) if path.name == "__init__.py" else _module(path).rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            found.add(target)
            # ``from . import x`` / ``from .pkg import module`` name modules too.
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return found


def _graph() -> dict[str, set[str]]:
    files = {_module(path): path for path in STORAGE.rglob("*.py")}
    return {name: {target for target in _imports(path) if target in files and target != name}
            for name, path in files.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return out


def test_no_storage_module_is_in_an_import_cycle() -> None:
    graph = _graph()
    assert "bot.storage.repositories" in graph and graph["bot.storage.base"]      # the walk found the package
    assert _cycles(graph) == []


def test_the_cycle_finder_sees_a_cycle_through_a_type_only_import() -> None:
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]


def _backend_methods(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name.endswith("Store")]
    assert len(classes) == 1
    return {item.name for item in classes[0].body
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and not item.name.startswith("_")}


def test_a_backend_defines_only_what_its_database_does_its_own_way() -> None:
    from bot.storage.contract import Contract

    contract = {name for name in dir(Contract) if not name.startswith("_")}
    for file, allowed in OWN.items():
        mine = _backend_methods(STORAGE / file) & contract
        assert mine <= allowed, f"{file} writes again what sql.py has: {sorted(mine - allowed)}"


def test_every_contract_query_is_written_once_in_the_query_layer() -> None:
    from bot.storage.contract import Contract
    from bot.storage.sql import SqlStore

    abstract = {name for name in getattr(SqlStore, "__abstractmethods__", ()) if not name.startswith("_")}
    queries = {name for name in dir(Contract) if not name.startswith("_")} - LIFETIME
    assert abstract <= LIFETIME
    assert all(name in SqlStore.__dict__ for name in queries), sorted(q for q in queries if q not in SqlStore.__dict__)


def test_the_dialect_turns_question_marks_into_the_drivers_marks() -> None:
    from bot.storage.sql import POSTGRESQL, SQLITE

    statement = "SELECT value FROM meta WHERE key=? AND value LIKE '5%' LIMIT ?"
    assert SQLITE.sql(statement) == statement
    assert POSTGRESQL.sql(statement) == "SELECT value FROM meta WHERE key=%s AND value LIKE '5%%' LIMIT %s"
    assert (SQLITE.meta_number(1.5), POSTGRESQL.meta_number(1.5)) == (1.5, "1.5")
