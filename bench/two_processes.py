"""Two processes on one SQLite file, each doing the service's due work and draining the outbox as
the adapters do: how many messages were delivered twice.

The database is prepared first (through the service, with its clock set back): chats that take
the daily puzzle with today's post due, games whose move time ran out an hour ago, games against
the bot with the human to move.  Then two OS processes start at the same instant, each with its
own service on the file (the real engine pool, one worker).  Each one, in a loop, does what
bot/platforms/base.py does in a delivery round: ``run_due(platform)`` (falling back to
``tick(platform=...)`` if the service has no ``run_due``), then ``pending_messages`` -> "send"
(a pause of ``--send-ms``, as a call to the platform takes) -> ``message_sent``; and, as a chat
event would come to one process only, each plays the human's moves in half of the bot games
(through ``handle``).  The bot's moves, the time-outs and the daily posts are written by whichever
process gets to them.  They stop when all is delivered and nothing happened for ``--idle``
seconds.

A message is one outbox row (its id); one delivered twice is a row both processes (or one
process twice) sent.  Also counted: the same text delivered twice to the same chat under
different ids (the same event written twice).  Issue 18 measured 14 of 37 messages sent twice
before the outbox claimed rows; the target is 0 (a crash between send and mark may still repeat
one).  Only the service's public methods are used (handle, run_due/tick, pending_messages,
message_sent, game_with_moves, settle, close).

Run from the repository root::

    python bench/two_processes.py                    # about 10 s
    python bench/two_processes.py --bot-games 6 --human-moves 4 --runs 3

Exit status 0 whatever the count (it is a measurement); 1 only if the run itself failed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("DRAUGHTS_AI_WORKERS", "1")

from bot import config  # noqa: E402
from bot.rules import Game  # noqa: E402
from bot.service import ChatEvent, GameService  # noqa: E402
from bot.service.thinking import Thinker  # noqa: E402
from bot.storage import SQLiteStore  # noqa: E402

PLATFORM = "console"


def make_service(db: Path, clock=None, bot_seconds: float = 0.05) -> GameService:
    """The service on the file (the one place to adapt if the construction changes)."""
    # The engine pool as the bot sizes it: $DRAUGHTS_AI_WORKERS (1 here), read by bot.config.
    thinker = Thinker(workers=config.load().ai_workers)
    if clock is None:
        return GameService(SQLiteStore(db), bot_seconds=bot_seconds, thinker=thinker)
    return GameService(SQLiteStore(db), clock=clock, bot_seconds=bot_seconds, thinker=thinker)


def close_service(service: GameService) -> None:
    service.close()
    storage = getattr(service, "storage", None)
    if storage is not None and hasattr(storage, "close"):
        storage.close()


def say(service: GameService, chat: str, user: str, text: str) -> list:
    return service.handle(ChatEvent(platform=PLATFORM, chat_id=chat, user_id=user, user_name=user.title(),
                                    username=user, language="en", text=text, is_admin=True))


def game_of(replies: list) -> int:
    for reply in replies:
        if reply.game_id is not None:
            return reply.game_id
    raise SystemExit(f"no game started: {[r.text for r in replies]}")


def prepare(db: Path, dailies: int, clocks: int, bot_games: int) -> list[int]:
    """The database with work due for both processes; the bot games' ids."""
    real = time.time()
    now = [real - 86400]
    service = make_service(db, clock=lambda: now[0])
    try:
        # Subscribed yesterday for a time two minutes ago: today's post is due.
        at = dt.datetime.fromtimestamp(max(real - 120, real - real % 86400), dt.UTC).strftime("%H:%M")
        for n in range(dailies):
            say(service, f"daily-{n}", "admin", f"/daily on {at} UTC italian")
        # Started an hour ago with 5 minutes a move: every clock has run out.
        now[0] = real - 3600
        for n in range(clocks):
            say(service, f"clock-{n}", f"white{n}", "/new italian white 5m")
            say(service, f"clock-{n}", f"black{n}", "/accept")
        now[0] = real
        ids = [game_of(say(service, f"bot-{n}", f"human{n}", "/play italian 1 white")) for n in range(bot_games)]
    finally:
        close_service(service)
    return ids


def delivery_round(service: GameService, send_seconds: float, delivered: list) -> int:
    """What an adapter's delivery round does (bot/platforms/base.py): the due work, then every
    pending message sent and marked sent."""
    run_due = getattr(service, "run_due", None)
    if run_due is not None:
        run_due(PLATFORM)
    else:
        for out in service.tick(platform=PLATFORM):
            delivered.append([None, out.chat_id, out.reply.text, time.time()])
    sent = 0
    while True:
        items = service.pending_messages(PLATFORM, 50)
        if not items:
            return sent
        for item in items:
            reply = getattr(item, "reply", None)
            text = getattr(reply, "text", None) if reply is not None else None
            time.sleep(send_seconds)             # the call to the platform
            delivered.append([item.id, getattr(item, "chat_id", "?"), text if text is not None else repr(item),
                              time.time()])
            service.message_sent(item.id)
            sent += 1


def child(args: argparse.Namespace) -> int:
    games = json.loads(args.games_json)
    mine = [gid for n, gid in enumerate(games) if n % 2 == args.child]
    rng = random.Random(1000 + args.child)
    service = make_service(Path(args.db), bot_seconds=args.bot_seconds)
    delivered: list = []
    moves = dict.fromkeys(mine, 0)
    try:
        service.thinker.warm(after=0)       # started now, as a bot up 30 s has them
        time.sleep(max(0.0, args.start_at - time.time()))
        quiet_since = time.time()
        give_up = time.time() + args.longest
        while time.time() < give_up:
            busy = delivery_round(service, args.send_ms / 1000, delivered) > 0
            for gid in mine:
                if moves[gid] >= args.human_moves:
                    continue
                row = service.game_with_moves(gid)[0]
                if row is None or row.status != "active":
                    moves[gid] = args.human_moves
                    continue
                game = Game(row.variant, row.fen)
                if not game.position.turn.name.startswith("W"):
                    continue                      # the bot's turn (the human plays white)
                move = rng.choice(game.position.legal_moves())
                say(service, row.chat_id, row.white_id, f"/m #{gid} {move}")
                moves[gid] += 1
                busy = True
            if busy:
                quiet_since = time.time()
            elif time.time() - quiet_since > args.idle and all(m >= args.human_moves for m in moves.values()):
                break
            time.sleep(0.02)
    finally:
        close_service(service)
    Path(args.out).write_text(json.dumps(delivered))
    return 0


def run_once(args: argparse.Namespace, run: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "two.db"
        games = prepare(db, args.dailies, args.clocks, args.bot_games)
        start_at = time.time() + args.startup
        outs = [Path(tmp) / f"child-{n}.json" for n in range(2)]
        procs = [subprocess.Popen([sys.executable, __file__, "--child", str(n), "--db", str(db), "--out", str(outs[n]),
                                   "--games-json", json.dumps(games), "--start-at", repr(start_at),
                                   "--send-ms", str(args.send_ms), "--human-moves", str(args.human_moves),
                                   "--bot-seconds", str(args.bot_seconds), "--idle", str(args.idle),
                                   "--longest", str(args.longest)], cwd=REPO)
                 for n in range(2)]
        codes = [p.wait() for p in procs]
        if any(codes):
            raise SystemExit(f"a process failed: exit status {codes}")
        per_process = [json.loads(out.read_text()) for out in outs]
        check = make_service(db)
        try:
            left = len(check.pending_messages(PLATFORM, 1000))
        finally:
            close_service(check)
    by_id: Counter = Counter()
    by_text: dict[tuple[str, str], set] = {}
    kinds: dict = {}
    for entries in per_process:
        for item_id, chat, text, _ in entries:
            key = item_id if item_id is not None else (chat, text)
            by_id[key] += 1
            by_text.setdefault((chat, text), set()).add(key)
            kinds[key] = chat.rsplit("-", 1)[0]
    twice = [key for key, count in by_id.items() if count > 1]
    same_text = sum(len(ids) - 1 for ids in by_text.values() if len(ids) > 1)
    per_kind = Counter(kinds[key] for key in twice)
    all_kinds = Counter(kinds.values())
    return {"run": run, "messages": len(by_id), "deliveries": sum(by_id.values()),
            "by process": [len(entries) for entries in per_process], "twice": len(twice),
            "twice per kind": {k: f"{per_kind.get(k, 0)}/{all_kinds[k]}" for k in sorted(all_kinds)},
            "same text under another id": same_text, "left pending": left}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dailies", type=int, default=8, help="chats whose daily post is due")
    parser.add_argument("--clocks", type=int, default=8, help="games out of time")
    parser.add_argument("--bot-games", type=int, default=6, help="games against the bot (level 1)")
    parser.add_argument("--human-moves", type=int, default=3, help="human moves per bot game")
    parser.add_argument("--send-ms", type=float, default=20.0, help="how long one send takes")
    parser.add_argument("--bot-seconds", type=float, default=0.05)
    parser.add_argument("--idle", type=float, default=3.0, help="stop after this long with nothing to do")
    parser.add_argument("--longest", type=float, default=120.0, help="stop after this long in any case")
    parser.add_argument("--startup", type=float, default=4.0, help="seconds given to both processes to start")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--games-json", help=argparse.SUPPRESS)
    parser.add_argument("--start-at", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        return child(args)
    print(f"python {sys.version.split()[0]}; {args.dailies} daily posts, {args.clocks} time-outs, {args.bot_games} "
          f"bot games x {args.human_moves} human moves; a send takes {args.send_ms:g} ms")
    total = twice = 0
    for run in range(1, args.runs + 1):
        result = run_once(args, run)
        total += result["messages"]
        twice += result["twice"]
        print("  " + ", ".join(f"{k}: {v}" for k, v in result.items()))
    print(f"summary: {twice} of {total} messages delivered twice (two processes, one SQLite file; target 0); "
          f"load {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
