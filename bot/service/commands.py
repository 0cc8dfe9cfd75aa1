"""Reading chat commands: names and their localized aliases, /new arguments, durations."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from bot.rules import VARIANTS

MAX_TEXT = 1000

# Localized aliases map to the canonical command (the same on every platform).
ALIASES: dict[str, str] = {
    "help": "help", "start": "help", "ayuda": "help", "aiuto": "help",
    "rules": "rules", "reglas": "rules", "regole": "rules",
    "new": "new", "nueva": "new", "nuova": "new", "reto": "new", "sfida": "new", "challenge": "new",
    "accept": "accept", "aceptar": "accept", "accetta": "accept",
    "decline": "decline", "rechazar": "decline", "rifiuta": "decline",
    "cancel": "cancel", "cancelar": "cancel", "annulla": "cancel",
    "move": "move", "m": "move", "mover": "move", "muovi": "move", "jugar": "move", "gioca": "move",
    "board": "board", "tablero": "board", "damiera": "board",
    "resign": "resign", "rendirse": "resign", "abandonar": "resign", "abbandona": "resign",
    "draw": "draw", "tablas": "draw", "patta": "draw",
    "games": "games", "partidas": "games", "partite": "games",
    "pdn": "pdn",
    "lang": "lang", "idioma": "lang", "lingua": "lang", "language": "lang",
    "settings": "settings", "ajustes": "settings", "impostazioni": "settings",
}

VARIANT_WORDS: dict[str, str] = {
    "spanish": "spanish", "española": "spanish", "espanola": "spanish", "españolas": "spanish",
    "spagnola": "spanish", "es": "spanish",
    "italian": "italian", "italiana": "italian", "italianas": "italian", "it": "italian",
    "triestina": "triestina", "triestinas": "triestina", "trieste": "triestina",
}
COLOR_WORDS: dict[str, str] = {
    "white": "white", "blancas": "white", "blanco": "white", "blancos": "white", "bianco": "white",
    "bianchi": "white", "w": "white",
    "black": "black", "negras": "black", "negro": "black", "negros": "black", "nero": "black",
    "neri": "black", "b": "black",
    "random": "random", "azar": "random", "aleatorio": "random", "caso": "random", "casuale": "random",
}

MIN_MOVE_SECONDS = 5 * 60
MAX_MOVE_SECONDS = 7 * 24 * 3600
DEFAULT_MOVE_SECONDS = 24 * 3600
_DURATION = re.compile(
    r"(\d{1,4})\s*(m|min|mins|minutes?|minutos?|minuti|h|hr|hours?|horas?|ore|ora|d|days?|d[ií]as?|giorni|g)", re.I)
_UNIT_SECONDS = {"m": 60, "h": 3600, "d": 86400}


@dataclass(frozen=True)
class Command:
    """A typed command: canonical name and its argument words."""

    name: str | None        # None: not a command we know
    raw_name: str
    args: list[str]
    text: str               # everything after the command name
    addressee: str | None = None   # the bot named in /cmd@BotName, lower case


def clean_text(text: str) -> str:
    """Drop control and format characters, turn every kind of space into a plain one, trim."""
    cleaned = "".join(" " if ch.isspace() else ch for ch in text
                      if ch.isspace() or unicodedata.category(ch)[0] != "C")
    return cleaned.strip()


def parse_command(text: str) -> Command | None:
    """A /command (or !command) with its arguments; None for ordinary text."""
    text = clean_text(text)
    if not text or text[0] not in "/!":
        return None
    head, _, rest = text[1:].partition(" ")
    # Telegram adds @BotName to commands in groups.
    raw, _, addressee = head.partition("@")
    raw = raw.lower()
    return Command(ALIASES.get(raw), raw, rest.split(), rest.strip(), addressee.lower() or None)


def parse_duration(word: str) -> int | None:
    """Seconds for '30m', '2h', '3d' (and Spanish/Italian unit names); None if not a duration."""
    m = _DURATION.fullmatch(word.strip())
    if not m:
        return None
    unit = m.group(2).lower()
    # minutes start with m; hours with h (hours, horas) or o (ore, ora); the rest are days.
    key = "m" if unit[0] == "m" else "h" if unit[0] in "ho" else "d"
    return int(m.group(1)) * _UNIT_SECONDS[key]


@dataclass(frozen=True)
class NewGameArgs:
    variant: str | None
    color: str
    target: str | None
    move_seconds: int


class BadArgument(ValueError):
    """An argument of /new we cannot read: ``key`` names the catalog message."""

    def __init__(self, key: str, **values: object) -> None:
        super().__init__(key)
        self.key = key
        self.values = values


def parse_new(args: list[str]) -> NewGameArgs:
    """/new [variant] [white|black|random] [@user] [move-time], in any order."""
    variant = target = None
    color = "random"
    seconds = DEFAULT_MOVE_SECONDS
    for word in args:
        low = word.lower()
        if low in VARIANT_WORDS:
            variant = VARIANT_WORDS[low]
        elif low in COLOR_WORDS:
            color = COLOR_WORDS[low]
        elif word.startswith("@") and len(word) > 1:
            target = word[1:].lower()[:64]
        elif (dur := parse_duration(word)) is not None:
            if not MIN_MOVE_SECONDS <= dur <= MAX_MOVE_SECONDS:
                raise BadArgument("new.bad_time", word=word[:20])
            seconds = dur
        else:
            raise BadArgument("new.bad_arg", word=word[:30])
    assert variant is None or variant in VARIANTS
    return NewGameArgs(variant, color, target, seconds)


def only_ref(args: list[str]) -> tuple[int | None, bool]:
    """For commands whose one optional argument is a game or challenge: ('#12' or '12', ok);
    ok is False when anything else was typed."""
    if not args:
        return None, True
    if len(args) == 1 and re.fullmatch(r"#?[0-9]{1,9}", args[0]):
        return int(args[0].lstrip("#")), True
    return None, False


def game_ref(args: list[str]) -> tuple[int | None, list[str]]:
    """A '#12' game or challenge reference among the arguments, and the other arguments."""
    ref = None
    rest = []
    for word in args:
        if re.fullmatch(r"#\d{1,9}", word):
            ref = int(word[1:])
        else:
            rest.append(word)
    return ref, rest
