"""Telegram webhook workers sharing one flood budget (issue 29, item 3), in real time.

Real ``python -m bot telegram`` webhook workers (only their Bot API HTTP goes to the strict fake of
the tests, on a real socket, which counts Telegram's limits across all of them as Telegram counts
them per bot token) on one SQLite file.  Each scenario runs with 1 and with N workers, each worker
with its own budget in memory (TELEGRAM_SHARED_BUDGET=0, what every worker did before) and with
the budget shared through the database (=1, webhook mode's default):

1. Two games in one group, 24 presses a game, every press to the next worker: how many of the
   bot's requests Telegram answered 429, how long the presses took.
2. 60 private chats ask /help at once (the global 30 a second), and one chat asks it 6 times at
   once (its 1 a second): the 429s.

Prints one line per run and the ratio of 429s with N workers to those with one (target: 0 with the
shared budget, as with one worker).

Run from the repository root::

    python bench/telegram_workers.py              # about six minutes
    python bench/telegram_workers.py --workers 3 --presses 12
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "platforms" / "telegram"))

from webhook_workers import burst, two_games_in_one_group, workers_on_fake  # noqa: E402


def run(count: int, shared: bool, presses: int, scenario: str) -> dict:
    with tempfile.TemporaryDirectory() as folder, workers_on_fake(Path(folder), count, shared) as workers:
        if scenario == "games":
            return two_games_in_one_group(workers, presses)
        many = burst(workers, chats=60, per_chat=1)
        one = burst(workers, chats=1, per_chat=6, first=500)
        # The fake's count is the run's so far: the chat's burst comes second.
        return {"refused": one["refused"], "global": many["refused"], "chat": one["refused"] - many["refused"],
                "seconds": many["seconds"] + one["seconds"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--presses", type=int, default=24, help="presses a game")
    parser.add_argument("--scenario", choices=("games", "bursts", "both"), default="both")
    args = parser.parse_args()
    scenarios = ("games", "bursts") if args.scenario == "both" else (args.scenario,)
    for scenario in scenarios:
        refused: dict[tuple[int, bool], int] = {}
        for shared in (False, True):
            for count in (1, args.workers):
                result = run(count, shared, args.presses, scenario)
                refused[(count, shared)] = result["refused"]
                print(f"{scenario}: {count} worker(s), {'shared' if shared else 'own'} budget: "
                      f"{result['refused']} answered 429 ({result})", flush=True)
        for shared in (False, True):
            one, many = refused[(1, shared)], refused[(args.workers, shared)]
            print(f"{scenario}, {'shared' if shared else 'own'} budget: 429s with {args.workers} workers / with 1: "
                  f"{many} / {one}" + (f" = {many / one:.1f}" if one else ""), flush=True)


if __name__ == "__main__":
    main()
