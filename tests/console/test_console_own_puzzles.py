"""Puzzles from one's own games on the console (issue 33): a game finished at the console is scanned
in the background, ``/puzzle mine`` serves its shot, and ``/clock`` shows it coming back 1, 3, 7 and
21 days after each clean solve (and not a minute before), then retired.  Real parts: the console
chat, a SQLite file, the prover, the engine pool on two threads."""

from __future__ import annotations

import io
import random
from concurrent.futures import ThreadPoolExecutor

from catalog_text import says, tr
from fresh_db import fresh_database

from bot.platforms.console import ConsoleChat
from bot.service import GameService
from bot.service.thinking import Thinker
from bot.storage import Storage
from bot.storage.repositories import NewGame

# White's 29-26 here lets Black in with 15-19 22x15 13x22x29 (tests/puzzles/test_from_games.py).
BEFORE_SLIP = "W:W16,17,18,20,22,24,25,29,30,31,32:B2,4,5,6,7,8,9,10,11,13,15"


def test_a_game_finished_at_the_console_comes_back_as_a_puzzle_and_again_a_day_later(tmp_path, now) -> None:
    storage = Storage(fresh_database(tmp_path / "console.db"))
    pool = ThreadPoolExecutor(2)
    service = GameService(storage, clock=lambda: now[0], rng=random.Random(1), thinker=Thinker(pool, workers=2))
    printed = io.StringIO()
    chat = ConsoleChat(service, printed, tmp_path / "images", user="Ana", chat="main", language="en")

    def feed(*lines: str) -> str:
        start = len(printed.getvalue())
        for line in lines:
            chat.line(line)
        return printed.getvalue()[start:]

    try:
        game_id = storage.games.create(NewGame(
            platform="console", chat_id="main", variant="italian", white_id="ana", white_name="Ana", black_id="bob",
            black_name="Bob", fen=BEFORE_SLIP, start_fen=BEFORE_SLIP, move_seconds=86400, created_at=now[0]))
        # The scan starts with the timed work after the game's end (the next line's look at the
        # outbox) and runs in the background; a piped line waits for the pool before the next.
        feed("/m 29-26", "/resign", "/resign", "/clock")
        assert storage.games.get(game_id).status == "finished"      # type: ignore[union-attr]
        out = feed("/puzzle mine")
        assert says(out, "en", "own.intro.allowed", game=game_id, opponent="Bob", move=1), out
        out = feed("/m 15-19", "/m 13x22x29")
        assert says(out, "en", "puzzle.solved_personal"), out
        out = feed("/clock +23h59m", "/puzzle mine")
        assert says(out, "en", "own.waiting.one", n=1), out
        out = feed("/clock +1m", "/puzzle mine")
        assert says(out, "en", "own.intro.allowed", game=game_id, opponent="Bob", move=1), out
        assert tr("en", "own.none") not in out
        # Then 3, 7 and 21 days, each time to the minute; solved once more, it is retired.
        for days in (3, 7, 21):
            assert says(feed("/m 15-19", "/m 13x22x29"), "en", "puzzle.solved_personal")
            out = feed(f"/clock +{days - 1}d23h59m", "/puzzle mine")
            assert says(out, "en", "own.waiting.one", n=1), (days, out)
            out = feed("/clock +1m", "/puzzle mine")
            assert says(out, "en", "own.intro.allowed", game=game_id, opponent="Bob", move=1), (days, out)
        assert says(feed("/m 15-19", "/m 13x22x29"), "en", "puzzle.solved_personal")
        assert says(feed("/clock +100d", "/puzzle mine"), "en", "own.none")
    finally:
        service.close()
        pool.shutdown(wait=True)
        storage.close()
