"""Button moves in a busy Telegram group (issue 29, item 6): how long a press takes to show.

Telegram counts edits against a group's ~20 posts a minute.  A button move used to cost three (the
piece's edit, the move's edit, the ping); now two (the piece's edit, then the move's board as a new
message that pings the player to move).  This plays GAMES games in one group by buttons, as their
players would: the player to move thinks THINK seconds after their board shows, presses a piece,
and presses a destination PAUSE seconds after the board shows the piece's squares.  It measures,
for every press, the time until the board shows it (the piece's squares, or the next player's
pieces), and counts the posts per button move and the 429s.

The Application as production builds it (``build_application`` with its FloodLimiter), a real
service on a SQLite file, and the strict fake Bot API of the tests; Telegram's limits run on a
clock SPEED times faster than the real one (the fake and the limiter alike), and every time printed
is on that clock (Telegram seconds).  ``--before`` plays the same games the old way (the move's
board edited in place and a ping of its own) for the comparison.

Run from the repository root::

    python bench/telegram_group_moves.py                 # both ways, 3 games, about a minute
    python bench/telegram_group_moves.py --games 2 --moves 10
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import logging
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "platforms" / "telegram"))

from telegram import Update  # noqa: E402
from telegram_fake_api import GROUP, FakeBotAPI  # noqa: E402

import bot.platforms.telegram.adapter as telegram_adapter  # noqa: E402
from bot.platforms.telegram import build_application  # noqa: E402
from bot.platforms.telegram.limiter import FloodLimiter  # noqa: E402
from bot.service import GameService  # noqa: E402
from bot.storage import Storage  # noqa: E402

CHAT = GROUP["id"]
SPEED = 10.0
THINK = (6.0, 14.0)         # Telegram seconds a player looks at the board before pressing a piece
PAUSE = (1.0, 2.0)          # ... and before pressing its destination
POSTS = ("sendMessage", "sendPhoto", "sendAnimation", "sendDocument", "editMessageMedia", "editMessageText",
         "editMessageCaption", "editMessageReplyMarkup")


def clock() -> float:
    return time.monotonic() * SPEED


async def sleep(seconds: float) -> None:
    await asyncio.sleep(seconds / SPEED)


def player(n: int) -> dict:
    return {"id": 7000 + n, "is_bot": False, "first_name": f"P{n}", "username": f"p{n}", "language_code": "en"}


class Bench:
    def __init__(self, folder: Path, games: int, seed: int) -> None:
        self.storage = Storage(folder / "bench.db")
        self.service = GameService(self.storage)
        self.http = FakeBotAPI(clock=clock)
        self.http.add_chat(GROUP)
        limiter = FloodLimiter(clock=clock, sleep=sleep)
        self.app = build_application("123:TEST", service=self.service, request=self.http, rate_limiter=limiter)
        self.games = games
        self.chance = random.Random(seed)
        self.ids = iter(range(1, 10**9))
        self.tasks: set[asyncio.Task[None]] = set()
        self.latencies: list[float] = []
        self.moves = 0

    def put(self, **payload: object) -> None:
        update = Update.de_json({"update_id": next(self.ids), **payload}, self.app.bot)
        task = asyncio.ensure_future(self.app.process_update(update))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def until(self, found, what: str) -> float:
        """Telegram seconds until ``found()`` holds."""
        start = clock()
        while not found():
            if clock() - start > 600:
                raise TimeoutError(what)
            await asyncio.sleep(0.005)
        return clock() - start

    def board_with(self, prefix: str):
        """The bot's newest message with a button whose data starts with ``prefix``."""
        for message in sorted(self.http.messages.values(), key=lambda m: -m.message_id):
            if message.chat_id == CHAT and any(b.startswith(prefix) for b in message.buttons()):
                return message
        return None

    def shows(self, message_id: int, prefix: str) -> bool:
        return any(b.startswith(prefix) for b in self.http.messages[(CHAT, message_id)].buttons())

    def moved(self, game: int, ply: int, routes_on: int | None = None) -> bool:
        """A board shows the next player's pieces, or the game's end (or, ``routes_on``, that message
        the routes of a capture to choose from)."""
        return (self.board_with(f"s:{game}:{ply + 1}:") is not None or self.board_with(f"d:{game}:{ply + 1}:")
                is not None or self.board_with(f"rm:{game}") is not None
                or (routes_on is not None and self.shows(routes_on, f"m:{game}:{ply}:")))

    async def start(self, n: int) -> tuple[dict, dict, int]:
        white, black = player(2 * n), player(2 * n + 1)
        self.put(message=self.http.incoming(GROUP, white, "/new@DraughtsBot italian white"))
        await self.until(lambda: len(self.storage.open_challenges("telegram", str(CHAT))) == 1, "challenge")
        self.put(message=self.http.incoming(GROUP, black, "/accept@DraughtsBot"))
        game = n + 1
        await self.until(lambda: self.board_with(f"s:{game}:0:") is not None
                         or self.board_with(f"d:{game}:0:") is not None, "first board")
        return white, black, game

    async def play(self, white: dict, black: dict, game: int, moves: int) -> None:
        for ply in range(moves):
            who = white if ply % 2 == 0 else black
            board = self.board_with(f"s:{game}:{ply}:") or self.board_with(f"d:{game}:{ply}:")
            if board is None:
                return                      # over
            await sleep(self.chance.uniform(*THINK))
            prefix = f"d:{game}:{ply}:"
            one_press = any(b.startswith(prefix) for b in board.buttons())
            if not one_press:
                piece = self.chance.choice([b for b in board.buttons() if b.startswith(f"s:{game}:{ply}:")])
                self.put(callback_query=self.http.callback_query(GROUP, who, piece, board.message_id))
                square = piece.rsplit(":", 1)[1]
                picked = f"d:{game}:{ply}:{square}:"
                self.latencies.append(await self.until(functools.partial(self.shows, board.message_id, picked),
                                                       "piece shown"))
            while True:
                if not one_press:
                    await sleep(self.chance.uniform(*PAUSE))
                one_press = False
                shown = self.http.messages[(CHAT, board.message_id)]
                target = next(b for b in shown.buttons() if b.startswith(prefix))
                self.put(callback_query=self.http.callback_query(GROUP, who, target, board.message_id))
                self.latencies.append(await self.until(
                    functools.partial(self.moved, game, ply, board.message_id), "move shown"))
                if self.moved(game, ply):
                    break
                prefix = f"m:{game}:{ply}:"        # routes to choose from: one more press
            self.moves += 1


async def run(folder: Path, games: int, moves: int, way: str, seed: int) -> dict[str, object]:
    original = telegram_adapter._ping_on_board
    listed = telegram_adapter.TelegramAdapter.with_moves
    if way != "after":
        async def pieces(self, chat_id, reply):     # the piece first, then its square
            return reply
        telegram_adapter.TelegramAdapter.with_moves = pieces
    if way == "before":
        telegram_adapter._ping_on_board = lambda replies: replies      # edit in place, ping of its own
    bench = Bench(folder, games, seed)
    try:
        async with bench.app:
            players = []
            for n in range(games):
                players.append(await bench.start(n))
            first = len(bench.http.calls)
            await asyncio.gather(*(bench.play(white, black, game, moves) for white, black, game in players))
            await asyncio.gather(*list(bench.tasks))
            calls = bench.http.calls[first:]
            posts = [c for c in calls if c.method in POSTS and str(c.params.get("chat_id")) == str(CHAT)
                     and c.status == 200]
            floods = [c for c in calls if c.status == 429]
    finally:
        telegram_adapter._ping_on_board = original
        telegram_adapter.TelegramAdapter.with_moves = listed
        bench.service.close()
        bench.storage.close()
    lat = sorted(bench.latencies)

    def pct(q: float) -> float:
        return lat[min(len(lat) - 1, int(round(q * (len(lat) - 1))))]
    return {"presses": len(lat), "moves": bench.moves, "posts per move": round(len(posts) / max(bench.moves, 1), 2),
            "p50 (s)": round(pct(0.5), 2), "p95 (s)": round(pct(0.95), 2), "max (s)": round(lat[-1], 2),
            "429s": len(floods)}


WAYS = {"before": "before (piece edit, move edit, ping)", "two-step": "piece edit, then a new board that pings",
        "after": "after (moves as buttons: one press, one new board that pings)"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--moves", type=int, default=12, help="plies played per game")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--way", choices=[*WAYS, "all"], default="all")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    ways = list(WAYS) if args.way == "all" else [args.way]
    results = {}
    for way in ways:
        with tempfile.TemporaryDirectory() as folder:
            results[way] = asyncio.run(run(Path(folder), args.games, args.moves, way, args.seed))
        print(f"{args.games} games in one group, {WAYS[way]}: {results[way]}", flush=True)
    if "before" in results and "after" in results:
        print(f"p95 after/before: {results['after']['p95 (s)'] / results['before']['p95 (s)']:.2f}; "
              f"posts per move after/before: {results['after']['posts per move']}/"
              f"{results['before']['posts per move']}")


if __name__ == "__main__":
    main()
