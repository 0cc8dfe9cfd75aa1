"""kill -9 while a tournament round's last result is recorded and the next round paired (issue 32).

A campaign in the style of bench/robustness.py: each run starts `python -m bot console` on its own
copy of a database holding a Swiss just started (40 players by default, so pairing a round takes a
noticeable time), plays each round's games by script (a move each, then a resignation or an agreed
draw) and sends the round's last result (the confirming `/resign` or the accepting `/draw`), then kills the console
with SIGKILL after a random delay: a third of the delays are drawn over the whole time the line
takes to be answered, a third over the time the pairing takes in it, a third over the time after
the pairing (the games made, the change committed, the answer drawn), all measured in a first run
that is not killed (the result itself is read and recorded in about a millisecond before the
pairing).  The console is started again, the result given again if it was lost, and the tournament
played on, a kill at every round's last result (the last round's ends the tournament).

Where a kill landed is observed, not steered: the console runs with `bot.tournaments.pair_next_round`
wrapped by this script (no hook in the bot) to append "start"/"end" lines to a file, which
survive the kill.  A kill is counted as before the pairing (the result not stored and no pairing
begun), during the pairing (begun, not ended), after the pairing (ended, nothing committed) or
after the commit (the next round stored).

After every kill: the round's last game is either still running with the round unpaired, or
finished with the next round stored (never a half).  At the end of a run: each round paired
exactly once, the rounds numbered 1, 2, ... with none skipped, each the round the core pairs from
the rounds before it, every game of every round stored once and finished with the script's
result, no game of the chat outside the rounds, and the standings of `python -m bot tournaments
show ID --json` equal to bot.tournaments.standings recomputed from the pairings and the script's
results (tests/tournament_consoles.py `check_tournament`).  Violations must be 0.

Run from the repository root::

    python bench/tournament_robustness.py                  # 30 runs, 40 players, 4 rounds
    python bench/tournament_robustness.py --runs 5 --players 24 --rounds 3
    python bench/tournament_robustness.py --pg             # on a throw-away PostgreSQL server
"""

from __future__ import annotations

import argparse
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from tournament_consoles import (  # noqa: E402
    Console,
    Reader,
    check_tournament,
    console_env,
    create_lines,
    play_round,
    show_json,
)

CHAT = "club"

# Runs `python -m bot` with the pairing observed: sys.argv[1] is the file its marks go to.
OBSERVER = """
import os, runpy, sys, time
import bot.tournaments as core
log = os.open(sys.argv.pop(1), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
pair = core.pair_next_round
def observed(t):
    os.write(log, f"start {time.time()}\\n".encode())
    out = pair(t)
    os.write(log, f"end {time.time()}\\n".encode())
    return out
core.pair_next_round = observed
sys.argv[0] = "bot"
runpy.run_module("bot", run_name="__main__", alter_sys=True)
"""


@dataclass
class Databases:
    """Where the runs' databases live: SQLite files copied from the base, or PostgreSQL databases
    made from the base as a template."""

    folder: Path
    pg: Any = None                      # tests/pg_server.PostgresServer
    # Several campaigns may share one server (the tests' own).
    prefix: str = field(default_factory=lambda: f"tk_{uuid.uuid4().hex[:8]}")

    def base(self) -> str:
        return self.pg.url(f"{self.prefix}_base") if self.pg is not None else str(self.folder / "base.db")

    def _sql(self, statement: str) -> None:
        import psycopg

        with psycopg.connect(self.pg.url(), autocommit=True) as conn:
            conn.execute(statement)

    def prepare_base(self) -> None:
        if self.pg is not None:
            self._sql(f'CREATE DATABASE "{self.prefix}_base" TEMPLATE template0 ENCODING \'UTF8\'')

    def copy(self, n: int) -> str:
        if self.pg is not None:
            self._sql(f'CREATE DATABASE "{self.prefix}_{n}" TEMPLATE "{self.prefix}_base"')
            return str(self.pg.url(f"{self.prefix}_{n}"))
        target = self.folder / f"run{n}.db"
        with sqlite3.connect(self.base()) as src, sqlite3.connect(target) as dst:
            src.backup(dst)
        return str(target)

    def drop(self, runs: int) -> None:
        if self.pg is not None:
            for name in ("base", *map(str, range(runs + 1))):
                self._sql(f'DROP DATABASE IF EXISTS "{self.prefix}_{name}" WITH (FORCE)')


@dataclass
class Tally:
    runs: int = 0
    kills: int = 0
    where: dict[str, int] = field(default_factory=lambda: dict.fromkeys(
        ("before_pairing", "during_pairing", "after_pairing", "after_commit"), 0))
    violations: list[str] = field(default_factory=list)
    restart_s: list[float] = field(default_factory=list)
    pair_s: list[float] = field(default_factory=list)

    def summary(self) -> str:
        w = self.where
        return (f"runs {self.runs}, kills {self.kills} (before pairing {w['before_pairing']}, during pairing "
                f"{w['during_pairing']}, after pairing before commit {w['after_pairing']}, after commit "
                f"{w['after_commit']}), violations {len(self.violations)}")


def marks(path: Path) -> list[tuple[str, float]]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) == 2:
            out.append((parts[0], float(parts[1])))
    return out


class Run:
    """One database, its console (started again after each kill) and what the script chose."""

    def __init__(self, db: str, folder: Path, env: dict[str, str], seed: int) -> None:
        self.db, self.folder, self.env = db, folder, env
        self.log = folder / "pairing.log"
        self.rng = random.Random(seed)
        self.results: dict[int, str] = {}
        self.console = self.start()
        self.reader = Reader(db)
        self.tid = self.reader.tournament_id(CHAT)

    def start(self) -> Console:
        console = Console(self.db, self.folder, prefix=["-c", OBSERVER, str(self.log)], env=self.env)
        console.run([f"/chat {CHAT}"])
        return console

    def play(self) -> tuple[int, tuple[Console, list[str]]]:
        """Plays the current round up to its last result, which it returns unsent."""
        played = play_round([self.console], self.reader, self.tid, CHAT, lambda _g: self.rng.randrange(3),
                            hold_last=True)
        self.results.update(played.results)
        assert played.last is not None
        return played.number, played.last

    def settled(self, number: int) -> tuple[bool, list[str]]:
        """Whether round ``number``'s last result is stored, and what is wrong with the state."""
        t = self.reader.tournament(self.tid)
        complete = len(t.rounds) >= number and t.rounds[number - 1].complete
        bad = []
        if complete and len(t.rounds) == number and t.status.value != "finished":
            bad.append(f"round {number} complete but the next one not paired")
        if not complete and len(t.rounds) != number:
            bad.append(f"round {number} incomplete with {len(t.rounds)} rounds stored")
        return complete, bad

    def close(self) -> None:
        if self.console.proc.poll() is None:
            self.console.finish()
        self.reader.close()


def last_game(lines: list[str]) -> int:
    return int(lines[-1].split("#")[1])


def measure(db: str, folder: Path, env: dict[str, str], seed: int, rounds: int) -> list[tuple[float, float, float]]:
    """A run without kills: per round, (the pairing's start, its end, the answer) in seconds after
    the round's last line was sent."""
    run = Run(db, folder, env, seed)
    timings = []
    try:
        for _number in range(rounds):
            _n, (console, lines) = run.play()
            before = len(marks(run.log))
            sent = time.time()
            console.send([*lines, "/clock"])
            console.wait()
            answered = time.time() - sent
            mine = marks(run.log)[before:]
            starts = [at for kind, at in mine if kind == "start"]
            ends = [at for kind, at in mine if kind == "end"]
            # The last round pairs nothing (its result ends the tournament): its window is the whole line.
            timings.append((starts[0] - sent, ends[-1] - sent, answered) if starts and ends
                           else (0.0, answered, answered))
    finally:
        run.close()
    return timings


def campaign(runs: int, players: int, rounds: int, seed: int = 1, server: object | None = None,
             say: Callable[[str], None] = print, windows: tuple[int, ...] = (0, 1, 2)) -> Tally:
    """``runs`` runs of a ``players``-player Swiss of ``rounds`` rounds, a kill at each round's last
    result; on PostgreSQL when given a server (tests/pg_server.py), else on SQLite files.  The kills'
    delays are drawn from ``windows``: 0 the whole answer, 1 the pairing, 2 after the pairing."""
    tally = Tally()
    folder = Path(tempfile.mkdtemp(prefix="tkill-"))
    dbs = Databases(folder, server)
    dbs.prepare_base()
    env = console_env(None)
    names = [f"P{n:02d}" for n in range(1, players + 1)]
    base = Console(dbs.base(), folder, env=env)
    create = f"/tournament new swiss spanish {rounds} 1h deadline 1d"
    for lines in create_lines(CHAT, create, names):
        base.run(lines, timeout=120)
    base.finish()
    (folder / "m").mkdir()
    timings = measure(dbs.copy(0), folder / "m", env, 0, rounds)
    tally.pair_s += [end - start for start, end, _answered in timings]
    say(f"unkilled run: the last line of a round answered in {statistics.median(t[2] for t in timings):.3f} s, "
        f"its pairing from {statistics.median(t[0] for t in timings[:-1] or timings):.3f} s to "
        f"{statistics.median(t[1] for t in timings[:-1] or timings):.3f} s after it was sent (medians over "
        f"{len(timings)} rounds)")
    rng = random.Random(seed)
    for n in range(1, runs + 1):
        run_folder = folder / f"r{n}"
        run_folder.mkdir()
        run = Run(dbs.copy(n), run_folder, env, seed + n)
        try:
            one_run(run, rng, timings, tally, windows)
        except AssertionError as e:
            tally.violations.append(f"run {n}: {e}")
        finally:
            run.close()
        tally.runs += 1
        say(f"run {n}: {tally.summary()}")
    dbs.drop(runs)
    if tally.violations:
        say(f"the runs' databases and console output are kept in {folder}")
    else:
        shutil.rmtree(folder, ignore_errors=True)
    return tally


def learned(timing: tuple[float, float, float], seen: list[tuple[str, float]],
            sent: float) -> tuple[float, float, float]:
    """The pairing's window, updated from a pairing seen whole after a line sent at ``sent``: on a
    shared machine the time a pairing takes drifts with the load, so the window follows it."""
    starts = [at for kind, at in seen if kind == "start"]
    ends = [at for kind, at in seen if kind == "end"]
    if not starts or not ends or ends[-1] < starts[-1]:
        return timing
    return (starts[-1] - sent, ends[-1] - sent, max(timing[2], ends[-1] - sent))


def one_run(run: Run, rng: random.Random, timings: list[tuple[float, float, float]], tally: Tally,
            windows: tuple[int, ...] = (0, 1, 2)) -> None:
    for index in range(len(timings)):
        number, (console, lines) = run.play()
        start, end, answered = timings[index]
        # A third of the kills anywhere in the line's answer, a third inside the pairing, a third
        # after it (the round's games made and the change committed; the time before the pairing,
        # the result read and the round found complete, is about a millisecond).
        kind = rng.choice(windows)
        delay = (rng.uniform(0, answered * 1.1), rng.uniform(start, end), rng.uniform(end, answered))[kind]
        before = len(marks(run.log))
        sent = time.time()
        console.send(lines)
        time.sleep(max(delay, 0.0))
        console.kill()
        tally.kills += 1
        seen = marks(run.log)[before:]
        mine = [mark for mark, _at in seen]
        timings[index] = learned(timings[index], seen, sent)
        restarted = time.perf_counter()
        run.console = run.start()
        tally.restart_s.append(time.perf_counter() - restarted)
        complete, bad = run.settled(number)
        tally.violations += [f"round {number}: {b}" for b in bad]
        if complete:
            tally.where["after_commit"] += 1
        elif not mine:
            tally.where["before_pairing"] += 1
        elif mine[-1] == "start":
            tally.where["during_pairing"] += 1
        else:
            tally.where["after_pairing"] += 1
        game = last_game(lines)
        # The result given again until it is stored (a resignation asks again once its question
        # was lost or expired).
        for _ in range(3):
            if run.reader.game(game).status == "finished":
                break
            before, sent = len(marks(run.log)), time.time()
            run.console.run(lines)
            timings[index] = learned(timings[index], marks(run.log)[before:], sent)
        complete, bad = run.settled(number)
        tally.violations += [f"round {number} after the restart: {b}" for b in bad]
        if not complete:
            tally.violations.append(f"round {number}: its last result never stored")
            return
    run.console.finish()
    shown = show_json(run.db, run.tid, run.env, run.folder)
    tally.violations += check_tournament(run.reader, run.tid, run.results, run.reader.chat_games(CHAT), shown)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--players", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pg", action="store_true", help="on a throw-away PostgreSQL server (tests/pg_server.py)")
    args = parser.parse_args()
    began = time.perf_counter()
    server = None
    if args.pg:
        from pg_server import started_server

        server = started_server(durable=True)
    try:
        tally = campaign(args.runs, args.players, args.rounds, args.seed, server,
                         lambda line: print(line, flush=True))
    finally:
        if server is not None:
            server.stop()
    for v in tally.violations:
        print("violation:", v)
    print(f"restart median {statistics.median(tally.restart_s or [0]):.2f} s; pairing a round "
          f"{statistics.median(tally.pair_s or [0]):.3f} s (median); wall {time.perf_counter() - began:.0f} s")
    print(f"tournament kill -9 ({'PostgreSQL' if args.pg else 'SQLite'}): {tally.summary()}")
    return 1 if tally.violations else 0


if __name__ == "__main__":
    sys.exit(main())
