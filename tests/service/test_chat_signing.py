"""Deep-link signing lives in the chat layer (issue 31, item 1): an inline offer's Accept button and
a puzzle post's ``/start p<post>_<pass>`` link are signed and checked by ``bot.service.chat.signing``;
the use cases are given an offer already found genuine and a pass already checked.

The signatures are byte-identical to the ones the use cases made before the move, so links posted
before keep working: the expected values below were computed by that earlier code (``Challenges.
offer_signature`` and ``Puzzles._signature``) with the same fixed secrets, before it was moved."""

from __future__ import annotations

import ast
import sqlite3
from pathlib import Path

import pytest
from harness import PLATFORM, T0, ChatHarness

from bot.i18n import t
from bot.service.chat.links import offer_action
from bot.service.chat.signing import LinkSigner
from bot.service.features.challenges import InlineOffer

REPO = Path(__file__).resolve().parents[2]
SECRET = bytes.fromhex("00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff")
ASCII_SECRET = b"0123456789abcdef0123456789abcdef"
TG_LINK = "https://t.me/Bot?start={payload}"


@pytest.mark.parametrize(("secret", "offer", "expected"), [
    (ASCII_SECRET, InlineOffer("telegram", "42", "italian", "white", "it", 29_000_000, "a1b2c"), "bHiguqozPPS8"),
    (SECRET, InlineOffer("test", "ana", "italian", "white", "it", 29_000_000, "a1b2c"), "Br4vqXB05wJr"),
    (SECRET, InlineOffer("telegram", "42", "russian", "black", "es", 29_123_456, "zz9"), "gRg1QD5oUSSu"),
    (SECRET, InlineOffer("test", "ana", "italian", "white", "en", 28_333_333, "a1b2c"), "bt6JwAIaeqmu"),
    (SECRET, InlineOffer("test", "42", "italian", "white", "en", 28_333_333, "a1b2c"), "XhwWzSwohQb2"),
])
def test_an_offer_is_signed_as_before_the_move(secret: bytes, offer: InlineOffer, expected: str) -> None:
    assert LinkSigner(secret).offer_signature(offer) == expected


@pytest.mark.parametrize(("secret", "platform", "post", "user", "expected"), [
    (ASCII_SECRET, "telegram", 7, "42", "HPMOviAGKu-BNA2X"),
    (ASCII_SECRET, "discord", 123456, "555000111", "c5xhzdIqQhdO10ZD"),
    (SECRET, "test", 1, "ana", "zZioQCqjmmc1un2C"),
    (SECRET, "telegram", 7, "42", "V8ImdN73xDR5xULC"),
])
def test_a_puzzle_pass_is_signed_as_before_the_move(secret: bytes, platform: str, post: int, user: str,
                                                     expected: str) -> None:
    signer = LinkSigner(secret)
    assert signer.puzzle_pass(platform, post, user) == expected
    assert signer.genuine_pass(platform, post, user, expected)
    assert not signer.genuine_pass(platform, post, "someone else", expected)


def test_a_verified_offer_is_only_one_whose_terms_are_unaltered() -> None:
    signer = LinkSigner(SECRET)
    offer = InlineOffer("test", "ana", "italian", "white", "it", 29_000_000, "a1b2c")
    verified = signer.verify_offer(offer, "Br4vqXB05wJr")
    assert verified is not None and verified.offer == offer and verified.stamp == "Br4vqXB05wJr"
    assert signer.verify_offer(InlineOffer("test", "ana", "italian", "black", "it", 29_000_000, "a1b2c"),
                               "Br4vqXB05wJr") is None
    unknown = InlineOffer("test", "ana", "nosuch", "white", "it", 29_000_000, "a1b2c")
    assert signer.verify_offer(unknown, signer.offer_signature(unknown)) is None


def test_the_use_cases_sign_and_check_nothing() -> None:
    """No use case computes or compares a signature: no HMAC, no digest, no link secret."""
    found = []
    for path in sorted((REPO / "bot" / "service" / "features").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
        found += [f"{path.name}: imports {m}" for m in sorted(imported & {"hmac", "hashlib"})]
        found += [f"{path.name}: reads the link secret" for _ in [1] if "link_secret" in text]
    assert found == []


# -- through the service, on a database whose link secret is the fixed one ----------------------------------

@pytest.fixture
def room(tmp_path: Path):
    path = tmp_path / "signing.db"
    first = ChatHarness(path, [T0])
    first.storage.close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value=? WHERE key='link_secret'", (SECRET.hex(),))
    harness = ChatHarness(path, [T0])
    yield harness
    harness.storage.close()


def test_a_puzzle_link_posted_before_the_move_still_opens_the_puzzle(room: ChatHarness) -> None:
    """Ana's /puzzle in a group that can show nothing to her alone waits in her private chat: its
    link carries the pass the earlier code made, and that very link opens it."""
    waiting = room.say("ana", "/puzzle italian", can_whisper=False, private_link=TG_LINK)
    (post,) = room.storage.personal_posts(PLATFORM, "ana", 1)
    assert post.id == 1
    assert TG_LINK.format(payload="p1_zZioQCqjmmc1un2C") in "\n".join(r.text for r in waiting)
    opened = room.say("ana", "/start p1_zZioQCqjmmc1un2C", chat="ana-dm", kind="private")
    assert opened[0].post_id == 1 and opened[0].image is not None
    # The same link is Ana's alone.
    assert room.text("bob", "/start p1_zZioQCqjmmc1un2C", chat="bob-dm", kind="private") == t(
        "en", "puzzle.link_invalid")


def test_a_board_for_one_user_carries_their_signed_link(room: ChatHarness) -> None:
    """A personal board's reply asks for a start link; the chat layer signs it for the user it answers."""
    (reply,) = [r for r in room.say("ana", "/puzzle italian") if r.post_id is not None]
    assert reply.start_payload == "p1_zZioQCqjmmc1un2C"


def test_an_accept_button_made_before_the_move_still_starts_its_game(room: ChatHarness) -> None:
    """An Accept button as the earlier code signed it starts the game once; the same terms with a
    forged signature start nothing."""
    room.say("42", "/start", chat="42-dm", kind="private")           # the challenger is known by name
    offer = InlineOffer(PLATFORM, "42", "italian", "white", "en", int(T0 // 60), "a1b2c")
    forged = offer_action(offer, "A" * 12)
    assert room.press("bob", forged, chat="inline:one")[0].text == t("en", "inline.invalid")
    assert room.service.find_games(PLATFORM, "inline:one") == []
    started = room.press("bob", offer_action(offer, "XhwWzSwohQb2"), chat="inline:one")
    (game,) = room.service.find_games(PLATFORM, "inline:one")
    assert started[0].game_id == game.id
    again = room.press("eve", offer_action(offer, "XhwWzSwohQb2"), chat="inline:two")
    assert again[0].text == t("en", "inline.taken", id=game.id)
    assert room.service.find_games(PLATFORM, "inline:two") == []
