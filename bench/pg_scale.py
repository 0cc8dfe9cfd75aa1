"""Events per second through the service on SQLite and on PostgreSQL, with one process and with two
processes on one database; and what a kill -9 of one of two processes costs.

Each process plays games of its own (typed moves, ``/m #N move``, through ``service.handle``, as a
chat event would come) and, with two processes, both hammer one shared game: each reads the
position and sends a move for the side to move at the same moment, so of two moves for one ply
exactly one may be played and the other must be told.  Between moves a process does an adapter's
delivery round (``run_due``, ``pending_messages`` -> ``message_sent``).  Every move a process was
told was played is written to its log as soon as the answer came (flushed), so after the run the
database is checked against what was acknowledged: lost moves (acknowledged, not stored), doubled
moves (stored twice, or a ply acknowledged to both processes), and messages delivered twice.

The PostgreSQL server is a throw-away one started here from the machine's binaries (as the tests
do), with fsync on: its commits are durable as a production server's.  ``--pg-async`` also measures
``synchronous_commit=off`` (commits survive the bot being killed, not the server's machine
crashing: the guarantee SQLite's WAL with synchronous=NORMAL gives).

Targets (issue 19, this 2-core machine, the server sharing it): two processes on PostgreSQL serve
>= 1.5x the events per second of one; a move through the service on PostgreSQL costs <= 1.5x the
same move on SQLite; 0 lost or doubled moves, 0 doubled messages; after a kill -9 of one of two
processes, 0 acknowledged moves lost and its claimed messages delivered by the other.

Run from the repository root::

    python bench/pg_scale.py                    # about 2 min
    python bench/pg_scale.py --seconds 20 --games 6 --pg-async

Exit status 0 whatever the figures (a measurement); 1 only if the run itself failed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))
os.environ.setdefault("DRAUGHTS_AI_WORKERS", "1")

from bot import config  # noqa: E402
from bot.rules import Game  # noqa: E402
from bot.service import ChatEvent, GameService  # noqa: E402
from bot.service.outbox import Outbox  # noqa: E402
from bot.service.thinking import Thinker  # noqa: E402

PLATFORM = "bench"
SHARED_CHAT = "shared"


def open_service(database: str, lease: float = 300.0) -> GameService:
    from bot.app import open_store

    store = open_store(database)
    return GameService(store, rng=random.Random(0), outbox=Outbox(store, time.time, lease_seconds=lease),
                       thinker=Thinker(workers=config.load().ai_workers))


def close(service: GameService) -> None:
    service.close()
    service.storage.close()


def say(service: GameService, chat: str, user: str, text: str) -> list:
    return service.handle(ChatEvent(platform=PLATFORM, chat_id=chat, user_id=user, user_name=user,
                                    username=user, language="en", text=text))


def played(replies: list, game_id: int) -> bool:
    """Whether the answer says the move was played (a board of the game saying who played what)."""
    return any(r.game_id == game_id and r.image is not None and " played " in r.text for r in replies)


def start_game(service: GameService, chat: str, white: str, black: str) -> int:
    say(service, chat, white, "/new italian white")
    replies = say(service, chat, black, "/accept")
    for reply in replies:
        if reply.game_id is not None:
            return int(reply.game_id)
    raise SystemExit(f"no game in {chat}: {[r.text for r in replies]}")


def prepare(database: str, processes: int, games: int) -> dict[str, Any]:
    service = open_service(database)
    try:
        own = [[{"id": start_game(service, f"p{p}-g{g}", f"w{p}{g}", f"b{p}{g}"), "chat": f"p{p}-g{g}",
                 "white": f"w{p}{g}", "black": f"b{p}{g}"} for g in range(games)] for p in range(processes)]
        start_game(service, SHARED_CHAT, "ws", "bs")
        while service.pending_messages(PLATFORM, 200):
            for item in service.pending_messages(PLATFORM, 200):
                service.message_sent(item.id)
    finally:
        close(service)
    return {"own": own}


# -- a process --------------------------------------------------------------------------------------


def child(args: argparse.Namespace) -> int:
    plan = json.loads(Path(args.plan).read_text())
    mine = plan["own"][args.child]
    shared = args.shared
    rng = random.Random(args.child)
    service = open_service(args.database, lease=args.lease)
    log = open(args.out, "w", buffering=1)          # line-buffered: an acknowledged move is on disk at once
    games = {g["id"]: Game("italian") for g in mine}
    ended: set[int] = set()
    events = 0
    latencies: list[float] = []
    try:
        service.thinker.warm(after=0)       # started now, as a bot up 30 s has them
        time.sleep(max(0.0, args.start_at - time.time()))
        started = time.perf_counter()
        end = started + args.seconds
        while time.perf_counter() < end:
            for g in mine:
                game = games[g["id"]]
                if game.result is not None or g["id"] in ended:
                    # Finished: the next game between the two starts in the same chat.
                    g["id"] = start_game(service, g["chat"], g["white"], g["black"])
                    events += 2
                    game = games[g["id"]] = Game("italian")
                move = rng.choice(game.position.legal_moves())
                user = g["white"] if game.position.turn.name.startswith("W") else g["black"]
                t0 = time.perf_counter()
                replies = say(service, g["chat"], user, f"/m #{g['id']} {move}")
                latencies.append(time.perf_counter() - t0)
                events += 1
                if played(replies, g["id"]):
                    game.play(move)
                    log.write(json.dumps({"game": g["id"], "ply": len(game.moves), "move": str(move)}) + "\n")
                else:
                    row = service.game_with_moves(g["id"])[0]
                    if row is not None and row.status != "active":
                        ended.add(g["id"])           # by a rule the local copy does not apply (a draw)
                    else:
                        log.write(json.dumps({"refused": g["id"], "move": str(move), "text": replies[0].text[:80]})
                                  + "\n")
            # A game against the bot (level 1): its moves come through the outbox.
            bot_chat, human = f"bot-{args.child}", f"h{args.child}"
            rows = service.storage.active_games(PLATFORM, bot_chat)
            if not rows:
                say(service, bot_chat, human, "/play italian 1 white")
                events += 1
            elif rows[0].fen.startswith("W"):
                row = rows[0]
                move = rng.choice(Game("italian", row.fen).position.legal_moves())
                replies = say(service, bot_chat, human, f"/m #{row.id} {move}")
                events += 1
                if played(replies, row.id):
                    log.write(json.dumps({"game": row.id, "ply": row.ply + 1, "move": str(move)}) + "\n")
            if shared:
                rows = service.storage.active_games(PLATFORM, SHARED_CHAT)
                if not rows and args.child == 0:
                    start_game(service, SHARED_CHAT, "ws", "bs")
                    events += 2
                elif rows:
                    row = rows[0]
                    position = Game("italian", row.fen).position
                    moves = position.legal_moves()
                    # Different moves where there is a choice, so the stored one says whose won.
                    move = moves[0] if args.child == 0 or len(moves) == 1 else moves[-1]
                    user = "ws" if position.turn.name.startswith("W") else "bs"
                    replies = say(service, SHARED_CHAT, user, f"/m #{row.id} {move}")
                    events += 1
                    if played(replies, row.id):
                        log.write(json.dumps({"game": row.id, "ply": row.ply + 1, "move": str(move)}) + "\n")
            events += deliver(service, log, args.send_ms / 1000)
        elapsed = time.perf_counter() - started
        # What is still due (the bot's last answers, claims a killed process left) goes out before
        # the process ends, as an adapter's last rounds would send it.
        quiet_until = time.monotonic() + 3.0
        while time.monotonic() < quiet_until:
            if deliver(service, log, args.send_ms / 1000):
                quiet_until = time.monotonic() + 3.0
            time.sleep(0.1)
        log.write(json.dumps({"events": events, "seconds": elapsed,
                              "move_ms": statistics.median(latencies) * 1000 if latencies else None}) + "\n")
    finally:
        log.close()
        close(service)
    return 0


def deliver(service: GameService, log: Any, send_seconds: float = 0.005) -> int:
    """An adapter's delivery round: the due work, then each message claimed, sent (a send to a
    platform takes a few milliseconds) and marked sent; how many were sent."""
    service.run_due(PLATFORM)
    sent = 0
    for item in service.pending_messages(PLATFORM, 100):
        time.sleep(send_seconds)
        log.write(json.dumps({"sent": item.id}) + "\n")
        service.message_sent(item.id)
        sent += 1
    return sent


# -- a run ------------------------------------------------------------------------------------------


def launch(args: argparse.Namespace, database: str, plan_file: Path, n: int, out: Path, start_at: float,
           shared: bool, seconds: float, lease: float = 300.0, send_ms: float = 5.0) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, __file__, "--child", str(n), "--database", database,
                             "--plan", str(plan_file), "--out", str(out), "--start-at", repr(start_at),
                             "--seconds", str(seconds), "--lease", str(lease), "--send-ms", str(send_ms)]
                            + (["--shared"] if shared else []), cwd=REPO)


def read_log(out: Path) -> list[dict]:
    if not out.exists():
        return []
    lines = []
    for line in out.read_text().splitlines():
        try:
            lines.append(json.loads(line))
        except json.JSONDecodeError:
            pass                    # a line cut by a kill -9
    return lines


def check(database: str, plan: dict, logs: list[list[dict]]) -> dict[str, int]:
    """Acknowledged moves against the stored ones; messages delivered twice."""
    service = open_service(database)
    try:
        acked: dict[int, list[tuple[int, str]]] = {}
        for entries in logs:
            for e in entries:
                if "game" in e:
                    acked.setdefault(e["game"], []).append((e["ply"], e["move"]))
        lost = doubled = 0
        for game_id, moves in acked.items():
            stored = {m.ply: m.notation.replace("x", "-") for m in service.game_with_moves(game_id)[1]}
            plies = Counter(ply for ply, _ in moves)
            doubled += sum(count - 1 for count in plies.values() if count > 1)
            for ply, move in moves:
                if stored.get(ply) != move.replace("x", "-"):
                    lost += 1
        sent = Counter(e["sent"] for entries in logs for e in entries if "sent" in e)
        return {"acknowledged moves": sum(len(m) for m in acked.values()), "lost": lost, "doubled": doubled,
                "messages": len(sent), "messages twice": sum(1 for c in sent.values() if c > 1),
                "refused own moves": sum(1 for entries in logs for e in entries if "refused" in e)}
    finally:
        close(service)


def run(args: argparse.Namespace, name: str, make_database: Any, processes: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        database = make_database(Path(tmp))
        plan = prepare(database, processes, args.games)
        plan_file = Path(tmp) / "plan.json"
        plan_file.write_text(json.dumps(plan))
        outs = [Path(tmp) / f"child-{n}.jsonl" for n in range(processes)]
        start_at = time.time() + args.startup
        procs = [launch(args, database, plan_file, n, outs[n], start_at, processes > 1, args.seconds)
                 for n in range(processes)]
        codes = [p.wait() for p in procs]
        if any(codes):
            raise SystemExit(f"{name}: a process failed (exit status {codes})")
        logs = [read_log(out) for out in outs]
        totals = [e for entries in logs for e in entries if "events" in e]
        result: dict[str, Any] = {"backend": name, "processes": processes,
                                  "events/s": sum(t["events"] / t["seconds"] for t in totals),
                                  "move ms (median)": statistics.median(t["move_ms"] for t in totals)}
        result.update(check(database, plan, logs))
        return result


def kill_run(args: argparse.Namespace, make_database: Any) -> dict[str, Any]:
    """Two processes on PostgreSQL; one is killed with SIGKILL mid-play; the other goes on."""
    with tempfile.TemporaryDirectory() as tmp:
        database = make_database(Path(tmp))
        plan = prepare(database, 2, args.games)
        plan_file = Path(tmp) / "plan.json"
        plan_file.write_text(json.dumps(plan))
        outs = [Path(tmp) / f"child-{n}.jsonl" for n in range(2)]
        start_at = time.time() + args.startup
        lease = 5.0
        # The victim's sends are slow (200 ms): when it is killed it is most likely holding claims.
        victim = launch(args, database, plan_file, 0, outs[0], start_at, True, args.seconds * 2, lease, send_ms=200)
        survivor = launch(args, database, plan_file, 1, outs[1], start_at, True, args.seconds * 2 + lease + 5, lease)
        time.sleep(max(0.0, start_at - time.time()) + args.seconds)
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        service = open_service(database)
        try:
            claimed = {r.id for r in service.storage.find_outbox(PLATFORM, "pending")
                       if (r.claimed_by or "").endswith(f":{victim.pid}")}
        finally:
            close(service)
        if survivor.wait() != 0:
            raise SystemExit("kill run: the surviving process failed")
        logs = [read_log(out) for out in outs]
        result = check(database, plan, logs)
        service = open_service(database)
        try:
            left = len(service.storage.find_outbox(PLATFORM, "pending"))
        finally:
            close(service)
        result["pending after"] = left
        by_survivor = {e["sent"] for e in logs[1] if "sent" in e}
        result["claimed by the killed process"] = len(claimed)
        result["of those delivered by the other"] = len(claimed & by_survivor)
        return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=15.0, help="how long each run plays")
    parser.add_argument("--games", type=int, default=4, help="games of its own per process")
    parser.add_argument("--startup", type=float, default=6.0, help="seconds given to the processes to start")
    parser.add_argument("--pg-async", action="store_true", help="also PostgreSQL with synchronous_commit=off")
    parser.add_argument("--no-kill", action="store_true", help="skip the kill -9 run")
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--database", help=argparse.SUPPRESS)
    parser.add_argument("--plan", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--start-at", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--lease", type=float, default=300.0, help=argparse.SUPPRESS)
    parser.add_argument("--shared", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--send-ms", type=float, default=5.0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        return child(args)

    from pg_server import started_server

    server = started_server()
    try:
        backends: list[tuple[str, Any]] = [
            ("sqlite", lambda tmp: str(tmp / "bench.db")),
            ("postgresql", lambda tmp: server.new_database()),
        ]
        if args.pg_async:
            backends.append(("postgresql async", lambda tmp: server.new_database()
                             + "?options=-c%20synchronous_commit%3Doff"))
        print(f"python {sys.version.split()[0]}; {os.cpu_count()} CPUs; {args.games} games a process, "
              f"{args.seconds:g} s a run; PostgreSQL in {server.binaries}, fsync on")
        results = {}
        for name, make in backends:
            for processes in (1, 2):
                result = run(args, name, make, processes)
                results[(name, processes)] = result
                print("  " + ", ".join(f"{k}: {v:.2f}" if isinstance(v, float) else f"{k}: {v}"
                                       for k, v in result.items()))
        for name, _ in backends:
            one, two = results[(name, 1)], results[(name, 2)]
            print(f"summary: {name}: two processes {two['events/s']:.1f} events/s, one {one['events/s']:.1f}: "
                  f"{two['events/s'] / one['events/s']:.2f}x")
        for name, _ in backends[1:]:
            ratio = results[(name, 1)]["move ms (median)"] / results[("sqlite", 1)]["move ms (median)"]
            print(f"summary: a move on {name} costs {ratio:.2f}x the same move on SQLite (target <= 1.5x) "
                  f"{'MET' if ratio <= 1.5 else 'MISSED'}")
        two_pg = results[("postgresql", 2)]["events/s"] / results[("postgresql", 1)]["events/s"]
        print(f"summary: two processes on PostgreSQL serve {two_pg:.2f}x one (target >= 1.5x) "
              f"{'MET' if two_pg >= 1.5 else 'MISSED'}")
        bad = sum(r["lost"] + r["doubled"] + r["messages twice"] for r in results.values())
        print(f"summary: lost + doubled moves + doubled messages over every run: {bad} (target 0)")
        if not args.no_kill:
            killed = kill_run(args, lambda tmp: server.new_database())
            print("kill -9 of one of two processes on PostgreSQL: "
                  + ", ".join(f"{k}: {v}" for k, v in killed.items()))
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
