"""A restart (a new Storage and GameService on the same file) loses nothing."""

from __future__ import annotations

import random

from catalog_text import to_move, tr

from bot.rules import Position, read_pdn


def finish_by_moves(chat, game, seed, limit=400):
    """Play random legal moves (seeded) through the service until the game ends."""
    rng = random.Random(seed)
    for _ in range(limit):
        row = chat.game(game)
        if row.status == "finished":
            return row
        move = rng.choice(chat.position(game).legal_moves())
        chat.play(game, [str(move)])
    raise AssertionError("the game did not end")


def test_restart_continues_the_same_game_to_the_end(chat):
    game = chat.new_game("ana", "bob", "italian")
    chat.play(game, ["24-20", "11-14", "23-19", "14x23"])
    row = chat.game(game)
    chat.restart()
    assert chat.game(game) == row
    assert to_move("en", "Ana", "white").search(chat.text("bob", "/board"))
    chat.play(game, ["28x19"], ref=False)
    chat.restart()
    final = finish_by_moves(chat, game, seed=3)
    assert final.result_score in ("1-0", "0-1", "1/2-1/2")
    chat.restart()
    assert chat.game(game) == final
    notations = [m.notation for m in chat.moves(game)]
    assert notations[:5] == ["24-20", "11-14", "23-19", "14x23", "28x19"]
    assert [m.ply for m in chat.moves(game)] == list(range(1, len(notations) + 1))
    pdn = read_pdn(chat.say("ana", f"/pdn #{game}")[0].text)[0]
    assert [str(m) for m in pdn.moves] == notations
    assert pdn.result.score == final.result_score


def test_restart_replays_to_the_stored_position(chat):
    game = chat.new_game("ana", "bob", "spanish")
    rng = random.Random(5)
    for _ in range(12):
        chat.play(game, [str(rng.choice(chat.position(game).legal_moves()))])
    assert any("x" in m.notation for m in chat.moves(game))
    chat.restart()
    pos = Position.start("spanish")
    for m in chat.moves(game):
        pos = pos.play(pos.parse_move(m.notation))
        assert pos.fen() == m.fen_after
    assert pos.fen() == chat.game(game).fen


def test_restart_keeps_open_challenges(chat):
    cid = chat.challenge("ana", "triestina @bob 2h")
    chat.restart()
    chat.say("bob", "/accept")
    game = chat.storage.challenge(cid).game_id
    assert chat.game(game).variant == "triestina" and chat.game(game).move_seconds == 7200


def test_restart_keeps_a_draw_offer(chat):
    game = chat.new_game()
    chat.say("ana", "/draw")
    chat.restart()
    assert tr("en", "result.draw.agreement") in chat.text("bob", "/draw")
    assert chat.game(game).result_reason == "agreement"


def test_restart_keeps_chat_settings(chat):
    chat.say("ana", "/settings variant spanish", admin=True)
    chat.restart()
    cid = chat.challenge("ana")
    assert chat.storage.challenge(cid).variant == "spanish"


def test_restart_keeps_remembered_boards(chat):
    first = chat.new_game("ana", "bob")
    second = chat.new_game("ana", "carol")
    chat.service.remember_board(chat.platform, chat.chat_id, "m-1", second)
    chat.restart()
    chat.say("ana", "/m 22-18", reply_to="m-1")
    assert chat.game(second).ply == 1 and chat.game(first).ply == 0


def test_buttons_of_before_the_restart_still_work(chat):
    game = chat.new_game()
    actions = [a for a in chat.actions if a.startswith(f"s:{game}:0:")]
    assert actions
    chat.restart()
    select = chat.press("ana", f"s:{game}:0:22")[0]
    destination = next(b.action for row in select.buttons for b in row if b.action.startswith("d:"))
    chat.restart()
    chat.press("ana", destination)
    assert chat.game(game).ply == 1


# An italian game that reaches kings on both sides (white to move after these 48 plies);
# the kings then shuffle 2-5, 29-25, 5-2, 25-29: the start of the shuffle occurs a third
# time after eight more plies, a draw by repetition.
KINGS = ("24-20 11-14 23-19 14x23 28x19 10-14 19x10 6x13 22-18 13x22 27x18 9-13 18x9 12-15 20x11 7x14 21-18 "
         "14x21 26x17 5-10 25-21 3-7 17-13 10x17x26 30x21 7-11 21-17 2-6 29-26 6-10 31-27 11-14 17-13 10x17 "
         "27-22 14-19 22x15 1-5 9x2 4-7 26-22 17-21 22-19 7-11 15x6 21-25 6-3 25-29").split()
SHUFFLE = ["2-5", "29-25", "5-2", "25-29"]


def test_repetition_is_counted_across_restarts(chat):
    game = chat.new_game("ana", "bob", "italian")
    chat.play(game, KINGS)
    for i, move in enumerate(SHUFFLE * 2, start=1):
        chat.restart()
        assert chat.game(game).status == "active", f"ended early, after shuffle ply {i - 1}"
        chat.play(game, [move])
    row = chat.game(game)
    assert (row.status, row.result_score, row.result_reason) == ("finished", "1/2-1/2", "repetition")
    assert tr("en", "result.draw.repetition") in chat.text("ana", f"/board #{game}")
