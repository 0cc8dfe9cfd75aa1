"""A level-5 move through the whole service: the human moves in the console, the bot answers.

Run from the repository root::

    python bench/ai_service.py                 # 8 bot moves per variant
    python bench/ai_service.py --moves 4 --variants italian

For each variant a console chat (``bot.platforms.console.ConsoleChat``, piped: each line waits for
the bot's answer) plays ``/play <variant> level 5 white`` against the production service
(``bot.app.build_service``: SQLite file, the engine's process pool), the human side playing a
seeded random legal move.  Per bot move it measures the wall time from the human's line going in
to the bot's board being printed, and prints the worst and median against level 5's own time
(target: within its time plus 10 %).  The pool is warmed up as the bot does at start; the bot's
opening move is reported apart.
"""

from __future__ import annotations

import argparse
import io
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.ai import LEVELS  # noqa: E402
from bot.app import build_service  # noqa: E402
from bot.platforms.console import ConsoleChat  # noqa: E402
from bot.rules import Position  # noqa: E402


def play(variant: str, moves: int, seed: int) -> tuple[float, list[float]]:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        service = build_service(str(Path(tmp) / "bench.db"))
        service.thinker.warm(after=0)   # the engine processes started, as a bot up 30 s has them
        time.sleep(3)
        out = io.StringIO()
        chat = ConsoleChat(service, out, Path(tmp) / "boards", user="Ana", chat="bench", language="en")
        try:
            started = time.perf_counter()
            chat.line(f"/play {variant} level 5 black")     # the bot (White) moves first
            first = time.perf_counter() - started
            times = []
            for _ in range(moves):
                [game] = service.storage.bot_games("console")
                pos = Position.from_fen(game.variant, game.fen)
                legal = pos.legal_moves()
                if not legal or game.status != "active":
                    break
                plies = game.ply
                started = time.perf_counter()
                chat.line(f"/m {rng.choice(legal)}")
                took = time.perf_counter() - started
                after = service.storage.game(game.id)
                if after.status != "active":
                    break
                if after.ply != plies + 2:
                    raise SystemExit(f"the bot did not answer in {variant}: {out.getvalue()[-500:]}")
                times.append(took)
        finally:
            service.close()
            service.storage.close()
    return first, times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=8)
    parser.add_argument("--variants", default="italian,spanish,triestina")
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    limit = LEVELS[5].seconds
    worst_all = 0.0
    for variant in args.variants.split(","):
        first, times = play(variant, args.moves, args.seed)
        if not times:
            print(f"{variant:9}  no bot move measured")
            continue
        worst, median = max(times), statistics.median(times)
        worst_all = max(worst_all, worst / limit)
        print(f"{variant:9}  {len(times)} moves: median {median:.2f} s, worst {worst:.2f} s "
              f"= {worst / limit:.2f}x of level 5's {limit:g} s (target <= 1.10x); first move with the pool "
              f"starting {first:.2f} s")
    print(f"\nsummary: worst level-5 move through the service = {worst_all:.2f}x its time "
          f"{'MET' if worst_all <= 1.10 else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
