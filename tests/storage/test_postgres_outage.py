"""The bot's PostgreSQL server goes away and comes back (project issue 30, item 6).

A real throw-away server (tests/pg_stoppable.py) is stopped under the real service, built as
production builds it, and started again on the same port and data folder.  While it is away:
/help and /rules are answered (they need no storage; the language is the user's, the chat's own
being stored); a command that needs the database is told "the bot's storage is unavailable" once
per chat and outage (a button press every time, privately); the log has a line when the outage
starts, none per event and no traceback.  Once it is back, the first command is answered as
usual: the store looks for the server at most every PROBE_SECONDS and opens a new pool (the old
one's reconnection backoff grows to minutes).  The piped console (a real process) keeps reading and
answering through the outage and exits 0.

How long the first correct answer takes after the return, and the log's lines, are measured by
bench/pg_outage.py."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Executor, Future
from pathlib import Path
from typing import Any

import pytest

from bot.app import build_service
from bot.i18n import t
from bot.rules import Position
from bot.service import ChatEvent, GameService, Reply, StorageUnavailable
from bot.service.thinking import Thinker

pytest.importorskip("psycopg")

from catalog_text import pattern, says, tr  # noqa: E402
from pg_stoppable import StoppableServer  # noqa: E402
from pg_stoppable import module_server as module_server  # noqa: E402  (the fixture ``server``)

from bot.storage.postgres import PROBE_SECONDS, PostgresStore  # noqa: E402

PLATFORM = "test"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def url(server: StoppableServer) -> Iterator[str]:
    if not server.running:
        server.resume()
    yield server.new_database()
    if not server.running:
        server.resume()


def handle(service: GameService, user: str, text: str | None = None, chat: str = "g1", language: str = "es",
           action: str | None = None) -> list[Reply]:
    return service.handle(ChatEvent(platform=PLATFORM, chat_id=chat, user_id=user, user_name=user.capitalize(),
                                    username=user, language=language, text=text, action=action, is_admin=True))


def say(service: GameService, user: str, text: str, chat: str = "g1", language: str = "es") -> str:
    return "\n".join(reply.text for reply in handle(service, user, text, chat, language))


def outage_lines(records: list[logging.LogRecord]) -> list[logging.LogRecord]:
    """What was logged at WARNING and above (ours and psycopg's)."""
    return [r for r in records if r.levelno >= logging.WARNING and r.name.startswith(("bot", "psycopg"))]


def test_while_the_server_is_away_help_and_rules_answer_and_a_move_hears_it_once_per_chat(server, url, caplog,
                                                                                         bot_errors):
    caplog.set_level(logging.INFO)
    service = build_service(url)
    store = service.storage
    try:
        assert isinstance(store, PostgresStore)
        assert "#1" in say(service, "ana", "/new italian white")
        assert "#1" in say(service, "bob", "/accept #1")
        board = handle(service, "ana", "/board")
        action = next(b.action for row in board[-1].buttons for b in row if b.action)
        position = Position.start("italian")
        help_text = say(service, "ana", "/help", chat="g3")
        rules_text = say(service, "ana", "/rules", chat="g3")          # a chat without games: the language's
        assert t("es", "help.intro") in help_text and rules_text
        unavailable = t("es", "error.storage_unavailable")
        caplog.clear()

        for outage, mode in enumerate(("fast", "immediate")):
            server.halt(mode)
            # Commands that need no storage, as ever (more than once: they are not "told once").
            for _ in range(3):
                assert say(service, "ana", "/help", chat="g3") == help_text
                assert say(service, "ana", "/ayuda") == help_text
                assert say(service, "ana", "/rules", chat="g3") == rules_text
            # One that needs it: told once per chat and outage, in the user's language.
            mover = ("ana", "bob")[outage]
            move = str(position.legal_moves()[0])
            assert say(service, mover, f"/m {move}") == unavailable
            assert say(service, "bob", "/board") == ""
            assert say(service, mover, f"/m {move}") == ""
            assert say(service, "eve", "/new", chat="g2", language="it") == t("it", "error.storage_unavailable")
            assert say(service, "eve", "/new", chat="g2", language="it") == ""
            # A button press is answered each time, privately (it stops the button's spinner).
            for _ in range(2):
                [pressed] = handle(service, "ana", action=action)
                assert pressed.private and pressed.text == unavailable
            # The delivery's look at the outbox and the timers meets the outage too, quietly.
            for _ in range(3):
                assert service.run_due(PLATFORM) == 0
                with pytest.raises(StorageUnavailable, match="cannot be reached"):
                    service.pending_messages(PLATFORM)
                assert service.next_wakeup(PLATFORM) is not None

            logged = outage_lines(caplog.records)
            assert [r.exc_info for r in logged] == [None] * len(logged), "no traceback"
            assert len(logged) <= 2, [r.getMessage() for r in logged]
            assert all("cannot be reached" in r.getMessage() for r in logged)
            assert bot_errors and all("cannot be reached" in r.getMessage() for r in bot_errors)
            bot_errors.clear()
            caplog.clear()

            server.resume()
            # The first command after the store's next look is answered as usual.
            time.sleep(PROBE_SECONDS)
            answer = say(service, mover, f"/m {move}")
            assert answer and answer != unavailable and move in answer
            position = position.play(position.legal_moves()[0])
            assert (store.game(1).ply, store.game(1).fen) == (outage + 1, position.fen())
            created = say(service, "eve", "/new", chat="g2", language="it")
            assert pattern("it", "new.open", name="Eve").match(created), created
            logged = outage_lines(caplog.records)
            assert [r.getMessage().split(" answers again")[0] for r in logged] == [f"database {store.name}"]
            caplog.clear()
    finally:
        service.close()
        store.close()


@pytest.mark.parametrize("mode", ["fast", "immediate"])
def test_a_restart_between_two_commands_goes_unnoticed(server, url, mode, caplog):
    """The pool's idle connections died with the old server; the next command must not meet them
    (each is looked at before it is used: the server's goodbye, or its end, is waiting on it)."""
    caplog.set_level(logging.INFO)
    service = build_service(url)
    store = service.storage
    try:
        assert "#1" in say(service, "ana", "/new italian white")
        # Several connections in the pool, all idle.
        threads = [threading.Thread(target=say, args=(service, user, "/games")) for user in ("ana", "bob", "eve")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        # ... and none still being made (one the pool is still connecting when the server stops
        # logs its failure: psycopg_pool's line, not ours).
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            stats = store._pool.get_stats()
            if stats["pool_size"] == stats["pool_available"] >= 1:
                break
            time.sleep(0.01)
        caplog.clear()
        server.halt(mode)
        server.resume()
        accepted = say(service, "bob", "/accept #1")
        assert "#1" in accepted and accepted != t("es", "error.storage_unavailable")
        assert store.game(1) is not None and store.game(1).status == "active"
        for user in ("ana", "bob", "eve"):
            assert say(service, user, "/games") != t("es", "error.storage_unavailable")
        assert outage_lines(caplog.records) == []
    finally:
        service.close()
        store.close()


class Console:
    """``python -m bot console`` on a database URL, its input a pipe; output read as it comes."""

    def __init__(self, url: str, images: Path) -> None:
        env = dict(os.environ, LANG="en", DRAUGHTS_IMAGES=str(images), LOG_LEVEL="WARNING")
        self.proc = subprocess.Popen([sys.executable, "-m", "bot", "console", "--db", url], cwd=ROOT, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, bufsize=1)
        self.out: list[str] = []
        self.err: list[str] = []
        for stream, into in ((self.proc.stdout, self.out), (self.proc.stderr, self.err)):
            threading.Thread(target=self._read, args=(stream, into), daemon=True).start()
        self.marks = 0

    @staticmethod
    def _read(stream, into: list[str]) -> None:
        for line in stream:
            into.append(line.rstrip("\n"))

    def lines(self, *texts: str) -> list[str]:
        """Send lines; what the console printed for them (a /clock after them marks their end)."""
        start = len(self.out)
        for text in (*texts, "/clock"):
            assert self.proc.stdin is not None
            self.proc.stdin.write(text + "\n")
            self.proc.stdin.flush()
        self.marks += 1
        deadline = time.monotonic() + 120
        while sum(line.startswith("(clock:") for line in self.out) < self.marks:
            assert self.proc.poll() is None, f"the console exited ({self.proc.returncode}): {self.err[-5:]}"
            assert time.monotonic() < deadline, self.out[start:]
            time.sleep(0.02)
        return self.out[start:]

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return self.proc.wait(120)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


def test_the_piped_console_keeps_answering_through_the_outage_and_exits_0(server, url, tmp_path):
    console = Console(url, tmp_path / "boards")
    try:
        started = console.lines("/new italian white", "/as Bob", "/accept #1", "/as Ana")
        assert any(says(line, "en", "game.started", id=1, variant=tr("en", "variant.italian"), white="Ana", black="Bob")
                   for line in started), started
        server.halt("immediate")
        printed = console.lines("/help", "/m 21-17", "/m 21-17", "/rules", "/chat other", "/m 21-17",
                                "/web", "/chat main", "/m 21-17", "/help")
        unavailable = t("en", "error.storage_unavailable")
        told = [line for line in printed if unavailable in line]
        assert len(told) == 2, printed                  # once in chat main, once in chat other
        assert sum(t("en", "help.intro") in line for line in printed) == 2
        assert any(tr("en", "rules.italian") in line for line in printed), printed
        assert "(the database cannot be used right now: try /web again in a moment)" in printed

        server.resume()
        time.sleep(PROBE_SECONDS)
        played = console.lines("/m 21-17")
        assert any(says(line, "en", "move.played", name="Ana", move="21-17", id=1) for line in played), played
        assert console.close() == 0
        assert not any("Traceback" in line for line in console.err), console.err
        assert len(console.err) <= 3, console.err         # the outage's start, its end
    finally:
        if console.proc.poll() is None:
            console.proc.kill()


class HeldExecutor(Executor):
    """The engine's jobs, run only when the test says (in its thread)."""

    def __init__(self) -> None:
        self.jobs: list[tuple[Future, Any, tuple]] = []

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()
        self.jobs.append((future, fn, args))
        return future

    def run_all(self) -> int:
        jobs, self.jobs = self.jobs, []
        for future, fn, args in jobs:
            if future.set_running_or_notify_cancel():
                future.set_result(fn(*args))
        return len(jobs)


def test_a_bot_move_found_while_the_server_is_away_is_played_after_its_return(server, url, bot_errors):
    service = build_service(url)
    executor = HeldExecutor()
    service.thinker = Thinker(executor, workers=2)
    try:
        say(service, "ana", "/play italian white level 1")
        say(service, "ana", f"/m {Position.start('italian').legal_moves()[0]}")
        server.halt("fast")
        assert executor.run_all() == 1             # the engine's answer meets the outage: no traceback
        assert say(service, "ana", "/help") and service.run_due(PLATFORM) == 0
        assert all("cannot be reached" in r.getMessage() and r.exc_info is None for r in bot_errors)
        bot_errors.clear()
        server.resume()
        time.sleep(PROBE_SECONDS)
        service.run_due(PLATFORM)                  # the bot is to move and nothing thinks: it thinks again
        assert executor.run_all() == 1
        assert service.storage.game(1).ply == 2
    finally:
        service.close()
        service.storage.close()


def test_a_long_outage_is_logged_once_a_minute_not_once_an_event(server, url, monkeypatch, caplog, bot_errors):
    """DOWN_LOG_SECONDS (a minute) made 0.4 s: about a line for each 0.4 s of the outage, however
    many commands came meanwhile."""
    import bot.storage.postgres as postgres

    monkeypatch.setattr(postgres, "DOWN_LOG_SECONDS", 0.4)
    monkeypatch.setattr(postgres, "PROBE_SECONDS", 0.05)
    caplog.set_level(logging.INFO)
    service = build_service(url)
    try:
        say(service, "ana", "/new italian white")
        caplog.clear()
        server.halt("fast")
        started, events = time.monotonic(), 0
        while time.monotonic() - started < 1.5:
            say(service, "ana", "/games")
            events += 1
            time.sleep(0.01)
        lines = [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert events > 40
        assert 2 <= len(lines) <= 6, [r.getMessage() for r in lines]
        assert all("cannot be reached" in r.getMessage() and r.exc_info is None for r in lines)
        bot_errors.clear()
    finally:
        service.close()
        service.storage.close()
