"""caissify-pairings' FIDE Dutch engine with a warm-started maximum-weight matching.

The engine (``caissify_pairings.engines.dutch.DutchEngine``) decides every pairing itself; it
only asks ``networkx.max_weight_matching`` for the matchings of its weighted graph, dozens of
times a round. The library has no extension point for that solver, so ``FastDutchEngine`` runs
the library's own ``_pair_iterative_mwm`` code object unchanged, with one difference: inside it,
``import networkx`` yields a small stand-in whose ``Graph`` only records the weights and whose
``max_weight_matching`` is a ``matching.Matcher`` (one per round paired), exact and warm-started
from the previous run. Nothing global is patched, so the library's own engine stays as it was.

The stand-in is used only for the library version it was checked against (``CHECKED_VERSION``)
and when ``_pair_iterative_mwm`` still imports networkx and calls ``Graph``, ``add_node``,
``add_edge`` and ``max_weight_matching``; otherwise ``available()`` is false and pairing.py pairs
with the library's ``generate_pairings`` as it is.
"""

from __future__ import annotations

import builtins
import inspect
import types
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import Any

import caissify_pairings
from caissify_pairings.engines import dutch

from .matching import Adj, Matcher

CHECKED_VERSION = "0.5.0"
# What the library's method must still use of networkx for the stand-in to replace it all.
EXPECTED_NAMES = frozenset({"networkx", "nx", "Graph", "add_node", "add_edge", "max_weight_matching"})
EXPECTED_PARAMETERS = ("self", "all_players", "bye_candidates")


class _Graph:
    """The part of ``networkx.Graph`` the engine uses, keeping the adjacency order networkx keeps."""

    def __init__(self) -> None:
        self.adj: Adj = {}

    def add_node(self, v: int) -> None:
        self.adj.setdefault(v, {})

    def add_edge(self, u: int, v: int, weight: int = 1) -> None:
        adj = self.adj
        if u not in adj or v not in adj:  # the engine adds its nodes first
            self.add_node(u)
            self.add_node(v)
        adj[u][v] = adj[v][u] = weight


def _names(code: types.CodeType) -> set[str]:
    names = set(code.co_names) | set(code.co_varnames) | set(code.co_cellvars) | set(code.co_freevars)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


@cache
def available() -> bool:
    method = getattr(getattr(dutch, "DutchEngine", None), "_pair_iterative_mwm", None)
    if caissify_pairings.__version__ != CHECKED_VERSION or not isinstance(method, types.FunctionType):
        return False
    parameters = tuple(inspect.signature(method).parameters)
    return parameters == EXPECTED_PARAMETERS and EXPECTED_NAMES <= _names(method.__code__)


def _with_networkx(method: types.FunctionType, matcher: Matcher) -> types.FunctionType:
    """``method`` whose ``import networkx`` gives the stand-in bound to ``matcher``."""
    stand_in = types.ModuleType("networkx")
    stand_in.Graph = _Graph  # type: ignore[attr-defined]

    def max_weight_matching(graph: _Graph, maxcardinality: bool = False) -> set[tuple[int, int]]:
        # The engine always asks for maximum cardinality (see available()'s check in the tests).
        assert maxcardinality
        return matcher.solve(graph.adj)

    stand_in.max_weight_matching = max_weight_matching  # type: ignore[attr-defined]
    real_import: Callable[..., Any] = builtins.__import__

    def importer(name: str, *args: Any, **kwargs: Any) -> Any:
        return stand_in if name == "networkx" else real_import(name, *args, **kwargs)

    own_builtins = {**builtins.__dict__, "__import__": importer}
    scope = {**method.__globals__, "__builtins__": own_builtins}
    return types.FunctionType(method.__code__, scope, method.__name__, method.__defaults__, method.__closure__)


def dutch_pairings(players: Sequence[Mapping[str, Any]], previous_pairings: set[tuple[int, int]],
                   round_number: int, total_rounds: int, matcher: Matcher | None = None,
                   **options: Any) -> list[dict[str, Any]]:
    """``generate_pairings(system="dutch", ...)`` with the warm-started matching (``matcher``: a
    fresh ``Matcher`` unless given, as the tests do to count its runs)."""
    engine = dutch.DutchEngine(players=list(players), previous_pairings=previous_pairings,
                               round_number=round_number, total_rounds=total_rounds, **options)
    method = _with_networkx(dutch.DutchEngine._pair_iterative_mwm, matcher or Matcher())
    engine._pair_iterative_mwm = types.MethodType(method, engine)
    out: list[dict[str, Any]] = engine.generate_pairings()
    return out
