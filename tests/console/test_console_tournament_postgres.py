"""Issue 32: the console tournaments of test_console_tournament.py on PostgreSQL with two
processes.  Two `python -m bot console` processes share one throw-away database (tests/pg_server.py):
an 8-player, 5-round Swiss and a 5-player round robin, each with one player who never shows up,
are typed into them by script, every step of every game going to the other console than the step
before (a move in one, the answer in the other; a resignation asked in one and confirmed in the
other; a draw offered in one and accepted in the other), the two consoles working at once; the
clock is passed in both.  At the end `python -m bot tournaments show ID --json` gives standings
equal to bot.tournaments.standings recomputed from the pairings and the script's results, every
round was paired once and as the core pairs it, none skipped, and every game is stored once."""

from __future__ import annotations

import random

from catalog_text import pattern
from tournament_consoles import Console, Reader, check_tournament, console_env, create_lines, play_round, show_json

ABSENT = "Hugo"
SWISS = ["Ana", "Bob", "Carla", "Dario", "Elena", "Fabio", "Gina", ABSENT]
ROBIN = ["Ana", "Bob", "Carla", "Dario", ABSENT]


def _play(consoles: list[Console], reader: Reader, chat: str, create: str, players: list[str],
          rounds: int) -> tuple[int, dict[int, str]]:
    for n, lines in enumerate(create_lines(chat, create, players)):
        consoles[n % 2].run(lines)
    tid = reader.tournament_id(chat)
    rng = random.Random(chat)
    results: dict[int, str] = {}
    for number in range(1, rounds + 1):
        assert len(reader.tournament(tid).rounds) == number
        played = play_round(consoles, reader, tid, chat, lambda _game: rng.randrange(3), absent=ABSENT)
        results.update(played.results)
        if played.forfeits:
            # The absent player's clock runs out in both processes (and the round's deadline passes).
            for console in consoles:
                console.run([f"/chat {chat}", "/clock +1d2h"])
    return tid, results


def test_a_swiss_and_a_round_robin_on_postgresql_with_two_consoles(pg_url, tmp_path):
    env = console_env(pg_url)
    consoles = [Console(pg_url, tmp_path, env=env) for _ in range(2)]
    reader = Reader(pg_url)
    try:
        plays = [("swiss", "/tournament new swiss spanish 5 1h deadline 1d", SWISS, 5),
                 ("robin", "/tournament new roundrobin italian 1h deadline 1d", ROBIN, 5)]
        done = []
        for chat, create, players, rounds in plays:
            tid, results = _play(consoles, reader, chat, create, players, rounds)
            done.append((chat, tid, results))
        for console in consoles:
            console.finish()
        for chat, tid, results in done:
            shown = show_json(pg_url, tid, env, tmp_path)
            assert shown["status"] == "finished"
            bad = check_tournament(reader, tid, results, reader.chat_games(chat), shown)
            assert bad == [], bad
            # The absent player is last, having lost every game by forfeit.
            assert shown["standings"][-1]["name"] == ABSENT
        # Both processes ended games (a resignation confirmed or a draw accepted there).
        for console in consoles:
            over = pattern("en", "game.over")
            assert sum(over.search(line) is not None for line in console.output().splitlines()) >= 10
    finally:
        for console in consoles:
            if console.proc.poll() is None:
                console.kill()
        reader.close()
