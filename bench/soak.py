"""Soak: many games through the service on a real SQLite file, the outbox drained as an adapter
drains it; how much the database grows per game and how big a stored outbox row is.

The mix, repeated: a game between two people (random legal moves, resigned after ``--plies``
plies if still on), a game against the bot (level 1, the engine pool of one worker; the human
resigns after ``--bot-moves`` moves), a game lost on time (two moves, then the clock passes the
move time).  A few chats take the daily puzzle; the service's clock (a fake one, starting at a
fixed date) moves one day every ``--games-per-day`` games, so each day posts them.  After every
game the due work runs and the outbox is drained as the adapters do (``pending_messages`` ->
"send" -> ``message_sent``; with ``--send-ms``, by the adapters' own delivery code,
``bot.platforms.base``, on a platform that takes each message after that many milliseconds).
Everything goes through ``GameService.handle`` with chat events, as the console does; the moves
are chosen with ``bot.rules`` from the stored position.

Run from the repository root::

    python bench/soak.py                       # 90 games, about 20 s
    python bench/soak.py --games 552           # the issue's count, about 2 to 3 minutes
    python bench/soak.py --seconds 300         # as many games as fit in 5 minutes
    python bench/soak.py --db /tmp/soak.db     # keep the database (else a temporary one)
    python bench/soak.py --seconds 180 --send-ms 30 --chats 40 --daily-chats 40
                                               # delivered by the adapters' loop, 30 ms a message

Prints games played, the database file (after a WAL checkpoint) against a fresh one, bytes per
game, the bytes each table holds (SQLite's dbstat, when compiled in), and the outbox's rows (per
status) with their average and largest stored size (the sum of the row's values).  The outbox is
the table named ``outbox`` (else the first whose name has "outbox" or "notif"; ``--outbox-table``
names another).  Issue 18 target: a stored row <= 1 KB; the same soak grows the database <= 10 %
of what it grows before.

Also prints the outbox messages delivered per second of the whole soak (the games' own work
included) and per second of delivering (the drains), and how many pictures were drawn and found
drawn already (issue 30, item 8: >= 28 messages/s of the soak on this machine; the load average at
the start and end is printed beside it, since the machine is shared).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import random
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
# One engine process: the machine is shared, and the soak measures storage, not search speed.
os.environ.setdefault("DRAUGHTS_AI_WORKERS", "1")

from bot import config  # noqa: E402
from bot.platforms.base import TRANSIENT, ChatAdapter, Piece  # noqa: E402
from bot.rules import Game  # noqa: E402
from bot.service import ChatEvent, GameService  # noqa: E402
from bot.service.thinking import Thinker  # noqa: E402
from bot.storage import SQLiteStore  # noqa: E402

try:        # the pictures' cache by what they show (issue 30, item 8); older trees have none
    from bot.service.chat.boards import drawing_counts as boards_drawn  # noqa: E402
except ImportError:
    boards_drawn = None

PLATFORM = "console"
VARIANTS = ("italian", "spanish", "triestina")
LANGS = ("en", "es", "it")
# The fake clock starts here (a Monday, 10:00 UTC): the same run gives the same dates.
START = dt.datetime(2026, 1, 5, 10, 0, tzinfo=dt.UTC).timestamp()


class Clock:
    """The service's clock: moved by the script, never by the wall clock."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def make_service(db: Path, clock: Callable[[], float], seed: int, bot_seconds: float) -> GameService:
    """The service on a SQLite file (the one place to adapt if the construction changes)."""
    return GameService(SQLiteStore(db), clock=clock, rng=random.Random(seed), bot_seconds=bot_seconds,
                       thinker=Thinker(workers=config.load().ai_workers))


def close_service(service: GameService) -> None:
    service.close()
    storage = getattr(service, "storage", None)
    if storage is not None and hasattr(storage, "close"):
        storage.close()


class Delivery:
    """Seconds spent delivering (the due work, claiming, wording and drawing, marking sent)."""

    seconds = 0.0


def drain(service: GameService, platform: str = PLATFORM, send: Callable[[object], None] | None = None) -> int:
    """The due work, then every pending outbox message 'sent' and marked sent, as the adapters'
    delivery round does (bot/platforms/base.py).  How many were sent."""
    started = time.perf_counter()
    try:
        return _drain(service, platform, send)
    finally:
        Delivery.seconds += time.perf_counter() - started


def _drain(service: GameService, platform: str, send: Callable[[object], None] | None) -> int:
    sent = 0
    run_due = getattr(service, "run_due", None)
    if run_due is not None:
        run_due(platform)
    else:
        # Without run_due, tick does the due work and hands over (marked sent) what it wrote.
        sent += len(service.tick(platform=platform))
    while True:
        items = service.pending_messages(platform, 50)
        if not items:
            return sent
        for item in items:
            if send is not None:
                send(item)
            service.message_sent(item.id)
            sent += 1


class BenchPlatform(ChatAdapter):
    """The adapters' shared delivery code (claims, a worker per chat, drawing, marking sent) on a
    platform that takes every message after ``send_seconds`` (its network round trip)."""

    platform = PLATFORM
    text_limit = 4096
    caption_limit = 1024

    def __init__(self, service: GameService, send_seconds: float) -> None:
        super().__init__(service)
        self.send_seconds = send_seconds
        self.messages = 0
        self.loop = asyncio.new_event_loop()

    async def send_piece(self, chat_id: str, piece: Piece, *, reply_to: str | None = None) -> str | None:
        await asyncio.sleep(self.send_seconds)
        self.messages += 1
        return str(self.messages)

    def failure_kind(self, exc: BaseException) -> str:
        return TRANSIENT

    def drain(self) -> int:
        """One delivery round (the due work, then every pending row), waited for."""
        started = time.perf_counter()
        try:
            return self.loop.run_until_complete(self.delivery_round())
        finally:
            Delivery.seconds += time.perf_counter() - started


class Soak:
    def __init__(self, service: GameService, clock: Clock, rng: random.Random, plies: int, bot_moves: int,
                 platform: BenchPlatform | None = None) -> None:
        self.service = service
        self.platform = platform
        self.clock = clock
        self.rng = rng
        self.plies = plies
        self.bot_moves = bot_moves
        self.sent = 0
        self.events = 0

    def say(self, chat: str, user: str, text: str, lang: str = "en") -> list:
        self.events += 1
        return self.service.handle(ChatEvent(platform=PLATFORM, chat_id=chat, user_id=user, user_name=user.title(),
                                             username=user, language=lang, text=text, is_admin=True))

    def drain(self) -> None:
        self.sent += drain(self.service) if self.platform is None else self.platform.drain()

    def game_of(self, replies: list) -> int:
        for reply in replies:
            if reply.game_id is not None:
                return reply.game_id
        raise SystemExit(f"no game started: {[r.text for r in replies]}")

    def play_random(self, chat: str, game_id: int, movers: dict[str, str], plies: int, lang: str) -> bool:
        """Random legal moves by whoever of ``movers`` ('W'/'B' -> user) is to move; the bot's
        turns are waited for.  True when the game ended."""
        played = 0
        while played < plies:
            row = self.service.game_with_moves(game_id)[0]
            if row is None or row.status != "active":
                return True
            game = Game(row.variant, row.fen)
            side = "W" if game.position.turn.name.startswith("W") else "B"
            user = movers.get(side)
            if user is None:               # the bot's turn
                if not self.service.settle(30):
                    raise SystemExit("the bot did not move within 30 s")
                self.drain()
                row = self.service.game_with_moves(game_id)[0]
                if row is not None and row.fen == game.position.fen() and row.status == "active":
                    raise SystemExit(f"the bot did not move in game {game_id}")
                continue
            move = self.rng.choice(game.position.legal_moves())
            self.say(chat, user, f"/m #{game_id} {move}", lang)
            played += 1
        row = self.service.game_with_moves(game_id)[0]
        return row is None or row.status != "active"

    def people_game(self, n: int, chat: str, lang: str, players: list[str]) -> None:
        white, black = self.rng.sample(players, 2)
        variant = VARIANTS[n % len(VARIANTS)]
        self.say(chat, white, f"/new {variant} white", lang)
        gid = self.game_of(self.say(chat, black, "/accept", lang))
        if not self.play_random(chat, gid, {"W": white, "B": black}, self.plies, lang):
            loser = self.rng.choice((white, black))
            self.say(chat, loser, f"/resign #{gid}", lang)
            self.say(chat, loser, f"/resign #{gid}", lang)      # the confirmation it asks for
        self.drain()
        self.ended(gid)

    def bot_game(self, n: int, chat: str, lang: str, players: list[str]) -> None:
        human = self.rng.choice(players)
        variant = VARIANTS[n % len(VARIANTS)]
        gid = self.game_of(self.say(chat, human, f"/play {variant} 1 white", lang))
        if not self.play_random(chat, gid, {"W": human}, self.bot_moves, lang):
            # The bot's answer first: a move between the two /resign lapses the question.
            self.service.settle(30)
            self.say(chat, human, f"/resign #{gid}", lang)
            self.say(chat, human, f"/resign #{gid}", lang)
        self.service.settle(30)
        self.drain()
        self.ended(gid)

    def timeout_game(self, n: int, chat: str, lang: str, players: list[str]) -> None:
        white, black = self.rng.sample(players, 2)
        variant = VARIANTS[n % len(VARIANTS)]
        self.say(chat, white, f"/new {variant} white 5m", lang)
        gid = self.game_of(self.say(chat, black, "/accept", lang))
        self.play_random(chat, gid, {"W": white, "B": black}, 2, lang)
        self.clock.now += 6 * 60
        self.drain()
        self.ended(gid)

    def ended(self, game_id: int) -> None:
        row = self.service.game_with_moves(game_id)[0]
        if row is not None and row.status == "active":
            raise SystemExit(f"game {game_id} did not end (ply {row.ply})")


def table_bytes(conn: sqlite3.Connection) -> dict[str, int]:
    """Bytes on disk per table (its indexes included), from SQLite's dbstat; {} without it."""
    try:
        rows = conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name").fetchall()
        owners = dict(conn.execute("SELECT name, tbl_name FROM sqlite_master WHERE type IN ('table', 'index')"))
    except sqlite3.DatabaseError:
        return {}
    out: dict[str, int] = {}
    for name, size in rows:
        table = owners.get(name, name)
        out[table] = out.get(table, 0) + size
    return out


def outbox_table(conn: sqlite3.Connection, name: str | None) -> str | None:
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
    if name:
        return name if name in tables else None
    if "outbox" in tables:
        return "outbox"
    return next((t for t in tables if "outbox" in t or "notif" in t), None)


def row_sizes(conn: sqlite3.Connection, table: str) -> tuple[dict[str, int], list[int]]:
    """Rows per status (if the table has one) and each row's stored size (its values' bytes)."""
    cur = conn.execute(f'SELECT * FROM "{table}"')
    columns = [c[0] for c in cur.description]
    status = columns.index("status") if "status" in columns else None
    per_status: dict[str, int] = {}
    sizes = []
    for row in cur:
        size = 0
        for value in row:
            if isinstance(value, bytes):
                size += len(value)
            elif isinstance(value, str):
                size += len(value.encode())
            elif value is not None:
                size += 8
        sizes.append(size)
        key = str(row[status]) if status is not None else "all"
        per_status[key] = per_status.get(key, 0) + 1
    return per_status, sizes


def file_size(db: Path) -> int:
    """The database's bytes after a WAL checkpoint (what stays on disk)."""
    conn = sqlite3.connect(db)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    finally:
        conn.close()
    return sum(p.stat().st_size for p in (db, Path(f"{db}-wal")) if p.exists())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=90, help="games to play (the mix repeats every 3)")
    parser.add_argument("--seconds", type=float, default=None, help="stop after this long (wall clock)")
    parser.add_argument("--db", type=Path, default=None, help="the database file (kept); default: a temporary one")
    parser.add_argument("--plies", type=int, default=40, help="plies of a game between people before a resign")
    parser.add_argument("--bot-moves", type=int, default=10, help="human moves against the bot before a resign")
    parser.add_argument("--bot-seconds", type=float, default=0.05, help="the bot's time per move")
    parser.add_argument("--chats", type=int, default=6)
    parser.add_argument("--daily-chats", type=int, default=3, help="chats that take the daily puzzle")
    parser.add_argument("--games-per-day", type=int, default=30, help="games before the clock moves a day")
    parser.add_argument("--outbox-table", default=None)
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--send-ms", type=float, default=None,
                        help="deliver with the adapters' code (bot/platforms/base.py), each message taking this long")
    args = parser.parse_args()
    if args.seconds is not None and args.games == parser.get_default("games"):
        args.games = 10**9
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or Path(tmp) / "soak.db"
        if db.exists():
            raise SystemExit(f"{db} exists: the soak starts from an empty database")
        fresh = Path(tmp) / "fresh.db"
        SQLiteStore(fresh).close()
        empty = file_size(fresh)
        rng = random.Random(args.seed)
        clock = Clock(START)
        service = make_service(db, clock, args.seed, args.bot_seconds)
        platform = None if args.send_ms is None else BenchPlatform(service, args.send_ms / 1000)
        soak = Soak(service, clock, rng, args.plies, args.bot_moves, platform)
        chats = [f"club-{n}" for n in range(args.chats)]
        players = [f"p{n}" for n in range(12)]
        for n, chat in enumerate(chats[:args.daily_chats]):
            soak.say(chat, "admin", f"/daily on 09:00 UTC {VARIANTS[n % len(VARIANTS)]}", LANGS[n % len(LANGS)])
        kinds = (soak.people_game, soak.bot_game, soak.timeout_game)
        counts = dict.fromkeys(("people", "bot", "timeout"), 0)
        load_started = os.getloadavg()[0]
        started = time.perf_counter()
        games = days = 0
        try:
            while games < args.games and (args.seconds is None or time.perf_counter() - started < args.seconds):
                chat = chats[games % len(chats)]
                kind = kinds[games % len(kinds)]
                kind(games, chat, LANGS[(games // len(chats)) % len(LANGS)], players)
                counts[("people", "bot", "timeout")[games % len(kinds)]] += 1
                games += 1
                if games % args.games_per_day == 0:
                    clock.now += 86400
                    days += 1
                    soak.drain()
            soak.drain()
        finally:
            if platform is not None:
                platform.loop.close()
            close_service(service)
        elapsed = time.perf_counter() - started
        size = file_size(db)
        conn = sqlite3.connect(db)
        try:
            per_table = table_bytes(conn)
            table = outbox_table(conn, args.outbox_table)
            per_status, sizes = row_sizes(conn, table) if table else ({}, [])
            games_stored = conn.execute("SELECT count(*) FROM games").fetchone()[0]
            active = conn.execute("SELECT count(*) FROM games WHERE status='active'").fetchone()[0]
        finally:
            conn.close()
    print(f"python {sys.version.split()[0]}, seed {args.seed}, {elapsed:.0f} s wall, "
          f"{os.getloadavg()[0]:.2f} load (1 min) at the end ({load_started:.2f} at the start)")
    print(f"games played: {games} ({counts['people']} between people, {counts['bot']} against the bot, "
          f"{counts['timeout']} lost on time); {games_stored} in the database ({active} still active); "
          f"{days} simulated days of daily posts in {min(args.daily_chats, args.chats)} chats; "
          f"{soak.events} chat events; {soak.sent} outbox messages delivered")
    # Issue 30, item 8: messages delivered per second of the soak (the games' own work included),
    # and per second of delivering (the drains: due work, claiming, wording, drawing, marking).
    drawn = boards_drawn() if boards_drawn is not None else None
    print(f"delivered: {soak.sent / elapsed:.1f} messages/s of the soak's {elapsed:.1f} s; the delivery rounds "
          f"took {Delivery.seconds:.1f} s of it, {soak.sent / max(Delivery.seconds, 1e-9):.1f} messages/s while "
          f"delivering" + (f"; pictures drawn {drawn[0]}, found drawn already {drawn[1]}" if drawn else ""))
    grown = size - empty
    print(f"database: {size:,} bytes ({size / 1e6:.1f} MB), a fresh one {empty:,}; grown {grown:,} bytes, "
          f"{grown / max(games, 1):,.0f} bytes per game")
    if per_table:
        top = sorted(per_table.items(), key=lambda kv: -kv[1])
        print("bytes per table (with its indexes): " + ", ".join(f"{k} {v:,}" for k, v in top if v > 4096))
    if table is None:
        print("outbox: no outbox table found (name it with --outbox-table)")
    else:
        total = sum(sizes)
        print(f"outbox ({table}): {len(sizes)} rows ({', '.join(f'{k} {v}' for k, v in sorted(per_status.items()))}); "
              f"stored row size: average {total / max(len(sizes), 1):,.0f} bytes, largest {max(sizes, default=0):,} "
              f"bytes, all rows {total:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
