"""Several webhook workers of one bot, as production runs them (issue 29, item 3): real
``python -m bot telegram`` processes (bot_on_fake_server: only their Bot API HTTP goes to the fake)
in webhook mode, each on a port of its own, on one SQLite file, all talking to one fake Bot API on a
real socket (fake_bot_server), which counts Telegram's flood limits across all of them as Telegram
does for the bot token.  Updates are POSTed to the workers' webhook servers in turn, as a load
balancer hands them out.

Used by test_telegram_shared_budget.py and bench/telegram_workers.py.  ``shared``: the workers share
one flood budget through the database (TELEGRAM_SHARED_BUDGET=1, webhook mode's default) or each
keeps its own in memory (=0: what every worker did before).  ``speed``: Telegram's time (the fake's
flood control, the workers' limiters: bot_on_fake_server) runs that many times faster than the real
one, and the players' pauses are that much shorter: the same scenario on Telegram's clock."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from fake_bot_server import FakeBotServer
from telegram_fake_api import GROUP, FakeBotAPI

HERE = Path(__file__).parent
TOKEN = "123456:AbCdEfSharedBudgetToken"
SECRET = "Shared_Budget-Secret-0123456789"
HOOK = "https://bot.example.org/tg/hook"
START_SECONDS = 90.0
LATE_SECONDS = 0.1


def player(n: int) -> dict:
    return {"id": 800_000 + n, "is_bot": False, "first_name": f"P{n}", "username": f"p{n}", "language_code": "en"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def listening(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        return True
    return False


class Workers:
    """``count`` webhook workers on ``database``; ``post`` hands an update to worker ``n % count``."""

    def __init__(self, server: FakeBotServer, database: Path, count: int, shared: bool, cwd: Path,
                 speed: float = 1.0) -> None:
        self.server = server
        self.fake = server.fake
        self.database = database
        self.shared = shared
        self.cwd = cwd
        self.speed = speed
        self.ports = [free_port() for _ in range(count)]
        self.processes: list[subprocess.Popen[str]] = []
        self.outputs: list[tuple[str, str]] = []
        self._ids = iter(range(1, 10**9))
        self._lock = threading.Lock()

    def __enter__(self) -> Workers:
        for port in self.ports:        # one after the other: the first one creates the database
            env = {**os.environ, "TELEGRAM_BOT_TOKEN": TOKEN, "DRAUGHTS_DB": str(self.database),
                   "FAKE_BOT_API": self.server.url, "LOG_LEVEL": "INFO", "TELEGRAM_WEBHOOK_URL": HOOK,
                   "TELEGRAM_WEBHOOK_SECRET": SECRET, "TELEGRAM_WEBHOOK_LISTEN": "127.0.0.1", "PORT": str(port),
                   "TELEGRAM_SHARED_BUDGET": "1" if self.shared else "0", "FAKE_BOT_API_SPEED": str(self.speed)}
            for variable in ("WEB_URL", "DATABASE_URL"):
                env.pop(variable, None)
            process = subprocess.Popen([sys.executable, str(HERE / "bot_on_fake_server.py")], env=env, cwd=self.cwd,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.processes.append(process)
            give_up = time.monotonic() + START_SECONDS
            while not listening(port):
                if process.poll() is not None or time.monotonic() > give_up:
                    self.__exit__()
                    raise AssertionError(f"worker on port {port} did not start: {self.outputs}")
                time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
        self.outputs = [process.communicate(timeout=60) for process in self.processes]

    def post(self, worker: int, **payload: Any) -> int:
        """An update as Telegram POSTs it to worker ``worker`` (modulo the count); the HTTP status."""
        with self._lock:
            update = {"update_id": next(self._ids), **payload}
        port = self.ports[worker % len(self.ports)]
        request = urllib.request.Request(f"http://127.0.0.1:{port}/tg/hook", data=json.dumps(update).encode(),
                                         headers={"Content-Type": "application/json",
                                                  "X-Telegram-Bot-Api-Secret-Token": SECRET}, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return int(answer.status)
        except urllib.error.HTTPError as err:
            return int(err.code)

    def say(self, worker: int, chat: dict, user: dict, text: str) -> None:
        message = self.server.call(self.fake.incoming, chat, user, text)
        self.post(worker, message=message)

    def press(self, worker: int, chat: dict, user: dict, data: str, message_id: int) -> None:
        query = self.server.call(self.fake.callback_query, chat, user, data, message_id)
        self.post(worker, callback_query=query)

    def calls(self) -> list[Any]:
        return self.server.call(lambda: list(self.fake.calls))

    def flood_refusals(self) -> int:
        """The 429s Telegram (the fake) answered on its own: the limits the bot overstepped."""
        return sum(1 for c in self.calls() if c.status == 429 and not c.injected)

    def logs(self) -> str:
        return "\n".join(err for _, err in self.outputs)


def wait_for(what: Callable[[], Any], seconds: float) -> Any:
    give_up = time.monotonic() + seconds
    while time.monotonic() < give_up:
        found = what()
        if found:
            return found
        time.sleep(0.05)
    return what()


# -- boards and presses -----------------------------------------------------------------------------------


def _game_of(data: str) -> int | None:
    parts = data.split(":")
    return int(parts[1]) if parts[0] in ("s", "d", "m", "p") and len(parts) > 2 else None


def boards(workers: Workers, game: int, chat: dict = GROUP) -> list[tuple[int, list[str]]]:
    """The bot's messages in ``chat`` whose buttons play ``game``: (message id, its buttons), oldest first."""
    def read() -> list[tuple[int, list[str]]]:
        return sorted((m.message_id, m.buttons()) for m in workers.fake.bot_messages(int(chat["id"]))
                      if any(_game_of(data) == game for data in m.buttons()))
    return workers.server.call(read)


def next_press(buttons: list[str]) -> str | None:
    """A move's next step: a destination (or a path) when a piece is chosen, else the first piece."""
    for kind in ("d:", "m:", "s:"):
        for data in buttons:
            if data.startswith(kind):
                return data
    return None


def play_by_presses(workers: Workers, game: int, white: dict, black: dict, presses: int, first_worker: int,
                    pause: float = 0.3, settle: float = 15.0, deadline: float = float("inf")) -> int:
    """Press through ``game``'s board: each press to the next worker in turn, by whoever's move it is,
    and the next only once the board shows the last one's effect (as a person would); how many
    presses were made (fewer when ``deadline``, on the monotonic clock, came first).  ``pause`` is
    on Telegram's clock."""
    pause /= workers.speed
    made = 0
    for n in range(presses):
        if time.monotonic() > deadline:
            break
        current = boards(workers, game)
        if not current:
            break
        message_id, buttons = current[-1]
        data = next_press(buttons)
        if data is None:
            break
        ply = int(data.split(":")[2])
        workers.press(first_worker + n, GROUP, white if ply % 2 == 0 else black, data, message_id)
        made += 1
        wait_for(lambda m=message_id, b=buttons: boards(workers, game)[-1] != (m, b), settle)
        time.sleep(pause)
    return made


def start_game(workers: Workers, challenger: dict, accepter: dict, game: int, first_worker: int) -> None:
    def offers() -> set[int]:
        return workers.server.call(lambda: {m.message_id for m in workers.fake.bot_messages(int(GROUP["id"]))
                                            if any(data.startswith("acc:") for data in m.buttons())})
    # Messages, not a count: the previous game's challenge loses its Accept button when its edit
    # lands, which may be after this look (a count could then stay level while a new offer came).
    before = offers()
    workers.say(first_worker, GROUP, challenger, "/new italian white 30m")
    # The challenge is stored before it is offered: then any worker can accept it.
    assert wait_for(lambda: bool(offers() - before), 60), f"game {game}'s challenge"
    workers.say(first_worker + 1, GROUP, accepter, "/accept")
    assert wait_for(lambda: boards(workers, game), 30), f"game {game}'s board"


@contextlib.contextmanager
def workers_on_fake(tmp_path: Path, count: int, shared: bool, speed: float = 1.0) -> Iterator[Workers]:
    fake = FakeBotAPI(clock=lambda: time.monotonic() * speed)
    # A message reaches Telegram some real time after the slot its limiter reserved (its upload, a
    # loaded machine): on a sped-up clock that lateness is ``speed`` times longer and would eat the
    # limiter's margin (a chat's 0.1 s a message) as much sooner.  The fake forgives the difference,
    # so a message may be about as late in real time as on the real clock; what it counts (a chat's
    # 1 a second, a group's 20 a minute, 30 a second in all) is unchanged.
    fake.jitter = LATE_SECONDS * (speed - 1)
    with FakeBotServer(fake) as server:
        server.call(server.fake.add_chat, GROUP)
        with Workers(server, tmp_path / "bot.db", count, shared, tmp_path, speed) as workers:
            yield workers


def two_games_in_one_group(workers: Workers, presses: int = 24, limit: float = 240.0) -> dict[str, Any]:
    """Two games in one group, ``presses`` presses a game, the games pressed at once, every press
    to the next worker, for ``limit`` seconds at most; what Telegram saw."""
    a, b, c, d = (player(n) for n in range(1, 5))
    start_game(workers, a, b, 1, 0)
    start_game(workers, c, d, 2, 1)
    started = time.monotonic()
    made: dict[int, int] = {}
    threads = [threading.Thread(target=lambda g=g, w=w, k=k: made.__setitem__(
                   g, play_by_presses(workers, g, w, k, presses, g, deadline=started + limit)))
               for g, w, k in ((1, a, b), (2, c, d))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.monotonic() - started
    time.sleep(max(2.0 / workers.speed, 0.5))      # what is still on its way
    return {"presses": sum(made.values()), "seconds": seconds, "refused": workers.flood_refusals()}


def burst(workers: Workers, chats: int, per_chat: int, first: int = 100) -> dict[str, Any]:
    """``chats`` private chats (players ``first``, ``first`` + 1, ...) ask /help ``per_chat`` times
    each, all at once, spread over the workers: the global limit (many chats) or a chat's own (many
    messages in one)."""
    users = [player(first + n) for n in range(chats)]
    jobs = [(n, user) for n, user in enumerate(users) for _ in range(per_chat)]
    started = time.monotonic()
    threads = []
    for k, (_, user) in enumerate(jobs):
        chat = {"id": user["id"], "type": "private", "first_name": user["first_name"]}
        threads.append(threading.Thread(target=workers.say, args=(k, chat, user, "/help")))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    def answered() -> int:
        ids = {u["id"] for u in users}
        return sum(1 for c in workers.calls() if c.method == "sendMessage" and c.status == 200
                   and int(c.wire.get("chat_id", 0)) in ids)
    wait_for(lambda: answered() >= len(jobs), 60)
    return {"messages": len(jobs), "answered": answered(), "seconds": time.monotonic() - started,
            "refused": workers.flood_refusals()}
