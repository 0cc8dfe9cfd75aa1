"""The presenters of the outbox's notifications (``bot.service.notifications``): each turns one
kind into the message it is delivered as, when it is delivered.

What a message shows is what it showed when the notification was written: a game's changing
fields come from the notification (``GameState``), only what a game never changes (its players,
variant, level) is read from storage.
"""

from __future__ import annotations

from bot.i18n import t
from bot.rules import Position
from bot.service.chat import boards, present_storm
from bot.service.chat.describe import with_alt
from bot.service.chat.present_challenges import closed_edit
from bot.service.chat.present_games import board_reply, bot_name, name_of, names, over_text, present_game, to_move_line
from bot.service.chat.present_own import reminder as own_reminder
from bot.service.chat.present_puzzles import ChatNotices, first_text
from bot.service.chat.present_runs import record_message
from bot.service.chat.present_stats import analysis_failed, analysis_report
from bot.service.chat.presenters import present_move
from bot.service.chat.tournaments import present_notice as tournament_notice
from bot.service.chat.wording import duration, reminder
from bot.service.events import Mention, Reply
from bot.service.features.analysis import Analysis
from bot.service.features.challenges import Challenges
from bot.service.features.common import _stored_result, bot_to_move, reply_flipped
from bot.service.features.games import Games
from bot.service.features.puzzles import Puzzles
from bot.service.features.results import MoveMade
from bot.service.features.results_games import ChallengeClosed, DrawOffered, GameEnded
from bot.service.features.results_puzzles import Board
from bot.service.features.tournaments import Tournaments
from bot.service.notifications import (
    AnalysisFailed,
    AnalysisReady,
    BotMoved,
    ChallengeEdited,
    ChallengeLapsed,
    ChatRecordBeaten,
    DailyPosted,
    DaySummary,
    FirstSolver,
    LostOnTime,
    Notification,
    OwnPuzzlesDue,
    PrivateReminder,
    PrivateTurn,
    Reminder,
    StormFinished,
    TournamentNotice,
    TurnPing,
    WebDrawOffered,
    WebGameEnded,
    WebMoved,
)


def _named(reply: Reply, mention: Mention | None) -> Reply:
    """``reply`` pinging ``mention`` where its text names them (a ping needs the name to stand on)."""
    if mention is not None and mention.name in reply.text:
        reply.mentions.append(mention)
    return reply


class NoticePresenter:
    """Renders notifications; reads what never changes (a game's players, a post's puzzle, a
    challenge's terms, a stored analysis) through the four use cases that know them, not the
    whole service."""

    def __init__(self, *, games: Games, puzzles: Puzzles, challenges: Challenges, analysis: Analysis,
                 tournaments: Tournaments | None = None) -> None:
        self.game = games.game_row
        self.posts = puzzles
        self.challenges = challenges
        self.analysis = analysis
        self.puzzles = ChatNotices()
        self.tournaments = tournaments

    def __call__(self, notice: Notification) -> Reply:
        # A board a notice shows carries its position in words, as a command's board does.
        lang = getattr(notice, "lang", None)
        reply = self._present(notice)
        return with_alt(lang, reply) if isinstance(lang, str) else reply

    def _present(self, notice: Notification) -> Reply:
        if isinstance(notice, BotMoved):
            return self.bot_moved(notice)
        if isinstance(notice, WebMoved):
            return self.web_moved(notice)
        if isinstance(notice, WebDrawOffered):
            row = notice.state.on(self.game(notice.game_id))
            return present_game(notice.lang, DrawOffered(row, notice.offerer, notice.color))[0]
        if isinstance(notice, WebGameEnded):
            row = notice.state.on(self.game(notice.game_id))
            return present_game(notice.lang, GameEnded(row, _stored_result(row)))[0]
        if isinstance(notice, LostOnTime):
            row = notice.state.on(self.game(notice.game_id))
            return board_reply(notice.lang, row, over_text(notice.lang, row, _stored_result(row)))
        if isinstance(notice, Reminder | PrivateReminder):
            row = self.game(notice.game_id)
            name = name_of(notice.lang, row, notice.color)
            reply = Reply(reminder(notice.lang, name, row.id, notice.left), game_id=row.id)
            return _named(reply, notice.mention) if isinstance(notice, Reminder) else reply
        if isinstance(notice, PrivateTurn):
            white, black = names(notice.lang, self.game(notice.game_id))
            return Reply(t(notice.lang, "turn.private", id=notice.game_id, white=white, black=black,
                           left=duration(notice.lang, notice.left)), game_id=notice.game_id)
        if isinstance(notice, TurnPing):
            return Reply(t(notice.lang, "turn.ping", name=notice.mention.name, id=notice.game_id),
                         mentions=[notice.mention])
        if isinstance(notice, DailyPosted):
            post = self.posts.post_record(notice.post_id)
            return self.puzzles.daily_post(notice.lang, Board(post, self.posts.post_position(post), 0))
        if isinstance(notice, DaySummary):
            post = self.posts.post_record(notice.post_id)
            return self.puzzles.yesterday(notice.lang, self.posts.solvers(post, notice.at))
        if isinstance(notice, FirstSolver):
            post = self.posts.post_record(notice.post_id)
            return Reply(first_text(notice.lang, notice.name, post.day or "", notice.streak))
        if isinstance(notice, OwnPuzzlesDue):
            return own_reminder(notice)
        if isinstance(notice, ChallengeLapsed):
            return Reply(t(notice.lang, "challenge.expired", id=notice.challenge_id))
        if isinstance(notice, ChallengeEdited):
            ch = self.challenges.challenge_record(notice.challenge_id)
            return closed_edit(ChallengeClosed(ch, notice.status, notice.message_id, notice.lang, notice.by,
                                               notice.started))
        if isinstance(notice, AnalysisFailed):
            return analysis_failed(notice.lang, notice.game_id)
        if isinstance(notice, AnalysisReady):
            report = self.analysis.stored_report(notice.game_id, notice.ply)
            return analysis_report(notice.lang, report)
        if isinstance(notice, StormFinished):
            return present_storm.result_reply(notice)
        if isinstance(notice, ChatRecordBeaten):
            return record_message(notice)
        if isinstance(notice, TournamentNotice) and self.tournaments is not None:
            return tournament_notice(notice, self.tournaments)
        raise ValueError(f"no presenter for {type(notice).__name__}")

    def bot_moved(self, notice: BotMoved) -> Reply:
        lang, row = notice.lang, notice.state.on(self.game(notice.game_id))
        text = t(lang, "bot.played", bot=bot_name(lang, row), move=notice.move, id=row.id)
        if row.status == "finished":
            text += "\n" + over_text(lang, row, _stored_result(row))
        else:
            text += "\n" + to_move_line(lang, row, notice.at)
        reply = board_reply(lang, row, text)
        before = Position.from_fen(row.variant, notice.before)
        reply.animation = boards.capture_animation(before, before.parse_move(notice.move), flipped=reply_flipped(row))
        return _named(reply, notice.mention)

    def web_moved(self, notice: WebMoved) -> Reply:
        """A move played on the web page: the board reply the same move typed in the chat gets."""
        row = notice.state.on(self.game(notice.game_id))
        before = Position.from_fen(row.variant, notice.before)
        made = MoveMade(row, before, before.parse_move(notice.move), notice.mover,
                        _stored_result(row) if row.status == "finished" else None, notice.draw_declined,
                        bot_to_move(row), now=notice.at, turn=notice.mention)
        # The ping stands on the board when the board names the player (to_move_line does).
        return present_move(notice.lang, made)[0]
