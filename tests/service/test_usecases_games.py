"""The games' use cases know no chat (issue 18): playing, the board, draws, resignation, PDN and
/play return typed results that ``bot.service.chat.present_games`` words; they import no catalog and
no drawing, and return no Reply.  Real service, SQLite file and rules; only the clock is fixed."""

from __future__ import annotations

import ast
import typing
from pathlib import Path

import pytest
from harness import PLATFORM
from source_checks import imports_of

from bot.i18n import t
from bot.service.chat.commands import BadArgument, parse_new, parse_play
from bot.service.chat.layer import Ctx
from bot.service.features.identity import Caller
from bot.service.features.play import Play
from bot.service.features.results import GameStarted
from bot.service.features.results_games import (
    BoardShown,
    BotDrawAnswer,
    BotGameStarted,
    ChallengeChoice,
    ChallengeDeclined,
    ChallengeOpened,
    ChallengeRef,
    ChallengesCancelled,
    DrawOffered,
    GameEnded,
    GameRef,
    GamesPage,
    NoGame,
    PdnText,
    Refused,
    ResignAsked,
    TimedOut,
)
from bot.service.features.results_stats import Rematched, RematchRefused

FEATURES = Path(__file__).resolve().parents[2] / "bot" / "service" / "features"
# Modules whose answers to the caller are all typed (no wording at all in them).
CHATLESS = ("play.py",)
# Methods whose answers are typed (module -> names).  Play.move is not here: a move answering a
# puzzle is still worded by the puzzles' use case (Puzzles.answer_puzzle).
TYPED = {
    "play.py": ("board", "pdn", "draw", "resign", "confirm_resign", "accept_draw", "show_pieces", "pick_piece",
                "choose_destination", "choose_path", "play_path"),
    "opponent.py": ("start_game", "answer_draw"),
    "challenges.py": ("open_challenge", "accept", "decline", "cancel", "list_games"),
    "games.py": ("resolve",),
    "history.py": ("rematch",),
}
WORDING = ("bot.i18n", "bot.service.chat.boards", "bot.service.chat.present", "renderers")


def test_playing_imports_no_wording_and_builds_no_reply():
    for name in CHATLESS:
        tree = ast.parse((FEATURES / name).read_text())
        assert not [m for m in imports_of(tree) if m.startswith(WORDING)], name
        calls = {node.func.id for node in ast.walk(tree)
                 if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
        assert not calls & {"t", "tn", "Reply", "Button"}, (name, calls & {"t", "tn", "Reply", "Button"})
        # The chat's language is the presenter's business.
        reads = [node.lineno for node in ast.walk(tree)
                 if isinstance(node, ast.Attribute) and node.attr == "lang"
                 and isinstance(node.value, ast.Name) and node.value.id == "ctx"]
        assert not reads, (name, reads)


def test_the_games_answers_are_typed_not_replies():
    for name, methods in TYPED.items():
        tree = ast.parse((FEATURES / name).read_text())
        found = {node.name: node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
        for method in methods:
            returns = found[method].returns
            assert returns is not None, (name, method)
            assert "Reply" not in ast.unparse(returns), (name, method, ast.unparse(returns))
    # And the annotation says what comes back: none of Play's chat answers is a Reply.
    hints = typing.get_type_hints(Play.board)
    assert "Reply" not in str(hints["return"])


def ctx_of(chat, user: str) -> Caller:
    event = chat.event(user, text="/x")
    row = chat.storage.ensure_chat(PLATFORM, event.chat_id, event.chat_kind, chat.now[0])
    return Ctx(event, "en", row, chat.now[0]).caller


def test_playing_returns_what_happened(chat):
    app = chat.service.app
    assert app.play.board(ctx_of(chat, "ana"), GameRef()) == NoGame("none")
    gid = chat.new_game("ana", "bob")
    shown = app.play.board(ctx_of(chat, "eve"), GameRef())
    assert isinstance(shown, BoardShown) and shown.game.id == gid
    assert app.play.board(ctx_of(chat, "ana"), GameRef(gid + 5)) == NoGame("unknown", gid + 5)
    pdn = app.play.pdn(ctx_of(chat, "ana"), GameRef())
    assert isinstance(pdn, PdnText) and pdn.game_id == gid and '[White "Ana"]' in pdn.text
    offered = app.play.draw(ctx_of(chat, "ana"), GameRef())
    assert isinstance(offered, DrawOffered) and offered.offerer == "Ana" and offered.color == "W"
    assert app.play.draw(ctx_of(chat, "ana"), GameRef()) == Refused("draw.already")
    asked = app.play.resign(ctx_of(chat, "bob"), GameRef())
    assert isinstance(asked, ResignAsked) and asked.asker == "Bob"
    assert chat.game(gid).status == "active"
    ended = app.play.resign(ctx_of(chat, "bob"), GameRef())
    assert isinstance(ended, GameEnded) and ended.game.status == "finished" and ended.result.winner == "W"
    # The chat still gets the words and the board from the presenter.
    replies = chat.say("ana", "/board")
    assert replies[0].image is not None and f"#{gid}" in replies[0].text


def test_the_bot_opponent_returns_what_happened(chat):
    app = chat.service.app
    started = app.opponent.start_game(ctx_of(chat, "ana"), parse_play(["italian", "l1", "white"]), "en")
    assert isinstance(started, BotGameStarted) and started.player == "Ana" and started.color == "white"
    assert started.game.bot_level == 1
    again = app.opponent.start_game(ctx_of(chat, "ana"), parse_play(["italian"]), "en")
    assert again == Refused("play.already", values=(("id", started.game.id),))
    answer = app.play.draw(ctx_of(chat, "ana"), GameRef())
    # At the start the bot stands level with men on the board: it plays on.
    assert answer == BotDrawAnswer(started.game, None)
    # Words the parser refuses never reach the use case: the chat layer says what was wrong.
    with pytest.raises(BadArgument) as refused:
        parse_play(["l9"])
    err = refused.value
    assert chat.text("bob", "/play l9") == t("en", err.key, **err.values) + " " + t("en", "play.usage")


def test_challenges_return_what_happened(chat):
    app = chat.service.app
    assert app.challenges.list_games(ctx_of(chat, "ana")) == Refused("games.empty")
    opened = app.challenges.open_challenge(ctx_of(chat, "ana"), parse_new(["italian", "white"]), "en")
    assert isinstance(opened, ChallengeOpened) and opened.challenge.challenger_name == "Ana"
    assert app.challenges.accept(ctx_of(chat, "ana"), ChallengeRef()) == Refused("accept.only_own",
                                                                     values=(("ids", f"#{opened.challenge.id}"),))
    targeted = app.challenges.open_challenge(ctx_of(chat, "ana"), parse_new(["@bob"]), "en")
    assert isinstance(targeted, ChallengeOpened)
    listed = app.challenges.list_games(ctx_of(chat, "eve"))
    assert isinstance(listed, GamesPage) and len(listed.challenges) == 2 and listed.games == ()
    choice = app.challenges.decline(ctx_of(chat, "eve"), ChallengeRef())
    assert choice == Refused("decline.none")
    declined = app.challenges.decline(ctx_of(chat, "bob"), ChallengeRef())
    assert isinstance(declined, ChallengeDeclined) and declined.challenge.id == targeted.challenge.id
    third = app.challenges.open_challenge(ctx_of(chat, "carl"), parse_new([]), "en")
    assert isinstance(third, ChallengeOpened)
    which = app.challenges.accept(ctx_of(chat, "bob"), ChallengeRef())
    assert isinstance(which, ChallengeChoice) and which.reason == "accept.which" and len(which.challenges) == 2
    started = app.challenges.accept(ctx_of(chat, "bob"), ChallengeRef(opened.challenge.id))
    assert isinstance(started, GameStarted) and started.game.white_id == "ana"
    cancelled = app.challenges.cancel(ctx_of(chat, "carl"), ChallengeRef())
    assert cancelled == ChallengesCancelled((third.challenge.id,), ())


def test_the_rematch_button_says_what_it_became(chat):
    """Typed: a challenge to the opponent with the colours swapped, refused when pressed again,
    and the opponent's press accepts it (the chat layer words each as /new and /accept would)."""
    app = chat.service.app
    game = chat.new_game("ana", "bob", "spanish")
    chat.say("bob", "/resign")
    chat.say("bob", "/resign")
    assert chat.game(game).status == "finished"
    opened = app.history.rematch(ctx_of(chat, "ana"), game, "en")
    assert isinstance(opened, Rematched) and opened.how == "challenge"
    assert isinstance(opened.outcome, ChallengeOpened)
    ch = opened.outcome.challenge
    assert (ch.challenger_id, ch.color, ch.variant, ch.target_username) == ("ana", "black", "spanish", "bob")
    again = app.history.rematch(ctx_of(chat, "ana"), game, "en")
    assert again == RematchRefused("open", ch.id)
    assert app.history.rematch(ctx_of(chat, "eve"), game, "en") == \
        RematchRefused("not_player", game)
    accepted = app.history.rematch(ctx_of(chat, "bob"), game, "en")
    assert isinstance(accepted, Rematched) and accepted.how == "accept"
    assert isinstance(accepted.outcome, GameStarted) and accepted.outcome.game.white_id == "bob"


def test_the_rematch_against_the_bot_is_a_bot_game(chat):
    chat.say("ana", "/play italian level 2 white 2h")
    game = chat.rows("games")[-1].id
    chat.resign("ana")
    again = chat.service.app.history.rematch(ctx_of(chat, "ana"), game, "en")
    assert isinstance(again, Rematched) and again.how == "bot"
    assert isinstance(again.outcome, BotGameStarted) and again.outcome.color == "black"
    assert (again.outcome.game.bot_level, again.outcome.game.move_seconds) == (2, 7200)
    assert chat.service.settle(20)              # the bot, white, plays first
    assert len(chat.storage.moves(again.outcome.game.id)) == 1


def test_a_button_on_a_game_out_of_time_ends_it_and_tells_only_the_presser(chat):
    from bot.service.chat.registry import ButtonKind, action

    gid = chat.new_game("ana", "bob")
    row = chat.game(gid)
    assert row.deadline_at is not None
    chat.now[0] = row.deadline_at + 1
    timed_out = chat.service.app.play.board(ctx_of(chat, "ana"), GameRef(gid))
    assert isinstance(timed_out, TimedOut) and not timed_out.private
    assert timed_out.game.status == "finished" and timed_out.result.reason == "time"
    gid = chat.new_game("ana", "bob")
    chat.now[0] = chat.game(gid).deadline_at + 1
    replies = chat.press("ana", action(ButtonKind.SELECT, gid, 0, 22))
    assert len(replies) == 1 and replies[0].private and replies[0].image is not None
    assert chat.game(gid).status == "finished"


def test_a_chat_that_speaks_spanish_plays_spanish_draughts_unless_it_says_otherwise(chat):
    """The chat layer passes the chat's language to the use cases that guess its variant (they no
    longer read it from the context): /new, /play, /rules and /settings all guess Spanish."""
    from bot.service.chat.wording import variant_name

    chat.say("ana", "/lang es", admin=True)
    # Before any game here says what the chat plays.
    assert variant_name("es", "spanish") in chat.text("eve", "/rules").lower()
    assert variant_name("es", "spanish") in chat.text("eve", "/settings").lower()
    cid = chat.challenge("ana")
    assert chat.storage.challenge(cid).variant == "spanish"
    chat.say("bob", "/play white")
    assert chat.rows("games")[-1].variant == "spanish" and chat.rows("games")[-1].bot_level is not None
    chat.say("ana", "/settings variant italian", admin=True)
    assert chat.storage.challenge(chat.challenge("eve")).variant == "italian"
