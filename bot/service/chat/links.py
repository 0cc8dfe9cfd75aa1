"""The chat layer's links and button codecs that are no command: an inline offer's Accept button,
the web board's Open board button, its ``/start`` deep link and the web board's links while an
adapter serves it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.i18n import LANGUAGES
from bot.service.events import Button
from bot.service.features.challenges import InlineOffer, base36
from bot.service.web import WATCH_MAC, BoardLayer

# The Accept button of an inline offer (Telegram's inline mode): the offer's terms and signature,
# ``ix:<variant>:<colour><language>:<challenger>:<minute issued>:<nonce>:<signature>`` (numbers in
# base 36; at most 58 bytes of the 64 Telegram allows).  Signed rather than stored, so an offer
# typed but never sent, or sent and never accepted, writes nothing, and no /setinlinefeedback is
# needed (chosen_inline_result updates are off unless BotFather's setting turns them on).
INLINE_ACCEPT = "ix"
# The chat of an inline message, the only place an offer's Accept is taken (Telegram's adapter
# names them so: bot/platforms/telegram/inline.py).
INLINE_CHAT = "inline:"
_COLOR_CODES = {"white": "w", "black": "b", "random": "r"}
_OFFER_ACTION = re.compile(r"ix:([a-z]{1,12}):([wbr])([a-z]{2}):([0-9]{1,16}):([0-9a-z]{1,6}):([0-9a-z]{1,5})"
                           r":([A-Za-z0-9_-]{12})")


@dataclass(frozen=True)
class InlineArticle:
    """One result offered to a user typing ``@bot`` in any chat: what the list shows (title,
    description) and the message it sends (text, an Accept button)."""

    id: str
    title: str
    description: str
    text: str
    accept: Button


def offer_action(offer: InlineOffer, signature: str) -> str:
    return ":".join((INLINE_ACCEPT, offer.variant, _COLOR_CODES[offer.color] + offer.lang, offer.challenger_id,
                     base36(offer.issued), offer.nonce, signature))


def parse_offer_action(platform: str, action: str) -> tuple[InlineOffer, str] | None:
    """The offer and signature an Accept button carries (attacker-controlled: only its shape is
    checked here, the signature by the use case), or None when it is no offer's."""
    found = _OFFER_ACTION.fullmatch(action) if len(action.encode()) <= 64 else None
    if found is None or found[3] not in LANGUAGES:
        return None
    variant, color, lang, challenger, issued, nonce, signature = found.groups()
    colors = {code: name for name, code in _COLOR_CODES.items()}
    return InlineOffer(platform, challenger, variant, colors[color], lang, int(issued, 36), nonce), signature


# The Open board button under a board where the web board runs (Discord): ``wb:<game>``; its press
# answers the presser alone with their own seat link, or the spectator link.
WEB_BUTTON = "wb"
# ``/start w<game>s<mac>`` (Telegram's deep link t.me/<bot>?start=w<game>s<mac>): the board of that
# game, in the private chat the link opens; ``<mac>`` is the game's spectator signature (without
# it, only a player of the game gets a link: a number alone shows nothing).
WEB_START = re.compile(r"w([0-9]{1,9})(?:s(" + WATCH_MAC + "))?")
# The ply a Review button opens a finished game at: its first position, to be stepped through.
REVIEW_PLY = 0
_WEBAPP_NAME = re.compile(r"[A-Za-z0-9_]{3,30}")      # BotFather's rule for a Mini App's short name
_BOT_USERNAME = re.compile(r"[A-Za-z0-9_]{4,32}")


@dataclass(frozen=True)
class WebLinks:
    """Where the web board is, while an adapter serves it (``ChatLayer.web``): ``url`` its public
    base address (no trailing slash); ``telegram_app`` the Mini App's short name (@BotFather's
    /newapp) when there is one; ``board`` the service's board layer, which signs seat links."""

    url: str
    board: BoardLayer
    telegram_app: str | None = None

    def seat(self, game_id: int, platform: str, user_id: str | None) -> str:
        """The page of a game with ``user_id``'s seat in it when they play it (else a spectator's)."""
        return self.url + self.board.link_path(game_id, platform, user_id)

    def spectator(self, game_id: int) -> str:
        """The spectator's page of a game (signed: only for those who may watch it)."""
        return f"{self.url}/g/{game_id}?t={self.board.watch_token(game_id)}"

    def tournament(self, tournament_id: int) -> str:
        """A tournament's page, its standings and pairings (signed: give it in its own chat or
        place, where its games are played)."""
        return self.url + self.board.tournament_path(tournament_id)

    def storm(self, run_id: int, platform: str, user_id: str) -> str:
        """A storm run's page, signed for its player (plays their run: give it to them alone)."""
        page = self.board.storm
        assert page is not None, "a board without the storm page gives no storm links"
        return self.url + page.path(run_id, platform, user_id)

    def mini_app(self, game_id: int, bot_username: str | None) -> str | None:
        """The Mini App's direct link to a game (opens inside Telegram, in groups too), or None.  It
        carries the game's spectator signature: its players get their seat from Telegram's
        initData, anyone else who has the link watches."""
        app = self.telegram_app or ""
        if not (_WEBAPP_NAME.fullmatch(app) and bot_username and _BOT_USERNAME.fullmatch(bot_username)):
            return None
        return f"https://t.me/{bot_username}/{app}?startapp=g{game_id}s{self.board.watch_mac(game_id)}"

    def web_app(self, game_id: int) -> str:
        """The Mini App page itself for a ``web_app`` button (private chats only): the page learns
        who opened it from Telegram's signed initData (and may watch with the signature)."""
        return f"{self.url}/tg?g={game_id}s{self.board.watch_mac(game_id)}"

    def start_link(self, game_id: int, bot_username: str) -> str:
        """The deep link to the private chat with the bot that answers with the game's board
        (``/start w<game>s<mac>``), for an Open board button without a Mini App."""
        return f"https://t.me/{bot_username}?start=w{game_id}s{self.board.watch_mac(game_id)}"

    def review(self, game_id: int, platform: str, *, private_chat: bool, bot_username: str | None,
               ply: int = REVIEW_PLY) -> tuple[str, bool]:
        """Where a finished game's Review button goes, and whether it is a ``web_app`` button: the
        page opened at ``ply`` (the page steps on from there).  Every link carries the game's
        spectator signature only (never a seat): the button is seen by the whole chat, and a
        finished game is there to be watched.  On Telegram, a private chat gets the Mini App page
        (``web_app``, https only), a group the Mini App's direct link (``p<ply>`` after the
        signature in ``startapp``), else the signed page itself; elsewhere the signed page."""
        mac = self.board.watch_mac(game_id)
        if platform == "telegram":
            if private_chat and self.url.startswith("https://"):
                return f"{self.url}/tg?g={game_id}s{mac}&ply={ply}", True
            direct = self.mini_app(game_id, bot_username)
            if direct is not None and not private_chat:
                return f"{direct}p{ply}", False
        return f"{self.url}/g/{game_id}?t=w{game_id}s{mac}&ply={ply}", False
