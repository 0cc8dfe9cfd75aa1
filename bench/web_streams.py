"""What many open event streams of the web board cost the chats and the players (issue 30, item 2).

The server runs in a process of its own (``--serve``, started by this script) from a checkout given
by ``--repo`` (default: this one; give an older checkout, e.g. ``git worktree add /tmp/old <commit>``,
for the "before" numbers): the real service on a throw-away SQLite file, one game made the way a chat
makes it, ``start_web`` on a free port (caps raised through the environment so every stream of the
bench is a real one).  Beside the board it answers a chat's ``/help`` in a private chat on request,
through the loop's default executor, as the adapters run every chat message
(``bot.platforms.base``: ``asyncio.to_thread``), and reports its own CPU time.

Two measurements:

1. **Chat replies with 2,000 streams open on one game**: the median (and max) time of a private
   ``/help`` with no stream open, then with ``--streams`` spectator streams open (each having
   brought its first state).  Target: within 4x the idle time.
2. **A move to the opponent with 500 spectators**: the players' streams and ``--spectators``
   spectator streams open on one game; the players move in turn (a POST of a legal move); the time
   from the POST's sending to the opponent's stream bringing the move (p50, p95), against the same
   with no spectators; the server's CPU per move, and its CPU while the streams idle.  Target:
   p50 within 50 ms.

Run from the repository root::

    python bench/web_streams.py                       # this checkout
    python bench/web_streams.py --repo /tmp/old       # another one (before)
    python bench/web_streams.py --streams 500 --spectators 100 --moves 10   # quicker
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
PLATFORM = "bench"


def raise_file_limit() -> int:
    """The soft open-files limit raised to the hard one (each stream is a socket on both sides)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


# -- the server process -------------------------------------------------------------------------------


def serve(db: Path) -> None:
    import random

    from bot.platforms.web import WebConfig, start_web
    from bot.service import ChatEvent, GameService
    from bot.storage import Storage

    raise_file_limit()
    storage = Storage(db)
    service = GameService(storage, rng=random.Random(1))

    def event(chat: str, user: str, text: str, kind: str = "group") -> ChatEvent:
        return ChatEvent(platform=PLATFORM, chat_id=chat, user_id=user, user_name=user.capitalize(),
                         username=user, language="en", text=text, chat_kind=kind)

    service.handle(event("chat", "white", "/new italian white"))
    service.handle(event("chat", "black", "/accept"))
    [row] = storage.active_games(PLATFORM, "chat")
    made = {"id": row.id, "fen": row.fen, "W": service.web.seat_token(row.id, PLATFORM, "white"),
            "B": service.web.seat_token(row.id, PLATFORM, "black"), "watch": service.web.watch_token(row.id)}

    async def run() -> None:
        config = WebConfig.from_env("127.0.0.1", environ={**os.environ, "PORT": "0", "WEB_HOST": "127.0.0.1"})
        server = await start_web(service, config)
        loop = asyncio.get_running_loop()
        print(json.dumps({"url": server.url, "game": made}), flush=True)
        while True:
            line = await loop.run_in_executor(None, sys.stdin.readline)
            words = line.split()
            if not words or words[0] == "quit":
                break
            if words[0] == "chat":
                times = []
                for _ in range(int(words[1])):
                    started = time.perf_counter()
                    await asyncio.to_thread(service.handle, event("private-ana", "ana", "/help", "private"))
                    times.append(time.perf_counter() - started)
                    await asyncio.sleep(0.05)
                print(json.dumps(times), flush=True)
            elif words[0] == "cpu":
                usage = resource.getrusage(resource.RUSAGE_SELF)
                print(json.dumps(usage.ru_utime + usage.ru_stime), flush=True)
        await server.stop()

    try:
        asyncio.run(run())
    finally:
        service.close()
        storage.close()


# -- the client ---------------------------------------------------------------------------------------


class Server:
    def __init__(self, repo: Path, db: Path, env: dict[str, str]) -> None:
        code = (f"import sys; sys.path.insert(0, {str(repo)!r}); sys.path.insert(1, {str(REPO / 'bench')!r}); "
                f"import web_streams; web_streams.serve(__import__('pathlib').Path({str(db)!r}))")
        self.proc = subprocess.Popen([sys.executable, "-c", code], cwd=repo, env={**os.environ, **env},
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None and self.proc.stdin is not None
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
        hello = json.loads(self.stdout.readline())
        self.url: str = hello["url"]
        self.game: dict[str, Any] = hello["game"]

    async def ask(self, command: str) -> Any:
        def run() -> Any:
            self.stdin.write(command + "\n")
            self.stdin.flush()
            return json.loads(self.stdout.readline())
        return await asyncio.to_thread(run)

    def stop(self) -> None:
        try:
            self.stdin.write("quit\n")
            self.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Stream:
    """One event stream: the plies it brought, with when (monotonic)."""

    def __init__(self) -> None:
        self.seen: dict[int, float] = {}
        self.first = asyncio.get_running_loop().create_future()
        self.task: asyncio.Task[None] | None = None

    async def follow(self, session: Any, url: str) -> None:
        try:
            async with session.get(url) as response:
                if response.status != 200:
                    if not self.first.done():
                        self.first.set_exception(RuntimeError(f"status {response.status}"))
                    return
                async for line in response.content:
                    if line.startswith(b"data: "):
                        ply = json.loads(line[6:])["ply"]
                        self.seen.setdefault(ply, time.monotonic())
                        if not self.first.done():
                            self.first.set_result(None)
        except (asyncio.CancelledError, Exception) as err:
            if not self.first.done():
                self.first.set_exception(RuntimeError(str(err) or type(err).__name__))
            if isinstance(err, asyncio.CancelledError):
                raise


async def open_streams(session: Any, url: str, count: int, timeout: float) -> list[Stream]:
    streams = []
    for i in range(count):
        stream = Stream()
        stream.task = asyncio.create_task(stream.follow(session, url))
        streams.append(stream)
        if i % 50 == 49:
            await asyncio.sleep(0.05)        # not all at once: a burst of connects is another test
    if not streams:
        return streams
    done, pending = await asyncio.wait([s.first for s in streams], timeout=timeout)
    failed = sum(1 for f in done if f.exception() is not None)
    if pending or failed:
        print(f"  ({len(pending)} streams brought no state in {timeout:.0f} s, {failed} failed)", flush=True)
    return streams


async def close_streams(streams: list[Stream]) -> None:
    for s in streams:
        if s.task is not None:
            s.task.cancel()
    await asyncio.gather(*(s.task for s in streams if s.task is not None), return_exceptions=True)


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


async def chat_phase(server: Server, streams: int, samples: int) -> dict[str, float]:
    import aiohttp

    idle = await server.ask(f"chat {samples}")
    url = f"{server.url}/api/g/{server.game['id']}/events?t={server.game['watch']}"
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        opened = time.monotonic()
        held = await open_streams(session, url, streams, timeout=120)
        open_seconds = time.monotonic() - opened
        await asyncio.sleep(2.0)
        loaded = await server.ask(f"chat {samples}")
        await close_streams(held)
    return {"idle_p50": statistics.median(idle), "loaded_p50": statistics.median(loaded),
            "loaded_max": max(loaded), "open_seconds": open_seconds}


async def move_phase(server: Server, spectators: int, moves: int) -> dict[str, float]:
    import aiohttp

    from bot.rules import Position

    game = server.game
    base = f"{server.url}/api/g/{game['id']}"
    position = Position.from_fen("italian", game["fen"])
    ply = position_ply = 0
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        players = {}
        for color in ("W", "B"):
            stream = Stream()
            stream.task = asyncio.create_task(stream.follow(session, f"{base}/events?t={game[color]}"))
            players[color] = stream
        await asyncio.wait_for(asyncio.gather(*(s.first for s in players.values())), 60)
        watchers = await open_streams(session, f"{base}/events?t={game['watch']}", spectators, timeout=120)
        await asyncio.sleep(2.0)
        cpu0, wall0 = await server.ask("cpu"), time.monotonic()
        await asyncio.sleep(5.0)
        idle_cpu = (await server.ask("cpu") - cpu0) / (time.monotonic() - wall0)
        latencies: list[float] = []
        cpu0 = await server.ask("cpu")
        for _ in range(moves):
            position_ply = ply
            mover = "W" if position.turn.value == "W" else "B"
            opponent = players["B" if mover == "W" else "W"]
            move = position.legal_moves()[0]
            sent = time.monotonic()
            async with session.post(f"{base}/move", json={"path": list(move.path), "ply": position_ply},
                                    headers={"Authorization": f"Bearer {game[mover]}"}) as answer:
                await answer.read()
                if answer.status != 200:
                    break
            deadline = time.monotonic() + 10
            while position_ply + 1 not in opponent.seen and time.monotonic() < deadline:
                await asyncio.sleep(0.001)
            if position_ply + 1 in opponent.seen:
                latencies.append(opponent.seen[position_ply + 1] - sent)
            position, ply = position.play(move), ply + 1
            if not position.legal_moves():
                break
            await asyncio.sleep(0.2)         # the spectators' copies go out before the next move
        cpu = await server.ask("cpu") - cpu0
        await close_streams([*players.values(), *watchers])
    return {"p50": pct(latencies, 50), "p95": pct(latencies, 95), "cpu_per_move": cpu / max(1, len(latencies)),
            "idle_cpu": idle_cpu, "moves": len(latencies)}


def run_server(repo: Path, env: dict[str, str]) -> Server:
    folder = Path(tempfile.mkdtemp(prefix="web-streams-"))
    return Server(repo, folder / "bench.db", env)


async def measure(args: argparse.Namespace) -> None:
    repo = Path(args.repo).resolve()
    env = {"WEB_MAX_STREAMS": "100000", "WEB_STREAMS_PER_GAME": "100000", "WEB_STREAMS_PER_CLIENT": "100000"}
    print(f"server from {repo} (open-files limit {raise_file_limit()})", flush=True)
    server = run_server(repo, env)
    try:
        chat = await chat_phase(server, args.streams, args.samples)
    finally:
        server.stop()
    print(f"chat /help: idle p50 {chat['idle_p50'] * 1000:.1f} ms; with {args.streams} streams open "
          f"p50 {chat['loaded_p50'] * 1000:.1f} ms, max {chat['loaded_max'] * 1000:.1f} ms: "
          f"{chat['loaded_p50'] / chat['idle_p50']:.1f}x idle (target <= 4x); streams opened in "
          f"{chat['open_seconds']:.1f} s", flush=True)
    for spectators in (0, args.spectators):
        server = run_server(repo, env)
        try:
            moved = await move_phase(server, spectators, args.moves)
        finally:
            server.stop()
        print(f"move to the opponent with {spectators} spectators ({moved['moves']:.0f} moves): "
              f"p50 {moved['p50'] * 1000:.1f} ms, p95 {moved['p95'] * 1000:.1f} ms (target p50 <= 50 ms); "
              f"server CPU {moved['cpu_per_move'] * 1000:.1f} ms per move, "
              f"{moved['idle_cpu'] * 100:.1f} % of a core while the streams idle", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", default=str(REPO), help="the checkout whose server is measured")
    parser.add_argument("--streams", type=int, default=2000)
    parser.add_argument("--spectators", type=int, default=500)
    parser.add_argument("--moves", type=int, default=20)
    parser.add_argument("--samples", type=int, default=30, help="/help answers timed per phase")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    asyncio.run(measure(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
