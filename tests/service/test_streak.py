"""/streak: puzzles of rising difficulty one after another; one wrong move ends the run, one skip
a run, no hints; the personal best and the chat's record, whose one message is posted the first
time and edited in place after (issue 33).

Real parts: a SQLite file, the puzzle bank, the rules, the catalogs; only the clock is fixed."""

from __future__ import annotations

import json
from typing import Any

import pytest
from catalog_text import pattern, tr
from harness import GROUP, PLATFORM, ChatHarness

from bot.puzzles import bank
from bot.rules import Position
from bot.service import Reply
from bot.service.chat.registry import ButtonKind, action
from bot.service.features.puzzle_runs import STREAK_SKIPS, STREAK_STEP
from bot.service.notifications import ChatRecordBeaten, from_json

TG_LINK = "https://t.me/draughts_bot?start={payload}"


def _boards(replies: list[Reply]) -> list[Reply]:
    return [r for r in replies if r.post_id is not None and r.image is not None]


def _post_puzzle(chat: ChatHarness, post_id: int) -> dict[str, Any]:
    post = chat.storage.puzzle_post(post_id)
    assert post is not None
    puzzle = bank.by_id(post.variant, post.puzzle_id)
    assert puzzle is not None
    return puzzle


def _run(chat: ChatHarness, user: str = "ana"):
    run = chat.storage.puzzle_runs.running(PLATFORM, user, "streak")
    assert run is not None
    return run


def _solve(room: ChatHarness, user: str, **kw: Any) -> list[Reply]:
    """``user`` types the whole solution of their streak's current puzzle."""
    run = _run(room, user)
    assert run.post_id is not None
    puzzle = _post_puzzle(room, run.post_id)
    return room.say(user, "/m " + " ".join(puzzle["solution"]), **kw)


def _miss(room: ChatHarness, user: str, **kw: Any) -> list[Reply]:
    """``user`` plays a legal move that is not the solution's first."""
    run = _run(room, user)
    assert run.post_id is not None
    puzzle = _post_puzzle(room, run.post_id)
    pos = Position.from_fen(puzzle["variant"], puzzle["fen"])
    wrong = next(str(m) for m in pos.legal_moves() if str(m) != puzzle["solution"][0]
                 and str(m) not in puzzle.get("tree", {}))
    return room.say(user, f"/m {wrong}", **kw)


def _texts(replies: list[Reply]) -> str:
    return "\n".join(r.text for r in replies)


def _record_notices(chat: ChatHarness) -> list[ChatRecordBeaten]:
    out = []
    for row in chat.storage.outbox.find(PLATFORM):
        data = json.loads(row.payload)
        if data.get("notice") == "chat_record":
            notice = from_json(data)
            assert isinstance(notice, ChatRecordBeaten)
            out.append(notice)
    return out


def test_a_streak_starts_easy_and_rises_with_each_solve(chat: ChatHarness) -> None:
    replies = chat.say("ana", "/streak italian")
    (board,) = _boards(replies)
    assert board.private
    assert pattern("en", "streak.start").search(board.text)
    actions = [b.action for row in board.buttons for b in row]
    run = _run(chat)
    assert action(ButtonKind.STREAK_SKIP_AT, run.id, run.post_id or 0) in actions
    assert not any(a.startswith(ButtonKind.PUZZLE_HINT.value + ":") for a in actions)
    easiest = min(int(p["rating"]) for p in bank.load("italian"))
    first = _post_puzzle(chat, board.post_id or 0)
    assert easiest <= int(first["rating"]) < easiest + 100
    ratings = [int(first["rating"])]
    for solved in range(1, 4):
        follow = _solve(chat, "ana")
        (nxt,) = _boards(follow)
        assert pattern("en", "streak.next", score=solved).search(nxt.text), _texts(follow)
        run = _run(chat)
        assert run.score == solved
        ratings.append(int(_post_puzzle(chat, run.post_id or 0)["rating"]))
        assert ratings[-1] >= easiest + STREAK_STEP * solved - 1
    # A solve's reply offers no Next puzzle of /puzzle's: the streak's next board is that.
    assert not any(b.action.startswith(ButtonKind.PUZZLE_NEXT.value + ":") for r in follow for row in r.buttons
                   for b in row)


def test_one_wrong_move_ends_the_run_and_sets_the_bests(chat: ChatHarness) -> None:
    chat.say("ana", "/streak italian")
    _solve(chat, "ana")
    _solve(chat, "ana")
    over = _miss(chat, "ana")
    text = _texts(over)
    assert tr("en", "streak.over", score=2) in text
    assert tr("en", "streak.best_new", best=2) in text
    assert tr("en", "streak.chat_record") in text
    assert chat.storage.puzzle_runs.running(PLATFORM, "ana", "streak") is None
    assert chat.storage.puzzle_runs.personal_best(PLATFORM, "ana", "streak", "italian") == 2
    best = chat.storage.puzzle_runs.chat_best(PLATFORM, GROUP, "streak", "italian")
    assert best is not None and (best.score, best.name) == (2, "Ana")
    (notice,) = _record_notices(chat)
    assert (notice.score, notice.name, notice.message_id, notice.beaten_name) == (2, "Ana", None, None)


def test_the_chat_record_message_is_posted_once_then_edited_in_place(chat: ChatHarness) -> None:
    chat.say("ana", "/streak italian")
    _solve(chat, "ana")
    _miss(chat, "ana")
    (first,) = [o.reply for o in chat.service.outbox.drain(PLATFORM) if o.reply.record is not None]
    assert first.edit_of is None and first.record == "streak:italian"
    assert first.text == tr("en", "records.message", mode=tr("en", "records.mode.streak"),
                            variant=tr("en", "variant.italian"), score=1, name="Ana")
    # The adapter says which message it sent; the next record edits that one (the adapter reads
    # which when it delivers it: record_message).
    assert chat.service.record_message(PLATFORM, GROUP, "streak:italian") is None
    chat.service.remember_board(PLATFORM, GROUP, "m-77", None, record=first.record)
    assert chat.service.record_message(PLATFORM, GROUP, "streak:italian") == "m-77"
    chat.say("bob", "/streak italian")
    _solve(chat, "bob")
    _solve(chat, "bob")
    _miss(chat, "bob")
    (edit,) = [o.reply for o in chat.service.outbox.drain(PLATFORM) if "🏆" in o.reply.text and o.chat_id == GROUP]
    assert edit.edit_of is None and edit.record == "streak:italian"
    assert tr("en", "records.beaten", name="Ana", score=1) in edit.text
    assert chat.service.record_message(PLATFORM, GROUP, "streak:italian") == "m-77"
    # A score that does not beat the record leaves the message alone.
    chat.say("eva", "/streak italian")
    _miss(chat, "eva")
    assert [o for o in chat.service.outbox.drain(PLATFORM) if "🏆" in o.reply.text] == []


def test_one_skip_a_run_and_a_stale_skip_changes_nothing(chat: ChatHarness) -> None:
    chat.say("ana", "/streak italian")
    run = _run(chat)
    skipped = chat.press("ana", action(ButtonKind.STREAK_SKIP_AT, run.id, run.post_id or 0))
    (board,) = _boards(skipped)
    assert board.post_id != run.post_id
    assert not any(b.action.startswith(ButtonKind.STREAK_SKIP.value) for row in board.buttons for b in row)
    assert _run(chat).skips == STREAK_SKIPS and _run(chat).score == 0
    assert chat.text("ana", "/streak skip") == tr("en", "streak.no_skip")
    # The skipped puzzle's board is stale: its buttons change nothing.
    before = chat.snapshot()
    old = _post_puzzle(chat, run.post_id or 0)
    first = old["solution"][0].replace("x", "-").split("-")
    pressed = chat.press("ana", action(ButtonKind.PUZZLE_DEST, run.post_id or 0, 0, int(first[0]), int(first[-1])))
    assert _texts(pressed) == tr("en", "button.stale")
    assert chat.snapshot() == before
    _miss(chat, "ana")
    before = chat.snapshot()
    pressed = chat.press("ana", action(ButtonKind.STREAK_SKIP_AT, run.id, run.post_id or 0))
    assert pressed[0].text == tr("en", "streak.stale")
    assert chat.text("ana", "/streak skip") == tr("en", "streak.no_run")
    assert chat.snapshot() == before


def test_no_hints_in_a_streak(chat: ChatHarness) -> None:
    chat.say("ana", "/streak italian")
    run = _run(chat)
    before = chat.snapshot()
    assert chat.text("ana", f"/hint #{run.post_id}") == tr("en", "streak.no_hints")
    assert chat.snapshot() == before


def test_streak_again_shows_the_running_one(chat: ChatHarness) -> None:
    chat.say("ana", "/streak italian")
    _solve(chat, "ana")
    run = _run(chat)
    (board,) = _boards(chat.say("ana", "/racha"))
    assert board.post_id == run.post_id
    assert pattern("en", "streak.resume", score=1).search(board.text)


@pytest.mark.parametrize("words", ["/streak chess", "/streak skip now", "/streak best nothing"])
def test_bad_words_change_nothing(chat: ChatHarness, words: str) -> None:
    before = chat.snapshot()
    assert chat.text("ana", words) == tr("en", "streak.usage")
    assert chat.snapshot() == before


def test_in_a_group_that_cannot_whisper_the_run_is_played_privately(chat: ChatHarness) -> None:
    """Telegram: the group sees only the start link (and later the record); every board, answer and
    the run's end are in the member's private chat."""
    group = chat.say("ana", "/streak italian", can_whisper=False, private_link=TG_LINK)
    assert [r for r in group if r.image is not None] == []
    (link,) = group
    assert pattern("en", "streak.in_private", name="Ana").search(link.text)
    run = _run(chat)
    payload = link.text.split("start=")[1].split()[0]
    opened = chat.say("ana", f"/start {payload}", chat="ana-dm", kind="private")
    (board,) = _boards(opened)
    assert board.post_id == run.post_id
    # Opened from the link, it is the streak's board: its words, Skip, no Hint.
    assert pattern("en", "streak.start").search(board.text)
    actions = [b.action for row in board.buttons for b in row]
    assert action(ButtonKind.STREAK_SKIP_AT, run.id, run.post_id or 0) in actions
    assert not any(a.startswith(ButtonKind.PUZZLE_HINT.value + ":") for a in actions)
    follow = _solve(chat, "ana", chat="ana-dm", kind="private")
    assert _boards(follow) and all(not r.private for r in follow)
    over = _miss(chat, "ana", chat="ana-dm", kind="private")
    assert tr("en", "streak.over", score=1) in _texts(over)
    # The record goes to the group where the run was started, through the outbox.
    records = [o for o in chat.service.outbox.drain(PLATFORM) if o.reply.record is not None]
    assert [(o.chat_id, o.reply.record) for o in records] == [(GROUP, "streak:italian")]


def test_streak_best_shows_the_bests(chat: ChatHarness) -> None:
    assert tr("en", "streak.best_none") in chat.text("ana", "/streak best italian")
    chat.say("ana", "/streak italian")
    _solve(chat, "ana")
    _miss(chat, "ana")
    text = chat.text("bob", "/streak best italian")
    assert tr("en", "streak.chat_best", score=1, name="Ana") in text


def test_a_run_left_behind_by_a_crash_is_settled_when_asked_for(chat: ChatHarness) -> None:
    """The run moves on after the answer's own unit of work: if the process died in between (here:
    the hook is away for one answer), /streak settles it from the stored attempt."""
    chat.say("ana", "/streak italian")
    puzzles = chat.service.app.puzzles
    hook, puzzles.runs = puzzles.runs, None
    try:
        _solve(chat, "ana")
    finally:
        puzzles.runs = hook
    assert _run(chat).score == 0
    (board,) = _boards(chat.say("ana", "/streak"))
    assert _run(chat).score == 1 and board.post_id == _run(chat).post_id
    hook, puzzles.runs = puzzles.runs, None
    try:
        _miss(chat, "ana")
    finally:
        puzzles.runs = hook
    text = chat.text("ana", "/streak")
    assert tr("en", "streak.over", score=1) in text
    assert chat.storage.puzzle_runs.running(PLATFORM, "ana", "streak") is None
    assert chat.storage.puzzle_runs.personal_best(PLATFORM, "ana", "streak", "italian") == 1


def test_giving_up_ends_the_run(chat: ChatHarness) -> None:
    chat.say("ana", "/streak italian")
    _solve(chat, "ana")
    text = chat.text("ana", "/puzzle giveup")
    assert tr("en", "streak.over", score=1) in text
    assert chat.storage.puzzle_runs.running(PLATFORM, "ana", "streak") is None


def test_a_private_chat_keeps_no_record(chat: ChatHarness) -> None:
    chat.say("ana", "/streak italian", chat="ana-dm", kind="private")
    _solve(chat, "ana", chat="ana-dm", kind="private")
    over = _miss(chat, "ana", chat="ana-dm", kind="private")
    assert tr("en", "streak.best_new", best=1) in _texts(over)
    assert tr("en", "streak.chat_record") not in _texts(over)
    assert chat.storage.puzzle_runs.chat_bests(PLATFORM, "ana-dm") == []
    assert _record_notices(chat) == []


def test_the_boards_between_the_moves_of_a_streak_puzzle_offer_no_hint(chat: ChatHarness) -> None:
    chat.say("ana", "/streak italian")
    for _ in range(12):
        if len(_current(chat, "ana")["solution"]) >= 3:
            break
        _solve(chat, "ana")
    solution = _current(chat, "ana")["solution"]
    assert len(solution) >= 3, "no puzzle of two solver moves in twelve"
    (board,) = _boards(chat.say("ana", f"/m {solution[0]}"))
    assert board.buttons
    assert not any(b.action.startswith(ButtonKind.PUZZLE_HINT.value + ":") for row in board.buttons for b in row)


def _current(room: ChatHarness, user: str) -> dict[str, Any]:
    run = _run(room, user)
    return _post_puzzle(room, run.post_id or 0)


def _skip_action(board: Reply) -> str:
    (skip,) = [b.action for row in board.buttons for b in row
               if b.action.split(":")[0] in (ButtonKind.STREAK_SKIP.value, ButtonKind.STREAK_SKIP_AT.value)]
    return skip


def test_the_skip_of_an_earlier_board_of_the_run_changes_nothing(chat: ChatHarness) -> None:
    """Each board's Skip carries its puzzle: once the run moved on, an earlier board's Skip is stale
    (it must not skip the puzzle being solved now)."""
    (first,) = _boards(chat.say("ana", "/streak italian"))
    _solve(chat, "ana")
    run = _run(chat)
    assert run.post_id != first.post_id and run.skips == 0
    before = chat.snapshot()
    (refused,) = chat.press("ana", _skip_action(first))
    assert refused.text == tr("en", "streak.stale_skip") and refused.private
    assert chat.snapshot() == before
    # The Skip of the board being solved skips it.
    (current,) = _boards(chat.say("ana", "/streak"))
    (board,) = _boards(chat.press("ana", _skip_action(current)))
    assert board.post_id != run.post_id and _run(chat).skips == 1


def test_a_skip_button_of_the_old_form_is_refused_as_stale(chat: ChatHarness) -> None:
    """Boards drawn before the Skip carried its puzzle (ks:<run>) cannot tell which puzzle they
    skip: refused, nothing changed."""
    chat.say("ana", "/streak italian")
    run = _run(chat)
    before = chat.snapshot()
    (refused,) = chat.press("ana", action(ButtonKind.STREAK_SKIP, run.id))
    assert refused.text == tr("en", "streak.stale_skip")
    assert chat.snapshot() == before


def test_a_streak_is_unrated(chat: ChatHarness) -> None:
    """As on lichess, a streak does not move the puzzle rating (the start says so): its solves and
    its miss leave the player's and the puzzles' ratings as they were."""
    (board,) = _boards(chat.say("ana", "/streak italian"))
    assert tr("en", "streak.start").split(". ")[-1] in board.text
    solved = _solve(chat, "ana")
    assert pattern("en", "puzzle.rating_change").search(_texts(solved)) is None
    _solve(chat, "ana")
    _miss(chat, "ana")
    assert chat.storage.puzzle_runs.personal_best(PLATFORM, "ana", "streak", "italian") == 2
    assert chat.storage.ratings.get(PLATFORM, "ana", "puzzles") is None
    # A /puzzle outside a streak still is rated.
    chat.say("ana", "/puzzle italian")
    (post,) = chat.storage.personal_posts(PLATFORM, "ana", 1)
    puzzle = _post_puzzle(chat, post.id)
    assert pattern("en", "puzzle.rating_change").search(_texts(chat.say("ana", "/m " + " ".join(puzzle["solution"]))))
    assert chat.storage.ratings.get(PLATFORM, "ana", "puzzles") is not None


def test_a_streak_of_another_variant_while_one_runs_says_which_runs(chat: ChatHarness) -> None:
    """/streak spanish while an Italian run goes on: the Italian one is shown, and the player is told
    it is that one, and how a Spanish one can start.  Nothing changes."""
    chat.say("ana", "/streak italian")
    _solve(chat, "ana")
    run = _run(chat)
    other = tr("en", "streak.other_running", running=tr("en", "variant.italian"), asked=tr("en", "variant.spanish"))
    before = chat.snapshot()
    replies = chat.say("ana", "/streak spanish")
    (board,) = _boards(replies)
    assert board.post_id == run.post_id
    assert other in _texts(replies)
    assert chat.snapshot() == before
    # The same variant, or none named: the run goes on, with nothing more said.
    for words in ("/streak italian", "/streak"):
        assert other not in _texts(chat.say("ana", words))
    # Where the run is played privately, the group's link says it too.
    group = chat.say("ana", "/streak spanish", can_whisper=False, private_link=TG_LINK)
    assert other in _texts(group) and pattern("en", "streak.in_private", name="Ana").search(_texts(group))
    # In Spanish.
    chat.say("bob", "/lang es", admin=True)
    assert tr("es", "streak.other_running", running=tr("es", "variant.italian"),
              asked=tr("es", "variant.spanish")) in _texts(chat.say("ana", "/racha española"))
