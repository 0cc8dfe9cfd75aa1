"""Layers point inward: platforms -> service -> rules (issue 18).

Every import of our own packages in ``bot/`` and ``renderers/`` is read from the source with
``ast`` (imports inside functions and under ``TYPE_CHECKING`` included: a type-only import is a
dependency as well) and checked against ``LAYERS``.  A module may always import its own layer.
The same imports must form no cycle (issue 31): no module imports, through any chain, one that
imports it back.

To tighten a rule, shrink a layer's ``may_import`` or grow its ``must_not_import``, or delete an
entry of ``KNOWN_EXCEPTIONS`` once the import it names is gone (the test says when one is stale).
A new import that breaks a rule is fixed in the code, not added here, unless the rule itself is
wrong.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
OURS = ("bot", "renderers")

# Entry points and the composition root: only an entry point imports them (they build everything).
ROOTS = ("bot.app", "bot.cli", "bot.operator_cli", "bot.__main__")


@dataclass(frozen=True)
class Layer:
    """Modules matching ``modules`` may import, of ours, only their own layer and what matches
    ``may_import`` (None: anything), and never what matches ``must_not_import``.

    A pattern ``a.b.*`` is the module ``a.b`` and everything under it; ``a.b`` is that module alone."""

    name: str
    modules: tuple[str, ...]
    may_import: tuple[str, ...] | None = None
    must_not_import: tuple[str, ...] = ()
    # A layer that may not exist yet (a package another change introduces).
    optional: bool = False


LAYERS: tuple[Layer, ...] = (
    # The rules engine and the renderers stand alone (a renderer takes a position and returns
    # bytes; today no renderer imports even bot.rules: a board comes as a plain BoardView).
    Layer("rules engine", ("bot.rules.*",), may_import=()),
    Layer("renderers", ("renderers.*",), may_import=()),
    # The environment's settings, read in one module (issue 31) that imports nothing of ours, so the
    # engine may ask it for its per-process settings and still stand on the rules alone.
    Layer("configuration", ("bot.config",), may_import=()),
    Layer("engine", ("bot.ai.*",), may_import=("bot.rules.*", "bot.config")),
    # What runs in the engine's worker processes: the engine and nothing of the service (a worker
    # imports what its jobs' module imports).
    Layer("engine workers", ("bot.engine_workers", "bot.engine_preload"), may_import=("bot.rules.*", "bot.ai.*")),
    Layer("puzzles", ("bot.puzzles.*",), may_import=("bot.rules.*", "bot.ai.*")),
    Layer("ratings maths", ("bot.ratings.*",), may_import=()),
    # Tournaments' pure core (issue 32): pairings, standings, TRF; the service stores and runs them.
    Layer("tournaments", ("bot.tournaments.*",), may_import=()),
    Layer("language codes", ("bot.languages",), may_import=()),
    Layer("catalogs", ("bot.i18n.*",), may_import=("bot.languages",)),
    Layer("redaction", ("bot.redact",), may_import=()),
    # The command line's argument types, below every entry point that adds commands.
    Layer("argument types", ("bot.arguments",), may_import=()),
    # Use cases know no chat platform and render nothing (they return results a presenter turns
    # into replies).
    Layer("use cases", ("bot.service.features.*", "bot.service.usecases.*"),
          must_not_import=("bot.platforms.*", "renderers.*", *ROOTS,
                           # nor words or draws anything, nor knows a command's words, a button or a
                           # deep link: the chat layer's package (commands, registry and button codecs,
                           # link signing, presenters, boards, wording) translates and presents
                           "bot.i18n.*", "bot.service.chat.*",
                           # nor knows a chat message or a web page (issue 31): the chat layer and the
                           # board layer translate them into identities and requests
                           "bot.service.events", "bot.service.web", "bot.service.service")),
    # The web board's layer stands beside the chat layer and calls the use cases directly: it is
    # given the ones it calls (not the composition of them all), and of the chat layer it reads
    # only words (presenters, wording), never commands, buttons, a chat's context or its links.
    Layer("board layer", ("bot.service.web",),
          must_not_import=("bot.service.compose", "bot.service.service", "bot.service.chat", "bot.service.chat.layer",
                           "bot.service.chat.context", "bot.service.chat.links", "bot.service.chat.signing",
                           "bot.service.chat.commands", "bot.service.chat.registry")),
    # The composition builds the use cases and nothing above them (issue 31): the chat layer imports
    # it, so the facade hands it what it needs of the chat layer (the boards' renderer).
    Layer("composition", ("bot.service.compose",),
          must_not_import=("bot.service.chat.*", "bot.service.web", "bot.service.service", "bot.platforms.*", *ROOTS)),
    Layer("service", ("bot.service.*",), must_not_import=("bot.platforms.*", *ROOTS)),
    # Storage sits below the service: it knows records, not use cases, chats or images.
    Layer("storage", ("bot.storage.*",), must_not_import=("bot.service.*", "bot.platforms.*", "renderers.*", *ROOTS)),
    # Adapters reach the service only through its public face: the bot.service package
    # (GameService, ChatEvent, Reply, ...), its event types, the command registry (names and
    # arguments for the platforms' menus), the outbox's notifications, and the board layer's
    # typed state and answers (bot.service.web: to the web board what events are to a chat).
    Layer("platforms", ("bot.platforms.*",),
          may_import=("bot.config", "bot.i18n", "bot.service", "bot.service.events", "bot.service.chat.registry",
                      "bot.service.outbox", "bot.service.web")),
)

# Imports that break a rule today, each with why it is still there.  Remove an entry when its
# import goes; test_known_exceptions_still_occur fails on an entry that no longer applies.
KNOWN_EXCEPTIONS: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    path: Path
    line: int
    # Not written but run: the package ``import a.b.c`` loads first (see ``imports_of``).  It
    # counts for knots, not for the layers' rules, which judge what the code names.
    implicit: bool = False


def matches(module: str, pattern: str) -> bool:
    if pattern.endswith(".*"):
        package = pattern[:-2]
        return module == package or module.startswith(package + ".")
    return module == pattern


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def source_files(root: Path, packages: Iterable[str] = OURS) -> dict[str, Path]:
    """Every module of our packages by its dotted name."""
    return {module_name(path, root): path
            for package in packages for path in sorted((root / package).rglob("*.py"))}


def imports_of(root: Path, packages: Iterable[str] = OURS) -> list[Import]:
    """Every import of one of our modules, resolved to the module imported: ``from a import b``
    is ``a.b`` when that is a module of ours, else ``a``; relative imports are made absolute.

    Importing ``a.b.c`` (``import a.b.c``, ``from a.b.c import x``, ``from a.b import c``) first
    runs the ``__init__`` of ``a`` and of ``a.b``, so an importer outside package ``a.b`` also
    imports ``a.b`` (an implicit import), and one outside ``a`` imports ``a``: a package whose
    ``__init__`` imports back the module asking for one of its submodules is a knot, even when
    today's import order happens to hide it.  An importer inside the package gets no such edge:
    it is only ever loaded while that package's ``__init__`` is already running or done."""
    packages = tuple(packages)
    modules = source_files(root, packages)
    found: list[Import] = []
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - (node.level - 1)]
                    source = ".".join([*base, node.module] if node.module else base)
                else:
                    source = node.module or ""
                targets = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
                           for alias in node.names]
            for target in targets:
                if target.split(".")[0] not in packages:
                    continue
                found.append(Import(name, target, path, node.lineno))
                parts = target.split(".")
                for depth in range(1, len(parts)):
                    parent = ".".join(parts[:depth])
                    if parent in modules and name != parent and not name.startswith(parent + "."):
                        found.append(Import(name, parent, path, node.lineno, implicit=True))
    return found


def broken_rules(found: Iterable[Import], layers: Iterable[Layer] = LAYERS) -> list[tuple[Import, Layer]]:
    """Each import that breaks a layer's rule, with that layer (an import can break several)."""
    out = []
    for imp in found:
        if imp.implicit:
            continue
        for layer in layers:
            if not any(matches(imp.importer, p) for p in layer.modules):
                continue
            if any(matches(imp.imported, p) for p in layer.modules):
                continue                                    # its own layer
            allowed = layer.may_import is None or any(matches(imp.imported, p) for p in layer.may_import)
            if not allowed or any(matches(imp.imported, p) for p in layer.must_not_import):
                out.append((imp, layer))
    return out


@functools.cache
def repo_imports() -> tuple[Import, ...]:
    return tuple(imports_of(REPO))


def import_cycles(found: Iterable[Import]) -> list[frozenset[str]]:
    """The knots of the import graph: each strongly connected component of more than one module,
    and each module that imports itself (Tarjan's algorithm, iterative: no recursion limit)."""
    graph: dict[str, set[str]] = {}
    for imp in found:
        graph.setdefault(imp.importer, set()).add(imp.imported)
        graph.setdefault(imp.imported, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    knots: list[frozenset[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph[node]:
                    knots.append(frozenset(component))
    return knots


def describe_knot(knot: frozenset[str], found: Iterable[Import]) -> str:
    """A knot's modules and the imports between them, each where it is written."""
    inside = sorted({(imp.importer, imp.imported, str(imp.path.relative_to(REPO)), imp.line, imp.implicit)
                     for imp in found if imp.importer in knot and imp.imported in knot})
    lines = [f"{len(knot)} modules: {', '.join(sorted(knot))}"]
    lines += [f"    {path}:{line}: {importer} imports {imported}" + (" (its __init__ runs first)" if implicit else "")
              for importer, imported, path, line, implicit in inside]
    return "\n".join(lines)


def describe(imp: Import, layer: Layer) -> str:
    return (f"{imp.path.relative_to(REPO)}:{imp.line}: {imp.importer} imports {imp.imported}, "
            f"which the '{layer.name}' layer may not import")


def test_layer_rules_hold() -> None:
    broken = [(imp, layer) for imp, layer in broken_rules(repo_imports())
              if (imp.importer, imp.imported) not in KNOWN_EXCEPTIONS]
    assert not broken, "imports across the layers:\n" + "\n".join(describe(*b) for b in broken)


def test_known_exceptions_still_occur() -> None:
    """An exception whose import is gone is deleted, so the rule holds from then on."""
    breaking = {(imp.importer, imp.imported) for imp, _ in broken_rules(repo_imports())}
    stale = sorted(set(KNOWN_EXCEPTIONS) - breaking)
    assert not stale, f"no longer imported (or no longer against a rule): remove from KNOWN_EXCEPTIONS: {stale}"


def test_no_import_cycles() -> None:
    """No module of ours imports, through any chain, a module that imports it back (issue 31,
    item 2): every import counts, also inside a function or under TYPE_CHECKING, so a knot cannot
    hide behind a deferred or type-only import.  A knot is undone by moving what both sides need
    into a module below them, or by handing one side what it needs (a protocol, an object)."""
    found = repo_imports()
    knots = import_cycles(found)
    assert not knots, (f"{sum(map(len, knots))} modules in {len(knots)} import cycles:\n"
                       + "\n".join(describe_knot(knot, found) for knot in knots))


def reached(found: Iterable[Import], start: str) -> dict[str, str]:
    """Every module ``start`` imports through any chain, each with the module that imports it."""
    graph: dict[str, set[str]] = {}
    for imp in found:
        graph.setdefault(imp.importer, set()).add(imp.imported)
    via: dict[str, str] = {}
    stack = [start]
    while stack:
        node = stack.pop()
        for target in sorted(graph.get(node, ())):
            if target not in via and target != start:
                via[target] = node
                stack.append(target)
    return via


def test_no_use_case_reaches_the_chat_layer_through_any_chain() -> None:
    """Not even through a module below the use cases (issue 31): the outbox they write to is handed
    the chat layer's renderer instead of importing it, so a use case loads nothing of the chat."""
    found = repo_imports()
    chains = []
    for module in sorted({imp.importer for imp in found if matches(imp.importer, "bot.service.features.*")}):
        via = reached(found, module)
        for target in sorted(t for t in via if matches(t, "bot.service.chat.*")):
            chain = [target]
            while chain[-1] != module:
                chain.append(via[chain[-1]])
            chains.append(" <- ".join(chain))
    assert not chains, "use cases that load the chat layer:\n" + "\n".join(chains)


def test_every_layer_covers_modules() -> None:
    """A renamed package must not leave its rule checking nothing."""
    modules = source_files(REPO)
    empty = [layer.name for layer in LAYERS if not layer.optional
             and not any(matches(m, p) for m in modules for p in layer.modules)]
    assert not empty, f"layers that match no module: {empty}"


def test_imports_are_found() -> None:
    """The scan sees the imports it must judge (guards against a scan that finds nothing)."""
    found = {(imp.importer, imp.imported) for imp in repo_imports()}
    assert ("bot.rules.game", "bot.rules.position") in found          # relative: from .position import
    assert ("bot.platforms.base", "bot.platforms.web") in found       # under TYPE_CHECKING only
    assert ("bot.ai.search", "bot.rules") in found                    # absolute
    assert ("bot.platforms.discord.render", "bot.platforms.base") in found   # from bot.platforms import base
    assert ("bot.cli", "bot.app") in found                            # inside a function
    implicit = {(imp.importer, imp.imported) for imp in repo_imports() if imp.implicit}
    assert ("bot.service.web", "bot.service.chat") in implicit        # the package of a presenter it reads


def _tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@pytest.mark.parametrize(("source", "imported"), [
    ("from bot.platforms import base\n", "bot.platforms.base"),
    ("import bot.service.service\n", "bot.service.service"),
    ("from ..service import GameService\n", "bot.service"),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from renderers.board import BoardView\n",
     "renderers.board"),
    ("def later():\n    from bot.storage import sqlite\n", "bot.storage.sqlite"),
])
def test_an_import_out_of_the_rules_engine_is_caught(tmp_path: Path, source: str, imported: str) -> None:
    """Each way of writing an import is seen and judged (a tree of our packages in miniature)."""
    _tree(tmp_path, {
        "bot/__init__.py": "", "bot/rules/__init__.py": "", "bot/rules/game.py": source,
        "bot/platforms/__init__.py": "", "bot/platforms/base.py": "",
        "bot/service/__init__.py": "", "bot/service/service.py": "",
        "bot/storage/__init__.py": "", "bot/storage/sqlite.py": "",
        "renderers/__init__.py": "", "renderers/board.py": "",
    })
    broken = broken_rules(imports_of(tmp_path))
    assert [(imp.importer, imp.imported, layer.name) for imp, layer in broken] == [
        ("bot.rules.game", imported, "rules engine")]


def test_a_cycle_is_found_whatever_holds_it(tmp_path: Path) -> None:
    """A knot held by a type-only and a deferred import is still a knot, a module importing itself
    is one too, and a chain that only points one way is none."""
    _tree(tmp_path, {
        "bot/__init__.py": "", "bot/service/__init__.py": "",
        "bot/service/service.py": "from bot.service.compose import UseCases\n",
        "bot/service/compose.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                  "    from bot.service.chat import ChatLayer\n",
        "bot/service/chat.py": "def later():\n    from bot.service import service\n",
        "bot/service/web.py": "from bot.service.chat import ChatLayer\nfrom bot.service.web import Seat\n",
        "bot/rules/__init__.py": "from .game import Game\n", "bot/rules/game.py": "",
    })
    assert sorted(sorted(knot) for knot in import_cycles(imports_of(tmp_path))) == [
        ["bot.service.chat", "bot.service.compose", "bot.service.service"], ["bot.service.web"]]


def test_a_package_init_that_imports_back_is_a_knot(tmp_path: Path) -> None:
    """``from a.b.c import x`` runs ``a.b``'s ``__init__`` first: when that ``__init__`` imports the
    importer back it is a knot, whatever import order hides it today.  A module inside the package
    gets no such edge (its package is already loading or loaded), and a light ``__init__`` (here
    ``bot.storage``'s) ties nothing."""
    _tree(tmp_path, {
        "bot/__init__.py": "", "bot/service/__init__.py": "",
        "bot/service/compose.py": "from bot.service.chat.boards import RENDERER\n",
        "bot/service/chat/__init__.py": "from bot.service.compose import UseCases\n",
        "bot/service/chat/boards.py": "from bot.service.chat import helpers\n",
        "bot/service/chat/helpers.py": "from bot.service.compose import UseCases\n",
        "bot/storage/__init__.py": '"""A light package."""\n', "bot/storage/base.py": "",
        "bot/service/features/__init__.py": "", "bot/service/features/play.py": "from bot.storage.base import Store\n",
        "bot/platforms/__init__.py": "", "bot/platforms/chat.py": "from bot.service.chat.registry import REGISTRY\n",
        "bot/service/chat/registry.py": "",
    })
    found = imports_of(tmp_path)
    implicit = sorted((imp.importer, imp.imported) for imp in found if imp.implicit)
    assert implicit == [("bot.platforms.chat", "bot.service"), ("bot.platforms.chat", "bot.service.chat"),
                        ("bot.service.compose", "bot.service.chat"), ("bot.service.features.play", "bot.storage")]
    assert sorted(sorted(knot) for knot in import_cycles(found)) == [
        ["bot.service.chat", "bot.service.chat.boards", "bot.service.chat.helpers", "bot.service.compose"]]
    # The layers judge what is written: the platform's implicit import of bot.service.chat is no
    # breach (what it wrote, the registry, is allowed), the composition's written one is.
    assert [(imp.importer, imp.imported) for imp, _ in broken_rules(found)] == [
        ("bot.service.compose", "bot.service.chat.boards")]


def test_platforms_reach_the_service_only_through_its_face(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "bot/__init__.py": "", "bot/platforms/__init__.py": "",
        "bot/platforms/chat.py": "from bot.service import GameService\nfrom bot.service.events import Reply\n"
                                 "from bot.service.features.games import GamesCore\nfrom bot.rules import Game\n",
        "bot/service/__init__.py": "", "bot/service/events.py": "",
        "bot/service/features/__init__.py": "", "bot/service/features/games.py": "",
        "bot/rules/__init__.py": "",
    })
    broken = broken_rules(imports_of(tmp_path))
    assert sorted(imp.imported for imp, _ in broken) == ["bot.rules", "bot.service.features.games"]
