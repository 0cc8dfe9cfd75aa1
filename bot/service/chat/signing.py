"""What the chat layer's deep links carry, signed: an inline offer's terms in its Accept button, and
a puzzle post's pass in the ``/start p<post>_<pass>`` link that opens it in a private chat.

Both are HMAC-SHA256 under the database's link secret (``store.settings.link_secret()``), so a
link made by one process is good in every other that shares the database, and links posted before
this module existed keep working: the bytes signed and the digests' lengths are unchanged.  The use
cases never sign or check anything here: they are given an offer already found genuine
(``VerifiedOffer``) or a post opened through a pass already checked."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from dataclasses import replace
from typing import Protocol

from bot.rules import VARIANTS
from bot.service.events import Reply
from bot.service.features.challenges import InlineOffer, VerifiedOffer

# An inline offer's signature: this many bytes of an HMAC-SHA256 (72 bits: a forger must guess it,
# and every guess costs a button press Telegram rate-limits), so the whole button fits in 64 bytes.
OFFER_SIGNATURE_BYTES = 9
# The offers' key is derived from the link secret for this one purpose, so an offer's signature
# can never pass for a puzzle's pass (or the other way round).
_OFFER_PURPOSE = b"inline-offer"
# A puzzle pass: 12 bytes of the HMAC, 16 characters of base64 (Telegram's start payload allows 64
# of [A-Za-z0-9_-]; see present_puzzles.PUZZLE_START).
PASS_BYTES = 12
# A start link to a puzzle post as a presenter asks for it, before it is signed for its user.
UNSIGNED_START = re.compile(r"p([0-9]{1,9})")


class LinkSecrets(Protocol):
    """Where the key comes from: the settings repository (``store.settings``)."""

    def link_secret(self) -> bytes: ...


class LinkSigner:
    """Signs and checks the chat layer's links.  The secret is read once, on first use (it exists
    from the first migration on and never changes), so a signer costs no query per link."""

    def __init__(self, secrets: LinkSecrets | bytes) -> None:
        self._secrets = secrets
        self._key: bytes | None = secrets if isinstance(secrets, bytes) else None

    @property
    def key(self) -> bytes:
        if self._key is None:
            assert not isinstance(self._secrets, bytes)
            self._key = self._secrets.link_secret()
        return self._key

    # -- inline offers ---------------------------------------------------------------------------------

    def offer_signature(self, offer: InlineOffer) -> str:
        """The signature of an offer's terms (what its Accept button carries)."""
        key = hmac.new(self.key, _OFFER_PURPOSE, hashlib.sha256).digest()
        terms = "\n".join((offer.platform, offer.challenger_id, offer.variant, offer.color, offer.lang,
                           str(offer.issued), offer.nonce))
        digest = hmac.new(key, terms.encode(), hashlib.sha256).digest()[:OFFER_SIGNATURE_BYTES]
        return base64.urlsafe_b64encode(digest).decode("ascii")

    def verify_offer(self, offer: InlineOffer, signature: str) -> VerifiedOffer | None:
        """The offer as the use case takes it when the bot made it with these terms unaltered,
        else None (a forged or altered button).  Reads nothing but the key, writes nothing."""
        if offer.variant not in VARIANTS or not hmac.compare_digest(self.offer_signature(offer), signature):
            return None
        return VerifiedOffer(offer, signature)

    # -- puzzle passes ---------------------------------------------------------------------------------

    def puzzle_pass(self, platform: str, post_id: int, user_id: str) -> str:
        """Post ``post_id``'s pass for this user alone: proof it was handed to them, so they may
        open it in their private chat."""
        digest = hmac.new(self.key, f"{platform}\n{post_id}\n{user_id}".encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest[:PASS_BYTES]).decode("ascii")

    def genuine_pass(self, platform: str, post_id: int, user_id: str, token: str) -> bool:
        """Whether ``token`` is this user's pass for the post (an old unsigned link, a number typed
        by hand or a link passed on to someone else is not)."""
        return hmac.compare_digest(token, self.puzzle_pass(platform, post_id, user_id))

    def sign_starts(self, replies: list[Reply], platform: str, user_id: str) -> list[Reply]:
        """The replies with each puzzle start link the presenters asked for (``p<post>``, see
        ``present_puzzles.puzzle_start``) signed for the user being answered: a pass is only ever
        handed to the user who acts, so the presenters need not know the key."""
        out = []
        for reply in replies:
            unsigned = UNSIGNED_START.fullmatch(reply.start_payload or "")
            if unsigned is not None:
                token = self.puzzle_pass(platform, int(unsigned[1]), user_id)
                reply = replace(reply, start_payload=f"{reply.start_payload}_{token}")
            out.append(reply)
        return out
