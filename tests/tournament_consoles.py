"""Tournaments typed into real `python -m bot console` processes (issue 32): shared by
tests/console/test_console_tournament_postgres.py (two consoles on one PostgreSQL database),
tests/service/test_tournaments_processes.py and bench/tournament_robustness.py (a console killed
with SIGKILL while a round's last result is recorded and the next round paired).

A console is driven through its standard input; its output goes to a file (never a pipe this
process must drain).  ``Console.run`` sends lines, then ``/clock`` alone, and waits for the clock's
line: the console answers its lines in order, so that line says every line before it was handled.

What the bot stored is read from the database itself (the tournament's row and its games), and
checked against what the script decided: ``check_tournament`` says every round was paired once and
as the core pairs it from the rounds before, no round skipped, every game of every round stored
once, and the standings of ``python -m bot tournaments show --json`` equal ``bot.tournaments.standings``
recomputed from the pairings and the script's results.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bot import tournaments as core
from bot.app import open_store
from bot.storage.base import Store
from bot.tournaments import Pairing, Round, Tournament

REPO = Path(__file__).resolve().parents[1]
CLOCK_LINE = "(clock: "


def console_env(database_url: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_BOT_TOKEN") and k != "DATABASE_URL"}
    env.update(PYTHONPATH=str(REPO), LANG="en_US.UTF-8", LOG_LEVEL="ERROR", DRAUGHTS_AI_WORKERS="1")
    if database_url is not None:
        env["DATABASE_URL"] = database_url
    return env


class Console:
    """`python -m bot console` in its own session, its output going to a file.  ``prefix`` runs
    before the bot (the bench's observer of the pairing); the database is ``db`` (a SQLite file,
    or a postgresql:// URL)."""

    count = 0

    def __init__(self, db: str, folder: Path, prefix: list[str] | None = None,
                 env: dict[str, str] | None = None) -> None:
        Console.count += 1
        self.out_path = folder / f"console-{Console.count}.out"
        self.err_path = folder / f"console-{Console.count}.err"
        self._out = self.out_path.open("w")
        self._err = self.err_path.open("w")
        program = prefix if prefix is not None else ["-m", "bot"]
        self.proc = subprocess.Popen([sys.executable, *program, "console", "--db", db, "--images",
                                      str(folder / "boards")], stdin=subprocess.PIPE, stdout=self._out,
                                     stderr=self._err, env=env or console_env(), cwd=folder, text=True,
                                     start_new_session=True)
        self.read = 0

    def output(self) -> str:
        return self.out_path.read_text(errors="replace")

    def send(self, lines: list[str]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write("\n".join(lines) + "\n")
        self.proc.stdin.flush()

    def run(self, lines: list[str], timeout: float = 60.0) -> str:
        """Send ``lines`` and wait until they are answered; their output."""
        self.send([*lines, "/clock"])
        return self.wait(timeout, 1 + sum(line.startswith("/clock") for line in lines))

    def wait(self, timeout: float = 60.0, clocks: int = 1) -> str:
        """Wait for the next ``clocks`` clock lines; the output up to the last."""
        give_up = time.monotonic() + timeout
        while True:
            text = self.output()
            at, end = self.read, -1
            for _ in range(clocks):
                at = text.find(CLOCK_LINE, at)
                end = text.find("\n", at) if at >= 0 else -1
                if end < 0:
                    break
                at = end
            if end >= 0:
                chunk, self.read = text[self.read:end + 1], end + 1
                return chunk
            if self.proc.poll() is not None:
                raise AssertionError(f"the console ended ({self.proc.returncode}): {self.err_path.read_text()[-3000:]}")
            if time.monotonic() > give_up:
                raise AssertionError(f"no answer in {timeout} s: {text[self.read:][-2000:]}")
            time.sleep(0.01)

    def kill(self) -> None:
        """SIGKILL to the console and anything it started."""
        self.proc.send_signal(signal.SIGKILL)
        self._reap()

    def finish(self, timeout: float = 60.0) -> None:
        """End of input: the console ends on its own."""
        with contextlib.suppress(BrokenPipeError, ValueError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self._reap()

    def _reap(self) -> None:
        self.proc.wait()
        with contextlib.suppress(BrokenPipeError, ValueError, AssertionError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self._out.close()
        self._err.close()


def uid(name: str) -> str:
    """A console user's id (the console's own rule: the name in lower case)."""
    return name.lower()


def create_lines(chat: str, create: str, players: list[str]) -> list[list[str]]:
    """Creating, joining and starting as batches of lines (the admin, each player, the admin)."""
    return [[f"/chat {chat}", "/as Admin", create],
            *[[f"/chat {chat}", f"/as {name}", "/tournament join"] for name in players],
            [f"/chat {chat}", "/as Admin", "/tournament start"]]


@dataclass
class Reader:
    """The tournament and its games as stored, read straight from the database."""

    db: str
    store: Store = field(init=False)

    def __post_init__(self) -> None:
        self.store = open_store(self.db)

    def close(self) -> None:
        self.store.close()

    def tournament_id(self, chat: str) -> int:
        found = self.store.tournaments.find(platform="console", chat_id=chat)
        assert len(found) == 1, found
        return found[0].id

    def tournament(self, tid: int) -> Tournament:
        row = self.store.tournaments.get(tid)
        assert row is not None
        return core.from_data(json.loads(row.state))

    def game_ids(self, tid: int) -> dict[tuple[int, str], list[int]]:
        """(round, white id) -> the games stored for that pairing (one, if none was lost or doubled)."""
        out: dict[tuple[int, str], list[int]] = {}
        for g in self.store.tournaments.games(tid):
            out.setdefault((g.round, g.white_id), []).append(g.game_id)
        return out

    def game(self, game_id: int) -> Any:
        return self.store.games.get(game_id)

    def chat_games(self, chat: str) -> list[int]:
        return [g.id for g in self.store.games.find(platform="console", chat_id=chat)]


def scripted_round(rnd: Round, results: dict[int, str], ids: dict[tuple[int, str], list[int]]) -> Round:
    """A round as the bot paired it, with the results the script chose (by game number); a
    pairing with no game (a bye) as it is."""
    pairings = []
    for p in rnd.pairings:
        if p.black is None:
            pairings.append(Pairing(p.white, None))
        else:
            game = ids[(rnd.number, p.white)][0]
            pairings.append(Pairing(p.white, p.black, results[game]))  # type: ignore[arg-type]
    return Round(rnd.number, tuple(pairings))


def check_tournament(reader: Reader, tid: int, results: dict[int, str], chat_games: list[int],
                     cli_json: dict[str, Any]) -> list[str]:
    """Every violation found (none is the goal):

    - the rounds are numbered 1, 2, ... with none missing or doubled, and the tournament finished;
    - each round is the round the core pairs from the rounds before it (paired once, as the
      stored tournament alone determines it);
    - every game of every round is stored once (one game number per pairing, no game of the chat
      outside the rounds), exists and is finished, with the result the script chose;
    - the standings shown by ``tournaments show --json`` equal ``bot.tournaments.standings``
      recomputed from the pairings and the script's results (points and tie-breaks per player,
      and the order of players unequal on them)."""
    bad: list[str] = []
    t = reader.tournament(tid)
    ids = reader.game_ids(tid)
    if [r.number for r in t.rounds] != list(range(1, len(t.rounds) + 1)):
        bad.append(f"round numbers {[r.number for r in t.rounds]}")
    if t.status is not core.Status.FINISHED or len(t.rounds) != t.total_rounds:
        bad.append(f"status {t.status} after {len(t.rounds)} of {t.total_rounds} rounds")
    for k in range(1, len(t.rounds)):
        before = replace(t, rounds=t.rounds[:k], ended_early=False)
        again = core.pair_next_round(before).rounds[k]
        if [(p.white, p.black) for p in again.pairings] != [(p.white, p.black) for p in t.rounds[k].pairings]:
            bad.append(f"round {k + 1} is not the round its predecessors pair")
    seen: list[int] = []
    for rnd in t.rounds:
        for p in rnd.pairings:
            if p.black is None:
                continue
            games = ids.get((rnd.number, p.white), [])
            if len(games) != 1:
                bad.append(f"round {rnd.number} {p.white}-{p.black}: games {games}")
                continue
            seen.append(games[0])
            row = reader.game(games[0])
            if row is None or row.white_id != p.white or row.black_id != p.black:
                bad.append(f"game #{games[0]} missing or of other players")
            elif row.status != "finished":
                bad.append(f"game #{games[0]} is {row.status}")
            if p.result != results.get(games[0]):
                bad.append(f"game #{games[0]}: stored {p.result}, scripted {results.get(games[0])}")
    if len(seen) != len(set(seen)) or sorted(seen) != sorted(chat_games):
        bad.append(f"games of the rounds {sorted(seen)} != games of the chat {sorted(chat_games)}")
    if not bad:
        rounds = tuple(scripted_round(r, results, ids) for r in t.rounds)
        ours = [(row.player, row.points, tuple((tb.value, round(v, 6)) for tb, v in row.tiebreaks))
                for row in core.standings(replace(t, rounds=rounds))]
        shown = [(p["id"], p["points"], tuple((name, round(v, 6)) for name, v in p["tiebreaks"].items()))
                 for p in cli_json["standings"]]
        # The stored players keep their starting numbers, so even the last resort orders alike.
        if shown != ours:
            bad.append(f"standings shown {shown} != recomputed {ours}")
    return bad


def show_json(db: str, tid: int, env: dict[str, str], cwd: Path) -> dict[str, Any]:
    """``python -m bot tournaments show ID --json`` on the database."""
    done = subprocess.run([sys.executable, "-m", "bot", "tournaments", "show", str(tid), "--json", "--db", db],
                          capture_output=True, text=True, env=env, cwd=cwd, timeout=120)
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


# How a game of the script ends: black resigns, white resigns, a draw agreed.
ENDINGS = ("1-0", "0-1", "1/2-1/2")


@dataclass
class RoundPlay:
    """One round's games as the script plays them: ``results`` (game -> result, from white's side)
    and, when the last result is held back, the console and lines that give it."""

    number: int
    results: dict[int, str]
    last: tuple[Console, list[str]] | None = None
    # The absent player's games, which end only once the clock passes.
    forfeits: int = 0


def _first_move(reader: Reader, game: int) -> str:
    from bot.rules import Position

    row = reader.game(game)
    return str(Position.from_fen(row.variant, row.fen).legal_moves()[0])


def play_round(consoles: list[Console], reader: Reader, tid: int, chat: str, choose: Any,
               absent: str | None = None, moves: bool = True, hold_last: bool = False) -> RoundPlay:
    """Plays the current round: each game's steps (white's move, black's move, a resignation or a
    draw offer, its confirmation or acceptance) go to the consoles in turn (game i's step s to
    console (i + s) mod n), every console's share of a step sent at once and all of them awaited
    before the next step.  ``choose(game)`` picks how a game ends (an index into ENDINGS).  The
    ``absent`` player never moves: their games are forfeits once the clocks pass (the caller's
    ``/clock``).  With ``hold_last`` the last game's final line is not sent but returned."""
    t = reader.tournament(tid)
    rnd = t.rounds[-1]
    ids = reader.game_ids(tid)
    games = []
    for p in rnd.pairings:
        if p.black is None or p.result is not None:
            continue
        game = ids[(rnd.number, p.white)][0]
        games.append((t.player(p.white).name, t.player(p.black).name, game))
    results: dict[int, str] = {}
    forfeits = 0
    steps: list[list[tuple[int, list[str]]]] = [[], [], [], []]
    held: list[tuple[int, list[str]]] = []
    for i, (white, black, game) in enumerate(games):
        if absent in (white, black):
            results[game] = "+-" if black == absent else "-+"
            forfeits += 1
            if black == absent and moves:
                steps[0].append((i, [f"/as {white}", f"/m #{game} {{move}}"]))
            continue
        how = ENDINGS[choose(game)]
        results[game] = how
        if moves:
            steps[0].append((i, [f"/as {white}", f"/m #{game} {{move}}"]))
            steps[1].append((i + 1, [f"/as {black}", f"/m #{game} {{move}}"]))
        if how == "1/2-1/2":
            first, second = [f"/as {white}", f"/draw #{game}"], [f"/as {black}", f"/draw #{game}"]
        else:
            loser = black if how == "1-0" else white
            first, second = [f"/as {loser}", f"/resign #{game}"], [f"/as {loser}", f"/resign #{game}"]
        steps[2].append((i + 2, first))
        if hold_last and i == len(games) - 1:
            held.append((i + 3, second))
        else:
            steps[3].append((i + 3, second))
    for step in steps:
        share: dict[int, list[str]] = {}
        for at, lines in step:
            game = int(lines[1].split("#")[1].split()[0])
            if "{move}" in lines[1]:
                lines = [lines[0], lines[1].replace("{move}", _first_move(reader, game))]
            share.setdefault(at % len(consoles), []).extend([f"/chat {chat}", *lines])
        for n, lines in share.items():
            consoles[n].send([*lines, "/clock"])
        for n in share:
            consoles[n].wait()
    last = None
    if held:
        at, lines = held[0]
        last = (consoles[at % len(consoles)], [f"/chat {chat}", *lines])
    return RoundPlay(rnd.number, results, last, forfeits)
