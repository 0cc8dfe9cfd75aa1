"""The real service on PostgreSQL, built the way production builds it (``bot.app.build_service``
with a ``postgresql://`` URL): a challenge accepted, a short game between two users, the daily
puzzle posted (claimed once), and all of it in ``store.dump()``.

Runs on the test process's throw-away server (tests/pg_server.py): skipped where there is none,
unless DRAUGHTS_REQUIRE_POSTGRES=1."""

from __future__ import annotations

import time

import pytest
from catalog_text import says, tr

from bot.app import build_service
from bot.rules import Position
from bot.service import ChatEvent, GameService

pytest.importorskip("psycopg")

from bot.storage.postgres import PostgresStore  # noqa: E402

PLATFORM = "test"
GROUP = "group-pg"


def say(service: GameService, user: str, text: str, admin: bool = False) -> str:
    replies = service.handle(ChatEvent(platform=PLATFORM, chat_id=GROUP, user_id=user, user_name=user.capitalize(),
                                       username=user, language="en", text=text, is_admin=admin))
    return "\n".join(reply.text for reply in replies)


def test_a_challenge_a_game_and_a_daily_puzzle_on_postgresql(pg_url):
    service = build_service(pg_url)
    store = service.storage
    try:
        assert isinstance(store, PostgresStore)
        italian = tr("en", "variant.italian")
        created = say(service, "ana", "/new italian white")
        [challenge] = store.open_challenges(PLATFORM, GROUP)
        assert says(created, "en", "new.open", id=challenge.id, name="Ana", variant=italian), created
        started = say(service, "bob", f"/accept #{challenge.id}")
        assert says(started, "en", "game.started", id=challenge.id, variant=italian, white="Ana", black="Bob"), started
        game_id = store.challenge(challenge.id).game_id
        assert game_id == challenge.id                   # the game keeps the challenge's number

        position, played = Position.start("italian"), []
        for ply in range(4):
            move = position.legal_moves()[0]
            user = ("ana", "bob")[ply % 2]
            answer = say(service, user, f"/m {move}")
            assert says(answer, "en", "move.played", name=user.capitalize(), move=move, id=game_id), answer
            position = position.play(move)
            played.append(str(move))
        game = store.game(game_id)
        assert (game.ply, game.version, game.fen) == (4, 4, position.fen())
        assert [m.notation for m in store.moves(game_id)] == played

        # The daily puzzle at midnight UTC, subscribed two days ago (written to the store directly:
        # the service runs on the wall clock), so today's is due: posted at the first round, once.
        store.puzzles.subscribe(PLATFORM, GROUP, "00:00", "UTC", "italian", time.time() - 2 * 86400, "en")
        assert "00:00" in say(service, "bob", "/daily")
        service.tick(platform=PLATFORM)
        service.tick(platform=PLATFORM)
        [post] = store.daily_posts(PLATFORM, GROUP, 10)

        dump = store.dump()
        assert [row[0] for row in dump["challenges"]] == [challenge.id]
        assert dump["challenges"][0][9] == "accepted"
        assert [row[:2] for row in dump["moves"]] == [(game_id, ply) for ply in range(1, 5)]
        assert [(row[0], row[3]) for row in dump["puzzle_posts"]] == [(post.id, "daily")]
        assert {row[1] for row in dump["players"]} == {"ana", "bob"}
        assert dump["outbox"], "the service tells the chat about the game and the puzzle through the outbox"
        assert ("last_number", challenge.id) in dump["meta"]
    finally:
        store.close()
