"""Several bot processes on one PostgreSQL database (issue 19), with real processes and a real
throw-away server: racing moves from two processes, and a process killed with SIGKILL in the
middle of play.

The players are ``tests/service/pg_player.py`` run as separate programs: each opens the service on
the database, plays typed moves through ``service.handle`` as a chat event would come, does an
adapter's delivery round between moves, and prints a line for every move it was told was played
(flushed at once), so what was acknowledged is known even of a process killed a moment later.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from bot.app import open_store
from bot.service import ChatEvent, GameService
from bot.service.outbox import Outbox

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PLATFORM = "bench"


def service_on(url: str) -> GameService:
    store = open_store(url)
    return GameService(store, rng=random.Random(0), outbox=Outbox(store, time.time, lease_seconds=3.0))


def say(service: GameService, chat: str, user: str, text: str) -> list:
    return service.handle(ChatEvent(platform=PLATFORM, chat_id=chat, user_id=user, user_name=user, username=user,
                                    language="en", text=text))


def start_game(service: GameService, chat: str, white: str, black: str) -> int:
    say(service, chat, white, "/new italian white")
    for reply in say(service, chat, black, "/accept"):
        if reply.game_id is not None:
            return int(reply.game_id)
    raise AssertionError("no game started")


def player(url: str, role: str, *games: int, wait_go: bool = False) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO), DRAUGHTS_AI_WORKERS="1")
    if wait_go:
        env["PG_PLAYER_WAIT_GO"] = "1"
    return subprocess.Popen([sys.executable, str(HERE / "pg_player.py"), url, role, *map(str, games)],
                            stdin=subprocess.PIPE if wait_go else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)


def acknowledged(lines: list[str]) -> list[dict]:
    out = []
    for line in lines:
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue            # a line cut short by the kill
    return out


def stored_moves(url: str, game_id: int) -> dict[int, str]:
    service = service_on(url)
    try:
        return {m.ply: m.notation for m in service.game_with_moves(game_id)[1]}
    finally:
        service.close()
        service.storage.close()


def test_two_processes_racing_on_one_game_each_move_is_played_once(pg_url):
    service = service_on(pg_url)
    try:
        game = start_game(service, "race", "wr", "br")
    finally:
        service.close()
        service.storage.close()
    procs = [player(pg_url, f"racer{n}", game, wait_go=True) for n in range(2)]
    # Both warmed up (each says so, then waits for a line): then both are let go at once.
    for proc in procs:
        assert proc.stdout is not None and proc.stdin is not None
        ready = proc.stdout.readline()
        assert "ready" in ready, f"a racer stopped early: {ready!r} {proc.stderr.read() if proc.stderr else ''}"
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    outputs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err[-2000:] for _, err in outputs]
    acks = [acknowledged(out.splitlines()) for out, _ in outputs]
    moves = [a for entries in acks for a in entries if "ply" in a]
    refused = [a for entries in acks for a in entries if "refused" in a]
    stored = stored_moves(pg_url, game)
    plies = [m["ply"] for m in moves]
    # Every stored move was acknowledged to exactly one process, and nothing else was.
    assert sorted(plies) == sorted(stored) and len(plies) == len(set(plies))
    assert all(stored[m["ply"]].replace("x", "-") == m["move"].replace("x", "-") for m in moves)
    # Both processes played some of them, and the losers of a race were told (not silently dropped).
    assert all(any("ply" in a for a in entries) for entries in acks), "one process never won a race"
    assert refused, "no race was lost: the processes did not overlap"
    assert all(r["text"] for r in refused)


def test_a_process_killed_mid_play_loses_no_acknowledged_move_and_its_messages_go_out(pg_url):
    service = service_on(pg_url)
    try:
        games = [start_game(service, f"own-{n}", f"w{n}", f"b{n}") for n in range(3)]
    finally:
        service.close()
        service.storage.close()
    victim = player(pg_url, "victim", *games)
    lines: list[str] = []
    assert victim.stdout is not None
    # Killed once it has had many moves acknowledged and while it is playing more.
    while len(lines) < 60:
        line = victim.stdout.readline()
        assert line, f"the player stopped early: {victim.stderr.read() if victim.stderr else ''}"
        lines.append(line)
    victim.send_signal(signal.SIGKILL)
    victim.wait(30)
    lines += victim.stdout.read().splitlines()
    acks = [a for a in acknowledged(lines) if "ply" in a]
    assert len(acks) >= 60
    for game in games:
        stored = stored_moves(pg_url, game)
        mine = {a["ply"]: a["move"] for a in acks if a["game"] == game}
        missing = {ply: move for ply, move in mine.items() if stored.get(ply, "").replace("x", "-")
                   != move.replace("x", "-")}
        assert not missing, f"game #{game}: acknowledged moves lost: {missing}"
        # Nothing half-written: the game's row agrees with its moves.
        service = service_on(pg_url)
        try:
            row, moves = service.game_with_moves(game)
            assert row is not None and row.ply == len(moves) == max(stored, default=0)
        finally:
            service.close()
            service.storage.close()

    # The victim's claimed messages (its bot game's moves, claimed for delivery) go out through
    # another process: on this machine at once (its pid is gone), elsewhere when the lease ends.
    survivor = service_on(pg_url)
    try:
        pending = survivor.storage.find_outbox(PLATFORM, "pending")
        deadline = time.monotonic() + 30
        sent: set[int] = set()
        while time.monotonic() < deadline:
            survivor.run_due(PLATFORM)
            for item in survivor.pending_messages(PLATFORM, 100):
                assert item.id not in sent
                survivor.message_sent(item.id)
                sent.add(item.id)
            if not survivor.storage.find_outbox(PLATFORM, "pending"):
                break
            time.sleep(0.2)
        assert survivor.storage.find_outbox(PLATFORM, "pending") == []
        assert {r.id for r in pending} <= sent
    finally:
        survivor.close()
        survivor.storage.close()
