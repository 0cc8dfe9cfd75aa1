"""Presenters of the ratings, history, analysis and settings results: catalog text, charts,
tables and the analysis picture, in the chat's language.  They run after the use case returned,
outside its transaction."""

from __future__ import annotations

import datetime as dt

from bot.ai import MoveNote
from bot.ai.analyse import ALLOWS_WIN, MISSES_WIN, STILL_WINNING
from bot.i18n import t, tn
from bot.rules import Color, Position
from bot.service.chat import boards
from bot.service.chat.present_games import names
from bot.service.chat.wording import clip_line, day_words, variant_name
from bot.service.events import Reply
from bot.service.features.results_stats import (
    AnalysisOutcome,
    AnalysisRefused,
    AnalysisReport,
    ChatSettings,
    Ending,
    HeadToHead,
    HistoryOutcome,
    LanguageSet,
    NotifyOutcome,
    NotifyShown,
    PlayerStats,
    PuzzleRanking,
    Record,
    RematchRefused,
    RulesOf,
    SettingsOutcome,
    StatsOutcome,
    TopOutcome,
    UnknownPlayer,
    UnknownVariant,
    Usage,
    VariantRanking,
    VariantSet,
)
from bot.storage.records import GameRecord
from renderers.charts import render_rating_chart, render_table
from renderers.panels import render_analysis

# -- refusals --------------------------------------------------------------------------------------------


def refusal(lang: str, item: Usage | UnknownPlayer | UnknownVariant) -> Reply:
    if isinstance(item, Usage):
        return Reply(t(lang, f"{item.command}.usage"))
    if isinstance(item, UnknownPlayer):
        return Reply(t(lang, "stats.unknown", name=item.handle))
    return Reply(t(lang, "rules.unknown", word=item.words[:30]))


# -- /stats ----------------------------------------------------------------------------------------------


def _tally(lang: str, r: Record) -> dict[str, str]:
    """'1 game', '1 won', '0 drawn'... each with its plural form ('1 partita: 1 vinta, 0 patte')."""
    return {"games": tn(lang, "stats.games", r.games), "wins": tn(lang, "stats.wins", r.wins),
            "draws": tn(lang, "stats.draws", r.draws), "losses": tn(lang, "stats.losses", r.losses)}


def stats(lang: str, outcome: StatsOutcome) -> list[Reply]:
    """A player's stats with the chart of their ratings, or two players' games together."""
    if isinstance(outcome, Usage | UnknownPlayer):
        return [refusal(lang, outcome)]
    if isinstance(outcome, HeadToHead):
        lines = [t(lang, "stats.h2h_title", a=outcome.a, b=outcome.b)]
        for pool, r in outcome.pools:
            lines.append(t(lang, "stats.h2h_line", variant=variant_name(lang, pool.split(":")[0]), a=outcome.a,
                           b=outcome.b, **_tally(lang, r)))
        if not outcome.pools:
            lines.append(t(lang, "stats.h2h_none"))
        return [Reply("\n".join(lines))]
    return [player_stats(lang, outcome)]


def player_stats(lang: str, s: PlayerStats) -> Reply:
    lines = [t(lang, "stats.title", name=s.name)]
    for pool in s.pools:
        label = variant_name(lang, pool.variant)
        if pool.vs_bot:
            label = t(lang, "stats.vs_bot", variant=label)
        if pool.rating is None:
            lines.append(t(lang, "stats.line_unrated", pool=label, rating="-", deviation="",
                           **_tally(lang, pool.record)))
        else:
            deviation = f" ±{pool.deviation}" if pool.deviation is not None else ""
            lines.append(t(lang, "stats.line", pool=label, rating=pool.rating, deviation=deviation,
                           **_tally(lang, pool.record)))
    if s.puzzles is not None:
        p = s.puzzles
        lines.append(t(lang, "stats.puzzles", rating=p.rating, solved=tn(lang, "stats.solved", p.solved),
                       streak=p.streak, best=p.best))
    if len(lines) == 1:
        lines.append(t(lang, "stats.nothing"))
    series = [(variant_name(lang, variant), points) for variant, points in s.series]
    image = (render_rating_chart(series, lambda day: day_words(lang, day), title=t(lang, "stats.chart", name=s.name))
             if series else None)
    return Reply("\n".join(lines), image=image)


# -- /top ------------------------------------------------------------------------------------------------


def top(lang: str, outcome: TopOutcome | Usage) -> list[Reply]:
    """Each leaderboard as a text and the same as a table picture (an empty one: text only)."""
    if isinstance(outcome, Usage):
        return [refusal(lang, outcome)]
    if isinstance(outcome, PuzzleRanking):
        return [puzzle_ranking(lang, outcome)]
    return [variant_ranking(lang, board) for board in outcome]


def variant_ranking(lang: str, board: VariantRanking) -> Reply:
    title = t(lang, "top.global_title" if board.everywhere else "top.title", variant=variant_name(lang, board.variant))
    if not board.entries:
        return Reply(title + "\n" + t(lang, "top.empty", min=board.min_games))
    table = [[f"{i}. {e.name}", e.rating, str(e.games)] for i, e in enumerate(board.entries, 1)]

    def played(n: int) -> str:
        return t(lang, "top.game_one") if n == 1 else t(lang, "top.games", n=n)

    text = title + "\n" + "\n".join(f"{cells[0]} — {cells[1]} ({played(e.games)})"
                                    for cells, e in zip(table, board.entries, strict=True))
    headers = [t(lang, "top.player"), t(lang, "top.rating"), t(lang, "top.played")]
    return Reply(text, image=render_table(title, headers, table))


def puzzle_ranking(lang: str, board: PuzzleRanking) -> Reply:
    title = t(lang, "top.puzzles_title")
    if not board.entries:
        return Reply(title + "\n" + t(lang, "top.puzzles_empty"))
    table = [[f"{i}. {e.name}", f"{e.points:g}", str(e.solved), str(e.streak), e.rating]
             for i, e in enumerate(board.entries, 1)]
    text = title + "\n" + "\n".join(
        t(lang, "top.puzzles_line", rank_name=cells[0], points=cells[1], solved=cells[2], streak=cells[3],
          rating=cells[4]) for cells in table)
    headers = [t(lang, "top.player"), t(lang, "top.points"), t(lang, "top.solved"), t(lang, "top.streak"),
               t(lang, "top.rating")]
    return Reply(text, image=render_table(title, headers, table))


# -- /history --------------------------------------------------------------------------------------------


def history(lang: str, outcome: HistoryOutcome | Usage) -> list[Reply]:
    """The chat's last finished games, one line each, with how to see one of them."""
    if isinstance(outcome, Usage | UnknownPlayer):
        return [refusal(lang, outcome)]
    if not outcome.games:
        return [Reply(t(lang, "history.empty"))]
    lines = [t(lang, "history.header")] + [clip_line(history_line(lang, g)) for g in outcome.games]
    lines.append(t(lang, "history.outro"))
    return [Reply("\n".join(lines))]


def history_line(lang: str, g: GameRecord) -> str:
    white, black = names(lang, g)
    if g.winner is None:
        result = t(lang, "history.drawn")
    else:
        result = t(lang, "history.won", name=white if g.winner == Color.WHITE else black)
    when = g.finished_at if g.finished_at is not None else g.created_at
    day = dt.datetime.fromtimestamp(when, dt.UTC).date()
    return t(lang, "history.line", id=g.id, day=day_words(lang, day), variant=variant_name(lang, g.variant),
             white=white, black=black, result=result)


def rematch_refused(lang: str, refused: RematchRefused) -> list[Reply]:
    key = {"invalid": "button.invalid", "not_player": "game.not_player", "open": "rematch.open"}[refused.reason]
    values = {"id": refused.game_id} if refused.game_id is not None else {}
    return [Reply(t(lang, key, **values), private=True)]


# -- /analysis -------------------------------------------------------------------------------------------

COST_KEYS = {MISSES_WIN: "analysis.cost_misses_win", ALLOWS_WIN: "analysis.cost_allows_win",
             STILL_WINNING: "analysis.cost_still_winning"}


def cost_text(lang: str, note: MoveNote) -> str:
    """What a mistake cost, for the report: in words when a forced win is involved, else in men
    with the language's decimal separator."""
    if note.cost is not None:
        return t(lang, COST_KEYS[note.cost])
    return f"{note.loss / 100:.1f}".replace(".", t(lang, "analysis.decimal_point"))


def mistake_entry(lang: str, number: str, note: MoveNote) -> str:
    """One line of the report: the move, its mark, the better move and the cost."""
    move = f"{note.move}{note.mark}"
    if note.cost is not None:
        return t(lang, "analysis.mistake_words", number=number, move=move, best=str(note.best),
                 cost=cost_text(lang, note))
    return t(lang, "analysis.mistake", number=number, move=move, best=str(note.best), loss=cost_text(lang, note))


def _pieces(lang: str, men: int, kings: int) -> str:
    parts = []
    if kings:
        parts.append(t(lang, "ending.kings_one" if kings == 1 else "ending.kings_many", n=kings))
    if men:
        parts.append(t(lang, "ending.men_one" if men == 1 else "ending.men_many", n=men))
    return parts[0] if len(parts) == 1 else t(lang, "ending.and", a=parts[0], b=parts[1])


def _result(lang: str, result: tuple[str, int], mover: str, other: str, why: str | None) -> str:
    kind, plies = result
    if kind == "draw":
        text = t(lang, "ending.draw")
    else:
        text = t(lang, "ending.win", name=mover if kind == "win" else other, plies=plies)
    return t(lang, "ending.because", result=text, why=t(lang, why)) if why else text


def ending_entry(lang: str, e: Ending, white: str, black: str) -> str:
    """One line on a known ending: where the game entered it (what it is, with the classic reason
    when there is one), or a move that changed its result."""
    table = e.note.table
    assert table is not None
    mover, other = (white, black) if e.by_white else (black, white)
    move = f"{e.note.move}{e.note.mark}"
    lines = []
    if e.entered:
        um, uk, tm, tk = table.material
        material = t(lang, "ending.material", mover=mover, mine=_pieces(lang, um, uk), other=other,
                     theirs=_pieces(lang, tm, tk))
        lines.append(t(lang, "analysis.ending_entered", number=e.number, material=material,
                       result=_result(lang, table.before, mover, other, table.why)))
    if table.changed:
        lines.append(t(lang, "analysis.ending_changed", number=e.number, move=move,
                       before=_result(lang, table.before, mover, other, table.why),
                       after=_result(lang, table.after, mover, other, table.why_after)))
    return " ".join(lines)


def analysis(lang: str, outcome: AnalysisOutcome | Usage) -> list[Reply]:
    """An analysis started (the report follows through the outbox), or why not."""
    if isinstance(outcome, Usage):
        return [Reply(t(lang, "error.ref_only", command=outcome.command))]
    if isinstance(outcome, AnalysisRefused):
        if outcome.reason == "unknown":
            return [Reply(t(lang, "game.unknown", id=outcome.game_id))]
        values = {"id": outcome.game_id} if outcome.game_id is not None else {}
        return [Reply(t(lang, f"analysis.{outcome.reason}", **values))]
    return [Reply(t(lang, "analysis.started", id=outcome.game_id, seconds=outcome.seconds))]


def analysis_failed(lang: str, game_id: int) -> Reply:
    return Reply(t(lang, "analysis.failed", id=game_id))


def analysis_report(lang: str, report: AnalysisReport) -> Reply:
    """The report: each side's worst mistakes (or that it made none), the picture of their
    boards with the better move as an arrow over the evaluation graph, and the annotated PDN."""
    row = report.game
    white, black = names(lang, row)
    lines = [t(lang, "analysis.title", id=row.id, white=white, black=black)]
    views, captions = [], []
    for side, mistakes in report.mistakes:
        name = white if side == Color.WHITE else black
        if not mistakes:
            lines.append(t(lang, "analysis.clean", name=name))
            continue
        lines.append(t(lang, "analysis.side", name=name))
        for m in mistakes:
            entry = mistake_entry(lang, m.number, m.note)
            lines.append("• " + entry)
            views.append(boards.board_view(m.before, m.note.move.path, m.note.move.captured,
                                           routes=[m.note.best.path], flipped=False))
            captions.append(entry)
    if report.endings:
        lines.append(t(lang, "analysis.endings"))
        lines.extend("• " + ending_entry(lang, e, white, black) for e in report.endings)
    lines.append(t(lang, "analysis.legend_arrow" if views else "analysis.legend_graph"))
    # The graph numbers its moves as the report does: move 1 is Black's in a game Black began.
    black_first = bool(row.start_fen) and not Position.from_fen(row.variant, row.start_fen or "").white
    image = render_analysis(views, captions, report.evaluations, title=lines[0],
                            graph_title=t(lang, "analysis.graph_title"),
                            black_first=black_first) if report.evaluations else None
    return Reply("\n".join(lines), image=image, document=(f"game-{row.id}-analysis.pdn", report.pdn.encode("utf-8")))


# -- settings --------------------------------------------------------------------------------------------


def rules(lang: str, outcome: RulesOf | UnknownVariant) -> list[Reply]:
    if isinstance(outcome, UnknownVariant):
        return [refusal(lang, outcome)]
    return [Reply(t(lang, f"rules.{outcome.variant}"))]


def settings(lang: str, outcome: SettingsOutcome | Usage | UnknownVariant) -> list[Reply]:
    """The chat's settings, or what was changed (a new language answers in that language)."""
    if isinstance(outcome, Usage | UnknownVariant):
        return [refusal(lang, outcome)]
    if isinstance(outcome, LanguageSet):
        return [Reply(t(outcome.lang, "lang.set"))]
    if isinstance(outcome, VariantSet):
        return [Reply(t(lang, "settings.variant_set", variant=variant_name(lang, outcome.variant)))]
    assert isinstance(outcome, ChatSettings)
    return [Reply(t(lang, "settings.show", lang=t(lang, f"language.{lang}"),
                    variant=variant_name(lang, outcome.variant)))]


def notify(lang: str, outcome: NotifyOutcome | Usage) -> list[Reply]:
    """/notify's answer, in the user's private chat where the platform has one."""
    if isinstance(outcome, Usage):
        return [Reply(t(lang, "notify.usage"), private=True)]
    if isinstance(outcome, NotifyShown):
        return [Reply(t(lang, "notify.show_private" if outcome.private else "notify.show_group"), private=True)]
    if not outcome.on:
        return [Reply(t(lang, "notify.off"), private=True)]
    text = t(lang, "notify.on")
    if outcome.start_link:
        text += "\n" + t(lang, "notify.start_me", link=outcome.start_link)
    return [Reply(text, private=True)]
