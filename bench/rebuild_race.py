"""`ratings rebuild` while the bot runs: one process finishes rated games while another rebuilds
the ratings in a loop, on one SQLite file; then the ratings as left are compared with a fresh
rebuild.  Prints, per run, how many rating rows (and history rows) differ; 0 is the target.

    python bench/rebuild_race.py [--games 300] [--runs 5]

Issue 18 measured before the fix (the rebuild read the games outside its transaction): 5 of 5 runs
differed, 5-12 of 12 rating rows each; after: 0 in 5 runs.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "storage")]

import workers  # noqa: E402  (the processes the concurrency tests run)

from bot.service import GameService  # noqa: E402


def one_run(games: int, seed: int) -> dict[str, int]:
    with tempfile.TemporaryDirectory() as folder:
        path, stop = str(Path(folder) / "race.db"), Path(folder) / "stop"
        workers.open_store(path).close()
        players = [f"u{i}" for i in range(12)]
        with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as pool:
            rebuilds = pool.submit(workers.rebuild_until, path, str(stop))
            pool.submit(workers.finish_games, path, players, games, seed, workers.T0).result()
            stop.touch()
            runs = rebuilds.result()
        store = workers.open_store(path)
        try:
            live = store.dump()
            GameService(store, clock=lambda: workers.T0).rebuild_ratings()
            fresh = store.dump()
        finally:
            store.close()
    return {"rebuilds": runs, "ratings": len(fresh["ratings"]),
            "ratings differing": len(set(fresh["ratings"]) - set(live["ratings"])),
            "history differing": len(set(fresh["rating_history"]) ^ set(live["rating_history"])) // 2}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    worst = 0
    for run in range(args.runs):
        result = one_run(args.games, seed=run)
        worst = max(worst, result["ratings differing"])
        print(f"run {run + 1}: " + ", ".join(f"{k} {v}" for k, v in result.items()))
    print(f"rating rows unlike a fresh rebuild, worst run: {worst}")


if __name__ == "__main__":
    main()
