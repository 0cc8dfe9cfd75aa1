"""Two processes' worth of service on one database: of two racing writes exactly one wins."""

from __future__ import annotations

import random
import threading

import pytest
from catalog_text import says
from harness import en

from bot.rules import Position
from bot.service import GameService
from bot.storage import Storage

ROUNDS = 4
RACING = {"A": "22-18", "B": "23-19"}     # two legal first moves for White
STALE = en("move.stale")


@pytest.fixture
def second_services(chat, now):
    """Two more services, each with its own Storage (its own connection) on the same file."""
    made = []

    def make() -> GameService:
        storage = Storage(chat.db_path)
        made.append(storage)
        return GameService(storage, clock=lambda: now[0], rng=random.Random(2))

    yield make
    for storage in made:
        storage.close()


def race(calls):
    """Run the calls in threads released together by a barrier; their results in order."""
    barrier = threading.Barrier(len(calls))
    results: list = [None] * len(calls)
    errors: list = []

    def run(i, call):
        try:
            barrier.wait(timeout=10)
            results[i] = call()
        except BaseException as err:   # reported below, in the test's thread
            errors.append(err)

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=30)
    assert not any(th.is_alive() for th in threads), "a racing call hung"
    assert errors == []
    return results


def test_two_concurrent_moves_on_one_game_exactly_one_is_played(chat, second_services):
    one, two = second_services(), second_services()
    for round_ in range(ROUNDS):
        black = f"bob{round_}"
        game = chat.new_game("ana", black, "italian")
        row = chat.game(game)
        start = Position.from_fen(row.variant, row.fen)
        a, b = race([lambda g=game: one.handle(chat.event("ana", text=f"/m #{g} {RACING['A']}")),
                     lambda g=game: two.handle(chat.event("ana", text=f"/m #{g} {RACING['B']}"))])
        chat.check(a)
        chat.check(b)
        played = chat.moves(game)
        assert len(played) == 1, f"round {round_}: {len(played)} moves recorded"
        after = chat.game(game)
        assert (after.ply, after.version, after.status) == (1, row.version + 1, "active")
        notation = played[0].notation
        assert notation in RACING.values()
        assert after.fen == played[0].fen_after == start.play(start.parse_move(notation)).fen()
        winner, loser = (a, b) if notation == RACING["A"] else (b, a)
        assert en("move.played", name="Ana", move=notation, id=game) in winner[0].text
        assert len(loser) == 1 and not says(loser[0].text, "en", "move.played"), loser[0].text
        assert STALE in loser[0].text or says(loser[0].text, "en", "err.not_your_turn"), loser[0].text
        # The game goes on normally from the one position.
        chat.play(game, ["11-15"] if notation == "22-18" else ["12-16"])


def test_two_concurrent_identical_moves_are_played_once(chat, second_services):
    one, two = second_services(), second_services()
    game = chat.new_game("ana", "bob")
    a, b = race([lambda: one.handle(chat.event("ana", text="/m 22-18")),
                 lambda: two.handle(chat.event("ana", text="/m 22-18"))])
    chat.check(a)
    chat.check(b)
    assert [m.notation for m in chat.moves(game)] == ["22-18"]
    assert chat.game(game).ply == 1
    assert sum(en("move.played", name="Ana", move="22-18", id=game) in r[0].text for r in (a, b)) == 1


def test_two_concurrent_button_presses_play_one_move(chat, second_services):
    one, two = second_services(), second_services()
    game = chat.new_game("ana", "bob")
    a, b = race([lambda: one.handle(chat.event("ana", action=f"d:{game}:0:22:18")),
                 lambda: two.handle(chat.event("ana", action=f"d:{game}:0:23:19"))])
    chat.check(a)
    chat.check(b)
    assert len(chat.moves(game)) == 1 and chat.game(game).ply == 1


def test_two_concurrent_accepts_make_one_game(chat, second_services):
    one, two = second_services(), second_services()
    for _ in range(ROUNDS):
        cid = chat.challenge("ana")
        a, b = race([lambda c=cid: one.handle(chat.event("bob", text=f"/accept #{c}")),
                     lambda c=cid: two.handle(chat.event("carol", text=f"/accept #{c}"))])
        chat.check(a)
        chat.check(b)
        games = [g for g in chat.rows("games") if g.id == chat.storage.challenge(cid).game_id]
        assert len(games) == 1
        started = [r for r in (a, b) if says(r[0].text, "en", "game.started", id=games[0].id)]
        assert len(started) == 1
        other = b if started[0] is a else a
        assert en("challenge.closed", id=cid) in other[0].text
        chat.resign("ana", f"/resign #{games[0].id}")
    assert len(chat.rows("games")) == ROUNDS


def test_move_racing_a_resignation(chat, second_services):
    one, two = second_services(), second_services()
    game = chat.new_game("ana", "bob")
    chat.say("bob", "/resign")      # asked; the raced one confirms, unless the move came first
    a, b = race([lambda: one.handle(chat.event("ana", text="/m 22-18")),
                 lambda: two.handle(chat.event("bob", text="/resign"))])
    chat.check(a)
    chat.check(b)
    row = chat.game(game)
    assert row.status == "finished" or (row.ply == 1 and row.status == "active")
    assert len(chat.moves(game)) == row.ply


def test_two_services_ticking_together_send_one_reminder_and_one_result(chat, second_services, now):
    one, two = second_services(), second_services()
    game = chat.new_game("ana", "bob", extra="1h")
    now[0] += 55 * 60
    a, b = race([one.tick, two.tick])
    assert len(a) + len(b) == 1
    now[0] += 10 * 60
    a, b = race([one.tick, two.tick])
    assert len(a) + len(b) == 1
    assert en("result.win.time", winner="Bob", loser="Ana") in (a + b)[0].reply.text
    assert chat.game(game).result_reason == "time"
