"""Reading chat commands: names and their localized aliases, /new arguments, durations."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.rules import VARIANTS
from bot.rules.variants import VariantWords
from bot.service.chat.registry import REGISTRY, fold  # one folding for the admin check and the handlers
from bot.service.features.common import DEFAULT_MOVE_SECONDS
from bot.service.features.results_games import NewGameArgs, PlayArgs

MAX_TEXT = 1000

# Every word that names a variant (folded) -> its id, from each Variant's declaration.
VARIANT_WORDS: Mapping[str, str] = VariantWords()
# Words that only go with a variant word: the names the bot itself writes ("damas españolas",
# "dama italiana", "Triestina draughts") must be understood when typed back.
VARIANT_FILLERS = {"dama", "damas", "draughts"}
COLOR_WORDS: dict[str, str] = {
    "white": "white", "blancas": "white", "blanco": "white", "blancos": "white", "bianco": "white",
    "bianchi": "white", "w": "white",
    "black": "black", "negras": "black", "negro": "black", "negros": "black", "nero": "black",
    "neri": "black", "b": "black",
    "random": "random", "azar": "random", "aleatorio": "random", "caso": "random", "casuale": "random",
}

MIN_MOVE_SECONDS = 5 * 60
MAX_MOVE_SECONDS = 7 * 24 * 3600
# Longest names first: the pattern is matched piece by piece ('1h30m'), so 'min' must not stop at 'm'.
_UNIT = (r"(minutes?|minutos?|minuti|minuto|mins|min|m|hours?|horas?|hrs?|h|ore|ora"
         r"|days?|d[ií]as?|d|giorni|giorno|g|secondi|secondo|seconds?|segundos?|secs?|seg|s)")
_DURATION_PART = re.compile(r"(\d+)\s*" + _UNIT, re.I)
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


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
    spec = REGISTRY.lookup(raw)
    return Command(spec.name if spec else None, raw, rest.split(), rest.strip(), addressee.lower() or None)


def parse_duration(word: str) -> int | None:
    """Seconds for '30s', '30m', '2h', '3d', '1h30m', '4m40s' (and Spanish/Italian unit names);
    None if not a duration.  Any number is read, so that an out-of-range time can be called out of
    range (a move time in seconds is refused by its bounds, not misread)."""
    text = word.strip()
    total, pos, last_rank = 0, 0, 4
    for part in _DURATION_PART.finditer(text):
        if part.start() != pos:
            return None
        unit = part.group(2).lower()
        # seconds start with s; minutes with m; hours with h (hours, horas) or o (ore, ora); the
        # rest are days.
        key = "s" if unit[0] == "s" else "m" if unit[0] == "m" else "h" if unit[0] in "ho" else "d"
        rank = "smhd".index(key)
        if rank >= last_rank:       # '30m2h' or '2h2h': not a way anyone writes a time
            return None
        last_rank = rank
        digits = part.group(1).lstrip("0") or "0"
        # A number too long to matter is just 'too long' (and int() of thousands of digits is slow).
        number = int(digits) if len(digits) <= 12 else 10 ** 12
        total += number * _UNIT_SECONDS[key]
        pos = part.end()
    return total if pos and pos == len(text) else None


def parse_variant(words: list[str]) -> str | None:
    """The variant that all these words name together ('dama italiana', 'Spanish draughts',
    'triestina'); None when they name none, or more than one."""
    folded = [fold(w) for w in words]
    found = {VARIANT_WORDS[w] for w in folded if w in VARIANT_WORDS}
    if len(found) != 1 or any(w not in VARIANT_WORDS and w not in VARIANT_FILLERS for w in folded):
        return None
    return found.pop()


class BadArgument(ValueError):
    """An argument of /new we cannot read: ``key`` names the catalog message."""

    def __init__(self, key: str, **values: object) -> None:
        super().__init__(key)
        self.key = key
        self.values = values


def _drop_fillers(args: list[str]) -> list[str]:
    """Leave out 'dama', 'damas', 'draughts' next to a variant word (they are part of its name)."""
    folded = [fold(w) for w in args]
    keep = []
    for i, word in enumerate(args):
        near = folded[max(0, i - 1):i] + folded[i + 1:i + 2]
        if folded[i] in VARIANT_FILLERS and any(w in VARIANT_WORDS for w in near):
            continue
        keep.append(word)
    return keep


def parse_new(args: list[str]) -> NewGameArgs:
    """/new [variant] [white|black|random] [@user] [move-time], in any order.  Two different
    values for the same thing ('white black', '2h 3h') contradict each other: refused."""
    typed: dict[str, str] = {}      # what -> the word that gave it
    value: dict[str, Any] = {}

    def choose(what: str, word: str, val: Any) -> None:
        if what in value and value[what] != val:
            raise BadArgument(f"new.two_{what}", first=typed[what], second=word[:30])
        typed.setdefault(what, word[:30])
        value[what] = val

    for word in _drop_fillers(args):
        low = fold(word)
        if low in VARIANT_WORDS:
            choose("variants", word, VARIANT_WORDS[low])
        elif low in COLOR_WORDS:
            choose("colors", word, COLOR_WORDS[low])
        elif word.startswith("@") and len(word) > 1:
            choose("targets", word[1:], word[1:].lower()[:64])
        elif (dur := parse_duration(word)) is not None:
            if not MIN_MOVE_SECONDS <= dur <= MAX_MOVE_SECONDS:
                raise BadArgument("new.bad_time", word=word[:20])
            choose("times", word, dur)
        else:
            raise BadArgument("new.bad_arg", word=word[:30])
    assert value.get("variants") in (None, *VARIANTS)
    return NewGameArgs(value.get("variants"), value.get("colors", "random"), value.get("targets"),
                       value.get("times", DEFAULT_MOVE_SECONDS))


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


LEVEL_WORDS = {"level", "nivel", "livello", "lvl", "niv", "liv"}
# Words of someone asking for a game against the bot ("/jugar contra la máquina", "/gioca
# italiana livello 1"): /jugar and /gioca are aliases of /move, so these must not read as a move.
BOT_WORDS = LEVEL_WORDS | {"maquina", "ordenador", "computadora", "computer", "bot", "cpu", "machine", "macchina"}


def asks_for_bot(words: list[str]) -> bool:
    """Whether the words after /move ask for a game against the bot rather than name a move."""
    return any(fold(w) in BOT_WORDS for w in words)
MIN_LEVEL, MAX_LEVEL = 1, 5
DEFAULT_LEVEL = 3


def parse_play(args: list[str]) -> PlayArgs:
    """/play [variant] [level] [white|black|random] [move-time], in any order; the level as '3',
    'level 3', 'nivel 3', 'L3'.  Two different values for one thing are refused, as for /new."""
    typed: dict[str, str] = {}
    value: dict[str, Any] = {}

    def choose(what: str, word: str, val: Any) -> None:
        if what in value and value[what] != val:
            raise BadArgument(f"new.two_{what}" if what != "levels" else "play.two_levels",
                              first=typed[what], second=word[:30])
        typed.setdefault(what, word[:30])
        value[what] = val

    words = _drop_fillers(args)
    i = 0
    while i < len(words):
        word = words[i]
        low = fold(word)
        level_word = re.fullmatch(r"(?:l|lv|lvl|level|nivel|livello)?(\d{1,3})", low)
        if low in LEVEL_WORDS and i + 1 < len(words) and words[i + 1].isdigit():
            level_word = re.fullmatch(r"(\d{1,3})", words[i + 1])
            word = f"{word} {words[i + 1]}"
            i += 1
        if low in VARIANT_WORDS:
            choose("variants", word, VARIANT_WORDS[low])
        elif low in COLOR_WORDS:
            choose("colors", word, COLOR_WORDS[low])
        elif level_word is not None:
            level = int(level_word.group(1))
            if not MIN_LEVEL <= level <= MAX_LEVEL:
                # The number alone: the catalog line already says "level" ("the level level 9").
                raise BadArgument("play.bad_level", word=str(level), low=MIN_LEVEL, high=MAX_LEVEL)
            choose("levels", word, level)
        elif (dur := parse_duration(word)) is not None:
            if not MIN_MOVE_SECONDS <= dur <= MAX_MOVE_SECONDS:
                raise BadArgument("new.bad_time", word=word[:20])
            choose("times", word, dur)
        elif word.startswith("@"):
            raise BadArgument("play.no_target")
        else:
            raise BadArgument("new.bad_arg", word=word[:30])
        i += 1
    return PlayArgs(value.get("variants"), value.get("levels", DEFAULT_LEVEL), value.get("colors", "random"),
                    value.get("times", DEFAULT_MOVE_SECONDS))
