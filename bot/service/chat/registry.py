"""Every command and button action of the service, declared once.

The one table drives routing of typed text, ``/help`` in each language, the button actions and
the Discord slash-command definitions.  It is filled by the chat layer (``bot.service.chat``),
where each command is declared once with ``@command(...)`` over its handler, a function
``(app, ctx, args) -> replies`` that calls the use cases.  Adding a command means: that function
(and what it calls in a use case) and its catalog lines (``help.<name>`` in es, it, en).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from bot.i18n import LANGUAGES, catalog, t
from bot.rules import VARIANTS

# A command's handler: (the use cases, the event's context, the argument words) -> the replies;
# a button's: (the use cases, the context, the button's kind, its numbers) -> the replies.
Handler = Callable[..., Any]
ButtonHandler = Callable[..., Any]


class Permission(StrEnum):
    """Who may use a command."""

    ANYONE = "anyone"
    PLAYERS = "players"          # a player of the game it is about (checked by the handler)
    ADMINS = "admins"            # chat administrators (the platform says who is one)


class ArgKind(StrEnum):
    """What an argument is, so a platform can offer the right input (Discord option types)."""

    VARIANT = "variant"
    COLOR = "color"
    USER = "user"
    DURATION = "duration"
    GAME = "game"                # '#id'
    MOVE = "move"
    LANGUAGE = "language"
    LEVEL = "level"
    TEXT = "text"


@dataclass(frozen=True)
class Arg:
    """One argument of a command, in the order it is typed; ``choices`` the words it takes when
    they are few (a platform may offer them as a list)."""

    name: str
    kind: ArgKind
    required: bool = False
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class CommandSpec:
    """A command: its canonical (English) name, its aliases per language (the first one is the
    one help mentions), its arguments, who may use it, whether it is about a game."""

    name: str
    handler: Handler
    aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    args: tuple[Arg, ...] = ()
    permission: Permission = Permission.ANYONE
    needs_game: bool = False
    ref_only: bool = False       # its only argument is an optional #id: anything else is a mistake
    listed: bool = True          # a line of its own in /help
    # First arguments that need a chat administrator (the command without them is for anyone).
    admin_words: tuple[str, ...] = ()
    # Any argument needs a chat administrator (its words are open-ended: /lang español, /lang English).
    admin_args: bool = False
    # First arguments that start something living in a place of its own where the platform can
    # make one (a Telegram forum topic, a Discord thread): the adapter makes it and hands the
    # command over as written there (/tournament new).  The service never knows.
    place_words: tuple[str, ...] = ()

    def typed(self, values: Mapping[str, object]) -> str:
        """The command as a user would type it with these argument values (a platform's options,
        by argument name; None or missing: not given), so that typed text and a platform's options
        are read by the same parser (``parse_command`` and the handler's own).  A game goes first,
        as '#N' ("/move #3 22-18"); a user is given as their @handle (without the '@'); a duration
        loses its spaces ('1 h' is '1h'); other words keep single spaces."""
        words = [f"/{self.name}"]
        for arg in sorted(self.args, key=lambda a: a.kind is not ArgKind.GAME):
            word = typed_word(arg, values.get(arg.name))
            if word:
                words.append(word)
        return " ".join(words)

    def words(self) -> list[str]:
        """Every name the command answers to, lower case."""
        out = [self.name]
        for lang in self.aliases:
            out += [a.lower() for a in self.aliases[lang]]
        return out


def typed_word(arg: Arg, value: object) -> str | None:
    """One argument's value as the word typed for it (see CommandSpec.typed); None when not given."""
    if value is None:
        return None
    if arg.kind is ArgKind.USER:
        return "@" + str(value).lstrip("@")
    if arg.kind is ArgKind.GAME:
        return f"#{value}"
    if arg.kind is ArgKind.DURATION:
        return "".join(str(value).split()) or None
    return " ".join(str(value).split()) or None


# The words of a tournament's format (/tournament new swiss), by the catalog key of its name in a
# place's title (place.kind.<key>): the adapter names the topic or thread it makes after them.
PLACE_KINDS: Mapping[str, tuple[str, ...]] = {
    "swiss": ("swiss", "suizo", "suiza", "svizzero", "svizzera"),
    "roundrobin": ("roundrobin", "round-robin", "robin", "berger", "liga", "liguilla", "todos", "girone",
                   "italiana", "all'italiana"),
}


@dataclass(frozen=True)
class Place:
    """What a command that opens a place of its own starts, for the adapter to name the place:
    its kind (a key of PLACE_KINDS, "" when not said) and its variant's id (None when not said)."""

    kind: str
    variant: str | None


class ButtonKind(StrEnum):
    """The first field of a button action (``kind:number:number...``, at most 64 bytes)."""

    ACCEPT = "acc"               # acc:<challenge>
    DECLINE = "dec"              # dec:<challenge>
    PIECES = "p"                 # p:<game>:<ply>            back to the pieces that can move
    SELECT = "s"                 # s:<game>:<ply>:<square>   a piece touched
    DESTINATION = "d"            # d:<game>:<ply>:<from>:<to>
    PATH = "m"                   # m:<game>:<ply>:<index of the legal move>
    DRAW = "dr"                  # dr:<game>:<ply>           accept the standing offer
    RESIGN = "rs"                # rs:<game>:<ply>           confirm the resignation
    PUZZLE_SELECT = "zs"         # zs:<post>:<step>:<square> a piece touched in a puzzle
    PUZZLE_DEST = "zd"           # zd:<post>:<step>:<from>:<to>
    PUZZLE_PATH = "zm"           # zm:<post>:<step>:<index of the legal move>
    PUZZLE_BACK = "zb"           # zb:<post>:<step>          back to the pieces
    PUZZLE_HINT = "zh"           # zh:<post>:<step>          which piece moves next
    PUZZLE_GIVE_UP = "zg"        # zg:<post>                 show the solution, close the attempt
    PUZZLE_NEXT = "zn"           # zn:<post>                 a new personal puzzle of that variant
    REMATCH = "rm"               # rm:<game>                 the same game again, colours swapped
    TOURNAMENT_JOIN = "tj"       # tj:<tournament>           join the chat's open tournament
    STREAK_SKIP = "ks"           # ks:<run>                  older boards' Skip: refused (which puzzle is not said)
    STREAK_SKIP_AT = "kp"        # kp:<run>:<post>           skip that puzzle of the streak (once a run)


def action(kind: ButtonKind, *numbers: int) -> str:
    """A button's action string: ``kind:n:n...`` (short, and valid after a restart)."""
    return ":".join([kind.value, *map(str, numbers)])


@dataclass(frozen=True)
class ButtonSpec:
    """A button action: how many numbers it carries and the handler ``(app, ctx, kind, numbers)``."""

    kind: ButtonKind
    numbers: int
    handler: ButtonHandler


class Registry:
    """Commands and button actions, in the order help lists them."""

    def __init__(self) -> None:
        self._commands: dict[str, CommandSpec] = {}
        self._words: dict[str, str] = {}
        self._buttons: dict[str, ButtonSpec] = {}

    def add(self, spec: CommandSpec) -> CommandSpec:
        """Declare a command; a name or alias already taken is a programming error."""
        for word in spec.words():
            owner = self._words.get(word)
            if owner is not None and owner != spec.name:
                raise ValueError(f"/{word} already names /{owner}")
        self._commands[spec.name] = spec
        for word in spec.words():
            self._words[word] = spec.name
        return spec

    def remove(self, name: str) -> None:
        """Take a command out again (tests that add a throwaway one)."""
        self._commands.pop(name, None)
        self._words = {w: n for w, n in self._words.items() if n != name}

    def add_button(self, spec: ButtonSpec) -> ButtonSpec:
        """Declare a button action."""
        self._buttons[spec.kind.value] = spec
        return spec

    def needs_admin(self, spec: CommandSpec, args: list[str]) -> bool:
        """Whether this use of a command is for chat administrators only."""
        if spec.permission is Permission.ADMINS:
            return True
        # Folded as the subcommand reader folds (``fold``): 'STÁRT' must need the admins as 'start' does.
        return bool(args) and (spec.admin_args or fold(args[0]) in {fold(w) for w in spec.admin_words})

    def place_of(self, text: str | None, bot_username: str | None = None) -> Place | None:
        """What typed text starts in a place of its own (see ``CommandSpec.place_words``), or None:
        text that is no such command, or one addressed to another bot."""
        words = " ".join((text or "").split()).split(" ")
        if words[0][:1] not in ("/", "!"):
            return None
        name, _, addressee = words[0][1:].partition("@")
        if addressee and bot_username and addressee.lower() != bot_username.lower():
            return None
        spec = self.lookup(name)
        args = [_folded(w) for w in words[1:]]
        if spec is None or not args or args[0] not in map(_folded, spec.place_words):
            return None
        kind = next((k for k, names in PLACE_KINDS.items() for w in args[1:] if w in map(_folded, names)), "")
        variant = next((v.id for w in args[1:] for v in VARIANTS.values()
                        if w == v.id or w in (_folded(x) for ws in v.words.values() for x in ws)), None)
        return Place(kind, variant)

    def lookup(self, word: str) -> CommandSpec | None:
        """The command a typed name (or alias) means, or None."""
        name = self._words.get(word.lower())
        return self._commands[name] if name else None

    def button(self, kind: str) -> ButtonSpec | None:
        """The button action of a kind, or None."""
        return self._buttons.get(kind)

    def __iter__(self) -> Iterator[CommandSpec]:
        return iter(list(self._commands.values()))

    def help_text(self, lang: str) -> str:
        """/help in a language: one line per listed command, then the aliases it understands."""
        lines = [t(lang, "help.intro")]
        for spec in self:
            if spec.listed:
                lines.append(f"/{spec.name} {t(lang, f'help.{spec.name}')}")
                # A rule the command's players need (the tournaments' deadline) under its line.
                if f"help.{spec.name}.more" in catalog("en"):
                    lines.append(t(lang, f"help.{spec.name}.more"))
        lines.append(t(lang, "help.points"))
        lines.append(t(lang, "help.outro"))
        shown = [f"/{spec.aliases[lang][0]}" for spec in self if spec.aliases.get(lang) and lang != "en"]
        if len(shown) > 1:
            names = ", ".join(shown[:-1]) + t(lang, "help.and") + shown[-1]
            lines.append(t(lang, "help.aliases", names=names))
        return "\n".join(lines)


def fold(word: str) -> str:
    """Lower case without accents, as the commands read words ('Española' is 'espanola'); the one
    folding of a command's words, so the admin check and the handlers read a word alike."""
    return "".join(ch for ch in unicodedata.normalize("NFD", word.lower()) if not unicodedata.combining(ch))


_folded = fold


def _aliases(es: tuple[str, ...] = (), it: tuple[str, ...] = (), en: tuple[str, ...] = ()) -> dict[str, tuple]:
    return {lang: words for lang, words in zip(LANGUAGES, (es, it, en), strict=True) if words}


GAME = Arg("game", ArgKind.GAME)
# Challenges are named by their number as "id" (the option name Discord users already know).
ID = Arg("id", ArgKind.GAME)


# The words of /daily that change the setting (chat admins only); present_puzzles.parse_daily reads the same lists.
DAILY_ON_WORDS = ("on", "si", "sí", "yes", "activar", "attiva")
DAILY_OFF_WORDS = ("off", "no", "stop", "desactivar", "disattiva")

# The keys of /settings that change the chat for everyone (chat admins only in a group, as /lang
# with a language); the /settings handler (bot.service.chat) reads the same lists.
SETTINGS_VARIANT_WORDS = ("variant", "variante")
SETTINGS_LANG_WORDS = ("lang", "language", "idioma", "lingua")

REGISTRY = Registry()


def command(name: str, aliases: Mapping[str, tuple[str, ...]] | None = None, args: tuple[Arg, ...] = (),
            permission: Permission = Permission.ANYONE, **flags: Any) -> Callable[[Handler], Handler]:
    """Declare a command with the function below it as its handler (``handler(app, ctx, args)``):
    the one declaration that routes typed text and slash commands, lists it in /help and describes
    its Discord options."""
    def declare(handler: Handler) -> Handler:
        REGISTRY.add(CommandSpec(name, handler, aliases or {}, args, permission, **flags))
        return handler
    return declare


def button(kind: ButtonKind, numbers: int) -> Callable[[ButtonHandler], ButtonHandler]:
    """Declare a button action with the function below it as its handler ``(app, ctx, kind, numbers)``."""
    def declare(handler: ButtonHandler) -> ButtonHandler:
        REGISTRY.add_button(ButtonSpec(kind, numbers, handler))
        return handler
    return declare


def variant_choices() -> list[tuple[str, str]]:
    """(name, id) of every variant, for a platform's menu of them: the English word, with the
    Spanish one when it differs ("Spanish (española)"); from ``bot.rules.VARIANTS``."""
    return [(v.word("en").capitalize() + (f" ({v.word('es')})" if v.word("es") != v.word("en") else ""), v.id)
            for v in VARIANTS.values()]
