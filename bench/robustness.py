"""Robustness benchmark: what issues 6 and 21 measured, re-measured.

1. kill -9 restarts: a `python -m bot console` process plays moves fed on its standard input and
   is killed with SIGKILL at a random moment, N times; after each kill the database must hold
   every move the console acknowledged ("X played M (game #N)").  Lost moves must be 0.
2. Racing moves: pairs of processes (forked, each with its own connection) send a move for the
   same game at the same instant, half of the pairs the same move, half two different moves;
   exactly one of each pair may win, and the game must advance by exactly one ply.
3. A held lock: another connection holds a write transaction for 10 s while chat events arrive;
   every event must still get an answer.  Prints the time to answer per kind of event.
4. kill -9 against the bot: games against the bot's engine pool (level 1), a human move at a time,
   the console killed at random; every acknowledged move (the human's and the bot's) must be
   stored, and a bot that was to move when the console died must move after the restart.  Also
   counts the engine processes a kill left behind (orphans).
5. kill -9 during a daily burst: many chats' daily puzzles due at once, the console killed while
   it posts them; each chat must get its day's puzzle exactly once in the database, and printed
   (delivered) at least once.
6. kill -9 during clocks: many games out of time at once; each must end exactly once, with one
   message.
7. kill -9 during a ratings rebuild (`python -m bot ratings rebuild`): after every kill the
   ratings are either all old or all new, never a mix.
8. Two processes, one outbox: two consoles drain the same pending messages at once; how many
   were printed twice.
9. Hostile input: every kind of text and button data a user can send, through the service: no
   exception, no internal error, and nothing changed by input that must change nothing.
10. The start-up check on a big database (50,000 games of 40 moves): quick_check against the full
   integrity_check the bot runs.
11. The adapters: the real python-telegram-bot Application and the real discord.py bot, only their
   HTTP faked (the strict fakes of the adapter tests), each take a few hundred hostile updates
   (garbage button data and custom ids, long and unicode texts, unknown and malformed commands,
   moves in games that do not exist, presses on another chat's messages, anonymous admins and
   channels, option values of other types) mixed with play, while failures are injected below
   the libraries (5xx, 429 with retry_after, 403, 400/404).  Handler exceptions logged,
   internal-error answers and requests the fake refused on its own must be 0, and every stored
   game must replay (bot.rules) to its stored position.

Children are started in their own session with their output going to files, never to pipes this
process reads: an engine worker that outlives a killed console holds nothing the bench waits
for; after each kill the session is searched for such orphans (counted) and they are killed.

Run from the repository root::

    python bench/robustness.py                 # about 6 to 8 minutes
    python bench/robustness.py --restarts 20 --pairs 20 --hold 3 --quick
    python bench/robustness.py --only 4,5
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import logging
import multiprocessing
import os
import random
import re
import signal
import sqlite3
import statistics
import string
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bot.i18n import t  # noqa: E402
from bot.rules import Game  # noqa: E402
from bot.service import ChatEvent, GameService, Reply  # noqa: E402
from bot.service.chat.registry import REGISTRY  # noqa: E402
from bot.storage import BOT_ID  # noqa: E402
from bot.storage import SQLiteStore as Storage  # noqa: E402

ACK = re.compile(r"\] bot(?: → \S+)?: (.+?) played (\S+) \(game #(\d+)\)")
NAMES = {"W": "Ana", "B": "Bob"}


def bench_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_BOT_TOKEN")}
    env.update(PYTHONPATH=str(REPO), LANG="en_US.UTF-8", LOG_LEVEL="ERROR", DRAUGHTS_AI_WORKERS="1")
    return env


def session_processes(sid: int) -> list[int]:
    """The processes still alive in a session (a console's engine workers after it was killed)."""
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # After the command: state, ppid, pgrp, session.
        if int(fields[3]) == sid and fields[0] != "Z":
            alive.append(int(entry.name))
    return alive


# How long processes of a killed console may take to end before they count as left behind.
ORPHAN_GRACE = 3.0

class Console:
    """`python -m bot console` on a database, in its own session, its output going to a file."""

    count = 0

    def __init__(self, db: Path, folder: Path, *args: str) -> None:
        Console.count += 1
        self.out_path = folder / f"console-{Console.count}.out"
        self._out = self.out_path.open("w")
        self.started = time.perf_counter()
        self.proc = subprocess.Popen([sys.executable, "-m", "bot", "console", "--db", str(db), "--images",
                                      str(folder / "boards"), *args], stdin=subprocess.PIPE, stdout=self._out,
                                     stderr=subprocess.DEVNULL, env=bench_env(), cwd=folder, text=True,
                                     start_new_session=True)

    def send(self, lines: list[str]) -> bool:
        try:
            self.proc.stdin.write("\n".join(lines) + "\n")
            self.proc.stdin.flush()
            return True
        except (BrokenPipeError, ValueError):
            return False

    def output(self) -> str:
        return self.out_path.read_text(errors="replace")

    def wait_started(self, timeout: float = 30.0) -> float:
        while not self.output() and self.proc.poll() is None and time.perf_counter() - self.started < timeout:
            time.sleep(0.005)
        return time.perf_counter() - self.started

    def kill(self) -> int:
        """SIGKILL to the console alone (as the OOM killer or `kill -9` would); the engine
        processes it leaves behind are counted, then killed."""
        self.proc.send_signal(signal.SIGKILL)
        return self._reap()

    def finish(self, timeout: float = 120.0) -> int:
        """End of input: the console stops on its own; what it left behind, as for kill."""
        with contextlib.suppress(BrokenPipeError, ValueError):
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        return self._reap()

    def _reap(self) -> int:
        self.proc.wait()
        with contextlib.suppress(BrokenPipeError, ValueError):
            self.proc.stdin.close()
        # Engine workers end with the console (a watchdog and, on Linux, PDEATHSIG); one that was
        # still starting when the kill came takes its watchdog's tick to notice: left behind is
        # what still runs after ORPHAN_GRACE seconds.
        give_up = time.perf_counter() + ORPHAN_GRACE
        orphans = session_processes(self.proc.pid)
        while orphans and time.perf_counter() < give_up:
            time.sleep(0.05)
            orphans = session_processes(self.proc.pid)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self._out.close()
        return len(orphans)


def acks(text: str) -> dict[int, list[tuple[str, str]]]:
    """Acknowledged moves per game, in the order printed: (who, move)."""
    out: dict[int, list[tuple[str, str]]] = {}
    for line in text.splitlines():
        match = ACK.search(line)
        if match:
            out.setdefault(int(match.group(3)), []).append((match.group(1), match.group(2)))
    return out


# -- 1. kill -9 restarts --------------------------------------------------------------------------


def db_state(db: Path) -> tuple[dict | None, list[dict]]:
    """The active game (or None) and the open challenges, read without the bot."""
    if not db.exists():
        return None, []
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        game = conn.execute("SELECT * FROM games WHERE status='active' ORDER BY id DESC LIMIT 1").fetchone()
        challenges = conn.execute("SELECT * FROM challenges WHERE status='open' ORDER BY id").fetchall()
        return (dict(game) if game else None), [dict(c) for c in challenges]
    except sqlite3.OperationalError:       # no tables yet (killed before the first migration)
        return None, []
    finally:
        conn.close()


def stored_moves(db: Path, game_id: int) -> list[str]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return [r[0] for r in conn.execute("SELECT notation FROM moves WHERE game_id=? ORDER BY ply", (game_id,))]
    finally:
        conn.close()


def script(db: Path, rng: random.Random, moves: int) -> tuple[list[str], int | None]:
    """Input lines for one run: start or resume a game, then ``moves`` random legal moves."""
    game, challenges = db_state(db)
    lines: list[str] = []
    if game is None:
        if challenges:
            lines += ["/as Bob", f"/accept #{challenges[0]['id']}"]
        else:
            lines += ["/as Ana", "/new italian white 7d", "/as Bob", "/accept"]
        engine, game_id = Game("italian", draw_rules=False), None
    else:
        engine, game_id = Game(game["variant"], game["fen"], draw_rules=False), game["id"]
    for _ in range(moves):
        if engine.result is not None:
            break
        legal = engine.position.legal_moves()
        if not legal:
            break
        move = rng.choice(legal)
        lines += [f"/as {NAMES[engine.position.turn]}", f"/m {move}"]
        engine.play(move)
    return lines, game_id


def kill_restarts(restarts: int, seed: int) -> dict:
    rng = random.Random(seed)
    acked_total = lost = wrong = orphans = 0
    startup: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "kill.db"
        for _ in range(restarts):
            before: dict[int, int] = {}
            game, _ = db_state(db)
            if game:
                before[game["id"]] = len(stored_moves(db, game["id"]))
            lines, _ = script(db, rng, moves=40)
            console = Console(db, Path(tmp))
            startup.append(console.wait_started())
            console.send(lines)
            time.sleep(rng.uniform(0.0, 1.5))
            orphans += console.kill()
            for game_id, moves in acks(console.output()).items():
                notations = [move for _who, move in moves]
                acked_total += len(notations)
                stored = stored_moves(db, game_id)
                start = before.get(game_id, 0)
                # Input is handled line by line, so at most the move being printed is stored unacknowledged.
                lost += max(0, start + len(notations) - len(stored))
                if stored[start:start + len(notations)] != notations[:max(0, len(stored) - start)]:
                    wrong += 1
        conn = sqlite3.connect(db)
        games = conn.execute("SELECT count(*), coalesce(sum(ply), 0) FROM games").fetchone()
        check = conn.execute("PRAGMA integrity_check").fetchone()[0]
        conn.close()
    return {"restarts": restarts, "acknowledged": acked_total, "lost": lost, "mismatched runs": wrong,
            "games": games[0], "moves stored": games[1], "integrity": check,
            "engine processes left behind by the kills": orphans,
            "start-up median s": statistics.median(startup)}


# -- 2. racing moves --------------------------------------------------------------------------------


def _racer(db: str, barrier, results, user: str, text: str) -> None:
    storage = Storage(db)
    service = GameService(storage)
    barrier.wait()
    replies = service.handle(ChatEvent(platform="bench", chat_id="race", user_id=user, user_name=user.title(),
                                       username=user, language="en", text=text))
    storage.close()
    results.put(" | ".join(r.text for r in replies))


def racing_moves(pairs: int, seed: int) -> dict:
    rng = random.Random(seed)
    ctx = multiprocessing.get_context("fork")
    outcomes = {"same": [0, 0], "different": [0, 0]}      # [pairs with exactly one winner, pairs]
    plies_ok = 0
    internal = 0
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "race.db")
        storage = Storage(db)
        service = GameService(storage, rng=random.Random(seed))

        def say(user: str, text: str) -> list:
            return service.handle(ChatEvent(platform="bench", chat_id="race", user_id=user,
                                            user_name=user.title(), username=user, language="en", text=text))

        game_id = None
        for n in range(pairs):
            row = storage.game(game_id) if game_id else None
            if row is None or row.status != "active":
                say("ana", "/new italian white 7d")
                say("bob", "/accept")
                game_id = storage.active_games("bench", "race")[-1].id
                row = storage.game(game_id)
            engine = Game(row.variant, row.fen, draw_rules=False)
            legal = engine.position.legal_moves()
            kind = "same" if n % 2 == 0 or len(legal) < 2 else "different"
            first, second = (rng.choice(legal),) * 2 if kind == "same" else rng.sample(legal, 2)
            user = row.white_id if engine.position.turn == "W" else row.black_id
            barrier, results = ctx.Barrier(2), ctx.Queue()
            procs = [ctx.Process(target=_racer, args=(db, barrier, results, user, f"/m #{game_id} {m}"))
                     for m in (first, second)]
            for p in procs:
                p.start()
            texts = [results.get(timeout=60) for _ in procs]
            for p in procs:
                p.join()
            winners = sum(" played " in text for text in texts)
            internal += sum(t("en", "error.internal") in text for text in texts)
            outcomes[kind][1] += 1
            outcomes[kind][0] += winners == 1
            after = storage.game(game_id)
            plies_ok += after.ply == row.ply + 1 and len(storage.moves(game_id)) == after.ply
        storage.close()
    return {"pairs": pairs, "same move: one winner": f"{outcomes['same'][0]}/{outcomes['same'][1]}",
            "different moves: one winner": f"{outcomes['different'][0]}/{outcomes['different'][1]}",
            "game advanced exactly one ply": f"{plies_ok}/{pairs}", "internal errors": internal}


# -- 3. a held lock -------------------------------------------------------------------------------------


def held_lock(hold: float, seed: int) -> dict:
    """Each kind of event alone while another connection holds the write lock (released when the
    event is answered, at the latest after ``hold`` s); then every kind at once from threads (as
    an adapter's thread pool would) under one hold of ``hold`` s."""
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "lock.db"
        storage = Storage(db)
        service = GameService(storage, rng=random.Random(seed))

        def event(user: str, text: str | None = None, action: str | None = None, chat: str = "room") -> ChatEvent:
            return ChatEvent(platform="bench", chat_id=chat, user_id=user, user_name=user.title(), username=user,
                             language="en", text=text, action=action)

        service.handle(event("ana", "/new italian white"))
        service.handle(event("bob", "/accept"))
        gid = storage.active_games("bench", "room")[0].id
        kinds = {
            "/games": lambda i: event("ana", "/games"),
            "/board": lambda i: event("bob", f"/board #{gid}"),
            "/help": lambda i: event("bob", "/help"),
            "button: select a piece": lambda i: event("ana", action=f"s:{gid}:0:22"),
            "/m (a move)": lambda i: event("ana", "/m 22-18"),
            "button: a move": lambda i: event("ana", action=f"d:{gid}:0:21:17"),
            "/new (a challenge)": lambda i: event("carol", "/new spanish"),
            "/games in a new chat": lambda i: event("dan", "/games", chat=f"new-{i}"),
        }
        busy, internal = t("en", "error.busy"), t("en", "error.internal")

        def answer(replies: list) -> str:
            if not replies:
                return "NO ANSWER"
            r = replies[0]
            kind = "busy" if r.text == busy else "INTERNAL ERROR" if r.text == internal else "answered"
            return kind + (" (private)" if r.private else "")

        def holding():
            holder = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
            holder.execute("BEGIN IMMEDIATE")
            holder.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('held', 1)")
            return holder

        rows: dict[str, object] = {}
        for i, (name, make) in enumerate(kinds.items()):
            holder = holding()
            guard = threading.Lock()

            def release(holder=holder, guard=guard) -> None:
                with guard:
                    if holder.in_transaction:
                        holder.execute("ROLLBACK")

            timer = threading.Timer(hold, release)      # never held longer than ``hold``
            timer.start()
            t0 = time.perf_counter()
            result = answer(service.handle(make(i)))
            rows[f"alone: {name}"] = f"{(time.perf_counter() - t0) * 1000:.0f} ms, {result}"
            timer.cancel()
            release()
            holder.close()
        holder = holding()
        t0 = time.perf_counter()
        service.tick(now=time.time() + 30 * 24 * 3600, platform="bench")     # the game's clock has run out
        rows["alone: deadline tick (game out of time)"] = f"{(time.perf_counter() - t0) * 1000:.0f} ms, no exception"
        holder.execute("ROLLBACK")
        holder.close()

        holder = holding()
        release = threading.Timer(hold, lambda: holder.execute("ROLLBACK"))
        release.start()
        times: dict[str, tuple[float, str]] = {}

        def fire(name: str, make) -> None:
            t0 = time.perf_counter()
            result = answer(service.handle(make(100)))
            times[name] = (time.perf_counter() - t0, result)

        threads = [threading.Thread(target=fire, args=item) for item in kinds.items()]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        release.join()
        holder.close()
        for name, (seconds, result) in times.items():
            rows[f"together: {name}"] = f"{seconds * 1000:.0f} ms, {result}"
        rows["events without an answer"] = sum("NO ANSWER" in str(v) for v in rows.values())
        after = service.handle(event("erin", "/new spanish"))
        rows["a write after the release"] = "done" if "Challenge #" in after[0].text else after[0].text
        storage.close()
    return rows


# -- 4. kill -9 against the bot --------------------------------------------------------------------


def _turn_is_bot(game: dict) -> bool:
    mover = game["white_id"] if game["fen"].startswith("W") else game["black_id"]
    return mover == BOT_ID


def stored_with_authors(db: Path, game_id: int) -> list[tuple[str, str]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return [(r[0], r[1]) for r in conn.execute("SELECT by_user, notation FROM moves WHERE game_id=? ORDER BY ply",
                                                    (game_id,))]
    finally:
        conn.close()


def kill_bot_games(restarts: int, seed: int) -> dict:
    rng = random.Random(seed)
    human = bot = lost = wrong = orphans = late = 0
    to_move = moved = 0
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        db = folder / "bot.db"
        for _ in range(restarts):
            game, _ = db_state(db)
            start = {game["id"]: len(stored_moves(db, game["id"]))} if game else {}
            bot_was_to_move = game is not None and _turn_is_bot(game)
            console = Console(db, folder)
            console.wait_started()
            # The first line also makes the console look at its games: a bot to move moves.
            console.send(["/as Ana"] if game else ["/as Ana", "/play italian 1 white"])
            sent_for: set[tuple[int, int]] = set()
            deadline = time.perf_counter() + rng.uniform(0.5, 4.0)
            while time.perf_counter() < deadline and console.proc.poll() is None:
                current, _ = db_state(db)
                key = (current["id"], current["ply"]) if current is not None else None
                if current is not None and not _turn_is_bot(current) and key not in sent_for:
                    engine = Game(current["variant"], current["fen"], draw_rules=False)
                    legal = engine.position.legal_moves()
                    if legal:
                        sent_for.add(key)
                        console.send([f"/m {rng.choice(legal)}"])
                time.sleep(0.02)
            orphans += console.kill()
            for game_id, moves in acks(console.output()).items():
                stored = stored_with_authors(db, game_id)
                first = start.get(game_id, 0)
                # A bot move stored just before the last kill but not yet printed comes out of the
                # outbox after the restart: it acknowledges a ply before ``first``.
                notes = [m for _, m in moves]
                if first > 0 and notes and [m for _, m in stored[first - 1:first]] == notes[:1] and \
                        [m for _, m in stored[first:first + len(notes)]] != notes[:len(stored) - first]:
                    first -= 1
                    late += 1
                human += sum(1 for who, _ in moves if not who.startswith("Bot"))
                bot += sum(1 for who, _ in moves if who.startswith("Bot"))
                lost += max(0, first + len(moves) - len(stored))
                kept = [m for _, m in stored[first:first + len(moves)]]
                if kept != [m for _, m in moves][:max(0, len(stored) - first)]:
                    wrong += 1
                    print(f"  (game #{game_id} from ply {first}: acknowledged {moves}, stored {stored[first:]})",
                          file=sys.stderr)
            if bot_was_to_move:
                to_move += 1
                after = stored_with_authors(db, game["id"])
                moved += len(after) > start[game["id"]] and after[start[game["id"]]][0] == BOT_ID
    return {"restarts": restarts, "human moves acknowledged": human, "bot moves acknowledged": bot, "lost": lost,
            "mismatched runs": wrong, "bot moves printed after the restart that followed them": late,
            "bot to move at a restart": to_move, "of which it moved after the restart": moved,
            "engine processes left behind by the kills": orphans}


# -- 5. kill -9 during a daily burst ----------------------------------------------------------------


def _admin(service: GameService, chat: str, text: str, user: str = "admin") -> list:
    return service.handle(ChatEvent(platform="console", chat_id=chat, user_id=user, user_name=user.title(),
                                    username=user, language="en", text=text, is_admin=True))


def _campaign(db: Path, folder: Path, rng: random.Random, done, longest: float, runs: int) -> tuple[str, int, int]:
    """Consoles fed a few lines and killed at random until ``done()``; a last one ends on its own.
    All they printed, the number of kills, and the engine processes left behind."""
    outputs, kills, orphans = [], 0, 0
    for _ in range(runs):
        if done():
            break
        console = Console(db, folder)
        console.wait_started()
        console.send(["/as Watcher"] * 3)
        time.sleep(rng.uniform(0.0, longest))
        orphans += console.kill()
        kills += 1
        outputs.append(console.output())
    console = Console(db, folder)
    console.wait_started()
    console.send(["/as Watcher"])
    orphans += console.finish()
    outputs.append(console.output())
    return "\n".join(outputs), kills, orphans


def kill_daily_burst(chats: int, seed: int) -> dict:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        db = folder / "daily.db"
        storage = Storage(db)
        service = GameService(storage)
        now = time.gmtime()
        minutes = max(0, now.tm_hour * 60 + now.tm_min - 2)
        at = f"{minutes // 60:02d}:{minutes % 60:02d}"
        for n in range(chats):
            _admin(service, f"club-{n}", f"/daily on {at} UTC italian")
        service.close()
        storage.close()
        conn = sqlite3.connect(db)
        # Subscribed yesterday: today's post is due (a chat that subscribes after the hour waits a day).
        conn.execute("UPDATE subscriptions SET created_at = created_at - 86400")
        conn.commit()
        conn.close()

        def posted() -> int:
            conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
            try:
                return conn.execute("SELECT count(*) FROM outbox WHERE status='sent' AND payload LIKE "
                                    "'%Puzzle of the day%'").fetchone()[0]
            finally:
                conn.close()

        text, kills, orphans = _campaign(db, folder, rng, lambda: posted() >= chats, 1.5, 40)
        conn = sqlite3.connect(db)
        per_chat = dict(conn.execute("SELECT chat_id, count(*) FROM puzzle_posts WHERE kind='daily' GROUP BY chat_id"))
        rows = conn.execute("SELECT count(*) FROM outbox WHERE payload LIKE '%Puzzle of the day%'").fetchone()[0]
        conn.close()
    printed = re.findall(r"bot → (club-\d+): Puzzle of the day", text)
    return {"chats": chats, "kills": kills, "chats with exactly one post in the database":
            sum(1 for n in range(chats) if per_chat.get(f"club-{n}") == 1),
            "post messages in the outbox": rows, "chats whose post was printed": len(set(printed)),
            "printed twice (sent before a kill, marked after)": len(printed) - len(set(printed)),
            "engine processes left behind by the kills": orphans}


# -- 6. kill -9 during clocks ---------------------------------------------------------------------------


def kill_clocks(games: int, seed: int) -> dict:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        db = folder / "clocks.db"
        storage = Storage(db)
        # Games started an hour ago with 5 minutes a move: every clock has run out.
        past = [time.time() - 3600]
        service = GameService(storage, clock=lambda: past[0])
        for n in range(games):
            _admin(service, f"room-{n}", "/new italian white 5m", user=f"white{n}")
            _admin(service, f"room-{n}", "/accept", user=f"black{n}")
        service.close()
        storage.close()

        def ended() -> bool:
            conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
            try:
                return conn.execute("SELECT count(*) FROM games WHERE status='active'").fetchone()[0] == 0
            finally:
                conn.close()

        text, kills, orphans = _campaign(db, folder, rng, ended, 1.0, 40)
        conn = sqlite3.connect(db)
        finished = conn.execute("SELECT count(*) FROM games WHERE status='finished' AND result_reason='time'"
                                ).fetchone()[0]
        per_game = conn.execute("SELECT chat_id, count(*) FROM outbox WHERE payload LIKE '%ran out of time%' "
                                "GROUP BY chat_id").fetchall()
        conn.close()
    printed = re.findall(r"bot → (room-\d+): .*ran out of time", text)
    return {"games out of time": games, "kills": kills, "ended on time": finished,
            "games with exactly one message": sum(1 for _, c in per_game if c == 1),
            "games whose message was printed": len(set(printed)),
            "printed twice (sent before a kill, marked after)": len(printed) - len(set(printed)),
            "engine processes left behind by the kills": orphans}


# -- 7. kill -9 during a ratings rebuild ---------------------------------------------------------------


def _ratings(db: Path) -> tuple[list[tuple], int]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = sorted(conn.execute("SELECT platform, subject, pool, rating, deviation, games FROM ratings"))
        history = conn.execute("SELECT count(*) FROM rating_history").fetchone()[0]
        return rows, history
    finally:
        conn.close()


def kill_rebuild(games: int, kills: int, seed: int) -> dict:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        db = folder / "ratings.db"
        storage = Storage(db)
        service = GameService(storage, rng=random.Random(seed))
        players = [f"p{n}" for n in range(12)]
        for n in range(games):
            white, black = rng.sample(players, 2)
            chat = f"hall-{n % 7}"
            _admin(service, chat, "/new italian white", user=white)
            _admin(service, chat, "/accept", user=black)
            row = storage.active_games("console", chat)[-1]
            engine = Game(row.variant, row.fen, draw_rules=False)
            for mover in (white, black):
                move = rng.choice(engine.position.legal_moves())
                engine.play(move)
                _admin(service, chat, f"/m #{row.id} {move}", user=mover)
            loser = rng.choice((white, black))
            _admin(service, chat, f"/resign #{row.id}", user=loser)
            _admin(service, chat, f"/resign #{row.id}", user=loser)
        service.close()
        storage.close()
        cmd = [sys.executable, "-m", "bot", "ratings", "rebuild", "--db", str(db)]
        t0 = time.perf_counter()
        subprocess.run(cmd, env=bench_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        full = time.perf_counter() - t0
        new = _ratings(db)
        # The old state: every rating changed, so a mix of old and new would show.
        conn = sqlite3.connect(db)
        conn.execute("UPDATE ratings SET rating = rating + 1000")
        conn.commit()
        conn.close()
        old = _ratings(db)
        states = {"old": 0, "new": 0, "mixed": 0}
        for _ in range(kills):
            log = (folder / "rebuild.out").open("w")
            proc = subprocess.Popen(cmd, env=bench_env(), stdout=log, stderr=subprocess.DEVNULL,
                                    start_new_session=True)
            # Most of a short rebuild is the interpreter starting: the kills aim at the rest.
            time.sleep(rng.uniform(0.3 * full, 1.1 * full))
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            log.close()
            now = _ratings(db)
            kind = "new" if now == new else "old" if now == old else "mixed"
            states[kind] += 1
            if kind == "new":
                conn = sqlite3.connect(db)
                conn.execute("UPDATE ratings SET rating = rating + 1000")
                conn.commit()
                conn.close()
    return {"rated games": games, "players": len(new[0]), "full rebuild s": full, "kills": kills,
            "found all old": states["old"], "found all new": states["new"], "found a mix": states["mixed"]}


# -- 8. two processes, one outbox ------------------------------------------------------------------


def two_consoles(messages: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        db = folder / "two.db"
        storage = Storage(db)
        service = GameService(storage)
        for n in range(messages):
            service.say("console", f"chat-{n % 5}", Reply(f"note-{n}-end"))
        service.close()
        storage.close()
        consoles = [Console(db, folder), Console(db, folder)]
        for console in consoles:
            console.send(["/as Reader"])
        orphans = sum(console.finish() for console in consoles)
        printed = [int(m) for c in consoles for m in re.findall(r"note-(\d+)-end", c.output())]
    return {"messages": messages, "printed": len(printed),
            "printed by both processes": len(printed) - len(set(printed)),
            "never printed": messages - len(set(printed)), "engine processes left behind": orphans}


# -- 9. hostile input ----------------------------------------------------------------------------------------


HOSTILE_TEXTS = [
    "", " ", "\x00", "\x00/new", "/", "//", "/ new", "/new\x00italian", "/m", "/m ", "/m 99-99", "/m 1-1",
    "/m 21-17-13-9-5-1-21-17-13-9-5-1", "/m #0 21-17", "/m #-1 21-17", "/m #99999999999999999999 21-17",
    "/m #1 " + "21-17 " * 500, "/m x" * 1000, "/accept #999999999", "/accept #1e9", "/accept @nobody",
    "/decline #abc", "/resign #0", "/resign #99999", "/draw #-5", "/board #%s", "/board #{id}", "/pdn #1;DROP",
    "/new italian 0m", "/new italian 99999d", "/new italian 5m 5m 5m", "/new klingon", "/new @",
    "/new @" + "a" * 300, "/play italian level 99", "/play italian level -1", "/play italian 1 purple",
    "/daily on 25:99", "/daily on 09:00 Mars/Olympus", "/daily on 09:00 ../../etc/passwd", "/lang xx",
    "/lang " + "e" * 1000, "/variant 💥", "/stats @" + "x" * 100, "/top 999999999999", "/games 0", "/games -3",
    "/games 99999999999999999999", "/analysis #0", "/help " + "h" * 5000, "%s%s%s%n", "{0.__class__}",
    "${jndi:ldap://x}", "<script>alert(1)</script>", "'; DROP TABLE games; --", "\u202e/new italian",
    "\u200b/new", "/new\u00a0italian", "/NEW ITALIAN", "/m@OtherBot 21-17", "/m@DraughtsBot\x00 21-17",
    "🂡" * 2000, "a" * 5000, "/" + "a" * 5000, "\n".join(["/m 21-17"] * 50), "\r\n/m\r\n", "\t/m\t21-17",
    "/m 21x17", "/m 21:17", "/m 21–17", "/m ２１-１７", "/m 0x15-0x11", "/m 21-17 please",
]
HOSTILE_ACTIONS = [
    "", ":", "::::", "d", "d:", "d:1", "d:1:0:21:17:9", "d:x:y:z:w", "d:-1:0:21:17", "d:1:0:999999999:17",
    "s:1:0:" + "9" * 30, "zs:1:1", "zd:999999999:1:1", "zm:1:1:1", "a:1", "?" * 64, "d:1:0:21:17" + "\x00",
    "é" * 40, "s:1:0:22:extra", "c:" + "1" * 70,
]


def hostile_input(seed: int) -> dict:
    raised = internal = changed = 0
    internal_text = t("en", "error.internal")
    with tempfile.TemporaryDirectory() as tmp:
        storage = Storage(Path(tmp) / "hostile.db")
        service = GameService(storage, rng=random.Random(seed))
        _admin(service, "room", "/new italian white", user="ana")
        _admin(service, "room", "/accept", user="bob")
        for kind, items in (("text", HOSTILE_TEXTS), ("action", HOSTILE_ACTIONS)):
            for item in items:
                for user in ("ana", "bob", "mallory"):
                    before = {k: v for k, v in storage.dump().items() if k not in ("meta", "players", "chats")}
                    event = ChatEvent(platform="console", chat_id="room", user_id=user, user_name=user.title(),
                                      username=user, language="en", text=item if kind == "text" else None,
                                      action=item if kind == "action" else None)
                    try:
                        replies = service.handle(event)
                    except Exception:
                        raised += 1
                        continue
                    internal += any(internal_text in r.text for r in replies)
                    after = {k: v for k, v in storage.dump().items() if k not in ("meta", "players", "chats")}
                    # Only a well-formed command may change anything; hostile ones must not.
                    if after != before and not item.startswith(("/new", "/play", "/daily", "/lang", "/variant",
                                                                   "/resign", "/draw", "/m", "/accept", "/NEW",
                                                                   "\u200b", "\u202e", "\t", "\r", "\n", "\x00")):
                        changed += 1
                        print(f"  (changed by {kind} {item[:40]!r} from {user})", file=sys.stderr)
        service.close()
        storage.close()
    return {"inputs": (len(HOSTILE_TEXTS) + len(HOSTILE_ACTIONS)) * 3, "raised": raised, "internal errors": internal,
            "changed something they must not": changed}


# -- 10. the start-up check on a big database -------------------------------------------------------------


def big_database(games: int, moves: int) -> dict:
    fen = Game("italian").position.fen()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "big.db"
        Storage(db).close()
        conn = sqlite3.connect(db)
        with conn:
            for g in range(1, games + 1):
                conn.execute("INSERT INTO games (id, platform, chat_id, variant, white_id, white_name, black_id, "
                             "black_name, fen, ply, quiet_plies, version, status, move_seconds, created_at) "
                             "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                             (g, "telegram", f"chat-{g % 2000}", "italian", f"u{g % 500}", "Ana", f"u{(g + 7) % 500}",
                              "Bob", fen, moves, 0, moves, "finished" if g % 50 else "active", 86400, 1.7e9 + g))
                conn.executemany("INSERT INTO moves (game_id, ply, notation, fen_after, by_user, played_at) "
                                 "VALUES (?,?,?,?,?,?)", [(g, p, "21-17", fen, "u1", 1.7e9 + g + p)
                                                          for p in range(1, moves + 1)])
        conn.close()
        size = db.stat().st_size
        conn = sqlite3.connect(db)
        t0 = time.perf_counter()
        conn.execute("PRAGMA quick_check").fetchall()
        quick = time.perf_counter() - t0
        t0 = time.perf_counter()
        conn.execute("PRAGMA integrity_check(1)").fetchall()
        full = time.perf_counter() - t0
        conn.close()
        t0 = time.perf_counter()
        Storage(db).close()
        opened = time.perf_counter() - t0
    return {"games": games, "moves": games * moves, "file MB": size / 1e6, "quick_check s": quick,
            "integrity_check s (what start-up runs)": full, "opening the store s": opened}


# -- 11. the adapters: hostile updates and a failing platform ----------------------------------------------

# The strict fakes of the adapter tests stand in for the Bot API and for Discord's HTTP: the bench
# imports them from the test folders (bench scripts are not part of the test suite, and the tests
# do not import the bench).
TEST_PLATFORMS = REPO / "tests" / "platforms"
# Telegram's flood limits run on a clock this much faster than the real one, for the fake and the
# production limiter alike (the tests use 10; a few hundred answers in one group need more).
TG_SPEED = 60.0
INTERNAL_TEXTS = [t(lang, "error.internal") for lang in ("en", "es", "it")]
HOSTILE_DATA = HOSTILE_ACTIONS + ["d:1:0:22:18", "d:0:0:0:0", "s:1:99:22", "zs", "dr:" + "x" * 50, "🎲" * 16]


def _garbage(rng: random.Random, limit: int) -> str:
    """Random characters (ASCII, accents, emoji, controls), at most ``limit`` UTF-8 bytes."""
    pool = string.printable + "éñàü€—’…\u202e\u200b\x00🂡🎲👍"
    out = ""
    for _ in range(rng.randint(1, 40)):
        ch = rng.choice(pool)
        if len((out + ch).encode()) > limit:
            break
        out += ch
    return out or "?"


def _replayed(db: Path) -> tuple[int, int]:
    """(games, games whose stored FEN and ply are what replaying their stored moves gives)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        games = conn.execute("SELECT id, variant, start_fen, fen, ply FROM games").fetchall()
        good = 0
        for game_id, variant, start_fen, fen, ply in games:
            moves = [r[0] for r in conn.execute("SELECT notation FROM moves WHERE game_id=? ORDER BY ply",
                                                (game_id,))]
            engine = Game(variant, start_fen, draw_rules=False)
            try:
                for move in moves:
                    engine.play(move)
            except Exception:
                continue
            good += engine.position.fen() == fen and ply == len(moves)
        return len(games), good
    finally:
        conn.close()


class _Errors(logging.Handler):
    """Records logged at ERROR by our code or the chat libraries (a handler that failed)."""

    def __init__(self) -> None:
        super().__init__(level=logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        record.bench_input = ADAPTER_INPUT[0]
        self.records.append(record)


# The update being handled, named on what it makes the bot log (to report the input with the finding).
ADAPTER_INPUT = [""]


@contextlib.contextmanager
def _watching_errors():
    handler = _Errors()
    loggers = [logging.getLogger(name) for name in ("bot", "discord", "telegram")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
        logger.addHandler(handler)
    try:
        yield handler.records
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.removeHandler(handler)
            logger.setLevel(level)


async def _telegram_adapter(events: int, rng: random.Random, folder: Path) -> dict:
    import tg_helpers  # noqa: F401 - the fake's neighbour; keeps the test folder's imports resolvable
    from telegram import Update
    from telegram_fake_api import BOT, CHANNEL, GROUP, QUERY_INVALID, USERS, FakeBotAPI

    from bot.platforms.telegram import TelegramAdapter
    from bot.platforms.telegram.limiter import FloodLimiter
    from bot.rules import Position

    def clock() -> float:
        return time.monotonic() * TG_SPEED

    async def limiter_sleep(seconds: float) -> None:
        await asyncio.sleep(seconds / TG_SPEED)

    async def backoff(seconds: float) -> None:
        await asyncio.sleep(0)            # the adapter's retry backoffs: counted by the fake, not waited

    other = {"id": -100456, "type": "supergroup", "title": "Other club"}
    db = folder / "telegram.db"
    storage = Storage(db)
    service = GameService(storage, rng=random.Random(rng.random()))
    http = FakeBotAPI(clock=clock)
    for chat in (GROUP, other):
        http.add_chat(chat)
    for user in USERS:
        http.start_private(user)
    http.admins.add((GROUP["id"], USERS["ana"]["id"]))
    adapter = TelegramAdapter(service, sleep=backoff)
    app = adapter.build("123:TEST", request=http, rate_limiter=FloodLimiter(clock=clock, sleep=limiter_sleep))
    handler_errors: list[BaseException] = []

    async def collect(update: object, context: Any) -> None:
        handler_errors.append(context.error)

    app.add_error_handler(collect)
    ids = itertools.count(1)
    sent = injected = 0

    async def update(**payload: Any) -> None:
        nonlocal sent
        sent += 1
        ADAPTER_INPUT[0] = repr(payload)[:300]
        refused, calls = len(http.refused(injected=False)), len(http.calls)
        await app.process_update(Update.de_json({"update_id": next(ids), **payload}, app.bot))
        for call in http.refused(injected=False)[refused:]:
            target = http.messages.get((int(call.params.get("chat_id") or 0), int(call.params.get("message_id") or 0)))
            print(f"  (telegram refused {call.method} {call.params.get('text')!r:.80} on "
                  f"{target and (target.kind, target.text)!r:.120}: {call.error}, handling {ADAPTER_INPUT[0]}; "
                  f"the requests: {[(c.method, c.status, c.error) for c in http.calls[calls:]]})", file=sys.stderr)

    async def say(user: str, text: str, chat: dict = GROUP, sender_chat: dict | None = None) -> None:
        ours = http.bot_messages(int(chat["id"]))
        # Plain text reaches a bot in privacy mode only as a reply to it.
        reply = ours[-1].message_id if ours and not text.startswith("/") else None
        message = http.incoming(chat, USERS[user], text, reply_to=reply, sender_chat=sender_chat)
        if http.reaches_bot(message):
            await update(message=message)

    async def press(user: str, data: str, chat: dict = GROUP) -> None:
        if not http.bot_messages(int(chat["id"])):
            return
        await update(callback_query=http.callback_query(chat, USERS[user], data))

    def active(chat: dict) -> Any:
        games = storage.active_games("telegram", str(chat["id"]))
        return games[-1] if games else None

    async def play(chat: dict, white: str, black: str) -> None:
        """Normal play: a challenge accepted, or a legal move typed or pressed by the player to move."""
        game = active(chat)
        if game is None:
            await say(white, "/new italian white 5m", chat)
            await say(black, "/accept", chat)
            return
        move = str(rng.choice(Position.from_fen(game.variant, game.fen).legal_moves()))
        user = next(name for name, info in USERS.items() if str(info["id"]) == (
            game.white_id if game.ply % 2 == 0 else game.black_id))
        squares = re.split(r"[-x]", move)
        if rng.random() < 0.3 and len(squares) == 2:
            await press(user, f"d:{game.id}:{game.ply}:{squares[0]}:{squares[1]}", chat)
        else:
            await say(user, f"/m #{game.id} {move}", chat)

    failures = [("sendMessage", 502, "Bad Gateway", {}), ("sendPhoto", 502, "Bad Gateway", {}),
                ("editMessageMedia", 500, "Internal Server Error", {}),
                ("sendPhoto", 429, "Too Many Requests: retry after 2", {"retry_after": 2}),
                ("sendMessage", 429, "Too Many Requests: retry after 1", {"retry_after": 1}),
                ("editMessageMedia", 429, "Too Many Requests: retry after 40", {"retry_after": 40}),
                ("sendMessage", 403, "Forbidden: bot was kicked from the supergroup chat", {}),
                ("sendPhoto", 403, "Forbidden: bot was kicked from the supergroup chat", {}),
                ("editMessageMedia", 400, "Bad Request: message to edit not found", {}),
                ("sendMessage", 400, "Bad Request: chat not found", {}),
                ("answerCallbackQuery", 502, "Bad Gateway", {}),
                ("answerCallbackQuery", 400, QUERY_INVALID, {}),
                ("getChatMember", 502, "Bad Gateway", {})]
    texts = [text for text in HOSTILE_TEXTS if not text.startswith("/play")]     # no engine processes here
    hostile = 0
    async with app:
        await play(GROUP, "ana", "bob")
        await play(GROUP, "ana", "bob")
        await play(other, "eve", "bob")
        await play(other, "eve", "bob")
        for _ in range(events):
            if rng.random() < 0.15:
                method, status, description, parameters = rng.choice(failures)
                http.fail(method, status, description, **parameters)
                injected += 1
            kind = rng.random()
            user = rng.choice(list(USERS))
            if kind < 0.35:
                await play(GROUP if rng.random() < 0.7 else other, *(("ana", "bob") if rng.random() < 0.7
                                                                     else ("eve", "bob")))
                continue
            hostile += 1
            game = active(GROUP)
            if kind < 0.5:
                await say(user, rng.choice(texts))
            elif kind < 0.6:
                junk = _garbage(rng, 4000)
                await say(user, rng.choice(["", "/m ", "/new ", "/accept ", "/lang ", "/nosuch "]) + junk)
            elif kind < 0.7:
                await press(user, rng.choice(HOSTILE_DATA) if rng.random() < 0.5 else _garbage(rng, 64),
                            rng.choice((GROUP, other)))
            elif kind < 0.78 and game is not None:
                # A button of a game pressed on a message of the other chat.
                theirs = active(other)
                target, chat = (game, other) if rng.random() < 0.5 or theirs is None else (theirs, GROUP)
                await press(user, f"d:{target.id}:{target.ply}:22:18", chat)
            elif kind < 0.86:
                await say(user, rng.choice([f"/m #{rng.randint(100, 10**6)} 22-18", "/resign #424242",
                                            "/draw #0", "/board #77777", "/accept #31337"]))
            else:
                # Anonymous admins (as the group) and members writing as a channel.
                await say(user, rng.choice(["/new italian", "/m 22-18", "/daily on", "/lang it", "/resign",
                                            "/accept", rng.choice(texts)]),
                          sender_chat=rng.choice((GROUP, CHANNEL)))
    answers = [m.text or "" for m in http.messages.values() if m.sender is BOT]
    answers += [str(c.params.get("text") or "") for c in http.named("answerCallbackQuery")]
    unanswered = sum(1 for qid in http.queries
                     if not any(c.method == "answerCallbackQuery" and str(c.params.get("callback_query_id")) == qid
                                for c in http.calls))
    own = http.refused(injected=False)
    service.close()
    storage.close()
    games, consistent = _replayed(db)
    return {"events": sent, "hostile": hostile, "failures injected": injected,
            "handler exceptions": len(handler_errors),
            "internal-error answers": sum(any(text in a for text in INTERNAL_TEXTS) for a in answers),
            "presses never answered": unanswered, "refused, not provoked": len(own),
            "games consistent": f"{consistent}/{games}"}


async def _discord_adapter(events: int, rng: random.Random, folder: Path) -> dict:
    import pytest
    from discord_fake import (
        CHANNEL_ID,
        OTHER_CHANNEL_ID,
        TOKEN,
        USERS,
        FakeDiscord,
        Harness,
        Member,
        http_error,
        install,
    )

    from bot.platforms.discord import DraughtsBot
    from bot.rules import Position

    db = folder / "discord.db"
    storage = Storage(db)
    now = [time.time()]
    service = GameService(storage, clock=lambda: now[0], rng=random.Random(rng.random()))
    fake = FakeDiscord()

    async def sleep(seconds: float) -> None:
        fake.skew += seconds            # the bot's own retry waits: virtual, Discord's clock moves on

    bot = DraughtsBot(service, sleep=sleep, clock=fake.now)
    patch = pytest.MonkeyPatch()
    install(fake, patch, bot.http)
    sent = injected = hostile = 0
    specs = {spec.name: spec for spec in REGISTRY if spec.name != "play"}     # no engine processes here
    names = sorted(specs)
    try:
        await bot.login(TOKEN)
        h = Harness(bot, fake, storage, now)
        stage = [""]

        def internal_answers() -> int:
            return sum(any(text in s.raw for text in INTERNAL_TEXTS) for s in fake.messages.values())

        async def feed(payload: dict) -> None:
            nonlocal sent
            sent += 1
            ADAPTER_INPUT[0] = stage[0] or repr({"data": payload["data"], "failures pending": [
                (x.path_end, x.error.status, x.error.code) for x in fake.scripts if x.times]})[:400]
            apologies = internal_answers()
            await h.feed(payload)
            if internal_answers() > apologies and not stage[0]:
                print(f"  (discord internal-error answer, handling {ADAPTER_INPUT[0]})", file=sys.stderr)

        def slash(name: str, user: str, options: dict | None = None, channel: int = CHANNEL_ID) -> dict:
            # Created now on Discord's clock, which the virtual waits moved ahead of the real one.
            return h.slash_payload(name, user, options, age=-fake.skew, channel_id=channel)

        def boards(channel: int) -> list:
            return [s for s in fake.messages.values() if s.channel_id == channel and not s.ephemeral
                    and "board.png" in s.filenames() and s.custom_ids()]

        def active(channel: int) -> Any:
            games = storage.active_games("discord", str(channel))
            return games[-1] if games else None

        async def play(channel: int, white: str, black: str) -> None:
            game = active(channel)
            if game is None:
                await feed(slash("new", white, {"variant": "italian", "color": "white",
                                                "opponent": Member(black), "move_time": "1h"}, channel))
                challenges = storage.open_challenges("discord", str(channel))
                if challenges:
                    await feed(slash("accept", black, {"id": challenges[-1].id}, channel))
                return
            move = str(rng.choice(Position.from_fen(game.variant, game.fen).legal_moves()))
            user = next(n for n, info in USERS.items() if info["id"] == (
                game.white_id if game.ply % 2 == 0 else game.black_id))
            board = boards(channel)
            if rng.random() < 0.2 and board:
                # A press on a real button of the newest board (a piece, maybe not the mover's).
                message = board[-1]
                await feed(h.click_payload(rng.choice(message.custom_ids()), user, message, age=-fake.skew))
            else:
                await feed(slash("move", user, {"move": move, "game": game.id}, channel))

        # A failed acknowledgement is retried once at most: a second wait would outlast Discord's 3 s,
        # and the interaction is then gone whatever the bot does.  No 400 Invalid Form Body: that is
        # Discord saying our request was malformed, which the bot reports as its own error (by design).
        errors = [("/callback", lambda: http_error(503, 0, "Service Unavailable")),
                  ("/callback", lambda: http_error(429, 0, "You are being rate limited.", retry_after=0.5)),
                  ("{webhook_token}", lambda: http_error(502, 0, "Bad Gateway")),
                  ("{webhook_token}", lambda: http_error(429, 0, "Slow down", retry_after=1.5)),
                  ("@original", lambda: http_error(500, 0, "Internal Server Error")),
                  ("/channels/{channel_id}/messages", lambda: http_error(403, 50001, "Missing Access")),
                  ("/channels/{channel_id}/messages", lambda: http_error(404, 10003, "Unknown Channel")),
                  ("/channels/{channel_id}/messages/{message_id}", lambda: http_error(404, 10008, "Unknown Message")),
                  ("/channels/{channel_id}/messages", lambda: http_error(502, 0, "Bad Gateway")),
                  ("/channels/{channel_id}/messages/{message_id}", lambda: http_error(403, 50001, "Missing Access"))]
        await play(CHANNEL_ID, "ana", "bob")
        await play(OTHER_CHANNEL_ID, "cid", "bob")
        for _ in range(events):
            if rng.random() < 0.15:
                path_end, error = rng.choice(errors)
                fake.script(path_end, error(), times=1 if path_end == "/callback" else rng.randint(1, 2))
                injected += 1
            kind = rng.random()
            user = rng.choice(list(USERS))
            if kind < 0.35:
                channel, players = rng.choice([(CHANNEL_ID, ("ana", "bob"))] * 3 + [(OTHER_CHANNEL_ID, ("cid", "bob"))])
                await play(channel, *players)
                continue
            hostile += 1
            name = rng.choice(names)
            if kind < 0.5:
                # Option values of the wrong type and out of range, unknown options and commands.
                # Discord sends each option with the type the command was registered with: a
                # value of another type is what a stale registration (before a sync) brings.
                def value() -> Any:
                    return rng.choice([_garbage(rng, 100), rng.randint(-2**53, 2**53), Member(rng.choice(list(USERS))),
                                       "#1", "0", str(rng.randint(1, 10**19))])

                picks = {rng.choice(["move", "game", "id", "level", "variant", "opponent", "move_time", "nosuch"]):
                         value() for _ in range(rng.randint(0, 3))}
                # Required options are always there (one missing is a stale registration: counted apart).
                picks.update({arg.name: value() for arg in specs[name].args if arg.required})
                payload = slash(name, user, picks)
                for option in payload["data"]["options"]:
                    if rng.random() < 0.2 and option["type"] == 4:
                        option.update(type=rng.choice([5, 10]), value=rng.choice([True, 2.5]))
                await feed(payload)
            elif kind < 0.6:
                # Very long and unicode texts where a string goes.
                junk = rng.choice(HOSTILE_TEXTS) if rng.random() < 0.5 else _garbage(rng, 6000) * rng.randint(1, 50)
                name = rng.choice(["move", "new", "lang", "help", "board"])
                await feed(slash(name, user, {**{arg.name: junk for arg in specs[name].args if arg.required},
                                              **({"move": junk} if rng.random() < 0.5 else {"move_time": junk})}))
            elif kind < 0.75:
                board = boards(rng.choice((CHANNEL_ID, OTHER_CHANNEL_ID)))
                if board:
                    message = rng.choice(board)
                    custom = rng.choice(["dr:" + rng.choice(HOSTILE_DATA), "dr:" + _garbage(rng, 97),
                                         _garbage(rng, 100), "dr:s:999999:0:22", "dr:acc:424242"])
                    await feed(h.click_payload(custom, user, message, age=-fake.skew))
            elif kind < 0.85:
                # A button of one channel's game pressed on the board of the other channel.
                here, there = boards(CHANNEL_ID), boards(OTHER_CHANNEL_ID)
                if here and there:
                    source, target = (here[-1], there[-1]) if rng.random() < 0.5 else (there[-1], here[-1])
                    await feed(h.click_payload(rng.choice(source.custom_ids()), user, target, age=-fake.skew))
            else:
                name = rng.choice(["move", "resign", "board", "accept"])
                await feed(slash(name, user, {"move": "22-18", "game": rng.randint(100, 10**6)} if name == "move"
                                 else {"id" if name == "accept" else "game": rng.randint(100, 10**6)}))
        internal = internal_answers()
        # A registration older than the code: a command since removed, or without a required option
        # the code has now; Discord sends them so (it checks options against the registration,
        # which is also why the values above always match their declared types).  Counted apart.
        stage[0] = "stale registration"
        for name in ("move", "lang", "nosuch"):
            payload = slash("help", "ana")
            payload["data"]["name"] = name
            await feed(payload)
        stale_internal = internal_answers() - internal
    finally:
        await bot.close()
        patch.undo()
        service.close()
        storage.close()
    for why in fake.refusals[:5]:
        print(f"  (discord refused {why})", file=sys.stderr)
    games, consistent = _replayed(db)
    return {"events": sent - 3, "hostile": hostile, "failures injected": injected, "internal-error answers": internal,
            "refused, not provoked": len(fake.refused), "games consistent": f"{consistent}/{games}",
            "stale registration (/nosuch, /move and /lang without options): internal-error answers":
                stale_internal}


def adapters(events: int, seed: int) -> dict:
    """The real PTB Application and the real discord.py bot, only HTTP faked (the tests' strict
    fakes): hostile updates mixed with play, failures injected below the libraries."""
    for folder in ("telegram", "discord"):
        sys.path.insert(0, str(TEST_PLATFORMS / folder))
    rng = random.Random(seed)
    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp, _watching_errors() as logged:
        for name, run in (("telegram", _telegram_adapter), ("discord", _discord_adapter)):
            before = len(logged)
            result = asyncio.run(run(events, rng, Path(tmp)))
            errors = [r for r in logged[before:] if getattr(r, "bench_input", "") != "stale registration"]
            if name == "telegram":
                result["handler exceptions"] += len(errors)
            else:
                items = list(result.items())
                result = {**dict(items[:3]), "handler exceptions": len(errors), **dict(items[3:-1]),
                          "stale registration (/nosuch, /move and /lang without options): errors logged":
                              len(logged) - before - len(errors), items[-1][0]: items[-1][1]}
            for record in errors[:10]:
                print(f"  ({name} logged: {record.name}: {record.getMessage()[:200]}, handling "
                      f"{getattr(record, 'bench_input', '')})", file=sys.stderr)
                if record.exc_info and os.environ.get("BENCH_TRACEBACKS"):
                    print(logging.Formatter().formatException(record.exc_info), file=sys.stderr)
            out.update({f"{name} {key}": value for key, value in result.items()})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--restarts", type=int, default=100)
    parser.add_argument("--pairs", type=int, default=100)
    parser.add_argument("--hold", type=float, default=10.0)
    parser.add_argument("--bot-restarts", type=int, default=25)
    parser.add_argument("--chats", type=int, default=200, help="daily puzzles due at once")
    parser.add_argument("--clocks", type=int, default=200, help="games out of time at once")
    parser.add_argument("--rated", type=int, default=150, help="rated games for the rebuild")
    parser.add_argument("--rebuild-kills", type=int, default=15)
    parser.add_argument("--messages", type=int, default=200, help="outbox messages for two processes")
    parser.add_argument("--big-games", type=int, default=50_000)
    parser.add_argument("--adapter-events", type=int, default=300, help="updates per chat library")
    parser.add_argument("--quick", action="store_true", help="small numbers everywhere (a minute or two)")
    parser.add_argument("--only", default="", help="comma-separated section numbers, e.g. 4,5")
    parser.add_argument("--seed", type=int, default=6)
    args = parser.parse_args()
    if args.quick:
        for name, value in (("bot_restarts", 5), ("chats", 10), ("clocks", 10), ("rated", 30),
                            ("rebuild_kills", 5), ("messages", 40), ("big_games", 2000),
                            ("adapter_events", 80)):
            setattr(args, name, value)
    # The service logs each busy answer at WARNING; the figures are what this prints.
    logging.getLogger("bot").setLevel(logging.CRITICAL)
    sections = [
        ("kill -9 restarts (moves)", lambda: kill_restarts(args.restarts, args.seed)),
        ("racing moves (forked processes)", lambda: racing_moves(args.pairs, args.seed)),
        (f"write lock held {args.hold:g} s by another connection", lambda: held_lock(args.hold, args.seed)),
        ("kill -9 against the bot (bot moves, engine pool)", lambda: kill_bot_games(args.bot_restarts, args.seed)),
        ("kill -9 during a daily burst", lambda: kill_daily_burst(args.chats, args.seed)),
        ("kill -9 during clocks", lambda: kill_clocks(args.clocks, args.seed)),
        ("kill -9 during a ratings rebuild", lambda: kill_rebuild(args.rated, args.rebuild_kills, args.seed)),
        ("two processes, one outbox", lambda: two_consoles(args.messages)),
        ("hostile input", lambda: hostile_input(args.seed)),
        ("start-up check on a big database", lambda: big_database(args.big_games, 40)),
        ("adapters: hostile updates and a failing platform", lambda: adapters(args.adapter_events, args.seed)),
    ]
    only = {int(n) for n in args.only.split(",") if n.strip()}
    started = time.perf_counter()
    for number, (title, run) in enumerate(sections, start=1):
        if only and number not in only:
            continue
        t0 = time.perf_counter()
        result = run()
        print(f"== {number}. {title} ({time.perf_counter() - t0:.0f} s)")
        for key, value in result.items():
            print(f"  {key}: {value:.3f}" if isinstance(value, float) else f"  {key}: {value}")
        sys.stdout.flush()
    print(f"== total {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
