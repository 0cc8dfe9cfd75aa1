"""PDN: write a game, read games back (including Italian tag names and short-form captures)."""

from __future__ import annotations

import re

from .errors import ErrorCode, IllegalMove
from .game import DRAW_SCORE, Game, Result, ResultReason
from .notation import looks_like_move, match_squares, split_squares
from .position import Move, Position
from .variants import BLACK, VARIANTS, WHITE, Variant, get_variant

# Italian federation files name the seven tags in Italian.
_TAG_ALIASES = {"bianco": "White", "nero": "Black", "risultato": "Result", "blanco": "White",
                "negro": "Black", "resultado": "Result", "evento": "Event", "lugar": "Site"}
_RESULTS = {"1-0": "1-0", "0-1": "0-1", "1/2-1/2": DRAW_SCORE, "2-0": "1-0", "0-2": "0-1",
            "1-1": DRAW_SCORE, "*": "*"}
_TAG_RE = re.compile(r'\[\s*(\w+)\s+"((?:[^"\\]|\\.)*)"\s*\]')
# ASCII digits only: int() would accept other scripts' digits that the move reader refuses.
_MOVE_TOKEN = re.compile(r"[0-9]{1,3}(?:[-x:][0-9]{1,3})+")
_MOVE_NUMBER = re.compile(r"^[0-9]+\.(\.\.)?")
_NAG = re.compile(r"\$[0-9]+")
_SPECIAL = re.compile(r"[{;()]")


def write_pdn(game: Game, tags: dict[str, str] | None = None) -> str:
    """The game as PDN text, with the seven standard tags, GameType, and FEN when not from the start."""
    v = game.variant
    result = game.result.score if game.result else "*"
    out = {"Event": "?", "Site": "?", "Date": "????.??.??", "Round": "?", "White": "?", "Black": "?",
           "Result": result}
    out.update(game.tags)
    out.update(tags or {})
    out["Result"] = result
    out["GameType"] = v.pdn_gametype
    # GameType's number names a standard game (22 Italian, 24 Spanish): the first variant declared
    # with it is that game and needs nothing more, as in the files other programs write.  Any other
    # variant (Triestina, a new one) is named by a Variant tag as well.
    if _standard_of_gametype(v.pdn_gametype) != v:
        out["Variant"] = v.id
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


def _gametype_fields(gametype: str) -> list[str]:
    return [f.strip() for f in gametype.split(",")]


def _standard_of_gametype(gametype: str) -> Variant | None:
    """The first declared variant with this GameType number: the standard game it names."""
    number = _gametype_fields(gametype)[0]
    return next((v for v in VARIANTS.values() if _gametype_fields(v.pdn_gametype)[0] == number), None)


def _variant_from_tags(tags: dict[str, str], default: Variant) -> Variant:
    if tags.get("Variant", "").lower() in VARIANTS:
        return get_variant(tags["Variant"].lower())
    fields = _gametype_fields(tags.get("GameType", ""))
    same_type = [v for v in VARIANTS.values() if _gametype_fields(v.pdn_gametype)[0] == fields[0]]
    # A file without a Variant tag: its board size (the third field) picks among the variants of
    # that number; an unknown or missing size means the standard game.
    if len(fields) > 2:
        sized = [v for v in same_type if _gametype_fields(v.pdn_gametype)[2:3] == fields[2:3]]
        same_type = sized or same_type
    return same_type[0] if same_type else default


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


def _without_comments_and_variations(movetext: str) -> str:
    """The movetext with {comments}, ;line comments and (variations) blanked, in one pass.

    A single scan keeps deeply nested variations linear: removing innermost parentheses
    with a regex until nothing changes re-reads the whole text once per nesting level.
    """
    out: list[str] = []
    depth = 0
    at, n = 0, len(movetext)
    while True:
        found = _SPECIAL.search(movetext, at)
        stop = found.start() if found else n
        if depth == 0:
            out.append(movetext[at:stop])
        if found is None:
            break
        ch = found.group()
        at = stop + 1
        if ch == "{":
            end = movetext.find("}", at)
            if end < 0:
                raise ValueError("unclosed {comment} in PDN movetext")
            at = end + 1
        elif ch == ";":
            end = movetext.find("\n", at)
            at = n if end < 0 else end
        elif ch == "(":
            depth += 1
        elif depth == 0:
            raise ValueError("')' without a matching '(' in PDN movetext")
        else:
            depth -= 1
        out.append(" ")
    if depth:
        raise ValueError("unclosed (variation) in PDN movetext")
    return "".join(out)


def _strip_movetext(movetext: str) -> tuple[list[str], str | None]:
    """Move tokens and the result token of a movetext, comments and variations removed.

    ValueError for anything that is not a move, a move number, a NAG or a result, including
    move-shaped tokens the move reader refuses (too long, non-ASCII digits).
    """
    moves, result = [], None
    for token in _without_comments_and_variations(movetext).split():
        token = _MOVE_NUMBER.sub("", token)
        token = token.rstrip("!?*+#") if token != "*" else token
        if not token:
            continue
        if token in _RESULTS:
            result = _RESULTS[token]
        elif _MOVE_TOKEN.fullmatch(token) and looks_like_move(token):
            moves.append(token)
        elif _NAG.fullmatch(token):
            continue
        else:
            shown = token if len(token) <= 40 else token[:40] + "..."
            raise ValueError(f"unreadable token {shown!r} in PDN movetext")
    return moves, result


def _replay(pos: Position, tokens: list[str], i: int, failure: list) -> list[Move] | None:
    """Moves for tokens[i:], backtracking over short forms that match several moves."""
    played: list[Move] = []
    while i < len(tokens):
        try:
            move = match_squares(pos, *split_squares(tokens[i]))
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
    """Replay one PDN game.

    Every failure is a ValueError: an unreadable token, a malformed move, a bad FEN, or a
    move that cannot be played (named by its move number; the IllegalMove saying why is
    chained as the cause). IllegalMove itself never escapes: it stays a rejected move on
    the board, not a ValueError, because callers catch the two for different reasons.
    """
    variant = _variant_from_tags(tags, get_variant(default_variant))
    game = Game(variant, tags.get("FEN"), draw_rules=False)
    game.tags = dict(tags)
    tokens, result = _strip_movetext(movetext)
    failure: list = []
    # Recursion only happens at ambiguous short forms, a handful per game at most.
    moves = _replay(game.position, tokens, 0, failure)
    if moves is None:
        index, err = failure[0] if failure else (0, None)
        # Plies count from the first move in the record, which is Black's after a "B:" FEN.
        number = (index + (0 if game.start.white else 1)) // 2 + 1
        raise ValueError(f"move {number} ({tokens[index]}) cannot be played: {err}") from err
    for move in moves:
        game.play(move)
    recorded = result or tags.get("Result")
    if game.result is None and recorded in ("1-0", "0-1", DRAW_SCORE):
        winner = {"1-0": WHITE, "0-1": BLACK}.get(recorded)
        game.result = Result(recorded, ResultReason.RECORDED, winner)
    return game


def read_pdn(text: str, default_variant: Variant | str = "italian") -> list[Game]:
    """Every game in a PDN text; ValueError as read_game says."""
    return [read_game(tags, body, default_variant) for tags, body in split_games(text)]
