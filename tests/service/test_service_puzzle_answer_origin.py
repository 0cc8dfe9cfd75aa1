"""How an answer to a puzzle came in (typed, or pressed on a board's buttons) is the chat layer's
to know (issue 31 item 1): the use case returns the same result either way, and the presenter
decides whether a board is shown and whether it takes the pressed board's place.

Real parts: two SQLite files, the puzzle bank, the rules; only the clock and the draw (seeded alike) are fixed."""

from __future__ import annotations

from pathlib import Path

import pytest
from fresh_db import fresh_database
from harness import ChatHarness

from bot.rules import Move, Position
from bot.service.chat import present_puzzles
from bot.service.chat.layer import Ctx
from bot.service.features.identity import Caller
from bot.service.features.puzzles import Puzzles, puzzle_by_id
from bot.service.features.results_puzzles import Acted, AnswerRight, AnswerWrong, PuzzleGiven, PuzzleRequest

PUZZLES = Path(__file__).resolve().parents[2] / "bot" / "service" / "features" / "puzzles.py"


def caller_of(room: ChatHarness, user: str, private: bool) -> Caller:
    kw = {"kind": "private", "chat": user} if private else {}
    event = room.event(user, **kw)
    record = room.storage.ensure_chat(event.platform, event.chat_id, event.chat_kind, room.now[0])
    return Ctx(event, "en", record, room.now[0]).caller


def given(room: ChatHarness, private: bool) -> tuple[Puzzles, PuzzleGiven]:
    puzzles = room.service.app.puzzles
    result = puzzles.puzzle(caller_of(room, "bob", private), PuzzleRequest("new", "italian"), "en")
    assert isinstance(result, PuzzleGiven)
    return puzzles, result


def pressed(puzzles: Puzzles, caller: Caller, post_id: int, move: Move) -> object:
    """``move`` played with the board's buttons at step 0: its destination, else its path."""
    legal = puzzles.post_position(puzzles.post_record(post_id)).legal_moves()
    if sum((m.start, m.end) == (move.start, move.end) for m in legal) == 1:
        return puzzles.choose_destination(caller, post_id, 0, move.start, move.end)
    return puzzles.choose_path(caller, post_id, 0, legal.index(move))


@pytest.mark.parametrize("private", [False, True])
@pytest.mark.parametrize("right", [True, False])
def test_an_answer_comes_to_the_same_result_typed_or_pressed(tmp_path: Path, now: list[float],
                                                             private: bool, right: bool) -> None:
    typed_room = ChatHarness(fresh_database(tmp_path / "typed.db"), now)
    button_room = ChatHarness(fresh_database(tmp_path / "button.db"), list(now))
    try:
        typed_puzzles, typed_given = given(typed_room, private)
        button_puzzles, button_given = given(button_room, private)
        post = typed_given.board.post
        assert (post.id, post.puzzle_id) == (button_given.board.post.id, button_given.board.post.puzzle_id)
        record = puzzle_by_id(post.variant, post.puzzle_id)
        assert record is not None
        pos = Position.from_fen(record["variant"], record["fen"])
        move = next(m for m in pos.legal_moves() if (str(m) in record["tree"]) is right)

        typed = typed_puzzles.answer_puzzle(caller_of(typed_room, "bob", private), post, str(move))
        button = pressed(button_puzzles, caller_of(button_room, "bob", private), post.id, move)
        assert isinstance(typed, Acted) and isinstance(button, Acted)
        assert isinstance(typed.step, AnswerRight if right else AnswerWrong)
        assert repr(typed) == repr(button)

        # The presenter makes the difference: a press in the user's private chat replaces the
        # pressed board, and a miss pressed on a board shows the board to go on from.
        [typed_reply] = present_puzzles.present("en", typed)
        [button_reply] = present_puzzles.present("en", button, via_button=True)
        assert not typed_reply.replaces_board
        assert button_reply.replaces_board is private
        assert (typed_reply.image is not None) is right
        assert button_reply.image is not None
    finally:
        typed_room.storage.close()
        button_room.storage.close()


def test_the_puzzle_use_case_knows_nothing_of_buttons() -> None:
    source = PUZZLES.read_text()
    assert "via_button" not in source
    assert "replaces" not in source
