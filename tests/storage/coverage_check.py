"""Every public method of the storage contract (``Store`` and its repositories) must be called by
the contract suite: a pytest plugin (loaded by conftest.py) records the calls the contract tests
make themselves (not a store method calling another) and, when the whole suite ran and passed,
fails the run naming any method never called.  Under xdist each worker sends what it recorded."""

from __future__ import annotations

import functools
import inspect
import threading
from typing import Any

import pytest

from bot.storage import SQLiteStore, Store
from bot.storage.repositories import REPOSITORIES

# The modules that make up the contract suite (written against Store, for every backend).
CONTRACT_MODULES = ("test_contract.py", "test_concurrency.py", "test_contract_guarantees.py", "test_outbox_claims.py",
                    "test_contract_send_budget.py", "test_contract_tournaments.py", "test_contract_storm.py",
                    "test_contract_counts.py", "test_contract_puzzle_runs.py", "test_contract_own_puzzles.py")
# The outbox belongs to the notifications' own contract (tests/storage/test_contract.py covers it
# today; its methods are counted too, so nothing falls between two suites).


def public_methods() -> dict[str, tuple[type, str]]:
    """'Store.<name>' and '<repository>.<name>' for every public method, with where it lives."""
    out: dict[str, tuple[type, str]] = {}
    for name, member in inspect.getmembers(Store):
        if name.startswith("_") or isinstance(inspect.getattr_static(Store, name), functools.cached_property):
            continue
        if callable(member):
            out[f"Store.{name}"] = (SQLiteStore, name)
    for attr, cls in REPOSITORIES.items():
        for name, member in inspect.getmembers(cls):
            if (not name.startswith("_") or name == "__call__") and callable(member) and name in cls.__dict__:
                out[f"{attr}.{name}"] = (cls, name)
    return out


_depth = threading.local()
called: set[str] = set()
_active = {"on": False}


def _recording(label: str, fn: Any) -> Any:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        depth = getattr(_depth, "n", 0)
        outer = getattr(_depth, "outer", None)
        # A test's own call counts, and so does the flat method a repository method is (the
        # repository is a one-line delegation to it); a store method calling another does not.
        if _active["on"] and (depth == 0 or (depth == 1 and outer is not None and not outer.startswith("Store."))):
            called.add(label)
        _depth.n = depth + 1
        if depth == 0:
            _depth.outer = label
        try:
            return fn(*args, **kwargs)
        finally:
            _depth.n = depth
    return wrapper


def _backends() -> list[type]:
    """Every backend class the contract suite runs (PostgreSQL where psycopg is installed)."""
    classes: list[type] = [SQLiteStore]
    try:
        from bot.storage.postgres import PostgresStore
    except ImportError:
        return classes
    return [*classes, PostgresStore]


def install() -> None:
    for label, (cls, name) in public_methods().items():
        # A Store method is recorded on every backend (a call on either counts for the contract).
        for owner in _backends() if cls is SQLiteStore else [cls]:
            setattr(owner, name, _recording(label, owner.__dict__[name] if name in owner.__dict__
                                            else getattr(owner, name)))


def _in_contract(item: pytest.Item) -> bool:
    return item.path.name in CONTRACT_MODULES


class Plugin:
    def __init__(self) -> None:
        self.selected_all = True
        self.contract_items = 0
        self.worker_calls: list[set[str]] = []
        self.worker_complete: list[bool] = []

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item):
        _active["on"] = _in_contract(item)
        try:
            yield
        finally:
            _active["on"] = False

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        if any(_in_contract(i) for i in items):
            self.selected_all = False

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        names = {i.path.name for i in items}
        self.contract_items = sum(1 for i in items if _in_contract(i))
        if not all(m in names for m in CONTRACT_MODULES):
            self.selected_all = False

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        out = getattr(node, "workeroutput", {})
        self.worker_calls.append(set(out.get("store_calls", ())))
        self.worker_complete.append(bool(out.get("store_complete", False)))

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        complete = self.selected_all and not session.testsfailed and not session.shouldstop
        workeroutput = getattr(session.config, "workeroutput", None)
        if workeroutput is not None:            # an xdist worker: the controller checks
            workeroutput["store_calls"] = sorted(called)
            workeroutput["store_complete"] = complete
            return
        if session.config.pluginmanager.hasplugin("dsession"):
            # The controller of xdist workers: it checks only when every worker reported a whole,
            # passing suite (a crashed worker sends nothing).
            workers = getattr(session.config.option, "numprocesses", None) or 0
            complete = (bool(self.worker_complete) and len(self.worker_complete) >= workers
                        and all(self.worker_complete) and not session.testsfailed)
            seen = set().union(*self.worker_calls) if self.worker_calls else set()
        else:
            seen = called
        if not complete:
            return
        missing = sorted(set(public_methods()) - seen)
        if missing:
            reporter = session.config.pluginmanager.get_plugin("terminalreporter")
            message = (f"storage contract: {len(missing)} public methods never called by the contract suite: "
                       + ", ".join(missing))
            if reporter is not None:
                reporter.write_line(message, red=True)
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
