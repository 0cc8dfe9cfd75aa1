"""A chat on standard input and output, for trying the bot and for end-to-end tests.

``/as NAME`` switches who is typing, ``/chat NAME`` which chat (a new name is
a new group chat), ``/press ACTION`` presses a button, ``/reply N TEXT``
answers message N.  Images are saved to a folder and their paths printed.
"""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path
from typing import TextIO

from bot.service import ChatEvent, GameService, Outgoing, Reply
from bot.storage import StorageBusy

PLATFORM = "console"


class ConsoleChat:
    """Reads lines, hands them to the service, prints the replies."""

    def __init__(self, service: GameService, out: TextIO, images: Path, user: str = "Ana",
                 chat: str = "main", language: str | None = None) -> None:
        self.service = service
        self.out = out
        self.images = Path(images)
        self.user = user
        self.chat = chat
        self.language = language or os.environ.get("LANG", "en")
        self.counter = 0
        # The deadline ticker and the input loop take turns.
        self._lock = threading.Lock()

    def prompt(self) -> str:
        return f"{self.user}@{self.chat}> "

    def line(self, text: str) -> None:
        """Handle one input line (deadlines that fell due are announced first)."""
        with self._lock:
            self._tick()
            self._line(text)

    def _tick(self) -> None:
        for outgoing in self.service.tick(platform=PLATFORM):
            self._print_outgoing(outgoing)

    def _ticker(self, stop: threading.Event, every: float) -> None:
        while not stop.wait(every):
            with self._lock:
                self._tick()

    def _line(self, text: str) -> None:
        stripped = text.strip()
        if not stripped:
            return
        switch = re.fullmatch(r"/(as|chat)\s+(\S.{0,40})", stripped)
        if switch:
            name = switch.group(2).strip()
            if switch.group(1) == "as":
                self.user = name
            else:
                self.chat = name
            self._say(f"(now {self.user} in chat {self.chat})")
            return
        action = reply_to = None
        press = re.fullmatch(r"/press\s+(\S+)", stripped)
        if press:
            action, stripped = press.group(1), None
        reply = re.fullmatch(r"/reply\s+(\d+)\s+(.+)", stripped or "")
        if reply:
            reply_to, stripped = reply.group(1), reply.group(2)
        event = ChatEvent(platform=PLATFORM, chat_id=self.chat, chat_kind="group", user_id=self.user.lower(),
                          user_name=self.user, username=self.user.lower(), language=self.language,
                          text=stripped, action=action, reply_to=reply_to)
        for r in self.service.handle(event):
            self._print_reply(self.chat, r)

    def _say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def _print_outgoing(self, outgoing: Outgoing) -> None:
        self._print_reply(outgoing.chat_id, outgoing.reply, unprompted=True)

    def _save(self, data: bytes, suffix: str) -> Path:
        self.images.mkdir(parents=True, exist_ok=True)
        path = self.images / f"message-{self.counter}{suffix}"
        try:
            path.write_bytes(data)
        except OSError:
            path.unlink(missing_ok=True)     # no half-written image left behind
            raise
        return path

    def _print_reply(self, chat: str, reply: Reply, unprompted: bool = False) -> None:
        self.counter += 1
        head = f"[{self.counter}] bot"
        if unprompted or chat != self.chat:
            head += f" → {chat}"
        if reply.private:
            head += f" (only {self.user})"
        if reply.replaces_board:
            head += " (replaces the board)"
        self._say(f"{head}: {reply.text}")
        if reply.board_text:
            self._say(reply.board_text)
        if reply.image:
            self._save_and_say("board image", reply.image, ".png")
        if reply.animation:
            self._save_and_say("capture animation", reply.animation, ".gif")
        if reply.document:
            name, data = reply.document
            self._save_and_say("file", data, "-" + Path(name).name)
        for row in reply.buttons:
            for button in row:
                self._say(f"  [{button.label}]  {button.command or '/press ' + button.action}")
        if reply.game_id is not None:
            try:
                self.service.remember_board(PLATFORM, chat, str(self.counter), reply.game_id)
            except StorageBusy:
                # Only /reply to this message is lost; the game itself is stored.
                self._say(f"  (the database is busy: /reply {self.counter} will not find this board)")

    def _save_and_say(self, what: str, data: bytes, suffix: str) -> None:
        # The reply (a move, say) is already stored and printed: a file that cannot be
        # written (full disk, no permission) is one line, not the end of the chat.
        try:
            self._say(f"  {what}: {self._save(data, suffix)}")
        except OSError as err:
            self._say(f"  {what} could not be saved in {self.images}: {err.strerror or err}")

    def run(self, stdin: TextIO, interactive: bool = False, tick_every: float = 20.0) -> None:
        """Read until the end of input; when interactive, also check deadlines every ``tick_every`` s."""
        self._say("Draughts console chat. /help for the commands; /as NAME, /chat NAME, /press ACTION, "
                  "/reply N TEXT to act as others; end of input (Ctrl-D) to quit.")
        stop = threading.Event()
        if interactive:
            threading.Thread(target=self._ticker, args=(stop, tick_every), daemon=True).start()
        try:
            while True:
                if interactive:
                    self.out.write(self.prompt())
                    self.out.flush()
                text = stdin.readline()
                if not text:
                    break
                self.line(text)
        finally:
            stop.set()
        if interactive:
            self._say("")
