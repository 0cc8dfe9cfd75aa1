"""The console with the web board: ``/web`` and the ``web:`` line under each board give the typing
user's seat link; ``python -m bot web`` serves the board next to the console, and a move made on the
page reaches the console chat as the board reply a typed move gets."""

from __future__ import annotations

import io
import json
import os
import random
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path
from queue import Empty, Queue

from fresh_db import fresh_database

from bot.i18n import t
from bot.platforms.console import PLATFORM, ConsoleChat
from bot.rules import Position
from bot.service import GameService
from bot.service.web import Seat, Watch
from bot.storage import Storage

REPO = Path(__file__).resolve().parents[2]
# Generous: a line the bot prints must come; how long it took is not what is tested.
WAIT = 60.0


def console(tmp_path: Path, web_url: str | None) -> tuple[ConsoleChat, io.StringIO, GameService, Storage]:
    storage = Storage(fresh_database(tmp_path / "console.db"))
    service = GameService(storage, clock=lambda: 1_700_000_000.0, rng=random.Random(1))
    out = io.StringIO()
    return ConsoleChat(service, out, tmp_path / "images", language="en", web_url=web_url), out, service, storage


def test_the_chat_layers_web_aliases_print_the_link_buttons_urls(tmp_path):
    chat, out, service, storage = console(tmp_path, "http://127.0.0.1:9/")
    try:
        chat.line("/new italian white")
        chat.line("/as Bob")
        chat.line("/accept")
        start = len(out.getvalue())
        chat.line("/browser")                  # the chat layer's /web (the console's own is /web)
        said = out.getvalue()[start:]
        assert t("en", "weblink.yours", id=1) in said and "(only Bob)" in said
        [token] = re.findall(r"\[" + re.escape(t("en", "weblink.open")) + r"\]  http://127\.0\.0\.1:9/g/1\?t=(\S+)",
                             said)
        assert service.web.read_token(token).user_id == "bob"
        # The spectator's link is signed too (issue 30: a game's number alone shows nothing).
        [watch] = re.findall(r"\[" + re.escape(t("en", "weblink.spectate")) + r"\]  http://127\.0\.0\.1:9/g/1\?t=(\S+)",
                             said)
        assert service.web.read_token(watch) == Watch(1)
    finally:
        service.close()
        storage.close()


def test_web_gives_the_typing_users_seat_and_a_line_under_each_board(tmp_path):
    chat, out, service, storage = console(tmp_path, "http://127.0.0.1:9")
    try:
        chat.line("/new italian white")
        chat.line("/as Bob")
        chat.line("/accept")
        board_lines = re.findall(r"web: http://127\.0\.0\.1:9/g/1\?t=(\S+)", out.getvalue())
        assert board_lines, out.getvalue()
        seat = service.web.read_token(board_lines[-1])
        assert isinstance(seat, Seat) and (seat.platform, seat.user_id) == (PLATFORM, "bob")
        start = len(out.getvalue())
        chat.line("/web")
        [token] = re.findall(r"web: \S+/g/1\?t=(\S+)", out.getvalue()[start:])
        assert service.web.read_token(token).user_id == "bob"
        chat.line("/as Eve")
        start = len(out.getvalue())
        chat.line("/web #1")
        [watch] = re.findall(r"web: http://127\.0\.0\.1:9/g/1\?t=(\S+)", out.getvalue()[start:])
        assert service.web.read_token(watch) == Watch(1)                      # a spectator's link
        chat.line("/web")
        assert "Eve has no game" in out.getvalue()
    finally:
        service.close()
        storage.close()


def test_without_the_web_board_web_says_how_to_start_it(tmp_path):
    chat, out, service, storage = console(tmp_path, None)
    try:
        chat.line("/new italian white")
        chat.line("/web")
        assert "python -m bot web" in out.getvalue() and "web: http" not in out.getvalue()
    finally:
        service.close()
        storage.close()


class Bot:
    """``python -m bot web`` with its standard input a pipe; its output read line by line."""

    def __init__(self, tmp_path: Path) -> None:
        env = {**os.environ, "PORT": "0", "WEB_HOST": "127.0.0.1", "LANG": "en", "LOG_LEVEL": "WARNING",
               "DRAUGHTS_IMAGES": str(tmp_path / "images")}
        env.pop("DATABASE_URL", None)
        self.proc = subprocess.Popen([sys.executable, "-m", "bot", "web", "--db", str(tmp_path / "bot.db")],
                                     cwd=REPO, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, encoding="utf-8")
        self.lines: Queue[str] = Queue()
        self.errors: Queue[str] = Queue()
        for stream, queue in ((self.proc.stdout, self.lines), (self.proc.stderr, self.errors)):
            threading.Thread(target=self._read, args=(stream, queue), daemon=True).start()

    @staticmethod
    def _read(stream, queue: Queue[str]) -> None:
        for line in stream:
            queue.put(line)

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def wait_for(self, pattern: str, queue: Queue[str] | None = None) -> re.Match[str]:
        seen = []
        while True:
            try:
                line = (queue or self.lines).get(timeout=WAIT)
            except Empty:
                raise AssertionError(f"no line matching {pattern!r}; saw: {''.join(seen)}") from None
            seen.append(line)
            found = re.search(pattern, line)
            if found:
                return found


def test_python_m_bot_web_serves_the_board_next_to_the_console(tmp_path):
    bot = Bot(tmp_path)
    try:
        url = bot.wait_for(r"web board: (http://\S+)", bot.errors).group(1)
        bot.send("/new italian white")
        bot.send("/as Bob")
        bot.send("/accept")
        bot.send("/as Ana")
        bot.send("/web")
        token = bot.wait_for(r"^web: \S+/g/1\?t=(\S+)").group(1)
        with urllib.request.urlopen(f"{url}/g/1?t={token}", timeout=WAIT) as page:
            assert page.status == 200 and b"board.js" in page.read()
        move = Position.start("italian").legal_moves()[0]
        request = urllib.request.Request(f"{url}/api/g/1/move", method="POST",
                                         data=json.dumps({"path": list(move.path), "ply": 0}).encode(),
                                         headers={"Authorization": f"Bearer {token}",
                                                  "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=WAIT) as response:
            assert json.load(response)["state"]["ply"] == 1
        bot.send("/games")          # piped, the console delivers the outbox around each line
        bot.wait_for(re.escape(t("en", "move.played", name="Ana", move=str(move), id=1)))
        try:
            urllib.request.urlopen(urllib.request.Request(f"{url}/api/g/1/resign", method="POST", data=b"{}"),
                                   timeout=WAIT)
            raise AssertionError("a spectator resigned")
        except urllib.error.HTTPError as err:
            assert err.code == 403
    finally:
        if bot.proc.stdin:
            bot.proc.stdin.close()
        code = bot.proc.wait(timeout=WAIT)
    assert code == 0


def test_the_plain_console_starts_the_board_at_the_first_web(tmp_path):
    """``python -m bot`` (the embedded default) has the board too: the first ``/web`` starts it
    (on a free port when $PORT is taken), and the link it prints serves the game's page."""
    import socket

    with socket.socket() as taken:             # $PORT is in use: the board takes another port
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if not k.endswith("_BOT_TOKEN") and k != "DATABASE_URL"}
        env.update(DRAUGHTS_DB=str(tmp_path / "plain.db"), DRAUGHTS_IMAGES=str(tmp_path / "boards"),
                   PYTHONPATH=str(REPO), LANG="en_US.UTF-8", PORT=str(port))
        proc = subprocess.Popen([sys.executable, "-m", "bot"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write("/new italian white\n/as Bob\n/accept\n/web\n")
            proc.stdin.flush()
            link = None
            while link is None:
                line = proc.stdout.readline()
                assert line, "the console ended without a link"
                match = re.match(r"web: (http://127\.0\.0\.1:(\d+)/g/1\?t=\S+)", line)
                if match:
                    link = match.group(1)
                    assert int(match.group(2)) != port
            with urllib.request.urlopen(link, timeout=WAIT) as page:
                assert page.status == 200 and "<html" in page.read().decode().lower()
        finally:
            proc.stdin.close()
            proc.wait(WAIT)
    assert proc.returncode == 0
