"""PDN: write a game, read games back (including Italian tag names and short-form captures)."""

from __future__ import annotations

import re

from .errors import ErrorCode, IllegalMove
from .game import DRAW_SCORE, Game, Result
from .notation import match_squares, split_squares
from .position import Move, Position
from .variants import VARIANTS, Variant, get_variant

# Italian federation files name the seven tags in Italian.
_TAG_ALIASES = {"bianco": "White", "nero": "Black", "risultato": "Result", "blanco": "White",
                "negro": "Black", "resultado": "Result", "evento": "Event", "lugar": "Site"}
_RESULTS = {"1-0": "1-0", "0-1": "0-1", "1/2-1/2": DRAW_SCORE, "2-0": "1-0", "0-2": "0-1",
            "1-1": DRAW_SCORE, "*": "*"}
_TAG_RE = re.compile(r'\[\s*(\w+)\s+"((?:[^"\\]|\\.)*)"\s*\]')
_MOVE_TOKEN = re.compile(r"\d{1,3}(?:[-x:]\d{1,3})+")


def write_pdn(game: Game, tags: dict[str, str] | None = None) -> str:
    """The game as PDN text, with the seven standard tags, GameType, and FEN when not from the start."""
    v = game.variant
    result = game.result.score if game.result else "*"
    out = {"Event": "?", "Site": "?", "Date": "????.??.??", "White": "?", "Black": "?", "Result": result}
    out.update(game.tags)
    out.update(tags or {})
    out["Result"] = result
    out["GameType"] = v.pdn_gametype
    if v.id == "triestina":
        out["Variant"] = "triestina"
    if game.start_fen:
        out["FEN"] = game.start_fen
    lines = [f'[{k} "{_escape(str(val))}"]' for k, val in out.items()]
    words: list[str] = []
    number = 1
    white_to_move = game.start.white
    for i, move in enumerate(game.moves):
        # A move number stays on the same line as its move.
        if white_to_move:
            words.append(f"{number}. {move}")
        elif i == 0:
            words.append(f"{number}... {move}")
        else:
            words.append(str(move))
        if not white_to_move:
            number += 1
        white_to_move = not white_to_move
    words.append(result)
    text, line = [], ""
    for w in words:
        if line and len(line) + 1 + len(w) > 79:
            text.append(line)
            line = w
        else:
            line = f"{line} {w}" if line else w
    text.append(line)
    return "\n".join(lines) + "\n\n" + "\n".join(text) + "\n"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def _variant_from_tags(tags: dict[str, str], default: Variant) -> Variant:
    if tags.get("Variant", "").lower() in VARIANTS:
        return get_variant(tags["Variant"].lower())
    gametype = tags.get("GameType", "").split(",")
    if gametype and gametype[0].strip() == "24":
        return VARIANTS["spanish"]
    if gametype and gametype[0].strip() == "22":
        if len(gametype) > 2 and gametype[2].strip() == "10":
            return VARIANTS["triestina"]
        return VARIANTS["italian"]
    return default


def split_games(text: str) -> list[tuple[dict[str, str], str]]:
    """Each game's tags and movetext."""
    games: list[tuple[dict[str, str], str]] = []
    tags: dict[str, str] = {}
    body: list[str] = []
    in_body = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("[") and _TAG_RE.match(stripped):
            if in_body:
                games.append((tags, "\n".join(body)))
                tags, body, in_body = {}, [], False
            for name, value in _TAG_RE.findall(stripped):
                name = _TAG_ALIASES.get(name.lower(), name)
                tags[name] = value.replace('\\"', '"').replace("\\\\", "\\")
        elif stripped:
            in_body = True
            body.append(line)
    if tags or body:
        games.append((tags, "\n".join(body)))
    return games


def _strip_movetext(movetext: str) -> tuple[list[str], str | None]:
    """Move tokens and the result token of a movetext, comments and variations removed."""
    text = re.sub(r"\{[^}]*\}", " ", movetext)
    text = re.sub(r";[^\n]*", " ", text)
    while True:
        reduced = re.sub(r"\([^()]*\)", " ", text)
        if reduced == text:
            break
        text = reduced
    moves, result = [], None
    for token in text.split():
        token = re.sub(r"^\d+\.(\.\.)?", "", token)
        token = token.rstrip("!?*+#") if token != "*" else token
        if not token:
            continue
        if token in _RESULTS:
            result = _RESULTS[token]
        elif _MOVE_TOKEN.fullmatch(token):
            moves.append(token)
        elif re.fullmatch(r"\$\d+", token):
            continue
        else:
            raise ValueError(f"unreadable token {token!r} in PDN movetext")
    return moves, result


def _replay(pos: Position, tokens: list[str], i: int, failure: list) -> list[Move] | None:
    """Moves for tokens[i:], backtracking over short forms that match several moves."""
    played: list[Move] = []
    while i < len(tokens):
        squares, capture = split_squares(tokens[i])
        try:
            move = match_squares(pos, squares, capture)
        except IllegalMove as err:
            if err.code != ErrorCode.AMBIGUOUS:
                if not failure or failure[0][0] < i:
                    failure[:] = [(i, err)]
                return None
            for candidate in err.moves:
                rest = _replay(pos.play(candidate), tokens, i + 1, failure)
                if rest is not None:
                    return played + [candidate] + rest
            return None
        played.append(move)
        pos = pos.play(move)
        i += 1
    return played


def read_game(tags: dict[str, str], movetext: str, default_variant: Variant | str = "italian") -> Game:
    """Replay one PDN game; ValueError naming the first move that cannot be played."""
    variant = _variant_from_tags(tags, get_variant(default_variant))
    game = Game(variant, tags.get("FEN"), draw_rules=False)
    game.tags = dict(tags)
    tokens, result = _strip_movetext(movetext)
    failure: list = []
    # Recursion only happens at ambiguous short forms, a handful per game at most.
    moves = _replay(game.position, tokens, 0, failure)
    if moves is None:
        index, err = failure[0] if failure else (0, None)
        raise ValueError(f"move {index // 2 + 1} ({tokens[index]}) cannot be played: {err}")
    for move in moves:
        game.play(move)
    recorded = result or tags.get("Result")
    if game.result is None and recorded in ("1-0", "0-1", DRAW_SCORE):
        winner = {"1-0": "W", "0-1": "B"}.get(recorded)
        game.result = Result(recorded, "recorded", winner)
    return game


def read_pdn(text: str, default_variant: Variant | str = "italian") -> list[Game]:
    """Every game in a PDN text."""
    return [read_game(tags, body, default_variant) for tags, body in split_games(text)]
