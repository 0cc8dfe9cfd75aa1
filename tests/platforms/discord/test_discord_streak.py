"""/streak on Discord (issue 33), through the real DraughtsBot, the real service on a real SQLite
file, and the strict fake Discord.

In a channel a member's run is ephemeral (its boards, answers and end are theirs alone); the
channel sees only the chat's record message, posted once through the outbox's delivery round and
edited in place (PATCH of the same message) when someone beats the record."""

from __future__ import annotations

import asyncio
from typing import Any

from catalog_text import tr
from discord_fake import CHANNEL_ID, Harness, uid

from bot.puzzles import bank
from bot.rules import Position

PLATFORM = "discord"


def _view_timer(task: asyncio.Task) -> bool:
    """discord.py gives the view of an ephemeral message a 15-minute timer task of its own."""
    return "timeout_task_impl" in repr(task.get_coro())


async def slash(h: Harness, name: str, user: str, options: dict[str, Any] | None = None, **kw: Any) -> str:
    """A slash command, answered once every task it spawned is done (but ephemeral views' timers)."""
    payload = h.slash_payload(name, user, options, **kw)
    before = asyncio.all_tasks()
    h.bot._connection.parse_interaction_create(payload)
    for _ in range(100):
        pending = [task for task in asyncio.all_tasks() - before
                   if task is not asyncio.current_task() and not task.done() and not _view_timer(task)]
        if not pending:
            break
        await asyncio.wait(pending, timeout=20)
    return payload["token"]


def current_puzzle(h: Harness, user: str) -> dict:
    run = h.storage.puzzle_runs.running(PLATFORM, uid(user), "streak")
    assert run is not None and run.post_id is not None
    post = h.storage.puzzle_post(run.post_id)
    puzzle = bank.by_id(post.variant, post.puzzle_id)
    assert puzzle is not None
    return puzzle


async def run_streak(h: Harness, user: str, solves: int) -> None:
    """``user`` runs a streak in the channel: ``solves`` puzzles solved, then a miss; every answer
    is ephemeral and the channel gets nothing of it."""
    posts = len(h.fake.channel_posts())
    token = await slash(h, "streak", user, {"variant": "italian"})
    (board,) = h.fake.answers(token)
    assert board.ephemeral and board.filenames() == ["board.png"]
    assert any(c.startswith("dr:kp:") for c in board.custom_ids())
    assert not any(c.startswith("dr:zh:") for c in board.custom_ids())
    for _ in range(solves):
        token = await slash(h, "move", user, {"move": " ".join(current_puzzle(h, user)["solution"])})
        answers = h.fake.answers(token)
        assert answers and all(a.ephemeral for a in answers)
    puzzle = current_puzzle(h, user)
    pos = Position.from_fen(puzzle["variant"], puzzle["fen"])
    wrong = next(str(m) for m in pos.legal_moves() if str(m) not in puzzle["tree"])
    token = await slash(h, "move", user, {"move": wrong})
    answers = h.fake.answers(token)
    assert answers and all(a.ephemeral for a in answers)
    assert any(tr("en", "streak.over", score=solves) in a.content for a in answers)
    assert len(h.fake.channel_posts()) == posts


async def test_the_record_message_is_posted_once_then_edited_in_place(h: Harness) -> None:
    await run_streak(h, "ana", 1)
    assert await h.bot.delivery_round() == 1
    (record,) = h.fake.channel_posts()
    assert not record.ephemeral and record.channel_id == CHANNEL_ID
    assert record.content == tr("en", "records.message", mode=tr("en", "records.mode.streak"),
                                variant=tr("en", "variant.italian"), score=1, name="Ana")
    best = h.storage.puzzle_runs.chat_best(PLATFORM, str(CHANNEL_ID), "streak", "italian")
    assert best is not None and best.message_id == str(record.id)
    await run_streak(h, "bob", 2)
    patches = len(h.fake.requests(method="PATCH"))
    assert await h.bot.delivery_round() == 1
    assert len(h.fake.requests(method="PATCH")) == patches + 1
    # The same message, edited: no second post in the channel.
    assert [m.id for m in h.fake.channel_posts()] == [record.id]
    edited = h.fake.messages[record.id]
    assert edited.content.startswith(tr("en", "records.message", mode=tr("en", "records.mode.streak"),
                                        variant=tr("en", "variant.italian"), score=2, name="Bob"))
    assert tr("en", "records.beaten", name="Ana", score=1) in edited.content


def _record_text(score: int, name: str) -> str:
    return tr("en", "records.message", mode=tr("en", "records.mode.streak"), variant=tr("en", "variant.italian"),
              score=score, name=name)


async def test_two_records_before_a_delivery_round_make_one_message(h: Harness) -> None:
    """Two records queued before the outbox goes out: one post, then a PATCH of that post."""
    await run_streak(h, "ana", 1)
    await run_streak(h, "bob", 2)
    assert await h.bot.delivery_round() == 2
    (record,) = h.fake.channel_posts()
    assert h.fake.messages[record.id].content.startswith(_record_text(2, "Bob"))
    best = h.storage.puzzle_runs.chat_best(PLATFORM, str(CHANNEL_ID), "streak", "italian")
    assert best is not None and best.message_id == str(record.id)


async def test_a_deleted_record_message_is_posted_again(h: Harness) -> None:
    """The record message was deleted: Discord answers the edit 404 Unknown Message (10008), so the
    next record is a new post, which the one after edits."""
    await run_streak(h, "ana", 1)
    await h.bot.delivery_round()
    (first,) = h.fake.channel_posts()
    h.fake.messages.pop(first.id)
    await run_streak(h, "bob", 2)
    patches = len(h.fake.requests(method="PATCH"))
    await h.bot.delivery_round()
    assert len(h.fake.requests(method="PATCH")) == patches + 1
    (second,) = h.fake.channel_posts()
    assert second.id != first.id
    assert second.content.startswith(_record_text(2, "Bob"))
    best = h.storage.puzzle_runs.chat_best(PLATFORM, str(CHANNEL_ID), "streak", "italian")
    assert best is not None and best.message_id == str(second.id)
    await run_streak(h, "cid", 3)
    await h.bot.delivery_round()
    assert [m.id for m in h.fake.channel_posts()] == [second.id]
    assert h.fake.messages[second.id].content.startswith(_record_text(3, "Cid"))
