"""/top and /stats as the finished games pile up: 1,000 finished games against 30,000.

The database is filled through the service's own result path (a game stored as the service
starts it, then ended by ``Games.finish_game``, which rates it through the same GameFinished
subscriber as a game played in the chat), a few hundred games per transaction so 30,000 take a
minute or two.  Then /top, /top italian, /top global, /stats, /stats @a @b and /m are timed through
``GameService.handle`` (median of several runs) at each size, and the ratios printed.

Run from the repository root::

    python bench/stats_scale.py                      # 1,000 and 30,000 games, a few minutes
    python bench/stats_scale.py --sizes 1000,5000    # smaller
    python bench/stats_scale.py --postgres           # on a throw-away PostgreSQL server (as the tests start)

Target (issue 30): from 1k to 30k finished games /top and /stats grow at most 3x (/m stays flat).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from bot.rules import Color, Game, Result, ResultReason  # noqa: E402
from bot.service import ChatEvent, GameService  # noqa: E402
from bot.storage import BOT_ID, SQLiteStore, Store  # noqa: E402
from bot.storage.repositories import NewGame  # noqa: E402

PLATFORM = "bench"
CHAT = "room"
OTHER_CHAT = "elsewhere"
PLAYERS = [f"p{n:02d}" for n in range(12)]
T0 = 1_700_000_000.0
BATCH = 250
TARGET = 3.0
COMMANDS = [("/top", "p00"), ("/top italian", "p00"), ("/top global", "p00"), ("/stats", "p00"),
            ("/stats @p00 @p01", "p00")]


def event(user: str, text: str, chat: str = CHAT) -> ChatEvent:
    return ChatEvent(platform=PLATFORM, chat_id=chat, user_id=user, user_name=user.title(), username=user,
                     language="en", text=text)


class Filler:
    """Adds finished games (people and bot games, every variant, wins, draws, a few resigned at
    once and so unrated, most in one chat) through the service's result path."""

    def __init__(self, service: GameService, now: list[float]) -> None:
        self.service = service
        self.storage = service.storage
        self.now = now
        self.rng = random.Random(30)
        self.count = 0
        start = Game("italian").position.fen()
        self.fens = {v: Game(v).position.fen() for v in ("italian", "spanish", "triestina")}
        assert self.fens["italian"] == start

    def _one(self) -> None:
        rng = self.rng
        variant = rng.choices(("italian", "spanish", "triestina"), (5, 3, 2))[0]
        chat = CHAT if rng.random() < 0.85 else OTHER_CHAT
        white, black = rng.sample(PLAYERS, 2)
        level = None
        if rng.random() < 0.1:
            level = rng.randint(1, 5)
            white, black = (BOT_ID, black) if rng.random() < 0.5 else (white, BOT_ID)
        self.now[0] += 600.0
        at = self.now[0]
        game_id = self.storage.games.create(NewGame(
            platform=PLATFORM, chat_id=chat, variant=variant, white_id=white, white_name=white.title(),
            black_id=black, black_name=black.title(), fen=self.fens[variant], move_seconds=86400,
            created_at=at - 500.0, deadline_at=at + 86400, bot_level=level))
        roll = rng.random()
        if roll < 0.03:
            result, ply = Result("0-1", ResultReason.RESIGN, Color.BLACK), rng.randint(0, 1)
        elif roll < 0.42:
            result, ply = Result("1-0", ResultReason.NO_MOVES, Color.WHITE), rng.randint(20, 90)
        elif roll < 0.77:
            result, ply = Result("0-1", ResultReason.RESIGN, Color.BLACK), rng.randint(10, 90)
        else:
            result, ply = Result("1/2-1/2", ResultReason.AGREEMENT), rng.randint(10, 90)
        row = self.storage.games.get(game_id)
        assert row is not None
        self.service.app.games.finish_game(row, result, at, fields={"ply": ply})
        self.count += 1

    def fill_to(self, total: int) -> float:
        """Finished games up to ``total``; the seconds it took."""
        started = time.perf_counter()
        while self.count < total:
            with self.storage.transaction():
                for _ in range(min(BATCH, total - self.count)):
                    self._one()
        return time.perf_counter() - started


def timed(service: GameService, user: str, text: str, runs: int) -> float:
    """Median milliseconds of a command through the service (one warm-up run first)."""
    service.handle(event(user, text))
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        replies = service.handle(event(user, text))
        times.append(time.perf_counter() - started)
        assert replies, text
    return statistics.median(times) * 1000


def timed_moves(service: GameService, runs: int) -> float:
    """Median milliseconds of /m in a fresh game between two of the players (resigned afterwards,
    so the next size starts its own game)."""
    service.handle(event("p10", "/new italian white @p11"))
    service.handle(event("p11", "/accept"))
    game = Game("italian")
    times = []
    for ply in range(runs + 1):
        move = game.position.legal_moves()[0]
        user = ("p10", "p11")[ply % 2]
        started = time.perf_counter()
        replies = service.handle(event(user, f"/m {move}"))
        elapsed = time.perf_counter() - started
        if not replies or "played" not in replies[0].text:
            raise SystemExit(f"/m {move} was not played: {replies[0].text if replies else 'no reply'}")
        if ply:                      # the first move is the warm-up
            times.append(elapsed)
        game.play(move)
    service.handle(event("p10", "/resign"))
    service.handle(event("p10", "/resign"))
    return statistics.median(times) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,30000", help="finished games at each measurement, ascending")
    parser.add_argument("--runs", type=int, default=7, help="timed runs of each command at each size")
    parser.add_argument("--postgres", action="store_true", help="on PostgreSQL (a throw-away server) instead of SQLite")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    server = None
    if args.postgres:
        from pg_server import started_server

        server = started_server()
    try:
        return measure(args, sizes, server)
    finally:
        if server is not None:
            server.stop()


def measure(args: argparse.Namespace, sizes: list[int], server: Any) -> int:
    print(f"python {sys.version.split()[0]}, {'PostgreSQL' if server else 'SQLite'}, sizes {sizes}, "
          f"median of {args.runs} runs\n")
    results: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        now = [T0]
        storage: Store
        if server is not None:
            from bot.storage.postgres import PostgresStore

            storage = PostgresStore(server.new_database())
        else:
            storage = SQLiteStore(Path(tmp) / "bench.db")
        service = GameService(storage, clock=lambda: now[0], rng=random.Random(0))
        for user in PLAYERS:                       # every player seen, so @handles resolve
            service.handle(event(user, "/help"))
            service.handle(event(user, "/help", chat=OTHER_CHAT))
        filler = Filler(service, now)
        for size in sizes:
            seconds = filler.fill_to(size)
            print(f"{size:>6} finished games (filled in {seconds:5.1f} s)")
            for text, user in COMMANDS:
                ms = timed(service, user, text, args.runs)
                results.setdefault(text, []).append(ms)
                print(f"         {text:18} {ms:8.1f} ms")
            ms = timed_moves(service, args.runs)
            results.setdefault("/m", []).append(ms)
            print(f"         {'/m':18} {ms:8.1f} ms")
            filler.count += 1                      # the resigned /m game is a finished game too
        storage.close()
    print()
    first, last = sizes[0], sizes[-1]
    worst = 0.0
    for text, series in results.items():
        ratio = series[-1] / series[0]
        if text != "/m":
            worst = max(worst, ratio)
        print(f"{text:18} {series[0]:8.1f} ms -> {series[-1]:8.1f} ms   x{ratio:5.2f}")
    print(f"\nsummary: /top and /stats from {first} to {last} finished games grow at most x{worst:.2f} "
          f"(target <= {TARGET:g}x) {'MET' if worst <= TARGET else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
