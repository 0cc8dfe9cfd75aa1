"""Every module of ours imports on its own in a fresh interpreter (issue 31, item 2).

An import knot can hide behind today's import order: ``bot/service/__init__.py`` loads the chat
layer and the facade before anything else, so a module that only works when something else was
imported first looks fine until that order changes.  So each module is imported alone, in a
process that has loaded none of ours before, and the same is done on a copy of the tree whose
``bot/service/__init__.py`` is empty, which takes away the order that package imposes (only the
service's own modules are imported there: the platforms need the package's face).

A process per module would cost a second of CPU each in third-party imports (numba, Pillow,
the chat libraries); instead one interpreter loads those and nothing of ours, then forks a child
per module, which starts with none of ours loaded.  Where ``os.fork`` is missing the test is
skipped.  A module that fails only because an optional third-party package is not installed is
skipped and named, never failed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_layers import REPO, imports_of, reached, source_files

# Loaded once by the forking interpreter: the heavy third-party packages our modules import.
# A name missing here only makes the children slower.
PRELOAD = ("numpy", "numba", "PIL.Image", "PIL.ImageDraw", "PIL.ImageFont", "sqlite_utils", "aiohttp.web",
           "telegram", "telegram.ext", "discord", "discord.ext.commands", "psycopg", "psycopg_pool")

# Running it starts the bot, not importing it.
NOT_IMPORTED = ("bot.__main__",)
# Its import loads the engine's compiled search, cached by the source file's path: in a copy of
# the tree it would be compiled again (about 10 s of CPU).  Nothing of the service imports it.
NOT_IN_COPY = ("bot.engine_preload",)

# The child's report: ok, failed with a traceback, or a third-party package missing.
RUNNER = r'''
import importlib, json, os, sys, traceback
preload, preload_ours, modules, must_not_load = json.loads(sys.argv[1])
for name in preload:
    try:
        importlib.import_module(name)
    except ImportError:
        pass
for name in preload_ours:
    importlib.import_module(name)
early = sorted(m for m in modules if m in sys.modules)
assert not early, f"loaded before the modules tried: {early}"
results = {}
for module in modules:
    # Importing a module first runs its package's __init__: when that (tried alone just before,
    # a package sorting before its modules) already loaded the module, the module alone goes the
    # same way, so it is not imported again.
    package = module.rpartition(".")[0]
    if package in results and module in results[package].get("ours", ()):
        results[module] = {**results[package], "same_as": package}
        continue
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            importlib.import_module(module)
            loaded = sorted(m for m in sys.modules if any(m == p or m.startswith(p + ".") for p in must_not_load))
            ours = sorted(m for m in sys.modules if m.split(".")[0] in ("bot", "renderers"))
            report = {"ok": True, "loaded": loaded, "ours": ours}
        except ModuleNotFoundError as e:
            report = {"ok": False, "missing": e.name, "error": traceback.format_exc()}
        except BaseException:
            report = {"ok": False, "error": traceback.format_exc()}
        os.write(write, json.dumps(report).encode())
        os._exit(0)
    os.close(write)
    chunks = []
    while chunk := os.read(read, 65536):
        chunks.append(chunk)
    os.close(read)
    os.waitpid(pid, 0)
    results[module] = json.loads(b"".join(chunks) or b'{"ok": false, "error": "the child died"}')
for report in results.values():
    report.pop("ours", None)
print(json.dumps(results))
'''


def import_each(root: Path, modules: list[str], must_not_load: tuple[str, ...] = (),
                preload_ours: list[str] | None = None) -> dict[str, dict[str, object]]:
    """Each module imported alone under ``root`` (what it reported), and which of ``must_not_load``
    (packages) it loaded.  ``preload_ours``: modules of ours loaded before (none may be tried)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP")}
    env["PYTHONPATH"] = str(root)
    arguments = json.dumps([PRELOAD, preload_ours or [], modules, must_not_load])
    done = subprocess.run([sys.executable, "-c", RUNNER, arguments], cwd=root, env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    results: dict[str, dict[str, object]] = json.loads(done.stdout.strip().splitlines()[-1])
    return results


def ours_missing(module: str, report: dict[str, object]) -> bool:
    missing = report.get("missing")
    return isinstance(missing, str) and missing.split(".")[0] not in ("bot", "renderers")


def judge(results: dict[str, dict[str, object]]) -> None:
    skipped = sorted(m for m, r in results.items() if not r["ok"] and ours_missing(m, r))
    failed = {m: r for m, r in results.items() if not r["ok"] and m not in skipped}
    assert not failed, "modules that do not import on their own:\n" + "\n".join(
        f"{m}:\n{r['error']}" for m, r in sorted(failed.items()))
    if skipped:
        print("skipped (an optional package is missing):",
              ", ".join(f"{m} ({results[m]['missing']})" for m in skipped))


needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork to start each import fresh")


@needs_fork
def test_every_module_imports_on_its_own() -> None:
    modules = [m for m in sorted(source_files(REPO)) if m not in NOT_IMPORTED]
    results = import_each(REPO, modules)
    assert set(results) == set(modules)
    judge(results)


@needs_fork
def test_the_service_imports_in_any_order(tmp_path: Path) -> None:
    """With an empty ``bot/service/__init__.py`` nothing is loaded ahead of the module asked for:
    the composition, the board layer and each use case import on their own, and a use case loads
    nothing of the chat layer."""
    for package in ("bot", "renderers"):
        shutil.copytree(REPO / package, tmp_path / package)    # with its bytecode: not compiled again
    (tmp_path / "bot/service/__init__.py").write_text('"""Emptied: no import order imposed."""\n', encoding="utf-8")
    modules = [m for m in sorted(source_files(tmp_path)) if m.startswith("bot.service.")]
    assert {"bot.service.compose", "bot.service.web", "bot.service.features.play"} <= set(modules)
    # What reaches nothing of the service through any chain (rules, engine, storage, catalogs, ...)
    # cannot change the order within it: loaded once before, not by every child.
    found = imports_of(tmp_path)
    below = [m for m in sorted(source_files(tmp_path))
             if not m.startswith(("bot.service", "bot.platforms")) and m not in (*NOT_IMPORTED, *NOT_IN_COPY)
             and not any(t == "bot.service" or t.startswith("bot.service.") for t in reached(found, m))]
    assert "bot.storage" in below and "bot.rules" in below and "bot.i18n" in below
    results = import_each(tmp_path, modules, must_not_load=("bot.service.chat",), preload_ours=below)
    judge(results)
    use_cases = sorted(m for m in modules if m.startswith("bot.service.features."))
    loads_chat = {m: results[m]["loaded"] for m in use_cases if results[m].get("loaded")}
    assert not loads_chat, f"use cases that load the chat layer: {loads_chat}"
