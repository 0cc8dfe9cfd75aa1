"""numba is loaded at the first search, not when the engine is imported (docs/engine.md, "Loaded at
the first search"): a bot process that only plays people's games starts without numba and LLVM.
Then every function written for numba is numba's, and a search through the module plays."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

PROBE = r"""
import sys
from bot.service import GameService
from bot.ai import jit
from bot.rules import Position, get_variant
before = "numba" in sys.modules
deferred = type(jit.gen_moves).__name__
v = get_variant("italian")
available = jit.available(v)
import numba
from numba.core.registry import CPUDispatcher
wrapped = sorted(name for name in jit._PENDING if not isinstance(getattr(jit, name), CPUDispatcher))
print(before, deferred, available, "numba" in sys.modules, wrapped)
"""


def test_the_service_imports_without_numba_and_the_first_search_loads_it_whole():
    pytest.importorskip("numba")
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[-2] == "False _Deferred True True []"


def test_a_deferred_function_called_first_loads_numba_and_answers_as_the_compiled_one():
    pytest.importorskip("numba")
    from bot.ai import jit
    from bot.rules import Position, get_variant

    v = get_variant("spanish")
    lay = jit.layout(v)
    pos = Position.start(v)
    um, uk, tm, tk = (lay.dense(x) for x in pos.sides())
    # Through a stand-in kept from before the load (as a caller that imported the name early would).
    stand_in = jit._Deferred("state_hash")
    assert stand_in(um, uk, tm, tk, pos.white) == jit.state_hash(um, uk, tm, tk, pos.white)
    assert type(jit.state_hash).__name__ == "CPUDispatcher"
