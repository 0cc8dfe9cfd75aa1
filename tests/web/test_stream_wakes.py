"""A move wakes the event streams of its own game only (with 100 pages open, waking every stream
on every move cost about a sixth of the server's moves per second); a change of another kind, or
one the board layer did not see, still wakes them all, and each stream polls its game anyway."""

from __future__ import annotations

import asyncio

from bot.platforms.web.server import _Streams


def test_a_moves_game_is_taken_once_and_only_its_streams_wake(chat):
    first = chat.new_game("italian", "ana", "bob")
    second = chat.new_game("italian", "cid", "dan")
    chat.service.web.take_changed()                  # whatever starting the games did
    chat.say("ana", "/m 21-17")
    assert chat.service.web.take_changed() == {first}
    assert chat.service.web.take_changed() == set()  # taken: the next look starts empty
    assert second != first

    async def wakes() -> tuple[bool, bool, bool, bool]:
        streams = _Streams()
        mine, other = asyncio.Event(), asyncio.Event()
        streams.wakes.update({mine: first, other: second})
        streams.wake({first})
        only_mine = (mine.is_set(), other.is_set())
        mine.clear()
        streams.wake(set())                          # a change of another kind: every stream looks
        return (*only_mine, mine.is_set(), other.is_set())

    assert asyncio.run(wakes()) == (True, False, True, True)
