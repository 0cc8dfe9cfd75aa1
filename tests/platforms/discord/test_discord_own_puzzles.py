"""Puzzles from one's own games on Discord (issue 33), through the real DraughtsBot, the real
service on a real SQLite file and the strict fake Discord: ``/puzzle action:mine`` answers with the
puzzle's board ephemerally (nothing of a member's puzzles in the channel), and ``/puzzle action:remind
on`` turns the daily reminder on, which pings the member in the channel when a puzzle is due."""

from __future__ import annotations

import json

from catalog_text import says
from discord_fake import CHANNEL_ID, Harness, uid

from bot.puzzles.from_games import scan_game
from bot.storage.repositories import NewOwnPuzzle

PLATFORM = "discord"
# White's 29-26 here lets Black in with 15-19 22x15 13x22x29 (tests/puzzles/test_from_games.py).
BEFORE_SLIP = "W:W16,17,18,20,22,24,25,29,30,31,32:B2,4,5,6,7,8,9,10,11,13,15"


def own_puzzle(h: Harness, user: str) -> int:
    """The puzzle a scan of a game of ``user`` (white, against Bob) found, as the scan keeps it."""
    [found] = scan_game("italian", BEFORE_SLIP, ["29-26"])
    number = h.storage.own_puzzles.add(NewOwnPuzzle(
        platform=PLATFORM, user_id=uid(user), variant="italian", puzzle=json.dumps(found.puzzle), game_id=7,
        ply=found.ply, move_number=found.move_number, opponent="Bob", kind=found.kind, now=h.now[0]))
    assert number is not None
    return number


async def test_ones_own_puzzle_is_ephemeral_and_says_where_it_comes_from(h: Harness) -> None:
    own_puzzle(h, "ana")
    answer = h.only_answer(await h.slash("puzzle", "ana", {"action": "mine"}))
    assert answer.ephemeral and answer.filenames() == ["board.png"]
    assert says(answer.content, "en", "own.intro.allowed", game=7, opponent="Bob", move=1), answer.content
    answer = h.only_answer(await h.slash("move", "ana", {"move": "15-19"}))
    assert answer.ephemeral
    answer = h.only_answer(await h.slash("move", "ana", {"move": "13x22x29"}))
    assert answer.ephemeral and says(answer.content, "en", "puzzle.solved_personal")
    assert h.fake.channel_posts() == []
    [row] = h.storage.own_puzzles.of_player(PLATFORM, uid("ana"))
    assert (row.box, row.reviews) == (1, 1)


async def test_the_reminder_is_turned_on_ephemerally_and_pings_in_the_channel(h: Harness) -> None:
    answer = h.only_answer(await h.slash("puzzle", "bob", {"action": "remind on"}))
    assert answer.ephemeral and says(answer.content, "en", "own.remind_on")
    own_puzzle(h, "bob")
    h.now[0] += 61
    assert await h.bot.delivery_round() == 1
    [post] = h.fake.channel_posts()
    assert post.channel_id == CHANNEL_ID
    assert says(post.content, "en", "own.reminder.one", n=1), post.content
    assert uid("bob") in post.content                 # a ping
    h.now[0] += 3600
    assert await h.bot.delivery_round() == 0          # at most one a day
