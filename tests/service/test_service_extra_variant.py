"""A variant declared only in ``bot.rules.VARIANTS`` (and its two catalog lines per language) is a
variant of the whole bot: chosen, played by people and by the bot, drawn, exported and re-read as
PDN, analysed, explained and listed in /help, with no other module changed.

The fixture registers "mini" (Italian rules on 6x6, two rows of men each) for one test and takes
it away after; everything else (the chat's variant words, the lists in help and usage lines, the
PDN tags, the engine's weights, the board picture) must follow from the table.
"""

from __future__ import annotations

import pytest
from catalog_text import pattern

from bot.i18n import LANGUAGES, catalog, t
from bot.rules import VARIANTS, CapturePriority, Game, Position, Variant, read_pdn
from bot.service.thinking import Thinker

PNG = b"\x89PNG\r\n\x1a\n"
SETTLE = 30.0

MINI = Variant(id="mini", size=6, flying_kings=False, men_capture_kings=False,
               priority=CapturePriority.ITALIAN, no_progress_plies=80, numbering="italian",
               pdn_gametype="22,W,6,6,N2,1", start_rows=2)
# The only catalog lines a new variant needs: its name and its rules.
TEXTS = {
    "en": {"variant.mini": "Mini draughts (6x6)", "rules.mini": "Mini draughts: Italian rules on a 6x6 board."},
    "es": {"variant.mini": "damas mini (6x6)", "rules.mini": "Damas mini: reglas italianas en un tablero de 6x6."},
    "it": {"variant.mini": "dama mini (6x6)", "rules.mini": "Dama mini: regole italiane su una damiera 6x6."},
}


@pytest.fixture
def mini(monkeypatch):
    monkeypatch.setitem(VARIANTS, MINI.id, MINI)
    for lang in LANGUAGES:
        for key, text in TEXTS[lang].items():
            monkeypatch.setitem(catalog(lang), key, text)
    return MINI


@pytest.fixture
def threads(chat, pool):
    """The harness with the engine in threads (the bot's moves and /analysis)."""
    chat.use_thinker(Thinker(pool))
    yield chat
    assert chat.service.settle(SETTLE)


def outbox(chat) -> list:
    return [item.reply for item in chat.service.pending_messages(chat.platform, limit=1000)]


def test_a_game_of_the_new_variant_is_played_drawn_exported_and_read_back(chat, mini):
    game_id = chat.new_game("ana", "bob", variant="mini")
    assert chat.game(game_id).variant == "mini"
    assert chat.position(game_id) == Position.start(MINI)
    moves: list[str] = []
    for _ in range(6):
        pos = chat.position(game_id)
        move = str(pos.legal_moves()[len(moves) % len(pos.legal_moves())])
        replies = chat.say(chat.to_move(game_id), f"/m #{game_id} {move}")
        moves.append(move)
        # Every move is answered with the 6x6 board.
        assert any(r.image and r.image.startswith(PNG) for r in replies), [r.text for r in replies]
    assert [m.notation for m in chat.moves(game_id)] == moves
    [reply] = chat.say("ana", f"/pdn #{game_id}")
    name, data = reply.document
    assert name == f"game-{game_id}.pdn"
    text = data.decode("utf-8")
    assert '[Variant "mini"]' in text and '[GameType "22,W,6,6,N2,1"]' in text
    [back] = read_pdn(text)
    assert back.variant.id == "mini"
    assert [str(m) for m in back.moves] == moves
    assert back.position.fen() == chat.game(game_id).fen


def test_the_new_variant_is_named_listed_and_explained_in_every_language(chat, mini):
    for lang, intro, words, choice in [
        ("en", "Spanish, Italian, Triestina (Italian rules on 10x10) and Mini draughts (6x6).",
         "spanish|italian|triestina|mini", "spanish, italian, triestina or mini."),
        ("es", "españolas, italianas, triestinas (reglas italianas en 10x10) y damas mini (6x6).",
         "española|italiana|triestina|mini", "española, italiana, triestina o mini."),
        ("it", "spagnola, italiana, triestina (regole italiane su 10x10) e dama mini (6x6).",
         "spagnola|italiana|triestina|mini", "spagnola, italiana, triestina o mini."),
    ]:
        chat.say("ana", f"/lang {lang}", admin=True)
        help_text = chat.text("ana", "/help")
        assert help_text.splitlines()[0].endswith(intro)
        assert f"[{words}]" in help_text
        assert chat.text("ana", "/rules mini") == TEXTS[lang]["rules.mini"]
        assert chat.text("ana", "/rules checkers").endswith(choice)
        assert f" {words} " in chat.text("ana", "/settings", admin=True)
        assert f" {words} " in chat.text("ana", "/settings colour pink", admin=True)
    chat.say("ana", "/settings variant mini", admin=True)
    assert chat.storage.chat(chat.platform, chat.chat_id).variant == "mini"
    # The chat's default variant is the one /new without a variant opens.
    cid = chat.challenge("ana", "white")
    assert chat.storage.challenge(cid).variant == "mini"


def test_the_bot_plays_and_analyses_the_new_variant(threads, mini):
    chat = threads
    chat.say("ana", "/play mini white level 2")
    [game] = chat.rows("games")
    assert game.variant == "mini" and game.bot_level == 2
    for _ in range(3):
        pos = chat.position(game.id)
        if chat.game(game.id).status != "active" or not pos.white:
            break
        chat.say("ana", f"/m #{game.id} {pos.legal_moves()[0]}")
        assert chat.service.settle(SETTLE)
        chat.service.tick()
    plies = chat.moves(game.id)
    assert len(plies) >= 2 and plies[1].by_user != "ana"     # the bot answered
    replayed = Game(MINI)
    for m in plies:
        replayed.play(m.notation)
    chat.say("ana", f"/resign #{game.id}")
    chat.say("ana", f"/resign #{game.id}")
    assert chat.game(game.id).status == "finished"
    assert pattern("en", "analysis.started", id=game.id).match(chat.text("ana", f"/analysis #{game.id}"))
    assert chat.service.settle(SETTLE)
    [report] = [r for r in outbox(chat) if pattern("en", "analysis.title", id=game.id).match(r.text)]
    assert report.image is not None and report.image.startswith(PNG)
    assert read_pdn(report.document[1].decode("utf-8"))[0].variant.id == "mini"
    assert t("en", "variant.mini") == "Mini draughts (6x6)"
