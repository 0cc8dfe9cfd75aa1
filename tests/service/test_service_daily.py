"""The daily puzzle through the game service (issue 9): /daily, the post made once per chat and
local day (restarts, downtime, several processes, daylight saving), what the post shows, the
whole answer flow (right, wrong but legal, illegal, hint, replies, buttons, completion, first
solver, later solvers, streaks, /top puzzles), chats that are gone, and /puzzle for one person.

Everything is real: a SQLite file in tmp_path, the rules engine, Pillow boards, the shipped bank.
Only the clock (a list the test moves) and the random draw (seeded) are fixed."""

from __future__ import annotations

import datetime as dt
import random
import re
import threading
from functools import cache
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from harness import ChatHarness
from puzzle_text import right_text

from bot.i18n import t, tn
from bot.puzzles import bank
from bot.puzzles.solve import puzzle_of_day, refutation
from bot.rules import Detail, ErrorCode, IllegalMove, Position
from bot.service import GameService, Outgoing, Reply
from bot.service.chat.wording import day_words, variant_name
from bot.storage import Storage

PLATFORM = "test"
GROUP = "group-1"
OTHER = "group-2"
MADRID = ZoneInfo("Europe/Madrid")
ROME = ZoneInfo("Europe/Rome")
PNG = b"\x89PNG\r\n\x1a\n"
TG_LINK = "https://t.me/Bot?start={payload}"


def local(day: dt.date, hour: int = 0, minute: int = 0, second: int = 0, zone: ZoneInfo = MADRID) -> float:
    """Epoch seconds of a wall-clock time in a zone."""
    return dt.datetime(day.year, day.month, day.day, hour, minute, second, tzinfo=zone).timestamp()


def puzzle(post_or_id: Any, variant: str | None = None) -> dict[str, Any]:
    """The bank record of a post (or of a puzzle id in a variant)."""
    if variant is None:
        variant, puzzle_id = post_or_id.variant, post_or_id.puzzle_id
    else:
        puzzle_id = post_or_id
    return next(p for p in bank.load(variant) if p["id"] == puzzle_id)


def second_turn_has_a_choice(p: dict[str, Any]) -> bool:
    """Whether the solver's second move is not the only legal one (a wrong move can be tried)."""
    pos = Position.from_fen(p["variant"], p["fen"])
    for text in p["solution"][:2]:
        pos = pos.play(pos.parse_move(text))
    return len(pos.legal_moves()) > 1


@cache
def golpe_day() -> tuple[dt.date, dict[str, Any]]:
    """A day whose Italian puzzle starts quietly (no capture on the board, a key move that is no
    capture) and takes the solver three moves: right, right again, then solved; the solver has a
    man that a step can move illegally (not only kings)."""
    puzzles = bank.load("italian")
    day = dt.date(2026, 6, 1)
    for _ in range(400):
        p = puzzle_of_day(puzzles, day, "italian")
        pos = Position.from_fen("italian", p["fen"])
        if (len(p["solution"]) >= 5 and "x" not in p["solution"][0]
                and not any(m.is_capture for m in pos.legal_moves()) and second_turn_has_a_choice(p)
                and any(illegal_step_of(p, sq) for sq, piece in pos.pieces().items() if piece == pos.turn.lower())):
            return day, p
        day += dt.timedelta(days=1)
    raise AssertionError("no quiet three-move Italian puzzle in 400 days")




def wrong_move(p: dict[str, Any]) -> str:
    """A legal first move that is not the golpe."""
    pos = Position.from_fen(p["variant"], p["fen"])
    return next(str(m) for m in pos.legal_moves() if str(m) not in p["tree"])


def illegal_step(p: dict[str, Any]) -> str:
    """A move of one of the solver's men that the rules forbid as a step (e.g. backwards)."""
    pos = Position.from_fen(p["variant"], p["fen"])
    mine = "w" if pos.turn == "W" else "b"
    for square, piece in sorted(pos.pieces().items()):
        if piece == mine and (step := illegal_step_of(p, square)) is not None:
            return step
    raise AssertionError("no illegal step found")


def start_square(p: dict[str, Any], index: int = 0) -> int:
    return int(p["solution"][index].replace("x", "-").split("-")[0])


def actions(reply: Reply) -> list[str]:
    return [b.action for row in reply.buttons for b in row]


def labels(reply: Reply) -> list[str]:
    return [b.label for row in reply.buttons for b in row]


def texts(replies: list[Reply]) -> str:
    return "\n".join(r.text for r in replies)


def signed_payload(text: str, post_id: int) -> str:
    """The signed ``/start`` payload in a link the bot wrote (p<post>_<signature>)."""
    match = re.search(r"start=(p(\d+)_[A-Za-z0-9_-]{16})(?![A-Za-z0-9_-])", text)
    assert match and int(match.group(2)) == post_id, text
    return match.group(1)


def link_from_group(daily: Daily, user: str, post: Any) -> str:
    """The payload a user is handed for their private chat by pressing a button of a daily post in
    its own chat (Telegram opens t.me/<bot>?start=<payload> from there)."""
    p = puzzle(post)
    attempt = daily.storage.attempt(post.id, user)
    step = len(attempt.progress) if attempt else 0
    replies = daily.press(user, f"zs:{post.id}:{step}:{start_square(p, step)}", chat=post.chat_id)
    payloads = [r.start_payload for r in replies if r.start_payload]
    assert payloads, texts(replies)
    return payloads[0]


def open_in_private(daily: Daily, user: str, post: Any) -> list[Reply]:
    """``user`` presses a button of the post in its chat and follows the link to their private chat."""
    payload = link_from_group(daily, user, post)
    return daily.say(user, f"/start {payload}", chat=f"{user}-dm", kind="private", admin=True)


class Daily(ChatHarness):
    """Chats on one real service, and other processes on the same file."""

    def __init__(self, db_path: Path, now: list[float]) -> None:
        super().__init__(db_path, now)
        self.others: list[Storage] = []

    def second_process(self) -> GameService:
        """Another process on the same file (its own connection), with the same clock."""
        storage = Storage(self.db_path)
        self.others.append(storage)
        return GameService(storage, clock=lambda: self.now[0], rng=random.Random(2))

    def close(self) -> None:
        self.storage.close()
        for storage in self.others:
            storage.close()

    def subscribe(self, args: str = "", chat: str = GROUP, **kw: Any) -> str:
        kw.setdefault("admin", True)
        return self.text("ana", f"/daily on {args}".strip(), chat=chat, **kw)

    def tick(self, service: GameService | None = None) -> list[Outgoing]:
        return (service or self.service).tick(platform=PLATFORM)

    def posts(self, chat: str = GROUP) -> list:
        return self.storage.daily_posts(PLATFORM, chat, 1000)

    def at(self, day: dt.date, hour: int = 0, minute: int = 0, second: int = 0, zone: ZoneInfo = MADRID) -> None:
        self.now[0] = local(day, hour, minute, second, zone)


def boards(out: list[Outgoing], chat: str | None = None) -> list[Outgoing]:
    """The puzzle boards among messages the service sent on its own."""
    return [o for o in out if o.reply.post_id is not None and (chat is None or o.chat_id == chat)]


DAY = dt.date(2026, 5, 4)


@pytest.fixture
def daily(tmp_path: Path):
    harness = Daily(tmp_path / "daily.db", [local(DAY, 8, 0)])
    yield harness
    harness.close()


@pytest.fixture
def golpe(daily: Daily):
    """A group subscribed (Italian, 09:00 Madrid) and the day's post out: (post, puzzle)."""
    day, expected = golpe_day()
    daily.at(day, 8)
    daily.subscribe("italian")
    daily.at(day, 9)
    out = daily.tick()
    assert len(boards(out)) == 1
    post = daily.posts()[0]
    assert post.puzzle_id == expected["id"]
    return post, expected


# -- /daily --------------------------------------------------------------------------------------


def test_daily_on_by_someone_who_is_not_an_admin_is_refused_and_changes_nothing(daily):
    assert daily.text("bob", "/daily on") == t("en", "error.admins_only", command="daily")
    assert daily.text("bob", "/daily on 08:00 Europe/Rome italian") == t("en", "error.admins_only", command="daily")
    assert daily.storage.subscription(PLATFORM, GROUP) is None
    assert daily.text("bob", "/daily") == t("en", "daily.none")       # seeing the setting is for everyone
    daily.subscribe()
    assert daily.text("bob", "/daily off") == t("en", "error.admins_only", command="daily")
    assert daily.storage.subscription(PLATFORM, GROUP).active


def test_daily_on_defaults_to_nine_in_madrid_and_the_chats_variant(daily):
    assert daily.subscribe() == t("en", "daily.on", time="09:00", zone="Europe/Madrid",
                                  variant=t("en", "variant.italian"))
    sub = daily.storage.subscription(PLATFORM, GROUP)
    assert (sub.time, sub.timezone, sub.variant, sub.active) == ("09:00", "Europe/Madrid", "italian", True)
    # A Spanish-speaking chat's default variant is Spanish draughts; a chat's chosen variant wins.
    daily.subscribe(chat=OTHER, language="es")
    assert daily.storage.subscription(PLATFORM, OTHER).variant == "spanish"
    daily.say("ana", "/settings variant triestina", admin=True, chat="group-3")
    daily.subscribe(chat="group-3")
    assert daily.storage.subscription(PLATFORM, "group-3").variant == "triestina"


def test_daily_on_with_a_time_a_time_zone_and_a_variant(daily):
    answer = daily.subscribe("07:30 Europe/Rome triestina")
    sub = daily.storage.subscription(PLATFORM, GROUP)
    assert (sub.time, sub.timezone, sub.variant) == ("07:30", "Europe/Rome", "triestina")
    assert "07:30" in answer and "Europe/Rome" in answer
    # Zone names are understood whatever their case; changing only the time keeps the zone.
    daily.subscribe("18:05 america/buenos_aires spanish", chat=OTHER)
    sub = daily.storage.subscription(PLATFORM, OTHER)
    assert (sub.time, sub.timezone, sub.variant) == ("18:05", "America/Buenos_Aires", "spanish")
    daily.subscribe("06:45")
    sub = daily.storage.subscription(PLATFORM, GROUP)
    assert (sub.time, sub.timezone) == ("06:45", "Europe/Rome")


def test_an_unknown_time_zone_is_refused_and_the_setting_is_kept(daily):
    assert daily.subscribe("08:00 Mars/Olympus_Mons") == t("en", "daily.bad_zone", zone="Mars/Olympus_Mons")
    assert daily.storage.subscription(PLATFORM, GROUP) is None
    daily.subscribe("10:00 Europe/Rome")
    daily.subscribe("11:00 Atlantis/Capital")
    sub = daily.storage.subscription(PLATFORM, GROUP)
    assert (sub.time, sub.timezone) == ("10:00", "Europe/Rome")


def test_daily_shows_the_setting_and_daily_off_ends_it(daily):
    daily.subscribe("08:15 Europe/Rome italian")
    assert daily.text("bob", "/daily") == t("en", "daily.show", time="08:15", zone="Europe/Rome",
                                            variant=t("en", "variant.italian"))
    assert daily.text("ana", "/daily off", admin=True) == t("en", "daily.off")
    assert not daily.storage.subscription(PLATFORM, GROUP).active
    assert daily.text("bob", "/daily") == t("en", "daily.none")
    assert daily.text("ana", "/daily off", admin=True) == t("en", "daily.none")
    daily.at(DAY + dt.timedelta(days=1), 9)
    assert daily.tick() == []


# -- posting, once per chat and local day ----------------------------------------------------------------


def test_nothing_before_nine_then_exactly_one_post_and_nothing_more_that_day(daily):
    daily.subscribe()
    daily.at(DAY, 8, 59, 59)
    assert daily.tick() == []
    daily.at(DAY, 9, 0, 0)
    out = daily.tick()
    assert len(out) == 1 and len(boards(out, GROUP)) == 1
    for hour, minute in ((9, 0), (9, 10), (15, 0), (23, 59)):
        daily.at(DAY, hour, minute, 30)
        assert daily.tick() == []
    assert [p.day for p in daily.posts()] == [DAY.isoformat()]
    # The next morning, the next one.
    daily.at(DAY + dt.timedelta(days=1), 8, 59)
    assert daily.tick() == []
    daily.at(DAY + dt.timedelta(days=1), 9, 1)
    assert len(boards(daily.tick())) == 1
    assert [p.day for p in daily.posts()] == [(DAY + dt.timedelta(days=1)).isoformat(), DAY.isoformat()]


def test_a_restart_the_same_day_posts_nothing_again(daily):
    daily.subscribe()
    daily.at(DAY, 9, 5)
    assert len(boards(daily.tick())) == 1
    daily.at(DAY, 9, 6)
    daily.restart()
    assert daily.tick() == []
    daily.at(DAY, 18)
    daily.restart()
    assert daily.tick() == []
    assert len(daily.posts()) == 1


def test_a_post_missed_while_the_bot_was_down_is_made_once_at_start_up(daily):
    daily.subscribe()
    daily.at(DAY, 8, 30)
    assert daily.tick() == []
    daily.at(DAY, 11)                     # down from 08:30 to 11:00
    daily.restart()
    # The start-up knows there is work due now (the delivery task runs it at once).
    assert daily.service.next_wakeup(PLATFORM) <= daily.now[0]
    out = daily.tick()
    assert len(boards(out)) == 1
    assert daily.posts()[0].day == DAY.isoformat()
    assert daily.tick() == []
    assert daily.service.next_wakeup(PLATFORM) == local(DAY + dt.timedelta(days=1), 9)


def test_several_days_down_posts_only_todays_puzzle(daily):
    daily.subscribe()
    daily.at(DAY, 9)
    first = boards(daily.tick())
    assert len(first) == 1
    today = DAY + dt.timedelta(days=3)
    daily.at(today, 10)
    daily.restart()
    out = daily.tick()
    assert len(boards(out)) == 1
    assert [p.day for p in daily.posts()] == [today.isoformat(), DAY.isoformat()]
    assert daily.tick() == []


def test_several_days_down_before_the_first_post_posts_only_today(daily):
    daily.subscribe()
    daily.at(DAY + dt.timedelta(days=4), 12)
    daily.restart()
    out = daily.tick()
    assert len(out) == 1 and len(boards(out)) == 1         # no "yesterday" message: there was none
    assert [p.day for p in daily.posts()] == [(DAY + dt.timedelta(days=4)).isoformat()]


def tick_at_once(daily: Daily, services: list[GameService]) -> list[list[Outgoing]]:
    """Every service ticks in its own thread, released together."""
    barrier = threading.Barrier(len(services))
    results: list[list[Outgoing]] = [[] for _ in services]
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            barrier.wait()
            results[i] = daily.tick(services[i])
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(services))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert errors == []
    return results


def test_two_processes_ticking_at_once_post_once(daily):
    daily.subscribe()
    daily.subscribe(chat=OTHER)
    services = [daily.service, daily.second_process()]
    for n in range(4):
        daily.at(DAY + dt.timedelta(days=n), 9, 0, 1)
        results = tick_at_once(daily, services)
        # A process that found the database busy posts on its next tick; still once in all.
        later = [daily.tick(s) for s in services]
        everything = [o for r in results + later for o in r]
        assert sorted(o.chat_id for o in boards(everything)) == [GROUP, OTHER], n
        assert len(daily.posts(GROUP)) == len(daily.posts(OTHER)) == n + 1


@pytest.mark.parametrize("day, time", [
    (dt.date(2026, 3, 29), "09:00"),      # spring forward: 02:00 -> 03:00
    (dt.date(2026, 10, 25), "09:00"),     # fall back: 03:00 -> 02:00
    (dt.date(2026, 3, 29), "02:30"),      # a time that does not exist that day
    (dt.date(2026, 10, 25), "02:30"),     # a time that happens twice that day
])
def test_a_daylight_saving_change_neither_skips_nor_doubles_a_day(daily, day, time):
    first = day - dt.timedelta(days=1)
    daily.at(first, 0, 0)
    daily.subscribe(time)
    step = 600
    end = local(day + dt.timedelta(days=2), 0, 0)
    posted: list[tuple[str, float]] = []
    while daily.now[0] < end:
        for o in boards(daily.tick()):
            posted.append((daily.storage.puzzle_post(o.reply.post_id).day, daily.now[0]))
        daily.now[0] += step
    days = [first + dt.timedelta(days=n) for n in range(3)]
    assert [d for d, _ in posted] == [d.isoformat() for d in days]
    hour, minute = map(int, time.split(":"))
    for (_, at), d in zip(posted, days, strict=True):
        seen = dt.datetime.fromtimestamp(at, MADRID)
        assert seen.date() == d
        due = dt.datetime(d.year, d.month, d.day, hour, minute, tzinfo=MADRID).timestamp()
        assert due <= at < due + step


def test_subscribing_after_the_time_posts_the_first_puzzle_the_next_day(daily):
    daily.at(DAY, 10)
    daily.subscribe()
    for hour in (10, 14, 23):
        daily.at(DAY, hour, 30)
        assert daily.tick() == []
    daily.at(DAY + dt.timedelta(days=1), 9)
    assert len(boards(daily.tick())) == 1
    assert daily.posts()[0].day == (DAY + dt.timedelta(days=1)).isoformat()


def test_a_later_time_chosen_before_it_is_due_posts_that_day(daily):
    daily.subscribe()                      # 08:00: due at 09:00
    daily.at(DAY, 8, 30)
    daily.subscribe("12:00")
    daily.at(DAY, 9, 30)
    assert daily.tick() == []
    daily.at(DAY, 12)
    assert len(boards(daily.tick())) == 1


def test_each_chat_is_posted_in_its_own_time_zone(daily):
    daily.subscribe("09:00 Europe/Madrid")
    daily.subscribe("09:00 America/New_York", chat=OTHER)
    daily.at(DAY, 9)
    assert [o.chat_id for o in boards(daily.tick())] == [GROUP]
    daily.at(DAY, 9, 0, zone=ZoneInfo("America/New_York"))
    assert [o.chat_id for o in boards(daily.tick())] == [OTHER]
    assert daily.posts(OTHER)[0].day == DAY.isoformat()


# -- the post ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang, white, black", [
    ("en", t("en", "puzzle.to_win.W"), t("en", "puzzle.to_win.B")),
    ("es", "juegan las blancas y ganan", "juegan las negras y ganan"),
    ("it", "il Bianco muove e vince", "il Nero muove e vince"),
])
def test_the_post_is_the_board_with_its_side_to_win_in_the_chats_language_and_its_buttons(daily, lang, white,
                                                                                          black):
    if lang != "en":
        daily.say("ana", f"/lang {lang}", admin=True)
    daily.subscribe("italian")
    daily.at(DAY, 9)
    out = daily.tick()
    assert len(out) == 1
    reply = out[0].reply
    post = daily.posts()[0]
    assert reply.post_id == post.id
    assert reply.image is not None and reply.image.startswith(PNG)
    p = puzzle(post)
    pos = Position.from_fen("italian", p["fen"])
    side = white if pos.turn == "W" else black
    assert side.lower() in reply.text.lower()
    assert (black if pos.turn == "W" else white).lower() not in reply.text.lower()
    # One button per piece that can move, then the hint.
    starts = sorted({m.start for m in pos.legal_moves()})
    assert labels(reply) == [str(s) for s in starts] + [t(lang, "button.hint")]
    assert actions(reply) == [f"zs:{post.id}:0:{s}" for s in starts] + [f"zh:{post.id}:0"]
    assert not reply.private


def _rows_of_numbers(board_text: str) -> list[set[int]]:
    return [{int(cell) for cell in line.split() if cell.isdigit()} for line in board_text.splitlines()]


@pytest.mark.parametrize("turn", ["W", "B"])
def test_the_post_shows_the_side_to_move_at_the_bottom(daily, turn):
    """Italian squares are numbered from Black's side: row r from the top holds 4r+1..4r+4 with
    White at the bottom, and the reverse when the board is turned for Black."""
    puzzles = bank.load("italian")
    day = DAY
    while Position.from_fen("italian", puzzle_of_day(puzzles, day, "italian")["fen"]).turn != turn:
        day += dt.timedelta(days=1)
    daily.at(day, 8)
    daily.subscribe("italian")
    daily.at(day, 9)
    reply = boards(daily.tick())[0].reply
    rows = _rows_of_numbers(reply.board_text)
    assert len(rows) == 8 and any(rows)
    for r, numbers in enumerate(rows):
        expected = set(range(4 * r + 1, 4 * r + 5)) if turn == "W" else set(range(29 - 4 * r, 33 - 4 * r))
        assert numbers <= expected, (r, numbers, reply.board_text)


def test_the_next_days_post_begins_with_yesterdays_solution_as_a_spoiler_and_who_solved_it(daily):
    daily.subscribe("italian")
    daily.at(DAY, 9)
    daily.tick()
    first = daily.posts()[0]
    line = " ".join(puzzle(first)["solution"])
    daily.say("ana", f"/m {line}")
    daily.say("bob", f"/m {line}")
    daily.at(DAY + dt.timedelta(days=1), 9)
    out = daily.tick()
    assert len(out) == 2
    yesterday, today = out[0].reply, out[1].reply
    assert yesterday.spoiler == line
    assert line not in yesterday.text                      # only behind the spoiler
    assert yesterday.post_id is None and today.post_id == daily.posts()[0].id
    assert t("en", "daily.yesterday", day=day_words("en", DAY)) in yesterday.text
    assert t("en", "daily.solved_by", names="Ana, Bob", count=2) in yesterday.text
    # A day nobody solved says so.
    daily.at(DAY + dt.timedelta(days=2), 9)
    out = daily.tick()
    assert t("en", "daily.nobody") in out[0].reply.text
    assert out[0].reply.spoiler == " ".join(puzzle(daily.posts()[1])["solution"])


def test_everyone_gets_the_same_puzzle_of_the_day_per_variant(daily):
    daily.subscribe("italian")
    daily.subscribe("09:00 Europe/Rome italian", chat=OTHER)
    daily.subscribe("spanish", chat="group-3")
    daily.at(DAY, 9)
    out = daily.tick()
    assert sorted(o.chat_id for o in boards(out)) == sorted([GROUP, OTHER, "group-3"])
    one, two, three = daily.posts(GROUP)[0], daily.posts(OTHER)[0], daily.posts("group-3")[0]
    assert one.puzzle_id == two.puzzle_id
    assert one.id != two.id                                # each chat has its own post (and solvers)
    assert three.variant == "spanish" and three.puzzle_id in {p["id"] for p in bank.load("spanish")}
    # Another day, another puzzle, still shared.
    daily.at(DAY + dt.timedelta(days=1), 9)
    daily.tick()
    assert daily.posts(GROUP)[0].puzzle_id == daily.posts(OTHER)[0].puzzle_id != one.puzzle_id


# -- answering ----------------------------------------------------------------------------------------------


def test_a_legal_move_that_is_not_the_golpe_counts_a_miss_and_may_be_tried_again(daily, golpe):
    post, p = golpe
    wrong = wrong_move(p)
    replies = daily.say("ana", f"/m {wrong}")
    # The refutation is shown: the defender's answer to the wrong move and what follows.
    line = " ".join(refutation(p, [], wrong)[:3])
    assert line and texts(replies).split("\n")[0] == t("en", "puzzle.refuted", move=wrong, line=line)
    assert all(r.private for r in replies)
    attempt = daily.storage.attempt(post.id, "ana")
    assert (attempt.misses, attempt.progress, attempt.solved_at) == (1, (), None)
    daily.say("ana", f"/m {wrong}")
    assert daily.storage.attempt(post.id, "ana").misses == 2
    assert right_text(p, p["solution"][1]) in daily.text("ana", f"/m {p['solution'][0]}")


def test_an_illegal_move_gets_the_rule_that_forbids_it_and_is_no_miss(daily, golpe):
    post, p = golpe
    move = illegal_step(p)
    text = daily.text("ana", f"/m {move}")
    assert text.startswith(t("en", "err.illegal_step", move=move))
    attempt = daily.storage.attempt(post.id, "ana")
    assert attempt is None or attempt.misses == 0


def test_the_hint_names_the_piece_that_moves_and_is_counted(daily, golpe):
    post, p = golpe
    assert daily.text("ana", "/hint") == t("en", "puzzle.hint", square=start_square(p))
    assert daily.storage.attempt(post.id, "ana").hints == 1
    # The hint button of the post does the same, for the next piece once the line has moved on.
    daily.say("ana", f"/m {p['solution'][0]}")
    replies = daily.press("ana", f"zh:{post.id}:2")
    assert texts(replies) == t("en", "puzzle.hint", square=start_square(p, 2))
    assert replies[0].private
    assert daily.storage.attempt(post.id, "ana").hints == 2


def test_a_right_move_is_answered_with_the_forced_reply_until_the_golpe_is_complete(daily, golpe):
    post, p = golpe
    line = p["solution"]
    first = daily.say("ana", f"/m {line[0]}")
    assert len(first) == 1
    assert first[0].text == right_text(p, line[1])
    assert first[0].image.startswith(PNG) and first[0].post_id == post.id and first[0].private
    assert daily.storage.attempt(post.id, "ana").progress == tuple(line[:2])
    second = daily.say("ana", f"/m {line[2]}")
    assert second[0].text == right_text(p, line[3])
    # The buttons of the new board are for the position after the reply.
    assert all(a.startswith((f"zs:{post.id}:4:", f"zh:{post.id}:4", f"zg:{post.id}")) for a in actions(second[0]))
    done = daily.say("ana", f"/m {line[4]}")
    assert daily.storage.attempt(post.id, "ana").solved_at == daily.now[0]
    public = [r for r in done if not r.private]
    assert [r.text for r in public] == [t("en", "puzzle.first", name="Ana", day=day_words("en", post.day),
                                          streak=t("en", "streak.one"))]
    assert daily.text("ana", f"/m {line[0]}") == t("en", "puzzle.already")


def test_the_whole_line_typed_at_once_solves_it_with_or_without_the_replies(daily, golpe):
    post, p = golpe
    line = p["solution"]
    replies = daily.say("ana", "/m " + " ".join(line))
    assert any(not r.private and "Ana" in r.text for r in replies)
    solvers_only = " ".join(line[0::2])
    daily.say("bob", "/m " + solvers_only)
    assert daily.storage.attempt(post.id, "bob").solved_at is not None


def test_every_move_that_reaches_the_same_result_is_accepted_at_a_later_turn(daily):
    """The solution is a tree: where the solver's capture may land on two squares (a Spanish
    flying king), both are right (issue 17: otherwise one move only wins at every turn)."""
    puzzles = bank.load("spanish")
    day = dt.date(2026, 6, 1)
    for _ in range(400):
        p = puzzle_of_day(puzzles, day, "spanish")
        if len(p["solution"]) < 3:
            day += dt.timedelta(days=1)
            continue
        node = p["tree"][p["solution"][0]][p["solution"][1]]
        if len(node) >= 2:
            break
        day += dt.timedelta(days=1)
    else:
        raise AssertionError("no puzzle with two continuations")
    other = next(m for m in node if m != p["solution"][2])
    daily.at(day, 8)
    daily.subscribe("spanish")
    daily.at(day, 9)
    daily.tick()
    post = daily.posts()[0]
    assert post.puzzle_id == p["id"]
    daily.say("ana", f"/m {p['solution'][0]}")
    replies = daily.say("ana", f"/m {other}")
    assert t("en", "puzzle.wrong", move=other) not in texts(replies)
    attempt = daily.storage.attempt(post.id, "ana")
    assert attempt.misses == 0 and other in attempt.progress
    if not node[other]:
        assert attempt.solved_at is not None


def test_a_bare_move_replying_to_the_post_answers_it(daily, golpe):
    post, p = golpe
    # Without a reply a bare move in a group is no answer (no game here): privacy-mode chats
    # only show the bot its commands and replies to it.
    assert daily.say("ana", p["solution"][0]) == []
    daily.service.remember_board(PLATFORM, GROUP, "777", None, post.id)
    replies = daily.say("ana", p["solution"][0], reply_to="777")
    assert texts(replies) == right_text(p, p["solution"][1])
    replies = daily.say("ana", f"{p['solution'][2]} {p['solution'][3]} {p['solution'][4]}", reply_to="777")
    assert daily.storage.attempt(post.id, "ana").solved_at is not None
    assert any(not r.private for r in replies)


def _play_by_buttons(daily: Daily, user: str, post_id: int, step: int, move: str, **kw: Any) -> list[Reply]:
    """Touch the piece, then its square (and the path, when several captures end there)."""
    squares = [int(s) for s in move.replace("x", "-").split("-")]
    board = daily.press(user, f"zs:{post_id}:{step}:{squares[0]}", **kw)
    assert len(board) == 1 and board[0].image.startswith(PNG)
    target = f"zd:{post_id}:{step}:{squares[0]}:{squares[-1]}"
    assert target in actions(board[0])
    replies = daily.press(user, target, **kw)
    paths = [b for r in replies for row in r.buttons for b in row if b.action.startswith(f"zm:{post_id}:")]
    if paths:
        chosen = next(b for b in paths if b.label.endswith(move))
        replies = daily.press(user, chosen.action, **kw)
    return replies


def test_the_buttons_play_the_golpe(daily, golpe):
    post, p = golpe
    line = p["solution"]
    replies = _play_by_buttons(daily, "ana", post.id, 0, line[0])
    assert texts(replies) == right_text(p, line[1])
    assert daily.storage.attempt(post.id, "ana").progress == tuple(line[:2])
    _play_by_buttons(daily, "ana", post.id, 2, line[2])
    done = _play_by_buttons(daily, "ana", post.id, 4, line[4])
    assert daily.storage.attempt(post.id, "ana").solved_at is not None
    assert any(not r.private and "Ana" in r.text for r in done)


def test_a_button_of_the_shared_post_shows_each_user_their_own_position(daily, golpe):
    post, p = golpe
    daily.say("ana", f"/m {p['solution'][0]}")
    # Ana presses a piece on the post (step 0) after she moved on: she gets her own board.
    replies = daily.press("ana", f"zs:{post.id}:0:{start_square(p)}")
    assert replies[0].private and replies[0].image.startswith(PNG)
    assert all(a.startswith((f"zs:{post.id}:2:", f"zh:{post.id}:2", f"zg:{post.id}")) for a in actions(replies[0]))
    # Bob has not started: the same press selects the piece for him.
    replies = daily.press("bob", f"zs:{post.id}:0:{start_square(p)}")
    assert any(a.startswith(f"zd:{post.id}:0:{start_square(p)}:") for a in actions(replies[0]))


def test_the_first_solver_is_announced_and_later_ones_are_answered_privately(daily, golpe):
    post, p = golpe
    line = " ".join(p["solution"])
    first = daily.say("ana", f"/m {line}")
    public = [r for r in first if not r.private]
    assert len(public) == 1 and "Ana" in public[0].text
    assert daily.storage.puzzle_post(post.id).first_solver_id == "ana"
    second = daily.say("bob", f"/m {line}")
    assert second and all(r.private for r in second)
    assert [r.reaction for r in second] == ["🎉"]
    assert second[0].text.startswith(
        t("en", "puzzle.solved", ordinal=t("en", "ordinal.2"), streak=t("en", "streak.one")))
    third = daily.say("eve", f"/m {line}")
    assert all(r.private for r in third) and "3" in third[0].text
    assert daily.storage.puzzle_post(post.id).first_solver_id == "ana"


def test_in_a_chat_without_private_answers_the_first_solver_gets_only_the_announcement(daily, golpe):
    post, p = golpe
    replies = daily.say("ana", "/m " + " ".join(p["solution"]), can_whisper=False, private_link=TG_LINK)
    # The announcement for everyone; her themes and rating change wait in her private chat.
    assert [r.private for r in replies] == [False, True] and replies[1].start_payload
    later = daily.say("bob", "/m " + " ".join(p["solution"]), can_whisper=False, private_link=TG_LINK)
    # The later solver's answer is a reaction where nothing can be shown to one member alone.
    assert [(r.private, r.reaction) for r in later] == [(True, "🎉")]


def test_solving_on_consecutive_days_makes_a_streak(daily):
    daily.subscribe("italian")
    # Day 3 has no post (the bot was down): it breaks nothing.
    for n, expected in ((0, t("en", "streak.one")), (1, t("en", "streak.many", n=2)),
                        (2, t("en", "streak.many", n=3)), (4, t("en", "streak.many", n=4))):
        daily.at(DAY + dt.timedelta(days=n), 9, 30)
        daily.tick()
        post = daily.posts()[0]
        assert post.day == (DAY + dt.timedelta(days=n)).isoformat()
        replies = daily.say("ana", "/m " + " ".join(puzzle(post)["solution"]))
        announcement = next(r.text for r in replies if not r.private)
        assert announcement == t("en", "puzzle.first", name="Ana", day=day_words("en", post.day), streak=expected), n
    assert daily.service.puzzle_streaks(PLATFORM, "ana") == (4, 4)


def test_top_puzzles_lists_the_chats_solvers_with_their_points_a_hinted_solve_counting_half(daily):
    daily.subscribe("italian")
    assert t("en", "top.puzzles_empty") in daily.text("bob", "/top puzzles")
    for n in range(2):
        daily.at(DAY + dt.timedelta(days=n), 9, 30)
        daily.tick()
        line = " ".join(puzzle(daily.posts()[0])["solution"])
        daily.say("ana", f"/m {line}")
        if n == 1:
            daily.say("bob", "/hint")
            daily.say("bob", f"/m {line}")
    replies = daily.say("eve", "/top puzzles")
    text = replies[0].text
    assert text.startswith(t("en", "top.puzzles_title"))
    # Ana: first twice (3 + 3 each); Bob: second with a hint ((3 + 2) / 2).
    assert "1. Ana — points: 12, solved: 2, streak: 2" in text
    assert "2. Bob — points: 2.5, solved: 1, streak: 1" in text
    assert "Eve" not in text
    assert replies[0].image is not None and replies[0].image.startswith(PNG)


def test_top_puzzles_rewards_clean_and_early_solves_charges_misses_and_breaks_ties_by_time(daily):
    daily.subscribe("italian")
    daily.at(DAY, 9, 0)
    daily.tick()
    p = puzzle(daily.posts()[0])
    line = " ".join(p["solution"])
    for _ in range(3):
        daily.say("abe", f"/m {wrong_move(p)}")
    for minute, user in enumerate(("zoe", "bob", "cid", "abe"), 1):
        daily.at(DAY, 9, minute)
        daily.say(user, f"/m {line}")
    # Zoe first, clean: 3 + 3; Bob second: 3 + 2; Cid third: 3 + 1; Abe fourth after 3 misses: at least 1.
    # The next day Amy is first and clean too, but an hour after the post: Zoe was quicker.
    daily.at(DAY + dt.timedelta(days=1), 9, 0)
    daily.tick()
    daily.at(DAY + dt.timedelta(days=1), 10, 0)
    daily.say("amy", "/m " + " ".join(puzzle(daily.posts()[0])["solution"]))
    rows = daily.service.puzzle_leaderboard(PLATFORM, GROUP)
    assert [(r["name"], r["points"]) for r in rows] == [("Zoe", 6.0), ("Amy", 6.0), ("Bob", 5.0), ("Cid", 4.0),
                                                        ("Abe", 1.0)]
    assert t("en", "help.points") in daily.text("ana", "/help")


def test_a_day_the_bot_never_posted_breaks_no_streak_but_a_posted_day_unsolved_does(daily):
    daily.subscribe("italian")
    for n in (0, 1, 3):                                 # day 2: the bot was down, nothing posted
        daily.at(DAY + dt.timedelta(days=n), 9, 30)
        daily.tick()
        daily.say("ana", "/m " + " ".join(puzzle(daily.posts()[0])["solution"]))
    assert daily.service.puzzle_streaks(PLATFORM, "ana") == (3, 3)
    daily.at(DAY + dt.timedelta(days=4), 9, 30)        # posted, and Ana has all day to solve it
    daily.tick()
    assert daily.service.puzzle_streaks(PLATFORM, "ana") == (3, 3)
    daily.at(DAY + dt.timedelta(days=5), 9, 30)        # day 4 posted and not solved: the run ends
    daily.tick()
    daily.say("ana", "/m " + " ".join(puzzle(daily.posts()[0])["solution"]))
    assert daily.service.puzzle_streaks(PLATFORM, "ana") == (1, 3)


# -- a chat that is gone ------------------------------------------------------------------------------------


def test_a_daily_post_that_cannot_be_delivered_unsubscribes_the_chat_and_nothing_else_breaks(daily):
    daily.subscribe()
    daily.subscribe(chat=OTHER)
    daily.say("ana", "/new italian white")
    daily.say("bob", "/accept #1")
    game = daily.storage.game(1)
    assert game is not None and game.status == "active"
    daily.at(DAY, 9)
    assert daily.service.run_due(PLATFORM) >= 2
    items = daily.service.pending_messages(PLATFORM)
    gone = [i for i in items if i.chat_id == GROUP and i.reply.post_id is not None]
    assert len(gone) == 1
    for item in items:
        if item.chat_id == GROUP:
            daily.service.message_failed(item.id, "Forbidden: bot was kicked from the group chat", permanent=True)
        else:
            assert daily.service.message_sent(item.id)
    assert not daily.storage.subscription(PLATFORM, GROUP).active
    assert daily.storage.subscription(PLATFORM, OTHER).active
    assert daily.storage.outbox_message(gone[0].id).status == "dropped"
    assert daily.storage.game(1).status == "active"             # games stay: players may come back
    daily.at(DAY + dt.timedelta(days=1), 9)
    out = daily.tick()
    assert {o.chat_id for o in boards(out)} == {OTHER}
    assert not [o for o in out if o.chat_id == GROUP and o.reply.spoiler]      # no "yesterday" either
    assert len(daily.posts(GROUP)) == 1 and len(daily.posts(OTHER)) == 2
    # The chat can subscribe again when it wants.
    daily.subscribe()
    assert daily.storage.subscription(PLATFORM, GROUP).active


def test_chat_gone_for_a_chat_without_a_subscription_is_harmless(daily):
    daily.service.chat_gone(PLATFORM, "nowhere")
    daily.subscribe()
    daily.service.chat_gone(PLATFORM, GROUP)
    daily.service.chat_gone(PLATFORM, GROUP)
    assert not daily.storage.subscription(PLATFORM, GROUP).active


# -- /puzzle, for one person -----------------------------------------------------------------------------


def test_puzzle_gives_a_personal_puzzle_shown_to_the_one_who_asked(daily):
    replies = daily.say("ana", "/puzzle spanish")
    assert len(replies) == 1
    reply = replies[0]
    assert reply.private and reply.image.startswith(PNG) and reply.post_id is not None
    post = daily.storage.puzzle_post(reply.post_id)
    assert (post.kind, post.user_id, post.variant) == ("personal", "ana", "spanish")
    p = puzzle(post)
    assert f"#{post.id}" in reply.text
    assert actions(reply)[-2:] == [f"zh:{post.id}:0", f"zg:{post.id}"]
    # The owner answers it with /m; it is not the daily post.
    right = daily.say("ana", f"/m {p['solution'][0]}")
    assert right[0].text == right_text(p, p["solution"][1]) and right[0].private
    done = daily.say("ana", "/m " + " ".join(p["solution"][2:]))
    assert all(r.private for r in done)
    assert done[0].text.startswith(t("en", "puzzle.solved_personal", line=" ".join(p["solution"])))
    # Another /puzzle is another puzzle.
    again = daily.say("ana", "/puzzle spanish")[0]
    assert daily.storage.puzzle_post(again.post_id).puzzle_id != post.puzzle_id


def test_puzzle_in_a_private_chat_is_not_a_whisper(daily):
    reply = daily.say("ana", "/puzzle", chat="ana-dm", kind="private", admin=True)[0]
    assert not reply.private and reply.image is not None
    assert daily.storage.puzzle_post(reply.post_id).variant == "italian"


def test_puzzle_in_a_group_without_private_answers_links_to_the_private_chat(daily):
    replies = daily.say("ana", "/puzzle italian", can_whisper=False, private_link=TG_LINK)
    assert len(replies) == 1 and replies[0].image is None
    post = daily.storage.personal_posts(PLATFORM, "ana", 1)[0]
    payload = signed_payload(replies[0].text, post.id)
    link = f"https://t.me/Bot?start={payload}"
    assert replies[0].text == t("en", "puzzle.in_private", name="Ana", link=link)
    # The link opens it in the private chat.
    shown = daily.say("ana", f"/start {payload}", chat="ana-dm", kind="private", admin=True)
    assert len(shown) == 1
    assert shown[0].post_id == post.id and shown[0].image.startswith(PNG)
    assert f"zh:{post.id}:0" in actions(shown[0])
    # Answered there with the buttons of that board (one's own chat: the board is edited).
    p = puzzle(post)
    replies = _play_by_buttons(daily, "ana", post.id, 0, p["solution"][0], chat="ana-dm", kind="private", admin=True)
    assert texts(replies) == right_text(p, p["solution"][1])
    assert replies[0].replaces_board and not replies[0].private
    # Opened again later, it resumes where she is.
    again = daily.say("ana", f"/start {payload}", chat="ana-dm", kind="private", admin=True)
    assert all(a.startswith((f"zs:{post.id}:2:", f"zh:{post.id}:2", f"zg:{post.id}")) for a in actions(again[0]))


def test_a_personal_puzzle_opened_in_the_private_chat_is_answered_there_with_a_typed_move(daily):
    text = texts(daily.say("ana", "/puzzle italian", can_whisper=False, private_link=TG_LINK))
    post = daily.storage.personal_posts(PLATFORM, "ana", 1)[0]
    daily.say("ana", f"/start {signed_payload(text, post.id)}", chat="ana-dm", kind="private", admin=True)
    p = puzzle(post)
    assert daily.text("ana", f"/m {p['solution'][0]}", chat="ana-dm", kind="private", admin=True) == right_text(
        p, p["solution"][1])


def test_nobody_else_can_answer_someones_personal_puzzle(daily):
    reply = daily.say("ana", "/puzzle italian")[0]
    post = daily.storage.puzzle_post(reply.post_id)
    p = puzzle(post)
    not_yours = t("en", "puzzle.not_yours")
    # Ana's link is hers: Bob following it, or typing an unsigned one, is refused.
    invalid = t("en", "puzzle.link_invalid")
    assert daily.text("bob", f"/start {reply.start_payload}", chat="bob-dm", kind="private", admin=True) == invalid
    assert daily.text("bob", f"/start p{post.id}", chat="bob-dm", kind="private", admin=True) == invalid
    assert texts(daily.press("bob", f"zs:{post.id}:0:{start_square(p)}")) == not_yours
    assert texts(daily.press("bob", f"zh:{post.id}:0")) == not_yours
    assert daily.text("bob", f"/hint #{post.id}") == not_yours
    daily.service.remember_board(PLATFORM, GROUP, "555", None, post.id)
    assert daily.text("bob", "/m " + " ".join(p["solution"]), reply_to="555") == not_yours
    assert daily.storage.attempt(post.id, "bob") is None
    assert daily.text("bob", "/start p99999", chat="bob-dm", kind="private", admin=True) == t("en", "puzzle.unknown")


def test_a_chat_subscribed_by_a_spanish_speaker_gets_its_post_in_spanish(daily):
    answer = daily.subscribe(language="es")
    assert answer == t("es", "daily.on", time="09:00", zone="Europe/Madrid", variant=variant_name("es", "spanish"))
    assert daily.storage.subscription(PLATFORM, GROUP).variant == "spanish"
    daily.at(DAY, 9)
    reply = boards(daily.tick())[0].reply
    pos = Position.from_fen("spanish", puzzle(daily.posts()[0])["fen"])
    assert t("es", f"puzzle.to_win.{pos.turn}") in reply.text


def test_a_daily_post_opened_in_the_private_chat_is_answered_there_with_a_typed_move(daily, golpe):
    post, p = golpe
    shown = open_in_private(daily, "eve", post)
    assert shown[0].post_id == post.id
    assert daily.text("eve", f"/m {p['solution'][0]}", chat="eve-dm", kind="private", admin=True) == right_text(
        p, p["solution"][1])


def test_a_streak_is_kept_until_the_chats_local_day_is_over(daily):
    la = ZoneInfo("America/Los_Angeles")
    daily.at(DAY, 8, zone=la)
    daily.subscribe("09:00 America/Los_Angeles italian")
    daily.at(DAY, 9, 30, zone=la)
    daily.tick()
    daily.say("ana", "/m " + " ".join(puzzle(daily.posts()[0])["solution"]))
    assert daily.service.puzzle_streaks(PLATFORM, "ana") == (1, 1)
    # The next evening in Los Angeles (already two days later in UTC), the day's puzzle unsolved yet.
    daily.at(DAY + dt.timedelta(days=1), 20, zone=la)
    daily.tick()
    assert daily.posts()[0].day == (DAY + dt.timedelta(days=1)).isoformat()
    assert daily.service.puzzle_streaks(PLATFORM, "ana") == (1, 1)


# -- review fixes ------------------------------------------------------------------------------------


def test_yesterdays_post_cannot_be_answered_once_its_solution_is_out(daily):
    daily.subscribe("italian")
    daily.at(DAY, 9)
    daily.tick()
    old = daily.posts()[0]
    p = puzzle(old)
    payload = link_from_group(daily, "ana", old)
    daily.at(DAY + dt.timedelta(days=1), 9)
    daily.tick()
    assert daily.posts()[0].id != old.id
    over = t("en", "puzzle.over", day=day_words("en", old.day))
    # Every way to reach the old post: a button of its board, /hint #id, the private-chat link.
    assert texts(daily.press("ana", f"zs:{old.id}:0:{start_square(p)}")) == over
    assert texts(daily.say("ana", f"/hint #{old.id}")) == over
    assert texts(daily.say("ana", f"/start {payload}", chat="ana-dm", kind="private")) == over
    assert daily.storage.attempt(old.id, "ana") is None
    assert daily.storage.puzzle_post(old.id).first_solver_id is None
    # Today's post is answered as usual.
    today = daily.posts()[0]
    daily.say("ana", f"/m {' '.join(puzzle(today)['solution'])}")
    assert daily.storage.attempt(today.id, "ana").solved_at is not None
    assert daily.storage.attempt(old.id, "ana") is None
    assert texts(daily.say("bob", f"/start p{old.id}", chat="bob-dm", kind="private")) == t("en", "puzzle.link_invalid")


def second_turn_wrong_move(p: dict[str, Any]) -> str:
    """A legal move for the solver after the key move and its forced reply that is not the golpe."""
    line = p["solution"]
    pos = Position.from_fen(p["variant"], p["fen"])
    pos = pos.play(pos.parse_move(line[0]))
    pos = pos.play(pos.parse_move(line[1]))
    node = p["tree"][line[0]][line[1]]
    return next(str(m) for m in pos.legal_moves() if str(m) not in node)


def test_a_wrong_move_after_right_ones_is_the_one_named(daily, golpe):
    post, p = golpe
    line = p["solution"]
    assert len(line) >= 3
    wrong = second_turn_wrong_move(p)
    expected = "\n".join([t("en", "puzzle.right_so_far", moves=" ".join(line[:2])),
                          t("en", "puzzle.refuted", move=wrong,
                            line=" ".join(refutation(p, line[:2], wrong)[:3]))])
    # The bot's reply left out, typed in, and with commas: the wrong move is the one named.
    assert daily.text("ana", f"/m {line[0]} {wrong}").startswith(expected)
    assert daily.text("bob", f"/m {line[0]} {line[1]} {wrong}").startswith(expected + "\n")
    assert daily.text("cid", f"/m {line[0]}, {wrong}").startswith(expected + "\n")
    assert daily.storage.attempt(post.id, "ana").misses == 1


def test_one_user_answering_in_two_places_at_once_is_rated_once(daily, golpe):
    """The group and the user's private chat (here in two processes) answer at the same moment:
    one solve, one rating update for the user and for the puzzle."""
    post, p = golpe
    line = " ".join(p["solution"])
    other = daily.second_process()
    users = ["ana", "bob", "cid", "dan"]
    for user in users:
        assert open_in_private(daily, user, post)[0].post_id == post.id
        barrier = threading.Barrier(2)
        errors: list[BaseException] = []

        def answer(service: GameService, user: str = user, barrier: threading.Barrier = barrier,
                   errors: list[BaseException] = errors, **kw: Any) -> None:
            try:
                barrier.wait()
                daily.check(service.handle(daily.event(user, text=f"/m {line}", **kw)))
            except BaseException as err:  # noqa: BLE001 - reported below
                errors.append(err)

        threads = [threading.Thread(target=answer, args=(daily.service,)),
                   threading.Thread(target=answer, args=(other,),
                                    kwargs={"chat": f"{user}-dm", "kind": "private"})]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not errors
        attempt = daily.storage.attempt(post.id, user)
        assert attempt.solved_at is not None and attempt.rated_score == 1.0
        assert len(daily.storage.rating_history(PLATFORM, user, "puzzles")) == 1
    assert len(daily.storage.rating_history("*", f"puzzle:{post.puzzle_id}", "puzzles")) == len(users)


def test_a_chat_subscribed_through_another_process_is_posted_by_this_one(daily):
    daily.at(DAY, 8)
    assert daily.tick() == []                      # no subscription yet, and this process knows it
    other = daily.second_process()
    daily.check(other.handle(daily.event("ana", text="/daily on italian", admin=True)))
    daily.at(DAY, 9)
    out = daily.tick()
    assert len(boards(out)) == 1 and len(daily.posts()) == 1


# -- issue 21, item 5: a day missed by a restart on the next local day ----------------------------------------


def test_a_day_missed_while_down_overnight_is_posted_at_start_up_the_next_morning(daily):
    """Down from 08:01 on day 1 to 08:30 on day 2 (a 09:00 subscription): day 1 is posted at
    start-up, once; day 2 at 09:00 as usual."""
    daily.at(DAY - dt.timedelta(days=1), 12)
    daily.subscribe()
    daily.at(DAY, 8, 1)
    assert daily.tick() == []
    daily.at(DAY + dt.timedelta(days=1), 8, 30)
    daily.restart()
    assert daily.service.next_wakeup(PLATFORM) <= daily.now[0]
    out = daily.tick()
    assert len(boards(out)) == 1
    assert [p.day for p in daily.posts()] == [DAY.isoformat()]
    assert daily.tick() == []
    assert daily.service.next_wakeup(PLATFORM) == local(DAY + dt.timedelta(days=1), 9)
    daily.at(DAY + dt.timedelta(days=1), 9)
    assert len(boards(daily.tick())) == 1
    assert [p.day for p in daily.posts()] == [(DAY + dt.timedelta(days=1)).isoformat(), DAY.isoformat()]


def test_a_2359_subscription_keeps_its_day_through_a_70_second_restart(daily):
    daily.at(DAY, 12)
    daily.subscribe("23:59")
    daily.at(DAY, 23, 58, 50)
    assert daily.tick() == []
    daily.at(DAY + dt.timedelta(days=1), 0, 0, 0)        # back 70 s later: the next local day
    daily.restart()
    assert len(boards(daily.tick())) == 1
    assert [p.day for p in daily.posts()] == [DAY.isoformat()]
    daily.at(DAY + dt.timedelta(days=1), 12)
    assert daily.tick() == []


def test_days_down_before_the_posts_time_post_only_the_most_recent_missed_day(daily):
    daily.subscribe()
    daily.at(DAY, 9)
    assert len(boards(daily.tick())) == 1
    daily.at(DAY + dt.timedelta(days=5), 7)              # five days later, before 09:00
    daily.restart()
    assert len(boards(daily.tick())) == 1
    assert [p.day for p in daily.posts()] == [(DAY + dt.timedelta(days=4)).isoformat(), DAY.isoformat()]
    assert daily.tick() == []


# -- issue 21, item 1: only members of a post's chat answer it ---------------------------------------------

ATTACKER_NAME = "🏆 FREE CRYPTO at evil.example, click now!!! " * 2


def attack_paths(post: Any, p: dict[str, Any], forged: str) -> list[tuple[str, dict[str, Any]]]:
    """Every way an outsider might reach a post: (text or action, where)."""
    pos = Position.from_fen(p["variant"], p["fen"])
    key = pos.parse_move(p["solution"][0])
    index = pos.legal_moves().index(key)
    line = " ".join(p["solution"])
    other = {"chat": OTHER}
    dm = {"chat": "eve-dm", "kind": "private", "admin": True}
    buttons = [f"zs:{post.id}:0:{key.start}", f"zd:{post.id}:0:{key.start}:{key.end}",
               f"zm:{post.id}:0:{index}", f"zb:{post.id}:0", f"zh:{post.id}:0"]
    out: list[tuple[str, dict[str, Any]]] = []
    for where in (other, dm):
        out += [(b, {"action": True, **where}) for b in buttons]
        out += [(f"/m #{post.id} {line}", where), (f"/hint #{post.id}", where),
                (f"/m #{post.id} {p['solution'][0]}", where)]
    out += [(f"/start p{post.id}", dm), (f"/start p{post.id}_{'A' * 16}", dm), (f"/start {forged}", dm),
            (f"/m {line}", dm)]
    return out


def test_nobody_outside_a_posts_chat_can_answer_it_or_get_a_name_posted_there(daily, golpe):
    """Eve is in another group and in her private chat with the bot: hand-made buttons, #id
    answers, unsigned, forged and someone else's links: nothing is accepted and nothing written."""
    from dataclasses import replace

    post, p = golpe
    anas_link = link_from_group(daily, "ana", post)           # handed to Ana, not to Eve
    before = daily.storage.dump()
    accepted = 0
    for what, where in attack_paths(post, p, anas_link):
        where = dict(where)
        is_action = where.pop("action", False)
        event = daily.event("eve", action=what, **where) if is_action else daily.event("eve", text=what, **where)
        replies = daily.check(daily.service.handle(replace(event, user_name=ATTACKER_NAME)))
        said = texts(replies)
        if any(r.image is not None for r in replies) or t("en", "puzzle.right", reply="", side="")[:6] in said:
            accepted += 1
        refusals = (t("en", "puzzle.not_member"), t("en", "puzzle.link_invalid"), t("en", "puzzle.none"),
                    t("en", "game.unknown", id=post.id), t("en", "game.none"))  # /m #id names a game
        assert said in refusals, (what, said)
    assert accepted == 0
    assert daily.storage.attempt(post.id, "eve") is None
    assert daily.storage.puzzle_post(post.id).first_solver_id is None
    after = daily.storage.dump()
    # Only what every event writes (the chats it came from, the user's name) may differ.
    changed = [name for name in before if name not in ("players", "chats") and before[name] != after[name]]
    assert changed == []
    assert not any(ATTACKER_NAME[:20] in row.payload for row in daily.storage.find_outbox())
    # Ana's own link works for her, and the group hears her name as the group knows it.
    shown = daily.say("ana", f"/start {anas_link}", chat="ana-dm", kind="private", admin=True)
    assert shown[0].post_id == post.id and shown[0].image is not None
    solve = daily.event("ana", text="/m " + " ".join(p["solution"]), chat="ana-dm", kind="private", admin=True)
    daily.check(daily.service.handle(replace(solve, user_name="Ana (renamed in private)")))
    assert daily.storage.puzzle_post(post.id).first_solver_name == "Ana"
    announced = [o for o in daily.tick() if o.chat_id == GROUP]
    assert len(announced) == 1 and "Ana" in announced[0].reply.text and "renamed" not in announced[0].reply.text


def test_a_member_who_pressed_in_the_group_answers_from_the_private_chat_with_its_buttons(daily, golpe):
    post, p = golpe
    shown = open_in_private(daily, "bob", post)
    board = shown[0]
    assert board.start_payload is not None and board.start_payload != link_from_group(daily, "ana", post)
    replies = _play_by_buttons(daily, "bob", post.id, 0, p["solution"][0], chat="bob-dm", kind="private", admin=True)
    assert texts(replies) == right_text(p, p["solution"][1])
    # The same buttons pressed by someone who never acted in the group are refused.
    key = p["solution"][0].replace("x", "-").split("-")[0]
    refused = daily.press("eve", f"zs:{post.id}:2:{key}", chat="eve-dm", kind="private", admin=True)
    assert texts(refused) == t("en", "puzzle.not_member")
    assert daily.storage.attempt(post.id, "eve") is None


# -- issue 17: solving privately, lichess-like ------------------------------------------------------


def first_day(variant: str, fits: Any, start: dt.date = DAY, days: int = 400) -> tuple[dt.date, dict[str, Any]]:
    """The first day from ``start`` whose puzzle of ``variant`` satisfies ``fits``."""
    puzzles = bank.load(variant)
    for n in range(days):
        day = start + dt.timedelta(days=n)
        p = puzzle_of_day(puzzles, day, variant)
        if fits(p):
            return day, p
    raise AssertionError(f"no {variant} puzzle fits in {days} days")


def legal(p: dict[str, Any], move: str) -> bool:
    try:
        Position.from_fen(p["variant"], p["fen"]).parse_move(move)
    except IllegalMove:
        return False
    return True


def posted_on(daily: Daily, day: dt.date, variant: str) -> Any:
    daily.at(day, 8)
    daily.subscribe(variant)
    daily.at(day, 9, 30)
    daily.tick()
    return daily.posts()[0]


def test_an_old_personal_puzzle_does_not_capture_answers_to_the_daily_and_giving_up_closes_it(daily):
    """Issue 17, item 2: Bob's unsolved Italian /puzzle of day 1 and the Spanish daily of day 4."""
    daily.at(DAY, 8)
    daily.subscribe("spanish")
    mine = daily.say("bob", "/puzzle italian")[0]
    personal = daily.storage.puzzle_post(mine.post_id)
    pp = puzzle(personal)
    day, dp = first_day("spanish", lambda p: not legal(pp, p["solution"][0]) and not legal(p, pp["solution"][0]),
                        start=DAY + dt.timedelta(days=3))
    daily.at(day, 9, 30)
    daily.tick()
    post = daily.posts()[0]
    assert post.puzzle_id == dp["id"]
    # His move for the daily goes to the daily, and the answer says so (its board can give up).
    board = daily.say("bob", f"/m {dp['solution'][0]}")[0]
    assert board.text.startswith(t("en", "puzzle.for_daily", day=day_words("en", post.day)))
    assert daily.storage.attempt(post.id, "bob").progress[:1] == (dp["solution"][0],)
    assert f"zg:{post.id}" in actions(board)
    # A move that fits only his own puzzle goes there.
    answer = daily.text("bob", f"/m {pp['solution'][0]}")
    assert answer.startswith(t("en", "puzzle.for_personal", variant=variant_name("en", "italian"), id=personal.id))
    assert daily.storage.attempt(personal.id, "bob").progress[:1] == (pp["solution"][0],)
    # /puzzle giveup: his own puzzle's solution, and that attempt is closed.
    gave_up = daily.say("bob", "/puzzle giveup")
    assert [r.private for r in gave_up] == [True]
    assert t("en", "puzzle.gave_up", line=" ".join(pp["solution"])) in gave_up[0].text
    assert daily.text("bob", f"/hint #{personal.id}") == t("en", "puzzle.gave_up_already",
                                                            line=" ".join(pp["solution"]))
    assert daily.storage.attempt(personal.id, "bob").solved_at is None
    # The Give up button of the daily's board does the same for the daily.
    shown = daily.press("bob", f"zg:{post.id}")
    assert all(r.private for r in shown)
    assert t("en", "puzzle.gave_up", line=" ".join(dp["solution"])) in texts(shown)
    assert daily.text("bob", "/m " + " ".join(dp["solution"][2:])) == t(
        "en", "puzzle.gave_up_already", line=" ".join(dp["solution"]))
    assert daily.storage.attempt(post.id, "bob").solved_at is None


def reply_count(p: dict[str, Any]) -> int:
    """How many replies the defender has to the solver's first move."""
    pos = Position.from_fen(p["variant"], p["fen"])
    return len(pos.play(pos.parse_move(p["solution"][0])).legal_moves())


def test_the_reply_is_called_forced_only_when_it_is(daily):
    """Issue 17, item 4."""
    day, p = first_day("italian", lambda p: len(p["solution"]) >= 3 and reply_count(p) > 1)
    post = posted_on(daily, day, "italian")
    assert post.puzzle_id == p["id"]
    text = daily.text("ana", f"/m {p['solution'][0]}")
    side = "B" if Position.from_fen("italian", p["fen"]).turn == "W" else "W"
    assert text == t("en", "puzzle.right", reply=p["solution"][1], side=t("en", f"puzzle.replier.{side}"))
    assert t("en", "puzzle.right_forced", reply=p["solution"][1]) != text
    day, p = first_day("italian", lambda p: len(p["solution"]) >= 3 and reply_count(p) == 1,
                       start=day + dt.timedelta(1))
    daily.at(day, 9, 30)
    daily.tick()
    assert daily.posts()[0].puzzle_id == p["id"]
    assert daily.text("ana", f"/m {p['solution'][0]}") == t("en", "puzzle.right_forced", reply=p["solution"][1])


def test_the_step_board_draws_the_solvers_move_and_the_reply(daily, golpe):
    """Issue 17, item 3: arrows, squares and captured men, as a game's last move is drawn."""
    post, p = golpe
    line = p["solution"]
    board = daily.say("ana", f"/m {line[0]}")[0]
    start = Position.from_fen("italian", p["fen"])
    mine = start.parse_move(line[0])
    after = start.play(mine)
    reply = after.parse_move(line[1])
    pos = after.play(reply)
    from bot.service.chat import boards as drawing
    expected = drawing.png(drawing.board_view(pos, last_path=reply.path, captured=[*mine.captured, *reply.captured],
                                              flipped=not pos.white, earlier_paths=[mine.path]))
    plain = drawing.png(drawing.board_view(pos, flipped=not pos.white))
    assert board.image == expected and board.image != plain


def illegal_step_of(p: dict[str, Any], square: int) -> str | None:
    """A step the rules forbid for the man on ``square`` (e.g. backwards), if there is one."""
    pos = Position.from_fen(p["variant"], p["fen"])
    for target in range(1, pos.variant.squares + 1):
        if target == square or pos.piece_at(target) is not None:
            continue
        try:
            pos.parse_move(f"{square}-{target}")
        except IllegalMove as err:
            if err.code == ErrorCode.ILLEGAL_STEP:
                return f"{square}-{target}"
    return None


def refused_with(p: dict[str, Any], detail: Detail) -> str | None:
    """A step of the side to move that the rules refuse for ``detail`` (a man backwards), if any."""
    pos = Position.from_fen(p["variant"], p["fen"])
    for square in sorted(pos.pieces()):
        for target in range(1, pos.variant.squares + 1):
            if target == square or pos.piece_at(target) is not None:
                continue
            try:
                pos.parse_move(f"{square}-{target}")
            except IllegalMove as err:
                if err.detail == detail:
                    return f"{square}-{target}"
    return None


def test_a_man_moved_backwards_in_a_puzzle_hears_the_rule_as_in_a_game_without_the_moves(daily):
    """Issue 17, item 5 with issue 16's rule wording: the same sentence a game gives, without the
    list of possible moves that follows it there."""
    day, p = first_day("italian", lambda p: "x" not in p["solution"][0]
                       and refused_with(p, Detail.MAN_BACKWARD) is not None)
    posted_on(daily, day, "italian")
    move = refused_with(p, Detail.MAN_BACKWARD)
    text = daily.text("ana", f"/m {move}")
    assert text == t("en", "err.man_backward", move=move)
    assert p["solution"][0] not in text


def test_an_illegal_try_names_the_rule_and_never_the_solution(daily):
    """Issue 17, item 5: neither the piece's possible moves nor the compulsory capture are listed."""
    def quiet(p: dict[str, Any]) -> bool:
        return "x" not in p["solution"][0] and illegal_step_of(p, start_square(p)) is not None
    day, p = first_day("italian", quiet)
    posted_on(daily, day, "italian")
    move = illegal_step_of(p, start_square(p))
    text = daily.text("ana", f"/m {move}")
    assert text in (t("en", "err.illegal_step", move=move),
                    t("en", "err.illegal_step_king", move=move, king_rule=t("en", "rule.king_short")))
    assert p["solution"][0] not in text
    # Few golpes start with a capture (4 of 1,587 Italian ones): look far enough ahead.
    day, p = first_day("italian", lambda p: "x" in p["solution"][0], start=day + dt.timedelta(1), days=20_000)
    daily.at(day, 9, 30)
    daily.tick()
    pos = Position.from_fen("italian", p["fen"])
    step = None
    for square, piece in sorted(pos.pieces().items()):
        if piece != ("w" if pos.turn == "W" else "b"):
            continue
        for target in range(1, 33):
            if pos.piece_at(target) is None and target != square:
                try:
                    pos.parse_move(f"{square}-{target}")
                except IllegalMove as err:
                    if err.code == ErrorCode.CAPTURE_COMPULSORY:
                        step = f"{square}-{target}"
                        break
        if step:
            break
    assert step is not None
    text = daily.text("ana", f"/m {step}")
    assert text == t("en", "puzzle.rule.capture_compulsory")
    assert p["solution"][0] not in text


def test_after_a_solve_the_rating_change_the_themes_and_a_next_puzzle_button_then_the_history(daily, golpe):
    """Issue 17, item 8."""
    post, p = golpe
    replies = daily.say("ana", "/m " + " ".join(p["solution"]))
    own = next(r for r in replies if r.private)
    assert re.search(r"\(\+\d+\)", own.text), own.text               # "Puzzle rating: 1650? (+150)."
    themes = t("en", "puzzle.themes", themes="")[:-1]
    assert themes in own.text and tn("en", "theme.moves", p["tags"]["moves"]) in own.text
    assert f"zn:{post.id}" in actions(own)
    following = daily.press("ana", f"zn:{post.id}")
    assert following[0].post_id != post.id and following[0].image is not None
    new = daily.storage.puzzle_post(following[0].post_id)
    assert (new.kind, new.variant) == ("personal", "italian")
    # A wrong move on the new one, then the history: newest first, with how each went.
    daily.say("ana", f"/m {wrong_move(puzzle(new))}")
    history = daily.text("ana", "/puzzle history").split("\n")
    assert history[0] == t("en", "puzzle.history_title")
    assert t("en", "puzzle.result.failed") in history[1] and f"#{new.id}" in history[1]
    assert t("en", "puzzle.result.solved") in history[2] and day_words("en", post.day) in history[2]


def test_the_themes_after_a_solve_are_read_from_the_banks_theme_list():
    """The shipped bank names a puzzle's themes in tags.themes: each known one is worded."""
    from bot.service.chat.present_puzzles import theme_words
    for name in ("king_capture", "quiet_move", "blockade", "endgame"):
        p = next(p for v in ("italian", "spanish", "triestina") for p in bank.load(v)
                 if name in p["tags"].get("themes", []))
        assert t("es", f"theme.{name}") in theme_words("es", p), (name, p["id"])


def test_the_history_says_a_solve_after_one_miss_in_the_singular_with_the_day_in_words(daily, golpe):
    """Issue 17's /puzzle history with issue 16's plural forms and dates in words."""
    post, p = golpe
    daily.say("ana", f"/m {wrong_move(p)}")
    daily.say("ana", "/m " + " ".join(p["solution"]))
    line = daily.text("ana", "/puzzle history").split("\n")[1]
    assert tn("en", "puzzle.result.solved_misses", 1) in line and "1 miss" in line and "misses" not in line
    assert t("en", "puzzle.history_daily", day=day_words("en", post.day), variant=variant_name("en", "italian")) in line


def test_a_step_made_in_a_group_without_private_answers_goes_on_in_the_private_chat(daily, golpe):
    """Issue 17, item 1: the board of Ana's step goes to her private chat (the reply carries the
    link signed for her); her next typed move there goes on with the group's daily."""
    post, p = golpe
    line = p["solution"]
    replies = daily.say("ana", f"/m {line[0]}", can_whisper=False, private_link=TG_LINK)
    assert [(r.private, r.reaction) for r in replies] == [(True, "👍")]
    assert replies[0].image is not None and replies[0].post_id == post.id
    assert replies[0].start_payload and replies[0].start_payload.startswith(f"p{post.id}_")
    hint = daily.say("ana", "/hint", can_whisper=False, private_link=TG_LINK)
    assert [(r.private, r.reaction) for r in hint] == [(True, "🤔")] and hint[0].start_payload
    there = daily.say("ana", f"/m {line[2]}", chat="ana-dm", kind="private", admin=True)
    assert not there[0].private
    assert daily.storage.attempt(post.id, "ana").progress[:3] == tuple(line[:3])


def test_a_piece_pressed_after_giving_up_the_daily_keeps_its_solution_to_the_member(daily, golpe):
    """A member who gave up the daily in a Telegram group and then presses a piece of the post:
    the answer names the solution, so it must carry the post and the member's private-chat link
    (the adapter sends such a reply to the member alone, never to the group, even when the press
    is answered too late for an alert)."""
    post, p = golpe
    daily.press("ana", f"zg:{post.id}", can_whisper=False, private_link=TG_LINK)
    replies = daily.press("ana", f"zs:{post.id}:0:{start_square(p)}", can_whisper=False, private_link=TG_LINK)
    solution = " ".join(p["solution"])
    shown = [r for r in replies if solution in r.text]
    assert shown, texts(replies)
    assert all(r.private and r.post_id == post.id and r.start_payload for r in shown)
