"""The daily puzzle on Discord (issue 9), through the real DraughtsBot, the real service on a real
SQLite file, and the strict fake Discord.

Discord specifics: /daily on needs Manage Server (or Manage Channels); the post reaches the
channel through the outbox's delivery round, with yesterday's solution as a ``||spoiler||`` the
next day; answers to one user (typed with /move, or the buttons) are ephemeral, and only the
first solver is announced in the channel.  The service's clock is ``h.now``, which the test moves."""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

from discord_fake import CHANNEL_ID, Harness, uid
from puzzle_text import right_text

from bot.i18n import t
from bot.puzzles import bank
from bot.rules import Position
from bot.service.chat.wording import day_words

PLATFORM = "discord"
DAY = dt.date(2026, 5, 4)
MADRID = ZoneInfo("Europe/Madrid")
PNG = b"\x89PNG\r\n\x1a\n"




def at(day: dt.date, hour: int, minute: int = 0) -> float:
    return dt.datetime(day.year, day.month, day.day, hour, minute, tzinfo=MADRID).timestamp()


def _view_timer(task: asyncio.Task) -> bool:
    """discord.py gives the view of an ephemeral message a 15-minute timer task of its own."""
    return "timeout_task_impl" in repr(task.get_coro())


async def feed(h: Harness, payload: dict[str, Any]) -> str:
    """Harness.feed, except that it does not wait for the timers of ephemeral views (which run for
    15 minutes): the interaction is answered once every other task it spawned is done."""
    before = asyncio.all_tasks()
    h.bot._connection.parse_interaction_create(payload)
    for _ in range(100):
        pending = [task for task in asyncio.all_tasks() - before
                   if task is not asyncio.current_task() and not task.done() and not _view_timer(task)]
        if not pending:
            break
        await asyncio.wait(pending, timeout=20)
    return payload["token"]


async def slash(h: Harness, name: str, user: str, options: dict[str, Any] | None = None, **kw: Any) -> str:
    return await feed(h, h.slash_payload(name, user, options, **kw))


async def click(h: Harness, custom_id: str, user: str, message) -> str:
    return await feed(h, h.click_payload(custom_id, user, message))


def the_puzzle(h: Harness, post_id: int) -> dict:
    post = h.storage.puzzle_post(post_id)
    return next(p for p in bank.load(post.variant) if p["id"] == post.puzzle_id)


def squares(move: str) -> list[int]:
    return [int(s) for s in move.replace("x", "-").split("-")]


async def subscribed_and_posted(h: Harness):
    """An admin subscribes the channel (Italian); the day's post goes out: (post id, puzzle, message)."""
    h.now[0] = at(DAY, 8)
    await slash(h, "daily", "ana", {"action": "on", "variant": "italian"}, admin=True)
    h.now[0] = at(DAY, 9)
    assert await h.bot.delivery_round() == 1
    post = h.storage.daily_posts(PLATFORM, str(CHANNEL_ID), 1)[0]
    message = h.fake.channel_posts()[-1]
    return post.id, the_puzzle(h, post.id), message


async def test_daily_on_needs_manage_server(h: Harness):
    h.now[0] = at(DAY, 8)
    token = await slash(h, "daily", "bob", {"action": "on"})
    assert h.only_answer(token).content == t("en", "error.admins_only", command="daily")
    assert h.storage.subscription(PLATFORM, str(CHANNEL_ID)) is None
    token = await slash(h, "daily", "ana", {"action": "on", "time": "07:45", "timezone": "Europe/Rome",
                                           "variant": "triestina"}, admin=True)
    answer = h.only_answer(token)
    assert not answer.ephemeral and "07:45" in answer.content and "Europe/Rome" in answer.content
    sub = h.storage.subscription(PLATFORM, str(CHANNEL_ID))
    assert (sub.time, sub.timezone, sub.variant, sub.active) == ("07:45", "Europe/Rome", "triestina", True)
    token = await slash(h, "daily", "bob")
    assert h.only_answer(token).content == t("en", "daily.show", time="07:45", zone="Europe/Rome",
                                              variant=t("en", "variant.triestina"))
    token = await slash(h, "daily", "bob", {"action": "off"})
    assert h.only_answer(token).content == t("en", "error.admins_only", command="daily")
    token = await slash(h, "daily", "ana", {"action": "off"}, admin=True)
    assert h.only_answer(token).content == t("en", "daily.off")
    assert not h.storage.subscription(PLATFORM, str(CHANNEL_ID)).active


async def test_the_daily_post_reaches_the_channel_with_its_board_and_buttons(h: Harness):
    post_id, p, message = await subscribed_and_posted(h)
    assert not message.ephemeral and message.channel_id == CHANNEL_ID
    pos = Position.from_fen("italian", p["fen"])
    assert t("en", f"puzzle.to_win.{pos.turn}") in message.content
    assert message.filenames() == ["board.png"]
    call = h.fake.requests(method="POST", path_end="/channels/{channel_id}/messages")[-1]
    assert call.files["board.png"].startswith(PNG)
    starts = sorted({m.start for m in pos.legal_moves()})
    assert message.custom_ids() == [f"dr:zs:{post_id}:0:{s}" for s in starts] + [f"dr:zh:{post_id}:0"]
    h.now[0] = at(DAY, 15)
    assert await h.bot.delivery_round() == 0


async def test_answers_are_ephemeral_and_the_first_solver_is_announced_in_the_channel(h: Harness):
    post_id, p, post = await subscribed_and_posted(h)
    line = p["solution"]
    token = await slash(h, "move", "bob", {"move": line[0]})
    answer = h.only_answer(token)
    # A reply that is not forced is named with its side; a forced one says so (which one the day's
    # puzzle has depends on the shipped bank).
    assert answer.ephemeral and answer.content == right_text(p, line[1])
    pos = Position.from_fen("italian", p["fen"])
    forced = len(pos.play(pos.parse_move(line[0])).legal_moves()) == 1
    side = t("en", f"puzzle.replier.{'B' if pos.white else 'W'}")
    assert answer.content == (t("en", "puzzle.right_forced", reply=line[1]) if forced
                              else t("en", "puzzle.right", reply=line[1], side=side))
    assert answer.filenames() == ["board.png"]
    token = await slash(h, "move", "bob", {"move": " ".join(line[2:])})
    answers = h.fake.answers(token)
    public = [a for a in answers if not a.ephemeral]
    assert [a.content for a in public] == [t("en", "puzzle.first", name="Bob", day=day_words("en", DAY),
                                             streak=t("en", "streak.one"))]
    assert all(a.channel_id == CHANNEL_ID for a in answers)
    assert h.storage.puzzle_post(post_id).first_solver_id == uid("bob")
    # A later solver: only an ephemeral answer, nothing for the channel.
    token = await slash(h, "move", "cid", {"move": " ".join(line)})
    answers = h.fake.answers(token)
    assert answers and all(a.ephemeral for a in answers)
    assert answers[-1].content.startswith(
        t("en", "puzzle.solved", ordinal=t("en", "ordinal.2"), streak=t("en", "streak.one")) + "\n")


async def test_the_buttons_answer_ephemerally_and_leave_the_post_as_it_is(h: Harness):
    post_id, p, post = await subscribed_and_posted(h)
    before = post.message["content"], post.custom_ids()
    first = squares(p["solution"][0])
    token = await click(h, f"dr:zs:{post_id}:0:{first[0]}", "cid", post)
    chosen = h.only_answer(token)
    assert chosen.ephemeral and chosen.filenames() == ["board.png"]
    target = f"dr:zd:{post_id}:0:{first[0]}:{first[-1]}"
    assert target in chosen.custom_ids()
    # Issue 15, item 13: each click on the ephemeral board posted one more ephemeral board; now
    # the clicked board changes in place.
    token = await click(h, target, "cid", chosen)
    assert h.fake.answers(token) == [] and chosen.message["edited_timestamp"]
    if any(c.startswith("dr:zm:") for c in chosen.custom_ids()):
        path = next(c for c in chosen.custom_ids() if c.startswith("dr:zm:"))
        token = await click(h, path, "cid", chosen)
        assert h.fake.answers(token) == []
    assert chosen.ephemeral and chosen.filenames() == ["board.png"]
    assert right_text(p, p["solution"][1]) in chosen.content
    assert [m for m in h.fake.messages.values() if m.ephemeral] == [chosen]
    assert h.storage.attempt(post_id, uid("cid")).progress == tuple(p["solution"][:2])
    # The hint button, ephemeral too.
    token = await click(h, f"dr:zh:{post_id}:0", "ana", post)
    hint = h.only_answer(token)
    assert hint.ephemeral and hint.content == t("en", "puzzle.hint", square=first[0])
    assert (h.fake.messages[post.id].message["content"], h.fake.messages[post.id].custom_ids()) == before


async def test_the_next_days_post_shows_yesterdays_solution_as_a_spoiler(h: Harness):
    post_id, p, post = await subscribed_and_posted(h)
    line = " ".join(p["solution"])
    await slash(h, "move", "ana", {"move": line})
    h.now[0] = at(DAY + dt.timedelta(days=1), 9)
    before = len(h.fake.channel_posts())
    assert await h.bot.delivery_round() == 2
    yesterday, today = h.fake.channel_posts()[before:]
    assert f"||{line}||" in yesterday.content
    assert "Ana" in yesterday.content.replace(f"||{line}||", "")
    assert yesterday.content.count(line) == 1
    assert today.filenames() == ["board.png"]
    assert h.storage.daily_posts(PLATFORM, str(CHANNEL_ID), 1)[0].day == (DAY + dt.timedelta(days=1)).isoformat()


async def test_a_channel_that_is_gone_is_unsubscribed(h: Harness):
    h.now[0] = at(DAY, 8)
    await slash(h, "daily", "ana", {"action": "on"}, admin=True)
    h.fake.gone_channels.add(CHANNEL_ID)
    h.now[0] = at(DAY, 9)
    assert await h.bot.delivery_round() == 0
    assert not h.storage.subscription(PLATFORM, str(CHANNEL_ID)).active
    assert [m.status for m in h.storage.find_outbox(PLATFORM)] == ["dropped"]
    h.now[0] = at(DAY + dt.timedelta(days=1), 9)
    calls = len(h.fake.calls)
    assert await h.bot.delivery_round() == 0
    assert len(h.fake.calls) == calls


async def test_a_personal_puzzle_is_ephemeral(h: Harness):
    h.now[0] = at(DAY, 10)
    token = await slash(h, "puzzle", "bob", {"variant": "spanish"})
    answer = h.only_answer(token)
    assert answer.ephemeral and answer.filenames() == ["board.png"]
    post = h.storage.personal_posts(PLATFORM, uid("bob"), 1)[0]
    assert post.variant == "spanish" and f"#{post.id}" in answer.content
    p = the_puzzle(h, post.id)
    token = await slash(h, "move", "bob", {"move": p["solution"][0]})
    assert h.only_answer(token).ephemeral
    assert h.storage.attempt(post.id, uid("bob")).progress == tuple(p["solution"][:2])
    assert h.fake.channel_posts() == []


async def test_manage_channels_is_enough_to_start_the_daily_puzzle(h: Harness):
    h.now[0] = at(DAY, 8)
    payload = h.slash_payload("daily", "cid", {"action": "on", "variant": "spanish"})
    permissions = int(payload["member"]["permissions"])
    assert not permissions & (1 << 4) and not permissions & (1 << 5)
    payload["member"]["permissions"] = str(permissions | (1 << 4))        # Manage Channels
    token = await feed(h, payload)
    assert h.only_answer(token).content == t("en", "daily.on", time="09:00", zone="Europe/Madrid",
                                              variant=t("en", "variant.spanish"))
    assert h.storage.subscription(PLATFORM, str(CHANNEL_ID)).variant == "spanish"


async def test_a_nickname_with_spoiler_bars_does_not_reveal_the_solution(h: Harness):
    # Issue 15, item 11: "Bob||" opened a spoiler of its own that ended at the real one's bars,
    # and the solution showed in plain sight.
    h.nicks["bob"] = "Bob||"
    post_id, p, post = await subscribed_and_posted(h)
    line = " ".join(p["solution"])
    token = await slash(h, "move", "bob", {"move": line})
    [public] = [a for a in h.fake.answers(token) if not a.ephemeral]
    assert "Bob||" in public.rendered.visible and not public.rendered.hidden
    h.now[0] = at(DAY + dt.timedelta(days=1), 9)
    before = len(h.fake.channel_posts())
    assert await h.bot.delivery_round() == 2
    yesterday = h.fake.channel_posts()[before]
    shown = yesterday.rendered
    assert shown.hidden == [line]
    assert "Bob||" in shown.visible and line not in shown.visible


async def test_names_in_the_puzzle_leaderboard_are_shown_as_typed(h: Harness):
    h.nicks["bob"] = "[text](http://x)"
    h.nicks["cid"] = "@everyone"
    post_id, p, post = await subscribed_and_posted(h)
    line = " ".join(p["solution"])
    await slash(h, "move", "bob", {"move": line})
    await slash(h, "move", "cid", {"move": line})
    token = await slash(h, "top", "ana", {"scope": "puzzles"})
    shown = h.only_answer(token).rendered
    assert "[text](http://x)" in shown.visible and not shown.links
    assert "@everyone" in shown.visible.replace("\u200b", "") and not shown.special


async def test_a_miss_its_refutation_and_giving_up_stay_with_the_member(h: Harness):
    """Issue 17, items 1 and 8 on Discord: a wrong move (with its refutation), the Give up button
    of one's own board and the solution it shows are ephemeral; the channel gets nothing."""
    post_id, p, post = await subscribed_and_posted(h)
    posts_before = len(h.fake.channel_posts())
    pos = Position.from_fen("italian", p["fen"])
    wrong = next(str(m) for m in pos.legal_moves() if str(m) not in p["tree"])
    token = await slash(h, "move", "cid", {"move": wrong})
    missed = h.only_answer(token)
    assert missed.ephemeral and missed.content.startswith(t("en", "puzzle.refuted", move=wrong, line="")[:20])
    token = await slash(h, "move", "cid", {"move": p["solution"][0]})
    board = h.only_answer(token)
    assert board.ephemeral and f"dr:zg:{post_id}" in board.custom_ids()
    token = await click(h, f"dr:zg:{post_id}", "cid", board)
    shown = list(h.fake.answers(token)) or [board]
    assert all(m.ephemeral for m in shown)
    assert any(t("en", "puzzle.gave_up", line=" ".join(p["solution"])) in m.content for m in shown)
    assert len(h.fake.channel_posts()) == posts_before
    assert h.storage.attempt(post_id, uid("cid")).solved_at is None
    # /puzzle history as a slash command option: his own, ephemeral.
    token = await slash(h, "puzzle", "cid", {"action": "history"})
    history = h.only_answer(token)
    assert history.ephemeral and history.content.startswith(t("en", "puzzle.history_title"))
    assert t("en", "puzzle.result.gave_up") in history.content
