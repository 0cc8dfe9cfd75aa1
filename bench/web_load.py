"""How many moves a second the web board's server sustains for 50 games at once, with both players'
event streams open; the page's weight; and the time from a tap to the opponent's screen.

The server runs in a process of its own (``--serve``, started by this script): the real service on a
throw-away SQLite file, the games made the way a chat makes them (``/new`` and ``/accept`` through
``service.handle``, one chat per game), ``start_web`` on a free port.  It prints the games' seat
tokens and serves until its standard input closes.

The client (aiohttp, one event loop) keeps ``--games`` games going at once.  Each game's two players
have their event streams (``/api/g/<id>/events?t=``) open all along; the player to move POSTs a move
(``{"path", "ply"}``, a random legal move picked with our rules engine on the client's copy of the
position) as soon as the previous answer came, so each game is as fast as the server answers.  A
game that ends hands its slot to the next prepared one (the streams move with it).

Printed: moves per second over the measured window (after a warm-up), the POST's latency
(p50/p95/max) and how long after the POST was sent the opponent's stream brought the move
(p50/p95/max); the page's weight (HTML + board.js + board.css, raw and gzip-compressed); and, with the
system's Chromium, the time from a tap on one page to another player's page showing the move
(tests/web/browser/test_browser_game.py measures it over a whole game too).

Run from the repository root::

    python bench/web_load.py                          # 50 games, 20 s measured, about 40 s in all
    python bench/web_load.py --games 10 --seconds 10 --no-browser
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bot.rules import Position  # noqa: E402

PLATFORM = "bench"
VARIANTS = ("italian", "triestina", "spanish")


# -- the server process -------------------------------------------------------------------------------


def serve(db: Path, games: int) -> None:
    from bot.platforms.web import WebConfig, start_web
    from bot.service import ChatEvent, GameService
    from bot.storage import Storage

    storage = Storage(db)
    service = GameService(storage, rng=random.Random(1))

    def say(chat: str, user: str, text: str) -> None:
        service.handle(ChatEvent(platform=PLATFORM, chat_id=chat, user_id=user, user_name=user.capitalize(),
                                 username=user, language="en", text=text))

    made = []
    for i in range(games):
        chat, white, black, variant = f"chat{i}", f"w{i}", f"b{i}", VARIANTS[i % len(VARIANTS)]
        say(chat, white, f"/new {variant} white")
        say(chat, black, "/accept")
        [row] = storage.active_games(PLATFORM, chat)
        made.append({"id": row.id, "variant": variant, "fen": row.fen,
                     "W": service.web.seat_token(row.id, PLATFORM, white),
                     "B": service.web.seat_token(row.id, PLATFORM, black)})

    async def run() -> None:
        # Every page of the bench comes from one address: the per-client cap on streams is lifted.
        server = await start_web(service, WebConfig(host="127.0.0.1", port=0, streams_per_client=100_000))
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()

        def wait_for_eof() -> None:
            sys.stdin.read()
            loop.call_soon_threadsafe(stop.set)

        threading.Thread(target=wait_for_eof, daemon=True).start()
        print(json.dumps({"url": server.url, "games": made}), flush=True)
        await stop.wait()
        await server.stop()

    try:
        asyncio.run(run())
    finally:
        service.close()
        storage.close()


# -- the client ---------------------------------------------------------------------------------------


@dataclass
class Stats:
    started: float = 0.0
    measuring_from: float = 0.0
    until: float = 0.0
    moves: int = 0
    post_ms: list[float] = field(default_factory=list)
    seen_ms: list[float] = field(default_factory=list)
    refused: dict[int, int] = field(default_factory=dict)
    games_ended: int = 0

    def measuring(self, at: float) -> bool:
        return self.measuring_from <= at <= self.until


class Stream:
    """One player's event stream: the latest state, and a waiter per ply not seen yet."""

    def __init__(self) -> None:
        self.ply = -1
        self.waiters: dict[int, asyncio.Future[float]] = {}

    def want(self, ply: int) -> asyncio.Future[float]:
        future = self.waiters.get(ply)
        if future is None:
            future = asyncio.get_running_loop().create_future()
            if self.ply >= ply:
                future.set_result(time.perf_counter())
            self.waiters[ply] = future
        return future

    def saw(self, ply: int) -> None:
        self.ply = max(self.ply, ply)
        now = time.perf_counter()
        for wanted, future in list(self.waiters.items()):
            if wanted <= ply and not future.done():
                future.set_result(now)
                del self.waiters[wanted]


async def follow(session: Any, url: str, stream: Stream) -> None:
    async with session.get(url, timeout=None) as response:
        assert response.status == 200, await response.text()
        async for raw in response.content:
            line = raw.decode().rstrip("\n")
            if line.startswith("data: "):
                stream.saw(int(json.loads(line[6:])["ply"]))


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


async def play_slot(session: Any, url: str, queue: list[dict], stats: Stats, rng: random.Random,
                    streaming: bool) -> None:
    """Games one after the other, as fast as the server answers, until the time is up."""
    while queue and time.perf_counter() < stats.until:
        game = queue.pop()
        streams = {color: Stream() for color in "WB"}
        followers = [asyncio.create_task(follow(session, f"{url}/api/g/{game['id']}/events?t={game[color]}",
                                                streams[color])) for color in ("WB" if streaming else "")]
        pos = Position.from_fen(game["variant"], game["fen"])
        ply = 0
        try:
            while time.perf_counter() < stats.until:
                moves = pos.legal_moves()
                if not moves:
                    break
                move = rng.choice(moves)
                mover, other = pos.turn.value, "B" if pos.turn.value == "W" else "W"
                seen = streams[other].want(ply + 1) if streaming else None
                sent = time.perf_counter()
                async with session.post(f"{url}/api/g/{game['id']}/move",
                                        json={"path": list(move.path), "ply": ply},
                                        headers={"Authorization": "Bearer " + game[mover]}) as response:
                    body = await response.json()
                answered = time.perf_counter()
                if response.status != 200:
                    stats.refused[response.status] = stats.refused.get(response.status, 0) + 1
                    if seen is not None:
                        seen.cancel()
                    break
                pos, ply = pos.play(move), ply + 1
                arrived = await asyncio.wait_for(seen, 30) if seen is not None else None
                if stats.measuring(answered):
                    stats.moves += 1
                    stats.post_ms.append((answered - sent) * 1000)
                    if arrived is not None:
                        stats.seen_ms.append((arrived - sent) * 1000)
                if body["state"]["status"] != "active":
                    stats.games_ended += 1
                    break
        finally:
            for task in followers:
                task.cancel()
            await asyncio.gather(*followers, return_exceptions=True)


async def load(url: str, games: list[dict], slots: int, seconds: float, warmup: float, streaming: bool) -> Stats:
    import aiohttp

    stats = Stats()
    stats.started = time.perf_counter()
    stats.measuring_from = stats.started + warmup
    stats.until = stats.measuring_from + seconds
    queue = list(reversed(games))
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        await asyncio.gather(*(play_slot(session, url, queue, stats, random.Random(i), streaming)
                               for i in range(slots)))
    return stats


async def page_weight(url: str, game: dict) -> tuple[int, int]:
    import aiohttp

    async with aiohttp.ClientSession() as session:
        parts = []
        for path in (f"/g/{game['id']}?t={game['W']}", "/static/board.js", "/static/board.css"):
            async with session.get(url + path) as response:
                assert response.status == 200, path
                parts.append(await response.read())
    return sum(len(p) for p in parts), sum(len(gzip.compress(p, 6)) for p in parts)


TIMING_SCRIPT = """
window.__taps = []; window.__plyAt = {};
document.addEventListener("click", function () { window.__taps.push(Date.now()); }, true);
document.addEventListener("DOMContentLoaded", function () {
  var app = document.getElementById("app");
  new MutationObserver(function () {
    var p = app.dataset.ply;
    if (app.dataset.ready === "1" && !(p in window.__plyAt)) window.__plyAt[p] = Date.now();
  }).observe(app, { attributes: true, attributeFilter: ["data-ply", "data-ready"] });
});
"""


def browser_taps(url: str, game: dict, chromium: str, plies: int) -> list[float]:
    """Tap -> the opponent's screen (ms) for the first ``plies`` moves of a game, on an idle server."""
    from playwright.sync_api import sync_playwright

    out = []
    pos = Position.from_fen(game["variant"], game["fen"])
    rng = random.Random(7)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        pages = {}
        for color in "WB":
            context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True)
            context.add_init_script(TIMING_SCRIPT)
            page = context.new_page()
            page.goto(f"{url}/g/{game['id']}?t={game[color]}")
            page.wait_for_selector("main#app[data-ready='1']")
            pages[color] = page
        for ply in range(plies):
            moves = pos.legal_moves()
            if not moves:
                break
            # One route per destination: a tap on the piece and one on the square makes the move.
            ends: dict[tuple[int, int], list[Any]] = {}
            for m in moves:
                ends.setdefault((m.path[0], m.path[-1]), []).append(m)
            move = rng.choice([group[0] for group in ends.values() if len(group) == 1])
            mover, other = pages[pos.turn.value], pages["B" if pos.turn.value == "W" else "W"]
            mover.locator(f"g[data-at='{move.path[0]}']").tap()
            mover.locator(f"circle[data-dest='{move.path[-1]}']").tap()
            other.wait_for_selector(f"main#app[data-ply='{ply + 1}']", state="attached")
            tapped = mover.evaluate("window.__taps[window.__taps.length - 1]")
            out.append(other.evaluate(f"window.__plyAt[{ply + 1}]") - tapped)
            pos = pos.play(move)
        browser.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=50, help="games played at once")
    parser.add_argument("--seconds", type=float, default=20.0, help="measured window")
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--browser-plies", type=int, default=12)
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument("--no-streams", action="store_true",
                        help="no event streams open (what the streams cost the server)")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--prepare", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.prepare)
        return 0

    # Enough games that no slot runs out (a random game lasts some 60-150 plies).
    prepare = args.games * 4 + 1
    with tempfile.TemporaryDirectory() as tmp:
        server = subprocess.Popen([sys.executable, __file__, "--serve", str(Path(tmp) / "load.db"),
                                   "--prepare", str(prepare)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, cwd=REPO)
        try:
            assert server.stdout is not None and server.stdin is not None
            ready = json.loads(server.stdout.readline())
            url, games = ready["url"], ready["games"]
            raw, packed = asyncio.run(page_weight(url, games[-1]))
            print(f"page weight: {raw} bytes raw ({raw / 1024:.1f} KB), {packed} bytes gzip "
                  f"(HTML with its boot data + board.js + board.css; no images)")
            stats = asyncio.run(load(url, games[:-1], args.games, args.seconds, args.warmup, not args.no_streams))
            rate = stats.moves / args.seconds
            streams = "no streams open" if args.no_streams else "both players' streams open"
            print(f"{args.games} games at once, {streams}: {stats.moves} moves in "
                  f"{args.seconds:.0f} s = {rate:.0f} moves/s ({stats.games_ended} games ended; "
                  f"refused: {stats.refused or 'none'})")
            print(f"  POST /move answered: p50 {percentile(stats.post_ms, 50):.0f} ms, "
                  f"p95 {percentile(stats.post_ms, 95):.0f} ms, max {max(stats.post_ms, default=0):.0f} ms")
            if stats.seen_ms:
                print(f"  on the opponent's stream after the POST was sent: p50 {percentile(stats.seen_ms, 50):.0f} "
                      f"ms, p95 {percentile(stats.seen_ms, 95):.0f} ms, max {max(stats.seen_ms):.0f} ms")
            if not args.no_browser:
                taps = browser_taps(url, games[-1], args.chromium, args.browser_plies)
                print(f"browser, idle server: tap -> opponent's screen over {len(taps)} moves: "
                      f"median {statistics.median(taps):.0f} ms, max {max(taps):.0f} ms")
        finally:
            if server.stdin is not None:
                server.stdin.close()
            server.wait(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
