"""Reading our own source for the layer checks of the service tests (what a module imports)."""

from __future__ import annotations

import ast
from pathlib import Path


def imports_of(tree: ast.AST) -> set[str]:
    """Every module a parsed module imports, and each ``module.name`` it takes from one (so
    ``from bot.service.chat import boards`` counts as ``bot.service.chat.boards`` too)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def imported_modules(path: Path) -> set[str]:
    """``imports_of`` a source file."""
    return imports_of(ast.parse(path.read_text(encoding="utf-8")))
