"""Ratings through the game service (issue 10): rated and unrated games, the bot's own pool,
/stats, /top, rebuild equals live, the deviation of an idle player.

Everything is real: a SQLite file in tmp_path, the rules, Glicko-2, Pillow; the engine runs in
one thread (``Thinker(ThreadPoolExecutor(1))``).  Only the clock (``now``) and the colour draw
(a seeded Random) are fixed.  Users act through typed commands only.
"""

from __future__ import annotations

import io
import random
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from catalog_text import tr
from PIL import Image

from bot.i18n import LANGUAGES, t, tn
from bot.ratings import LICHESS, Outcome, Rating, new_rating, periods_between, update
from bot.rules import Position
from bot.service import ChatEvent, GameService, Reply
from bot.service.features.puzzles import puzzle_by_id
from bot.service.thinking import Thinker
from bot.storage import BOT_ID, SQLiteStore
from bot.storage.records import RatingRecord

PLATFORM = "test"
GROUP = "group-1"
GROUP2 = "group-2"
BOT_SECONDS = 0.2
SETTLE = 20.0
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
DAY = 86400.0
T0 = 1_700_000_000.0            # the `now` fixture's start (tests/service/conftest.py)


def internal_error_texts() -> list[str]:
    """The internal-error answer in every language: no reply may be it."""
    return [t(lang, "error.internal") for lang in LANGUAGES]


class Room:
    """Users of one platform talking to a real service (users are lower-case ids, shown capitalized)."""

    def __init__(self, db_path: Path, now: list[float]) -> None:
        self.now = now
        self.db_path = db_path
        self.storage = SQLiteStore(db_path)
        self.executor = ThreadPoolExecutor(1)
        self.service = GameService(self.storage, clock=lambda: self.now[0], rng=random.Random(1),
                                   thinker=Thinker(self.executor), bot_seconds=BOT_SECONDS)
        self._internal = internal_error_texts()

    def close(self) -> None:
        assert self.service.settle(SETTLE)
        self.service.close()
        self.executor.shutdown(wait=True, cancel_futures=True)
        self.storage.close()

    def say(self, user: str, text: str, chat: str = GROUP, **kw) -> list[Reply]:
        event = ChatEvent(platform=PLATFORM, chat_id=chat, user_id=user, user_name=user.capitalize(),
                          chat_kind="group", username=user, text=text, **kw)
        replies = self.service.handle(event)
        for reply in replies:
            for internal in self._internal:
                assert internal not in reply.text, reply.text
        return replies

    def text(self, user: str, text: str, chat: str = GROUP, **kw) -> str:
        return "\n".join(r.text for r in self.say(user, text, chat, **kw))

    def start(self, white: str, black: str, chat: str = GROUP) -> int:
        """``white`` challenges as white in Italian, ``black`` accepts: the game's id."""
        before = {g.id for g in self.storage.find_games(PLATFORM)}
        self.say(white, "/new italian white", chat)
        self.say(black, "/accept", chat)
        new = [g.id for g in self.storage.find_games(PLATFORM) if g.id not in before]
        assert len(new) == 1
        return new[0]

    def move(self, user: str, move: str, game_id: int, chat: str = GROUP) -> None:
        count = len(self.storage.moves(game_id))
        answer = self.text(user, f"/m #{game_id} {move}", chat)
        assert len(self.storage.moves(game_id)) == count + 1, answer

    def resign(self, user: str, game_id: int, chat: str = GROUP) -> None:
        self.say(user, f"/resign #{game_id}", chat)
        self.say(user, f"/resign #{game_id}", chat)
        assert self.storage.game(game_id).status == "finished"

    def game(self, white: str, black: str, outcome: str, chat: str = GROUP, opening: tuple[str, ...] = ("22-18",
             "11-15")) -> int:
        """A game played to its end: two moves, then 'white' (Black resigns), 'black' (White
        resigns) or 'draw' (offered and accepted).  The clock moves on 10 minutes afterwards."""
        game_id = self.start(white, black, chat)
        for i, move in enumerate(opening):
            self.move(white if i % 2 == 0 else black, move, game_id, chat)
        if outcome == "white":
            self.resign(black, game_id, chat)
        elif outcome == "black":
            self.resign(white, game_id, chat)
        else:
            assert outcome == "draw"
            self.say(white, f"/draw #{game_id}", chat)
            self.say(black, f"/draw #{game_id}", chat)
        row = self.storage.game(game_id)
        assert row.status == "finished"
        assert row.winner == {"white": "W", "black": "B", "draw": None}[outcome]
        self.now[0] += 600
        return game_id

    def rating(self, user: str, pool: str = "italian"):
        return self.storage.rating(PLATFORM, user, pool)

    def ratings_snapshot(self) -> dict[str, list[tuple]]:
        dump = self.storage.dump()
        return {"ratings": sorted(dump["ratings"]), "rating_history": sorted(dump["rating_history"])}


@pytest.fixture
def room(tmp_path: Path, now: list[float]):
    r = Room(tmp_path / "ratings.db", now)
    yield r
    r.close()


def as_rating(record) -> Rating:
    return Rating(record.rating, record.deviation, record.volatility)


def assert_png(data: bytes | None) -> Image.Image:
    assert data is not None
    assert data[:8] == PNG_MAGIC
    img = Image.open(io.BytesIO(data))
    img.verify()
    img = Image.open(io.BytesIO(data))
    assert img.format == "PNG"
    assert img.width > 50 and img.height > 50
    return img


# -- rated and unrated games -------------------------------------------------------------------------


def test_a_rated_game_moves_both_ratings(room):
    assert room.rating("ana") is None and room.rating("bob") is None
    game_id = room.game("ana", "bob", "white")
    ana, bob = room.rating("ana"), room.rating("bob")
    assert bob.rating < 1500 < ana.rating
    assert ana.games == bob.games == 1
    # Both were newcomers: exactly what Glicko-2 gives for one period between two lichess starts.
    expected_ana = update(new_rating(), [Outcome(new_rating(), 1.0)], LICHESS, periods=periods_between(None, 0))
    expected_bob = update(new_rating(), [Outcome(new_rating(), 0.0)], LICHESS, periods=periods_between(None, 0))
    assert as_rating(ana) == expected_ana
    assert as_rating(bob) == expected_bob
    assert ana.deviation < 500 and bob.deviation < 500
    finished = room.storage.game(game_id).finished_at
    assert ana.updated_at == bob.updated_at == finished
    history = room.storage.rating_history(PLATFORM, "ana", "italian")
    assert [(h.source, h.rating, h.deviation) for h in history] == [(f"game:{game_id}", ana.rating, ana.deviation)]


def test_a_draw_between_newcomers_keeps_the_rating_and_narrows_the_deviation(room):
    room.game("ana", "bob", "draw")
    ana, bob = room.rating("ana"), room.rating("bob")
    assert ana.rating == pytest.approx(1500, abs=1e-9) and bob.rating == pytest.approx(1500, abs=1e-9)
    assert ana.deviation < 500 and ana.games == bob.games == 1


def test_a_second_game_starts_from_the_first_ones_rating(room):
    room.game("ana", "bob", "white")
    first_ana, first_bob = as_rating(room.rating("ana")), as_rating(room.rating("bob"))
    t1 = room.rating("ana").updated_at
    room.game("bob", "ana", "white")          # bob (white) wins this time
    t2 = room.rating("ana").updated_at
    assert room.rating("ana").games == room.rating("bob").games == 2
    assert as_rating(room.rating("ana")) == update(first_ana, [Outcome(first_bob, 0.0)], LICHESS,
                                                   periods=periods_between(t1, t2))
    assert as_rating(room.rating("bob")) == update(first_bob, [Outcome(first_ana, 1.0)], LICHESS,
                                                   periods=periods_between(t1, t2))


@pytest.mark.parametrize("moves_before", [0, 1])
def test_a_game_resigned_in_its_first_two_moves_is_unrated(room, moves_before):
    game_id = room.start("ana", "bob")
    for i, move in enumerate(("22-18", "11-15")[:moves_before]):
        room.move("ana" if i == 0 else "bob", move, game_id)
    # The player to move resigns: White before any move, Black after White's first.
    loser = "ana" if moves_before == 0 else "bob"
    room.resign(loser, game_id)
    row = room.storage.game(game_id)
    assert (row.ply, row.result_reason) == (moves_before, "resign")
    assert room.rating("ana") is None and room.rating("bob") is None
    assert room.storage.dump()["rating_history"] == []


def test_a_game_resigned_after_two_moves_is_rated(room):
    game_id = room.start("ana", "bob")
    room.move("ana", "22-18", game_id)
    room.move("bob", "11-15", game_id)
    room.resign("ana", game_id)
    assert room.storage.game(game_id).ply == 2
    assert room.rating("ana").games == room.rating("bob").games == 1
    assert room.rating("bob").rating > 1500 > room.rating("ana").rating


def test_a_loss_on_time_in_the_first_two_moves_is_unrated_later_rated(room, now):
    early = room.start("ana", "bob")
    room.move("ana", "22-18", early)
    now[0] += 2 * DAY                       # bob never answers
    room.service.run_due(PLATFORM)
    row = room.storage.game(early)
    assert (row.status, row.ply, row.result_reason, row.winner) == ("finished", 1, "time", "W")
    assert room.rating("ana") is None and room.rating("bob") is None
    late = room.start("ana", "bob")
    room.move("ana", "22-18", late)
    room.move("bob", "11-15", late)
    now[0] += 2 * DAY                       # now ana never answers
    room.service.run_due(PLATFORM)
    row = room.storage.game(late)
    assert (row.status, row.ply, row.result_reason, row.winner) == ("finished", 2, "time", "B")
    assert room.rating("bob").rating > 1500 > room.rating("ana").rating
    assert room.rating("ana").updated_at == row.finished_at


# -- the bot's pool ------------------------------------------------------------------------------------


def play_the_bot(room: Room, user: str = "ana", human_moves: int = 1) -> int:
    """``user`` plays level 1 as white, makes ``human_moves`` moves (the bot answering each), resigns."""
    before = {g.id for g in room.storage.find_games(PLATFORM)}
    room.say(user, "/play italian level 1 white")
    (game_id,) = [g.id for g in room.storage.find_games(PLATFORM) if g.id not in before]
    assert room.storage.game(game_id).bot_level == 1
    for move in ("22-18", "21-17", "24-20")[:human_moves]:
        row = room.storage.game(game_id)
        ply = row.ply
        # Level 1 may leave a man hanging: then the capture is compulsory, and is played instead.
        pos = Position.from_fen("italian", row.fen)
        if not any(str(m) == move for m in pos.legal_moves()):
            move = str(pos.legal_moves()[0])
        answer = room.text(user, f"/m #{game_id} {move}")
        assert room.service.settle(SETTLE)
        # The human's move and the bot's answer (written from the engine's thread).
        assert room.storage.game(game_id).ply == ply + 2, answer
    room.resign(user, game_id)
    room.now[0] += 600
    return game_id


def test_a_game_against_the_bot_does_not_move_the_human_rating(room):
    room.game("ana", "bob", "white")
    italian_before = room.rating("ana")
    history_before = room.storage.rating_history(PLATFORM, "ana", "italian")
    game_id = play_the_bot(room)
    row = room.storage.game(game_id)
    assert (row.status, row.ply, row.winner) == ("finished", 2, "B")
    assert room.rating("ana") == italian_before
    assert room.storage.rating_history(PLATFORM, "ana", "italian") == history_before
    vs_bot = room.rating("ana", "italian:bot")
    assert vs_bot is not None and vs_bot.games == 1
    # A newcomer in that pool, against level 1's fixed rating (800, sure).
    assert as_rating(vs_bot) == update(new_rating(), [Outcome(Rating(800.0, 60.0, 0.06), 0.0)], LICHESS,
                                       periods=1.0)
    # The bot itself is rated in no pool, and its levels keep their ratings.
    assert all(r[1] != BOT_ID for r in room.storage.dump()["ratings"])
    # /stats tells the two pools apart.
    text = room.text("ana", "/stats")
    italian = tr("en", "variant.italian")
    assert stats_line_head(tr("en", "stats.vs_bot", variant=italian)) in text
    assert stats_line_head(italian) in text


def test_a_bot_game_resigned_at_once_is_unrated(room):
    room.say("ana", "/play italian level 1 white")
    (game_id,) = [g.id for g in room.storage.find_games(PLATFORM)]
    room.resign("ana", game_id)
    assert room.storage.game(game_id).ply == 0
    assert room.rating("ana", "italian:bot") is None and room.rating("ana") is None


# -- the leaderboard -------------------------------------------------------------------------------------

# In GROUP: ana 6 rated games (all won), bob 6, cid 6, dan 4 rated (+1 unrated); in GROUP2 dan
# beats eve twice (dan: 6 rated on the platform, eve 2).
SERIES = [
    ("ana", "bob", "white"), ("bob", "ana", "black"), ("ana", "bob", "white"),
    ("ana", "cid", "white"), ("cid", "ana", "black"),
    ("bob", "cid", "white"), ("cid", "bob", "black"),
    ("cid", "dan", "white"), ("bob", "dan", "draw"), ("ana", "dan", "white"), ("dan", "cid", "draw"),
]
SERIES2 = [("dan", "eve", "white"), ("eve", "dan", "black")]


def play_series(room: Room) -> None:
    for white, black, outcome in SERIES:
        room.game(white, black, outcome)
    # An unrated game for dan in GROUP (cid resigns before moving): it does not count toward 5.
    unrated = room.start("cid", "dan")
    room.resign("cid", unrated)
    room.now[0] += 600
    for white, black, outcome in SERIES2:
        room.game(white, black, outcome, chat=GROUP2)


def leaderboard_lines(text: str) -> list[str]:
    return text.splitlines()[1:]


def top_title(variant: str, everywhere: bool = False) -> str:
    """The first line of /top (of /top global with ``everywhere``)."""
    return tr("en", "top.global_title" if everywhere else "top.title", variant=tr("en", f"variant.{variant}"))


def top_empty(variant: str, everywhere: bool = False) -> str:
    """/top when nobody has the 5 rated games it takes."""
    return top_title(variant, everywhere) + "\n" + tr("en", "top.empty", min=5)


def expected_lines(room: Room, users: list[str], counts: dict[str, int]) -> list[str]:
    rows = sorted(((room.rating(u), u) for u in users), key=lambda item: (-item[0].rating, item[1]))
    return [f"{i}. {u.capitalize()} — {as_rating(r).shown()} ({tr('en', 'top.games', n=counts[u])})"
            for i, (r, u) in enumerate(rows, 1)]


def test_the_chat_leaderboard_after_a_series(room):
    play_series(room)
    assert {u: room.rating(u).games for u in ("ana", "bob", "cid", "dan", "eve")} == {
        "ana": 6, "bob": 6, "cid": 6, "dan": 6, "eve": 2}
    replies = room.say("eve", "/top")
    assert len(replies) == 1
    text = replies[0].text
    assert text.splitlines()[0] == top_title("italian")
    lines = leaderboard_lines(text)
    # dan has only 4 rated games in this chat (and one unrated): not listed; eve played elsewhere.
    assert lines == expected_lines(room, ["ana", "bob", "cid"], {"ana": 6, "bob": 6, "cid": 6})
    assert lines[0].startswith("1. Ana — ")                  # she won all her games
    ratings = [room.rating(u).rating for u in ("ana", "bob", "cid")]
    assert ratings == sorted(ratings, reverse=True)          # best first: ana, bob, cid
    assert_png(replies[0].image)
    # The same leaderboard by its variant's name.
    assert room.text("ana", "/top italian") == text


def test_the_global_leaderboard_counts_every_chat(room):
    play_series(room)
    replies = room.say("ana", "/top global")
    text = replies[0].text
    assert text.splitlines()[0] == top_title("italian", everywhere=True)
    assert leaderboard_lines(text) == expected_lines(room, ["ana", "bob", "cid", "dan"],
                                                     {"ana": 6, "bob": 6, "cid": 6, "dan": 6})
    assert "Eve" not in text
    assert_png(replies[0].image)
    # From the other chat: the same global board; that chat's own has nobody with 5 games there.
    assert room.text("eve", "/top global", chat=GROUP2) == text
    assert room.text("eve", "/top", chat=GROUP2) == top_empty("italian")


def test_a_leaderboard_without_enough_games_says_so(room):
    play_series(room)
    replies = room.say("ana", "/top spanish")
    assert len(replies) == 1 and replies[0].image is None
    assert replies[0].text == top_empty("spanish")
    assert room.text("ana", "/top global spanish") == top_empty("spanish", everywhere=True)


def test_four_rated_games_are_not_enough(room):
    for _ in range(4):
        room.game("ana", "bob", "white")
    assert room.text("ana", "/top") == top_empty("italian")
    room.game("bob", "ana", "draw")
    lines = leaderboard_lines(room.text("ana", "/top"))
    assert lines == expected_lines(room, ["ana", "bob"], {"ana": 5, "bob": 5})


# -- /stats ------------------------------------------------------------------------------------------------


def record(games: int, wins: int, draws: int, losses: int) -> dict[str, str]:
    """A stats line's counts in words: '6 games', '2 won', ..."""
    return {"games": tn("en", "stats.games", games), "wins": tn("en", "stats.wins", wins),
            "draws": tn("en", "stats.draws", draws), "losses": tn("en", "stats.losses", losses)}


def stats_line(room: Room, user: str, games: int, wins: int, draws: int, losses: int) -> str:
    r = room.rating(user)
    return tr("en", "stats.line", pool=tr("en", "variant.italian"), rating=as_rating(r).shown(),
              deviation=f" ±{round(r.deviation)}", **record(games, wins, draws, losses))


def stats_line_head(pool: str) -> str:
    """How a pool's /stats line starts: the text before its rating."""
    return tr("en", "stats.line", pool=pool, rating="\0", deviation="", games="", wins="", draws="",
              losses="").split("\0")[0]


def stats_title(name: str) -> str:
    return tr("en", "stats.title", name=name)


def head_to_head(a: str, b: str, wins: int = 0, draws: int = 0, losses: int = 0) -> str:
    """/stats @a @b after games in italian only."""
    counts = record(0, wins, draws, losses)
    return (tr("en", "stats.h2h_title", a=a, b=b) + "\n"
            + tr("en", "stats.h2h_line", variant=tr("en", "variant.italian"), a=a, wins=counts["wins"],
                 draws=counts["draws"], losses=counts["losses"]))


def test_stats_shows_rating_results_and_a_chart(room):
    play_series(room)
    replies = room.say("ana", "/stats")
    assert len(replies) == 1
    lines = replies[0].text.splitlines()
    assert lines[0] == stats_title("Ana")
    assert stats_line(room, "ana", 6, 6, 0, 0) in lines
    img = assert_png(replies[0].image)
    assert img.mode in ("RGB", "RGBA", "P", "L")
    # bob: 6 rated games, 2 won (cid twice), 1 drawn (dan), 3 lost (ana).
    assert stats_line(room, "bob", 6, 2, 1, 3) in room.text("bob", "/stats").splitlines()


def test_stats_shows_an_idle_players_deviation_as_of_today(room, now):
    """A rating left alone for years is no longer sure: /stats and /top show the deviation grown
    by the idle time (and the provisional mark once it passes 110); the stored rating is kept."""
    for _ in range(5):
        room.game("ana", "bob", "white")
    # An established player: a long history would have settled the deviation this low.
    played = room.rating("ana")
    room.storage.save_rating(RatingRecord(PLATFORM, "ana", "italian", played.rating, 60.0,
                                          played.volatility, played.games, played.updated_at), "test")
    stored = room.rating("ana")
    assert not as_rating(stored).shown().endswith("?")
    assert stats_line(room, "ana", 5, 5, 0, 0) in room.text("ana", "/stats").splitlines()
    now[0] += 3 * 365 * DAY
    today = update(as_rating(stored), [], LICHESS, periods=periods_between(stored.updated_at, now[0]))
    assert today.deviation > 110
    shown = today.shown()
    assert shown.endswith("?")
    line = tr("en", "stats.line", pool=tr("en", "variant.italian"), rating=shown,
              deviation=f" ±{round(today.deviation)}", **record(5, 5, 0, 0))
    assert line in room.text("ana", "/stats").splitlines()
    assert shown in room.text("ana", "/top")
    assert room.rating("ana") == stored


def test_stats_of_another_user(room):
    play_series(room)
    replies = room.say("ana", "/stats @bob")
    lines = replies[0].text.splitlines()
    assert lines[0] == stats_title("Bob")
    assert stats_line(room, "bob", 6, 2, 1, 3) in lines
    assert_png(replies[0].image)
    # dan's record covers both chats of the platform: 4 rated games here (a loss, a draw, a loss, a
    # draw) and 2 won in GROUP2.  His unrated game (cid resigned before a move) is counted by
    # today's code as a win; the issue does not say whether /stats should count it, so both are
    # accepted here.
    dan = room.text("ana", "/stats @dan").splitlines()
    assert dan[0] == stats_title("Dan")
    rating = as_rating(room.rating("dan")).shown()
    line = next(line for line in dan if line.startswith(stats_line_head(tr("en", "variant.italian"))))
    assert line.startswith(stats_line_head(tr("en", "variant.italian")) + f"{rating} ±")
    deviation = line.split(" ±")[1].split()[0]
    assert line in [tr("en", "stats.line", pool=tr("en", "variant.italian"), rating=rating, deviation=f" ±{deviation}",
                       **record(*counts)) for counts in ((6, 2, 2, 2), (7, 3, 2, 2))], line
    # Handles are matched without regard to case.
    assert room.text("ana", "/stats @BOB").splitlines()[0] == stats_title("Bob")


def test_stats_of_someone_never_seen(room):
    room.game("ana", "bob", "white")
    assert room.text("ana", "/stats @nobody") == tr("en", "stats.unknown", name="@nobody")
    assert room.text("ana", "/stats nobody") == tr("en", "stats.usage")


def test_stats_of_a_user_without_games(room):
    room.say("zoe", "/help")
    assert room.text("ana", "/stats @zoe") == stats_title("Zoe") + "\n" + tr("en", "stats.nothing")


def test_head_to_head(room):
    play_series(room)
    assert room.text("ana", "/stats @ana @bob") == head_to_head("Ana", "Bob", wins=3)
    assert room.text("ana", "/stats @bob @ana") == head_to_head("Bob", "Ana", losses=3)
    assert room.text("ana", "/stats @bob @dan") == head_to_head("Bob", "Dan", draws=1)
    assert room.text("ana", "/stats @ana @eve") == (
        tr("en", "stats.h2h_title", a="Ana", b="Eve") + "\n" + tr("en", "stats.h2h_none"))
    assert room.text("ana", "/stats @ana @nobody") == tr("en", "stats.unknown", name="@nobody")


# -- puzzles (the daily puzzle, answered in the chat) ---------------------------------------------------


def post_daily(room: Room) -> tuple[int, dict]:
    """Subscribe GROUP (an admin), move the clock to the next post's time (09:00 in Madrid), let the
    timed work post: the post and its puzzle."""
    room.say("ana", "/daily on", is_admin=True)
    due = room.service.next_daily_wakeup(PLATFORM)
    assert due is not None and 0 < due - room.now[0] <= DAY
    room.now[0] = due
    assert room.service.run_due(PLATFORM) >= 1
    post = room.storage.daily_posts(PLATFORM, GROUP, 1)[0]
    puzzle = puzzle_by_id(post.variant, post.puzzle_id)
    assert puzzle is not None
    return post.id, puzzle


def a_wrong_first_move(puzzle: dict) -> str:
    from bot.rules import Position

    pos = Position.from_fen(puzzle["variant"], puzzle["fen"])
    wrong = [str(m) for m in pos.legal_moves() if str(m) not in puzzle["tree"]]
    assert wrong, "every legal move solves this puzzle"
    return wrong[0]


def test_a_solved_daily_puzzle_is_rated_and_shown(room):
    post_id, puzzle = post_daily(room)
    room.say("bob", "/m " + " ".join(puzzle["solution"]))
    attempt = room.storage.attempt(post_id, "bob")
    assert attempt.solved_at is not None and attempt.rated_score == 1.0
    solver = room.rating("bob", "puzzles")
    item = room.storage.rating("*", f"puzzle:{puzzle['id']}", "puzzles")
    assert solver.rating > 1500 and solver.games == 1
    assert item.rating < float(puzzle["rating"]) and item.games == 1
    text = room.text("bob", "/stats")
    assert tr("en", "stats.puzzles", rating=as_rating(solver).shown(), solved=tn("en", "stats.solved", 1),
              streak=1, best=1) in text.splitlines()


# -- rebuild equals live --------------------------------------------------------------------------------


def test_rebuild_gives_the_live_numbers(room):
    play_series(room)
    play_the_bot(room, "cid", human_moves=2)
    room.game("ana", "bob", "black", chat=GROUP2)
    post_id, puzzle = post_daily(room)
    room.say("bob", "/m " + " ".join(puzzle["solution"]))
    room.say("cid", "/m " + a_wrong_first_move(puzzle))
    assert room.storage.attempt(post_id, "cid").rated_score == 0.0
    room.now[0] += 30 * DAY
    room.game("cid", "ana", "draw")             # after a long pause: the deviation grew first
    live = room.ratings_snapshot()
    live_records = {(r.platform, r.subject, r.pool): r for pool in ("italian", "italian:bot", "puzzles")
                    for platform in (PLATFORM, "*") for r in room.storage.ratings.pool(platform, pool)}
    live_history = {key: room.storage.rating_history(*key) for key in live_records}
    assert len(live["ratings"]) == len(live_records) == 5 + 1 + 2 + 1   # ana..eve, cid vs bot, 2 solvers, 1 puzzle
    assert len(live["rating_history"]) == sum(len(h) for h in live_history.values())

    counts = room.service.rebuild_ratings()
    # 11 + 2 + 1 + 1 human games rated, the bot game, 2 attempts; the unrated game left out.
    assert counts == {"games": 11 + 2 + 1 + 1 + 1, "attempts": 2}
    assert room.ratings_snapshot() == live            # exactly: the same floats
    for key, record in live_records.items():
        assert room.storage.rating(*key) == record
        assert room.storage.rating_history(*key) == live_history[key]
    # A second rebuild changes nothing either.
    room.service.rebuild_ratings()
    assert room.ratings_snapshot() == live


def test_rebuild_from_nothing_forgets_stale_ratings(room):
    room.game("ana", "bob", "white")
    live = room.ratings_snapshot()
    # A rating written by hand (as a bug or an old version might have) goes away on rebuild.
    room.storage.save_rating(RatingRecord(PLATFORM, "ghost", "italian", 2500.0, 50.0, 0.06, 9, T0), "game:999")
    assert room.rating("ghost") is not None
    assert room.service.rebuild_ratings() == {"games": 1, "attempts": 0}
    assert room.ratings_snapshot() == live
    assert room.rating("ghost") is None


# -- the deviation of an idle player grows ----------------------------------------------------------


def test_an_idle_players_deviation_grows_before_the_next_game(room, now):
    # Two pairs play the same first game at the same moment ...
    room.game("ana", "bob", "white")
    now[0] -= 600
    room.game("cid", "dan", "white")
    assert as_rating(room.rating("ana")) == as_rating(room.rating("cid"))
    first = as_rating(room.rating("ana"))
    first_opponent = as_rating(room.rating("bob"))
    t1 = room.rating("ana").updated_at
    # ... and the same second game: ana and bob ten minutes later, cid and dan 100 days later.
    room.game("ana", "bob", "white")
    t_soon = room.rating("ana").updated_at
    now[0] += 100 * DAY
    room.game("cid", "dan", "white")
    t_late = room.rating("cid").updated_at
    assert t_late - t1 > 100 * DAY
    soon_start = update(first, [], LICHESS, periods=periods_between(t1, t_soon)).deviation
    late_start = update(first, [], LICHESS, periods=periods_between(t1, t_late)).deviation
    assert first.deviation < soon_start < late_start
    # 100 days are about 21 rating periods, ten minutes not even 0.002 of one.
    assert late_start - first.deviation > 1000 * (soon_start - first.deviation)
    soon, late = room.rating("ana"), room.rating("cid")
    assert late.deviation > soon.deviation
    # The winner of an equal game gains more when the rating was less sure.
    assert late.rating - first.rating > soon.rating - first.rating > 0
    assert as_rating(soon) == update(first, [Outcome(first_opponent, 1.0)], LICHESS,
                                     periods=periods_between(t1, t_soon))
    assert as_rating(late) == update(first, [Outcome(first_opponent, 1.0)], LICHESS,
                                     periods=periods_between(t1, t_late))


def test_rebuild_equals_live_for_two_games_lost_on_time_in_one_pass(room, now):
    # ana plays two games at once; in both she is to move.  Game 2's clock started first.
    first = room.start("ana", "bob")
    second = room.start("ana", "cid")
    assert first < second
    room.move("ana", "22-18", second)
    room.move("cid", "11-15", second)
    now[0] += 600
    room.move("ana", "22-18", first)
    room.move("bob", "11-15", first)
    assert room.storage.game(second).deadline_at < room.storage.game(first).deadline_at
    now[0] += 3 * DAY                           # ana is away: one pass of the timed work ends both
    room.service.run_due(PLATFORM)
    assert room.storage.game(first).finished_at == room.storage.game(second).finished_at
    assert room.storage.game(first).result_reason == room.storage.game(second).result_reason == "time"
    live = room.ratings_snapshot()
    assert room.service.rebuild_ratings() == {"games": 2, "attempts": 0}
    assert room.ratings_snapshot() == live
