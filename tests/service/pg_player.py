"""A bot process for tests/service/test_processes_postgres.py: ``pg_player.py URL ROLE GAME...``.

It opens the real service on the database and plays typed moves in the games given, through
``service.handle`` as chat events, doing an adapter's delivery round between moves.  Each move it
is told was played is printed at once as a JSON line ``{"game", "ply", "move"}``; a move refused
as ``{"refused", "text"}``.

Roles: ``racerN`` plays both colours of one game in a loop until the game has 40 plies, choosing a
different move from the other racer where there is a choice (so the stored move says whose
won), starting when the test writes a line on its input, after its ``{"ready"}`` line;
``victim`` plays its games (and one game against the bot, level 1, whose answers go
through the outbox) until it is killed.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time

from bot import config
from bot.app import open_store
from bot.i18n import t
from bot.rules import Game
from bot.service import ChatEvent, GameService
from bot.service.outbox import Outbox
from bot.service.thinking import Thinker

PLATFORM = "bench"


def say(service: GameService, chat: str, user: str, text: str) -> list:
    return service.handle(ChatEvent(platform=PLATFORM, chat_id=chat, user_id=user, user_name=user, username=user,
                                    language="en", text=text))


def played(replies: list, game_id: int, user: str, move: object) -> bool:
    """Whether the service answered that ``user``'s ``move`` was played (its catalog message, so a
    reworded catalog changes nothing here)."""
    said = t("en", "move.played", name=user, move=str(move), id=game_id)
    return any(r.game_id == game_id and r.image is not None and said in r.text for r in replies)


def emit(**fields: object) -> None:
    print(json.dumps(fields), flush=True)


def deliver(service: GameService) -> None:
    service.run_due(PLATFORM)
    for item in service.pending_messages(PLATFORM, 50):
        service.message_sent(item.id)


def race(service: GameService, game_id: int, index: int) -> None:
    while True:
        row = service.game_with_moves(game_id)[0]
        if row is None or row.status != "active" or row.ply >= 40:
            return
        position = Game(row.variant, row.fen).position
        moves = position.legal_moves()
        move = moves[0] if index == 0 or len(moves) == 1 else moves[-1]
        user = row.white_id if position.turn.name.startswith("W") else row.black_id
        replies = say(service, row.chat_id, user, f"/m #{game_id} {move}")
        if played(replies, game_id, user, move):
            emit(game=game_id, ply=row.ply + 1, move=str(move))
        else:
            emit(refused=game_id, text=replies[0].text if replies else "")
        deliver(service)


def victim(service: GameService, games: list[int]) -> None:
    rng = random.Random(5)
    while True:
        for game_id in games:
            row = service.game_with_moves(game_id)[0]
            if row is None or row.status != "active":
                continue
            position = Game(row.variant, row.fen).position
            move = rng.choice(position.legal_moves())
            user = row.white_id if position.turn.name.startswith("W") else row.black_id
            replies = say(service, row.chat_id, user, f"/m #{game_id} {move}")
            if played(replies, game_id, user, move):
                emit(game=game_id, ply=row.ply + 1, move=str(move))
        rows = service.storage.active_games(PLATFORM, "victim-bot")
        if not rows:
            say(service, "victim-bot", "hv", "/play italian 1 white")
        elif rows[0].fen.startswith("W"):
            move = rng.choice(Game(rows[0].variant, rows[0].fen).position.legal_moves())
            say(service, "victim-bot", "hv", f"/m #{rows[0].id} {move}")
        deliver(service)
        if all(service.game_with_moves(g)[0].status != "active" for g in games):     # type: ignore[union-attr]
            time.sleep(0.05)


def main() -> int:
    url, role, *games = sys.argv[1:]
    store = open_store(url)
    # The engine pool as the bot sizes it: $DRAUGHTS_AI_WORKERS (the test gives 1), read by bot.config.
    service = GameService(store, rng=random.Random(0), outbox=Outbox(store, time.time, lease_seconds=3.0),
                          thinker=Thinker(workers=config.load().ai_workers))
    try:
        service.warm_up()
        if os.environ.get("PG_PLAYER_WAIT_GO"):
            # Racers start together, so that their moves meet: each says it is warmed up (engine
            # pool, fonts) and waits for the test's word, given once both have said so.
            emit(ready=role)
            sys.stdin.readline()
        if role.startswith("racer"):
            race(service, int(games[0]), int(role[len("racer"):]))
        else:
            victim(service, [int(g) for g in games])
    finally:
        service.close()
        store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
