"""Issue 30, item 2: the board's event streams on the real server (aiohttp's test server, the real
service on a real SQLite file, or on the test process's PostgreSQL server).

One reader per game feeds its streams (bot/platforms/web/hub.py): the state is built once per
version and view however many streams watch; a move made by another process on the same database
reaches an open stream (SQLite: the game's one poll; PostgreSQL: NOTIFY); a finished game's stream
gets the final state and ends; too many streams are a 429; a connection refused for want of file
descriptors is logged once a minute, and the server goes on serving."""

from __future__ import annotations

import asyncio
import json
import resource
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from aiohttp import ClientResponse, ClientSession
from aiohttp.test_utils import TestClient, TestServer
from catalog_text import says
from web_helpers import GROUP, PLATFORM, T0, WebChat

from bot.i18n import t
from bot.platforms.web import WebConfig, make_app
from bot.platforms.web.server import SITE, BoardSite, ConfigProblem
from bot.rules import Position

REPO = Path(__file__).resolve().parents[2]
WAIT = 20.0
# The target for a move made by another process to reach an open stream.
OTHER_PROCESS_SECONDS = 2.5


def app_of(chat: WebChat, **config: object) -> TestServer:
    return TestServer(make_app(chat.service, WebConfig(**config)))  # type: ignore[arg-type]


def site_of(client: TestClient) -> BoardSite:
    return client.server.app[SITE]


async def next_state(stream: ClientResponse, timeout: float = WAIT) -> dict[str, object] | None:
    """The next state the stream brings (keepalives skipped); None when it ended."""
    deadline = time.monotonic() + timeout
    while True:
        line = await asyncio.wait_for(stream.content.readline(), max(0.01, deadline - time.monotonic()))
        if not line:
            return None
        if line.startswith(b"data: "):
            state: dict[str, object] = json.loads(line[6:])
            return state


@pytest.fixture
async def client(chat: WebChat) -> AsyncIterator[TestClient]:
    async with TestClient(app_of(chat, poll_seconds=0.3, streams_per_game=3, streams_per_client=4,
                                 max_streams=5)) as test_client:
        yield test_client


# -- caps ---------------------------------------------------------------------------------------------


async def test_too_many_streams_on_a_game_from_a_client_or_in_all_are_a_429(chat, client):
    games = [chat.new_game("italian", f"w{i}", f"b{i}") for i in range(3)]
    watch = [chat.service.web.watch_token(g) for g in games]
    opened = [await client.get(f"/api/g/{games[0]}/events?t={watch[0]}") for _ in range(3)]
    assert all(r.status == 200 for r in opened)
    for r in opened:
        assert (await next_state(r))["game_id"] == games[0]
    refused = await client.get(f"/api/g/{games[0]}/events?t={watch[0]}&lang=es")
    assert refused.status == 429 and refused.headers["Retry-After"] == "30"
    assert await refused.json() == {"ok": False, "reason": "too_many_streams", "error": t("es", "web.too_many_streams")}
    # Another game from the same client: its fourth stream passes, its fifth is over the client's cap.
    fourth = await client.get(f"/api/g/{games[1]}/events?t={watch[1]}")
    assert fourth.status == 200 and (await next_state(fourth))["game_id"] == games[1]
    over_client = await client.get(f"/api/g/{games[1]}/events?t={watch[1]}")
    assert over_client.status == 429
    # From behind a local proxy, each client forwarded counts apart; the server's cap holds for all.
    fifth = await client.get(f"/api/g/{games[2]}/events?t={watch[2]}", headers={"X-Forwarded-For": "203.0.113.9"})
    assert fifth.status == 200 and (await next_state(fifth))["game_id"] == games[2]
    over_all = await client.get(f"/api/g/{games[2]}/events?t={watch[2]}", headers={"X-Forwarded-For": "203.0.113.7"})
    assert over_all.status == 429
    # A stream closed makes room again.
    opened[0].close()
    await asyncio.sleep(0.2)
    again = await client.get(f"/api/g/{games[0]}/events?t={watch[0]}")
    assert again.status == 200 and (await next_state(again))["game_id"] == games[0]
    # A refused stream wrote nothing and holds nothing.
    assert site_of(client).open_streams == 5
    for r in (*opened[1:], fourth, fifth, again):
        r.close()


def test_the_caps_come_from_the_environment():
    config = WebConfig.from_env(environ={"WEB_MAX_STREAMS": "50", "WEB_STREAMS_PER_GAME": "7",
                                         "WEB_STREAMS_PER_CLIENT": "3", "WEB_TRUSTED_PROXIES": "10.0.0.1, 10.0.0.2"})
    assert (config.max_streams, config.streams_per_game, config.streams_per_client) == (50, 7, 3)
    assert config.trusted_proxies == {"10.0.0.1", "10.0.0.2"}
    defaults = WebConfig.from_env(environ={})
    assert (defaults.max_streams, defaults.streams_per_game, defaults.streams_per_client) == (2000, 200, 20)
    for bad in ("0", "-3", "many"):
        with pytest.raises(ConfigProblem, match="WEB_STREAMS_PER_GAME"):
            WebConfig.from_env(environ={"WEB_STREAMS_PER_GAME": bad})


# -- one build per version, finished games ---------------------------------------------------------------


async def test_the_state_is_built_once_per_version_and_view_whatever_the_number_of_streams(chat):
    game = chat.new_game("italian")
    watch = chat.service.web.watch_token(game)
    ana = chat.service.web.seat_token(game, PLATFORM, "ana")
    async with TestClient(app_of(chat, poll_seconds=0.3)) as client:
        hub = site_of(client).hub
        spectators = [await client.get(f"/api/g/{game}/events?t={watch}") for _ in range(15)]
        player = await client.get(f"/api/g/{game}/events?t={ana}")
        for stream in (*spectators, player):
            assert (await next_state(stream))["ply"] == 0
        # Two views (a spectator's, Ana's), each built once for the first version.
        assert hub.builds == 2
        move = Position.start("italian").legal_moves()[0]
        answer = await client.post(f"/api/g/{game}/move", json={"path": list(move.path), "ply": 0},
                                   headers={"Authorization": f"Bearer {ana}"})
        assert answer.status == 200
        for stream in (*spectators, player):
            assert (await next_state(stream))["ply"] == 1
        assert hub.builds == 4
        # Polls that find the version unchanged build nothing.
        await asyncio.sleep(1.0)
        assert hub.builds == 4
        # A stream opened later gets the frame built already, with the server's time as it is sent
        # (the page sets its clock by it).
        chat.now[0] = T0 + 100
        late = await client.get(f"/api/g/{game}/events?t={watch}")
        state = await next_state(late)
        assert state["ply"] == 1 and state["now"] == T0 + 100 and hub.builds == 4
        late.close()
        for stream in (*spectators, player):
            stream.close()


async def test_a_finished_games_stream_brings_the_final_state_and_ends(chat, client):
    game = chat.new_game("italian")
    watch = chat.service.web.watch_token(game)
    stream = await client.get(f"/api/g/{game}/events?t={watch}")
    assert (await next_state(stream))["status"] == "active"
    chat.say("ana", "/resign")
    chat.say("ana", "/resign")
    final = await next_state(stream)
    assert final is not None and final["status"] == "finished" and final["result"] is not None
    assert await next_state(stream) is None and stream.content.at_eof()
    # Opened afterwards: the final state, and the end at once (a page never polls a finished game).
    late = await client.get(f"/api/g/{game}/events?t={watch}")
    assert (await next_state(late))["status"] == "finished"
    assert await next_state(late) is None
    await asyncio.sleep(0.1)
    assert site_of(client).open_streams == 0 and not site_of(client).hub.feeds


# -- another process on the same database ----------------------------------------------------------------


MOVER = """
import sys
from bot.service import ChatEvent, GameService
from bot.storage.opening import open_store
store = open_store(sys.argv[1])
service = GameService(store, clock=lambda: float(sys.argv[4]))
replies = service.handle(ChatEvent(platform=sys.argv[5], chat_id=sys.argv[6], user_id=sys.argv[2],
                                   user_name=sys.argv[2].capitalize(), username=sys.argv[2], language="en",
                                   text="/m " + sys.argv[3]))
print(replies[0].text if replies else "", flush=True)
service.close()
store.close()
"""


def move_in_another_process(database: str, user: str, move: str) -> float:
    """The move made by a process of its own (the bot's service on the same database); when it had
    committed (the wall clock)."""
    done = subprocess.run([sys.executable, "-c", MOVER, database, user, move, str(T0 + 5), PLATFORM, GROUP],
                          capture_output=True, text=True, timeout=60, cwd=REPO)
    assert done.returncode == 0 and says(done.stdout, "en", "move.played", move=move), (done.stdout, done.stderr)
    return time.monotonic()


async def see_a_move_from_another_process(chat: WebChat, database: str, notified: bool = False,
                                          **config: object) -> None:
    game = chat.new_game("italian")
    watch = chat.service.web.watch_token(game)
    move = str(Position.start("italian").legal_moves()[0])
    async with TestClient(app_of(chat, **config)) as client:
        stream = await client.get(f"/api/g/{game}/events?t={watch}")
        assert (await next_state(stream))["ply"] == 0
        hub = site_of(client).hub
        for _ in range(100):
            if hub.notified() or not notified:
                break
            await asyncio.sleep(0.05)
        assert hub.notified() == notified
        committed = await asyncio.to_thread(move_in_another_process, database, "ana", move)
        state = await next_state(stream, timeout=OTHER_PROCESS_SECONDS + 1)
        seen = time.monotonic() - committed
        assert state is not None and state["ply"] == 1
        assert seen < OTHER_PROCESS_SECONDS, seen
        stream.close()


async def test_a_move_by_another_process_on_the_same_sqlite_file_reaches_an_open_stream(chat):
    await see_a_move_from_another_process(chat, chat.storage.path)


async def test_a_move_by_another_process_on_postgresql_reaches_an_open_stream_by_notify(pg_url, now):
    pytest.importorskip("psycopg")
    from bot.service import GameService
    from bot.storage.postgres import PostgresStore

    store = PostgresStore(pg_url)
    chat = WebChat.__new__(WebChat)
    chat.now, chat.storage = now, store         # type: ignore[assignment]
    chat.service = GameService(store, clock=lambda: now[0])
    try:
        # No poll to speak of: only the database's notification can bring the move in time.
        await see_a_move_from_another_process(chat, pg_url, notified=True, poll_seconds=60.0)
    finally:
        chat.service.close()
        store.close()


# -- out of file descriptors ------------------------------------------------------------------------------


SERVER = """
import asyncio, resource, sys, logging
logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s %(message)s")
from bot.platforms.web import WebConfig, start_web
from bot.service import GameService
from bot.storage import Storage
resource.setrlimit(resource.RLIMIT_NOFILE, (int(sys.argv[2]), int(sys.argv[2])))
service = GameService(Storage(sys.argv[1]))

async def main():
    server = await start_web(service, WebConfig(host="127.0.0.1", port=0))
    print(server.port, flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    await server.stop()

asyncio.run(main())
"""


def test_out_of_file_descriptors_is_logged_once_a_minute_and_the_server_keeps_serving(tmp_path):
    limit = 64
    proc = subprocess.Popen([sys.executable, "-c", SERVER, str(tmp_path / "fd.db"), str(limit)], cwd=REPO,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    held: list[socket.socket] = []
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        assert soft > 4 * limit, "the test process itself needs more descriptors"
        # More idle connections than the server has descriptors: it cannot accept the rest, for
        # three seconds (asyncio tries again every second).
        for _ in range(2 * limit):
            held.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        time.sleep(3.0)
        for sock in held:
            sock.close()
        held.clear()
        time.sleep(1.5)

        async def favicon() -> int:
            async with ClientSession() as session, session.get(f"http://127.0.0.1:{port}/favicon.ico") as answer:
                return answer.status
        assert asyncio.run(asyncio.wait_for(favicon(), WAIT)) == 200
    finally:
        for sock in held:
            sock.close()
        _out, err = proc.communicate("", timeout=WAIT)
    lines = [line for line in err.splitlines() if line.strip()]
    refused = [line for line in lines if "cannot be accepted" in line]
    assert len(refused) == 1 and "Too many open files" in refused[0], lines[:20]
    # Nothing else about it either (asyncio's own line once a second per attempt is ours now).
    assert not [line for line in lines if "out of system resource" in line], lines[:20]
    assert proc.returncode == 0, err[-2000:]


# -- the chats' executor ------------------------------------------------------------------------------------


async def test_the_board_never_waits_in_the_chats_executor(chat):
    """The loop's default executor (where the adapters run every chat message) fully taken: the
    board still serves its state, its streams and a move (it has executors of its own)."""
    game = chat.new_game("italian")
    watch = chat.service.web.watch_token(game)
    ana = chat.service.web.seat_token(game, PLATFORM, "ana")
    loop = asyncio.get_running_loop()
    busy = ThreadPoolExecutor(1, thread_name_prefix="chats")
    loop.set_default_executor(busy)
    release = threading.Event()
    blocked = loop.run_in_executor(None, release.wait)
    try:
        async with TestClient(app_of(chat, poll_seconds=0.3)) as client:
            stream = await asyncio.wait_for(client.get(f"/api/g/{game}/events?t={watch}"), WAIT)
            assert (await next_state(stream))["ply"] == 0
            move = Position.start("italian").legal_moves()[0]
            answer = await asyncio.wait_for(client.post(f"/api/g/{game}/move", json={"path": list(move.path), "ply": 0},
                                                        headers={"Authorization": f"Bearer {ana}"}), WAIT)
            assert answer.status == 200
            assert (await next_state(stream))["ply"] == 1
            assert not blocked.done()
            stream.close()
    finally:
        release.set()
        await blocked


async def test_a_feed_whose_reads_fail_says_so_once(chat, caplog):
    """The database gone from under a watched game: one line, not one per poll (the store logs the
    outage itself); the stream waits."""
    from bot.platforms.web.hub import StreamHub

    game = chat.new_game("italian")
    pool = ThreadPoolExecutor(1)
    hub = StreamHub(chat.service.web, pool, 0.02, 5.0, {})
    try:
        sub = hub.subscribe(game, None, "en")
        await asyncio.wait_for(sub.event.wait(), WAIT)
        assert sub.data is not None and not sub.done
        chat.storage.close()
        with caplog.at_level("WARNING", logger="bot.web"):
            await asyncio.sleep(0.5)
        assert len([r for r in caplog.records if "for its streams failed" in r.getMessage()]) == 1
        assert not sub.done
    finally:
        hub.close()
        await asyncio.sleep(0.05)
        pool.shutdown()
