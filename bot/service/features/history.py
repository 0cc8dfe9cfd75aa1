"""Finished games: /history (also /games done) with their results and numbers, and the Rematch
button under a finished game's board."""

from __future__ import annotations

from bot.service.features.base import Outlet, Runtime, UseCase
from bot.service.features.challenges import Challenges
from bot.service.features.games import Games
from bot.service.features.identity import Caller
from bot.service.features.opponent import Opponent
from bot.service.features.results_games import ChallengeRef, NewGameArgs, PlayArgs
from bot.service.features.results_stats import (
    FinishedGames,
    HistoryOutcome,
    HistoryRequest,
    Rematched,
    RematchOutcome,
    RematchRefused,
    UnknownPlayer,
)
from bot.storage import BOT_ID

HISTORY_SIZE = 10


class History(UseCase):
    """Finished games: their list and the rematch."""

    def __init__(self, runtime: Runtime, outlet: Outlet, games: Games, challenges: Challenges,
                 opponent: Opponent) -> None:
        super().__init__(runtime, outlet)
        self.games = games
        self.challenges = challenges
        self.opponent = opponent

    def history(self, caller: Caller, request: HistoryRequest) -> HistoryOutcome:
        """/history [@user]: the chat's last finished games (with @user: that player's here)."""
        user_id = None
        if request.handle is not None:
            handle = request.handle.lstrip("@")
            player = self.storage.players.by_username(caller.platform, handle) if handle else None
            if player is None:
                return UnknownPlayer(request.handle[:40])
            user_id = player.user_id
        return FinishedGames(self.storage.games.find(*caller.key, status="finished", limit=HISTORY_SIZE,
                                                     user_id=user_id))

    def rematch(self, caller: Caller, game: int, lang: str) -> RematchOutcome:
        """A rematch of finished game #``game`` (its Rematch button): the same game with the
        colours swapped (against the bot it starts at once, as /play would; against a person it is
        a challenge to them, as /new would, or the acceptance of theirs when they asked first).
        ``lang``: the chat's language, the last guess of its variant."""
        row = self.storage.games.get(game)
        uid = caller.user_id
        if row is None or (row.platform, row.chat_id) != caller.key or row.status != "finished":
            return RematchRefused("invalid")
        if uid not in (row.white_id, row.black_id):
            return RematchRefused("not_player", row.id)
        was_white = row.white_id == uid
        color = "black" if was_white else "white"
        if row.bot_level is not None:
            return Rematched("bot", self.opponent.start_game(
                caller, PlayArgs(row.variant, row.bot_level, color, row.move_seconds), lang))
        other = row.black_id if was_white else row.white_id
        player = self.storage.players.get(row.platform, other) if other != BOT_ID else None
        # A second press (or the other player's, after theirs) opens no second challenge.
        handle = player.username.lower()[:64] if player is not None and player.username else None
        for ch in self.challenges.live_challenges(caller):
            if ch.variant != row.variant:
                continue
            if ch.challenger_id == uid and (ch.target_username or None) == handle:
                return RematchRefused("open", ch.id)
            if ch.challenger_id == other and ch.target_username and caller.by.answers_to(ch.target_username):
                # Asked from a button: a refusal is for the one who pressed it.
                return Rematched("accept", self.challenges.accept(caller, ChallengeRef(ch.id), quiet=True))
        return Rematched("challenge", self.challenges.open_challenge(
            caller, NewGameArgs(row.variant, color, handle, row.move_seconds), lang))

