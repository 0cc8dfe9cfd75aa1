"""Finished games: /history (also /games done) with their results and numbers, and the Rematch
button under a finished game's board."""

from __future__ import annotations

from bot.service.commands import NewGameArgs, PlayArgs, fold
from bot.service.features.base import Outlet, Runtime, UseCase
from bot.service.features.challenges import Challenges
from bot.service.features.common import Ctx, _is_user
from bot.service.features.games import Games
from bot.service.features.opponent import Opponent
from bot.service.features.results_games import ChallengeRef
from bot.service.features.results_stats import (
    FinishedGames,
    HistoryOutcome,
    HistoryRequest,
    Rematched,
    RematchOutcome,
    RematchRefused,
    UnknownPlayer,
)
from bot.service.registry import ButtonKind
from bot.storage import BOT_ID

HISTORY_SIZE = 10
# Words after /games that ask for finished games (/games done, /partidas terminadas...).
DONE_WORDS = ("done", "finished", "history", "old", "terminadas", "acabadas", "historial", "finite", "concluse",
              "storico", "cronologia")


class History(UseCase):
    """Finished games: their list and the rematch."""

    def __init__(self, runtime: Runtime, outlet: Outlet, games: Games, challenges: Challenges,
                 opponent: Opponent) -> None:
        super().__init__(runtime, outlet)
        self.games = games
        self.challenges = challenges
        self.opponent = opponent

    def history(self, ctx: Ctx, request: HistoryRequest) -> HistoryOutcome:
        """/history [@user]: the chat's last finished games (with @user: that player's here)."""
        user_id = None
        if request.handle is not None:
            handle = request.handle.lstrip("@")
            player = self.storage.player_by_username(ctx.event.platform, handle) if handle else None
            if player is None:
                return UnknownPlayer(request.handle[:40])
            user_id = player.user_id
        return FinishedGames(self.storage.find_games(*ctx.key, status="finished", limit=HISTORY_SIZE,
                                                     user_id=user_id))

    def press_rematch(self, ctx: Ctx, kind: ButtonKind, ids: list[int], lang: str) -> RematchOutcome:
        """The Rematch button of a finished game: the same game with the colours swapped (against
        the bot it starts at once, as /play would; against a person it is a challenge to them, as
        /new would, or the acceptance of theirs when they pressed first)."""
        row = self.storage.game(ids[0])
        uid = ctx.event.user_id
        if row is None or (row.platform, row.chat_id) != ctx.key or row.status != "finished":
            return RematchRefused("invalid")
        if uid not in (row.white_id, row.black_id):
            return RematchRefused("not_player", row.id)
        was_white = row.white_id == uid
        color = "black" if was_white else "white"
        if row.bot_level is not None:
            return Rematched("bot", self.opponent.start_game(
                ctx, PlayArgs(row.variant, row.bot_level, color, row.move_seconds), lang))
        other = row.black_id if was_white else row.white_id
        player = self.storage.player(row.platform, other) if other != BOT_ID else None
        # A second press (or the other player's, after theirs) opens no second challenge.
        handle = player.username.lower()[:64] if player is not None and player.username else None
        for ch in self.challenges.live_challenges(ctx):
            if ch.variant != row.variant:
                continue
            if ch.challenger_id == uid and (ch.target_username or None) == handle:
                return RematchRefused("open", ch.id)
            if ch.challenger_id == other and ch.target_username and _is_user(ctx.event, ch.target_username):
                return Rematched("accept", self.challenges.accept(ctx, ChallengeRef(ch.id)))
        return Rematched("challenge", self.challenges.open_challenge(
            ctx, NewGameArgs(row.variant, color, handle, row.move_seconds), lang))


def asks_for_history(args: list[str]) -> bool:
    """Whether /games was given a word asking for finished games."""
    return bool(args) and fold(args[0]) in DONE_WORDS
