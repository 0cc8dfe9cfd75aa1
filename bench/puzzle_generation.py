"""Puzzle generation and the bank's check: the compiled material search against the Python one.

Run from the repository root::

    python bench/puzzle_generation.py                    # 3 puzzles a variant, then the whole check
    python bench/puzzle_generation.py --count 5 --variant triestina --no-check

Generation (``generate.find`` on engine games, as ``python -m bot puzzles generate`` runs it,
without writing the bank) is run three ways in this process, on the same seed and game numbers:

(a) before: the Python ``prove.Search`` and the solution-tree search as it was before the compiled
    search came (``OriginalProver`` below: every solver move makes its replies, every proof depth
    makes its positions again, the endgame tables are asked through ``egtb.verdict``);
(b) python: the Python ``Search`` with today's ``Prover`` (what runs where numba does not);
(c) compiled: ``prove.CompiledSearch`` with today's ``Prover`` (the generator's default).

All three must find the same puzzles, byte for byte (the bench stops otherwise); it prints puzzles
per CPU-minute of each and the ratios against (a).  The engine games themselves use the engine's
compiled search in all three.  Then ``python -m bot puzzles check --jobs 2`` on the whole bank twice,
with ``DRAUGHTS_JIT=off`` (the Python search: the check as it was) and as shipped; it prints both
times, the ratio, and that both passed the same bank.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bot.ai import egtb, jit  # noqa: E402
from bot.puzzles import bank, generate, prove  # noqa: E402
from bot.puzzles.generate import find, from_selfplay  # noqa: E402
from bot.puzzles.prove import GAIN, MIN_GAIN, Prover, Search, Tree, balance  # noqa: E402
from bot.rules import Move, Position  # noqa: E402


class OriginalProver(Prover):
    """The solution-tree search before the compiled search came (commit 2760ed4), kept as the
    reference: the same nodes in the same order, each worked out from scratch."""

    def solver_node(self, pos: Position, depth: int, first_only: bool = False) -> Tree:
        key = (pos.key, depth, first_only)
        if key in self._cache:
            return self._cache[key]
        won: Tree = {}
        for move in sorted(pos.legal_moves(), key=lambda m: -len(m.captured)):
            self._tick()
            after = pos.play(move)
            replies = after.legal_moves()
            lead = balance(after, self.solver)
            found = egtb.verdict(after)
            known = None if found is None else found.result
            if not replies or known == egtb.LOSS or (
                    known is None and lead >= GAIN and lead - self.base >= MIN_GAIN and not replies[0].is_capture):
                won[str(move)] = {}
            elif depth > 1:
                node = self.opponent_node(after, replies, depth - 1)
                if node is not None:
                    won[str(move)] = node
            if won and first_only:
                break
        self._cache[key] = won
        return won

    def opponent_node(self, pos: Position, replies: list[Move], depth: int) -> dict[str, Tree] | None:
        node: dict[str, Tree] = {}
        for reply in sorted(replies, key=lambda m: -len(m.captured)):
            self._tick()
            won = self.solver_node(pos.play(reply), depth)
            if not won:
                return None
            node[str(reply)] = won
        return node


def _python_search(variant: Any, budget: int | None = None) -> Search:
    return Search(variant, budget)


WAYS = {
    "before": (OriginalProver, _python_search),
    "python": (Prover, _python_search),
    "compiled": (Prover, prove.material_search),
}


def run(variant: str, count: int, seed: int, first: int, way: str) -> tuple[list[dict[str, Any]], float]:
    """The puzzles ``generate`` finds (not added to the bank) and the CPU seconds it took."""
    prover, search = WAYS[way]
    saved = prove.Prover, prove.material_search, generate.material_search
    # generate imported material_search by name (tempting_moves): it is swapped there too.
    prove.Prover, prove.material_search, generate.material_search = prover, search, search  # type: ignore[misc]
    try:
        seen = {(variant, Position.from_fen(variant, p["fen"]).key) for p in bank.load(variant)}
        started = time.process_time()
        found = find(from_selfplay(variant, 10**9, random.Random(seed), first=first), count, seen)
        return found, time.process_time() - started
    finally:
        prove.Prover, prove.material_search, generate.material_search = saved  # type: ignore[misc]


def check(jit_on: bool) -> tuple[float, float, str]:
    """Wall and CPU seconds (its processes') of ``puzzles check --jobs 2`` over the whole bank, and
    its verdict line."""
    env = {**os.environ, "DRAUGHTS_JIT": "on" if jit_on else "off"}
    started = time.monotonic()
    cpu = _children_cpu()
    done = subprocess.run([sys.executable, "-m", "bot", "puzzles", "check", "--jobs", "2"], cwd=ROOT, env=env,
                          capture_output=True, text=True, check=False)
    seconds = time.monotonic() - started
    lines = done.stdout.strip().splitlines()
    return seconds, _children_cpu() - cpu, f"exit {done.returncode}, {lines[-1] if lines else done.stderr[-200:]}"


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", action="append", default=None, help="one variant (repeatable; default all three)")
    parser.add_argument("--count", type=int, default=3, help="puzzles to find per variant and way")
    parser.add_argument("--seed", type=int, default=4242)
    parser.add_argument("--first-game", type=int, default=700_000)
    parser.add_argument("--no-check", action="store_true", help="skip the two runs of puzzles check")
    args = parser.parse_args()
    jit.warm()
    jit._warm_material()     # loaded (or compiled) before any clock starts
    for variant in args.variant or ["italian", "spanish", "triestina"]:
        results = {way: run(variant, args.count, args.seed, args.first_game, way) for way in WAYS}
        dumps = {way: json.dumps(found, sort_keys=True) for way, (found, _s) in results.items()}
        if len(set(dumps.values())) != 1:
            sys.exit(f"{variant}: the ways found different puzzles: "
                     + "; ".join(f"{w}: {[p['id'] for p in f]}" for w, (f, _s) in results.items()))
        count = len(results["before"][0])
        base = results["before"][1]
        print(f"{variant}: the same {count} puzzles each way ({', '.join(p['id'] for p in results['before'][0])})")
        for way, (_found, seconds) in results.items():
            print(f"  {way:9} {seconds:7.1f} CPU s  {60 * count / seconds:6.1f} puzzles/CPU-min  "
                  f"x{base / seconds:.2f} vs before")
    if not args.no_check:
        before, before_cpu, said_before = check(jit_on=False)
        after, after_cpu, said_after = check(jit_on=True)
        print(f"puzzles check --jobs 2, whole bank: python search {before:.1f} s ({before_cpu:.1f} CPU s; "
              f"{said_before}), compiled {after:.1f} s ({after_cpu:.1f} CPU s; {said_after}); "
              f"x{before / after:.2f} wall, x{before_cpu / after_cpu:.2f} CPU")


if __name__ == "__main__":
    main()
