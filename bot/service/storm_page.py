"""The web board's storm page (issue 33): one storm run, its puzzle of the moment and its clock, as
data, and the run's answers through the ``Storm`` use case.

Part of the board layer (``bot.service.web``, which holds a ``StormPage`` as ``BoardLayer.storm``).
Who may play a run: the holder of its signed link (``StormLinks``: 16 bytes of an HMAC-SHA256 over
the run, its platform and its player, with a key of its own derived from the database's link
secret), given only to the player (privately).  A run's number alone, a forged link or another
run's link shows nothing and changes nothing.  The server keeps the time: the page's clock only
counts down what the state said was left.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bot.i18n import LANGUAGES, catalog, t
from bot.puzzles.solve import position_after
from bot.rules import Color, Move, format_move
from bot.service.chat.describe import describe
from bot.service.chat.wording import illegal_move_text, variant_name
from bot.service.features.storm import MISS_SECONDS, Storm, StormAnswered, StormView

# What the key that signs storm links is derived with (each use of the link secret has its own).
_STORM_LABEL = b"draughts web board storm link v1"
STORM_MAC = r"[A-Za-z0-9_-]{22}"
# A run's link token: ``r<id>s<mac>`` (letters, digits, - and _ only, as a game's ``w<id>s<mac>``).
_STORM_TOKEN = re.compile(r"r([0-9]{1,9})s(" + STORM_MAC + ")")
# The page's own words: catalog keys under this prefix without placeholders.
PREFIX = "storm.page."
# An answer's HTTP status: judged (200), refused by the rules (422), or too late / for a puzzle the
# run has left (409: nothing changed).
_STATUS = {"right": 200, "solved": 200, "wrong": 200, "illegal": 422, "stale": 409, "over": 409}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class StormLinks:
    """Signs and checks storm links.  ``secret`` gives the database's link secret (read once)."""

    def __init__(self, secret: Callable[[], bytes]) -> None:
        self._secret = secret
        self._key: bytes | None = None

    def _k(self) -> bytes:
        if self._key is None:
            self._key = hmac.new(self._secret(), _STORM_LABEL, hashlib.sha256).digest()
        return self._key

    def mac(self, run_id: int, platform: str, user_id: str) -> str:
        text = f"storm:{run_id}:{platform}:{user_id}".encode()
        return _b64(hmac.new(self._k(), text, hashlib.sha256).digest()[:16])

    def token(self, run_id: int, platform: str, user_id: str) -> str:
        return f"r{run_id}s{self.mac(run_id, platform, user_id)}"

    def path(self, run_id: int, platform: str, user_id: str) -> str:
        """The run's page with its token (prefix it with the board's public address)."""
        return f"/storm/{run_id}?t={self.token(run_id, platform, user_id)}"

    def read(self, token: str | None) -> tuple[int, str] | None:
        """The run a token names and its signature, or None (no token, or not a storm token)."""
        found = _STORM_TOKEN.fullmatch((token or "").strip())
        return None if found is None else (int(found[1]), found[2])


@dataclass(frozen=True)
class StormRefusal:
    """Why a request on a run sees nothing: ``status`` (HTTP), ``reason``, ``key`` (the words)."""

    status: int
    reason: str
    key: str


def page_texts(lang: str) -> dict[str, str]:
    """The storm page's words in ``lang`` (every ``storm.page.*`` key without placeholders)."""
    english = catalog("en")
    return {key[len(PREFIX):]: t(lang, key) for key in english if key.startswith(PREFIX) and "{" not in english[key]}


class StormPage:
    """The storm page's reads and answers, on the ``Storm`` use case (``storm``)."""

    def __init__(self, storm: Storm, secret: Callable[[], bytes], chat_lang: Callable[[str, str], str]) -> None:
        self.storm = storm
        self.links = StormLinks(secret)
        self._chat_lang = chat_lang

    def path(self, run_id: int, platform: str, user_id: str) -> str:
        return self.links.path(run_id, platform, user_id)

    def check(self, run_id: int, token: str | None) -> StormRefusal | None:
        """None when ``token`` is run ``run_id``'s own link; else why not (before anything is
        said of the run): no token 403, a forged or another run's 401, no such run 404."""
        if token is None:
            return StormRefusal(403, "need_link", "storm.need_link")
        found = self.links.read(token)
        if found is None or found[0] != run_id:
            return StormRefusal(401, "link_invalid", "storm.link_invalid")
        row = self.storm.run(run_id)
        if row is None:
            # A signature cannot be checked without the run's player: a run that does not exist
            # is told only to a token of its number, which no one but the signer can make valid.
            return StormRefusal(404, "no_run", "storm.no_run")
        expected = self.links.mac(run_id, row.platform, row.user_id)
        if not hmac.compare_digest(found[1].encode("ascii"), expected.encode("ascii")):
            return StormRefusal(401, "link_invalid", "storm.link_invalid")
        return None

    def language(self, run_id: int, asked: str | None) -> str:
        code = (asked or "").strip().lower()[:2]
        if code in LANGUAGES:
            return code
        row = self.storm.run(run_id)
        return row.lang if row is not None else "en"

    def state(self, run_id: int, lang: str) -> dict[str, Any] | None:
        view = self.storm.view(run_id)
        return None if view is None else state_json(view, lang)

    def answer(self, run_id: int, lang: str, index: int, ply: int, path: list[int] | None,
               text: str | None) -> tuple[int, dict[str, Any]] | None:
        """An answer from the page: (HTTP status, body) or None when there is no such run."""
        move: tuple[int, ...] | str = tuple(path) if path is not None else (text or "")
        answered = self.storm.answer(run_id, index, ply, move)
        if answered is None:
            return None
        body = {"ok": answered.verdict in ("right", "solved", "wrong"), "verdict": answered.verdict,
                "played": list(answered.played), "solution": list(answered.solution),
                "expected": answered.expected,
                "message": answer_text(lang, answered), "state": state_json(answered.view, lang)}
        status = _STATUS[answered.verdict]
        if status != 200:
            body["error"] = body["message"]
            body["reason"] = answered.verdict
        return status, body


def answer_text(lang: str, answered: StormAnswered) -> str:
    """What the page's message line says of an answer."""
    verdict = answered.verdict
    if verdict == "illegal":
        pos = answered.view.position
        if answered.error is not None and pos is not None:
            return illegal_move_text(lang, answered.error, pos)
        return t(lang, "storm.illegal")
    if verdict == "wrong":
        return t(lang, "storm.wrong", line=answered.expected or "-", seconds=int(MISS_SECONDS))
    if verdict == "over":
        return t(lang, "storm.late")
    if verdict == "stale":
        return t(lang, "storm.stale")
    if verdict == "solved":
        return t(lang, "storm.solved", n=answered.view.run.solved)
    return t(lang, "storm.right", reply=answered.played[-1] if len(answered.played) > 1 else "")


def state_json(view: StormView, lang: str) -> dict[str, Any]:
    """The run as the page draws it (docs/web.md, "A storm run's page")."""
    run = view.run
    data: dict[str, Any] = {
        "run": run.id, "version": run.version, "lang": lang, "variant": run.variant,
        "variant_name": variant_name(lang, run.variant), "status": "finished" if view.over else "running",
        "solved": run.solved, "missed": run.missed, "index": run.current, "ply": len(view.moves),
        "left": round(view.left, 3), "ends_at": run.ends_at, "now": view.at, "name": run.name,
        "puzzle": None, "size": None, "squares": [], "pieces": {}, "turn": None, "moves": [], "flipped": False,
        "last_move": None, "description": "", "rating": None,
        "status_text": (t(lang, "storm.page_result", solved=run.solved, missed=run.missed) if view.over
                        else t(lang, "storm.page_status", n=run.current + 1)),
    }
    pos = view.position
    if pos is not None and view.puzzle is not None and not view.over:
        v = pos.variant
        last = None
        if view.moves:
            # The reply just played, drawn as the board draws a last move.
            before = position_after(view.puzzle, list(view.moves[:-1]))
            move = before.parse_move(view.moves[-1])
            last = {"path": list(move.path), "captured": list(move.captured),
                    "notation": format_move(Move(tuple(move.path), tuple(move.captured)))}
        data.update({
            "puzzle": view.puzzle["id"], "rating": view.puzzle.get("rating"), "size": v.size,
            "squares": [[sq, *v.square_to_rc(sq)] for sq in range(1, v.squares + 1)],
            "pieces": {str(sq): code for sq, code in pos.pieces().items()}, "turn": pos.turn.value,
            "flipped": pos.turn == Color.BLACK,
            "moves": [{"path": list(m.path), "captured": list(m.captured), "notation": str(m)}
                      for m in pos.legal_moves()],
            "last_move": last, "description": describe(lang, pos),
            "to_play": t(lang, "storm.white_plays" if pos.turn == Color.WHITE else "storm.black_plays"),
        })
    return data
