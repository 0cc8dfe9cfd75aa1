"""The bot while its PostgreSQL server is away (project issue 30, item 6): what it answers during
the outage, what it logs, and how soon after the server's return the first command is answered
as usual.

A throw-away server (tests/pg_stoppable.py, durable) is stopped for ``--outage`` seconds
(``pg_ctl stop -m fast``, or ``--mode immediate``) and started again on the same port and data
folder, under

- the service, in this process (``bot.app.build_service`` on the URL, as production builds it):
  every 0.5 s /help, a move, /rules in one chat and the move in a second chat; after the return,
  the move every 0.1 s until it is played;
- with ``--console``, also ``python -m bot console --db URL`` on a pipe: the same lines, and the
  process must keep going and exit 0.

Printed: the answers during the outage by kind (and the slowest), the log lines at WARNING and
above and the tracebacks among them, and the seconds from the server's return to the first
correct answer, with its ratio to the target.

Targets (issue 30): /help and /rules answered during the outage; a move told "the bot's storage is
unavailable" once per chat; at most a few log lines, no traceback; the first correct answer
<= 2 s after the server is back (ratio <= 1.0).  Before the fix (measured on this machine, 20 s
outage): every command answered "Something went wrong", each storage command after a 5 s wait,
25 log lines with 12 tracebacks, the first correct answer 21.1 s after the return; the console
exited 1 at the first line of the outage.

Run from the repository root::

    python bench/pg_outage.py                  # about 30 s
    python bench/pg_outage.py --outage 20 --mode immediate --console

Exit status 0 whatever the figures (a measurement); 1 only if the run itself failed.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.append(str(REPO / "tests"))
os.environ.setdefault("DRAUGHTS_AI_WORKERS", "1")

from bot.app import build_service  # noqa: E402
from bot.i18n import t  # noqa: E402
from bot.rules import Position  # noqa: E402
from bot.service import ChatEvent  # noqa: E402

TARGET_SECONDS = 2.0


class Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def kind(text: str) -> str:
    if not text:
        return "(no answer)"
    for key in ("error.storage_unavailable", "error.internal", "error.busy", "help.intro"):
        if t("en", key)[:40] in text:
            return key
    if text.startswith("Italian draughts"):
        return "rules"
    return text.splitlines()[0][:60]


def service_run(server, outage: float, mode: str) -> None:
    url = server.new_database()
    service = build_service(url)
    collect = Collect()
    logging.getLogger().addHandler(collect)
    logging.getLogger().setLevel(logging.INFO)

    def say(user: str, text: str, chat: str = "g1") -> tuple[str, float]:
        start = time.monotonic()
        replies = service.handle(ChatEvent(platform="bench", chat_id=chat, user_id=user, user_name=user.capitalize(),
                                           username=user, language="en", text=text, is_admin=True))
        return "\n".join(r.text for r in replies), time.monotonic() - start

    try:
        say("ana", "/new italian white")
        say("bob", "/accept #1")
        move = str(Position.start("italian").legal_moves()[0])
        collect.records.clear()
        server.halt(mode)
        stopped = time.monotonic()
        answers: Counter[tuple[str, str]] = Counter()
        slowest = 0.0
        while time.monotonic() - stopped < outage:
            for text, chat in (("/help", "g1"), (f"/m {move}", "g1"), ("/rules", "g1"), (f"/m {move}", "g2")):
                answer, took = say("ana", text, chat)
                answers[(text.split()[0] + " in " + chat, kind(answer))] += 1
                slowest = max(slowest, took)
            time.sleep(0.5)
        during = list(collect.records)
        server.resume()
        back = time.monotonic()
        first = None
        while time.monotonic() - back < 120:
            answer, _ = say("ana", f"/m {move}")
            if f"Ana played {move}" in answer:
                first = time.monotonic() - back
                break
            time.sleep(0.1)
        print(f"service, {outage:g} s outage (pg_ctl stop -m {mode}):")
        for (what, said), count in sorted(answers.items()):
            print(f"  {what:<12} {count:>4} x  {said}")
        print(f"  slowest answer during the outage: {slowest:.3f} s")
        print(f"  log lines (WARNING+) during the outage: {len(during)}, tracebacks: "
              f"{sum(1 for r in during if r.exc_info)}; after the return: {len(collect.records) - len(during)}")
        for record in collect.records[:6]:
            print(f"    {record.levelname} {record.name}: {record.getMessage()[:110]}")
        if first is None:
            print("  first correct answer after the return: none within 120 s")
        else:
            print(f"  first correct answer after the return: {first:.2f} s (ratio to the {TARGET_SECONDS:g} s "
                  f"target: {first / TARGET_SECONDS:.2f})")
    finally:
        logging.getLogger().removeHandler(collect)
        service.close()
        service.storage.close()


def console_run(server, outage: float, mode: str) -> None:
    url = server.new_database()
    env = dict(os.environ, LANG="en", DRAUGHTS_IMAGES=str(Path(server.folder) / "boards"))
    proc = subprocess.Popen([sys.executable, "-m", "bot", "console", "--db", url], cwd=REPO, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            bufsize=1)
    out: list[tuple[float, str]] = []
    err: list[str] = []

    def read(stream, into, stamp: bool) -> None:
        for line in stream:
            into.append((time.monotonic(), line.rstrip("\n")) if stamp else line.rstrip("\n"))

    threading.Thread(target=read, args=(proc.stdout, out, True), daemon=True).start()
    threading.Thread(target=read, args=(proc.stderr, err, False), daemon=True).start()

    def send(*lines: str) -> None:
        assert proc.stdin is not None
        for line in lines:
            proc.stdin.write(line + "\n")
        proc.stdin.flush()

    def seen(text: str, since: int) -> float | None:
        return next((at for at, line in out[since:] if text in line), None)

    try:
        send("/new italian white", "/as Bob", "/accept #1", "/as Ana")
        deadline = time.monotonic() + 120
        while seen("Game #1 starts", 0) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        start_out, start_err = len(out), len(err)
        server.halt(mode)
        stopped = time.monotonic()
        sent = 0
        while time.monotonic() - stopped < outage and proc.poll() is None:
            try:
                send("/help", "/m 21-17", "/rules", "/chat other", "/m 21-17", "/chat main")
            except BrokenPipeError:
                break
            sent += 6
            time.sleep(1.0)
        exited = proc.poll()
        server.resume()
        back = time.monotonic()
        first = None
        if exited is None:
            while first is None and time.monotonic() - back < 120 and proc.poll() is None:
                mark = len(out)
                try:
                    send("/m 21-17")
                except BrokenPipeError:
                    break
                wait_until = time.monotonic() + 0.2
                while first is None and time.monotonic() < wait_until:
                    at = seen("Ana played 21-17", mark)
                    first = None if at is None else at - back
                    time.sleep(0.01)
        unavailable = sum(t("en", "error.storage_unavailable") in line for _, line in out[start_out:])
        helps = sum(t("en", "help.intro") in line for _, line in out[start_out:])
        internal = sum(t("en", "error.internal") in line for _, line in out[start_out:])
        print(f"console, {outage:g} s outage (pg_ctl stop -m {mode}): {sent} lines sent during it")
        exited = proc.poll()
        print(f"  exited: {'no' if exited is None else f'yes, status {exited}'}")
        print(f"  /help answered {helps} x; storage unavailable said {unavailable} x; 'something went wrong' "
              f"{internal} x")
        logs = err[start_err:]
        print(f"  stderr lines: {len(logs)}, tracebacks: {sum(line.startswith('Traceback') for line in logs)}")
        print("  first correct answer after the return: "
              + ("none" if first is None else f"{first:.2f} s (ratio {first / TARGET_SECONDS:.2f})"))
    finally:
        if proc.poll() is None and proc.stdin is not None:
            with contextlib.suppress(BrokenPipeError):
                proc.stdin.close()
        try:
            status = proc.wait(120)
        except subprocess.TimeoutExpired:
            proc.kill()
            status = proc.wait()
        print(f"  exit status: {status}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--outage", type=float, default=12.0, help="seconds the server is stopped (default 12)")
    parser.add_argument("--mode", choices=("fast", "immediate"), default="fast", help="pg_ctl stop mode")
    parser.add_argument("--console", action="store_true", help="also the piped console process")
    args = parser.parse_args()
    if not 0.5 <= args.outage <= 600:
        parser.error("--outage must be between 0.5 and 600 seconds")
    from pg_server import find_binaries, unavailable_reason
    from pg_stoppable import StoppableServer

    reason = unavailable_reason()
    if reason is not None:
        print(f"error: {reason}", file=sys.stderr)
        return 1
    binaries = find_binaries()
    assert binaries is not None
    server = StoppableServer(binaries, durable=True)
    server.start()
    try:
        service_run(server, args.outage, args.mode)
        if args.console:
            console_run(server, args.outage, args.mode)
    finally:
        if not server.running:
            server.resume()
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
