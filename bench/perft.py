"""Perft benchmark: our rules engine against two published Python engines.

Run from the repository root::

    python bench/perft.py              # full run (about a minute, plus a one-off venv setup)
    python bench/perft.py --quick      # smaller depths
    python bench/perft.py --ours-only  # skip the competitors
    python bench/perft.py --competitors-only

Measurements (leaves per second, best of ``--repeats`` timings each):

1. italian 8x8 start position: ours ``bot.rules.perft`` against
   pydraughts 0.6.7 (``pip install pydraughts==0.6.7``, imports as ``draughts``).
   pydraughts has no perft function, so we time the plain recursive perft a
   user would write over ``Board("italian")``: ``board.legal_moves()``,
   ``board.push(move)``, ``board.pop()``, with bulk counting at depth 1
   (``len(legal_moves())``; this only helps the competitor). Target >= 1000x.
2. triestina (Italian rules on 10x10): ours against py-draughts 1.10.1
   (``pip install py-draughts==1.10.1``, also imports as ``draughts``) using
   its "turbo" perft, ``draughts.engines.turbo.perft_from_board(Board(), depth)``
   on the international 10x10 start position (the bitboard move generator of
   its ``TurboEngine``, bulk counting at depth 1). Target >= 1x.

Both competitors import as ``draughts``, so each lives in its own virtual
environment under ``bench/.venvs/`` (created once with ``python -m venv`` and
cached; gitignored) and is measured by a small snippet run there through
``subprocess``, which prints one JSON line. Our engine is measured in-process.

Each competitor's counts are checked against the reference values
(italian 7, 49, 302, 1469; international 9, 81, 658, 4265) before timing.
Our depth is chosen automatically: the smallest depth whose perft takes at
least ``--min-seconds`` (override with ``--ours-italian-depth`` /
``--ours-triestina-depth``).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
VENVS_DIR = BENCH_DIR / ".venvs"

ITALIAN_REFERENCE = {1: 7, 2: 49, 3: 302, 4: 1469}
INTERNATIONAL_REFERENCE = {1: 9, 2: 81, 3: 658, 4: 4265}

ITALIAN_TARGET = 1000.0
TRIESTINA_TARGET = 1.0

# The measurement snippets run inside the competitors' venvs as
# ``python -I -c SNIPPET DEPTH REPEATS``. Each checks the reference counts,
# times perft(start, DEPTH) REPEATS times and prints one JSON line.
_SNIPPET_COMMON = r"""
import gc, json, sys, time
from importlib.metadata import version

def measure(run, depth, repeats):
    times = []
    leaves = None
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        n = run(depth)
        times.append(time.perf_counter() - t0)
        if leaves is None:
            leaves = n
        elif n != leaves:
            raise SystemExit(f"perft({depth}) unstable: {leaves} then {n}")
    return leaves, times

def report(dist, run, reference, depth, repeats):
    checks = {d: run(d) for d in sorted(reference) if d < depth or depth not in reference}
    leaves, times = measure(run, depth, repeats)
    checks[depth] = leaves
    bad = {d: (n, reference[d]) for d, n in checks.items() if d in reference and n != reference[d]}
    print(json.dumps({
        "package": dist, "version": version(dist), "depth": depth, "leaves": leaves,
        "seconds": min(times), "times": times,
        "checks": {str(d): n for d, n in sorted(checks.items())},
        "bad": {str(d): v for d, v in bad.items()},
    }))
"""

PYDRAUGHTS_SNIPPET = (
    _SNIPPET_COMMON
    + r"""
from draughts import Board

def perft(board, depth):
    moves = board.legal_moves()
    if depth == 1:
        return len(moves)
    total = 0
    for move in moves:
        board.push(move)
        total += perft(board, depth - 1)
        board.pop()
    return total

def run(depth):
    return perft(Board("italian"), depth)

report("pydraughts", run, {1: 7, 2: 49, 3: 302, 4: 1469}, int(sys.argv[1]), int(sys.argv[2]))
"""
)

PY_DRAUGHTS_SNIPPET = (
    _SNIPPET_COMMON
    + r"""
from draughts import Board
from draughts.engines.turbo import perft_from_board

def run(depth):
    return perft_from_board(Board(), depth)

report("py-draughts", run, {1: 9, 2: 81, 3: 658, 4: 4265}, int(sys.argv[1]), int(sys.argv[2]))
"""
)

COMPETITORS = {
    "pydraughts": {
        "requirement": "pydraughts==0.6.7",
        "dist": "pydraughts",
        "version": "0.6.7",
        "snippet": PYDRAUGHTS_SNIPPET,
        "label": "pydraughts 0.6.7 italian (legal_moves/push/pop perft)",
    },
    "py-draughts": {
        "requirement": "py-draughts==1.10.1",
        "dist": "py-draughts",
        "version": "1.10.1",
        "snippet": PY_DRAUGHTS_SNIPPET,
        "label": "py-draughts 1.10.1 international 10x10 (turbo perft_from_board)",
    },
}


class BenchError(Exception):
    """A measurement could not be made; the message says why."""


def log(msg: str = "") -> None:
    print(msg, flush=True)


def fmt_rate(rate: float | None) -> str:
    if rate is None:
        return "n/a"
    return f"{rate:,.0f}"


# --------------------------------------------------------------------------
# Competitor venvs
# --------------------------------------------------------------------------


def venv_python(venv: Path) -> Path:
    if os.name == "nt":
        return venv / "Scripts" / "python.exe"
    return venv / "bin" / "python"


def installed_version(python: Path, dist: str) -> str | None:
    if not python.exists():
        return None
    code = f"from importlib.metadata import version; print(version({dist!r}))"
    try:
        out = subprocess.run(
            [str(python), "-I", "-c", code],
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def ensure_venv(name: str, rebuild: bool = False) -> Path:
    """Return the python of the cached venv for ``name``, creating it if needed."""
    spec = COMPETITORS[name]
    venv = VENVS_DIR / name
    python = venv_python(venv)
    if not rebuild and installed_version(python, spec["dist"]) == spec["version"]:
        return python
    if venv.exists():
        shutil.rmtree(venv)
    VENVS_DIR.mkdir(parents=True, exist_ok=True)
    log(f"[setup] creating venv {venv.relative_to(REPO_ROOT)} and installing {spec['requirement']} ...")
    steps = [
        [sys.executable, "-m", "venv", str(venv)],
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            spec["requirement"],
        ],
    ]
    for cmd in steps:
        res = subprocess.run(cmd, check=False, capture_output=True, text=True)
        if res.returncode != 0:
            tail = "\n".join((res.stdout + res.stderr).strip().splitlines()[-15:])
            raise BenchError(f"setup step failed: {' '.join(cmd)}\n{tail}")
    got = installed_version(python, spec["dist"])
    if got != spec["version"]:
        raise BenchError(f"{spec['dist']} in {venv} is {got!r}, expected {spec['version']}")
    return python


def measure_competitor(name: str, depth: int, repeats: int, rebuild: bool) -> dict:
    spec = COMPETITORS[name]
    python = ensure_venv(name, rebuild)
    cmd = [str(python), "-I", "-c", spec["snippet"], str(depth), str(repeats)]
    res = subprocess.run(cmd, check=False, capture_output=True, text=True, cwd=str(VENVS_DIR))
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith("{")]
    if res.returncode != 0 or not lines:
        tail = "\n".join((res.stdout + res.stderr).strip().splitlines()[-15:])
        raise BenchError(f"{name} snippet failed (exit {res.returncode}):\n{tail}")
    data = json.loads(lines[-1])
    if data["bad"]:
        raise BenchError(f"{name} perft counts disagree with the reference (depth: [got, expected]): {data['bad']}")
    return data


# --------------------------------------------------------------------------
# Our engine (in-process)
# --------------------------------------------------------------------------


def load_ours():
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    try:
        from bot.rules import Position, perft
    except Exception as exc:
        raise BenchError(
            f"our engine is not available: `from bot.rules import Position, perft` failed ({type(exc).__name__}: {exc})"
        ) from exc
    return Position, perft


def time_ours(perft, position, depth: int) -> tuple[int, float]:
    gc.collect()
    t0 = time.perf_counter()
    leaves = perft(position, depth)
    return leaves, time.perf_counter() - t0


def measure_ours(variant: str, depth: int | None, repeats: int, min_seconds: float, max_depth: int) -> dict:
    Position, perft = load_ours()
    try:
        position = Position.start(variant)
    except Exception as exc:
        raise BenchError(f"Position.start({variant!r}) failed: {type(exc).__name__}: {exc}") from exc

    checks: dict[int, int] = {}
    times: list[float] = []
    try:
        if depth is None:
            # Deepen until one perft takes at least min_seconds; that timing is the first sample.
            d = 0
            while True:
                d += 1
                leaves, dt = time_ours(perft, position, d)
                checks[d] = leaves
                if dt >= min_seconds or d >= max_depth:
                    depth = d
                    times.append(dt)
                    break
        else:
            for d in range(1, min(depth, 4)):
                checks[d] = perft(position, d)
        while len(times) < repeats:
            leaves, dt = time_ours(perft, position, depth)
            if checks.setdefault(depth, leaves) != leaves:
                raise BenchError(f"our perft({depth}) unstable: {checks[depth]} then {leaves}")
            times.append(dt)
    except BenchError:
        raise
    except Exception as exc:
        raise BenchError(f"our perft on {variant} raised {type(exc).__name__}: {exc}") from exc

    bad = {}
    if variant == "italian":
        bad = {
            d: (n, ITALIAN_REFERENCE[d])
            for d, n in checks.items()
            if d in ITALIAN_REFERENCE and n != ITALIAN_REFERENCE[d]
        }
    return {
        "depth": depth,
        "leaves": checks[depth],
        "seconds": min(times),
        "times": times,
        "checks": {str(d): n for d, n in sorted(checks.items())},
        "bad": bad,
    }


# --------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------


def run_one(title: str, fn) -> dict | None:
    log(f"--- {title}")
    try:
        res = fn()
    except BenchError as exc:
        log(f"    FAILED: {exc}")
        return None
    rate = res["leaves"] / res["seconds"] if res["seconds"] > 0 else float("inf")
    res["rate"] = rate
    times = ", ".join(f"{t:.3f}" for t in res["times"])
    log(
        f"    depth {res['depth']}: {res['leaves']:,} leaves, best {res['seconds']:.3f} s "
        f"(runs: {times}; median {statistics.median(res['times']):.3f} s)"
    )
    log(f"    counts by depth: {res['checks']}")
    if res.get("bad"):
        log(f"    WARNING: counts differ from the reference (depth: [got, expected]): {res['bad']}")
    log(f"    => {fmt_rate(rate)} leaves/s")
    return res


def ratio_line(
    name: str, ours: dict | None, theirs: dict | None, theirs_name: str, target: float
) -> tuple[str, bool | None]:
    o = ours["rate"] if ours else None
    t = theirs["rate"] if theirs else None
    if o is None or t is None:
        return (
            f"{name}: ours {fmt_rate(o)} leaves/s, {theirs_name} {fmt_rate(t)} leaves/s, "
            f"ratio n/a (target >= {target:g}x)"
        ), None
    ratio = o / t
    ok = ratio >= target
    return (
        f"{name}: ours {fmt_rate(o)} leaves/s, {theirs_name} {fmt_rate(t)} leaves/s, "
        f"ratio {ratio:,.{1 if ratio >= 10 else 2}f}x (target >= {target:g}x) {'MET' if ok else 'MISSED'}"
    ), ok


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    who = p.add_mutually_exclusive_group()
    who.add_argument("--ours-only", action="store_true", help="measure only our engine")
    who.add_argument("--competitors-only", action="store_true", help="measure only the competitors")
    p.add_argument("--quick", action="store_true", help="smaller depths, shorter timings")
    p.add_argument("--repeats", type=int, default=3, help="timings per measurement (best is used)")
    p.add_argument(
        "--min-seconds",
        type=float,
        default=None,
        help="auto depth for ours: first depth taking at least this long (default 1.0, quick 0.2)",
    )
    p.add_argument("--max-depth", type=int, default=30, help="cap for the automatic depth")
    p.add_argument("--ours-italian-depth", type=int, default=None)
    p.add_argument("--ours-triestina-depth", type=int, default=None)
    p.add_argument("--pydraughts-depth", type=int, default=None, help="default 4 (quick 3)")
    p.add_argument("--py-draughts-depth", type=int, default=None, help="default 8 (quick 6)")
    p.add_argument("--rebuild-venvs", action="store_true", help="recreate the competitor venvs")
    p.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 when a target is missed (not only when a measurement fails)",
    )
    args = p.parse_args(argv)

    repeats = max(1, args.repeats)
    min_seconds = args.min_seconds if args.min_seconds is not None else (0.2 if args.quick else 1.0)
    pyd_depth = args.pydraughts_depth or (3 if args.quick else 4)
    pyd2_depth = args.py_draughts_depth or (6 if args.quick else 8)
    do_ours = not args.competitors_only
    do_theirs = not args.ours_only

    log(
        f"perft benchmark - python {sys.version.split()[0]} ({sys.executable}), "
        f"best of {repeats}{', quick' if args.quick else ''}"
    )
    results: dict[str, dict | None] = {}
    if do_ours:
        results["ours_italian"] = run_one(
            "ours: italian 8x8 start, bot.rules.perft",
            lambda: measure_ours("italian", args.ours_italian_depth, repeats, min_seconds, args.max_depth),
        )
        if results["ours_italian"] is not None or args.ours_triestina_depth:
            results["ours_triestina"] = run_one(
                "ours: triestina 10x10 start, bot.rules.perft",
                lambda: measure_ours(
                    "triestina",
                    args.ours_triestina_depth,
                    repeats,
                    min_seconds,
                    args.max_depth,
                ),
            )
        else:
            log("--- ours: triestina skipped (engine not available)")
            results["ours_triestina"] = None
    if do_theirs:
        results["pydraughts"] = run_one(
            COMPETITORS["pydraughts"]["label"],
            lambda: measure_competitor("pydraughts", pyd_depth, repeats, args.rebuild_venvs),
        )
        results["py-draughts"] = run_one(
            COMPETITORS["py-draughts"]["label"],
            lambda: measure_competitor("py-draughts", pyd2_depth, repeats, args.rebuild_venvs),
        )

    failed = any(v is None for v in results.values())
    missed = False
    log("")
    log("=== summary (leaves/s = leaves / best time)")
    if do_ours and do_theirs:
        for line, ok in (
            ratio_line(
                "italian",
                results["ours_italian"],
                results["pydraughts"],
                "pydraughts",
                ITALIAN_TARGET,
            ),
            ratio_line(
                "triestina",
                results["ours_triestina"],
                results["py-draughts"],
                "py-draughts turbo (international)",
                TRIESTINA_TARGET,
            ),
        ):
            log(line)
            missed = missed or ok is False
    else:
        for key, res in results.items():
            log(f"{key}: {fmt_rate(res['rate'] if res else None)} leaves/s")
    if failed:
        log("some measurements FAILED (see above)")
    return 1 if failed or (args.strict and missed) else 0


if __name__ == "__main__":
    sys.exit(main())
