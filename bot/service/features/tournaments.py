"""Tournaments in a chat: round robin and Swiss at correspondence pace (issue 32).

The pure core (``bot.tournaments``) pairs and ranks; this use case stores a tournament as one row
(its core state as JSON, with a version for compare-and-set), creates each round's games as
challenges create theirs (``Games.start_game``), follows ``GameFinished`` to record a result in the
same transaction (the round's last result pairs the next round in that transaction too, so a crash
can neither pair a round twice nor skip one: the save is a compare-and-set on the row's version),
and at a round's deadline forfeits the players who never moved and adjudicates the games still
running (``adjudicate``: the endgame tables where they reach, else the engine's search at a fixed
depth; a clear advantage, ADJUDICATION_MARGIN, wins, else a draw).

A forfeit is a game lost by a player who never moved in it (on time, at the deadline, or resigned
before their first move): "+-" / "-+", unrated (``ratings.is_rated`` leaves out a game lost on time
or resigned before its second ply).  A game lost on time after the player moved is a normal loss.
A withdrawal's running game ends as a forfeit too (``ResultReason.FORFEIT``, never rated: the
tournament already scores it), with its final board as an adjudicated game has.

Who may create or start a tournament (a group's admins) is the chat layer's check, as for the
other admin-only commands (/daily, /settings): the use case trusts it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import math
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

from bot import tournaments as core
from bot.ai import search_position
from bot.ai.egtb import verdict
from bot.rules import VARIANTS, Color, Position, Result, ResultReason
from bot.service.domain import EventBus, GameFinished
from bot.service.features.base import Outlet, Runtime, UseCase
from bot.service.features.common import log
from bot.service.features.games import Games
from bot.service.features.identity import Caller, Mention, Where
from bot.service.features.results_tournaments import (
    LAPSE_SECONDS,
    Cancelled,
    Entrant,
    Joined,
    Left,
    NewTournamentArgs,
    NoTournament,
    PairingsShown,
    PairingView,
    RoundsSet,
    RoundView,
    StandingRow,
    StandingsView,
    Started,
    TournamentCreated,
    TournamentHistory,
    TournamentInfo,
    TournamentRefused,
    TournamentShown,
)
from bot.service.notifications import (
    GameState,
    Notification,
    TournamentBye,
    TournamentFinished,
    TournamentGameEnded,
    TournamentGameReady,
    TournamentRoundEnded,
    TournamentRoundPaired,
)
from bot.storage import (
    StaleGame,
    StorageBusy,
    StorageContention,
    StorageFull,
    StorageGone,
    StorageUnavailable,
    in_transaction,
)
from bot.storage.records import GameRecord, TournamentGameRecord, TournamentRecord
from bot.storage.repositories import NewTournament, TournamentChange
from bot.tournaments import Format, Status, Tournament, TournamentError
from bot.tournaments.model import MAX_ROUND_ROBIN_PLAYERS, MIN_PLAYERS

# The adjudication rule (also in /help and the README): the endgame tables where they reach; else
# the engine's search to ADJUDICATION_DEPTH plies within ADJUDICATION_NODES nodes (the same answer
# on every machine); an advantage of at least 1.5 men (150 hundredths) wins, anything less draws.
ADJUDICATION_DEPTH = 8
ADJUDICATION_NODES = 400_000
ADJUDICATION_MARGIN = 150
# A round may not be shorter than an hour; a move time longer than the round still works (the
# round's deadline decides).
MIN_ROUND_SECONDS = 3600
MAX_ROUND_SECONDS = 60 * 86400
# A Swiss's rounds at most (the players bound it further at the start: each meets each other once).
MAX_ROUNDS = 50
HISTORY_SIZE = 10

_CROSS = {"1-0": ("1", "0"), "0-1": ("0", "1"), "1/2-1/2": ("½", "½"), "+-": ("+", "-"), "-+": ("-", "+")}
_ADVANCE_LIMIT = 64


@dataclass
class _DeadlineNote:
    """What a round's deadline ended (for the round's notice), per thread."""

    adjudicated: list[int] = field(default_factory=list)
    forfeited: list[int] = field(default_factory=list)


def _refused(error: TournamentError, count: int = 0) -> TournamentRefused:
    """The core's refusal with the numbers its sentence names (``count`` players joined, the bounds)."""
    values: dict[str, tuple[tuple[str, object], ...]] = {
        "too_few": (("least", MIN_PLAYERS), ("count", count)),
        "too_many_rounds": (("count", count), ("most", max(count - 1, 1))),
        "full": (("most", MAX_ROUND_ROBIN_PLAYERS),),
        "bad_rounds": (("most", MAX_ROUNDS),),
    }
    return TournamentRefused(error.code, values.get(error.code, ()))


def _cancelled(row: TournamentRecord, t: Tournament) -> bool:
    """Cancelled (or lapsed): the row is closed while the core's state never finished."""
    return row.status == Status.FINISHED.value and t.status is not Status.FINISHED


def _encode(t: Tournament) -> str:
    return json.dumps(core.to_data(t), ensure_ascii=False, separators=(",", ":"))


def _decode(row: TournamentRecord) -> Tournament:
    return core.from_data(json.loads(row.state))


def game_result(game: GameRecord) -> str:
    """A finished game's result for the tournament, from white's side: a game lost by a player who
    never moved in it (on time, resigned, withdrawn) is a forfeit."""
    if game.winner is not None and not _moved(game, Color.BLACK if game.winner == Color.WHITE else Color.WHITE):
        return "+-" if game.winner == Color.WHITE else "-+"
    if game.winner == Color.WHITE:
        return "1-0"
    if game.winner == Color.BLACK:
        return "0-1"
    return "1/2-1/2"


def _moved(game: GameRecord, color: Color) -> bool:
    """Whether ``color`` made a move in the game: the side that starts has once a ply was played,
    the other once two were."""
    start = Position.from_fen(game.variant, game.start_fen) if game.start_fen else Position.start(game.variant)
    first = start.turn
    return game.ply >= (1 if color == first else 2)


def adjudicate(variant: str, fen: str) -> Result:
    """A running game's result at a round's deadline (the stated rule, see the module)."""
    pos = Position.from_fen(variant, fen)
    side = pos.turn
    other = Color.BLACK if side == Color.WHITE else Color.WHITE
    said = verdict(pos)
    if said is not None:
        outcome = {"win": 1, "loss": -1}.get(said.result, 0)
    else:
        try:
            found = search_position(pos, ADJUDICATION_DEPTH, math.inf, nodes=ADJUDICATION_NODES)
        except ValueError:
            outcome = -1            # no legal move: the side to move has lost
        else:
            outcome = 1 if found.score >= ADJUDICATION_MARGIN else -1 if found.score <= -ADJUDICATION_MARGIN else 0
    if outcome == 0:
        return Result("1/2-1/2", ResultReason.ADJUDICATED)
    winner = side if outcome > 0 else other
    return Result("1-0" if winner == Color.WHITE else "0-1", ResultReason.ADJUDICATED, winner)


class Tournaments(UseCase):
    """The chat's tournament: creating, joining, leaving, starting; its rounds' games, results,
    deadlines; standings, pairings and history.  Follows GameFinished on ``bus``."""

    def __init__(self, runtime: Runtime, outlet: Outlet, games: Games, bus: EventBus) -> None:
        super().__init__(runtime, outlet)
        self.games = games
        self._note = threading.local()
        self._held = threading.local()
        bus.subscribe(GameFinished, self._game_finished)

    @contextlib.contextmanager
    def notices_after(self) -> Iterator[None]:
        """The tournament notices a result written inside this block causes (the round's standings,
        the next round's pairings) are written at its end, after what the block itself writes: a
        game lost on time shows its final board before the round it ended.  Inside the caller's
        unit of work; nothing is written when the block fails."""
        held: list[tuple[str, str, Notification]] = []
        outer = getattr(self._held, "value", None)
        self._held.value = held
        try:
            yield
        finally:
            self._held.value = outer
        for platform, chat, notice in held:
            self._say(platform, chat, notice)

    def _say(self, platform: str, chat: str, notice: Notification) -> None:
        held: list[tuple[str, str, Notification]] | None = getattr(self._held, "value", None)
        if held is not None:
            held.append((platform, chat, notice))
        else:
            self.tell(platform, chat, notice)

    # -- commands ------------------------------------------------------------------------------------

    def create(self, caller: Caller, args: NewTournamentArgs, lang: str) -> TournamentCreated | TournamentRefused:
        """/tournament new: open the chat's tournament for joining (refused: already_running when
        one is open or running here; bad_format, unknown_variant, bad_round_time, bad_move_time and
        the core's codes for bad settings).  ``lang``: the chat's language, the last guess of its
        variant.  The creator is not entered (an organiser need not play)."""
        try:
            fmt = Format(args.format)
        except ValueError:
            return TournamentRefused("bad_format", (("format", args.format[:20]),))
        variant = args.variant or self.games.default_variant(caller, lang)
        if variant not in VARIANTS:
            return TournamentRefused("unknown_variant", (("word", variant[:20]),))
        if args.move_seconds <= 0:
            return TournamentRefused("bad_move_time", (("word", f"{args.move_seconds}s"),))
        if not MIN_ROUND_SECONDS <= args.round_seconds <= MAX_ROUND_SECONDS:
            return TournamentRefused("bad_round_time", (("word", f"{args.round_seconds}s"),))
        if args.rounds is not None and not 1 <= args.rounds <= MAX_ROUNDS:
            return TournamentRefused("bad_rounds", (("most", MAX_ROUNDS),))
        settings = core.Settings(fmt, rounds=args.rounds if fmt is Format.SWISS else None, cycles=args.cycles,
                                 bye_points=args.bye_points, initial_color=self.rng.choice(["white", "black"]),
                                 name=(args.name or "Tournament")[:64])
        try:
            if fmt is Format.ROUND_ROBIN and args.rounds is not None:
                raise TournamentError("bad_rounds")
            t = core.new(settings)
        except TournamentError as e:
            return _refused(e)
        self._open(caller.where, caller.at)        # a lapsed one frees the chat's slot first
        tid = self.storage.tournaments.create(NewTournament(
            platform=caller.platform, chat_id=caller.chat_id, variant=variant, move_seconds=args.move_seconds,
            round_seconds=args.round_seconds, state=_encode(t), created_by=caller.user_id, created_at=caller.at))
        if tid is None:
            return TournamentRefused("already_running")
        row = self.storage.tournaments.get(tid)
        assert row is not None          # made just now
        return TournamentCreated(self._info(row, t))

    def join(self, caller: Caller) -> Joined | NoTournament | TournamentRefused:
        """/tournament join (and the Join button): the caller joins the chat's open tournament
        (refused: already_joined, already_started, full)."""
        row = self._open(caller.where, caller.at)
        if row is None:
            return NoTournament(self._had_history(caller.where))
        rating = self.storage.ratings.get(caller.platform, caller.user_id, row.variant)
        player = core.Player(caller.user_id, caller.name, int(round(rating.rating)) if rating else 0)
        before = _decode(row)
        try:
            after = core.join(before, player)
        except TournamentError as e:
            return _refused(e, len(before.players))
        saved, now_t = self._commit(row, before, after, caller.at)
        return Joined(self._info(saved, now_t), caller.user_id, caller.name)

    def leave(self, caller: Caller) -> Left | NoTournament | TournamentRefused:
        """/tournament leave: removed before the start; withdrawn after it (the game still running
        is a forfeit, past results stand, later rounds do without them).  Refused: not_in,
        already_left, finished."""
        row = self._open(caller.where, caller.at)
        if row is None:
            return NoTournament(self._had_history(caller.where))
        before = _decode(row)
        try:
            after = core.leave(before, caller.user_id)
        except TournamentError as e:
            return _refused(e, len(before.players))
        forfeited: list[int] = []
        # notices_after: the games' final boards go before what the round's end says.
        with self.storage.transaction(), self.notices_after():
            running = self._running_games(row, before, only=caller.user_id)
            saved, now_t = self._commit(row, before, after, caller.at)
            for game in running:
                # The result is the tournament's forfeit already (recorded above): the game ends as
                # one (unrated: the tournament scores it), so the board and the players hear it.
                winner = Color.BLACK if game.white_id == caller.user_id else Color.WHITE
                result = Result("1-0" if winner == Color.WHITE else "0-1", ResultReason.FORFEIT, winner)
                try:
                    ended = self.games.finish_game(game, result, caller.at, origin=caller.origin)
                except StaleGame as stale:
                    # A move came in meanwhile: the whole leave runs again on what is stored now.
                    raise StorageContention(f"game {game.id} moved while its player left") from stale
                self._tell_over(ended)
                forfeited.append(game.id)
        return Left(self._info(saved, now_t), caller.user_id, caller.name, removed=not before.started,
                    forfeited=tuple(forfeited))

    def start(self, caller: Caller) -> Started | NoTournament | TournamentRefused:
        """/tournament start: seed, pair round 1 and create its games (refused: too_few, below 3
        players; already_started; too_many_rounds, a Swiss of more rounds than players - 1)."""
        row = self._open(caller.where, caller.at)
        if row is None:
            return NoTournament(self._had_history(caller.where))
        before = _decode(row)
        try:
            after = core.start(before)
        except TournamentError as e:
            if e.code == "already_started":
                # Its own sentence: "joining is closed" answers a join, not a start.
                return TournamentRefused("running", (("round", len(before.rounds)),))
            return _refused(e, len(before.players))
        saved, now_t = self._commit(row, before, after, caller.at)
        return Started(self._info(saved, now_t), self._round(saved, now_t, 1))

    def cancel(self, caller: Caller) -> Cancelled | NoTournament:
        """/tournament cancel (the chat layer checks the admins): the chat's tournament ends where it
        stands, kept as cancelled (its row's status column says finished, which frees the chat for a
        new one; its state keeps where it stopped, so it reads as cancelled).  Nothing more is paired;
        the round's games still running go on as ordinary games, their results no longer recorded."""
        row = self._open(caller.where, caller.at)
        if row is None:
            return NoTournament(self._had_history(caller.where))
        t = _decode(row)
        with self.storage.transaction():
            running = tuple(g.id for g in self._running_games(row, t))
            saved = self.storage.tournaments.save(row.id, row.version, TournamentChange(
                row.state, Status.FINISHED.value, None, caller.at))
        return Cancelled(self._info(saved, t), running)

    def set_rounds(self, caller: Caller, rounds: int) -> RoundsSet | NoTournament | TournamentRefused:
        """/tournament rounds N (the chat layer checks the admins): a Swiss still registering gets
        ``rounds`` rounds, so a start refused as too_many_rounds is mended without cancelling
        (refused: running, rounds_roundrobin, bad_rounds)."""
        row = self._open(caller.where, caller.at)
        if row is None:
            return NoTournament(self._had_history(caller.where))
        before = _decode(row)
        if before.started:
            return TournamentRefused("running", (("round", len(before.rounds)),))
        if before.settings.format is not Format.SWISS:
            return TournamentRefused("rounds_roundrobin")
        if not 1 <= rounds <= MAX_ROUNDS:
            return TournamentRefused("bad_rounds", (("most", MAX_ROUNDS),))
        after = dataclasses.replace(before, settings=dataclasses.replace(before.settings, rounds=rounds))
        saved, now_t = self._commit(row, before, after, caller.at)
        return RoundsSet(self._info(saved, now_t))

    def _open(self, where: Where, now: float) -> TournamentRecord | None:
        """The chat's tournament open or running, None when there is none; one still registering
        LAPSE_SECONDS after its creation lapses here (cancelled), whoever asks first."""
        row = self.storage.tournaments.in_chat(*where.key)
        if row is None or row.status != Status.REGISTERING.value or now < row.created_at + LAPSE_SECONDS:
            return row
        with contextlib.suppress(StorageContention):     # someone else changed it: theirs stands
            self.storage.tournaments.save(row.id, row.version, TournamentChange(
                row.state, Status.FINISHED.value, None, row.created_at + LAPSE_SECONDS))
        return self.storage.tournaments.in_chat(*where.key)

    # -- views ---------------------------------------------------------------------------------------

    def current(self, where: Where) -> TournamentShown | NoTournament:
        """/tournament alone: the chat's open or running tournament (else NoTournament)."""
        row = self._open(where, self.clock())
        if row is None:
            return NoTournament(self._had_history(where))
        t = _decode(row)
        return TournamentShown(self._info(row, t), self._round(row, t, len(t.rounds)) if t.rounds else None)

    def view(self, tournament_id: int) -> TournamentInfo | None:
        """Tournament #``tournament_id`` as it stands (the web board, the CLI)."""
        row = self.storage.tournaments.get(tournament_id)
        return None if row is None else self._info(row, _decode(row))

    def find(self, platform: str | None = None, chat_id: str | None = None, status: str | None = None,
             limit: int | None = None) -> list[TournamentInfo]:
        """Stored tournaments, newest first (the operator's view)."""
        return [self._info(row, _decode(row))
                for row in self.storage.tournaments.find(platform, chat_id, status, limit)]

    def rounds(self, tournament_id: int) -> tuple[RoundView, ...]:
        """Every paired round of tournament #``tournament_id`` (none when there is no such one)."""
        row = self.storage.tournaments.get(tournament_id)
        if row is None:
            return ()
        t = _decode(row)
        games = self._game_ids(row)
        return tuple(self._round(row, t, n, games) for n in range(1, len(t.rounds) + 1))

    def trf(self, tournament_id: int) -> str | None:
        """Tournament #``tournament_id`` as a TRF16 file (None: no such tournament)."""
        row = self.storage.tournaments.get(tournament_id)
        return None if row is None else core.to_trf(_decode(row))

    def standings(self, where: Where, tournament_id: int | None = None) -> StandingsView | NoTournament:
        """/tournament standings: of tournament #``tournament_id``, else the chat's current one, else
        its last finished one (after the complete rounds)."""
        if tournament_id is not None:
            row = self.storage.tournaments.get(tournament_id)
        else:
            row = self._open(where, self.clock()) or next(
                iter(self.storage.tournaments.find(*where.key, status="finished", limit=1)), None)
        if row is None:
            return NoTournament(self._had_history(where))
        return self._standings(row, _decode(row), None)

    def standings_after(self, tournament_id: int, through: int | None = None) -> StandingsView | None:
        """The standings of tournament #``tournament_id`` after round ``through`` (None: every
        complete round): what a round's notice shows."""
        row = self.storage.tournaments.get(tournament_id)
        return None if row is None else self._standings(row, _decode(row), through)

    def pairings(self, where: Where, round_number: int | None = None,
                 tournament_id: int | None = None) -> PairingsShown | NoTournament | TournamentRefused:
        """/tournament pairings [round]: a round's boards (the current round by default; refused:
        no_round before round 1, no_such_round), of the chat's current tournament, else of its last
        finished one (as the standings)."""
        row = (self.storage.tournaments.get(tournament_id) if tournament_id is not None
               else self._open(where, self.clock()) or next(
                   iter(self.storage.tournaments.find(*where.key, status="finished", limit=1)), None))
        if row is None:
            return NoTournament(self._had_history(where))
        t = _decode(row)
        if not t.rounds:
            return TournamentRefused("no_round")
        number = len(t.rounds) if round_number is None else round_number
        if not 1 <= number <= len(t.rounds):
            return TournamentRefused("no_such_round", (("round", number), ("count", len(t.rounds))))
        return PairingsShown(self._info(row, t), self._round(row, t, number))

    def pairings_of(self, tournament_id: int, round_number: int) -> PairingsShown | None:
        """Round ``round_number`` of tournament #``tournament_id`` (a notice's pairings post)."""
        row = self.storage.tournaments.get(tournament_id)
        if row is None:
            return None
        t = _decode(row)
        if not 1 <= round_number <= len(t.rounds):
            return None
        return PairingsShown(self._info(row, t), self._round(row, t, round_number))

    def history(self, where: Where) -> TournamentHistory | NoTournament:
        """/tournament history: the chat's finished tournaments, newest first."""
        rows = self.storage.tournaments.find(*where.key, status="finished", limit=HISTORY_SIZE)
        if not rows:
            return NoTournament(False)
        return TournamentHistory(tuple(self._info(row, _decode(row)) for row in rows))

    # -- timed work ----------------------------------------------------------------------------------

    def run_due(self, platform: str | None = None, now: float | None = None) -> int:
        """Rounds past their deadline: players who never moved forfeit, running games are
        adjudicated (each tournament in one transaction).  How many games were ended."""
        now = self.clock() if now is None else now
        ended = 0
        try:
            due = self.storage.tournaments.due(now, platform)
        except (StorageUnavailable, StorageBusy, StorageFull):
            return 0
        for row in due:
            try:
                ended += in_transaction(self.storage, functools.partial(self._deadline, row.id, now))
            except StaleGame:
                continue            # a move came first: the next look ends the round
            except (StorageUnavailable, StorageBusy, StorageFull, StorageGone):
                break
            except Exception:
                log.exception("round deadline failed for tournament %s", row.id)
        for name in {row.platform for row in due}:
            self._notify(name)
        return ended

    def _deadline(self, tournament_id: int, now: float) -> int:
        row = self.storage.tournaments.get(tournament_id)
        if row is None or row.status != "running" or row.round_deadline is None or row.round_deadline > now:
            return 0
        t = _decode(row)
        note = _DeadlineNote()
        self._note.value = note
        try:
            with self.notices_after():
                for game in self._running_games(row, t):
                    if game.ply < 2:
                        # Lost on time by the player who never moved: the chat sees the final board as
                        # for any loss on time (before the round's standings).
                        note.forfeited.append(game.id)
                        mover = self.games.player_to_move(game)
                        lang = self.games.game_lang(game, mover[0]) if mover else self.games.chat_lang(
                            game.platform, game.chat_id)
                        self.tell(game.platform, game.chat_id, self.games.time_out(lang, game, now))
                        continue
                    note.adjudicated.append(game.id)
                    self._tell_over(self.games.finish_game(game, adjudicate(game.variant, game.fen), now))
        finally:
            self._note.value = None
        row = self.storage.tournaments.get(tournament_id)
        assert row is not None
        if row.status == "running" and row.round_deadline is not None and row.round_deadline <= now:
            # The round is still open with no game left running: a finished game whose result the
            # tournament lacks is recorded now; if that is not enough the deadline moves on a round's
            # length, so the timed work does not look at it again at every tick.
            t = after = _decode(row)
            ids = self._game_ids(row)
            number = len(t.rounds)
            for p in t.rounds[-1].pairings if t.rounds else ():
                gid = ids.get((number, p.white))
                ended = self.storage.games.get(gid) if gid is not None and not p.decided else None
                if ended is not None and ended.status == "finished":
                    after = core.record_result(after, number, p.white, game_result(ended))
            if not core.round_complete(after):
                log.warning("tournament %s: round %s has undecided boards and no game running", row.id, number)
                self.storage.tournaments.save(row.id, row.version, TournamentChange(
                    row.state, row.status, now + row.round_seconds, row.finished_at))
            else:
                self._commit(row, t, after, now)
        return len(note.adjudicated) + len(note.forfeited)

    # -- results -------------------------------------------------------------------------------------

    def _game_finished(self, event: GameFinished) -> None:
        """A tournament game's result goes into its tournament in the game's transaction (and the
        round's last one pairs the next round there too)."""
        game = event.game
        tg = self.storage.tournaments.of_game(game.id)
        if tg is None:
            return
        row = self.storage.tournaments.get(tg.tournament_id)
        if row is None:
            return
        before = _decode(row)
        if _cancelled(row, before):
            return                  # an ordinary game now: the tournament stopped
        if tg.round > len(before.rounds):
            return
        mine = before.rounds[tg.round - 1].pairing_of(game.white_id)
        if mine is None or mine.decided or mine.black != game.black_id:
            return                  # decided already (a withdrawal's forfeit)
        after = core.record_result(before, tg.round, game.white_id, game_result(game))
        self._commit(row, before, after, game.finished_at if game.finished_at is not None else self.clock())

    # -- storing a change ----------------------------------------------------------------------------

    def _commit(self, row: TournamentRecord, before: Tournament, after: Tournament,
                now: float) -> tuple[TournamentRecord, Tournament]:
        """Store ``after`` and what follows from it in one transaction: the next rounds paired while
        the current one is complete (a round of forfeits and byes only is complete at once), their
        games and notices, the round's standings, the end.  StorageContention when another change
        came first (the caller's unit of work runs again)."""
        t = after
        for _ in range(_ADVANCE_LIMIT):
            if not (t.started and t.status is Status.RUNNING and core.round_complete(t)):
                break
            t = core.pair_next_round(t)
        paired = range(len(before.rounds) + 1, len(t.rounds) + 1)
        deadline = row.round_deadline
        if t.status is not Status.RUNNING:
            deadline = None
        elif len(paired):
            deadline = now + row.round_seconds
        finished = t.status is Status.FINISHED and before.status is not Status.FINISHED
        with self.storage.transaction():
            saved = self.storage.tournaments.save(row.id, row.version, TournamentChange(
                _encode(t), t.status.value, deadline, now if finished else row.finished_at))
            platform, chat = row.platform, row.chat_id
            lang = self.games.chat_lang(platform, row.chat_id)
            note: _DeadlineNote | None = getattr(self._note, "value", None)
            for number in range(1, len(t.rounds) + 1):
                was = number <= len(before.rounds) and before.rounds[number - 1].complete
                if t.rounds[number - 1].complete and not was and number not in paired:
                    self._say(platform, chat, TournamentRoundEnded(
                        row.id, lang, number, tuple(note.adjudicated) if note else (),
                        tuple(note.forfeited) if note else ()))
            for number in paired:
                self._pair_games(saved, t, number, deadline or now, lang)
                if t.rounds[number - 1].complete:
                    self._say(platform, chat, TournamentRoundEnded(row.id, lang, number))
            if finished:
                table = core.standings(t)
                if table:
                    top = table[0]
                    self._say(platform, chat, TournamentFinished(row.id, lang, top.player, t.player(top.player).name,
                                                                 top.points))
        self._notify(platform)
        return saved, t

    def _pair_games(self, row: TournamentRecord, t: Tournament, number: int, deadline: float, lang: str) -> None:
        """Round ``number``'s games, created as /new creates them, and their notices: the pairings
        post, then each player's ping."""
        platform, chat = row.platform, row.chat_id
        at = deadline - row.round_seconds
        pings: list[Notification] = []
        for p in t.rounds[number - 1].pairings:
            if p.black is None:
                # The bye: no game, but the player hears it (else they only wait for a ping).
                if t.withdrawn_after(p.white) is None:
                    pings.append(TournamentBye(row.id, lang, number, t.settings.bye_points,
                                               self._mention(platform, t.player(p.white))))
                continue
            if p.result is not None:
                continue            # a withdrawn player's forfeit: no game
            white, black = t.player(p.white), t.player(p.black)
            game = self.games.start_game(platform, chat, row.variant, (white.id, white.name), (black.id, black.name),
                                         row.move_seconds, at)
            self.storage.tournaments.add_game(TournamentGameRecord(game.id, row.id, number, white.id, black.id))
            for me, other, color in ((white, black, "white"), (black, white, "black")):
                pings.append(TournamentGameReady(row.id, lang, number, game.id, color, other.name,
                                                 self._mention(platform, me)))
        self._say(platform, chat, TournamentRoundPaired(row.id, lang, number, deadline))
        for ping in pings:
            self._say(platform, chat, ping)

    def _tell_over(self, game: GameRecord) -> None:
        """A game the tournament ended (adjudicated, forfeited): its final board in its chat, as a
        loss on time shows one."""
        lang = self.games.chat_lang(game.platform, game.chat_id)
        self.tell(game.platform, game.chat_id, TournamentGameEnded(game.id, lang, GameState.of(game)))

    def _mention(self, platform: str, player: core.Player) -> Mention:
        known = self.storage.players.get(platform, player.id)
        return Mention(player.id, player.name, known.username if known else None)

    # -- reading -------------------------------------------------------------------------------------

    def _had_history(self, where: Where) -> bool:
        return bool(self.storage.tournaments.find(*where.key, status="finished", limit=1))

    def _game_ids(self, row: TournamentRecord) -> dict[tuple[int, str], int]:
        return {(g.round, g.white_id): g.game_id for g in self.storage.tournaments.games(row.id)}

    def _running_games(self, row: TournamentRecord, t: Tournament, only: str | None = None) -> list[GameRecord]:
        """The games of the current round still being played (``only``: that player's)."""
        if not t.rounds:
            return []
        number = len(t.rounds)
        out = []
        for g in self.storage.tournaments.games(row.id):
            if g.round != number or (only is not None and only not in (g.white_id, g.black_id)):
                continue
            game = self.storage.games.get(g.game_id)
            if game is not None and game.status == "active":
                out.append(game)
        return out

    def _info(self, row: TournamentRecord, t: Tournament) -> TournamentInfo:
        gone = {pid for pid, _ in t.withdrawn}
        won = core.winner(t)
        return TournamentInfo(
            id=row.id, platform=row.platform, chat_id=row.chat_id, place=None, name=t.settings.name,
            format=t.settings.format.value, variant=row.variant, move_seconds=row.move_seconds,
            round_seconds=row.round_seconds, bye_points=t.settings.bye_points, cycles=t.settings.cycles,
            status="cancelled" if _cancelled(row, t) else t.status.value,
            rounds_total=t.total_rounds if (t.started or t.settings.format is Format.SWISS) else None,
            round=len(t.rounds), players=tuple(Entrant(p.id, p.name, p.id in gone) for p in t.players),
            created_by=row.created_by, created_at=row.created_at, finished_at=row.finished_at,
            winner_id=won, winner_name=t.player(won).name if won else None)

    def _round(self, row: TournamentRecord, t: Tournament, number: int,
               games: dict[tuple[int, str], int] | None = None) -> RoundView:
        games = self._game_ids(row) if games is None else games
        rnd = t.rounds[number - 1]
        boards = tuple(PairingView(
            board=i, white_id=p.white, white_name=t.player(p.white).name, black_id=p.black,
            black_name=t.player(p.black).name if p.black is not None else None,
            game_id=games.get((number, p.white)) if p.black is not None else None, result=p.result)
            for i, p in enumerate(rnd.pairings, start=1))
        deadline = row.round_deadline if number == len(t.rounds) and row.status == "running" else None
        return RoundView(number, boards, deadline, rnd.complete)

    def _standings(self, row: TournamentRecord, t: Tournament, through: int | None) -> StandingsView:
        from bot.tournaments.standings import entries, rounds_counted

        counted = rounds_counted(t) if through is None else max(0, min(through, rounds_counted(t)))
        table = core.standings(t, counted)
        played = {pid: sum(1 for e in rows if e.played) for pid, rows in entries(t, counted).items()}
        rows = tuple(StandingRow(s.rank, s.player, t.player(s.player).name, s.points,
                                 tuple((tb.value, value) for tb, value in s.tiebreaks), played.get(s.player, 0),
                                 s.withdrawn) for s in table)
        cross = None
        if t.settings.format is Format.ROUND_ROBIN:
            order = [r.player_id for r in rows]
            where = {pid: i for i, pid in enumerate(order)}
            cells: list[list[list[str]]] = [[[] for _ in order] for _ in order]
            for rnd in t.rounds[:counted]:
                for p in rnd.pairings:
                    if p.black is None or p.result is None:
                        continue
                    w, b = where[p.white], where[p.black]
                    mark_w, mark_b = _CROSS[p.result]
                    cells[w][b].append(mark_w)
                    cells[b][w].append(mark_b)
            cross = tuple(tuple("x" if i == j else (" ".join(c) if c else None) for j, c in enumerate(line))
                          for i, line in enumerate(cells))
        final = t.status is Status.FINISHED and through is None
        return StandingsView(self._info(row, t), rows, counted, cross, final)
