"""The chat side of the puzzles: the words of /daily, /puzzle and /hint read into typed requests,
and the puzzle use cases' results (``bot.service.features.results_puzzles``) turned into replies
(catalog text, boards, buttons).  Presenters run after the use case returned, outside its write
transaction, so a board is never drawn while the database's write lock is held."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import replace
from functools import cache
from typing import Any
from zoneinfo import available_timezones

from bot.i18n import t, tn
from bot.puzzles import bank
from bot.rules import Position
from bot.service.chat import boards, present_runs
from bot.service.chat.commands import fold, parse_variant
from bot.service.chat.registry import DAILY_OFF_WORDS, DAILY_ON_WORDS, ButtonKind, action
from bot.service.chat.wording import button_rows, day_words, illegal_rule_text, ordinal, variant_name
from bot.service.events import Button, Reply
from bot.service.features.results_puzzles import (
    Acted,
    AnswerIllegal,
    AnswerRight,
    AnswerWrong,
    Board,
    DailyOff,
    DailyRequest,
    DailyResult,
    DailySetting,
    Drawn,
    GaveUp,
    HintGiven,
    PathToChoose,
    PieceSelected,
    PuzzleGiven,
    PuzzleHistory,
    PuzzleInPrivate,
    PuzzleOpened,
    PuzzleRequest,
    PuzzleResult,
    RatingChange,
    Reaction,
    Refusal,
    Refused,
    Solved,
    Solvers,
    Step,
    ThemeCounts,
    ThemeEmpty,
    YourPosition,
)
from bot.storage.records import PuzzlePostRecord

DEFAULT_TIME = "09:00"
SOLVED_REACTION = "🎉"
# Where a member's answer cannot be shown to them alone (a Telegram group), a reaction to their
# message says how it went; the steps themselves go to their private chat with the bot.
RIGHT_REACTION = "👍"
WRONG_REACTION = "👎"
OTHER_REACTION = "🤔"
REACTIONS = {Reaction.RIGHT: RIGHT_REACTION, Reaction.WRONG: WRONG_REACTION, Reaction.SOLVED: SOLVED_REACTION,
             Reaction.OTHER: OTHER_REACTION}
# Giving up a puzzle is seeing its solution: the words for both, in the three languages.
GIVE_UP_WORDS = ("giveup", "give-up", "resign", "solution", "rendirse", "rindo", "abandonar", "solucion", "solución",
                 "arrendo", "arrendersi", "abbandona", "rinuncia", "rinuncio", "soluzione")
HISTORY_WORDS = ("history", "historial", "historia", "storia", "cronologia")
THEMES_WORDS = ("themes", "temas", "temi")
# ASCII digits only: the time is stored as typed ('09:0٥' would be kept as such).
_TIME = re.compile(r"([01]?\d|2[0-3])[:.h]([0-5]\d)", re.ASCII)
# '8am', '8:30pm', '12pm' (noon), '12am' (midnight).
_AMPM = re.compile(r"(1[0-2]|0?[1-9])(?:[:.]([0-5]\d))?\s*([ap])\.?m\.?", re.I | re.ASCII)
_REF = re.compile(r"#?\d{1,9}")


# -- reading the words -----------------------------------------------------------------------------------

def read_time(word: str) -> str | None:
    """'08:30', '8.30', '8h30', '8am', '8:30pm' as HH:MM, or None."""
    match = _TIME.fullmatch(word)
    if match:
        return f"{int(match.group(1)):02d}:{match.group(2)}"
    match = _AMPM.fullmatch(word)
    if match:
        hour = int(match.group(1)) % 12 + (12 if match.group(3).lower() == "p" else 0)
        return f"{hour:02d}:{match.group(2) or '00'}"
    return None


# ``/start`` payloads that open a puzzle post in a private chat: p<post>_<pass>.  The pass (the
# chat layer's signature, ``signing.LinkSigner.puzzle_pass``) binds the link to the one user it
# was handed to (Telegram allows 64 characters of [A-Za-z0-9_-]); a bare p<post> is an old link.
PUZZLE_START = re.compile(r"p(\d{1,9})(?:_([A-Za-z0-9_-]{16}))?")


def puzzle_start(post_id: int) -> str:
    """The ``/start`` payload that opens post ``post_id`` for the user being answered, before it
    is signed for them (``ChatLayer`` signs every reply's on the way out: ``LinkSigner.sign_starts``)."""
    return f"p{post_id}"


def _start(board: Board) -> str | None:
    return puzzle_start(board.post.id) if board.personal else None


def zones_of_city(word: str) -> list[str]:
    """The IANA zones whose city is this word ('London' -> ['Europe/London'])."""
    city = "/" + word.strip().lower().replace(" ", "_")
    return sorted(name for low, name in _zone_names().items() if low.endswith(city))


@cache
def _zone_names() -> dict[str, str]:
    return {name.lower(): name for name in available_timezones()}


def find_timezone(word: str) -> str | None:
    """The IANA name a typed time zone means ('europe/rome' -> 'Europe/Rome'), or None."""
    name = _zone_names().get(word.strip().lower())
    if name is None and word.upper() == "UTC":
        name = "UTC"
    return name


def parse_daily(lang: str, args: list[str]) -> DailyRequest | Reply:
    """/daily [on [HH:MM] [time zone] [variant] | off] as a request, or the reply that refuses it."""
    if not args:
        return DailyRequest("show")
    word = args[0].lower()
    if word in DAILY_OFF_WORDS:
        return DailyRequest("off") if len(args) == 1 else Reply(t(lang, "daily.usage"))
    if word not in DAILY_ON_WORDS:
        return Reply(t(lang, "daily.usage"))
    time_text, zone, variant_words = DEFAULT_TIME, None, []
    for arg in args[1:]:
        read = read_time(arg)
        if read:
            time_text = read
        elif ("/" in arg or arg.upper() == "UTC") and find_timezone(arg):
            # An IANA name, and UTC: 'UTC' also ends like Etc/UTC, which is no city to ask about.
            zone = find_timezone(arg)
        elif zones_of_city(arg) and not parse_variant([arg]):
            # A city alone ('London'): the zone it means is offered, not guessed silently.
            return Reply(t(lang, "daily.zone_hint", zone=arg[:40], suggestion=zones_of_city(arg)[0]))
        elif "/" in arg:
            return Reply(t(lang, "daily.bad_zone", zone=arg[:40]))
        else:
            variant_words.append(arg)
    variant = None
    if variant_words:
        variant = parse_variant(variant_words)
        if variant is None:
            return Reply(t(lang, "daily.bad_word", word=" ".join(variant_words)[:30]) + " " + t(lang, "daily.usage"))
    return DailyRequest("on", time_text, zone, variant, language=lang)


def parse_ref(words: list[str]) -> int | None:
    """A post's number given first ('#12', '12'), or None."""
    return int(words[0].lstrip("#")) if words and _REF.fullmatch(words[0]) else None


def parse_puzzle(lang: str, args: list[str]) -> PuzzleRequest | Reply:
    """/puzzle [variant] | history | giveup [#id] as a request, or the reply that refuses it."""
    word = args[0].lower() if args else ""
    if word in HISTORY_WORDS:
        return PuzzleRequest("history")
    if word in GIVE_UP_WORDS:
        return PuzzleRequest("give_up", ref=parse_ref(args[1:]))
    if word in THEMES_WORDS:
        variant = parse_variant(args[1:]) if args[1:] else None
        if args[1:] and variant is None:
            return Reply(t(lang, "rules.unknown", word=" ".join(args[1:])[:30]))
        return PuzzleRequest("themes", variant)
    if not args:
        return PuzzleRequest("new")
    found = variant_and_theme(lang, args)
    if found is None:
        return _unknown_theme(lang, args)
    return PuzzleRequest("new", found[0], theme=found[1])


def theme_named(lang: str, words: list[str]) -> str | None:
    """The theme (``bank.THEMES``) these words name, in ``lang`` or in English ('sacrificio',
    'double capture', 'double_capture'), or None."""
    text = " ".join(fold(w) for w in " ".join(words).replace("_", " ").split())
    for theme in bank.THEMES:
        names = {theme.replace("_", " ")} | {fold(t(each, f"puzzle.theme.{theme}")) for each in (lang, "en")}
        if text in names:
            return theme
    return None


def variant_and_theme(lang: str, args: list[str]) -> tuple[str | None, str | None] | None:
    """A variant and a theme in either order ('italian sacrifice', 'sacrificio damas españolas'),
    either one left out; None when the words are not that."""
    for cut in range(len(args) + 1):
        for first, second in ((args[:cut], args[cut:]), (args[cut:], args[:cut])):
            variant = parse_variant(first) if first else None
            theme = theme_named(lang, second) if second else None
            if (variant is not None or not first) and (theme is not None or not second):
                return variant, theme
    return None


def _unknown_theme(lang: str, args: list[str]) -> Reply:
    """Words after /puzzle that name no variant and no theme: which themes there are (and the
    variants, when no word named one)."""
    themes = ", ".join(t(lang, f"puzzle.theme.{theme}") for theme in bank.THEMES)
    for cut in range(len(args) - 1, 0, -1):
        for named, rest in ((args[:cut], args[cut:]), (args[-cut:], args[:-cut])):
            if parse_variant(named) is not None:
                return Reply(t(lang, "themes.unknown", word=" ".join(rest)[:30], themes=themes))
    return Reply(t(lang, "rules.unknown", word=" ".join(args)[:30]) + "\n"
                 + t(lang, "themes.unknown", word=" ".join(args)[:30], themes=themes))


# -- wording ----------------------------------------------------------------------------------------------

def theme_words(lang: str, puzzle: dict[str, Any]) -> list[str]:
    """A puzzle's tags in words (whatever tags the bank has; unknown ones are left out)."""
    return _tag_words(lang, puzzle.get("tags") or {})


def _tag_words(lang: str, tags: dict[str, Any]) -> list[str]:
    words = []
    sacrifices = tags.get("sacrifices") or 0
    if isinstance(sacrifices, bool):
        sacrifices = int(sacrifices)
    if sacrifices == 1:
        words.append(t(lang, "theme.sacrifice"))
    elif isinstance(sacrifices, int) and sacrifices > 1:
        words.append(t(lang, "theme.sacrifices", n=sacrifices))
    longest = tags.get("longest_capture") or 0
    if isinstance(longest, int) and longest >= 2:
        words.append(t(lang, "theme.longest_capture", n=longest))
    # The bank names its themes in a list (tags.themes); older records had a flag per theme. The
    # sacrifice and the shot are already worded above, with their counts.
    themes = tags.get("themes")
    named = themes if isinstance(themes, list) else []
    for flag in ("promotion", "king_capture", "quiet_move", "blockade", "endgame"):
        if tags.get(flag) is True or flag in named:
            words.append(t(lang, f"theme.{flag}"))
    moves = tags.get("moves")
    if isinstance(moves, int) and moves > 0:
        words.append(tn(lang, "theme.moves", moves))
    return words


def streak_text(lang: str, days: int) -> str:
    return t(lang, "streak.one") if days == 1 else t(lang, "streak.many", n=days)


def _day(lang: str, day: str | None, weekday: bool = False) -> str:
    return day_words(lang, day, weekday=weekday) if day else "?"


def puzzle_label(lang: str, post: PuzzlePostRecord) -> str:
    if post.kind == "daily":
        return t(lang, "puzzle.for_daily", day=_day(lang, post.day))
    return t(lang, "puzzle.for_personal", variant=variant_name(lang, post.variant), id=post.id)


def _rating_text(lang: str, change: RatingChange) -> str:
    return t(lang, "puzzle.rating_change", rating=change.rating, delta=f"{round(change.delta):+d}")


def _next_button(lang: str, post: PuzzlePostRecord) -> list[list[Button]]:
    return [[Button(t(lang, "button.next_puzzle"), action(ButtonKind.PUZZLE_NEXT, post.id), "/puzzle")]]


# -- boards -----------------------------------------------------------------------------------------------

def draw(pos: Position, drawn: Drawn | None = None) -> tuple[bytes, str]:
    """A puzzle position drawn (PNG and text board), as puzzle_board shows it."""
    earlier, last, captured = drawn or ([], [], [])
    view = boards.board_view(pos, last_path=last, captured=captured, flipped=not pos.white, earlier_paths=earlier)
    return boards.png(view), boards.text(view)


def puzzle_board(lang: str, board: Board, text: str, replaces: bool = False) -> Reply:
    """A puzzle position with its buttons: the pieces that can move, a hint and (for one user's
    board) giving up; a board for one user carries the private-chat link signed for them.
    ``replaces``: it takes the place of the board whose button was pressed (see _replaces)."""
    post, pos, step = board.post, board.position, board.step
    image, board_text = board.picture or draw(pos, board.drawn)
    starts = sorted({m.start for m in pos.legal_moves()})
    buttons = button_rows([Button(str(sq), action(ButtonKind.PUZZLE_SELECT, post.id, step, sq)) for sq in starts],
                    reserve=1)
    extra = [Button(t(lang, "button.hint"), action(ButtonKind.PUZZLE_HINT, post.id, step),
                    f"/hint #{post.id}", style="back")]
    if board.give_up:
        extra.append(Button(t(lang, "button.give_up"), action(ButtonKind.PUZZLE_GIVE_UP, post.id),
                            "/puzzle giveup", style="stop"))
    buttons.append(extra)
    return Reply(text, image=image, board_text=board_text, buttons=buttons, post_id=post.id,
                 replaces_board=replaces, private=board.private, start_payload=_start(board))


def _replaces(board: Board, via_button: bool) -> bool:
    """Whether a board drawn after a press takes the pressed board's place: only in the user's
    private chat; in a group the pressed board is the chat's, and the new one is for the presser."""
    return via_button and not board.private


def _your_position(lang: str, board: Board, replaces: bool) -> Reply:
    text = t(lang, "puzzle.your_position", side=t(lang, f"puzzle.to_win.{board.position.turn}"))
    return puzzle_board(lang, board, text, replaces)


def _back_row(lang: str, board: Board) -> list[Button]:
    return [Button(t(lang, "button.back"), action(ButtonKind.PUZZLE_BACK, board.post.id, board.step), style="back")]


def _piece_selected(lang: str, chosen: PieceSelected, replaces: bool) -> Reply:
    board = chosen.board
    pos, post, square = board.position, board.post, chosen.square
    view = boards.board_view(pos, dots=list(chosen.ends), selected=square, flipped=not pos.white)
    buttons = [Button(f"{square}→{end}", action(ButtonKind.PUZZLE_DEST, post.id, board.step, square, end))
               for end in chosen.ends]
    rows = button_rows(buttons, reserve=1)
    rows.append(_back_row(lang, board))
    return Reply(t(lang, "select.piece", square=square), image=boards.png(view), board_text=boards.text(view),
                 buttons=rows, post_id=post.id, start_payload=_start(board), replaces_board=replaces,
                 private=board.private)


def _path_to_choose(lang: str, choice: PathToChoose, replaces: bool) -> Reply:
    board = choice.board
    pos, post = board.position, board.post
    buttons = [Button(f"{n}: {move}", action(ButtonKind.PUZZLE_PATH, post.id, board.step, index))
               for n, (index, move, _path) in enumerate(choice.paths, 1)]
    rows = button_rows(buttons, reserve=1)
    shown = choice.paths[:sum(len(r) for r in rows)]
    rows.append(_back_row(lang, board))
    view = boards.board_view(pos, dots=[choice.end], selected=choice.start, flipped=not pos.white,
                             routes=[path for _index, _move, path in shown])
    return Reply(t(lang, "select.path"), image=boards.png(view), board_text=boards.text(view), buttons=rows,
                 post_id=post.id, start_payload=_start(board), replaces_board=replaces, private=board.private)


# -- results ----------------------------------------------------------------------------------------------

_REFUSAL_KEYS = {
    Refusal.NO_PUZZLE: "puzzle.none", Refusal.UNKNOWN: "puzzle.unknown", Refusal.NOT_YOURS: "puzzle.not_yours",
    Refusal.NOT_MEMBER: "puzzle.not_member", Refusal.ALREADY: "puzzle.already",
    Refusal.LINK_INVALID: "puzzle.link_invalid", Refusal.NONE_LEFT: "puzzle.none_left",
    Refusal.STALE: "button.stale", Refusal.MOVE_USAGE: "move.usage", Refusal.NO_HINTS: "streak.no_hints",
}


def _refused(lang: str, refused: Refused) -> Reply:
    if refused.reason is Refusal.OVER:
        text = t(lang, "puzzle.over", day=_day(lang, refused.day))
    elif refused.reason is Refusal.GAVE_UP:
        text = t(lang, "puzzle.gave_up_already", line=" ".join(refused.solution))
    else:
        text = t(lang, _REFUSAL_KEYS[refused.reason])
    return Reply(text, private=refused.private)


def present_daily(lang: str, result: DailyResult) -> list[Reply]:
    """/daily's answer."""
    if isinstance(result, DailySetting):
        sub = result.subscription
        if sub is None:
            return [Reply(t(lang, "daily.none"))]
        return [Reply(t(lang, "daily.show", time=sub.time, zone=sub.timezone, variant=variant_name(lang, sub.variant)))]
    if isinstance(result, DailyOff):
        return [Reply(t(lang, "daily.off" if result.was_on else "daily.none"))]
    return [Reply(t(lang, "daily.on", time=result.time, zone=result.zone, variant=variant_name(lang, result.variant)))]


def present(lang: str, result: PuzzleResult, via_button: bool = False) -> list[Reply]:
    """The replies to what a puzzle use case returned.  ``via_button``: the request came from a
    puzzle board's move buttons, so a board drawn after it goes where the pressed one was (in a
    private chat, in its place) and a wrong move shows the board to go on from."""
    if isinstance(result, Refused):
        return [_refused(lang, result)]
    if isinstance(result, Acted):
        return _acted(lang, result, via_button)
    if isinstance(result, PuzzleGiven):
        board = result.board
        text = t(lang, "puzzle.personal", variant=variant_name(lang, board.post.variant), rating=result.rating,
                 side=t(lang, f"puzzle.to_win.{board.position.turn}"), id=board.post.id)
        if result.theme is not None:
            text += "\n" + t(lang, "themes.puzzle", theme=t(lang, f"puzzle.theme.{result.theme}"))
        return [puzzle_board(lang, board, text)]
    if isinstance(result, ThemeCounts):
        lines = [t(lang, "themes.title", variant=variant_name(lang, result.variant))]
        lines += [t(lang, "themes.line", theme=t(lang, f"puzzle.theme.{theme}"), count=count)
                  for theme, count in result.counts]
        return [Reply("\n".join(lines))]
    if isinstance(result, ThemeEmpty):
        return [Reply(t(lang, "themes.none", variant=variant_name(lang, result.variant),
                        theme=t(lang, f"puzzle.theme.{result.theme}")))]
    if isinstance(result, PuzzleInPrivate):
        return [Reply(t(lang, "puzzle.in_private", name=result.name, link=result.link))]
    if isinstance(result, PuzzleOpened):
        board = result.board
        text = t(lang, "puzzle.resume", variant=variant_name(lang, board.post.variant),
                 side=t(lang, f"puzzle.to_win.{board.position.turn}"), id=board.post.id)
        return [puzzle_board(lang, board, text)]
    return [_history(lang, result)]


def _history(lang: str, history: PuzzleHistory) -> Reply:
    if not history.entries:
        return Reply(t(lang, "puzzle.history_empty"), private=history.private)
    lines = [t(lang, "puzzle.history_title")]
    for entry in history.entries:
        post = entry.post
        variant = variant_name(lang, post.variant)
        if post.kind == "daily":
            what = t(lang, "puzzle.history_daily", day=_day(lang, post.day), variant=variant)
        else:
            what = t(lang, "puzzle.history_personal", id=post.id, variant=variant,
                     rating=entry.rating if entry.rating is not None else "?")
        if entry.outcome == "solved":
            result = (tn(lang, "puzzle.result.solved_misses", entry.misses) if entry.misses
                      else t(lang, "puzzle.result.solved"))
        else:
            result = t(lang, f"puzzle.result.{entry.outcome}")
        when = day_words(lang, dt.datetime.fromtimestamp(post.posted_at, dt.UTC).date())
        lines.append(t(lang, "puzzle.history_line", when=when, what=what, result=result))
    return Reply("\n".join(lines), private=history.private)


def _acted(lang: str, acted: Acted, via_button: bool = False) -> list[Reply]:
    """An act on a post: its replies, a typed one labelled with the puzzle when the user has several
    open (a pressed board names its puzzle already), and kept from the group where nothing can be
    shown to one member (see _privately)."""
    step = acted.step
    if isinstance(step, Solved):
        replies = _solved(lang, acted, step)
    elif isinstance(step, GaveUp):
        replies = [Reply(puzzle_label(lang, step.post) + t(lang, "puzzle.gave_up", line=" ".join(step.solution)),
                         private=step.private, buttons=_next_button(lang, step.post))]
    else:
        replies = [_step(lang, step, via_button)]
    if acted.label and not via_button and replies:
        replies[0] = replace(replies[0], text=puzzle_label(lang, acted.post) + replies[0].text)
    if not acted.hints:
        # A streak's boards offer no hint (one would be refused).
        hint = action(ButtonKind.PUZZLE_HINT, acted.post.id) + ":"
        replies = [replace(r, buttons=[row for row in ([b for b in row if not b.action.startswith(hint)]
                                                       for row in r.buttons) if row]) for r in replies]
    if acted.follow is not None:
        # A run's puzzle is followed by the run's next one: no Next puzzle of /puzzle's.
        nexts = action(ButtonKind.PUZZLE_NEXT, acted.post.id)
        replies = [replace(r, buttons=[row for row in ([b for b in row if b.action != nexts] for row in r.buttons)
                                       if row]) for r in replies]
        replies.extend(present_runs.follow_replies(lang, acted.follow, puzzle_board))
    return _privately(acted, replies) if acted.stand_in else replies


def _step(lang: str, step: Step, via_button: bool) -> Reply:
    if isinstance(step, Refused):
        return _refused(lang, step)
    if isinstance(step, YourPosition):
        return _your_position(lang, step.board, _replaces(step.board, via_button))
    if isinstance(step, PieceSelected):
        return _piece_selected(lang, step, _replaces(step.board, via_button))
    if isinstance(step, PathToChoose):
        return _path_to_choose(lang, step, _replaces(step.board, via_button))
    if isinstance(step, HintGiven):
        return Reply(t(lang, "puzzle.hint", square=step.square), private=step.private)
    if isinstance(step, AnswerIllegal):
        # In a puzzle the rule is named, never the moves it allows (they may be the answer).
        assert step.error is not None
        return Reply(illegal_rule_text(lang, step.error, step.position, typed=step.typed), private=step.private)
    if isinstance(step, AnswerWrong):
        lines = []
        if step.played:
            lines.append(t(lang, "puzzle.right_so_far", moves=" ".join(step.played)))
        if step.refutation:
            lines.append(t(lang, "puzzle.refuted", move=step.wrong, line=" ".join(step.refutation)))
        else:
            lines.append(t(lang, "puzzle.wrong", move=step.wrong))
        if step.rating is not None:
            lines.append(_rating_text(lang, step.rating))
        if not via_button:
            # A typed miss is answered in words; the board to go on from is the one already shown.
            return Reply("\n".join(lines), private=step.private)
        return puzzle_board(lang, step.board, "\n".join(lines), _replaces(step.board, via_button))
    assert isinstance(step, AnswerRight)
    if step.forced:
        text = t(lang, "puzzle.right_forced", reply=step.reply)
    else:
        text = t(lang, "puzzle.right", reply=step.reply, side=t(lang, f"puzzle.replier.{step.replier}"))
    return puzzle_board(lang, step.board, text, _replaces(step.board, via_button))


def _solved(lang: str, acted: Acted, solved: Solved) -> list[Reply]:
    post, line, whisper = solved.post, " ".join(solved.line), acted.private
    if solved.how == "personal":
        replies = [Reply(t(lang, "puzzle.solved_personal", line=line), private=whisper)]
    elif solved.how == "first_elsewhere":
        replies = [Reply(t(lang, "puzzle.solved_line", line=line)), Reply(t(lang, "puzzle.first_elsewhere"))]
    elif solved.how == "first":
        # The one message every solve of the day puts in the chat.
        replies = [Reply(first_text(lang, solved.name, post.day or "", solved.streak))]
        if whisper and not acted.stand_in:
            replies.insert(0, Reply(t(lang, "puzzle.solved_line", line=line), private=True))
    else:
        text = t(lang, "puzzle.solved", number=solved.number, ordinal=ordinal(lang, solved.number),
                 streak=streak_text(lang, solved.streak))
        replies = [Reply(text, private=whisper, reaction=SOLVED_REACTION)]
    extra = [t(lang, "puzzle.themes", themes=", ".join(words)) for words in [_tag_words(lang, solved.tags)] if words]
    if solved.rating is not None:
        extra.append(_rating_text(lang, solved.rating))
    if extra:
        # After a solve, what lichess shows: the themes and the rating change, to the solver
        # (with the answer meant for them alone, where there is one).
        next_button = _next_button(lang, post)
        own = next((i for i, r in enumerate(replies) if r.private or not whisper), None)
        if own is not None and post.kind == "personal" or own is not None and replies[own].private:
            replies[own] = replace(replies[own], text=replies[own].text + "\n" + "\n".join(extra),
                                   buttons=replies[own].buttons + next_button)
        else:
            replies.append(Reply("\n".join(extra), private=True, buttons=next_button))
    return replies


def _privately(acted: Acted, replies: list[Reply]) -> list[Reply]:
    """In a group where nothing can be shown to one member (Telegram), a member's steps, hints
    and misses are never posted for everyone: the first reply meant for them alone gets a
    reaction that stands in for it in the group, and each carries the private-chat link (signed
    for them) of where the adapter shows it instead (see Reply.start_payload)."""
    out = []
    reacted = False
    for reply in replies:
        if reply.private:
            reply = replace(reply, reaction=None if reacted else (reply.reaction or REACTIONS[acted.reaction]),
                            post_id=acted.post.id,
                            start_payload=reply.start_payload or puzzle_start(acted.post.id))
            reacted = True
        out.append(reply)
    return out


def first_text(lang: str, name: str, day: str, streak: int) -> str:
    return t(lang, "puzzle.first", name=name, day=_day(lang, day), streak=streak_text(lang, streak))


class ChatNotices:
    """The puzzle messages of the outbox, worded for a chat when they are delivered (the daily
    post, the summary of the day before, the first solver; see ``bot.service.chat.present_notices``)."""

    def daily_post(self, lang: str, board: Board) -> Reply:
        post, pos = board.post, board.position
        text = t(lang, "daily.post", day=_day(lang, post.day, weekday=True), variant=variant_name(lang, post.variant),
                 side=t(lang, f"puzzle.to_win.{pos.turn}"))
        return puzzle_board(lang, board, text)

    def yesterday(self, lang: str, solvers: Solvers) -> Reply:
        names = solvers.names
        solvers_text = (t(lang, "daily.solved_by", names=", ".join(names[:20]), count=len(names))
                        if names else t(lang, "daily.nobody"))
        line = " ".join(solvers.solution) if solvers.solution else "?"
        return Reply(t(lang, "daily.yesterday", day=_day(lang, solvers.post.day)) + "\n" + solvers_text, spoiler=line)

    def first_solver(self, lang: str, name: str, day: str, streak: int) -> Reply:
        return Reply(first_text(lang, name, day, streak))
