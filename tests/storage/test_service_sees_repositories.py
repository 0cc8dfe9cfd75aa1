"""The service reaches storage only through its repositories (issue 31 item 4).

The flat ``Contract`` methods are the backends' interface (and the contract suite's); the service,
the entry points and the adapters call ``store.games.get(...)``, ``store.outbox.claim(...)``, ...
What stays on the store is not a query: the unit of work and the store's lifetime."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from bot.storage import SQLiteStore
from bot.storage.contract import Contract
from bot.storage.repositories import REPOSITORIES

REPO = Path(__file__).resolve().parents[2]
CALLERS = [*sorted((REPO / "bot" / "service").rglob("*.py")), *sorted((REPO / "bot" / "platforms").rglob("*.py")),
           REPO / "bot" / "app.py"]
# Not queries: the unit of work, the store's lifetime and its checks, PostgreSQL's change feed.
NOT_QUERIES = {"transaction", "in_transaction", "close", "check_file", "verify", "listen_games"}
RECEIVERS = {"storage", "store"}


def flat_methods() -> set[str]:
    return {name for name, member in inspect.getmembers(Contract, inspect.isfunction)
            if not name.startswith("_")} - NOT_QUERIES - set(REPOSITORIES)


def _receiver(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def flat_uses(source: str) -> list[tuple[int, str]]:
    """Lines where something named ``storage`` or ``store`` is asked a flat query."""
    flat = flat_methods()
    return sorted((node.lineno, node.attr) for node in ast.walk(ast.parse(source))
                  if isinstance(node, ast.Attribute) and node.attr in flat and _receiver(node.value) in RECEIVERS)


def test_the_service_calls_no_flat_store_method() -> None:
    found = [f"{path.relative_to(REPO)}:{line}: .{name}" for path in CALLERS
             for line, name in flat_uses(path.read_text())]
    assert found == [], "use the repository (store.<aggregate>.<verb>) instead:\n" + "\n".join(found)


def test_the_check_sees_a_flat_call_however_it_is_reached() -> None:
    assert flat_uses("self.storage.game(1)\nstore.hold_sends\nx.runtime.storage.due_games(2)\n") == [
        (1, "game"), (2, "hold_sends"), (3, "due_games")]
    assert flat_uses("self.storage.games.get(1)\nwith store.transaction():\n    pass\n") == []


def test_every_repository_is_reachable_from_the_store(tmp_path: Path) -> None:
    store = SQLiteStore(str(tmp_path / "bot.db"))
    try:
        for name, repository in REPOSITORIES.items():
            assert isinstance(getattr(store, name), repository), name
    finally:
        store.close()
