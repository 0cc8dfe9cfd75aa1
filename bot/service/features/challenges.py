"""Challenges: opening, accepting, declining, withdrawing; the chat's list of games."""

from __future__ import annotations

import re
from collections.abc import Sequence

from bot.i18n import t
from bot.rules import (
    Position,
)
from bot.service.commands import (
    BadArgument,
    game_ref,
    parse_new,
)
from bot.service.events import Button, Reply
from bot.service.features.base import Outlet, Runtime, UseCase
from bot.service.features.common import (
    CHALLENGE_LIFETIME,
    MAX_OPEN_CHALLENGES,
    Ctx,
    _ids,
    _is_user,
    _name,
)
from bot.service.features.games import Games
from bot.service.features.results import GameStarted
from bot.service.registry import ButtonKind, action
from bot.service.wording import LISTED_PER_PAGE, clip_line, duration, short_list, variant_name
from bot.storage.records import ChallengeRecord, GameRecord


class Challenges(UseCase):
    """Challenges: opening, accepting, declining, withdrawing; the chat's list of games."""

    def __init__(self, runtime: Runtime, outlet: Outlet, games: Games) -> None:
        super().__init__(runtime, outlet)
        self.games = games

    def cmd_new(self, ctx: Ctx, args: list[str]) -> list[Reply]:
        """Open a challenge to the chat or to one @user."""
        try:
            spec = parse_new(args)
        except BadArgument as err:
            return [Reply(t(ctx.lang, err.key, **err.values) + " " + t(ctx.lang, "new.usage"))]
        ev = ctx.event
        if spec.target and _is_user(ev, spec.target):
            return [Reply(t(ctx.lang, "new.self"))]
        mine = [c for c in self.live_challenges(ctx) if c.challenger_id == ev.user_id]
        if len(mine) >= MAX_OPEN_CHALLENGES:
            return [Reply(t(ctx.lang, "new.too_many", max=MAX_OPEN_CHALLENGES))]
        variant = spec.variant or self.games.default_variant(ctx)
        cid = self.storage.create_challenge(
            platform=ev.platform, chat_id=ev.chat_id, challenger_id=ev.user_id, challenger_name=_name(ev),
            target_username=spec.target, variant=variant, color=spec.color, move_seconds=spec.move_seconds,
            created_at=ctx.now)
        key = "new.open" if spec.target is None else "new.targeted"
        text = t(ctx.lang, key, name=_name(ev), id=cid, target=spec.target or "",
                 variant=variant_name(ctx.lang, variant), colors=t(ctx.lang, f"colors.{spec.color}", name=_name(ev)),
                 time=duration(ctx.lang, spec.move_seconds))
        buttons = [Button(t(ctx.lang, "button.accept"), action(ButtonKind.ACCEPT, cid), f"/accept #{cid}",
                          style="go")]
        if spec.target:
            buttons.append(Button(t(ctx.lang, "button.decline"), action(ButtonKind.DECLINE, cid),
                                  f"/decline #{cid}", style="stop"))
        return [Reply(text, buttons=[buttons], challenge_id=cid)]

    # -- the challenge's message, once it is closed -------------------------------------------------------

    def remember_challenge(self, platform: str, chat_id: str, message_id: str, challenge_id: int) -> None:
        """An adapter sent the message that shows a challenge: it is updated (its buttons taken
        away) once the challenge is closed, at once if that already happened meanwhile."""
        self.storage.remember_challenge_message(platform, chat_id, message_id, challenge_id)
        ch = self.storage.challenge(challenge_id)
        if ch is not None and ch.status != "open":
            game = self.storage.game(ch.game_id) if ch.game_id is not None else None
            by = None
            if game is not None:
                by = game.black_name if game.white_id == ch.challenger_id else game.white_name
            self._challenge_closed(ch, ch.status, by=by, game_id=ch.game_id, only=message_id)
            self._notify(platform)

    def _challenge_closed(self, ch: ChallengeRecord, status: str, by: str | None = None,
                          game_id: int | None = None, only: str | None = None,
                          ctx: Ctx | None = None) -> list[Reply]:
        """The messages showing a closed challenge are replaced: what became of it, and no Accept
        or Decline button any more.  Those in the chat of ``ctx`` (the event that closed it) are
        returned, to go out with its answer; the others go through the outbox."""
        messages = [m for m in self.storage.challenge_messages(ch.id) if only is None or m[2] == only]
        if not messages:
            return []
        lang = self.games.chat_lang(ch.platform, ch.chat_id)
        text = (self._challenge_line(lang, ch) + "\n"
                + t(lang, f"challenge.was_{status}", id=ch.id, name=ch.challenger_name, by=by or "", game=game_id or 0))
        here = []
        for platform, chat_id, message_id in messages:
            if ctx is not None and (platform, chat_id) == ctx.key:
                here.append(Reply(text, edit_of=message_id))
            else:
                self.say(platform, chat_id, Reply(text, edit_of=message_id))
        return here

    def _acceptable(self, ctx: Ctx, challenge: ChallengeRecord) -> str | None:
        """Why this user cannot accept the challenge (a catalog key), or None."""
        ev = ctx.event
        if challenge.challenger_id == ev.user_id:
            return "accept.own"
        target = challenge.target_username
        if target and not _is_user(ev, target):
            return "accept.not_for_you"
        return None

    def _expires_at(self, ch: ChallengeRecord) -> float:
        return ch.created_at + max(CHALLENGE_LIFETIME, ch.move_seconds)

    def live_challenges(self, ctx: Ctx) -> list[ChallengeRecord]:
        """The chat's open challenges that have not lapsed; lapsed ones are closed as expired
        (so they are neither listed nor acceptable, and say 'expired' when named)."""
        live = []
        for ch in self.storage.open_challenges(*ctx.key):
            if self._expires_at(ch) <= ctx.now:
                self._close_expired(ch, ctx.lang)
            else:
                live.append(ch)
        return live

    def _close_expired(self, ch: ChallengeRecord, lang: str | None = None, said_in_chat: bool = False) -> bool:
        """Close a lapsed challenge: the messages showing it lose their buttons, and its chat is
        told once - only the process that closes it says so, and not at all when the answer that
        found it lapsed (``said_in_chat``) already says so there."""
        with self.storage.transaction():
            if not self.storage.close_challenge(ch.id, "expired"):
                return False
            self._challenge_closed(ch, "expired")
            if not said_in_chat:
                lang = self.games.chat_lang(ch.platform, ch.chat_id, lang)
                self.say(ch.platform, ch.chat_id, Reply(t(lang, "challenge.expired", id=ch.id)))
        self._notify(ch.platform)
        return True

    def expire_challenges(self, platform: str | None, now: float) -> int:
        """Close the open challenges that lapsed (timed work); how many messages that wrote."""
        return sum(1 for ch in self.storage.lapsed_challenges(platform, now, CHALLENGE_LIFETIME)
                   if self._close_expired(ch))

    def _open_challenge(self, ctx: Ctx, cid: int) -> tuple[ChallengeRecord | None, list[Reply]]:
        """Challenge #cid if it is open in this chat, else the answer saying why not."""
        ch = self.storage.challenge(cid)
        # From a button, only the presser needs to hear why it did nothing.
        private = ctx.event.action is not None
        if ch is None or (ch.platform, ch.chat_id) != ctx.key:
            return None, [Reply(t(ctx.lang, "challenge.unknown", id=cid), private=private)]
        if ch.status == "open" and self._expires_at(ch) <= ctx.now:
            # An answer in the chat says it there; one only the presser sees leaves it to the outbox.
            self._close_expired(ch, ctx.lang, said_in_chat=not private)
            return None, [Reply(t(ctx.lang, "challenge.expired", id=cid), private=private)]
        if ch.status == "expired":
            return None, [Reply(t(ctx.lang, "challenge.expired", id=cid), private=private)]
        if ch.status != "open":
            return None, [Reply(t(ctx.lang, "challenge.closed", id=cid), private=private)]
        return ch, []

    def cmd_accept(self, ctx: Ctx, args: list[str]) -> Sequence[Reply | GameStarted]:
        """Accept a challenge: the game starts."""
        ref, _ = game_ref(args)
        if ref is not None:
            ch, problem = self._open_challenge(ctx, ref)
            if ch is None:
                return problem
            why = self._acceptable(ctx, ch)
            if why:
                return [Reply(t(ctx.lang, why, id=ref, target=ch.target_username or ""),
                              private=ctx.event.action is not None)]
            return self._start_game(ctx, ch)
        live = self.live_challenges(ctx)
        open_ = [c for c in live if self._acceptable(ctx, c) is None]
        # The one challenge that names her is the one she means, whatever else is open.
        mine = [c for c in open_ if c.target_username]
        if len(open_) > 1 and len(mine) == 1:
            return self._start_game(ctx, mine[0])
        if not open_:
            own = [c.id for c in live if c.challenger_id == ctx.event.user_id]
            if own and len(own) == len(live):
                return [Reply(t(ctx.lang, "accept.only_own", ids=_ids(own)))]
            return [Reply(t(ctx.lang, "accept.none"))]
        if len(open_) > 1:
            listing = short_list(ctx.lang, [self._challenge_line(ctx.lang, c) for c in open_])
            return [Reply(t(ctx.lang, "accept.which") + "\n" + listing)]
        return self._start_game(ctx, open_[0])

    def _start_game(self, ctx: Ctx, ch: ChallengeRecord) -> Sequence[Reply | GameStarted]:
        ev = ctx.event
        color = ch.color if ch.color != "random" else self.rng.choice(["white", "black"])
        challenger = (ch.challenger_id, ch.challenger_name)
        acceptor = (ev.user_id, _name(ev))
        white, black = (challenger, acceptor) if color == "white" else (acceptor, challenger)
        start = Position.start(ch.variant)
        game_id = self.storage.accept_challenge(ch.id, {
            "platform": ch.platform, "chat_id": ch.chat_id, "variant": ch.variant, "start_fen": None,
            "white_id": white[0], "white_name": white[1], "black_id": black[0], "black_name": black[1],
            "fen": start.fen(), "move_seconds": ch.move_seconds,
            "deadline_at": ctx.now + ch.move_seconds, "created_at": ctx.now,
        })
        if game_id is None:
            return [Reply(t(ctx.lang, "challenge.closed", id=ch.id), private=ev.action is not None)]
        row = self.storage.game(game_id)
        assert row is not None
        edits = self._challenge_closed(ch, "accepted", by=_name(ev), game_id=game_id, ctx=ctx)
        # A challenger who has a game no longer waits for another: her other open-to-anyone
        # challenges here would start a second game behind her back.
        others = [c for c in self.live_challenges(ctx) if c.challenger_id == ch.challenger_id
                  and not c.target_username and c.id != ch.id]
        withdrawn = [c.id for c in others if self.storage.close_challenge(c.id, "cancelled")]
        for c in others:
            if c.id in withdrawn:
                edits += self._challenge_closed(c, "cancelled", ctx=ctx)
        return [GameStarted(row, ch.challenger_name, withdrawn, edits, ctx.now, self.games.turn_notice(row, ctx.now))]

    def cmd_decline(self, ctx: Ctx, args: list[str]) -> list[Reply]:
        """Decline a challenge addressed to you."""
        ref, _ = game_ref(args)
        ev = ctx.event
        # From the Decline button a refusal is for the presser only, as from Accept.
        private = ev.action is not None
        mine = [c for c in self.live_challenges(ctx)
                if c.target_username and self._acceptable(ctx, c) is None]
        if ref is not None:
            ch, problem = self._open_challenge(ctx, ref)
            if ch is None:
                return problem
            if ch.challenger_id == ev.user_id:
                return [Reply(t(ctx.lang, "decline.own", id=ref), private=private)]
            if not ch.target_username:
                return [Reply(t(ctx.lang, "decline.open", id=ref), private=private)]
            if self._acceptable(ctx, ch) is not None:
                return [Reply(t(ctx.lang, "accept.not_for_you", id=ref, target=ch.target_username),
                              private=private)]
            mine = [ch]
        if not mine:
            return [Reply(t(ctx.lang, "decline.none"), private=private)]
        if len(mine) > 1:
            listing = short_list(ctx.lang, [self._challenge_line(ctx.lang, c) for c in mine])
            return [Reply(t(ctx.lang, "decline.which") + "\n" + listing, private=private)]
        ch = mine[0]
        if not self.storage.close_challenge(ch.id, "declined"):
            return [Reply(t(ctx.lang, "challenge.closed", id=ch.id), private=private)]
        edits = self._challenge_closed(ch, "declined", by=_name(ev), ctx=ctx)
        return [Reply(t(ctx.lang, "decline.done", id=ch.id, name=_name(ev), challenger=ch.challenger_name)), *edits]

    def cmd_cancel(self, ctx: Ctx, args: list[str]) -> list[Reply]:
        """Withdraw one of your open challenges (#id), or all of them."""
        ref, _ = game_ref(args)
        mine = [c for c in self.live_challenges(ctx) if c.challenger_id == ctx.event.user_id]
        if ref is not None:
            ch, problem = self._open_challenge(ctx, ref)
            if ch is None:
                return problem
            if ch.challenger_id != ctx.event.user_id:
                return [Reply(t(ctx.lang, "cancel.not_yours", id=ref))]
            mine = [ch]
        if not mine:
            return [Reply(t(ctx.lang, "cancel.none"))]
        done = [c.id for c in mine if self.storage.close_challenge(c.id, "cancelled")]
        edits = []
        for c in mine:
            if c.id in done:
                edits += self._challenge_closed(c, "cancelled", ctx=ctx)
        if not done:
            return [Reply(t(ctx.lang, "cancel.none"))]
        key = "cancel.done" if len(done) == 1 else "cancel.done_many"
        return [Reply(t(ctx.lang, key, ids=_ids(done))), *edits]

    def _challenge_line(self, lang: str, ch: ChallengeRecord) -> str:
        target = f" → @{ch.target_username}" if ch.target_username else ""
        return (f"#{ch.id} {ch.challenger_name}{target}: {variant_name(lang, ch.variant)}, "
                f"{t(lang, 'color.' + ch.color)}, {duration(lang, ch.move_seconds)}")

    def cmd_games(self, ctx: Ctx, args: list[str]) -> list[Reply]:
        """The games and open challenges of the chat, a page at a time (``/games 2``): one message
        even in a chat with thousands of challenges.  ``/games done``: its finished games."""
        page = 1
        if args:
            if len(args) != 1 or not re.fullmatch(r"[0-9]{1,6}", args[0]) or int(args[0]) < 1:
                return [Reply(t(ctx.lang, "games.usage"))]
            page = int(args[0])
        games = self.storage.active_games(*ctx.key)
        challenges = self.live_challenges(ctx)
        if not games and not challenges:
            return [Reply(t(ctx.lang, "games.empty"))]
        items: list[GameRecord | ChallengeRecord] = [*games, *challenges]
        pages = -(-len(items) // LISTED_PER_PAGE)
        if page > pages:
            return [Reply(t(ctx.lang, "games.no_page", page=page, pages=pages))]
        start = (page - 1) * LISTED_PER_PAGE
        shown = items[start:start + LISTED_PER_PAGE]
        lines = []
        if pages > 1:
            lines.append(t(ctx.lang, "games.page", page=page, pages=pages, total=len(items)))
        # Only the lines shown are worked out (a game's line reads its position).
        shown_games = [g for g in shown if isinstance(g, GameRecord)]
        shown_challenges = [c for c in shown if isinstance(c, ChallengeRecord)]
        if shown_games:
            lines.append(t(ctx.lang, "games.header"))
            lines += [clip_line(self.games.game_line(ctx.lang, g)) for g in shown_games]
        if shown_challenges:
            lines.append(t(ctx.lang, "games.challenges"))
            lines += [clip_line(self._challenge_line(ctx.lang, c)) for c in shown_challenges]
        if page < pages:
            lines.append(t(ctx.lang, "games.more", count=len(items) - start - len(shown), next=page + 1))
        return [Reply("\n".join(lines))]

    def press_challenge(self, ctx: Ctx, kind: ButtonKind, ids: list[int]) -> Sequence[Reply | GameStarted]:
        """The Accept or Decline button of a challenge."""
        if kind is ButtonKind.ACCEPT:
            return self.cmd_accept(ctx, [f"#{ids[0]}"])
        return self.cmd_decline(ctx, [f"#{ids[0]}"])
