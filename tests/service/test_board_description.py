"""The position in words (issue 34, readable without sight): whose turn, then each side's men and
kings by square, in the chat's language from the catalogs; the chat's board pictures carry it
(``Reply.alt``, through the real service), the web board's state and ply JSON give it, and it is
kept in an outbox row."""

from __future__ import annotations

import random
import re

import pytest

from bot.i18n import LANGUAGES, t
from bot.rules import Position
from bot.service.chat.describe import describe, describe_pieces, with_alt
from bot.service.events import BoardSpec, Rendered, Reply


def read_back(text: str, lang: str) -> tuple[str, dict[int, str]]:
    """Whose turn and the pieces a description names, read with the catalog's words."""
    turn = next(side for side in "WB" if text.startswith(t(lang, f"describe.turn.{side}")))
    out: dict[int, str] = {}
    for side, man, king in (("W", "w", "W"), ("B", "b", "B")):
        head = t(lang, "describe.side", side=t(lang, f"describe.side.{side}"), pieces="")[:-1]
        part = text.split(head, 1)[1].split(".", 1)[0]
        groups = part.split(t(lang, "describe.sep"))
        if groups == [t(lang, "describe.none")]:
            continue
        for group in groups:
            men, kings = t(lang, "describe.men", squares=""), t(lang, "describe.kings", squares="")
            code = man if group.startswith(men) else king
            assert group.startswith(men) or group.startswith(kings), group
            squares = [int(n) for n in re.findall(r"\d+", group)]
            assert squares == sorted(squares), group
            out.update({n: code for n in squares})
    return turn, out


def played(variant: str, seed: int, plies: int) -> Position:
    rng = random.Random(seed)
    pos = Position.start(variant)
    for _ in range(plies):
        legal = pos.legal_moves()
        if not legal:
            break
        pos = pos.play(rng.choice(legal))
    return pos


def test_the_first_position_in_three_languages() -> None:
    pos = Position.start("spanish")
    assert describe("en", pos) == ("White to move. White: men on 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12. "
                                   "Black: men on 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32.")
    assert describe("es", pos).startswith("Juegan las blancas. Blancas: peones en 1, 2, 3,")
    assert describe("it", pos).startswith("Muove il Bianco. Bianco: pedine su 1, 2, 3,")


@pytest.mark.parametrize("variant", ["spanish", "italian", "triestina"])
@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_piece_is_named_on_its_square_in_played_positions(variant: str, lang: str) -> None:
    kings = 0
    for seed in range(30):
        pos = played(variant, seed, 40 + seed * 3)
        turn, pieces = read_back(describe(lang, pos), lang)
        assert turn == pos.turn.value
        assert pieces == pos.pieces()
        kings += sum(code in "WB" for code in pos.pieces().values())
    assert kings, "no position with a king was described"


def test_a_side_without_pieces_and_kings_only() -> None:
    text = describe_pieces("en", {5: "W", 1: "W", 20: "w"}, "B")
    assert text == "Black to move. White: men on 20; kings on 1, 5. Black: no pieces."


def test_a_board_reply_gets_its_position_in_words() -> None:
    pos = played("italian", 3, 30)
    image = Rendered(b"png", BoardSpec("italian", pos.fen()))
    reply = with_alt("it", Reply("testo", image=image))
    assert reply.alt == describe("it", pos)
    # Kept in the outbox: a row read back says the same.
    assert Reply.from_json(reply.to_json(), render=_Render()).alt == reply.alt
    # A picture not drawn from a position (a chart) gets none; one already described is kept.
    assert with_alt("en", Reply("chart", image=b"png")).alt is None
    assert with_alt("en", Reply("x", image=image, alt="kept")).alt == "kept"


class _Render:
    def picture(self, spec: object) -> bytes:
        return b"png"

    def text(self, spec: object) -> str:
        return ""


def test_the_chat_board_carries_it(chat) -> None:
    game = chat.new_game(variant="spanish")
    chat.say("ana", "/lang es", admin=True)
    boards = [r for r in chat.say("ana", "/board") if r.image is not None]
    assert boards and boards[0].alt == describe("es", chat.position(game))
    moved = [r for r in chat.say("ana", "/m 10-14") if r.image is not None]
    assert moved and moved[0].alt == describe("es", chat.position(game))
    assert moved[0].alt.startswith("Juegan las negras.")


def test_the_web_state_and_ply_give_it(chat) -> None:
    game = chat.new_game(variant="spanish")
    chat.say("ana", "/m 10-14")
    web = chat.service.web
    state = web.state(game, None, "it")
    assert state is not None and state.to_json()["description"] == describe("it", chat.position(game))
    record = web.record(game)
    assert record is not None
    assert record.at(0, "en")["description"] == describe("en", Position.start("spanish"))
    assert record.at(1, "es")["description"] == describe("es", chat.position(game))
    assert "description" not in record.at(1)          # without a language, as before
    assert record.to_json("en")["start"]["description"] == describe("en", Position.start("spanish"))
