"""Challenges: opening, accepting, declining, withdrawing; the chat's list of games."""

from __future__ import annotations

from dataclasses import dataclass

from bot.rules import (
    VARIANTS,
)
from bot.service.features.base import Outlet, Runtime, UseCase
from bot.service.features.common import (
    CHALLENGE_LIFETIME,
    DEFAULT_MOVE_SECONDS,
    LISTED_PER_PAGE,
    MAX_OPEN_CHALLENGES,
    _ids,
)
from bot.service.features.games import Games
from bot.service.features.identity import Caller
from bot.service.features.results import GameStarted
from bot.service.features.results_games import (
    ChallengeChoice,
    ChallengeClosed,
    ChallengeDeclined,
    ChallengeOpened,
    ChallengeRef,
    ChallengesCancelled,
    GamesPage,
    NewGameArgs,
    Refused,
)
from bot.service.notifications import ChallengeEdited, ChallengeLapsed
from bot.storage import in_transaction
from bot.storage.records import ChallengeRecord, GameRecord
from bot.storage.repositories import ChatSettings, NewChallenge


@dataclass(frozen=True)
class InlineOffer:
    """A challenge offered through inline mode (``@bot`` typed in any chat): its terms travel in
    the message's Accept button, signed, and nothing is stored until someone accepts.  ``issued``:
    the minute it was offered (it lapses as an open challenge does); ``lang``: the language its
    message was written in (the game's chat speaks it); ``nonce``: tells apart two offers of the
    same terms in the same minute (each starts a game of its own)."""

    platform: str
    challenger_id: str
    variant: str
    color: str
    lang: str
    issued: int
    nonce: str


@dataclass(frozen=True)
class VerifiedOffer:
    """An inline offer the chat layer found signed by the bot, its terms unaltered (the use case
    checks no signature: it knows no buttons or links).  ``stamp``: what names this one offer
    (its signature), so one offer starts one game however often its button is pressed."""

    offer: InlineOffer
    stamp: str


@dataclass(frozen=True)
class OfferTaken:
    """The inline message already started game ``game_id``: a second Accept starts nothing."""

    game_id: int


class Challenges(UseCase):
    """Challenges: opening, accepting, declining, withdrawing; the chat's list of games."""

    def __init__(self, runtime: Runtime, outlet: Outlet, games: Games) -> None:
        super().__init__(runtime, outlet)
        self.games = games

    def open_challenge(self, caller: Caller, spec: NewGameArgs, lang: str) -> ChallengeOpened | Refused:
        """Open a challenge to the chat or to one @user (of the chat's variant when ``spec`` names
        none: ``lang``, the chat's language, is its last guess)."""
        ev = caller
        if spec.target and caller.by.answers_to(spec.target):
            return Refused("new.self")
        mine = [c for c in self.live_challenges(caller) if c.challenger_id == ev.user_id]
        if len(mine) >= MAX_OPEN_CHALLENGES:
            return Refused("new.too_many", values=(("max", MAX_OPEN_CHALLENGES),))
        variant = spec.variant or self.games.default_variant(caller, lang)
        cid = self.storage.challenges.create(NewChallenge(
            platform=ev.platform, chat_id=ev.chat_id, challenger_id=ev.user_id, challenger_name=ev.name,
            target_username=spec.target, variant=variant, color=spec.color, move_seconds=spec.move_seconds,
            created_at=caller.at))
        ch = self.storage.challenges.get(cid)
        assert ch is not None             # made just now
        return ChallengeOpened(ch)

    # -- the challenge's message, once it is closed -------------------------------------------------------

    def remember_challenge(self, platform: str, chat_id: str, message_id: str, challenge_id: int) -> None:
        """An adapter sent the message that shows a challenge: it is updated (its buttons taken
        away) once the challenge is closed, at once if that already happened meanwhile."""
        self.storage.challenges.remember_message(platform, chat_id, message_id, challenge_id)
        ch = self.storage.challenges.get(challenge_id)
        if ch is not None and ch.status != "open":
            game = self.storage.games.get(ch.game_id) if ch.game_id is not None else None
            by = None
            if game is not None:
                by = game.black_name if game.white_id == ch.challenger_id else game.white_name
            self._challenge_closed(ch, ch.status, by=by, game_id=ch.game_id, only=message_id)
            self._notify(platform)

    def _challenge_closed(self, ch: ChallengeRecord, status: str, by: str | None = None,
                          game_id: int | None = None, only: str | None = None,
                          caller: Caller | None = None) -> list[ChallengeClosed]:
        """The messages showing a closed challenge are replaced: what became of it, and no Accept
        or Decline button any more.  Those in the chat of ``caller`` (who closed it) are
        returned, to go out with its answer; the others go through the outbox."""
        messages = [m for m in self.storage.challenges.messages(ch.id) if only is None or m[2] == only]
        if not messages:
            return []
        lang = self.games.chat_lang(ch.platform, ch.chat_id)
        here = []
        for platform, chat_id, message_id in messages:
            closed = ChallengeClosed(ch, status, message_id, lang, by, game_id)
            if caller is not None and (platform, chat_id) == caller.key:
                here.append(closed)
            else:
                self.tell(platform, chat_id, ChallengeEdited(ch.id, lang, status, message_id, by, game_id))
        return here

    def _acceptable(self, caller: Caller, challenge: ChallengeRecord) -> str | None:
        """Why this user cannot accept the challenge (a catalog key), or None."""
        if challenge.challenger_id == caller.user_id:
            return "accept.own"
        target = challenge.target_username
        if target and not caller.by.answers_to(target):
            return "accept.not_for_you"
        return None

    def challenge_record(self, challenge_id: int) -> ChallengeRecord:
        """A challenge known to exist (challenges are never deleted)."""
        ch = self.storage.challenges.get(challenge_id)
        if ch is None:
            raise LookupError(f"challenge {challenge_id} vanished")
        return ch

    def _expires_at(self, ch: ChallengeRecord) -> float:
        return ch.created_at + max(CHALLENGE_LIFETIME, ch.move_seconds)

    def live_challenges(self, caller: Caller) -> list[ChallengeRecord]:
        """The chat's open challenges that have not lapsed; lapsed ones are closed as expired
        (so they are neither listed nor acceptable, and say 'expired' when named)."""
        live = []
        for ch in self.storage.challenges.open_in(*caller.key):
            if self._expires_at(ch) <= caller.at:
                self._close_expired(ch)
            else:
                live.append(ch)
        return live

    def _close_expired(self, ch: ChallengeRecord, said_in_chat: bool = False) -> bool:
        """Close a lapsed challenge: the messages showing it lose their buttons, and its chat is
        told once - only the process that closes it says so, and not at all when the answer that
        found it lapsed (``said_in_chat``) already says so there."""
        def close() -> bool:
            if not self.storage.challenges.close(ch.id, "expired"):
                return False
            self._challenge_closed(ch, "expired")
            if not said_in_chat:
                lang = self.games.chat_lang(ch.platform, ch.chat_id)
                self.tell(ch.platform, ch.chat_id, ChallengeLapsed(ch.id, lang))
            return True

        # Timed work too: run again if it loses a race (a serialization failure on a server with row locks).
        if not in_transaction(self.storage, close):
            return False
        self._notify(ch.platform)
        return True

    def expire_challenges(self, platform: str | None, now: float) -> int:
        """Close the open challenges that lapsed (timed work); how many messages that wrote."""
        return sum(1 for ch in self.storage.challenges.lapsed(platform, now, CHALLENGE_LIFETIME)
                   if self._close_expired(ch))

    def _open_challenge(self, caller: Caller, cid: int, quiet: bool) -> ChallengeRecord | Refused:
        """Challenge #cid if it is open in this chat, else why not (``quiet``: said to the caller
        alone, as to the presser of a button, who alone needs to hear why it did nothing)."""
        ch = self.storage.challenges.get(cid)
        private = quiet
        ident = (("id", cid),)
        if ch is None or (ch.platform, ch.chat_id) != caller.key:
            return Refused("challenge.unknown", private=private, values=ident)
        if ch.status == "open" and self._expires_at(ch) <= caller.at:
            # An answer in the chat says it there; one only the presser sees leaves it to the outbox.
            self._close_expired(ch, said_in_chat=not private)
            return Refused("challenge.expired", private=private, values=ident)
        if ch.status == "expired":
            return Refused("challenge.expired", private=private, values=ident)
        if ch.status != "open":
            return Refused("challenge.closed", private=private, values=ident)
        return ch

    def accept(self, caller: Caller, request: ChallengeRef,
               quiet: bool = False) -> GameStarted | ChallengeChoice | Refused:
        """Accept a challenge: the game starts (``quiet``: a refusal is for the caller alone, as
        from the challenge's Accept button)."""
        ref = request.challenge
        if ref is not None:
            ch = self._open_challenge(caller, ref, quiet)
            if not isinstance(ch, ChallengeRecord):
                return ch
            why = self._acceptable(caller, ch)
            if why:
                return Refused(why, private=quiet,
                               values=(("id", ref), ("target", ch.target_username or "")))
            return self._start_game(caller, ch, quiet)
        live = self.live_challenges(caller)
        open_ = [c for c in live if self._acceptable(caller, c) is None]
        # The one challenge that names her is the one she means, whatever else is open.
        mine = [c for c in open_ if c.target_username]
        if len(open_) > 1 and len(mine) == 1:
            return self._start_game(caller, mine[0])
        if not open_:
            own = [c.id for c in live if c.challenger_id == caller.user_id]
            if own and len(own) == len(live):
                return Refused("accept.only_own", values=(("ids", _ids(own)),))
            return Refused("accept.none")
        if len(open_) > 1:
            return ChallengeChoice("accept.which", tuple(open_))
        return self._start_game(caller, open_[0])

    def _start_game(self, caller: Caller, ch: ChallengeRecord, quiet: bool = False) -> GameStarted | Refused:
        ev = caller
        color = ch.color if ch.color != "random" else self.rng.choice(["white", "black"])
        challenger = (ch.challenger_id, ch.challenger_name)
        acceptor = (ev.user_id, ev.name)
        white, black = (challenger, acceptor) if color == "white" else (acceptor, challenger)
        game_id = self.storage.challenges.accept(ch.id, self.games.new_game(
            ch.platform, ch.chat_id, ch.variant, white, black, ch.move_seconds, caller.at))
        if game_id is None:
            return Refused("challenge.closed", private=quiet, values=(("id", ch.id),))
        row = self.storage.games.get(game_id)
        assert row is not None
        edits = self._challenge_closed(ch, "accepted", by=ev.name, game_id=game_id, caller=caller)
        # A challenger who has a game no longer waits for another: her other open-to-anyone
        # challenges here would start a second game behind her back.
        others = [c for c in self.live_challenges(caller) if c.challenger_id == ch.challenger_id
                  and not c.target_username and c.id != ch.id]
        withdrawn = [c.id for c in others if self.storage.challenges.close(c.id, "cancelled")]
        for c in others:
            if c.id in withdrawn:
                edits += self._challenge_closed(c, "cancelled", caller=caller)
        return GameStarted(row, ch.challenger_name, withdrawn, edits, caller.at, self.games.turn_notice(row, caller.at))

    def decline(self, caller: Caller, request: ChallengeRef,
                quiet: bool = False) -> ChallengeDeclined | ChallengeChoice | Refused:
        """Decline a challenge addressed to you (``quiet``: a refusal is for the caller alone, as
        from the Decline button)."""
        ref = request.challenge
        ev = caller
        private = quiet
        mine = [c for c in self.live_challenges(caller)
                if c.target_username and self._acceptable(caller, c) is None]
        if ref is not None:
            ch = self._open_challenge(caller, ref, quiet)
            if not isinstance(ch, ChallengeRecord):
                return ch
            ident = (("id", ref),)
            if ch.challenger_id == ev.user_id:
                return Refused("decline.own", private=private, values=ident)
            if not ch.target_username:
                return Refused("decline.open", private=private, values=ident)
            if self._acceptable(caller, ch) is not None:
                return Refused("accept.not_for_you", private=private, values=(*ident, ("target", ch.target_username)))
            mine = [ch]
        if not mine:
            return Refused("decline.none", private=private)
        if len(mine) > 1:
            return ChallengeChoice("decline.which", tuple(mine), private=private)
        ch = mine[0]
        if not self.storage.challenges.close(ch.id, "declined"):
            return Refused("challenge.closed", private=private, values=(("id", ch.id),))
        edits = self._challenge_closed(ch, "declined", by=ev.name, caller=caller)
        return ChallengeDeclined(ch, ev.name, tuple(edits))

    def cancel(self, caller: Caller, request: ChallengeRef) -> ChallengesCancelled | Refused:
        """Withdraw one of your open challenges (#id), or all of them."""
        ref = request.challenge
        mine = [c for c in self.live_challenges(caller) if c.challenger_id == caller.user_id]
        if ref is not None:
            ch = self._open_challenge(caller, ref, False)
            if not isinstance(ch, ChallengeRecord):
                return ch
            if ch.challenger_id != caller.user_id:
                return Refused("cancel.not_yours", values=(("id", ref),))
            mine = [ch]
        if not mine:
            return Refused("cancel.none")
        done = [c.id for c in mine if self.storage.challenges.close(c.id, "cancelled")]
        edits = []
        for c in mine:
            if c.id in done:
                edits += self._challenge_closed(c, "cancelled", caller=caller)
        if not done:
            return Refused("cancel.none")
        return ChallengesCancelled(tuple(done), tuple(edits))

    def list_games(self, caller: Caller, page: int = 1) -> GamesPage | Refused:
        """The games and open challenges of the chat, a page at a time (``/games 2``): one message
        even in a chat with thousands of challenges."""
        games = self.storage.games.active_in(*caller.key)
        challenges = self.live_challenges(caller)
        if not games and not challenges:
            return Refused("games.empty")
        items: list[GameRecord | ChallengeRecord] = [*games, *challenges]
        pages = -(-len(items) // LISTED_PER_PAGE)
        if page > pages:
            return Refused("games.no_page", values=(("page", page), ("pages", pages)))
        start = (page - 1) * LISTED_PER_PAGE
        shown = items[start:start + LISTED_PER_PAGE]
        # Only the lines shown are worked out (a game's line reads its position).
        return GamesPage(page, pages, len(items), tuple(g for g in shown if isinstance(g, GameRecord)),
                         tuple(c for c in shown if isinstance(c, ChallengeRecord)),
                         len(items) - start - len(shown))

    # -- inline offers (Telegram's inline mode) -------------------------------------------------------

    def make_offers(self, platform: str, user_id: str, name: str, username: str | None, language: str | None,
                    color: str, lang: str) -> list[InlineOffer]:
        """One offer per variant for a user typing ``@bot`` (the chat layer signs each into its
        Accept button).  Their name is kept (as any message of theirs would): the button has no
        room for it."""
        now = self.clock()
        self.storage.players.save(platform, user_id, name, username, language, now)
        issued = int(now // 60)
        offers = [InlineOffer(platform, user_id, variant, color, lang, issued, base36(self.rng.randrange(36 ** 5)))
                  for variant in VARIANTS]
        return offers

    def accept_offer(self, caller: Caller, verified: VerifiedOffer) -> GameStarted | OfferTaken | Refused:
        """Someone pressed Accept on an inline offer the bot made: a game between people starts in
        the inline message's own chat (``caller.where``), as from an open challenge (its number,
        its ratings)."""
        ev, offer = caller, verified.offer
        if offer.platform != ev.platform:
            return Refused("inline.invalid", private=True)
        if offer.challenger_id == ev.user_id:
            return Refused("inline.own", private=True)
        if offer.issued * 60 + CHALLENGE_LIFETIME <= caller.at:
            return Refused("inline.expired", private=True)
        # One game per offer: its button's data can be read by whoever sees the message and sent
        # from any other message of the bot (a client sends what data it likes).
        taken = f"inline_offer:{offer.platform}:{verified.stamp}"
        with self.storage.transaction():
            game_id = self.storage.settings.pending(taken)
            if isinstance(game_id, int):
                return OfferTaken(game_id)
            # And one game per inline message, even when two people press Accept at once.
            started = self.storage.games.find(ev.platform, ev.chat_id, None, 1)
            if started:
                return OfferTaken(started[0].id)
            known = self.storage.players.get(ev.platform, offer.challenger_id)
            cid = self.storage.challenges.create(NewChallenge(
                platform=ev.platform, chat_id=ev.chat_id, challenger_id=offer.challenger_id,
                challenger_name=known.name if known is not None else f"user {offer.challenger_id}",
                target_username=None, variant=offer.variant, color=offer.color, move_seconds=DEFAULT_MOVE_SECONDS,
                created_at=caller.at))
            # What the service later says there (reminders, the end) in the offer's language.
            self.storage.players.update_chat(ev.platform, ev.chat_id, ChatSettings(language=offer.lang))
            outcome = self._start_game(caller, self.challenge_record(cid), quiet=True)
            if isinstance(outcome, GameStarted):
                self.storage.settings.set_pending(taken, outcome.game.id)
            return outcome


def base36(number: int) -> str:
    """A number in base 36 (lower case): short for a button's data."""
    digits = ""
    while True:
        number, digit = divmod(number, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[digit] + digits
        if not number:
            return digits
