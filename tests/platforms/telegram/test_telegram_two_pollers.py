"""Two processes polling with one token (issue 29, item 2): two real ``python -m bot telegram``
processes (bot_on_fake_server: only the HTTP goes to the fake) poll one fake Bot API on a real
socket, which ends the older of two getUpdates long polls with 409 as Telegram does.  The second
starts while the first serves (a deploy overlapping old and new, or a stray copy with the
production token): exactly one of them keeps serving, the other stops with exit status 1 and one
line that says another process serves the token; every message is answered, and once one process
is left, exactly once.  With one database and with a database each, and as a deploy that stops
the old process (SIGTERM) as soon as the new one polls."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_bot_server import FakeBotServer

from bot.platforms.telegram import adapter as telegram_adapter

HERE = Path(__file__).parent
TOKEN = "123456:AbCdEfTwoPollersToken"
OVERLAP_SECONDS = 30.0              # the longest the test lets both run (the 20-30 s)
AFTER_SECONDS = 4.0                 # the survivor alone, still answering
START_SECONDS = 60.0


def _user(n: int) -> dict:
    return {"id": 700_000 + n, "is_bot": False, "first_name": f"P{n}", "language_code": "en"}


def _private(n: int) -> dict:
    return {"id": 700_000 + n, "type": "private", "first_name": f"P{n}"}


class Run:
    def __init__(self, server: FakeBotServer, tmp_path: Path) -> None:
        self.server = server
        self.tmp_path = tmp_path
        self.sent = 0

    def start(self, database: Path) -> subprocess.Popen[str]:
        env = {**os.environ, "TELEGRAM_BOT_TOKEN": TOKEN, "DRAUGHTS_DB": str(database),
               "FAKE_BOT_API": self.server.url, "LOG_LEVEL": "INFO"}
        for variable in ("TELEGRAM_WEBHOOK_URL", "WEB_URL", "DATABASE_URL"):
            env.pop(variable, None)
        return subprocess.Popen([sys.executable, str(HERE / "bot_on_fake_server.py")], env=env,
                                cwd=self.tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def polls(self) -> list:
        return [c for c in list(self.server.fake.calls) if c.method == "getUpdates"]

    def say(self) -> None:
        """A new user writes /help to the bot in a private chat of their own."""
        self.sent += 1
        n = self.sent
        fake = self.server.fake

        def write() -> None:
            fake.queue_update(message=fake.incoming(_private(n), _user(n), "/help"))
        self.server.call(write)

    def answers(self) -> dict[int, int]:
        counts: dict[int, int] = {}
        for c in list(self.server.fake.calls):
            if c.method == "sendMessage" and c.status == 200:
                chat = int(c.wire["chat_id"])
                counts[chat - 700_000] = counts.get(chat - 700_000, 0) + 1
        return counts

    def wait_for(self, what, seconds: float) -> bool:
        give_up = time.monotonic() + seconds
        while time.monotonic() < give_up:
            if what():
                return True
            time.sleep(0.05)
        return False


@pytest.mark.parametrize(("shared_database", "deploy"), [(True, False), (False, False), (True, True)],
                         ids=["one-database", "a-database-each", "deploy-stops-the-old-one"])
def test_after_two_processes_overlap_exactly_one_serves(tmp_path, shared_database, deploy):
    """``deploy``: the old process is told to stop (SIGTERM) as soon as the new one polls, as a
    deploy that overlaps them does; its last poll at stop must not end the new one's."""
    with FakeBotServer() as server:
        server.fake.long_poll = 10.0              # PTB's run_polling asks for 10 s long polls
        run = Run(server, tmp_path)
        first = run.start(tmp_path / "first.db")
        second: subprocess.Popen[str] | None = None
        try:
            assert run.wait_for(lambda: run.polls() or first.poll() is not None, START_SECONDS), "first polls"
            assert first.poll() is None, first.communicate()
            run.say()
            assert run.wait_for(lambda: run.answers().get(1), 15), "the first process answers"
            per_message = run.answers()[1]

            second = run.start(tmp_path / ("first.db" if shared_database else "second.db"))
            processes = (first, second)
            # Both run: a message every half second, until one has stopped (or the overlap is over).
            next_message = time.monotonic()
            during = run.sent
            overlap: float | None = None           # since the first poll ended by 409
            alone_after: float | None = None
            while overlap is None or time.monotonic() - overlap < OVERLAP_SECONDS:
                if time.monotonic() >= next_message:
                    run.say()
                    next_message += 0.5
                if overlap is None and any(c.status == 409 for c in run.polls()):
                    overlap = time.monotonic()
                    if deploy:
                        first.send_signal(signal.SIGTERM)
                if any(p.poll() is not None for p in processes):
                    alone_after = time.monotonic() - (overlap or time.monotonic())
                    break
                during = run.sent
                time.sleep(0.05)
            # The survivor alone: it keeps answering.
            after = time.monotonic()
            while time.monotonic() - after < AFTER_SECONDS:
                run.say()
                time.sleep(0.5)
            everything = run.sent
            run.wait_for(lambda: len(run.answers()) >= everything, 15)
            time.sleep(1.0)                        # a second answer to one message would show now
            still = [p for p in processes if p.poll() is None]
            stopped = [p for p in processes if p.poll() is not None]
            answers = run.answers()
            conflicts = sum(1 for c in run.polls() if c.status == 409)
            print(f"\ntelegram two pollers ({'one database' if shared_database else 'a database each'}"
                  f"{', deploy' if deploy else ''}): one alone {alone_after or 0:.1f} s after the first 409; "
                  f"{conflicts} getUpdates ended by 409; serving: "
                  f"{', '.join('first' if p is first else 'second' for p in still) or 'none'}; "
                  f"{everything} messages, {len(answers)} answered, "
                  f"{sum(1 for n in answers.values() if n > per_message)} answered twice "
                  f"({everything - during} sent after one stopped)")
        finally:
            for p in (first, second):
                if p is not None and p.poll() is None:
                    p.send_signal(signal.SIGINT)
            outputs = {id(p): p.communicate(timeout=30) for p in (first, second) if p is not None}

        assert len(stopped) == 1 and len(still) == 1, (
            f"exactly one process keeps serving: {[p.returncode for p in stopped]} stopped; "
            f"stderr: {[outputs[id(p)][1][-2000:] for p in stopped]}")
        loser, survivor = stopped[0], still[0]
        assert survivor.returncode == 0, outputs[id(survivor)][1][-3000:]
        if deploy:
            assert loser is first and loser.returncode == 0, outputs[id(loser)][1][-3000:]
            # The old one's poll, ended by the new one's (a retry too if the old one is slow to
            # stop), never the new one's: its last poll at stop is not sent.
            assert conflicts < telegram_adapter.CONFLICTS_TO_STOP
        else:
            assert loser.returncode == 1
            errors = [line for line in outputs[id(loser)][1].splitlines() if " ERROR " in line or "CRITICAL" in line]
            assert len(errors) == 1, outputs[id(loser)][1][-3000:]
            assert "another instance uses TELEGRAM_BOT_TOKEN" in errors[0] and "serves" in errors[0]
        assert "Traceback" not in outputs[id(loser)][1] + outputs[id(survivor)][1]
        assert sorted(answers) == list(range(1, everything + 1)), f"every message answered: {sorted(answers)}"
        # Once one process is left, each message is answered once.  During the overlap a message
        # may reach both: the Bot API hands an update out until a later poll confirms it, and the
        # other process can poll in between (one round trip); nothing shared tells them apart.
        assert all(answers[n] == per_message for n in range(during + 1, everything + 1)), answers
        assert all(n <= 2 * per_message for n in answers.values()), f"at most twice: {answers}"
