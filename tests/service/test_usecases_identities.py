"""Use cases take identities and typed requests, never the chat message (issue 31, item 1).

The source checks read ``bot/service/features`` with ``ast``: no parameter of a use case is a chat
event (or the chat layer's ``Ctx``), nothing reads a message's reply target, start link, button
action, chat kind or whisper capability, and no ``ContextVar`` hands state to the chat's or the web
board's handlers.  The calls then drive the real service (real SQLite file, real rules) with a
``Caller`` built by hand, as a scheduler or a web page would, and compare with what the chat's own
button gives."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

from harness import GROUP, PLATFORM

from bot.service.chat import presenters
from bot.service.chat.registry import ButtonKind, action
from bot.service.domain import MovePlayed
from bot.service.features.identity import Caller, Player, Where
from bot.service.features.results import MoveIllegal, MoveMade
from bot.service.features.results_games import PiecePicked, Refused

REPO = Path(__file__).resolve().parents[2]
FEATURES = REPO / "bot" / "service" / "features"
# What only a chat message carries (ChatEvent's fields): a use case is given none of them.
CHAT_FIELDS = {"reply_to", "private_link", "action", "chat_kind", "can_whisper", "event"}
CHAT_TYPES = {"Ctx", "ChatEvent", "ButtonKind", "Button", "Reply"}


def signatures_and_reads(path: Path) -> list[str]:
    """Where a module's functions take a chat type or read a chat message's field (a typed
    request's own ``action`` word, /daily on and /puzzle history, is not a message's)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for arg in [*node.args.args, *node.args.kwonlyargs]:
                names = {n.id for n in ast.walk(arg.annotation)
                         if isinstance(n, ast.Name)} if arg.annotation is not None else set()
                names |= {n.value for n in ast.walk(arg.annotation) if isinstance(n, ast.Constant)
                          and isinstance(n.value, str)} if arg.annotation is not None else set()
                if names & CHAT_TYPES or any(t in name for name in names for t in CHAT_TYPES if "|" in name):
                    found.append(f"{path.name}:{node.lineno}: {node.name}({arg.arg}: {ast.unparse(arg.annotation)})")
        elif isinstance(node, ast.Attribute) and node.attr in CHAT_FIELDS:
            owner = ast.unparse(node.value)
            if not (node.attr == "action" and owner == "request"):
                found.append(f"{path.name}:{node.lineno}: reads {owner}.{node.attr}")
    return found


def test_no_use_case_takes_a_chat_message_or_reads_one():
    found = [line for path in sorted(FEATURES.glob("*.py")) for line in signatures_and_reads(path)]
    assert not found, "use cases that know the chat message:\n" + "\n".join(found)


def test_the_check_sees_a_use_case_that_takes_the_message(tmp_path: Path):
    """The scan is no empty check: a Ctx parameter and each message field read are caught."""
    source = tmp_path / "chatty.py"
    source.write_text("def f(ctx: Ctx, ev: ChatEvent | None, k: ButtonKind):\n"
                      "    return ctx.event.reply_to, ev.private_link, ev.action, ev.chat_kind, ev.can_whisper\n"
                      "def g(request):\n    return request.action\n", encoding="utf-8")
    assert len(signatures_and_reads(source)) == 3 + 6


def test_no_context_variable_passes_state_to_handlers():
    """The chat's web links and the web board's action in progress are passed explicitly."""
    found = []
    for path in sorted((REPO / "bot" / "service").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                found += [f"{path.relative_to(REPO)}:{node.lineno}" for n in names if n == "contextvars"]
    assert not found, found


def caller_of(chat, user: str, *, at: float | None = None, origin: object | None = None) -> Caller:
    """A caller built by hand, as a page or a scheduler would: no chat event anywhere."""
    now = chat.now[0] if at is None else at
    record = chat.storage.ensure_chat(PLATFORM, GROUP, "group", now)
    return Caller(Player(PLATFORM, user, user.capitalize(), user), Where(PLATFORM, GROUP), now, now, record, origin)


def test_a_move_is_played_with_identities_and_squares_as_the_buttons_play_it(chat):
    """Play.pick_piece and Play.choose_destination are what the board's buttons decode to: called
    directly they give the same answers, and the move is stored as the button stores it."""
    play = chat.service.app.play
    gid = chat.new_game("ana", "bob")
    picked = play.pick_piece(caller_of(chat, "ana"), gid, 0, 22)
    assert isinstance(picked, PiecePicked) and picked.square == 22
    # Not Bob's turn: said to him alone, nothing changes.
    assert play.pick_piece(caller_of(chat, "bob"), gid, 0, 22) == Refused(
        "err.not_your_turn", chat.game(gid), private=True)
    made = play.choose_destination(caller_of(chat, "ana"), gid, 0, 22, 18)
    assert isinstance(made, MoveMade) and str(made.played) == "22-18"
    # How the move came in is the chat layer's to know: presented as a press, its board replaces
    # the pressed one (issue 31: no presentation hint in the use case's result).
    assert "via_button" not in {f.name for f in dataclasses.fields(MoveMade)}
    assert presenters.replies("en", made, via_button=True)[0].replaces_board
    assert not presenters.replies("en", made)[0].replaces_board
    assert [m.notation for m in chat.moves(gid)] == ["22-18"]
    # The same press again (a double tap) repeats the answer; a board of another ply is stale.
    again = chat.press("ana", action(ButtonKind.DESTINATION, gid, 0, 22, 18))
    assert again and [m.notation for m in chat.moves(gid)] == ["22-18"]
    stale = play.choose_path(caller_of(chat, "bob"), gid, 0, 0)
    assert isinstance(stale, Refused) and stale.reason == "button.stale"


def test_a_path_is_a_move_of_its_own_and_a_capture_with_two_paths_is_offered(chat):
    """Play.play_path takes the web board's tapped path as it is (at the ply the page showed); a
    path that is no legal move goes to the rules, which say why, and nothing is stored."""
    play = chat.service.app.play
    gid = chat.new_game("ana", "bob")
    made = play.play_path(caller_of(chat, "ana"), gid, (23, 19))
    assert isinstance(made, MoveMade) and str(made.played) == "23-19"
    assert play.play_path(caller_of(chat, "bob"), gid, (10, 14), ply=0) == Refused("move.stale")
    made = play.play_path(caller_of(chat, "bob"), gid, (10, 14), ply=1)
    assert isinstance(made, MoveMade) and chat.game(gid).ply == 2
    refused = play.play_path(caller_of(chat, "ana"), gid, (21, 12))
    assert isinstance(refused, MoveIllegal) and refused.typed == "21-12" and chat.game(gid).ply == 2


def test_the_origin_of_a_request_comes_back_in_its_domain_events(chat):
    """What the web board used a ContextVar for: the request's origin, handed back explicitly."""
    app = chat.service.app
    seen: list[MovePlayed] = []
    app.bus.subscribe(MovePlayed, seen.append)
    gid = chat.new_game("ana", "bob")
    marker = object()
    app.play.play_path(caller_of(chat, "ana", origin=marker), gid, (22, 18))
    chat.say("bob", "/m 10-14")
    assert [(e.move, e.origin is marker) for e in seen] == [("22-18", True), ("10-14", False)]


def test_rules_replying_to_a_board_are_answered_while_the_database_is_away(chat, monkeypatch):
    """The chat layer reads which board a message replies to; while the database is away that
    read fails, and /rules (no stored data) is still answered, as without a reply."""
    from bot.i18n import t
    from bot.storage import StorageUnavailable

    gid = chat.new_game("ana", "bob", "spanish")
    chat.service.remember_board(PLATFORM, GROUP, "m-1", gid)
    # Up: the rules of the game whose board is replied to.
    assert chat.text("ana", "/rules", reply_to="m-1") == chat.text("ana", "/rules spanish")

    def away(*args: object, **kwargs: object) -> None:
        raise StorageUnavailable("the database server is away")

    store = chat.storage
    for name in ("ensure_chat", "chat", "game_of_message", "post_of_message", "game", "active_games",
                 "subscription", "find_games", "save_player", "player"):
        monkeypatch.setattr(store, name, away)
    plain = chat.text("ana", "/rules")
    replied = chat.text("ana", "/rules", reply_to="m-1")
    assert plain and t("en", "error.storage_unavailable") not in plain
    assert replied == plain
