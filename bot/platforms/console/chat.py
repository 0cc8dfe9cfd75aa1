"""A chat on standard input and output, for trying the bot and for end-to-end tests.

``/as NAME`` switches who is typing, ``/chat NAME`` which chat (a new name is
a new group chat), ``/press ACTION`` presses a button, ``/reply N TEXT``
answers message N, ``/clock +3h`` makes time pass (reminders, time-outs, tomorrow's daily).
``/web`` [#id] prints the link to the game's page for the user typing (their seat in it), and once
the web board runs a ``web:`` line under each board does the same.  ``python -m bot web`` starts
the board with the console; in the plain console the first ``/web`` starts it.
Images are saved to a folder and their paths printed; a run never overwrites an earlier
run's images (those are left in the folder, the new ones go to a ``run-N`` folder inside it).
The language is the one ``$LANG`` names (es, it, else English) until a chat sets its own.

What the service says on its own (reminders, losses on time, a bot's move that took long) comes
from its outbox: it is printed before and after each input line and, while the console waits for
input (at a prompt or on a pipe), by a thread that sleeps until the service's next timer or until
the service says it wrote something.  A piped console's end of input waits for the bot's work
under way (at most END_WAIT_SECONDS), prints it, and exits.

A database that cannot be used for a while (locked, its server away) stops no line: each is
answered as the service answers it (that the storage is unavailable, say), and what the service
has to say on its own is printed once the database answers again.
"""

from __future__ import annotations

import datetime as dt
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from bot.service import Button, ChatEvent, GameService, Reply, StorageBusy, StorageGone, parse_duration

PLATFORM = "console"
# How long the end of input waits for a delivery under way (a send and its write) to finish.
DELIVERY_JOIN_SECONDS = 30.0
# The longest the interactive delivery thread sleeps (a timer set by another process is seen
# at most this late).
MAX_IDLE_SECONDS = 30.0
# How long a piped console waits for the bot's move after a line (its longest think is a few seconds),
# so that it comes right after the line; one that comes later is printed when it comes.
BOT_WAIT_SECONDS = 60.0
# How long the end of a piped console's input waits for the bot's work under way (a first move
# on a machine that still compiles the engine takes up to a minute), to print it before exiting.
END_WAIT_SECONDS = 120.0
# The furthest /clock moves the service's time ahead (100 years).
MAX_CLOCK_AHEAD = 36_500 * 86_400



def run_folder(images: Path) -> Path:
    """Where this run saves its images: the folder itself while it holds no earlier run's images,
    else a new ``run-N`` folder inside it (the earlier images stay as they were)."""
    try:
        earlier = any(p.is_file() and not p.is_symlink() for p in images.glob("message-*"))
    except OSError:
        return images
    if not earlier:
        return images
    n = 2
    while (images / f"run-{n}").exists():
        n += 1
    return images / f"run-{n}"

class ConsoleChat:
    """Reads lines, hands them to the service, prints the replies."""

    def __init__(self, service: GameService, out: TextIO, images: Path, user: str = "Ana",
                 chat: str = "main", language: str | None = None, web_url: str | None = None,
                 start_web: Callable[[], str | None] | None = None) -> None:
        self.service = service
        # The web board's address when it runs next to the console (python -m bot web), or how to
        # start it when /web first asks for it (the plain console).
        self.web_url: str | None = None
        self._start_web = start_web
        if web_url:
            self._serve_web(web_url)
        self.out = out
        self.images = run_folder(Path(images))
        # /clock moves the service's clock forward by this much (the wall clock keeps running).
        self.offset = 0.0
        self._wall_clock = service.clock
        self.user = user
        self.chat = chat
        # The entry point passes $LANG (bot.config); without it, English.
        self.language = language or "en"
        self.counter = 0
        self.interactive = False
        # The delivery thread and the input loop take turns.
        self._lock = threading.Lock()
        self._wake = threading.Event()
        service.add_listener(self._on_service_change)

    def prompt(self) -> str:
        return f"{self.user}@{self.chat}> "

    def line(self, text: str) -> None:
        """Handle one input line (what the service has to say on its own comes first, and any it
        wrote because of the line comes after it)."""
        with self._lock:
            self._deliver_if_possible()
            self._line(text)
            if not self.interactive:
                # Read from a pipe or a file, the bot's answer belongs right after the line that
                # asked for it (at the prompt, the delivery thread prints it when it comes).
                self.service.settle(BOT_WAIT_SECONDS)
            self._deliver_if_possible()

    def _deliver_if_possible(self) -> None:
        """``_deliver``, unless the database is locked or its server away: the line is answered
        anyway, and what is pending is printed by the next look (the delivery thread's, or the
        next line's).  StorageGone still ends the chat."""
        try:
            self._deliver()
        except StorageBusy:
            pass            # StorageUnavailable too: the store logs the outage, once a minute

    def _on_service_change(self, platform: str) -> None:
        if platform == PLATFORM:
            self._wake.set()

    def _deliver(self) -> None:
        """Do the timed work that fell due and print every pending outbox message, once.
        StorageGone when the database file was deleted or replaced since the start."""
        self.service.check_storage()
        self.service.run_due(PLATFORM)
        # Its own wake-up is answered right here (everything committed so far is read below).
        self._wake.clear()
        for item in self.service.pending_messages(PLATFORM, limit=1000):
            self._print_reply(item.chat_id, item.reply, unprompted=True)
            self.service.message_sent(item.id)

    def _idle_seconds(self, longest: float) -> float:
        due = self.service.next_wakeup(PLATFORM)
        if due is None:
            return longest
        return min(max(due - self.service.clock(), 0.0), longest)

    def _delivery_thread(self, stop: threading.Event, longest: float) -> None:
        stuck = 0
        while not stop.is_set():
            self._wake.clear()
            try:
                with self._lock:
                    self._deliver()
                wait = self._idle_seconds(longest)
            except StorageBusy:
                wait = 1.0          # the next look tries again
            except StorageGone:
                return              # the next input line meets it too, and ends the chat
            if wait <= 0:
                # Still due right after being done: work the service cannot do (a damaged game).
                # Back off instead of spinning.
                wait = min(0.05 * 2 ** stuck, longest)
                stuck += 1
            else:
                stuck = 0
            # _deliver clears the wake-up: a stop asked while this thread waited for the lock (the
            # end of input delivers last, holding it) would otherwise be slept through.
            if stop.is_set():
                return
            self._wake.wait(wait)

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
        web = re.fullmatch(r"/web(?:\s+#?(\d{1,9}))?", stripped)
        if web:
            try:
                self._web_link(int(web.group(1)) if web.group(1) else None)
            except StorageBusy:
                self._say("(the database cannot be used right now: try /web again in a moment)")
            return
        clock = re.fullmatch(r"/clock(?:\s+\+?(\S{1,20}))?", stripped)
        if clock:
            self._move_clock(clock.group(1))
            return
        action: str | None = None
        reply_to: str | None = None
        typed: str | None = stripped        # a press types nothing
        press = re.fullmatch(r"/press\s+(\S+)", stripped)
        if press:
            action, typed = press.group(1), None
        reply = re.fullmatch(r"/reply\s+(\d+)\s+(.+)", typed or "")
        if reply:
            reply_to, typed = reply.group(1), reply.group(2)
        event = ChatEvent(platform=PLATFORM, chat_id=self.chat, chat_kind="group", user_id=self.user.lower(),
                          user_name=self.user, username=self.user.lower(), language=self.language,
                          text=typed, action=action, reply_to=reply_to,
                          # Whoever runs the console owns its chats.
                          is_admin=True)
        for r in self.service.handle(event):
            self._print_reply(self.chat, r)

    def _serve_web(self, url: str) -> None:
        self.web_url = url.rstrip("/")
        # The chat layer's /web aliases (/browser, /tavola...) answer with links to it too.
        self.service.chat.serve_web(self.web_url, self.service.web)

    def _web_link(self, game_id: int | None) -> None:
        """``/web`` [#id]: the page of the user's game here (their newest), or of game ``id``."""
        if self.web_url is None and self._start_web is not None:
            url = self._start_web()
            self._start_web = None
            if url is not None:
                self._serve_web(url)
                self._say(f"(the web board runs at {self.web_url})")
        if self.web_url is None:
            self._say("(the web board is not running: start the bot with `python -m bot web`)")
            return
        if game_id is None:
            mine = self.service.web.player_games(PLATFORM, self.chat, self.user.lower())
            if not mine:
                self._say(f"({self.user} has no game in chat {self.chat}: /web #id shows any game)")
                return
            game_id = mine[0]
        if self.service.web.version(game_id) is None:
            self._say(f"(there is no game #{game_id})")
            return
        self._say(f"web: {self._web_url(game_id)}")

    def _web_url(self, game_id: int) -> str:
        """The page of a game, with the typing user's seat when they play in it."""
        return f"{self.web_url}{self.service.web.link_path(game_id, PLATFORM, self.user.lower())}"

    def _move_clock(self, amount: str | None) -> None:
        """``/clock +3h``: time passes for the service at once (what falls due is printed next)."""
        seconds = parse_duration(amount) if amount else 0
        if seconds is None:
            self._say("(write the time to pass like /clock +30m, /clock +3h or /clock +1d)")
            return
        if self.offset + seconds > MAX_CLOCK_AHEAD:
            # Far enough for any test of reminders or dailies; further, dates stop being dates.
            self._say(f"(the clock moves at most {MAX_CLOCK_AHEAD // 86400}d ahead of the real time)")
            return
        if seconds and self.offset == 0.0:
            wall = self._wall_clock
            self.service.clock = lambda: wall() + self.offset
        self.offset += seconds
        now = dt.datetime.fromtimestamp(self.service.clock(), dt.UTC).strftime("%Y-%m-%d %H:%M")
        hours, minutes = divmod(int(self.offset) // 60, 60)
        self._say(f"(clock: {now} UTC, {hours}h{minutes:02d}m ahead of the real time)")

    def _say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

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
        if reply.spoiler:
            self._say(f"  [spoiler, hidden until tapped in a chat] {reply.spoiler}")
        if reply.board_text:
            self._say(reply.board_text)
            if self.web_url and reply.game_id is not None:
                try:
                    self._say(f"  web: {self._web_url(reply.game_id)}")
                except StorageBusy:
                    pass            # /web prints it again
        if reply.image:
            self._save_and_say("board image", reply.image, ".png")
        if reply.animation:
            self._save_and_say("capture animation", reply.animation, ".gif")
        if reply.document:
            name, data = reply.document
            self._save_and_say("file", data, "-" + Path(name).name)
        for row in [*reply.buttons, self._review(chat, reply)]:
            for button in row:
                # A link button shows where it goes; an action button how to press it here.
                shown = button.url or button.command or '/press ' + button.action
                self._say(f"  [{button.label}]  {shown}")
        if reply.game_id is not None or reply.post_id is not None or reply.record is not None:
            try:
                # A new chat record stands for an edit of the record message printed first (the
                # console prints an edit as a new line): that first one stays the one remembered.
                record = (reply.record if reply.record is not None
                          and self.service.record_message(PLATFORM, chat, reply.record) is None else None)
                self.service.remember_board(PLATFORM, chat, str(self.counter), reply.game_id, reply.post_id,
                                            record=record)
            except StorageBusy:
                # Only /reply to this message is lost; the game itself is stored.
                self._say(f"  (the database is busy: /reply {self.counter} will not find this board)")

    def _review(self, chat: str, reply: Reply) -> list[Button]:
        """A finished game's board gets its Review link while the web board runs (the page at the
        game's first position), as the chats' adapters put it beside Open board."""
        if not self.web_url or reply.game_id is None or reply.board_stage is None or reply.board_stage % 2 == 0:
            return []
        try:
            review = self.service.chat.review_button(PLATFORM, chat, reply.game_id)
        except StorageBusy:
            return []           # /web prints the page's link again
        return [review] if review is not None else []

    def _save_and_say(self, what: str, data: bytes, suffix: str) -> None:
        # The reply (a move, say) is already stored and printed: a file that cannot be
        # written (full disk, no permission) is one line, not the end of the chat.
        try:
            self._say(f"  {what}: {self._save(data, suffix)}")
        except OSError as err:
            self._say(f"  {what} could not be saved in {self.images}: {err.strerror or err}")

    def run(self, stdin: TextIO, interactive: bool = False, tick_every: float = MAX_IDLE_SECONDS,
            end_wait: float = END_WAIT_SECONDS) -> None:
        """Read until the end of input; meanwhile a thread prints what the service says on its own
        as it comes, waking at its next timer (and at least every ``tick_every`` s).  Piped, the
        end of input waits for the bot's work under way (at most ``end_wait`` s) and prints it."""
        self._say("Draughts console chat. /help for the commands; /as NAME, /chat NAME, /press ACTION, "
                  "/reply N TEXT to act as others; end of input (Ctrl-D) to quit.")
        stop = threading.Event()
        self.interactive = interactive
        # Piped too: a bot's move that outlasts the wait after its line is printed when it comes,
        # not when the next line does (which, from a pipe that stays open, may be never).
        delivery = threading.Thread(target=self._delivery_thread, args=(stop, tick_every), daemon=True,
                                    name="console-delivery")
        delivery.start()
        try:
            while True:
                if interactive:
                    self.out.write(self.prompt())
                    self.out.flush()
                text = stdin.readline()
                if not text:
                    break
                self.line(text)
            if not interactive:
                # A script's last line may have started a bot's move: it is printed before the end
                # (interactive, Ctrl-D means quit now; the move is found again at the next start).
                self.service.settle(end_wait)
                with self._lock:
                    self._deliver_if_possible()
        finally:
            stop.set()
            self._wake.set()
            # Ended before the caller closes the service and its database: a delivery still
            # writing through a connection closed under it could take the process down.
            delivery.join(DELIVERY_JOIN_SECONDS)
        if interactive:
            self._say("")
