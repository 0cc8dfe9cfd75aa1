"""Playing against the bot: /play, the bot's moves through the outbox, draws, resignation, clocks,
and the bot's thinking across a restart.

Everything is real: the SQLite file, the rules, the engine, the boards.  The engine runs in
threads (``Thinker(ThreadPoolExecutor)``) with a short time per move, so the tests stay fast; one
test uses the default process pool.  Two tiny executors stand in for a pool that is slow on
purpose: ``HeldExecutor`` runs its jobs only when the test says so, ``NeverExecutor`` never.
"""

from __future__ import annotations

import random
from concurrent.futures import Executor, Future
from typing import Any

import pytest
from catalog_text import says, to_move, tr
from executors import HeldExecutor

from bot.i18n import t
from bot.rules import Position, read_pdn
from bot.service import ChatEvent, GameService
from bot.service.chat.registry import REGISTRY
from bot.service.chat.wording import variant_name
from bot.service.thinking import Thinker
from bot.storage import BOT_ID, Storage

PNG = b"\x89PNG\r\n\x1a\n"
BOT_SECONDS = 0.2
SETTLE = 20.0
DAY = 24 * 3600


class NeverExecutor(Executor):
    """A pool whose workers never get to the job: a process that dies while the bot thinks."""

    def __init__(self) -> None:
        self.submitted = 0

    def submit(self, fn, /, *args, **kwargs) -> Future:
        self.submitted += 1
        return Future()


# -- fixtures and helpers ---------------------------------------------------------------------------


@pytest.fixture
def bot(chat, pool):
    """The chat harness on a service whose engine runs in two threads."""
    chat.use_thinker(Thinker(pool))
    yield chat
    assert chat.service.settle(SETTLE)


def restart(chat, thinker: Thinker) -> GameService:
    """A new process: the old service is dropped unsettled; a new Storage and service on the file."""
    chat.storage.close()
    chat.storage = Storage(chat.db_path)
    return chat.use_thinker(thinker)


def start_bot_game(harness, args: str, user: str = "ana", **kw: Any) -> tuple[int, str]:
    """``user`` sends /play ARGS; the new game's id and the answer's text."""
    before = {g.id for g in harness.rows("games")}
    replies = harness.say(user, f"/play {args}".strip(), **kw)
    new = [g.id for g in harness.rows("games") if g.id not in before]
    assert len(new) == 1, [r.text for r in replies]
    assert len(replies) == 1 and replies[0].game_id == new[0]
    return new[0], replies[0].text


def bot_game_from(chat, fen: str, human: str = "white", level: int = 1) -> int:
    """Ana's game against the bot set up from a position (what /play writes, with a start FEN)."""
    now = chat.now[0]
    bot_name = t("en", "bot.name", level=level)
    players = (("ana", "Ana"), (BOT_ID, bot_name))
    (white_id, white_name), (black_id, black_name) = players if human == "white" else players[::-1]
    turn = Position.from_fen("italian", fen).turn
    human_to_move = (turn == "W") == (human == "white")
    return chat.storage.create_game({
        "platform": chat.platform, "chat_id": chat.chat_id, "variant": "italian", "start_fen": fen,
        "white_id": white_id, "white_name": white_name, "black_id": black_id, "black_name": black_name,
        "fen": fen, "move_seconds": DAY, "deadline_at": now + DAY if human_to_move else None,
        "created_at": now, "bot_level": level,
    })


def outbox(chat) -> list:
    """The replies waiting in the outbox, oldest first (not marked sent)."""
    return [item.reply for item in chat.service.pending_messages(chat.platform, limit=1000)]


def bot_said(chat, game_id: int, lang: str = "en") -> list:
    """The outbox replies that announce a move of the bot in ``game_id``."""
    row = chat.game(game_id)
    head = bot_subject(row.bot_level, lang)
    return [r for r in outbox(chat) if r.game_id == game_id and r.text.startswith(head)]


def bot_subject(level: int, lang: str = "en") -> str:
    """The bot's name as it opens a sentence ('Bot (level 1) played ...')."""
    return tr(lang, "bot.name_start", level=level)


def thinking(level: int, lang: str = "en") -> str:
    """The line a board shows while the bot thinks."""
    return tr(lang, "bot.thinking", bot=bot_subject(level, lang))


def replay(chat, game_id: int) -> Position:
    """Every stored move replayed by the rules from the start: each must be legal."""
    row = chat.game(game_id)
    pos = Position.from_fen(row.variant, row.start_fen) if row.start_fen else Position.start(row.variant)
    for m in chat.moves(game_id):
        pos = pos.play(pos.parse_move(m.notation))
        assert pos.fen() == m.fen_after
    assert pos.fen() == row.fen
    return pos


def human_move(chat, game_id: int, rng: random.Random, user: str = "ana") -> str:
    """A legal move for the human, typed; the answer's text."""
    move = rng.choice(chat.position(game_id).legal_moves())
    return chat.text(user, f"/m #{game_id} {move}")


# -- starting a game ----------------------------------------------------------------------------------


def test_play_as_white_gives_the_human_the_board_and_the_first_move(bot, now):
    game, text = start_bot_game(bot, "italian level 2 white 2h")
    row = bot.game(game)
    assert (row.white_id, row.black_id, row.bot_level, row.variant) == ("ana", BOT_ID, 2, "italian")
    assert row.black_name == "Bot (level 2)" and row.move_seconds == 7200
    assert row.deadline_at == now[0] + 7200
    assert text.startswith(t("en", "play.started", id=game, variant=variant_name("en", "italian"), name="Ana",
                             color=t("en", "side.white"), level=2))
    assert to_move("en", "Ana", "white").search(text), text
    reply = bot.service.handle(bot.event("ana", "/board"))[0]
    assert reply.image.startswith(PNG)
    starts = {m.start for m in Position.start("italian").legal_moves()}
    pressed = {int(a.split(":")[3]) for a in (b.action for r in reply.buttons for b in r)}
    assert pressed == starts
    # Nothing to think about: the human is to move.
    assert bot.service.thinker.running() == [] and outbox(bot) == []


def test_play_as_black_lets_the_bot_open_and_its_move_arrives_through_the_outbox(held, now):
    chat, executor = held
    replies = chat.say("ana", "/play italian black level 1")
    assert len(replies) == 1
    reply = replies[0]
    game = reply.game_id
    assert thinking(1) in reply.text
    assert reply.image.startswith(PNG) and reply.buttons == []       # not the human's turn yet
    assert chat.game(game).deadline_at is None                      # the bot's clock does not run
    assert outbox(chat) == []
    now[0] += 5
    assert executor.run_all() == 1                                  # the engine answers
    row = chat.game(game)
    assert (row.white_id, row.black_id, row.ply) == (BOT_ID, "ana", 1)
    [said] = bot_said(chat, game)
    played = chat.moves(game)[0]
    assert played.by_user == BOT_ID
    assert str(Position.start("italian").parse_move(played.notation)) == played.notation      # legal
    assert said.text.startswith(t("en", "bot.played", bot=bot_subject(1), move=played.notation, id=game))
    assert to_move("en", "Ana", "black").search(said.text), said.text
    assert said.image.startswith(PNG) and said.game_id == game
    legal = {m.start for m in Position.from_fen("italian", row.fen).legal_moves()}
    assert {int(b.action.split(":")[3]) for r in said.buttons for b in r} == legal
    assert all(b.action.startswith(f"s:{game}:1:") for r in said.buttons for b in r)
    assert row.deadline_at == now[0] + DAY                          # the human's clock runs from the answer
    # Delivered once: a tick hands it over and marks it sent.
    out = chat.service.tick(platform=chat.platform)
    assert [o.reply.text for o in out] == [said.text] and outbox(chat) == []


@pytest.mark.parametrize("level", [1, 3, 5])
def test_every_answer_of_the_bot_is_a_legal_move_and_comes_after_the_thinking_line(bot, level):
    rng = random.Random(level)
    game, _ = start_bot_game(bot, f"italian white level {level}")
    for turn in range(3):
        before = bot.game(game)
        text = human_move(bot, game, rng)
        assert thinking(level) in text
        assert bot.service.settle(SETTLE)
        row = bot.game(game)
        assert row.ply == before.ply + 2, f"the bot did not answer move {turn + 1}"
        last = bot.moves(game)[-1]
        assert [m.by_user for m in bot.moves(game)] == ["ana", BOT_ID] * (turn + 1)
        said = bot_said(bot, game)
        assert said and says(said[-1].text, "en", "bot.played", bot=bot_subject(level), move=last.notation, id=game)
        bot.service.tick(platform=bot.platform)
    pos = replay(bot, game)            # the rules accept every move, the bot's included
    assert pos.fen() == bot.game(game).fen


def test_the_buttons_of_the_bots_board_play_the_humans_next_move(bot):
    bot.say("ana", "/play italian black level 1")
    assert bot.service.settle(SETTLE)
    [said] = bot_said(bot, 1)
    select = said.buttons[0][0].action
    board = bot.press("ana", select)[0]
    destination = board.buttons[0][0].action
    assert destination.startswith("d:1:1:")
    answer = bot.press("ana", destination)[0]
    assert thinking(1) in answer.text and answer.replaces_board
    assert bot.service.settle(SETTLE)
    assert bot.game(1).ply == 3 and [m.by_user for m in bot.moves(1)] == [BOT_ID, "ana", BOT_ID]
    replay(bot, 1)


@pytest.mark.parametrize("text, lang", [
    ("/maquina italiana nivel 2 blancas", "es"),
    ("/máquina italiana nivel 2 blancas", "es"),
    ("/bot italian level 2 white", "en"),
    ("/computer italiana livello 2 bianco", "it"),
])
def test_play_has_its_aliases_and_reads_arguments_in_each_language(bot, text, lang):
    assert REGISTRY.lookup(text.split()[0][1:]).name == "play"
    replies = bot.say("ana", text, language=lang)
    game = replies[0].game_id
    assert game is not None, replies[0].text
    assert tr(lang, "play.started", id=game, variant=variant_name(lang, "italian"), name="Ana",
              color=tr(lang, "side.white"), level=2) in replies[0].text
    row = bot.game(game)
    assert (row.white_id, row.black_id, row.bot_level, row.variant) == ("ana", BOT_ID, 2, "italian")


def test_play_with_no_arguments_uses_level_3_and_a_colour_drawn_for_the_human(bot):
    game, _ = start_bot_game(bot, "")
    row = bot.game(game)
    assert row.bot_level == 3 and BOT_ID in (row.white_id, row.black_id) and "ana" in (row.white_id, row.black_id)


@pytest.mark.parametrize("args, key, values", [
    ("0", "play.bad_level", {"word": "0", "low": 1, "high": 5}),
    ("6", "play.bad_level", {"word": "6", "low": 1, "high": 5}),
    ("level 9", "play.bad_level", {"word": "9", "low": 1, "high": 5}),
    ("italian 2 3", "play.two_levels", {"first": "2", "second": "3"}),
    ("level 2 L4", "play.two_levels", {"first": "level 2", "second": "L4"}),
    ("@bob", "play.no_target", {}),
    ("italian white black", "new.two_colors", {"first": "white", "second": "black"}),
    ("1m", "new.bad_time", {"word": "1m"}),
    ("chess", "new.bad_arg", {"word": "chess"}),
])
def test_bad_play_arguments_are_explained_and_nothing_is_stored(bot, args, key, values):
    before = bot.snapshot()
    text = bot.text("ana", f"/play {args}")
    assert text == t("en", key, **values) + " " + t("en", "play.usage")
    assert bot.snapshot() == before and bot.rows("games") == []
    assert bot.service.thinker.running() == []


def test_a_second_bot_game_in_the_same_chat_is_refused_until_the_first_is_over(bot):
    game, _ = start_bot_game(bot, "italian white level 1")
    before = bot.snapshot()
    text = bot.text("ana", "/play spanish black level 4")
    assert text == t("en", "play.already", id=game)
    assert bot.snapshot() == before
    # Another chat is another place to play.
    other, _ = start_bot_game(bot, "italian white level 1", chat="group-2")
    assert other != game and bot.game(other).chat_id == "group-2"
    # Once the first is over, a new one may start here.
    bot.resign("ana", f"/resign #{game}")
    assert bot.game(game).status == "finished"
    again, _ = start_bot_game(bot, "italian white level 1")
    assert again not in (game, other)


def test_a_move_typed_while_the_bot_thinks_is_refused_and_the_answer_does_not_wait(held):
    chat, executor = held
    game, _ = start_bot_game(chat, "italian white level 1")
    text = chat.text("ana", "/m 22-18")
    # The answer came back while the engine has not even started: thinking never blocks.
    assert thinking(1) in text and len(executor.jobs) == 1
    assert not chat.service.settle(0.05)
    before = chat.snapshot()
    refused = chat.text("ana", f"/m #{game} 21-17")
    named = tr("en", "bot.name", level=1)
    assert t("en", "err.not_your_turn", name=named, to_name=tr("en", "name.to", name=named)) in refused
    assert chat.snapshot() == before
    assert executor.run_all() == 1
    assert chat.service.settle(1.0)
    assert chat.game(game).ply == 2 and len(bot_said(chat, game)) == 1


def test_the_bots_move_is_announced_in_the_chats_language(held):
    chat, executor = held
    chat.say("bob", "/lang it", admin=True)
    game, _ = start_bot_game(chat, "italian white level 1")      # Ana's own client is English
    chat.say("ana", "/m 22-18")
    executor.run_all()
    [said] = [r for r in outbox(chat) if r.game_id == game]
    notation = chat.moves(game)[-1].notation
    assert said.text.startswith(t("it", "bot.played", bot=t("it", "bot.name_start", level=1), move=notation, id=game))


def test_the_board_during_the_bots_turn_says_it_is_thinking_not_that_its_time_runs_out(held):
    chat, _executor = held
    game, _ = start_bot_game(chat, "italian white level 1")
    chat.say("ana", "/m 22-18")
    assert chat.game(game).deadline_at is None
    text = chat.text("ana", "/board")
    assert not to_move("en", tr("en", "bot.name", level=1), "black").search(text)
    assert thinking(1) in text


# -- what /games and /pdn say --------------------------------------------------------------------------


def test_games_marks_the_game_against_the_bot_with_its_level(bot):
    game, _ = start_bot_game(bot, "italian white level 4")
    text = bot.text("ana", "/games")
    line = next(ln for ln in text.splitlines() if f"#{game}" in ln)
    assert says(line, "en", "games.line", white="Ana", black=tr("en", "bot.name", level=4))
    assert line.endswith(f"({tr('en', 'games.bot', level=4)})")


def test_the_pdn_of_a_bot_game_names_the_program_and_its_level(bot):
    game, _ = start_bot_game(bot, "italian black level 2")
    assert bot.service.settle(SETTLE)
    human_move(bot, game, random.Random(3))
    assert bot.service.settle(SETTLE)
    reply = bot.say("ana", f"/pdn #{game}")[0]
    [parsed] = read_pdn(reply.text)
    assert parsed.tags["WhiteType"] == "program" and parsed.tags["BlackType"] == "human"
    assert parsed.tags["BotLevel"] == "2"
    assert parsed.tags["White"] == "Bot (level 2)" and parsed.tags["Black"] == "Ana"
    assert [str(m) for m in parsed.moves] == [m.notation for m in bot.moves(game)]
    assert len(parsed.moves) == 3
    assert reply.document[0] == f"game-{game}.pdn" and reply.document[1].decode("utf-8") == reply.text


def test_the_pdn_of_a_game_between_humans_has_no_program_tags(bot):
    game = bot.new_game()
    [parsed] = read_pdn(bot.say("ana", f"/pdn #{game}")[0].text)
    assert "WhiteType" not in parsed.tags and "BotLevel" not in parsed.tags


# -- draws, resignation, the end of a game -------------------------------------------------------------


def test_a_draw_offered_to_the_bot_in_the_start_position_is_declined(bot):
    game, _ = start_bot_game(bot, "italian white level 3")
    before = bot.game(game)
    text = bot.text("ana", "/draw")
    assert text == t("en", "bot.draw_declined", bot=bot_subject(3))
    after = bot.game(game)
    assert after.status == "active" and after.draw_offer is None and after.version == before.version


def test_a_draw_offered_to_the_bot_when_it_is_clearly_lost_is_accepted(bot):
    # Ana (white, to move) has four men against one.
    game = bot_game_from(bot, "W:W21,22,23,24:B4")
    text = bot.text("ana", f"/draw #{game}")
    assert t("en", "bot.draw_accepted", bot=bot_subject(1)) in text
    row = bot.game(game)
    assert (row.status, row.result_score, row.result_reason) == ("finished", "1/2-1/2", "agreement")
    assert tr("en", "result.draw.agreement") in text


def test_the_human_resigns_against_the_bot(bot):
    game, _ = start_bot_game(bot, "italian white level 1")
    first = bot.text("ana", "/resign")
    assert says(first, "en", "resign.confirm", name="Ana", id=game, other=tr("en", "bot.name", level=1))
    assert bot.game(game).status == "active"
    second = bot.resign("ana")
    row = bot.game(game)
    assert (row.status, row.result_reason, row.winner) == ("finished", "resign", "B")
    assert tr("en", "result.win.resign", winner=tr("en", "bot.name", level=1), loser="Ana") in second
    assert bot.service.thinker.running() == [] and bot.service.run_due() == 0
    assert bot.game(game) == row


def test_the_bots_winning_move_ends_the_game(bot):
    # The bot (black) is to move and its one capture takes Ana's last man; found by run_due, as
    # after a restart.
    game = bot_game_from(bot, "B:W18:B14")
    bot.service.run_due()
    assert bot.service.settle(SETTLE)
    row = bot.game(game)
    assert (row.status, row.winner, row.ply, row.deadline_at) == ("finished", "B", 1, None)
    [said] = bot_said(bot, game)
    assert tr("en", "bot.played", bot=bot_subject(1), move="14x21", id=game) in said.text
    assert tr("en", "game.over", id=game) in said.text
    assert [b.action for row in said.buttons for b in row] == [f"rm:{game}"]
    bot.service.run_due()
    assert bot.service.settle(SETTLE) and bot.game(game) == row


def test_the_humans_winning_move_ends_the_game_and_the_bot_does_not_think(bot):
    game = bot_game_from(bot, "W:W22:B18")
    text = bot.text("ana", "/m 22x13")
    row = bot.game(game)
    assert (row.status, row.winner, row.ply) == ("finished", "W", 1)
    assert not says(text, "en", "bot.thinking") and tr("en", "game.over", id=game) in text
    assert bot.service.thinker.running() == [] and outbox(bot) == []


# -- clocks --------------------------------------------------------------------------------------------


def test_the_human_loses_on_time_against_the_bot(bot, now):
    game, _ = start_bot_game(bot, "italian white level 1 1h")
    now[0] += 3600 + 1
    out = bot.service.tick()
    row = bot.game(game)
    assert (row.status, row.result_reason, row.winner) == ("finished", "time", "B")
    lost = tr("en", "result.win.time", winner=tr("en", "bot.name", level=1), loser="Ana")
    assert any(lost in o.reply.text for o in out)


def test_no_deadline_runs_while_the_bot_thinks(held, now):
    chat, executor = held
    game, _ = start_bot_game(chat, "italian white level 1 1h")
    chat.say("ana", "/m 22-18")
    assert chat.game(game).deadline_at is None
    now[0] += 30 * DAY                       # a very slow engine
    assert chat.service.tick() == []
    assert chat.game(game).status == "active" and chat.game(game).reminded == 0
    executor.run_all()
    row = chat.game(game)
    assert row.ply == 2 and row.deadline_at == now[0] + 3600      # the human's clock starts now
    chat.service.tick()
    now[0] += 3600 + 1
    chat.service.tick()
    assert chat.game(game).result_reason == "time" and chat.game(game).winner == "B"


# -- the bot's thinking across restarts and races ----------------------------------------------------------


def test_a_restart_while_the_bot_is_to_move_plays_its_move_exactly_once(chat, pool):
    never = NeverExecutor()
    chat.use_thinker(Thinker(never))
    game, _ = start_bot_game(chat, "italian white level 1")
    assert thinking(1) in chat.text("ana", "/m 22-18")
    assert never.submitted == 1 and chat.game(game).ply == 1
    # The process dies before the bot's answer is written; a new one opens the same file.
    service = restart(chat, Thinker(pool))
    assert chat.game(game).ply == 1 and bot_said(chat, game) == []
    service.run_due()
    service.run_due()                        # asked again while it thinks: not submitted twice
    assert service.settle(SETTLE)
    service.run_due()
    assert service.settle(SETTLE)
    row = chat.game(game)
    assert row.ply == 2 and [m.by_user for m in chat.moves(game)] == ["ana", BOT_ID]
    replay(chat, game)
    # Its message goes out once.
    out = service.tick()
    played = tr("en", "bot.played", bot=bot_subject(1), move=chat.moves(game)[1].notation, id=game)
    assert len(out) == 1 and out[0].reply.text.startswith(played)
    assert service.settle(SETTLE) and service.tick() == [] and chat.game(game) == row


def test_a_restart_also_resumes_a_game_the_bot_opens_when_tick_is_all_that_runs(chat, pool):
    never = NeverExecutor()
    chat.use_thinker(Thinker(never))
    game, _ = start_bot_game(chat, "italian black level 1")
    assert never.submitted == 1 and chat.game(game).ply == 0
    service = restart(chat, Thinker(pool))
    first = service.tick()                   # starts the thinking; the answer comes later
    assert service.settle(SETTLE)
    second = service.tick()
    assert service.settle(SETTLE)
    said = [o.reply.text for o in first + second + service.tick()]
    played = tr("en", "bot.played", bot=bot_subject(1), move=chat.moves(game)[0].notation, id=game)
    assert len(said) == 1 and said[0].startswith(played)
    assert chat.game(game).ply == 1 and [m.by_user for m in chat.moves(game)] == [BOT_ID]


def test_a_result_for_a_game_that_ended_meanwhile_changes_nothing(held):
    chat, executor = held
    game, _ = start_bot_game(chat, "italian white level 1")
    chat.say("ana", "/m 22-18")
    chat.resign("ana")                       # while the bot thinks
    row = chat.game(game)
    assert row.status == "finished"
    assert executor.run_all() == 1           # the engine's answer comes in after all
    assert chat.service.settle(1.0)
    assert chat.game(game) == row and len(chat.moves(game)) == 1
    assert bot_said(chat, game) == []


def test_a_late_result_from_another_process_after_the_bot_moved_changes_nothing(chat, pool):
    executor = HeldExecutor()
    first = chat.use_thinker(Thinker(executor))
    game, _ = start_bot_game(chat, "italian white level 1")
    chat.say("ana", "/m 22-18")
    # A second process on the same file finds the game and lets the bot move.
    storage = Storage(chat.db_path)
    try:
        second = GameService(storage, clock=lambda: chat.now[0], rng=random.Random(2), thinker=Thinker(pool),
                             bot_seconds=BOT_SECONDS)
        second.run_due()
        assert second.settle(SETTLE)
        moved = chat.game(game)
        assert moved.ply == 2
        # The first process's engine answers the position that is gone.
        executor.run_all()
        assert first.settle(1.0)
        assert chat.game(game) == moved and len(chat.moves(game)) == 2
        assert len(bot_said(chat, game)) == 1
    finally:
        storage.close()


def test_the_default_process_pool_plays_the_bot(chat):
    service = GameService(chat.storage, clock=lambda: chat.now[0], rng=random.Random(1), bot_seconds=BOT_SECONDS)
    chat.service = service
    try:
        game, text = start_bot_game(chat, "italian black level 1")
        assert thinking(1) in text
        assert service.settle(60)
        assert chat.game(game).ply == 1
        human_move(chat, game, random.Random(1))
        assert service.settle(60)
        assert chat.game(game).ply == 3
        said = bot_said(chat, game)
        assert len(said) == 2 and all(says(r.text, "en", "bot.played", bot=bot_subject(1), id=game) for r in said)
        replay(chat, game)
    finally:
        service.close()


def test_closing_the_service_while_the_bot_thinks_writes_nothing_and_logs_no_error(tmp_path, pool, bot_errors):
    # What bot/app.py does on the way out: service.close(), then storage.close().
    storage = Storage(tmp_path / "closing.db")
    service = GameService(storage, rng=random.Random(1), bot_seconds=BOT_SECONDS)
    event = ChatEvent(platform="test", chat_id="g", user_id="ana", user_name="Ana", text="/play italian black level 1")
    assert thinking(1) in service.handle(event)[0].text
    service.close()
    storage.close()
    assert service.settle(30)                # whatever the pool was running has come back
    assert [f"{r.name}: {r.getMessage()}" for r in bot_errors] == []
    # Nothing was written; the next process finds the game and the bot moves then.
    storage = Storage(tmp_path / "closing.db")
    try:
        assert storage.game(1).ply == 0
        again = GameService(storage, rng=random.Random(1), thinker=Thinker(pool), bot_seconds=BOT_SECONDS)
        again.run_due()
        assert again.settle(SETTLE) and storage.game(1).ply == 1
    finally:
        storage.close()
