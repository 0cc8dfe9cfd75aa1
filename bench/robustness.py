"""Robustness benchmark: what issue 6 measured, re-measured.

1. kill -9 restarts: a `python -m bot console` process plays moves fed on its standard input and
   is killed with SIGKILL at a random moment, N times; after each kill the database must hold
   every move the console acknowledged ("X played M (game #N)").  Lost moves must be 0.
2. Racing moves: pairs of processes (forked, each with its own connection) send a move for the
   same game at the same instant, half of the pairs the same move, half two different moves;
   exactly one of each pair may win, and the game must advance by exactly one ply.
3. A held lock: another connection holds a write transaction for 10 s while chat events arrive;
   every event must still get an answer.  Prints the time to answer per kind of event.

Run from the repository root::

    python bench/robustness.py                 # about 3 minutes
    python bench/robustness.py --restarts 20 --pairs 20 --hold 3
"""

from __future__ import annotations

import argparse
import logging
import multiprocessing
import os
import random
import re
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bot.i18n import t  # noqa: E402
from bot.rules import Game  # noqa: E402
from bot.service import ChatEvent, GameService  # noqa: E402
from bot.storage import SQLiteStore as Storage  # noqa: E402

ACK = re.compile(r"\] bot: (\w+) played (\S+) \(game #(\d+)\)")
NAMES = {"W": "Ana", "B": "Bob"}


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
    acked_total = lost = wrong = 0
    startup: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "kill.db"
        env = {k: v for k, v in os.environ.items() if not k.endswith("_BOT_TOKEN")}
        env.update(PYTHONPATH=str(REPO), LANG="en_US.UTF-8", LOG_LEVEL="ERROR")
        for _ in range(restarts):
            before: dict[int, int] = {}
            game, _ = db_state(db)
            if game:
                before[game["id"]] = len(stored_moves(db, game["id"]))
            lines, _ = script(db, rng, moves=40)
            started = time.perf_counter()
            proc = subprocess.Popen([sys.executable, "-m", "bot", "console", "--db", str(db), "--images",
                                     str(Path(tmp) / "boards")], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, env=env, cwd=tmp, text=True, bufsize=1)
            output: list[str] = []
            reader = threading.Thread(target=lambda p=proc, o=output: o.extend(p.stdout), daemon=True)
            reader.start()
            while not output and proc.poll() is None:
                time.sleep(0.005)
            startup.append(time.perf_counter() - started)
            try:
                proc.stdin.write("\n".join(lines) + "\n")
                proc.stdin.flush()
            except BrokenPipeError:
                pass
            time.sleep(rng.uniform(0.0, 1.5))
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            reader.join(timeout=10)
            acks: dict[int, list[str]] = {}
            for line in output:
                match = ACK.search(line)
                if match:
                    acks.setdefault(int(match.group(3)), []).append(match.group(2))
            for game_id, notations in acks.items():
                acked_total += len(notations)
                stored = stored_moves(db, game_id)
                start = before.get(game_id, 0)
                # Input is handled line by line, so at most the move being printed is stored unacknowledged.
                lost += max(0, start + len(notations) - len(stored))
                if stored[start:start + len(notations)] != notations[:max(0, len(stored) - start)]:
                    wrong += 1
        conn = sqlite3.connect(db)
        games = conn.execute("SELECT count(*), coalesce(sum(ply), 0) FROM games").fetchone()
        check = conn.execute("PRAGMA quick_check").fetchone()[0]
        conn.close()
    return {"restarts": restarts, "acknowledged": acked_total, "lost": lost, "mismatched runs": wrong,
            "games": games[0], "moves stored": games[1], "integrity": check,
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--restarts", type=int, default=100)
    parser.add_argument("--pairs", type=int, default=100)
    parser.add_argument("--hold", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=6)
    args = parser.parse_args()
    # The service logs each busy answer at WARNING; the figures are what this prints.
    logging.getLogger("bot").setLevel(logging.ERROR)
    for title, run in (("kill -9 restarts", lambda: kill_restarts(args.restarts, args.seed)),
                       ("racing moves (forked processes)", lambda: racing_moves(args.pairs, args.seed)),
                       (f"write lock held {args.hold:g} s by another connection",
                        lambda: held_lock(args.hold, args.seed))):
        t0 = time.perf_counter()
        result = run()
        print(f"== {title} ({time.perf_counter() - t0:.0f} s)")
        for key, value in result.items():
            print(f"  {key}: {value:.3f}" if isinstance(value, float) else f"  {key}: {value}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
