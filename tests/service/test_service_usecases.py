"""The service as use cases (issue 18): plain classes built by one composition root, cross-feature
effects as domain events published inside the writing transaction, one configuration validated
with clear errors, and one command table read the same way from typed text and platform options.

Everything is real: SQLite files in tmp_path, the rules, Glicko-2; only the clock is fixed."""

from __future__ import annotations

import inspect
from dataclasses import fields
from pathlib import Path

import pytest
from source_checks import imported_modules
from test_service_ratings import PLATFORM, Room, a_wrong_first_move, post_daily

from bot.app import build_service
from bot.i18n import t
from bot.service import ChatEvent, GameService
from bot.service.chat.commands import parse_command
from bot.service.chat.registry import REGISTRY, ArgKind
from bot.service.compose import ConfigError, ServiceConfig, UseCases
from bot.service.domain import AttemptScored, GameFinished, MovePlayed
from bot.service.features.base import UseCase
from bot.service.service import build
from bot.storage import SQLiteStore

USE_CASE_NAMES = [f.name for f in fields(UseCases) if f.name not in ("runtime", "bus", "outlet")]


def test_the_service_is_no_stack_of_feature_classes():
    # Before: GameService inherited nine feature mixins, and their order decided behaviour.
    assert GameService.__mro__ == (GameService, object)


def test_no_use_case_inherits_from_another(tmp_path: Path):
    service = GameService(SQLiteStore(tmp_path / "u.db"))
    try:
        classes = {type(getattr(service.app, name)) for name in USE_CASE_NAMES}
        assert len(classes) == len(USE_CASE_NAMES)
        for cls in classes:
            assert set(cls.__mro__) & classes == {cls}, cls
            assert cls.__mro__[1:] == (UseCase, object), cls
        # Each gets what it needs in its constructor: nothing is looked up on a shared `self`.
        for name in USE_CASE_NAMES:
            params = list(inspect.signature(type(getattr(service.app, name))).parameters)
            assert params[:2] == ["runtime", "outlet"], (name, params)
    finally:
        service.close()
        service.storage.close()


def scramble(room: Room) -> None:
    """The event subscriptions in the other order, each behind a subscriber that does nothing (as
    the puzzles feature's own hook did: first in line, it made puzzle ratings a no-op)."""
    bus = room.service.app.bus
    for kind in (GameFinished, AttemptScored, MovePlayed):
        handlers = bus.subscribers(kind)
        bus._subscribers[kind] = [lambda event: None, *reversed(handlers), lambda event: None]


def play_and_solve(room: Room) -> None:
    room.game("ana", "bob", "white")
    room.game("bob", "cid", "draw")
    _post, puzzle = post_daily(room)
    room.say("bob", "/m " + " ".join(puzzle["solution"]))
    room.say("cid", "/m " + a_wrong_first_move(puzzle))


def test_ratings_follow_games_and_puzzles_whatever_the_order_of_subscribers(tmp_path: Path):
    plain = Room(tmp_path / "plain.db", [1_700_000_000.0])
    scrambled = Room(tmp_path / "scrambled.db", [1_700_000_000.0])
    try:
        scramble(scrambled)
        for room in (plain, scrambled):
            play_and_solve(room)
        # Both games (ana, bob, cid) and both attempts (bob, cid and the puzzle itself) are rated...
        assert scrambled.rating("ana").games == 1 and scrambled.rating("bob").games == 2
        assert scrambled.rating("bob", "puzzles").games == 1 and scrambled.rating("cid", "puzzles").games == 1
        # ...to the same numbers as without the scrambling.
        assert scrambled.ratings_snapshot() == plain.ratings_snapshot()
        assert len(plain.ratings_snapshot()["ratings"]) == 3 + 2 + 1
    finally:
        plain.close()
        scrambled.close()


def test_a_subscriber_writes_in_the_transaction_of_the_change(tmp_path: Path, bot_errors):
    room = Room(tmp_path / "tx.db", [1_700_000_000.0])
    try:
        game_id = room.start("ana", "bob")
        room.move("ana", "22-18", game_id)
        room.move("bob", "11-15", game_id)
        failing = []

        def broken(event: GameFinished) -> None:
            failing.append(event.game.id)
            raise RuntimeError("subscriber failed")

        room.service.app.bus.subscribe(GameFinished, broken)
        room.service.handle(ChatEvent(platform=PLATFORM, chat_id="group-1", user_id="bob", user_name="Bob",
                                      chat_kind="group", username="bob", text=f"/resign #{game_id}"))
        answer = room.service.handle(ChatEvent(platform=PLATFORM, chat_id="group-1", user_id="bob", user_name="Bob",
                                               chat_kind="group", username="bob", text=f"/resign #{game_id}"))
        assert [r.text for r in answer] == [t("en", "error.internal")]
        assert [r.getMessage() for r in bot_errors] == ["handler failed for test event in chat group-1"]
        bot_errors.clear()
        # The subscriber ran after the ratings (they were written) but failed: all of it rolled back.
        assert failing == [game_id]
        assert room.storage.game(game_id).status == "active"
        assert room.rating("ana") is None and room.rating("bob") is None
        room.service.app.bus._subscribers[GameFinished].remove(broken)
        room.resign("bob", game_id)
        assert room.rating("ana").games == 1
    finally:
        room.close()


def test_a_move_is_published_with_the_stored_game(tmp_path: Path):
    room = Room(tmp_path / "mv.db", [1_700_000_000.0])
    try:
        seen: list[MovePlayed] = []
        room.service.app.bus.subscribe(MovePlayed, seen.append)
        game_id = room.start("ana", "bob")
        room.move("ana", "22-18", game_id)
        assert [(e.game.id, e.game.ply, e.move, e.by_user) for e in seen] == [(game_id, 1, "22-18", "ana")]
        assert seen[0].game == room.storage.game(game_id)
    finally:
        room.close()


@pytest.mark.parametrize("config, words", [
    (ServiceConfig(), "neither"),
    (ServiceConfig(database="x.db", storage=object()), "both"),  # type: ignore[arg-type]
    (ServiceConfig(database="  "), "database"),
    (ServiceConfig(database="x.db", bot_seconds=0), "bot_seconds"),
    (ServiceConfig(database="x.db", bot_seconds=float("nan")), "bot_seconds"),
    (ServiceConfig(database="x.db", busy_timeout=-1), "busy_timeout"),
    (ServiceConfig(database="x.db", clock=5), "clock"),  # type: ignore[arg-type]
    (ServiceConfig(database="x.db", seed=1, rng=__import__("random").Random(1)), "rng or seed"),
])
def test_a_wrong_configuration_is_refused_with_the_field_named(config: ServiceConfig, words: str, tmp_path: Path,
                                                               monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=words):
        build(config)
    assert not (tmp_path / "x.db").exists()      # nothing was opened


def test_build_service_and_the_composition_root_give_a_working_service(tmp_path: Path):
    for service in (build_service(str(tmp_path / "a.db")),
                    build(ServiceConfig(database=f"sqlite:///{tmp_path / 'b.db'}", seed=3, bot_seconds=0.5))):
        try:
            replies = service.handle(ChatEvent(platform="test", chat_id="c", user_id="u", user_name="Ana",
                                               chat_kind="group", username="ana", text="/new italian"))
            assert replies and replies[0].challenge_id == 1
        finally:
            service.close()
            service.storage.close()


def test_platform_options_are_read_by_the_parser_of_typed_text():
    move = REGISTRY.lookup("move")
    assert move.typed({"move": " 22-18 ", "game": 3}) == "/move #3 22-18"
    new = REGISTRY.lookup("new")
    assert new.typed({"variant": "italian", "opponent": "bob", "move_time": "1 h", "color": None}) \
        == "/new italian @bob 1h"
    samples = {ArgKind.GAME: 7, ArgKind.USER: "bob", ArgKind.DURATION: "2h", ArgKind.LEVEL: 2, ArgKind.MOVE: "9-13",
               ArgKind.VARIANT: "spanish", ArgKind.COLOR: "white", ArgKind.LANGUAGE: "es", ArgKind.TEXT: "on"}
    for spec in REGISTRY:
        text = spec.typed({arg.name: samples[arg.kind] for arg in spec.args})
        command = parse_command(text)
        assert command is not None and command.name == spec.name, text
        assert len(command.args) == len(spec.args), text


def test_use_cases_import_no_platform_chat_layer_or_facade():
    root = Path(__file__).resolve().parents[2] / "bot" / "service" / "features"
    forbidden = ("bot.platforms", "bot.service.chat", "bot.service.service",
                 "bot.service.compose", "bot.app")
    for path in sorted(root.glob("*.py")):
        bad = sorted(m for m in imported_modules(path) if m.startswith(forbidden))
        assert not bad, (path.name, bad)
    # They know no chat either (issue 18): no catalog, no presenter, no drawing of boards, charts
    # or tables, for every module of the use cases (the games' presenters imported by a use case
    # count: they word and draw for it).
    wording = ("bot.i18n", "bot.service.chat.present", "bot.service.chat.boards", "bot.service.chat.wording",
               "renderers")
    drawing = {path.name: sorted(m for m in imported_modules(path) if m.startswith(wording))
               for path in root.glob("*.py")}
    assert {name: found for name, found in drawing.items() if found} == {}


def test_use_cases_build_no_reply_and_read_no_chat_language():
    """No use case words an answer (a Reply, a Button, a catalog line), nor reads the chat's
    language: the chat layer passes what a use case needs of it (e.g. the language that guesses a
    chat's variant) in the request."""
    import ast

    root = Path(__file__).resolve().parents[2] / "bot" / "service" / "features"
    for path in sorted(root.glob("*.py")):
        tree = ast.parse(path.read_text())
        called = {node.func.id if isinstance(node.func, ast.Name) else node.func.attr
                  for node in ast.walk(tree)
                  if isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute)}
        assert not called & {"t", "tn", "Reply", "Button"}, (path.name, called & {"t", "tn", "Reply", "Button"})
        reads = [node.lineno for node in ast.walk(tree)
                 if isinstance(node, ast.Attribute) and node.attr == "lang"
                 and isinstance(node.value, ast.Name) and node.value.id == "ctx"]
        assert not reads, (path.name, reads)


def watch_drawing(chat, monkeypatch) -> list[bool]:
    """For every board PNG drawn from now on: whether a write transaction was open in the thread
    that drew it."""
    import threading
    from contextlib import contextmanager

    from bot.service.chat import boards

    inside = threading.local()
    real_transaction = chat.storage.transaction

    @contextmanager
    def counted(*args, **kwargs):
        with real_transaction(*args, **kwargs):
            inside.depth = getattr(inside, "depth", 0) + 1
            try:
                yield
            finally:
                inside.depth -= 1

    monkeypatch.setattr(chat.storage, "transaction", counted)
    drawn: list[bool] = []
    real_png = boards.png

    def png(view):
        drawn.append(getattr(inside, "depth", 0) > 0)
        return real_png(view)

    monkeypatch.setattr(boards, "png", png)
    return drawn


def test_the_bots_move_is_drawn_outside_the_write_transaction(chat, pool, monkeypatch):
    """Boards (PNG) of a human's move and of the bot's answer are rendered while no write
    transaction is open in that thread: the database is not held for the drawing."""
    from bot.service.thinking import Thinker

    chat.use_thinker(Thinker(pool))
    drawn = watch_drawing(chat, monkeypatch)
    chat.say("ana", "/play italian white level 1")
    game_id = chat.storage.find_games(chat.platform)[0].id
    chat.say("ana", f"/m #{game_id} 22-18")
    assert chat.service.settle(20)
    assert len(chat.storage.moves(game_id)) == 2            # the bot answered
    chat.service.pending_messages(chat.platform)            # the bot's board is drawn when delivered
    assert len(drawn) >= 3 and not any(drawn), drawn         # /play's board, the move's, the bot's


def test_a_loss_on_time_is_drawn_outside_the_write_transaction(chat, monkeypatch):
    chat.say("ana", "/new italian white 5m")
    chat.say("bob", "/accept")
    game_id = chat.storage.find_games(chat.platform)[0].id
    drawn = watch_drawing(chat, monkeypatch)
    chat.now[0] += 301
    assert chat.service.run_due(chat.platform) == 1
    assert chat.storage.game(game_id).result_reason == "time"
    [reply] = [item.reply for item in chat.service.pending_messages(chat.platform)]
    assert reply.image is not None and reply.game_id == game_id
    assert drawn == [False]


def test_a_daily_post_is_drawn_outside_the_write_transaction(chat, monkeypatch):
    chat.say("ana", "/daily on", admin=True)
    drawn = watch_drawing(chat, monkeypatch)
    chat.now[0] = chat.service.next_daily_wakeup(chat.platform)
    assert chat.service.run_due(chat.platform) == 1
    [post] = [item.reply for item in chat.service.pending_messages(chat.platform)]
    assert post.image is not None and post.post_id is not None and post.buttons
    assert drawn == [False]


def test_a_move_is_stored_as_drawn_before_the_write(chat):
    """``after_move`` (what the bot's message is drawn from) is the record the write leaves, for
    a move that goes on and for one that ends the game."""
    games = chat.service.app.games
    chat.say("ana", "/new italian white")
    chat.say("bob", "/accept")
    row = chat.storage.find_games(chat.platform)[0]
    for move, by in (("22-18", "ana"), ("11-15", "bob")):
        game = games.load(row)
        played = game.play(move)
        expected = games.after_move(row, game, played, chat.now[0], None, chat.now[0] + 600)
        row = games.write_move(row, game, played, by, chat.now[0], None, chat.now[0] + 600)
        assert row == expected
    # A game that the next move ends (White takes Black's last man).
    gid = chat.storage.create_game({
        "platform": chat.platform, "chat_id": chat.chat_id, "variant": "italian", "start_fen": "W:W22:B18",
        "white_id": "ana", "white_name": "Ana", "black_id": "bob", "black_name": "Bob", "fen": "W:W22:B18",
        "move_seconds": 600, "deadline_at": chat.now[0] + 600, "created_at": chat.now[0]})
    row = chat.storage.game(gid)
    game = games.load(row)
    played = game.play("22x13")
    assert game.result is not None
    expected = games.after_move(row, game, played, chat.now[0], None, chat.now[0] + 600)
    row = games.write_move(row, game, played, "ana", chat.now[0], None, chat.now[0] + 600)
    assert row == expected and row.status == "finished"
