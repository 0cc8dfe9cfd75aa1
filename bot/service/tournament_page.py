"""The web board's tournament page: a tournament's standings and each round's pairings, as data.

Part of the board layer (``bot.service.web``): ``BoardLayer.tournament`` reads the tournament
through the ``Tournaments`` use case (``view``, ``standings``, ``pairings``: typed results) and
``build_view`` turns them into a ``TournamentView`` worded in one language (the page and
``/api/t/<id>`` send its ``to_json``).  Nothing here writes.

Who may see it: the holder of the tournament's signed link (``TournamentLinks``: 16 bytes of an
HMAC-SHA256 over the tournament's number, with a key of its own derived from the database's link
secret), given in the tournament's chat; a tournament's number alone shows nothing.  Each game of
the pairings links to its spectator page (the game's own signed watch link): whoever may see the
tournament is in the chat where its games are played.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bot.i18n import catalog, t
from bot.service.chat.wording import variant_name
from bot.service.features.results_tournaments import RoundView, StandingsView, TournamentInfo

# What the key that signs tournament links is derived with (the link secret's other uses have
# keys of their own, so a game's signature never opens a tournament, nor the other way round).
_TOURNAMENT_LABEL = b"draughts web board tournament link v1"
TOURNAMENT_MAC = r"[A-Za-z0-9_-]{22}"
# A tournament link's token: ``t<id>s<mac>``, letters, digits, - and _ only (as a game's
# ``w<id>s<mac>``, so it fits a Telegram start parameter too).
_TOURNAMENT_TOKEN = re.compile(r"t([0-9]{1,9})s(" + TOURNAMENT_MAC + ")")
# The page's words: catalog keys under this prefix (apart from ``web.*``, which the game page sends).
PREFIX = "webt."
# How results are shown (the data keeps the CLI's "1/2-1/2").
_SHOWN_RESULT = {"1/2-1/2": "½-½"}


class TournamentLinks:
    """Signs and checks tournament links.  ``secret`` gives the database's link secret (read once,
    on first use: it never changes)."""

    def __init__(self, secret: Callable[[], bytes]) -> None:
        self._secret = secret
        self._key: bytes | None = None

    def _k(self) -> bytes:
        if self._key is None:
            self._key = hmac.new(self._secret(), _TOURNAMENT_LABEL, hashlib.sha256).digest()
        return self._key

    def mac(self, tournament_id: int) -> str:
        digest = hmac.new(self._k(), f"tournament:{tournament_id}".encode("ascii"), hashlib.sha256).digest()
        return base64url(digest[:16])

    def token(self, tournament_id: int) -> str:
        """The token of tournament ``tournament_id``'s page (it never expires and never acts)."""
        return f"t{tournament_id}s{self.mac(tournament_id)}"

    def path(self, tournament_id: int) -> str:
        """The page's path with its token (prefix it with the board's public address)."""
        return f"/t/{tournament_id}?t={self.token(tournament_id)}"

    def read(self, token: str | None) -> int | None:
        """The tournament a token opens, or None (no token, forged, damaged)."""
        found = _TOURNAMENT_TOKEN.fullmatch((token or "").strip())
        if found is None:
            return None
        tid = int(found[1])
        ok = hmac.compare_digest(found[2].encode("ascii"), self.mac(tid).encode("ascii"))
        return tid if ok else None


def base64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


@dataclass(frozen=True)
class StandingLine:
    rank: int
    name: str
    points: float
    tiebreaks: tuple[float, ...]
    withdrawn: bool

    def to_json(self) -> dict[str, Any]:
        return {"rank": self.rank, "name": self.name, "points": self.points, "tiebreaks": list(self.tiebreaks),
                "withdrawn": self.withdrawn}


@dataclass(frozen=True)
class BoardLine:
    """A game of a round (``black`` set) or a bye; ``result`` from white's side as the CLI writes it
    ("1-0", "0-1", "1/2-1/2", "+-", "-+"; None while the game runs or for a bye); ``shown`` how the
    page writes it; ``watch`` the game's spectator page (path and token), when it has a game."""

    board: int
    white: str
    black: str | None
    result: str | None
    shown: str
    game: int | None
    watch: str | None

    def to_json(self) -> dict[str, Any]:
        return {"board": self.board, "white": self.white, "black": self.black, "bye": self.black is None,
                "result": self.result, "shown": self.shown, "game": self.game, "watch": self.watch}


@dataclass(frozen=True)
class RoundLines:
    number: int
    title: str
    complete: bool
    deadline: float | None
    boards: tuple[BoardLine, ...]

    def to_json(self) -> dict[str, Any]:
        return {"number": self.number, "title": self.title, "complete": self.complete, "deadline": self.deadline,
                "pairings": [p.to_json() for p in self.boards]}


@dataclass(frozen=True)
class TournamentView:
    """What the page shows of one tournament, worded in ``lang``.  ``version`` changes whenever
    anything shown changes (the page redraws only then); ``standings`` count the complete rounds
    (``rounds_counted``); ``rounds`` newest first; ``cross`` a round robin's cross table in the
    standings' order (None for a Swiss)."""

    id: int
    version: str
    lang: str
    title: str
    name: str
    format: str
    format_name: str
    variant: str
    variant_name: str
    status: str
    status_text: str
    rounds_paired: int
    rounds_total: int | None
    rounds_counted: int
    standings_text: str
    tiebreaks: tuple[tuple[str, str], ...]      # (FIDE's code, its full name)
    standings: tuple[StandingLine, ...]
    cross: tuple[tuple[str | None, ...], ...] | None
    rounds: tuple[RoundLines, ...]
    winner: str | None

    def to_json(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        data["tiebreaks"] = [{"code": code, "name": name} for code, name in self.tiebreaks]
        data["standings"] = [row.to_json() for row in self.standings]
        data["cross"] = None if self.cross is None else [list(row) for row in self.cross]
        data["rounds"] = [rnd.to_json() for rnd in self.rounds]
        return data


def tiebreak_key(code: str) -> str:
    """The catalog key naming a FIDE tie-break ("BH-C1" -> "webt.tb.bh_c1")."""
    return PREFIX + "tb." + code.lower().replace("-", "_")


def build_view(info: TournamentInfo, table: StandingsView, rounds: Sequence[RoundView], lang: str,
               watch_path: Callable[[int], str]) -> TournamentView:
    """The page's data for a tournament as the use case gives it (``info``, its standings, its
    rounds), in ``lang``; ``watch_path``: a game's spectator page.  Names are data, never markup:
    the page writes them as text."""
    codes = table.rows[0].tiebreaks if table.rows else ()
    tiebreaks = tuple((code, t(lang, tiebreak_key(code))) for code, _value in codes)
    lines = tuple(StandingLine(row.rank, row.name, row.points, tuple(value for _code, value in row.tiebreaks),
                               row.withdrawn) for row in table.rows)
    shown_rounds: list[RoundLines] = []
    for rnd in sorted(rounds, key=lambda r: r.number, reverse=True):
        boards = []
        for p in rnd.pairings:
            if p.black_id is None:
                shown = t(lang, PREFIX + "bye")
            elif p.result is None:
                shown = t(lang, PREFIX + "playing")
            else:
                shown = _SHOWN_RESULT.get(p.result, p.result)
            game = p.game_id if p.black_id is not None else None
            boards.append(BoardLine(p.board, p.white_name, p.black_name if p.black_id is not None else None,
                                    p.result, shown, game, watch_path(game) if game is not None else None))
        shown_rounds.append(RoundLines(rnd.number, t(lang, PREFIX + "round", n=rnd.number), rnd.complete,
                                       rnd.deadline, tuple(boards)))
    if info.status == "registering":
        status_text = t(lang, PREFIX + "status.registering", n=len(info.players))
    elif info.status == "finished":
        status_text = t(lang, PREFIX + "status.finished", name=info.winner_name or "-")
    elif info.status == "cancelled":
        status_text = t(lang, PREFIX + "status.cancelled", round=info.round)
    else:
        status_text = t(lang, PREFIX + "status.running", round=info.round, total=info.rounds_total or "?")
    standings_text = (t(lang, PREFIX + "standings.after", n=table.through) if table.through
                      else t(lang, PREFIX + "standings.none"))
    fmt = "swiss" if info.format == "swiss" else "roundrobin"
    view = TournamentView(
        id=info.id, version="", lang=lang, title=t(lang, PREFIX + "title", name=info.name, id=info.id),
        name=info.name, format=info.format, format_name=t(lang, PREFIX + "format." + fmt),
        variant=info.variant, variant_name=variant_name(lang, info.variant), status=info.status,
        status_text=status_text, rounds_paired=info.round, rounds_total=info.rounds_total,
        rounds_counted=table.through, standings_text=standings_text, tiebreaks=tiebreaks, standings=lines,
        cross=table.cross, rounds=tuple(shown_rounds),
        winner=info.winner_name if info.status == "finished" else None)
    # The version is what is shown, digested: a page redraws when (and only when) it changed.
    digest = hashlib.sha256(json.dumps(view.to_json(), sort_keys=True, ensure_ascii=False).encode("utf-8"))
    return dataclasses.replace(view, version=digest.hexdigest()[:16])


def page_texts(lang: str) -> dict[str, str]:
    """The tournament page's own words in ``lang`` (every ``webt.*`` key without placeholders,
    without its prefix)."""
    english = catalog("en")
    return {key[len(PREFIX):]: t(lang, key) for key in english if key.startswith(PREFIX) and "{" not in english[key]}
