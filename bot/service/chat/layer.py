"""The chat layer: every command and button declared once over its handler, and the routing of a
chat event's text or button press to them.

A handler is a function ``(app, ctx, args)`` (a button's: ``(app, ctx, kind, numbers)``) that
translates the chat into the use cases' terms and calls them (``app``, built by
``bot.service.compose``), then turns what they return into replies (``bot.service.chat.presenters``).
The use cases know no chat: the handler gives them the caller's identity (``Ctx.caller``), and
resolves here what a message means beyond its words (the board or puzzle it replies to, a button's
numbers, a private chat's start link).  The typed text and the Discord slash options go through
the same parsing: a slash command's options are written back as the words a user would type
(``CommandSpec.typed``), which ``parse_command`` and the use case's own argument parser read.

It is a module of the package, not the package's ``__init__``: it imports the composition and the
board layer, which import the chat layer's presenters and wording, so an ``__init__`` holding it would
run ahead of any of them and tie them all into one import knot (issue 31).  Importing this module
fills the command registry (``chat/registry.py``): the facade (``bot.service.service``) does.
"""

from __future__ import annotations

import re
from dataclasses import replace

from bot.i18n import LANGUAGES, t
from bot.languages import pick_language
from bot.rules.notation import looks_like_move
from bot.service.chat import (
    present_own,
    present_puzzles,
    present_runs,
    present_stats,
    present_storm,
    presenters,
    tournaments,
)
from bot.service.chat.commands import (
    DEFAULT_MOVE_SECONDS,
    MAX_TEXT,
    BadArgument,
    asks_for_bot,
    clean_text,
    fold,
    game_ref,
    only_ref,
    parse_command,
    parse_new,
    parse_play,
    parse_variant,
)
from bot.service.chat.context import (
    DONE_WORDS,
    Ctx,
    asks_for_history,
    display_name,
    game_meant,
    replied_game,
    replied_post,
    signer_of,
    start_link,
    with_links,
)
from bot.service.chat.describe import with_alts
from bot.service.chat.links import (
    INLINE_ACCEPT,
    INLINE_CHAT,
    WEB_BUTTON,
    WEB_START,
    InlineArticle,
    WebLinks,
    offer_action,
    parse_offer_action,
)
from bot.service.chat.registry import (
    DAILY_OFF_WORDS,
    DAILY_ON_WORDS,
    GAME,
    ID,
    REGISTRY,
    SETTINGS_LANG_WORDS,
    SETTINGS_VARIANT_WORDS,
    Arg,
    ArgKind,
    ButtonKind,
    Permission,
    _aliases,
    button,
    command,
)
from bot.service.chat.signing import LinkSigner
from bot.service.chat.wording import button_rows, duration, variant_name
from bot.service.compose import UseCases
from bot.service.events import Button, ChatEvent, Reply
from bot.service.features.challenges import OfferTaken
from bot.service.features.own_puzzles import OwnGiven
from bot.service.features.play import GameAnswer
from bot.service.features.puzzle_runs import StreakInPrivate
from bot.service.features.results import GameStarted, MoveOutcome, MoveRequest
from bot.service.features.results_games import ChallengeRef, GameRef, NoGame, Refused
from bot.service.features.results_puzzles import PuzzleInPrivate
from bot.service.features.results_stats import (
    AnalysisRequest,
    FinishedGames,
    HistoryRequest,
    NotifyOutcome,
    NotifySet,
    RematchRefused,
    SettingsRequest,
    StatsRequest,
    TopRequest,
    UnknownVariant,
    Usage,
)
from bot.service.web import BoardLayer
from bot.storage import StorageUnavailable
from bot.storage.records import GameRecord

# What the facade and the tests take from the chat layer.
__all__ = ["DONE_WORDS", "INLINE_ACCEPT", "INLINE_CHAT", "WEB_BUTTON", "WEB_START", "ChatLayer", "Ctx", "InlineArticle",
           "WebLinks", "asks_for_history", "display_name", "game_meant", "notify_request", "offer_action",
           "parse_offer_action", "replied_game", "replied_post", "start_link", "with_links"]


class ChatLayer:
    """Routes a chat event's text or button to the handler the registry names for it.  ``web``:
    the web board's links while an adapter serves it (None: no board, /web says so)."""

    def __init__(self, app: UseCases) -> None:
        self.app = app
        self.web: WebLinks | None = None
        self.signer = LinkSigner(app.runtime.storage.settings)

    def serve_web(self, url: str | None, board: BoardLayer | None = None, telegram_app: str | None = None) -> None:
        """An adapter started serving the web board at public address ``url`` (``board``: the
        service's board layer; ``telegram_app``: the Mini App's short name), or stopped (None)."""
        self.web = WebLinks(url.rstrip("/"), board, telegram_app) if url and board is not None else None

    @staticmethod
    def web_button(game_id: int) -> str:
        """The action of a board's Open board button (answered by ``open_board``)."""
        return f"{WEB_BUTTON}:{game_id}"

    def review_button(self, platform: str, chat_id: str, game_id: int, *, private_user: str | None = None,
                      bot_username: str | None = None) -> Button | None:
        """The Review button under finished game ``game_id``'s board in a message to ``chat_id``
        (``private_user``: whose private chat that is, None in a group), or None: no web board, no
        finished game of this platform, or a chat that may not see it.  Only the game's own chat,
        or the private chat of one of its players, is given its link: a game played in a private
        chat is reviewed by its players alone."""
        links = self.web
        if links is None:
            return None
        row = self.app.runtime.storage.games.get(game_id)
        if row is None or row.status != "finished" or row.platform != platform:
            return None
        if row.chat_id != chat_id and private_user not in (row.white_id, row.black_id):
            return None
        chat = self.app.runtime.storage.players.chat(platform, chat_id)
        url, web_app = links.review(game_id, platform, private_chat=private_user is not None,
                                    bot_username=bot_username)
        label = t(pick_language(chat.language if chat is not None else None), "button.review")
        return Button(label, "", url=url, web_app=web_app)

    def button(self, ctx: Ctx, action: str) -> list[Reply]:
        """A button press: its action string routed through the registry's button table."""
        ctx = replace(ctx, web=self.web, signer=self.signer)
        return self.signer.sign_starts(with_alts(ctx.lang, self._button(ctx, action)), ctx.event.platform,
                                       ctx.event.user_id)

    def _button(self, ctx: Ctx, action: str) -> list[Reply]:
        parts = str(action)[:64].split(":")
        if parts[0] == INLINE_ACCEPT and ctx.event.chat_id.startswith(INLINE_CHAT):
            return inline_accept(self.app, ctx, str(action))
        if parts[0] == WEB_BUTTON and len(parts) == 2 and re.fullmatch(r"[0-9]{1,9}", parts[1]):
            return open_board(self.app, ctx, int(parts[1]))
        spec = REGISTRY.button(parts[0])
        nums = parts[1:]
        if (spec is None or len(nums) != spec.numbers
                or not all(re.fullmatch(r"[0-9]{1,9}", p) for p in nums)):
            return [Reply(t(ctx.lang, "button.invalid"), private=True)]
        return spec.handler(self.app, ctx, spec.kind, [int(p) for p in nums])

    def inline_articles(self, platform: str, user_id: str, user_name: str, username: str | None,
                        language: str | None, query: str) -> list[InlineArticle]:
        """The challenges offered to a user typing ``@bot <query>`` in any chat, one per variant (only
        the one the query names, if it names one), in the user's language; the query may choose
        the challenger's colour as /new does ('white')."""
        lang = pick_language(language)
        chosen_variant, color = None, "random"
        # Typed letter by letter: a word that names nothing (yet) is passed over, not refused.
        for word in query.split()[:6]:
            try:
                spec = parse_new([word])
            except BadArgument:
                continue
            chosen_variant = spec.variant or chosen_variant
            color = color if spec.color == "random" else spec.color
        name = display_name(ChatEvent(platform, "", user_id, user_name, username=username))
        offers = self.app.challenges.make_offers(platform, user_id, name, username, language, color, lang)
        articles = []
        for offer in offers:
            if chosen_variant is not None and offer.variant != chosen_variant:
                continue
            variant = variant_name(lang, offer.variant)
            colors = t(lang, f"colors.{offer.color}", name=name)
            articles.append(InlineArticle(
                id=f"{offer.variant}-{offer.color}", title=t(lang, "inline.title", variant=variant),
                description=t(lang, "inline.description", colors=colors[:1].upper() + colors[1:]),
                text=t(lang, "inline.offer", name=name, variant=variant, colors=colors,
                       time=duration(lang, DEFAULT_MOVE_SECONDS)),
                accept=Button(t(lang, "button.accept"), offer_action(offer, self.signer.offer_signature(offer)))))
        return articles

    def inline_offer_genuine(self, platform: str, action: str) -> bool:
        """Whether a button press on an inline message is an Accept the bot made (nothing is
        written to find out: a forged press must change nothing)."""
        parsed = parse_offer_action(platform, action)
        return parsed is not None and self.signer.verify_offer(*parsed) is not None

    def text(self, ctx: Ctx, raw: str) -> list[Reply]:
        """Typed text: a command (with its arguments), a bare move, or nothing we answer."""
        ctx = replace(ctx, web=self.web, signer=self.signer)
        return self.signer.sign_starts(with_alts(ctx.lang, self._text(ctx, raw)), ctx.event.platform,
                                       ctx.event.user_id)

    def _text(self, ctx: Ctx, raw: str) -> list[Reply]:
        app = self.app
        if len(raw) > MAX_TEXT:
            if raw.lstrip()[:1] in ("/", "!") or ctx.event.chat_kind == "private":
                return [Reply(t(ctx.lang, "error.too_long", max=MAX_TEXT))]
            return []
        cmd = parse_command(raw)
        if cmd is None and ctx.event.as_chat:
            return []                          # no player to answer for, and only commands are asked
        if cmd is None:
            text = clean_text(raw)
            # A bare move replying to a puzzle answers it; otherwise it is taken from a player who
            # has a game here.
            whole = looks_like_move(text)
            if whole or looks_like_move(text.split()[0] if text else ""):
                post_id = replied_post(app, ctx)
                post = app.puzzles.find_post(post_id) if post_id is not None else None
                if post is not None:
                    return present_puzzles.present(ctx.lang, app.puzzles.answer_puzzle(ctx.caller, post, text))
            if whole and app.games.my_games(ctx.caller):
                return move(app, ctx, text.split())
            if ctx.event.chat_kind == "private" and text:
                return [Reply(t(ctx.lang, "chat.greeting"))]
            return []
        bot = (ctx.event.bot_username or "").lower()
        if cmd.addressee and bot and cmd.addressee != bot:
            return []
        if cmd.name is None:
            return [Reply(t(ctx.lang, "error.unknown_command", command=cmd.raw_name[:30]))]
        spec = REGISTRY.lookup(cmd.name)
        assert spec is not None          # parse_command named it from the same table
        if ctx.event.as_chat and not REGISTRY.needs_admin(spec, cmd.args):
            return [Reply(t(ctx.lang, "error.write_as_yourself", command=cmd.raw_name[:30]))]
        # A private chat is its user's own: only a group's settings are for its administrators.
        if (REGISTRY.needs_admin(spec, cmd.args) and not ctx.event.is_admin
                and ctx.event.chat_kind != "private"):
            return [Reply(t(ctx.lang, "error.admins_only", command=cmd.raw_name[:30]))]
        if spec.ref_only:
            ref, ok = only_ref(cmd.args)
            if not ok:
                return [Reply(t(ctx.lang, "error.ref_only", command=cmd.raw_name[:30]))]
            return spec.handler(app, ctx, [f"#{ref}"] if ref is not None else [])
        return spec.handler(app, ctx, cmd.args)


def refused_usage(err: BadArgument, usage: str) -> Refused:
    """Arguments the command's parser refused: what was wrong, then how to use the command."""
    return Refused(err.key, values=tuple(err.values.items()), then=usage)


# -- the commands, in the order /help lists them ------------------------------------------------------

@command("new", _aliases(("nueva", "reto"), ("nuova", "sfida"), ("challenge",)),
         (Arg("variant", ArgKind.VARIANT), Arg("color", ArgKind.COLOR), Arg("opponent", ArgKind.USER),
          Arg("move_time", ArgKind.DURATION)))
def new(app: UseCases, ctx: Ctx, args: list[str]) -> list[Reply]:
    try:
        spec = parse_new(args)
    except BadArgument as err:
        return presenters.replies(ctx.lang, refused_usage(err, "new.usage"))
    return presenters.replies(ctx.lang, app.challenges.open_challenge(ctx.caller, spec, ctx.lang))


@command("play", _aliases(("maquina", "máquina", "bot"), ("computer", "bot"), ("bot",)),
         (Arg("variant", ArgKind.VARIANT), Arg("level", ArgKind.LEVEL), Arg("color", ArgKind.COLOR),
          Arg("move_time", ArgKind.DURATION)))
def play(app: UseCases, ctx: Ctx, args: list[str]) -> list[Reply]:
    try:
        spec = parse_play(args)
    except BadArgument as err:
        return presenters.replies(ctx.lang, refused_usage(err, "play.usage"))
    outcome = app.opponent.start_game(ctx.caller, spec, ctx.lang)
    replies = presenters.replies(ctx.lang, outcome)
    if not isinstance(outcome, Refused) and replies and app.runtime.thinker.first_start():
        # The first game on a machine waits while the engine's search is compiled: said once, in
        # the board's own message (no message more to number or to reply to).
        replies[0] = replace(replies[0], text=replies[0].text + "\n" + t(ctx.lang, "bot.preparing"))
    return replies


@command("accept", _aliases(("aceptar",), ("accetta",)), (ID,), ref_only=True)
def accept(app: UseCases, ctx: Ctx, args: list[str]) -> list[Reply]:
    return presenters.replies(ctx.lang, app.challenges.accept(ctx.caller, ChallengeRef(game_ref(args)[0])))


@command("decline", _aliases(("rechazar",), ("rifiuta",)), (ID,), ref_only=True)
def decline(app: UseCases, ctx: Ctx, args: list[str]) -> list[Reply]:
    return presenters.replies(ctx.lang, app.challenges.decline(ctx.caller, ChallengeRef(game_ref(args)[0])))


@command("cancel", _aliases(("cancelar",), ("annulla",)), (ID,), ref_only=True)
def cancel(app: UseCases, ctx: Ctx, args: list[str]) -> list[Reply]:
    return presenters.replies(ctx.lang, app.challenges.cancel(ctx.caller, ChallengeRef(game_ref(args)[0])))


@command("move", _aliases(("mover", "jugar"), ("muovi", "gioca"), ("m",)),
         (Arg("move", ArgKind.MOVE, required=True), GAME), Permission.PLAYERS, needs_game=True)
def move(app: UseCases, ctx: Ctx, args: list[str]) -> list[Reply]:
    ref, words = game_ref(args)
    if not words:
        return [Reply(t(ctx.lang, "move.usage"))]
    if ref is None and asks_for_bot(words) and not app.games.my_games(ctx.caller):
        # "/jugar damas españolas nivel 3": /jugar is /move, but this asks for /play, so what
        # /play would understand starts the game; the rest ("contra la máquina") is pointed there.
        try:
            parse_play(words)
        except BadArgument:
            return [Reply(t(ctx.lang, "move.play_instead"))]
        return play(app, ctx, words)
    # A reply aims the move: at the puzzle or the board replied to, never at a guessed one.
    request = MoveRequest(" ".join(words), game_meant(app, ctx, ref), replied_post(app, ctx), bool(ctx.event.reply_to))
    return presenters.replies(ctx.lang, app.play.move(ctx.caller, request))


@command("board", _aliases(("tablero",), ("damiera",)), (GAME,), needs_game=True, ref_only=True)
def board(app: UseCases, ctx: Ctx, args: list[str]) -> list[Reply]:
    return presenters.replies(ctx.lang, app.play.board(ctx.caller, GameRef(game_meant(app, ctx, game_ref(args)[0]))))


@command("draw", _aliases(("tablas",), ("patta",)), (GAME,), Permission.PLAYERS, needs_game=True, ref_only=True)
def draw(app: UseCases, ctx: Ctx, args: list[str]) -> list[Reply]:
    return presenters.replies(ctx.lang, app.play.draw(ctx.caller, GameRef(game_meant(app, ctx, game_ref(args)[0]))))


@command("resign", _aliases(("abandonar", "rendirse"), ("abbandona",)), (GAME,), Permission.PLAYERS, needs_game=True,
         ref_only=True)
def resign(app: UseCases, ctx: Ctx, args: list[str]) -> list[Reply]:
    return presenters.replies(ctx.lang, app.play.resign(ctx.caller, GameRef(game_meant(app, ctx, game_ref(args)[0]))))


@command("analysis", _aliases(("analisis", "análisis"), ("analisi",), ("analyse", "analyze")), (GAME,))
def analysis(app: UseCases, ctx: Ctx, args: list[str]) -> list[Reply]:
    ref, rest = game_ref(args)
    if rest:
        return present_stats.analysis(ctx.lang, Usage("analysis"))
    request = AnalysisRequest(game_meant(app, ctx, ref), ctx.lang)
    return present_stats.analysis(ctx.lang, app.analysis.analyse(ctx.caller, request))


@command("daily", _aliases(("diario", "reto_diario"), ("giornaliero", "quotidiano")),
         (Arg("action", ArgKind.TEXT, choices=("on", "off")), Arg("time", ArgKind.TEXT),
          Arg("timezone", ArgKind.TEXT), Arg("variant", ArgKind.VARIANT)),
         admin_words=DAILY_ON_WORDS + DAILY_OFF_WORDS)
def daily(app: UseCases, ctx: Ctx, args: list[str]) -> list[Reply]:
    request = present_puzzles.parse_daily(ctx.lang, args)
    if isinstance(request, Reply):
        return [request]
    return present_puzzles.present_daily(ctx.lang, app.puzzles.daily(ctx.caller, request))


@command("puzzle", _aliases(("problema", "golpe"), ("problema", "colpo")),
         (Arg("action", ArgKind.TEXT, choices=("giveup", "history", "mine", "remind on", "remind off", "themes")),
          Arg("variant", ArgKind.VARIANT), Arg("theme", ArgKind.TEXT)))
def puzzle(app: UseCases, ctx: Ctx, args: list[str]) -> list[Reply]:
    own = present_own.parse_own(ctx.lang, args)
    if own is not None:
        return own_puzzles(app, ctx, own)
    request = present_puzzles.parse_puzzle(ctx.lang, args)
    if isinstance(request, Reply):
        return [request]
    if request.ref is None:
        request = replace(request, ref=replied_post(app, ctx))
    return present_puzzles.present(ctx.lang, with_links(app, ctx, app.puzzles.puzzle(ctx.caller, request, ctx.lang)))


def own_puzzles(app: UseCases, ctx: Ctx, request: present_own.OwnRequest | Reply) -> list[Reply]:
    """/puzzle mine (the due puzzle from one's own games) and /puzzle remind [on|off]."""
    if isinstance(request, Reply):
        return [request]
    if request.action == "remind":
        return present_own.present(ctx.lang, app.own_puzzles.remind(ctx.caller, request.active, ctx.lang))
    given = app.own_puzzles.mine(ctx.caller)
    if isinstance(given, OwnGiven):
        # A puzzle waiting in the private chat gets its link there, signed for the asker.
        given = present_own.linked(given, with_links(app, ctx, given.given))
    return present_own.present(ctx.lang, given)


@command("hint", _aliases(("pista",), ("aiutino", "suggerimento")), (Arg("id", ArgKind.GAME),))
def hint(app: UseCases, ctx: Ctx, args: list[str]) -> list[Reply]:
    ref = present_puzzles.parse_ref(args)
    if ref is None:
        ref = replied_post(app, ctx)
    return present_puzzles.present(ctx.lang, app.puzzles.hint(ctx.caller, ref))


@command("stats", _aliases(("estadisticas", "estadísticas"), ("statistiche",)),
         (Arg("player", ArgKind.USER), Arg("other", ArgKind.USER)))
def stats(app: UseCases, ctx: Ctx, args: list[str]) -> list[Reply]:
    if len(args) > 2 or not all(word.startswith("@") for word in args):
        return present_stats.stats(ctx.lang, Usage("stats"))
    return present_stats.stats(ctx.lang, app.ratings.stats(ctx.caller, StatsRequest(tuple(args))))


@command("top", _aliases(("clasificacion", "clasificación", "ranking"), ("classifica",)),
         (Arg("scope", ArgKind.TEXT, choices=("global", "puzzles")), Arg("variant", ArgKind.VARIANT)))
def top(app: UseCases, ctx: Ctx, args: list[str]) -> list[Reply]:
    request = parse_top(args)
    if isinstance(request, Usage):
        return present_stats.top(ctx.lang, request)
    return present_stats.top(ctx.lang, app.ratings.top(ctx.caller, request, ctx.lang))


def parse_top(args: list[str]) -> TopRequest | Usage:
    """/top [variant], /top global [variant], /top puzzles (in any of our languages)."""
    words = [fold(w) for w in args]
    if words and words[0] in ("puzzles", "puzzle", "problemas", "problemi", "golpes"):
        return Usage("top") if len(words) > 1 else TopRequest("puzzles")
    everywhere = bool(words) and words[0] in ("global", "todos", "tutti", "all")
    rest = args[1:] if everywhere else args
    variant = parse_variant(rest) if rest else None
    if rest and variant is None:
        return Usage("top")
    return TopRequest("global" if everywhere else "chat", variant)


@command("games", _aliases(("partidas",), ("partite",)), (Arg("page", ArgKind.TEXT),))
def games(app: UseCases, ctx: Ctx, args: list[str]) -> list[Reply]:
    # /games done (its finished games) is the history's list.
    if asks_for_history(args):
        return history(app, ctx, args[1:])
    if not args:
        return presenters.replies(ctx.lang, app.challenges.list_games(ctx.caller))
    if len(args) != 1 or not re.fullmatch(r"[0-9]{1,6}", args[0]) or int(args[0]) < 1:
        return presenters.replies(ctx.lang, Refused("games.usage"))
    return presenters.replies(ctx.lang, app.challenges.list_games(ctx.caller, int(args[0])))


@command("history", _aliases(("historial",), ("storico", "cronologia")), (Arg("player", ArgKind.USER),))
def history(app: UseCases, ctx: Ctx, args: list[str]) -> list[Reply]:
    if len(args) > 1 or (args and not args[0].startswith("@")):
        return present_stats.history(ctx.lang, Usage("history"))
    request = HistoryRequest(args[0] if args else None)
    outcome = app.history.history(ctx.caller, request)
    replies = present_stats.history(ctx.lang, outcome)
    if ctx.web is not None and isinstance(outcome, FinishedGames) and outcome.games and replies:
        replies[0] = replace(replies[0], text=replies[0].text + "\n" + t(ctx.lang, "history.review"),
                             buttons=[*replies[0].buttons, *review_rows(ctx, ctx.web, outcome.games)])
    return replies


def review_rows(ctx: Ctx, links: WebLinks, games: list[GameRecord]) -> list[list[Button]]:
    """A Review button for each game a /history lists (the chat's own games: its members may watch
    them), labelled with the game's number as its line names it, in rows every platform takes."""
    event = ctx.event
    buttons = []
    for g in games:
        url, web_app = links.review(g.id, event.platform, private_chat=event.chat_kind == "private",
                                    bot_username=event.bot_username)
        buttons.append(Button(t(ctx.lang, "button.review_game", id=g.id), "", url=url, web_app=web_app))
    return button_rows(buttons)


@command("pdn", {}, (GAME,), needs_game=True, ref_only=True)
def pdn(app: UseCases, ctx: Ctx, args: list[str]) -> list[Reply]:
    return presenters.replies(ctx.lang, app.play.pdn(ctx.caller, GameRef(game_meant(app, ctx, game_ref(args)[0]))))


@command("rules", _aliases(("reglas",), ("regole",)), (Arg("variant", ArgKind.VARIANT),))
def rules(app: UseCases, ctx: Ctx, args: list[str]) -> list[Reply]:
    variant = parse_variant(args) if args else None
    if args and variant is None:
        return present_stats.rules(ctx.lang, UnknownVariant(" ".join(args)))
    try:
        replied = replied_game(app, ctx)
    except StorageUnavailable:
        replied = None              # the rules are no stored data: answered while the database is away
    return present_stats.rules(ctx.lang, app.settings.rules(ctx.caller, variant, ctx.lang, replied))


@command("lang", _aliases(("idioma",), ("lingua",), ("language",)), (Arg("language", ArgKind.LANGUAGE, required=True),),
         admin_words=tuple(LANGUAGES), admin_args=True)
def lang(app: UseCases, ctx: Ctx, args: list[str]) -> list[Reply]:
    code = language_code(args[0]) if len(args) == 1 else None
    if code is None:
        return present_stats.settings(ctx.lang, Usage("lang"))
    return present_stats.settings(ctx.lang, app.settings.set_language(ctx.caller, code))


# Names people give a language besides those the catalogs use ("language.es" in es, it, en).
_EXTRA_LANGUAGE_NAMES = {"castellano": "es", "espanol": "es", "english": "en", "eng": "en", "ita": "it", "esp": "es"}


def language_code(word: str) -> str | None:
    """The language a word names: 'es', 'Español', 'spagnolo', 'English', 'italiano'... or None."""
    folded = fold(word.strip())
    if folded in LANGUAGES:
        return folded
    names = dict(_EXTRA_LANGUAGE_NAMES)
    for shown_in in LANGUAGES:
        for code in LANGUAGES:
            names[fold(t(shown_in, f"language.{code}"))] = code
    return names.get(folded)


@command("settings", _aliases(("ajustes",), ("impostazioni",)),
         (Arg("key", ArgKind.TEXT, choices=("variant", "lang")), Arg("value", ArgKind.TEXT)),
         admin_words=SETTINGS_VARIANT_WORDS + SETTINGS_LANG_WORDS)
def settings_(app: UseCases, ctx: Ctx, args: list[str]) -> list[Reply]:
    """Show or change the chat's language and default variant."""
    request = SettingsRequest()
    if len(args) >= 2 and args[0].lower() in SETTINGS_VARIANT_WORDS:
        variant = parse_variant(args[1:])
        if variant is None:
            return present_stats.settings(ctx.lang, UnknownVariant(" ".join(args[1:])))
        request = SettingsRequest(variant=variant)
    elif len(args) == 2 and args[0].lower() in SETTINGS_LANG_WORDS:
        return lang(app, ctx, args[1:])
    elif args:
        return present_stats.settings(ctx.lang, Usage("settings"))
    return present_stats.settings(ctx.lang, app.settings.settings(ctx.caller, request, ctx.lang))


@command("notify", _aliases(("avisos", "avisar"), ("avvisi", "avvisa")),
         (Arg("action", ArgKind.TEXT, choices=("on", "off")),))
def notify(app: UseCases, ctx: Ctx, args: list[str]) -> list[Reply]:
    word = args[0].lower() if args else None
    if len(args) > 1 or (word is not None and word not in DAILY_ON_WORDS + DAILY_OFF_WORDS):
        return present_stats.notify(ctx.lang, Usage("notify"))
    return present_stats.notify(ctx.lang, notify_request(app, ctx, None if word is None else word in DAILY_ON_WORDS))


def notify_request(app: UseCases, ctx: Ctx, on: bool | None) -> NotifyOutcome:
    """/notify as the use case stores it, with the link that starts the bot where the platform lets
    the bot write only to users who started it (Telegram), asked in a group."""
    outcome = app.settings.notify(ctx.caller, on)
    link = start_link(ctx, "notify") if ctx.event.chat_kind != "private" else None
    if isinstance(outcome, NotifySet) and outcome.on and link:
        return replace(outcome, start_link=link)
    return outcome


@command("web", _aliases(("tablero_web", "navegador"), ("tavola", "damiera_web"), ("browser",)), (GAME,),
         ref_only=True)
def web(app: UseCases, ctx: Ctx, args: list[str]) -> list[Reply]:
    """The web board of the user's game here (or of game #id): a player's own seat, to them alone."""
    ref = game_ref(args)[0]
    if ctx.web is None:
        return [Reply(t(ctx.lang, "weblink.off"), private=True)]
    found = app.games.resolve(ctx.caller, game_meant(app, ctx, ref), mine_only=False, finished_ok=ref is not None)
    if not isinstance(found, GameRecord):
        return presenters.replies(ctx.lang, found)
    return open_board(app, ctx, found.id, fresh=True)


def open_board(app: UseCases, ctx: Ctx, game_id: int, *, signed: bool = False, fresh: bool = False) -> list[Reply]:
    """Links to a game's web board for the one who asked: on Telegram the Mini App (a direct link in
    a group, a ``web_app`` button in a private chat), else, or without a Mini App, their own seat
    link (signed, theirs alone: only ever said privately) and the spectator link.  Someone who does
    not play the game gets a link only when asking in its chat or with its signature (``signed``);
    ``fresh`` (``/web``): a player's older seat links are revoked."""
    links = ctx.web
    event = ctx.event
    if links is None:
        return [Reply(t(ctx.lang, "weblink.off"), private=True)]
    row = app.games.runtime.storage.games.get(game_id)
    if row is None:
        return presenters.replies(ctx.lang, NoGame("unknown", game_id))
    plays = row.platform == event.platform and event.user_id in (row.white_id, row.black_id)
    in_chat = row.platform == event.platform and row.chat_id == event.chat_id
    if not (plays or in_chat or signed):
        return [Reply(t(ctx.lang, "weblink.ask_chat", id=game_id), private=True)]
    if plays and fresh and row.status == "active":
        # Whoever was given an earlier link of this seat (shared, forwarded) can no longer act.
        links.board.new_seat_generation(game_id, event.platform, event.user_id)
    label = t(ctx.lang, "weblink.open")
    if event.platform == "telegram":
        direct = links.mini_app(game_id, event.bot_username)
        if event.chat_kind == "private" and links.url.startswith("https://"):
            # The Mini App opened from a web_app button knows the user from Telegram's initData
            # (Telegram opens only https pages so).
            button = Button(label, "", url=links.web_app(game_id), web_app=True)
            return [Reply(t(ctx.lang, "weblink.telegram", id=game_id), buttons=[[button]])]
        if event.chat_kind == "private":
            # The user's own chat with the bot: their seat link may be said here.
            text = t(ctx.lang, "weblink.yours" if plays else "weblink.watch", id=game_id)
            return [Reply(text, buttons=[[Button(label, "", url=links.seat(game_id, event.platform, event.user_id))]])]
        if direct is not None:
            # Everyone in the group sees this button; the Mini App tells the board who opened it.
            return [Reply(t(ctx.lang, "weblink.telegram", id=game_id), buttons=[[Button(label, "", url=direct)]])]
        # No Mini App: the seat link goes to the private chat (a group has no message for one).
        text = t(ctx.lang, "weblink.yours" if plays else "weblink.watch", id=game_id)
        return [Reply(text, buttons=[[Button(label, "", url=links.seat(game_id, event.platform, event.user_id))]],
                      private=True, start_payload=f"w{game_id}", reaction=WEB_REACTION)]
    rows = []
    if plays:
        rows.append([Button(label, "", url=links.seat(game_id, event.platform, event.user_id))])
    rows.append([Button(t(ctx.lang, "weblink.spectate"), "", url=links.spectator(game_id))])
    text = t(ctx.lang, "weblink.yours" if plays else "weblink.watch", id=game_id)
    return [Reply(text, buttons=rows, private=True)]


# What a Telegram group sees of a /web whose link went to the member's private chat.
WEB_REACTION = "👌"


@command("storm", _aliases(("tormenta",), ("tempesta",)), (Arg("variant", ArgKind.VARIANT),))
def storm(app: UseCases, ctx: Ctx, args: list[str]) -> list[Reply]:
    """As many puzzles as possible in 3 minutes, on the web board: the run's link to the asker alone."""
    return present_storm.start(app, ctx, args, storm_links(ctx))


def storm_links(ctx: Ctx) -> WebLinks | None:
    """The web board's links while it runs with its storm page (None: /storm says it is off)."""
    return ctx.web if ctx.web is not None and ctx.web.board.storm is not None else None


@command("streak", _aliases(("racha",), ("serie",)),
         (Arg("action", ArgKind.TEXT, choices=("skip", "best")), Arg("variant", ArgKind.VARIANT)))
def streak(app: UseCases, ctx: Ctx, args: list[str]) -> list[Reply]:
    """Puzzles of rising difficulty until a wrong move; in a group the run is played privately (the
    group sees its link, and the chat's record message)."""
    request = present_runs.parse_streak(args)
    if request is None:
        return [Reply(t(ctx.lang, "streak.usage"))]
    runs = app.puzzle_runs
    variant = request.variant or app.games.default_variant(ctx.caller, ctx.lang)
    if request.action == "skip":
        result = runs.skip(ctx.caller)
    elif request.action == "best":
        result = runs.bests(ctx.caller, variant)
    else:
        result = runs.streak(ctx.caller, variant, named=request.variant is not None)
    if isinstance(result, StreakInPrivate):
        waiting = with_links(app, ctx, result.waiting)
        assert isinstance(waiting, PuzzleInPrivate)
        result = replace(result, waiting=waiting)
    return present_runs.present_streak(ctx.lang, result, present_puzzles.puzzle_board)


@button(ButtonKind.STREAK_SKIP, 1)
@button(ButtonKind.STREAK_SKIP_AT, 2)
def press_streak_skip(app: UseCases, ctx: Ctx, kind: ButtonKind, ids: list[int]) -> list[Reply]:
    """The Skip button of a streak's board (kp:<run>:<post>): one of a puzzle the run has left, or
    of the older form (ks:<run>, which does not say which puzzle), changes nothing."""
    post = ids[1] if kind is ButtonKind.STREAK_SKIP_AT else None
    result = app.puzzle_runs.skip(ctx.caller, ids[0], post)
    return present_runs.present_streak(ctx.lang, result, present_puzzles.puzzle_board)


@command("tournament", _aliases(("torneo",), ("torneo",), ("tourney",)),
         (Arg("action", ArgKind.TEXT, choices=tuple(tournaments.SUBCOMMANDS)), Arg("options", ArgKind.TEXT)),
         admin_words=tournaments.ADMIN_WORDS, place_words=tournaments.NEW_WORDS)
def tournament(app: UseCases, ctx: Ctx, args: list[str]) -> list[Reply]:
    return tournaments.handle(app, ctx, args)


@command("help", _aliases(("ayuda",), ("aiuto",), ("start",)), listed=False)
def help_(app: UseCases, ctx: Ctx, args: list[str]) -> list[Reply]:
    """The command list; ``/start p<post>`` (a link from a group) opens that puzzle here."""
    start = WEB_START.fullmatch(args[0]) if len(args) == 1 else None
    if start is not None and ctx.event.chat_kind == "private":
        links = ctx.web
        signed = links is not None and links.board.watch_signed(int(start[1]), start[2])
        return open_board(app, ctx, int(start[1]), signed=signed)
    storm_run = present_storm.START.fullmatch(args[0]) if len(args) == 1 else None
    if storm_run is not None and ctx.event.chat_kind == "private":
        return present_storm.open_run(app, ctx, int(storm_run[1]), storm_links(ctx))
    puzzle = present_puzzles.PUZZLE_START.fullmatch(args[0]) if len(args) == 1 else None
    if puzzle is not None:
        post_id = int(puzzle[1])
        proven = signer_of(app, ctx).genuine_pass(ctx.event.platform, post_id, ctx.event.user_id, puzzle[2] or "")
        opened = app.puzzles.open_puzzle(ctx.caller, post_id, proven)
        # A streak's puzzle opened from the group's link is shown as the streak's board.
        run_board = app.puzzle_runs.opened(ctx.caller, opened)
        if run_board is not None:
            return present_runs.present_streak(ctx.lang, run_board, present_puzzles.puzzle_board)
        # A puzzle from the user's own game says where it comes from where it is shown.
        return present_own.opened(ctx.lang, opened, app.own_puzzles.origin_of(opened))
    text = REGISTRY.help_text(ctx.lang)
    if ctx.event.bot_username:
        # Where commands can be addressed to one bot (Telegram), a group may hold others.
        text += "\n" + t(ctx.lang, "help.groups", bot=ctx.event.bot_username)
    return [Reply(text)]


@button(ButtonKind.ACCEPT, 1)
@button(ButtonKind.DECLINE, 1)
def press_challenge(app: UseCases, ctx: Ctx, kind: ButtonKind, ids: list[int]) -> list[Reply]:
    # From a button, a refusal is for the presser alone.
    request = ChallengeRef(ids[0])
    if kind is ButtonKind.ACCEPT:
        return presenters.replies(ctx.lang, app.challenges.accept(ctx.caller, request, quiet=True))
    return presenters.replies(ctx.lang, app.challenges.decline(ctx.caller, request, quiet=True))


@button(ButtonKind.PIECES, 2)
@button(ButtonKind.SELECT, 3)
@button(ButtonKind.DESTINATION, 4)
@button(ButtonKind.PATH, 3)
@button(ButtonKind.DRAW, 2)
@button(ButtonKind.RESIGN, 2)
def press_game(app: UseCases, ctx: Ctx, kind: ButtonKind, ids: list[int]) -> list[Reply]:
    """A button of a game's board or question: its numbers are the game, the ply it was drawn at,
    then the piece, the squares or the move it stands for."""
    play, by, game, ply = app.play, ctx.caller, ids[0], ids[1]
    outcome: GameAnswer | MoveOutcome
    if kind is ButtonKind.RESIGN:
        outcome = play.confirm_resign(by, game, ply)
    elif kind is ButtonKind.DRAW:
        outcome = play.accept_draw(by, game, ply)
    elif kind is ButtonKind.PIECES:
        outcome = play.show_pieces(by, game, ply)
    elif kind is ButtonKind.SELECT:
        outcome = play.pick_piece(by, game, ply, ids[2])
    elif kind is ButtonKind.DESTINATION:
        outcome = play.choose_destination(by, game, ply, ids[2], ids[3])
    else:
        outcome = play.choose_path(by, game, ply, ids[2])
    return presenters.replies(ctx.lang, outcome, via_button=True)


@button(ButtonKind.PUZZLE_SELECT, 3)
@button(ButtonKind.PUZZLE_DEST, 4)
@button(ButtonKind.PUZZLE_PATH, 3)
@button(ButtonKind.PUZZLE_BACK, 2)
@button(ButtonKind.PUZZLE_HINT, 2)
def press_puzzle(app: UseCases, ctx: Ctx, kind: ButtonKind, ids: list[int]) -> list[Reply]:
    """A button of a puzzle board: its numbers are the post, the step it was drawn at, then the
    piece, the squares or the move it stands for."""
    puzzles, by, post, step = app.puzzles, ctx.caller, ids[0], ids[1]
    if kind is ButtonKind.PUZZLE_HINT:
        outcome = puzzles.hint_button(by, post)
    elif kind is ButtonKind.PUZZLE_BACK:
        outcome = puzzles.show_position(by, post, step)
    elif kind is ButtonKind.PUZZLE_SELECT:
        outcome = puzzles.pick_piece(by, post, step, ids[2])
    elif kind is ButtonKind.PUZZLE_DEST:
        outcome = puzzles.choose_destination(by, post, step, ids[2], ids[3])
    else:
        outcome = puzzles.choose_path(by, post, step, ids[2])
    return present_puzzles.present(ctx.lang, outcome, via_button=True)


@button(ButtonKind.PUZZLE_GIVE_UP, 1)
@button(ButtonKind.PUZZLE_NEXT, 1)
def press_puzzle_more(app: UseCases, ctx: Ctx, kind: ButtonKind, ids: list[int]) -> list[Reply]:
    """Give up (zg:<post>) or the next puzzle (zn:<post>, a personal one of that variant)."""
    if kind is ButtonKind.PUZZLE_GIVE_UP:
        outcome = app.puzzles.give_up_post(ctx.caller, ids[0])
    else:
        outcome = app.puzzles.next_puzzle(ctx.caller, ids[0])
    return present_puzzles.present(ctx.lang, with_links(app, ctx, outcome))


@button(ButtonKind.REMATCH, 1)
def press_rematch(app: UseCases, ctx: Ctx, kind: ButtonKind, ids: list[int]) -> list[Reply]:
    outcome = app.history.rematch(ctx.caller, ids[0], ctx.lang)
    if isinstance(outcome, RematchRefused):
        return present_stats.rematch_refused(ctx.lang, outcome)
    return presenters.replies(ctx.lang, outcome.outcome)


@button(ButtonKind.TOURNAMENT_JOIN, 1)
def press_tournament_join(app: UseCases, ctx: Ctx, kind: ButtonKind, ids: list[int]) -> list[Reply]:
    return tournaments.press_join(app, ctx, ids[0])


def inline_accept(app: UseCases, ctx: Ctx, action: str) -> list[Reply]:
    """Accept on an inline offer: the game starts in the inline message's chat, which shows it in
    words (an inline message takes no new picture) in the offer's language."""
    # Whoever sees the message, its chat speaks the offer's language; an alert is the presser's own.
    own = pick_language(ctx.event.language) if ctx.event.language else ctx.lang
    parsed = parse_offer_action(ctx.event.platform, action)
    verified = signer_of(app, ctx).verify_offer(*parsed) if parsed is not None else None
    if verified is None:
        return [Reply(t(own, "inline.invalid"), private=True)]
    offer = verified.offer
    outcome = app.challenges.accept_offer(ctx.caller, verified)
    if isinstance(outcome, OfferTaken):
        return [Reply(t(own, "inline.taken", id=outcome.game_id), private=True)]
    if isinstance(outcome, GameStarted):
        shown = presenters.present_game_start(offer.lang, outcome)[0]
        return [Reply(shown.text, game_id=shown.game_id)]
    return presenters.replies(own, outcome)
