"""/streak on the console (issue 33): a run played by typing, the chat's record message printed
once and, when it is beaten, the same message edited (the console prints the edit as a new line;
the record remembers the first message's number).  Real parts: the console chat, a SQLite file,
the shipped bank, the catalogs."""

from __future__ import annotations

import re

from catalog_text import says, tr
from conftest import Console

from bot.puzzles import bank
from bot.rules import Position


def _current(console: Console, user: str) -> dict:
    run = console.storage.puzzle_runs.running("console", user, "streak")
    assert run is not None and run.post_id is not None
    post = console.storage.puzzle_post(run.post_id)
    puzzle = bank.by_id(post.variant, post.puzzle_id)
    assert puzzle is not None
    return puzzle


def _run(console: Console, user: str, solves: int) -> str:
    out = console.feed(f"/as {user.capitalize()}", "/streak italian")
    assert says(out, "en", "streak.start"), out
    for _ in range(solves):
        out += console.feed("/m " + " ".join(_current(console, user)["solution"]))
    puzzle = _current(console, user)
    pos = Position.from_fen(puzzle["variant"], puzzle["fen"])
    wrong = next(str(m) for m in pos.legal_moves() if str(m) not in puzzle["tree"])
    return out + console.feed(f"/m {wrong}")


def test_a_streak_and_the_chat_record_message_at_the_console(console: Console) -> None:
    out = _run(console, "ana", 1)
    assert says(out, "en", "streak.over", score=1), out
    record = tr("en", "records.message", mode=tr("en", "records.mode.streak"), variant=tr("en", "variant.italian"),
                score=1, name="Ana")
    out += console.feed("/clock")
    found = re.search(r"\[(\d+)\] bot[^:]*: " + re.escape(record), out)
    assert found, out
    best = console.storage.puzzle_runs.chat_best("console", "main", "streak", "italian")
    assert best is not None and best.message_id == found.group(1)
    out = _run(console, "bob", 2) + console.feed("/clock")
    assert says(out, "en", "records.message", score=2, name="Bob"), out
    assert says(out, "en", "records.beaten", name="Ana", score=1), out
    # Still the first message: the edit took its place.
    assert console.storage.puzzle_runs.chat_best("console", "main", "streak", "italian").message_id == found.group(1)
