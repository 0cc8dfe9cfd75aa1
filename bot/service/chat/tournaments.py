"""The /tournament family in the chat: reading its words, calling the tournaments' use case, and
wording and drawing what it returns (the chat's own answers and the outbox's tournament notices).

The command itself is declared with the others (``bot.service.chat.layer``: ``@command("tournament")`` and
the Join button); everything it needs to say is here, in the chat's language, from the catalogs.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from string import Formatter
from typing import TYPE_CHECKING

from bot.i18n import STANDING_VALUES, catalog, t, tn
from bot.service.chat.commands import (
    MAX_MOVE_SECONDS,
    MIN_MOVE_SECONDS,
    VARIANT_FILLERS,
    VARIANT_WORDS,
    BadArgument,
    parse_duration,
)
from bot.service.chat.registry import PLACE_KINDS, ButtonKind, action, fold
from bot.service.chat.wording import day_words, duration, short_list, variant_name
from bot.service.events import Button, Reply
from bot.service.features.results_tournaments import (
    DEFAULT_ROUND_SECONDS,
    LAPSE_SECONDS,
    Cancelled,
    Joined,
    Left,
    NewTournamentArgs,
    NoTournament,
    PairingsShown,
    PairingView,
    RoundsSet,
    RoundView,
    StandingsView,
    Started,
    TournamentCreated,
    TournamentHistory,
    TournamentInfo,
    TournamentRefused,
    TournamentShown,
)
from bot.service.features.tournaments import MAX_ROUND_SECONDS, MAX_ROUNDS, MIN_ROUND_SECONDS, Tournaments
from bot.service.notifications import (
    TournamentBye,
    TournamentFinished,
    TournamentGameReady,
    TournamentNotice,
    TournamentRoundEnded,
    TournamentRoundPaired,
)
from renderers import StandingRow, render_standings
from renderers import StandingsView as Picture
from renderers.standings import points_text

if TYPE_CHECKING:
    from bot.service.chat.context import Ctx
    from bot.service.compose import UseCases

# The subcommands, by what they do: every word (folded) that asks for it, in the three languages.
SUBCOMMANDS: Mapping[str, tuple[str, ...]] = {
    "new": ("new", "create", "nuevo", "nueva", "crear", "nuovo", "nuova", "crea"),
    "join": ("join", "enter", "unirse", "unirme", "apuntarse", "apuntarme", "entrar", "entra", "partecipa",
             "iscriviti", "iscrivimi"),
    "leave": ("leave", "withdraw", "salir", "retirarse", "retirarme", "dejar", "esci", "ritirati", "lascia"),
    "start": ("start", "begin", "empezar", "comenzar", "iniciar", "inizia", "avvia"),
    "standings": ("standings", "table", "ranking", "clasificacion", "tabla", "classifica"),
    "pairings": ("pairings", "round", "emparejamientos", "cruces", "ronda", "abbinamenti", "turno"),
    "history": ("history", "past", "historial", "storico", "cronologia"),
    "cancel": ("cancel", "cancelar", "anular", "annulla", "cancella"),
    "rounds": ("rounds", "rondas", "turni"),
}
_SUB_OF = {word: sub for sub, words in SUBCOMMANDS.items() for word in words}
# The words of /tournament new and start (the registry folds what is typed as ``subcommand`` does).
NEW_WORDS = SUBCOMMANDS["new"]
ADMIN_WORDS = NEW_WORDS + SUBCOMMANDS["start"] + SUBCOMMANDS["cancel"] + SUBCOMMANDS["rounds"]

# A double round robin ("/tournament new roundrobin double"): the core plays it twice.
DOUBLE_WORDS = {"double", "doble", "doppio", "doppia", "ida-vuelta", "andata-ritorno", "x2"}
# A bye scoring ½ instead of 1 ("halfbye", "mediodescanso", "mezzoriposo"; also "bye½", "bye 1/2").
HALF_BYE_WORDS = {"halfbye", "half-bye", "bye½", "bye1/2", "bye0.5", "mediobye", "mediodescanso", "descanso½",
                  "descanso1/2", "mezzobye", "mezzoriposo", "riposo½", "riposo1/2"}
BYE_WORDS = {"bye", "descanso", "riposo"}
BYE_POINTS = {"½": 0.5, "1/2": 0.5, "0.5": 0.5, "0,5": 0.5, "1": 1.0}
# The word before a round's deadline ("deadline 3d", "plazo 3d", "scadenza 3d").
DEADLINE_WORDS = {"deadline", "round", "plazo", "limite", "scadenza", "ronda", "turno"}
MAX_LISTED_NAMES = 20


# -- reading the words ----------------------------------------------------------------------------------


def subcommand(args: Sequence[str]) -> tuple[str | None, list[str]]:
    """('join', rest) for '/tournament unirse ...'; (None, []) alone; ('?', args) for a word we do not know."""
    if not args:
        return None, []
    sub = _SUB_OF.get(fold(args[0]))
    return (sub, list(args[1:])) if sub is not None else ("?", list(args))


_FORMAT_OF = {fold(word): kind for kind, words in PLACE_KINDS.items() for word in words}


def parse_new_tournament(args: Sequence[str]) -> NewTournamentArgs:
    """/tournament new swiss|roundrobin [variant] [rounds] [move-time] [deadline <time>] [double] [halfbye], in
    any order; the variant and the move time read as /new reads them.  Raises ``BadArgument`` with
    the catalog key of what is wrong (nothing is created)."""
    typed: dict[str, str] = {}
    value: dict[str, object] = {}

    def choose(what: str, word: str, val: object, key: str) -> None:
        if what in value and value[what] != val:
            raise BadArgument(key, first=typed[what], second=word[:30])
        typed.setdefault(what, word[:30])
        value[what] = val

    words = [w for w in args if w]
    folded = [fold(w) for w in words]
    i = 0
    while i < len(words):
        word, low = words[i], folded[i]
        near = folded[max(0, i - 1):i] + folded[i + 1:i + 2]
        if low in VARIANT_FILLERS and any(w in VARIANT_WORDS for w in near):
            pass                                          # 'damas españolas': part of the variant's name
        elif low in VARIANT_WORDS:
            # Before the formats: 'italiana' names the variant ('all'italiana' the round robin).
            choose("variant", word, VARIANT_WORDS[low], "new.two_variants")
        elif low in _FORMAT_OF:
            choose("format", word, _FORMAT_OF[low], "tournament.two_formats")
        elif low in DOUBLE_WORDS:
            value["cycles"] = 2
        elif low in HALF_BYE_WORDS:
            choose("bye", word, 0.5, "tournament.two_byes")
        elif low in BYE_WORDS and i + 1 < len(words) and folded[i + 1] in BYE_POINTS:
            choose("bye", f"{word} {words[i + 1]}"[:30], BYE_POINTS[folded[i + 1]], "tournament.two_byes")
            i += 1
        elif low in DEADLINE_WORDS and i + 1 < len(words) and parse_duration(words[i + 1]) is not None:
            seconds = parse_duration(words[i + 1])
            assert seconds is not None
            if not MIN_ROUND_SECONDS <= seconds <= MAX_ROUND_SECONDS:
                raise BadArgument("tournament.refused.bad_round_time", word=words[i + 1][:20])
            choose("round", words[i + 1], seconds, "tournament.two_deadlines")
            i += 1
        elif re.fullmatch(r"[0-9]{1,6}", word):
            if not 1 <= int(word) <= MAX_ROUNDS:
                raise BadArgument("tournament.refused.bad_rounds", most=MAX_ROUNDS)
            choose("rounds", word, int(word), "tournament.two_rounds")
        elif (seconds := parse_duration(word)) is not None:
            if not MIN_MOVE_SECONDS <= seconds <= MAX_MOVE_SECONDS:
                raise BadArgument("new.bad_time", word=word[:20])
            choose("times", word, seconds, "new.two_times")
        else:
            raise BadArgument("new.bad_arg", word=word[:30])
        i += 1
    kind = value.get("format")
    if kind is None:
        raise BadArgument("tournament.need_format")
    rounds = value.get("rounds")
    if kind == "roundrobin" and rounds is not None:
        raise BadArgument("tournament.rounds_roundrobin", word=typed["rounds"])
    if kind == "swiss" and rounds is None:
        raise BadArgument("tournament.need_rounds", most=MAX_ROUNDS)
    if kind == "swiss" and "cycles" in value:
        raise BadArgument("new.bad_arg", word=next(w for w, f in zip(words, folded, strict=True) if f in DOUBLE_WORDS))
    move = int(str(value.get("times", 24 * 3600)))
    round_seconds = int(str(value.get("round", max(DEFAULT_ROUND_SECONDS, move))))
    variant = value.get("variant")
    return NewTournamentArgs(format=str(kind), variant=str(variant) if variant is not None else None,
                             rounds=int(str(rounds)) if rounds is not None else None, move_seconds=move,
                             round_seconds=round_seconds, cycles=int(str(value.get("cycles", 1))),
                             bye_points=float(str(value.get("bye", 1.0))))


# -- the command ----------------------------------------------------------------------------------------


def handle(app: UseCases, ctx: Ctx, args: list[str]) -> list[Reply]:
    """/tournament [new ... | join | leave | start | standings | pairings [round] | history | cancel
    | rounds N]."""
    sub, rest = subcommand(args)
    lang, caller, uses = ctx.lang, ctx.caller, app.tournaments
    if sub is None:
        return present(lang, uses.current(caller.where), ctx.now, web_link(ctx))
    if sub == "new":
        try:
            request = parse_new_tournament(rest)
        except BadArgument as err:
            return [Reply(t(lang, err.key, **err.values) + "\n" + t(lang, "tournament.new_usage"))]
        return present(lang, uses.create(caller, request, lang), ctx.now, web_link(ctx))
    if sub == "rounds":
        if len(rest) != 1 or not re.fullmatch(r"[0-9]{1,6}", rest[0]):
            return [Reply(t(lang, "tournament.usage"))]
        return present(lang, uses.set_rounds(caller, int(rest[0])), ctx.now, web_link(ctx))
    if sub == "pairings":
        if len(rest) > 1 or (rest and not re.fullmatch(r"#?[0-9]{1,4}", rest[0])):
            return [Reply(t(lang, "tournament.usage"))]
        number = int(rest[0].lstrip("#")) if rest else None
        return present(lang, uses.pairings(caller.where, number), ctx.now, web_link(ctx))
    if rest or sub == "?":
        return [Reply(t(lang, "tournament.usage"))]
    if sub == "join":
        return present(lang, uses.join(caller), ctx.now, web_link(ctx))
    if sub == "leave":
        return present(lang, uses.leave(caller), ctx.now, web_link(ctx))
    if sub == "start":
        return present(lang, uses.start(caller), ctx.now, web_link(ctx))
    if sub == "cancel":
        return present(lang, uses.cancel(caller), ctx.now)
    if sub == "standings":
        return present(lang, uses.standings(caller.where), ctx.now, web_link(ctx))
    return present(lang, uses.history(caller.where), ctx.now, web_link(ctx))


def press_join(app: UseCases, ctx: Ctx, tournament_id: int) -> list[Reply]:
    """The Join button of tournament #id: joins it while it is the chat's open one (a button left on
    an older tournament's post joins nothing); a refusal is for the presser alone."""
    current = app.tournaments.current(ctx.caller.where)
    if not isinstance(current, TournamentShown) or current.tournament.id != tournament_id:
        return [Reply(refusal_text(ctx.lang, TournamentRefused("not_registering")), private=True)]
    outcome = app.tournaments.join(ctx.caller)
    replies = present(ctx.lang, outcome, ctx.now)
    if isinstance(outcome, TournamentRefused | NoTournament):
        replies = [replace(r, private=True) for r in replies]
    return replies


def rule_text(lang: str) -> str:
    """The deadline, forfeit and adjudication rule (said in /help and the README)."""
    return t(lang, "help.tournament.more")


def join_button(lang: str, tournament_id: int) -> Button:
    return Button(t(lang, "tournament.join_button"), action(ButtonKind.TOURNAMENT_JOIN, tournament_id),
                  command="/tournament join", style="go")


# -- presenting --------------------------------------------------------------------------------------------

Outcome = (TournamentCreated | Joined | Left | Started | TournamentShown | PairingsShown | TournamentHistory
           | NoTournament | TournamentRefused | StandingsView | Cancelled | RoundsSet)


def web_link(ctx: Ctx) -> Callable[[int], str] | None:
    """The link to a tournament's web page while the web board is served (else None)."""
    return ctx.web.tournament if ctx.web is not None else None


def present(lang: str, outcome: Outcome, now: float, link: Callable[[int], str] | None = None) -> list[Reply]:
    """What the use case returned, as the chat's replies; what shows a tournament's standing or
    rounds carries ``link`` to its web page when given."""
    replies = _present(lang, outcome, now)
    shown = outcome.tournament if isinstance(outcome, TournamentShown | PairingsShown | StandingsView | Started) \
        else None
    if link is not None and shown is not None and replies:
        replies[0].buttons.append([Button(t(lang, "tournament.web_button"), "", url=link(shown.id))])
    return replies


def _present(lang: str, outcome: Outcome, now: float) -> list[Reply]:
    if isinstance(outcome, TournamentRefused):
        return [Reply(refusal_text(lang, outcome))]
    if isinstance(outcome, NoTournament):
        return [Reply(t(lang, "tournament.none_history" if outcome.history else "tournament.none"))]
    if isinstance(outcome, TournamentCreated):
        info = outcome.tournament
        text = t(lang, "tournament.created", id=info.id, format=format_name(lang, info),
                 variant=variant_name(lang, info.variant), rounds=rounds_text(lang, info),
                 time=duration(lang, info.move_seconds), round_time=duration(lang, info.round_seconds),
                 days=LAPSE_SECONDS // 86400, bye=points_text(info.bye_points))
        return [Reply(text, buttons=[[join_button(lang, info.id)]])]
    if isinstance(outcome, Joined):
        info = outcome.tournament
        names = [p.name for p in info.players]
        return [Reply(t(lang, "tournament.joined", name=outcome.name, id=info.id,
                        players=tn(lang, "tournament.players", len(names)), names=listed_names(lang, names)))]
    if isinstance(outcome, Left):
        info = outcome.tournament
        if outcome.removed:
            return [Reply(t(lang, "tournament.left", name=outcome.name, id=info.id))]
        if outcome.forfeited:
            return [Reply(tn(lang, "tournament.withdrew_games", len(outcome.forfeited), name=outcome.name, id=info.id,
                             games=_games(outcome.forfeited)))]
        return [Reply(t(lang, "tournament.withdrew", name=outcome.name, id=info.id))]
    if isinstance(outcome, Started):
        info = outcome.tournament
        players = tn(lang, "tournament.players", len(info.players))
        return [Reply(t(lang, "tournament.started", id=info.id, players=players, rounds=rounds_text(lang, info)))]
    if isinstance(outcome, TournamentShown):
        replies = [Reply(show_text(lang, outcome.tournament))]
        if outcome.round is not None and outcome.tournament.status == "running":
            replies.append(Reply(pairings_text(lang, outcome.tournament, outcome.round, now)))
        return replies
    if isinstance(outcome, PairingsShown):
        return [Reply(pairings_text(lang, outcome.tournament, outcome.round, now))]
    if isinstance(outcome, StandingsView):
        return [standings_reply(lang, outcome)]
    if isinstance(outcome, RoundsSet):
        info = outcome.tournament
        return [Reply(t(lang, "tournament.rounds_set", id=info.id, rounds=rounds_text(lang, info)))]
    if isinstance(outcome, Cancelled):
        info = outcome.tournament
        if not outcome.games:
            return [Reply(t(lang, "tournament.cancelled", id=info.id))]
        return [Reply(tn(lang, "tournament.cancelled_games", len(outcome.games), id=info.id,
                         games=_games(outcome.games)))]
    return [Reply(history_text(lang, outcome))]


def refusal_text(lang: str, refused: TournamentRefused) -> str:
    """Every refusal code its sentence (``tournament.refused.<code>``); a code without one (a new
    one of the core's) still says that nothing was done.  The use case gives the values its
    sentence names."""
    values = dict(refused.values)
    key = f"tournament.refused.{refused.code}"
    if key not in catalog("en"):
        key = "tournament.refused.other"
    # The placeholders of the message as written (the standing ones, such as the list of variants,
    # are filled in by t() itself).
    fields = {name for _lit, name, _spec, _conv in Formatter().parse(catalog("en")[key])
              if name and name not in STANDING_VALUES}
    filled = {name: values.get(name, "?") for name in fields}
    return t(lang, key, **filled)


def format_name(lang: str, info: TournamentInfo) -> str:
    if info.format == "roundrobin" and info.cycles == 2:
        return t(lang, "tournament.format.roundrobin2")
    return t(lang, f"tournament.format.{info.format}")


def rounds_text(lang: str, info: TournamentInfo) -> str:
    if info.rounds_total is None:
        return t(lang, "tournament.rounds_unknown")
    return tn(lang, "tournament.rounds", info.rounds_total)


def listed_names(lang: str, names: Sequence[str]) -> str:
    if not names:
        return t(lang, "tournament.nobody")
    shown = ", ".join(names[:MAX_LISTED_NAMES])
    return shown + (f", … (+{len(names) - MAX_LISTED_NAMES})" if len(names) > MAX_LISTED_NAMES else "")


def show_text(lang: str, info: TournamentInfo) -> str:
    """/tournament alone: what the chat's tournament is and where it stands."""
    common = {"id": info.id, "format": format_name(lang, info), "variant": variant_name(lang, info.variant)}
    if info.status == "registering":
        names = [p.name for p in info.players]
        return t(lang, "tournament.show_registering", rounds=rounds_text(lang, info),
                 time=duration(lang, info.move_seconds), count=len(names), names=listed_names(lang, names),
                 players=tn(lang, "tournament.players", len(names)), bye=points_text(info.bye_points), **common)
    if info.status == "finished":
        return t(lang, "tournament.show_finished", name=info.winner_name or "?", **common)
    return t(lang, "tournament.show_running", count=len(info.players), round=info.round,
             players=tn(lang, "tournament.players", len(info.players)),
             total=info.rounds_total if info.rounds_total is not None else "?", **common)


def result_mark(result: str) -> str:
    """A board's result as tables print it: 1-0, 0-1, ½-½, +/-, -/+."""
    return {"1/2-1/2": "½-½", "+-": "+/-", "-+": "-/+"}.get(result, result)


def board_line(lang: str, p: PairingView, bye_points: float) -> str:
    if p.is_bye:
        return t(lang, "tournament.board_bye", board=p.board, name=p.white_name, points=points_text(bye_points))
    black = p.black_name or "?"
    if p.result is None:
        return t(lang, "tournament.board_game", board=p.board, white=p.white_name, black=black, game=p.game_id)
    if p.game_id is None:
        return t(lang, "tournament.board_forfeit", board=p.board, white=p.white_name, black=black,
                 result=result_mark(p.result))
    return t(lang, "tournament.board_result", board=p.board, white=p.white_name, black=black,
             result=result_mark(p.result), game=p.game_id)


def round_title(lang: str, info: TournamentInfo, number: int) -> str:
    if info.rounds_total is None:
        return t(lang, "tournament.round_title_open", id=info.id, round=number)
    return t(lang, "tournament.round_title", id=info.id, round=number, total=info.rounds_total)


def pairings_text(lang: str, info: TournamentInfo, rnd: RoundView, now: float) -> str:
    """A round's post: its title, every board with its game number (or result, or bye), and the
    deadline while the round runs."""
    lines = [round_title(lang, info, rnd.number)]
    lines += [board_line(lang, p, info.bye_points) for p in rnd.pairings]
    if not rnd.complete and rnd.deadline is not None:
        left = rnd.deadline - now
        lines.append(t(lang, "tournament.deadline", left=duration(lang, left)) if left > 0
                     else t(lang, "tournament.deadline_over"))
    return "\n".join(lines)


def tiebreak_label(lang: str, short: str) -> str:
    return t(lang, f"tournament.tb.{short}") if f"tournament.tb.{short}" in catalog("en") else short


def _number(value: float) -> str:
    return points_text(value) if abs(value * 2 - round(value * 2)) < 1e-9 else f"{value:.2f}"


def standings_title(lang: str, view: StandingsView) -> str:
    info = view.tournament
    if view.final:
        return t(lang, "tournament.standings_final", id=info.id)
    if view.through == 0:
        return t(lang, "tournament.standings_none", id=info.id)
    return t(lang, "tournament.standings_title", id=info.id, round=view.through)


def standings_text(lang: str, view: StandingsView) -> str:
    """The standings in words: one line a player (rank, name, points, tie-breaks), then what the
    tie-breaks' short names mean."""
    lines = [standings_title(lang, view)]
    if view.through == 0 and not view.final:
        return lines[0]                   # nothing to rank before a round is over
    for row in view.rows:
        tbs = " ".join(f"{tiebreak_label(lang, name)} {_number(v)}" for name, v in row.tiebreaks)
        name = row.name + (" " + t(lang, "tournament.withdrawn") if row.withdrawn else "")
        lines.append(t(lang, "tournament.standings_line", rank=row.rank, name=name, points=points_text(row.points),
                       tiebreaks=tbs).replace(" ()", ""))
    shorts = [name for name, _v in view.rows[0].tiebreaks] if view.rows else []
    legend = [t(lang, f"tournament.tb_name.{s}") for s in shorts if f"tournament.tb_name.{s}" in catalog("en")]
    if legend:
        lines.append(t(lang, "tournament.tb_legend", legend=", ".join(legend)))
    return "\n".join(lines)


def standings_picture(lang: str, view: StandingsView) -> Picture:
    """The picture's plain data: the cross table's cells as the renderer takes them ('' unplayed)."""
    info = view.tournament
    rows = []
    for i, row in enumerate(view.rows):
        cross: tuple[str, ...] = ()
        if view.cross is not None and i < len(view.cross):
            cross = tuple("" if c is None or c == "x" else c.replace(" ", "") for c in view.cross[i])
        rows.append(StandingRow(rank=row.rank, name=row.name, points=row.points,
                                tiebreaks=tuple(v for _name, v in row.tiebreaks), withdrawn=row.withdrawn, cross=cross))
    labels = tuple(tiebreak_label(lang, name) for name, _v in view.rows[0].tiebreaks) if view.rows else ()
    subtitle = t(lang, "tournament.subtitle", format=format_name(lang, info), variant=variant_name(lang, info.variant))
    return Picture(title=standings_title(lang, view), rank_label=t(lang, "tournament.col.rank"),
                   name_label=t(lang, "tournament.col.name"), points_label=t(lang, "tournament.col.points"),
                   tiebreak_labels=labels, rows=tuple(rows), subtitle=subtitle[:1].upper() + subtitle[1:])


def standings_reply(lang: str, view: StandingsView) -> Reply:
    """Standings as a picture with the same in words (before any round is over: words only)."""
    text = standings_text(lang, view)
    if not view.rows or view.through == 0:
        return Reply(text)
    return Reply(text, image=render_standings(standings_picture(lang, view)))


def history_text(lang: str, history: TournamentHistory) -> str:
    if not history.tournaments:
        return t(lang, "tournament.history_none")
    lines = []
    for info in history.tournaments:
        when = info.finished_at if info.finished_at is not None else info.created_at
        day = dt.datetime.fromtimestamp(when, dt.UTC).date()
        key = "tournament.history_line_cancelled" if info.status == "cancelled" else "tournament.history_line"
        lines.append(t(lang, key, id=info.id, format=format_name(lang, info),
                       variant=variant_name(lang, info.variant),
                       players=tn(lang, "tournament.players", len(info.players)),
                       count=len(info.players), date=day_words(lang, day), name=info.winner_name or "?"))
    return t(lang, "tournament.history_title") + "\n" + short_list(lang, lines)



# -- the outbox's tournament notices ------------------------------------------------------------------------


def deadline_at(lang: str, deadline: float) -> str:
    """A round's deadline as a date and time (a notice is worded whenever it is delivered, so it
    names the moment rather than the time left)."""
    when = dt.datetime.fromtimestamp(deadline, dt.UTC)
    return t(lang, "tournament.deadline_at", date=day_words(lang, when.date()), time=when.strftime("%H:%M"))


def _games(ids: Sequence[int]) -> str:
    return ", ".join(f"#{g}" for g in ids)


def present_notice(notice: TournamentNotice, uses: Tournaments) -> Reply:
    """One tournament notice as the message it is delivered as: the pairings post, a player's
    ping, the standings after a round (picture and words), the winner with the final standings."""
    lang = notice.lang
    if isinstance(notice, TournamentRoundPaired):
        shown = uses.pairings_of(notice.tournament_id, notice.round)
        if shown is None:
            raise ValueError(f"tournament {notice.tournament_id} has no round {notice.round}")
        lines = [round_title(lang, shown.tournament, notice.round)]
        lines += [board_line(lang, p, shown.tournament.bye_points) for p in shown.round.pairings]
        lines.append(deadline_at(lang, notice.deadline))
        return Reply("\n".join(lines))
    if isinstance(notice, TournamentGameReady):
        info = uses.view(notice.tournament_id)
        mention = notice.mention
        text = t(lang, "tournament.ping", mention=mention.name, id=notice.tournament_id, round=notice.round,
                 game=notice.game_id, opponent=notice.opponent, color=t(lang, f"color.{notice.color}"),
                 time=duration(lang, info.move_seconds if info is not None else 24 * 3600))
        return Reply(text, game_id=notice.game_id, mentions=[mention])
    if isinstance(notice, TournamentBye):
        text = t(lang, "tournament.bye_ping", mention=notice.mention.name, id=notice.tournament_id,
                 round=notice.round, points=points_text(notice.points))
        return Reply(text, mentions=[notice.mention])
    if isinstance(notice, TournamentRoundEnded):
        lines = [t(lang, "tournament.round_over", round=notice.round, id=notice.tournament_id)]
        if notice.forfeited:
            lines.append(t(lang, "tournament.forfeited_games", games=_games(notice.forfeited)))
        if notice.adjudicated:
            # Each adjudicated game with the result the rule gave it.
            shown = uses.pairings_of(notice.tournament_id, notice.round)
            results = {p.game_id: p.result for p in shown.round.pairings} if shown is not None else {}
            games = ", ".join(f"#{g} {result_mark(r)}" if (r := results.get(g)) else f"#{g}"
                              for g in notice.adjudicated)
            lines.append(t(lang, "tournament.adjudicated_games", games=games))
        view = uses.standings_after(notice.tournament_id, notice.round)
        return _with_standings(lang, "\n".join(lines), view)
    if isinstance(notice, TournamentFinished):
        text = t(lang, "tournament.winner", id=notice.tournament_id, name=notice.winner_name,
                 points=points_text(notice.points))
        return _with_standings(lang, text, uses.standings_after(notice.tournament_id))
    raise ValueError(f"no presenter for {type(notice).__name__}")


def _with_standings(lang: str, text: str, view: StandingsView | None) -> Reply:
    if view is None or not view.rows:
        return Reply(text)
    shown = standings_reply(lang, view)
    return Reply(text + "\n\n" + shown.text, image=shown.image)
