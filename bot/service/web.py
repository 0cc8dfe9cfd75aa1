"""The board layer: what a web page of one game shows and does, beside the chat layer (``bot.service.chat``).

A page asks for a game's state (``BoardLayer.state``: typed, JSON-able) and acts for one player
through the SAME use cases a chat message goes through, called directly with the seat's identity
(``Caller``) and typed requests: a tapped path is ``Play.play_path``, a typed move ``Play.move``,
then ``Play.draw`` and ``Play.resign``.  The rules engine judges every move, and no rule lives in
the page (it is sent the legal moves with their paths and offers only those).  What a player does
on the page is told to the game's chat through the outbox, written in the transaction of the
change itself (a subscriber of the domain events, see ``_on_move``: the action's ``_Acting`` rides
in the request as ``Caller.origin`` and comes back in the events), as the board reply a typed move
gets.

Who may act: the holder of a signed seat link (``seat_token``: HMAC-SHA256 over the game, the
platform, the user, an expiry and the seat's generation, with a key derived from the database's
link secret; ``new_seat_generation`` revokes a seat's older links).  Who may watch: a player, or
the holder of a signed spectator link (``watch_token``: the game's number with its own HMAC); a
game's number alone shows nothing.  A finished game's links only show it.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
import hmac
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bot.ai import MoveNote
from bot.i18n import LANGUAGES, catalog, pick_language, t
from bot.rules import Color, Move, Position, format_move, write_pdn
from bot.service.chat import presenters
from bot.service.chat.describe import describe
from bot.service.chat.present_games import name_of, over_text, to_move_line
from bot.service.chat.present_stats import analysis as present_analysis
from bot.service.chat.present_stats import ending_entry
from bot.service.chat.wording import variant_name
from bot.service.domain import EventBus, GameFinished, MovePlayed
from bot.service.events import Mention
from bot.service.features.analysis import Analysis
from bot.service.features.base import Outlet, Runtime
from bot.service.features.common import _stored_result, bot_to_move, reply_flipped
from bot.service.features.games import Games
from bot.service.features.identity import Caller, Player, Where
from bot.service.features.play import Play
from bot.service.features.results import MoveIllegal, MoveMade, MoveOutcome, MoveRequest, MoveStale
from bot.service.features.results_games import (
    BotDrawAnswer,
    DrawOffered,
    GameEnded,
    GameRef,
    NoGame,
    Refused,
    ResignAsked,
    TimedOut,
)
from bot.service.features.results_puzzles import Acted
from bot.service.features.results_stats import AnalysisRequest, AnalysisStarted
from bot.service.features.results_tournaments import PairingsShown, StandingsView
from bot.service.features.storm import Storm
from bot.service.features.tournaments import Tournaments
from bot.service.notifications import GameState, WebDrawOffered, WebGameEnded, WebMoved
from bot.service.storm_page import StormPage as StormPage
from bot.service.storm_page import page_texts as _storm_texts
from bot.service.tournament_page import TournamentLinks, build_view
from bot.service.tournament_page import TournamentView as TournamentView
from bot.service.tournament_page import page_texts as _tournament_texts
from bot.storage import (
    BOT_ID,
    StorageBusy,
    StorageContention,
    StorageFull,
    StorageGone,
    Store,
    in_transaction,
    retry_contention,
)
from bot.storage.records import GameRecord

# A seat link holds this long unless asked otherwise (a week: games with long move times are
# opened again from a fresh /web).
LINK_SECONDS = 7 * 24 * 3600
# A Telegram Mini App session's seat holds this long after Telegram signed its initData (which is
# taken at most an hour old, bot.platforms.web.auth): about as long as one sitting in Telegram,
# and a new one is issued each time the Mini App opens.
SESSION_SECONDS = 4 * 3600
# What the keys that sign seat and spectator links are derived with (the database's link secret
# also signs other links: each use has its own key).
_LINK_LABEL = b"draughts web board seat link v1"
_WATCH_LABEL = b"draughts web board spectator link v1"
# Version 2 carries the seat's generation; a version 1 link (before generations) is generation 0.
_TOKEN_VERSION = 2
# A spectator link's token: the game and 16 bytes of its HMAC (22 base64url characters).  The
# same two parts, in Telegram's start parameters, are ``g<game>s<mac>`` and ``w<game>s<mac>``
# (letters, digits, - and _ only).
WATCH_MAC = r"[A-Za-z0-9_-]{22}"
_WATCH_TOKEN = re.compile(r"w([0-9]{1,9})s(" + WATCH_MAC + ")")


@dataclass(frozen=True)
class Seat:
    """A verified seat link: ``user_id`` of ``platform`` may act in game ``game_id`` until ``expires``."""

    game_id: int
    platform: str
    user_id: str
    expires: float


@dataclass(frozen=True)
class Watch:
    """A verified spectator link: game ``game_id`` may be watched (never acted in)."""

    game_id: int


@dataclass(frozen=True)
class LinkRefused:
    """A link that gives no right: ``reason`` is invalid (forged, damaged, another key), expired or
    revoked (a newer link of that seat was given since); ``key`` the catalog text that says so."""

    reason: str

    @property
    def key(self) -> str:
        return f"web.link_{self.reason}"


@dataclass(frozen=True)
class BoardMove:
    """One legal move as the page offers it."""

    path: tuple[int, ...]
    captured: tuple[int, ...]
    notation: str
    promotes: bool

    def to_json(self) -> dict[str, Any]:
        return {"path": list(self.path), "captured": list(self.captured), "notation": self.notation,
                "promotes": self.promotes}


@dataclass(frozen=True)
class BoardState:
    """Everything a page shows of one game, for one viewer (``you``: the seat's colour, None for a
    spectator), worded in ``lang``.  ``squares``: each playable square's number with its row and
    column (row 0 at the top, seen from White), the same geometry the chat's pictures are drawn
    from; ``flipped``: seen from Black's side, by the chat's rule for this viewer."""

    game_id: int
    version: int
    ply: int
    lang: str
    variant: str
    variant_name: str
    size: int
    squares: tuple[tuple[int, int, int], ...]
    flipped: bool
    pieces: dict[int, str]
    turn: str
    status: str
    status_text: str
    players: dict[str, dict[str, Any]]
    you: str | None
    moves: tuple[BoardMove, ...]
    last_move: dict[str, Any] | None
    captured: dict[str, int]
    draw_offer: str | None
    deadline: float | None
    now: float
    move_seconds: int
    bot_to_move: bool
    result: dict[str, Any] | None = None
    # The position in words (whose turn, each side's men and kings by square), as the chat's
    # pictures carry it: the page's text alternative of the board.
    description: str = ""

    def to_json(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        data["squares"] = [list(s) for s in self.squares]
        data["pieces"] = {str(sq): code for sq, code in self.pieces.items()}
        data["moves"] = [m.to_json() for m in self.moves]
        return data


@dataclass(frozen=True)
class BoardAnswer:
    """What an action from the page came to: ``outcome`` is ok, illegal (the rules refused the
    move), refused (not possible now: not a player, game over, out of date), busy (the database
    stayed locked) or failed (the database is gone); ``message`` says so in the viewer's language;
    ``state``: the game as it is now (None when there is no such game).  ``forbidden``: the seat
    is not a player's of this game."""

    outcome: str
    message: str
    state: BoardState | None = None


def position_json(pos: Position) -> dict[str, Any]:
    """A position as the review API gives it: the rules engine's FEN, the pieces by square, whose turn."""
    return {"fen": pos.fen(), "pieces": {str(sq): code for sq, code in pos.pieces().items()},
            "turn": pos.turn.value}


@dataclass(frozen=True)
class ReviewPly:
    """One ply of a game as played: ``number`` the move number (both sides' plies of a move share
    it), ``side`` W or B, ``notation`` as the chat writes it, ``after`` the position it led to."""

    ply: int
    number: int
    side: str
    notation: str
    path: tuple[int, ...]
    captured: tuple[int, ...]
    after: Position

    def to_json(self) -> dict[str, Any]:
        return {"ply": self.ply, "number": self.number, "side": self.side, "notation": self.notation,
                "captured": list(self.captured), "path": list(self.path)}


@dataclass(frozen=True)
class GameRecordView:
    """A game's moves for review: the first position and every ply (``/api/g/<id>/moves``), and the
    position after any ply (``/api/g/<id>/ply/<n>``, ``at``)."""

    game_id: int
    variant: str
    status: str
    start: Position
    plies: tuple[ReviewPly, ...]

    def to_json(self, lang: str | None = None) -> dict[str, Any]:
        """With ``lang``, the first position also in words (``start.description``)."""
        start = position_json(self.start)
        if lang is not None:
            start["description"] = describe(lang, self.start)
        return {"game_id": self.game_id, "variant": self.variant, "status": self.status,
                "plies": len(self.plies), "start": start, "moves": [p.to_json() for p in self.plies]}

    def at(self, ply: int, lang: str | None = None) -> dict[str, Any] | None:
        """The position after ``ply`` (0: the first position) with the move that led to it; None
        when the game has no such ply.  With ``lang``, also the position in words (``description``)."""
        if not 0 <= ply <= len(self.plies):
            return None
        pos = self.start if ply == 0 else self.plies[ply - 1].after
        move = None if ply == 0 else self.plies[ply - 1].to_json()
        shown = {"game_id": self.game_id, "ply": ply, "move": move, **position_json(pos)}
        if lang is not None:
            shown["description"] = describe(lang, pos)
        return shown


@dataclass
class _Acting:
    """A page's action in progress: handed to the use cases as the request's ``origin`` and back to
    the domain-event subscribers (which run inside the action's transaction) in the events."""

    kind: str                       # move, draw or resign
    game_id: int
    user_id: str
    lang: str                       # the chat's language: what the chat is told in
    mover: str
    before: GameRecord
    at: float
    told: bool = field(default=False)



# What an action from a page runs, with its caller, the game as read and the action itself.
_Run = Callable[[Caller, GameRecord, _Acting], tuple[str, str]]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def page_texts(lang: str) -> dict[str, str]:
    """The page's own words in ``lang`` (every ``web.*`` catalog key, without its prefix)."""
    return {key[4:]: t(lang, key) for key in catalog("en") if key.startswith("web.") and "{" not in catalog("en")[key]}


def storm_texts(lang: str) -> dict[str, str]:
    """The storm page's own words in ``lang`` (every ``storm.page.*`` catalog key, without its prefix)."""
    return _storm_texts(lang)


def tournament_texts(lang: str) -> dict[str, str]:
    """The tournament page's own words in ``lang`` (every ``webt.*`` catalog key, without its prefix)."""
    return _tournament_texts(lang)


class BoardLayer:
    """The web board's entry to the service (see the module's docstring).  It is given the two use
    cases a page calls (``games``, ``play``), the runtime they share (storage, clock), the domain
    events' ``bus`` and ``outlet``, the service's outbox (and whom to wake when it got a message):
    no more than it calls, so what a page can do is read here."""

    def __init__(self, runtime: Runtime, bus: EventBus, games: Games, play: Play, outlet: Outlet,
                 tournaments: Tournaments | None = None, analysis: Analysis | None = None,
                 storm: Storm | None = None) -> None:
        self.runtime = runtime
        # The stored analysis a page shows, and the page's own request for one (None: no analysis view).
        self.analysis = analysis
        self.games = games
        self.play = play
        self.outlet = outlet
        # What the tournament page reads (None: no tournament page, as in a board built without it).
        self.tournaments = tournaments
        self.tournament_links = TournamentLinks(lambda: self.storage.settings.link_secret())
        # The storm page's reads and answers (None: no storm page, as in a board built without it).
        self.storm = (StormPage(storm, lambda: self.storage.settings.link_secret(), games.chat_lang)
                      if storm is not None else None)
        self._key: bytes | None = None
        self._watch: bytes | None = None
        bus.subscribe(MovePlayed, self._on_move)
        bus.subscribe(GameFinished, self._on_finished)
        # The games moved or ended since a server last asked (``take_changed``), so it wakes only
        # their pages' streams.
        self._changed: set[int] = set()
        self._changed_lock = threading.Lock()
        bus.subscribe(MovePlayed, self._note_changed)
        bus.subscribe(GameFinished, self._note_changed)

    def _note_changed(self, event: MovePlayed | GameFinished) -> None:
        with self._changed_lock:
            self._changed.add(event.game.id)

    def take_changed(self) -> set[int]:
        """The games a move or a result changed since the last call (emptied by it).  Other changes
        (a draw offer, a setting) are not in it: an empty set means "look at every game"."""
        with self._changed_lock:
            taken, self._changed = self._changed, set()
        return taken

    @property
    def storage(self) -> Store:
        return self.runtime.storage

    @property
    def clock(self) -> Callable[[], float]:
        return self.runtime.clock

    # -- seat links ------------------------------------------------------------------------------

    def _link_key(self) -> bytes:
        if self._key is None:
            self._key = hmac.new(self.storage.settings.link_secret(), _LINK_LABEL, hashlib.sha256).digest()
        return self._key

    def _watch_key(self) -> bytes:
        if self._watch is None:
            self._watch = hmac.new(self.storage.settings.link_secret(), _WATCH_LABEL, hashlib.sha256).digest()
        return self._watch

    def watch_mac(self, game_id: int) -> str:
        """The signature of game ``game_id``'s spectator links (22 base64url characters)."""
        return _b64(hmac.new(self._watch_key(), f"watch:{game_id}".encode("ascii"), hashlib.sha256).digest()[:16])

    def watch_token(self, game_id: int) -> str:
        """A link token that lets anyone who has it watch game ``game_id`` (it never expires: a
        board message's button keeps working; it never acts)."""
        return f"w{game_id}s{self.watch_mac(game_id)}"

    def watch_signed(self, game_id: int, mac: str | None) -> bool:
        """Whether ``mac`` is game ``game_id``'s spectator signature."""
        return mac is not None and hmac.compare_digest(mac.encode("utf-8", "replace"),
                                                       self.watch_mac(game_id).encode("ascii"))

    @staticmethod
    def _seat_key(game_id: int, platform: str, user_id: str) -> str:
        return f"web_seat:{game_id}:{platform}:{user_id}"

    def seat_generation(self, game_id: int, platform: str, user_id: str) -> int:
        """The seat's current generation: only its links of this generation act (0 until the first
        ``new_seat_generation``)."""
        value = self.storage.settings.pending(self._seat_key(game_id, platform, user_id))
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    def new_seat_generation(self, game_id: int, platform: str, user_id: str) -> int:
        """Revoke every seat link (and Mini App session) given so far for ``user_id`` in game
        ``game_id``: links signed from now on carry the generation returned."""
        key = self._seat_key(game_id, platform, user_id)

        def bump() -> int:
            generation = self.seat_generation(game_id, platform, user_id) + 1
            self.storage.settings.set_pending(key, generation)
            return generation

        def unit() -> int:
            with self.storage.transaction():
                return bump()
        return in_transaction(self.storage, unit)

    def seat_token(self, game_id: int, platform: str, user_id: str, seconds: float = LINK_SECONDS,
                   now: float | None = None, generation: int | None = None) -> str:
        """A link token that lets ``user_id`` of ``platform`` act in game ``game_id`` for ``seconds``
        (from ``now``), while the seat's generation is ``generation`` (default: the current one)."""
        expires = int((self.clock() if now is None else now) + seconds)
        if generation is None:
            generation = self.seat_generation(game_id, platform, user_id)
        payload = _b64(json.dumps([_TOKEN_VERSION, game_id, platform, user_id, expires, generation],
                                  separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
        mac = hmac.new(self._link_key(), payload.encode("ascii"), hashlib.sha256).digest()
        return f"{payload}.{_b64(mac)}"

    def session_token(self, game_id: int, platform: str, user_id: str, signed_at: float) -> str:
        """A Mini App session's seat: ``SESSION_SECONDS`` from when Telegram signed its initData."""
        return self.seat_token(game_id, platform, user_id, SESSION_SECONDS, now=signed_at)

    def read_token(self, token: str, now: float | None = None) -> Seat | Watch | LinkRefused:
        """The seat or the spectator's view a token gives, or why it gives none (forged, damaged,
        expired, revoked)."""
        token = token.strip()
        watch = _WATCH_TOKEN.fullmatch(token)
        if watch is not None:
            game = int(watch[1])
            return Watch(game) if self.watch_signed(game, watch[2]) else LinkRefused("invalid")
        payload, _, mac_text = token.partition(".")
        if not payload or not mac_text or len(token) > 2048:
            return LinkRefused("invalid")
        try:
            mac = _unb64(mac_text)
            expected = hmac.new(self._link_key(), payload.encode("ascii"), hashlib.sha256).digest()
        except (ValueError, binascii.Error, UnicodeEncodeError):
            return LinkRefused("invalid")
        if not hmac.compare_digest(mac, expected):
            return LinkRefused("invalid")
        try:
            fields = json.loads(_unb64(payload).decode("utf-8"))
            version, game_id, platform, user_id, expires = fields[:5]
            generation = fields[5] if version == _TOKEN_VERSION else 0
        except (ValueError, TypeError, IndexError, KeyError, UnicodeDecodeError, binascii.Error, RecursionError):
            return LinkRefused("invalid")
        if (len(fields) != (6 if version == _TOKEN_VERSION else 5) or version not in (1, _TOKEN_VERSION)
                or not isinstance(game_id, int) or not isinstance(platform, str) or not isinstance(user_id, str)
                or not isinstance(expires, int) or not isinstance(generation, int)):
            return LinkRefused("invalid")
        if expires < (self.clock() if now is None else now):
            return LinkRefused("expired")
        if generation != self.seat_generation(game_id, platform, user_id):
            return LinkRefused("revoked")
        return Seat(game_id, platform, user_id, float(expires))

    def plays(self, game_id: int, platform: str, user_id: str) -> bool:
        """Whether ``user_id`` of ``platform`` is a player of game ``game_id``."""
        row = self.storage.games.get(game_id)
        return row is not None and row.platform == platform and user_id in (row.white_id, row.black_id)

    def player_games(self, platform: str, chat_id: str, user_id: str) -> list[int]:
        """The active games of ``user_id`` in a chat, newest first (the console's /web)."""
        games = [g for g in self.storage.games.active_in(platform, chat_id) if user_id in (g.white_id, g.black_id)]
        return sorted((g.id for g in games), reverse=True)

    def link_path(self, game_id: int, platform: str, user_id: str | None, fresh: bool = False) -> str:
        """The page of a game (``/g/<id>?t=...``): with a seat token when ``user_id`` plays in it
        (``fresh``: of a new generation, the seat's older links revoked), else a spectator's token.
        Only for someone who may watch the game (a member of its chat)."""
        if user_id is None or not self.plays(game_id, platform, user_id):
            return f"/g/{game_id}?t={self.watch_token(game_id)}"
        generation = self.new_seat_generation(game_id, platform, user_id) if fresh else None
        return f"/g/{game_id}?t={self.seat_token(game_id, platform, user_id, generation=generation)}"

    # -- tournaments -------------------------------------------------------------------------------

    def tournament_path(self, tournament_id: int) -> str:
        """The tournament's page, ``/t/<id>?t=t<id>s<mac>`` (signed: only for its chat, where its
        games are played; prefix it with the board's public address)."""
        return self.tournament_links.path(tournament_id)

    def tournament_signed(self, tournament_id: int, token: str | None) -> bool:
        """Whether ``token`` opens tournament ``tournament_id``'s page."""
        return self.tournament_links.read(token) == tournament_id

    def tournament(self, tournament_id: int, asked: str | None = None) -> TournamentView | None:
        """Tournament #``tournament_id``'s standings and every round's pairings as the page shows
        them, read through the use case, in the language ``asked`` when we speak it, else its
        chat's; None when there is no such tournament."""
        if self.tournaments is None:
            return None
        info = self.tournaments.view(tournament_id)
        if info is None:
            return None
        code = (asked or "").strip().lower()[:2]
        lang = code if code in LANGUAGES else self.games.chat_lang(info.platform, info.chat_id)
        where = Where(info.platform, info.chat_id)
        table = self.tournaments.standings(where, tournament_id)
        if not isinstance(table, StandingsView):
            return None
        rounds = []
        for number in range(1, info.round + 1):
            shown = self.tournaments.pairings(where, number, tournament_id)
            if isinstance(shown, PairingsShown):
                rounds.append(shown.round)
        return build_view(info, table, rounds, lang,
                          lambda game: f"/g/{game}?t={self.watch_token(game)}")

    # -- reading -------------------------------------------------------------------------------------

    def version(self, game_id: int) -> int | None:
        """The game's version (every change bumps it), None when there is no such game."""
        row = self.storage.games.get(game_id)
        return None if row is None else row.version

    def language(self, game_id: int, asked: str | None) -> str:
        """The language to show a game in: the one asked for when we speak it, else its chat's."""
        if asked:
            code = asked.strip().lower()[:2]
            if code in LANGUAGES:
                return code
        row = self.storage.games.get(game_id)
        return self.games.chat_lang(row.platform, row.chat_id) if row is not None else pick_language(None)

    def game_row(self, game_id: int) -> GameRecord | None:
        """The game as stored now (a stream hub reads it once and builds every view from it)."""
        return self.storage.games.get(game_id)

    def state_of(self, row: GameRecord, seat: Seat | None, lang: str) -> BoardState:
        """What ``state`` gives, from a row already read (the stream hub's views of one version)."""
        return self._state(row, seat, lang, self.clock())

    def state(self, game_id: int, seat: Seat | None, lang: str) -> BoardState | None:
        """The game as the holder of ``seat`` (None: a spectator) sees it now; None when there is no
        such game."""
        row = self.storage.games.get(game_id)
        if row is None:
            return None
        return self._state(row, seat, lang, self.clock())

    def _state(self, row: GameRecord, seat: Seat | None, lang: str, now: float) -> BoardState:
        pos = Position.from_fen(row.variant, row.fen)
        v = pos.variant
        you = self._color(row, seat)
        active = row.status == "active"
        moves: tuple[BoardMove, ...] = ()
        if active and you == pos.turn and not bot_to_move(row, pos):
            moves = tuple(BoardMove(m.path, m.captured, str(m), bool(m.promotes)) for m in pos.legal_moves())
        start = Position.from_fen(row.variant, row.start_fen) if row.start_fen else Position.start(row.variant)
        captured = {color.value: sum(start.count(color)) - sum(pos.count(color))
                    for color in (Color.WHITE, Color.BLACK)}
        last = None
        if row.last_path:
            last = {"path": list(row.last_path), "captured": list(row.last_captured),
                    "notation": format_move(Move(tuple(row.last_path), tuple(row.last_captured)))}
        result = None
        if row.status == "finished":
            stored = _stored_result(row)
            result = {"score": stored.score, "reason": str(stored.reason),
                      "winner": stored.winner.value if stored.winner else None}
            status_text = over_text(lang, row, stored)
        else:
            status_text = to_move_line(lang, row, now)
        # A player sees the board from their own side; a spectator as the chat shows it.
        flipped = you == Color.BLACK if you is not None else reply_flipped(row)
        players = {color.value: {"name": name_of(lang, row, color),
                                 "bot": (row.white_id if color == Color.WHITE else row.black_id) == BOT_ID}
                   for color in (Color.WHITE, Color.BLACK)}
        return BoardState(
            game_id=row.id, version=row.version, ply=row.ply, lang=lang, variant=row.variant,
            variant_name=variant_name(lang, row.variant), size=v.size,
            squares=tuple((sq, *v.square_to_rc(sq)) for sq in range(1, v.squares + 1)),
            flipped=bool(flipped), pieces=pos.pieces(), turn=pos.turn.value, status=row.status,
            status_text=status_text, players=players, you=you.value if you else None, moves=moves,
            last_move=last, captured=captured, draw_offer=row.draw_offer.value if row.draw_offer else None,
            deadline=row.deadline_at if active else None, now=now, move_seconds=row.move_seconds,
            bot_to_move=bot_to_move(row, pos), result=result, description=describe(lang, pos))

    @staticmethod
    def _color(row: GameRecord, seat: Seat | None) -> Color | None:
        if seat is None or seat.game_id != row.id or seat.platform != row.platform:
            return None
        if seat.user_id == row.white_id:
            return Color.WHITE
        if seat.user_id == row.black_id:
            return Color.BLACK
        return None

    # -- reviewing: the moves played and the position after any of them --------------------------------

    def record(self, game_id: int) -> GameRecordView | None:
        """The game's plies as played (read through ``Games.with_moves``, each replayed by the rules
        engine so its path and captures are the engine's), None when there is no such game."""
        row, stored = self.games.with_moves(game_id)
        if row is None:
            return None
        pos = Position.from_fen(row.variant, row.start_fen) if row.start_fen else Position.start(row.variant)
        start = pos
        # Move numbers count from the first position's side: a game set up with Black to move
        # numbers its first ply "1..." as the chat and PDN do.
        offset = 0 if pos.turn == Color.WHITE else 1
        plies: list[ReviewPly] = []
        for m in stored:
            played = next((legal for legal in pos.legal_moves() if str(legal) == m.notation), None)
            if played is None:
                # A stored notation the engine no longer reads as written (an older short form).
                played = pos.parse_move(m.notation)
            after = pos.play(played)
            plies.append(ReviewPly(m.ply, (m.ply - 1 + offset) // 2 + 1, pos.turn.value, str(played),
                                   tuple(played.path), tuple(played.captured), after))
            pos = after
        return GameRecordView(row.id, row.variant, row.status, start, tuple(plies))

    # -- the analysis on the board ------------------------------------------------------------------------

    def analysis_view(self, game_id: int, seat: Seat | None, lang: str) -> dict[str, Any] | None:
        """The game's stored analysis as the page draws it (``/api/g/<id>/analysis``, docs/web.md):
        the evaluation after every ply, and at each marked move or known-ending note the mark, the
        better move and the line refuting the played one, each step with its position.  ``status``:
        ready, running, none (no analysis yet: ``can_request`` when the seat's player may ask for
        one), or active (a game still played is not analysed).  None when there is no such game."""
        row = self.storage.games.get(game_id)
        if row is None:
            return None
        first = Position.from_fen(row.variant, row.start_fen).turn if row.start_fen else Color.WHITE
        base: dict[str, Any] = {"game_id": row.id, "plies": row.ply, "first_turn": first.value,
                                "evaluations": [], "notes": []}
        if row.status == "active" or self.analysis is None:
            return {**base, "status": "active" if row.status == "active" else "none", "can_request": False}
        kept = self.analysis.kept(game_id)
        if kept is None:
            running = self.analysis.running_for(game_id)
            mine = self._color(row, seat) is not None and row.ply > 0
            return {**base, "status": "running" if running else "none", "can_request": mine and not running}
        report, raw = kept
        game = self.games.stored_game(row)
        white, black = name_of(lang, row, Color.WHITE), name_of(lang, row, Color.BLACK)
        endings = {e.note.ply: ending_entry(lang, e, white, black) for e in report.endings}
        notes: list[dict[str, Any]] = []
        for note in raw:
            p = int(note["ply"])
            if p >= len(game.moves):
                break
            before, after = game.positions[p], game.positions[p + 1]
            played, best = before.parse_move(note["move"]), before.parse_move(note["best"])
            mover_white = before.turn == Color.WHITE
            # Every marked move, not only each side's worst (the chat's report lists those).
            mark = MoveNote(p, played, best, int(note["best_score"]), int(note["played_score"]),
                            bool(note.get("forced", False))).mark
            if not mark and p not in endings:
                continue
            line: list[dict[str, Any]] = []
            pos = after
            for text in note.get("line") or []:
                step = next((m for m in pos.legal_moves() if str(m) == text), None)
                if step is None:
                    break               # a line no longer read as written ends where it stops
                pos = pos.play(step)
                line.append({"notation": str(step), "path": list(step.path), "captured": list(step.captured),
                             **position_json(pos)})
            item: dict[str, Any] = {
                "ply": p + 1, "side": "W" if mover_white else "B", "notation": str(played), "mark": mark,
                "ending": endings.get(p)}
            if mark:
                item["better"] = {"notation": str(best), "path": list(best.path), "captured": list(best.captured)}
                item["loss"] = round(max(0, int(note["best_score"]) - int(note["played_score"])) / 100, 2)
                item["line"] = line
            notes.append(item)
        evaluations = [{"ply": i + 1, "eval": round(max(-10.0, min(10.0, e / 100)), 2)}
                       for i, e in enumerate(report.evaluations)]
        return {**base, "status": "ready", "can_request": False, "evaluations": evaluations, "notes": notes,
                "white": white, "black": black}

    def request_analysis(self, seat: Seat, lang: str) -> tuple[str, str]:
        """A player's request from the page for the game's analysis, through the Analysis use case
        as the chat's /analysis (its limits and queue): (started|refused, the words)."""
        row = self.storage.games.get(seat.game_id)
        if row is None or row.platform != seat.platform or self.analysis is None:
            return "refused", t(lang, "game.unknown", id=seat.game_id)
        if seat.user_id not in (row.white_id, row.black_id):
            return "forbidden", t(lang, "game.not_player", id=row.id)
        if self.analysis.kept(row.id) is not None:
            return "refused", t(lang, "web.analysis_ready")
        now = self.clock()
        name = row.white_name if seat.user_id == row.white_id else row.black_name
        player = self.storage.players.get(row.platform, seat.user_id)
        chat = self.storage.players.chat(row.platform, row.chat_id)
        if chat is None:
            chat = self.storage.players.ensure_chat(row.platform, row.chat_id, "group", now)
        by = Player(row.platform, seat.user_id, name, player.username if player else None, lang)
        caller = Caller(by, Where(row.platform, row.chat_id, private=chat.kind == "private"), now, now, chat)
        outcome = self.analysis.analyse(caller, AnalysisRequest(row.id, self.games.game_lang(row, seat.user_id)))
        text = present_analysis(lang, outcome)[0].text
        return ("started" if isinstance(outcome, AnalysisStarted) else "refused"), text

    def pdn(self, game_id: int) -> tuple[str, str] | None:
        """The game as a PDN file (name, text), as /pdn gives it; None when there is no such game."""
        row = self.storage.games.get(game_id)
        if row is None:
            return None
        # What /pdn writes (``Play.pdn``), read without resolving a chat's game (a GET changes nothing).
        return f"game-{row.id}.pdn", write_pdn(self.games.stored_game(row))

    # -- acting ----------------------------------------------------------------------------------------

    def move(self, seat: Seat, lang: str, *, path: list[int] | None = None, text: str | None = None,
             ply: int | None = None) -> BoardAnswer:
        """Play a move for the seat's player: a path from the legal moves the page was sent (at
        ``ply``), or a typed move (``text``); judged by the rules engine through ``Play.move``."""
        return self._act(seat, lang, "move",
                         lambda caller, row, acting: self._move(caller, row, lang, path, text, ply))

    def draw(self, seat: Seat, lang: str) -> BoardAnswer:
        """Offer a draw, or accept the opponent's offer (``Play.draw``)."""
        return self._act(seat, lang, "draw", lambda caller, row, acting: self._draw(caller, row, lang, acting))

    def resign(self, seat: Seat, lang: str) -> BoardAnswer:
        """Resign, the page having asked the player to confirm (``Play.resign`` asked and confirmed)."""
        return self._act(seat, lang, "resign", lambda caller, row, acting: self._resign(caller, row, lang))

    def _act(self, seat: Seat, lang: str, kind: str, run: _Run) -> BoardAnswer:
        row = self.storage.games.get(seat.game_id)
        if row is None or row.platform != seat.platform:
            return BoardAnswer("refused", t(lang, "game.unknown", id=seat.game_id))
        if seat.user_id not in (row.white_id, row.black_id):
            return BoardAnswer("forbidden", t(lang, "game.not_player", id=row.id),
                               self._state(row, seat, lang, self.clock()))
        if row.status != "active":
            # A finished game's links only show it: nothing reaches the use cases.
            return BoardAnswer("refused", t(lang, "web.game_over"), self._state(row, seat, lang, self.clock()))
        try:
            outcome, message = retry_contention(lambda: self._run(seat, lang, kind, run))
        except (StorageBusy, StorageContention):
            outcome, message = "busy", t(lang, "error.busy")
        except StorageFull:
            outcome, message = "busy", t(lang, "error.disk_full")
        except StorageGone:
            outcome, message = "failed", t(lang, "error.internal")
        self.outlet.wake(row.platform)
        return BoardAnswer(outcome, message, self.state(seat.game_id, seat, lang))

    def _run(self, seat: Seat, lang: str, kind: str, run: _Run) -> tuple[str, str]:
        now = self.clock()
        row = self.storage.games.get(seat.game_id)
        assert row is not None              # games are never deleted
        chat_lang = self.games.game_lang(row, seat.user_id)
        name = row.white_name if seat.user_id == row.white_id else row.black_name
        acting = _Acting(kind, row.id, seat.user_id, chat_lang, name, row, now)
        caller = self._caller(row, seat.user_id, name, lang, now, acting)
        if self.tournaments is None or self.storage.tournaments.of_game(row.id) is None:
            return run(caller, row, acting)
        # A tournament round this action ends (its standings, the next round's pairings) is told
        # after the game's own end, as for a loss on time: one unit of work, so the round's notices
        # are written with the result or not at all.
        with self.storage.transaction(), self.tournaments.notices_after():
            return run(caller, row, acting)

    def _caller(self, row: GameRecord, user_id: str, name: str, lang: str, now: float, acting: _Acting) -> Caller:
        """The seat's player in the game's own chat, as the use cases know a caller; the action
        rides along as the request's origin (``_on_move`` finds it in the domain events)."""
        player = self.storage.players.get(row.platform, user_id)
        chat = self.storage.players.chat(row.platform, row.chat_id)
        if chat is None:
            chat = self.storage.players.ensure_chat(row.platform, row.chat_id, "group", now)
        by = Player(row.platform, user_id, name, player.username if player else None, lang)
        return Caller(by, Where(row.platform, row.chat_id, private=chat.kind == "private"), now, now, chat, acting)

    def _move(self, caller: Caller, row: GameRecord, lang: str, path: list[int] | None, text: str | None,
              ply: int | None) -> tuple[str, str]:
        outcome: MoveOutcome | NoGame | TimedOut | Refused | Acted
        if text is None:
            # A tapped path is a move of its own kind: no text to be read again.
            outcome = self.play.play_path(caller, row.id, tuple(path or ()), ply)
        elif ply is not None and ply != row.ply:
            return "refused", t(lang, "move.stale")
        else:
            outcome = self.play.move(caller, MoveRequest(text[:80], row.id))
        if isinstance(outcome, MoveMade):
            # The words only: the chat's board picture is drawn when the chat's notice is delivered.
            return "ok", presenters.move_made_text(lang, outcome)
        if isinstance(outcome, MoveIllegal):
            return "illegal", presenters.present_move(lang, outcome)[0].text
        if isinstance(outcome, MoveStale):
            return "refused", t(lang, "move.stale")
        return "refused", self._refusal(lang, outcome)

    def _draw(self, caller: Caller, row: GameRecord, lang: str, acting: _Acting) -> tuple[str, str]:
        if row.bot_level is not None:
            # The bot's answer needs a short search: no write transaction is held over it.
            outcome = self.play.draw(caller, GameRef(row.id))
        else:
            with self.storage.transaction():
                outcome = self.play.draw(caller, GameRef(row.id))
                if isinstance(outcome, DrawOffered):
                    # Told in the chat together with the offer (its button accepts it there).
                    self.outlet.notify(row.platform, row.chat_id, WebDrawOffered(
                        row.id, acting.lang, GameState.of(outcome.game), outcome.offerer,
                        str(outcome.color) if outcome.color else None))
        ok = isinstance(outcome, DrawOffered | GameEnded) or (isinstance(outcome, BotDrawAnswer)
                                                              and outcome.result is not None)
        return ("ok" if ok else "refused"), self._text(lang, outcome)

    def _resign(self, caller: Caller, row: GameRecord, lang: str) -> tuple[str, str]:
        outcome = self.play.resign(caller, GameRef(row.id))
        if isinstance(outcome, ResignAsked):
            # The page asked already: the second call confirms, as a second /resign would.
            outcome = self.play.resign(caller, GameRef(row.id))
        return ("ok" if isinstance(outcome, GameEnded) else "refused"), self._text(lang, outcome)

    @staticmethod
    def _text(lang: str, outcome: Any) -> str:
        replies = presenters.replies(lang, outcome)
        return "\n".join(r.text for r in replies if r.text)

    @staticmethod
    def _refusal(lang: str, outcome: Any) -> str:
        if isinstance(outcome, NoGame | TimedOut):
            return BoardLayer._text(lang, outcome)
        return t(lang, "move.stale")

    # -- what the chat is told (inside the action's transaction) ---------------------------------------

    def _on_move(self, event: MovePlayed) -> None:
        acting = event.origin if isinstance(event.origin, _Acting) else None
        if acting is None or acting.kind != "move" or acting.told or event.game.id != acting.game_id \
                or event.by_user != acting.user_id:
            return
        acting.told = True
        fresh, before = event.game, acting.before
        color = Color.WHITE if acting.user_id == before.white_id else Color.BLACK
        declined = fresh.status == "active" and before.draw_offer is not None and before.draw_offer != color
        self.outlet.notify(fresh.platform, fresh.chat_id, WebMoved(
            fresh.id, acting.lang, event.move, before.fen, GameState.of(fresh), acting.at, acting.mover, declined,
            self._turn_mention(fresh)))

    def _on_finished(self, event: GameFinished) -> None:
        acting = event.origin if isinstance(event.origin, _Acting) else None
        # A last move was told as the move (MovePlayed comes first); a loss on time found by the
        # action, a resignation or an agreed draw as the end of the game.
        if acting is None or acting.told or event.game.id != acting.game_id:
            return
        acting.told = True
        game = event.game
        self.outlet.notify(game.platform, game.chat_id, WebGameEnded(game.id, acting.lang, GameState.of(game)))

    def _turn_mention(self, row: GameRecord) -> Mention | None:
        """Whom the board reply pings: what ``Games.turn_notice`` decides, without its private
        notice (``Play`` sends that one itself once the move is stored)."""
        mover = self.games.player_to_move(row)
        if mover is None:
            return None
        chat = self.storage.players.chat(row.platform, row.chat_id)
        if chat is not None and chat.kind == "private":
            return None
        user_id, name = mover
        setting = self.storage.players.notify_setting(row.platform, user_id)
        if setting is not None and setting.private and not setting.unreachable:
            return None
        player = self.storage.players.get(row.platform, user_id)
        return Mention(user_id, name, player.username if player else None)
