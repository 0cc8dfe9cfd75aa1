"""Presenters of games, challenges and the bot opponent: their typed results (``results_games``)
turned into the replies a chat gets (catalog text, the board image, buttons, pings), and the
wording every game message shares (names, whose turn it is, how a game ended, the board)."""

from __future__ import annotations

from bot.i18n import t
from bot.rules import Color, Move, Position, Result
from bot.service.board_versions import stage_of
from bot.service.chat import boards
from bot.service.chat.present_challenges import challenge_line, closed_edit
from bot.service.chat.registry import ButtonKind, action
from bot.service.chat.wording import (
    button_rows,
    clip_line,
    duration,
    result_text,
    short_list,
    to_move,
    to_name,
    variant_name,
)
from bot.service.events import Button, Mention, Reply
from bot.service.features.common import _ids, _last_move, _stored_result, bot_to_move, reply_flipped
from bot.service.features.results_games import (
    BoardShown,
    BotDrawAnswer,
    BotGameStarted,
    ChallengeChoice,
    ChallengeDeclined,
    ChallengeOpened,
    ChallengesCancelled,
    DrawOffered,
    GameEnded,
    GameResult,
    GamesPage,
    NoGame,
    PathsOffered,
    PdnText,
    PiecePicked,
    PiecesShown,
    Refused,
    RepeatedPress,
    ResignAsked,
    TimedOut,
)
from bot.storage import BOT_ID
from bot.storage.records import GameRecord

# -- the wording every game message shares -----------------------------------------------------------


def bot_name(lang: str, row: GameRecord) -> str:
    """The bot as the subject that opens a sentence ('El bot (nivel 2) jugó...')."""
    return t(lang, "bot.name_start", level=row.bot_level)


def name_of(lang: str, row: GameRecord, color: str) -> str:
    user_id, name = (row.white_id, row.white_name) if color == Color.WHITE else (row.black_id, row.black_name)
    if user_id == BOT_ID and row.bot_level is not None:
        return t(lang, "bot.name", level=row.bot_level)
    return name


def names(lang: str, row: GameRecord) -> tuple[str, str]:
    """White's and Black's names as this language shows them: the bot's is rendered here, not
    stored (a game made in an Italian chat is read in Spanish too)."""
    return name_of(lang, row, Color.WHITE), name_of(lang, row, Color.BLACK)


def over_text(lang: str, row: GameRecord, result: Result | None = None) -> str:
    """'Game #N is over.' and how it ended (``row`` as it is once the game ended)."""
    result = result or _stored_result(row)
    final = Position.from_fen(row.variant, row.fen)
    return t(lang, "game.over", id=row.id) + " " + result_text(lang, result, *names(lang, row), final)


def to_move_line(lang: str, row: GameRecord, now: float) -> str:
    if bot_to_move(row):
        # The bot has no clock: it answers as soon as it has thought.
        return t(lang, "bot.thinking", bot=bot_name(lang, row))
    turn = Position.from_fen(row.variant, row.fen).turn
    return to_move(lang, name_of(lang, row, turn), turn, (row.deadline_at or now) - now)


def game_line(lang: str, g: GameRecord) -> str:
    turn = Position.from_fen(g.variant, g.fen).turn
    white, black = names(lang, g)
    mover = white if turn == Color.WHITE else black
    line = t(lang, "games.line", id=g.id, variant=variant_name(lang, g.variant),
             white=white, black=black, mover=mover, to_mover=to_name(lang, mover), ply=g.ply // 2 + 1)
    if g.bot_level is not None:
        line += f" ({t(lang, 'games.bot', level=g.bot_level)})"
    return line


def board_reply(lang: str, row: GameRecord, text: str, replaces: bool = False) -> Reply:
    """The board of a stored game, with the piece buttons for the player to move."""
    pos = Position.from_fen(row.variant, row.fen)
    view = boards.board_view(pos, *_last_move(row), flipped=reply_flipped(row))
    buttons: list[list[Button]] = []
    if row.status == "active" and not bot_to_move(row, pos):
        starts = sorted({m.start for m in pos.legal_moves()})
        buttons = button_rows([Button(str(sq), action(ButtonKind.SELECT, row.id, row.ply, sq)) for sq in starts])
    elif row.status == "finished":
        buttons = [[Button(t(lang, "button.rematch"), action(ButtonKind.REMATCH, row.id))]]
    return Reply(text, image=boards.png(view), board_text=boards.text(view), buttons=buttons,
                 replaces_board=replaces, game_id=row.id, board_stage=stage_of(row))


def move_rows(row: GameRecord, ply: int) -> list[list[Button]] | None:
    """Every move of the player to move as a button of its own ("22→18", a destination press), for
    a platform where each edit of the board is costly (a Telegram group's posts): a move is then
    one press instead of a piece and its square.  None when the game is not at ``ply`` or not a
    player's to move, or when the moves do not all fit as buttons."""
    if row.status != "active" or row.ply != ply:
        return None
    pos = Position.from_fen(row.variant, row.fen)
    if bot_to_move(row, pos):
        return None
    ends = sorted({(m.start, m.end) for m in pos.legal_moves()})
    buttons = [Button(f"{start}→{end}", action(ButtonKind.DESTINATION, row.id, row.ply, start, end))
               for start, end in ends]
    rows = button_rows(buttons)
    return rows if ends and sum(len(r) for r in rows) == len(buttons) else None


def turn_ping(lang: str, row: GameRecord, mention: Mention | None, named_in: Reply | None) -> list[Reply]:
    """The ping of ``mention`` (whose turn it is in ``row``): on ``named_in`` when that message names
    them, else a short message of its own."""
    if mention is None:
        return []
    if named_in is not None and mention.name in named_in.text:
        named_in.mentions.append(mention)
        return []
    return [Reply(t(lang, "turn.ping", name=mention.name, id=row.id), mentions=[mention])]


def _other(color: str | None) -> str:
    return Color.BLACK if color == Color.WHITE else Color.WHITE


# -- the results of games, play and the bot opponent -------------------------------------------------------


def present_game(lang: str, item: GameResult) -> list[Reply]:
    """One typed result of the games' use cases as the replies of the chat that asked."""
    if isinstance(item, Refused):
        values = dict(item.values)
        if item.game is not None and item.reason == "err.not_your_turn":
            mover = name_of(lang, item.game, Position.from_fen(item.game.variant, item.game.fen).turn)
            values.update(name=mover, to_name=to_name(lang, mover))
        text = t(lang, item.reason, **values)
        if item.then is not None:
            text += " " + t(lang, item.then)
        if item.board and item.game is not None:
            return [board_reply(lang, item.game, text, replaces=item.replaces)]
        return [Reply(text, private=item.private)]
    if isinstance(item, NoGame):
        return [_no_game(lang, item)]
    if isinstance(item, TimedOut):
        reply = board_reply(lang, item.game, over_text(lang, item.game, item.result))
        reply.private = item.private
        return [reply]
    if isinstance(item, BoardShown):
        row = item.game
        text = (game_line(lang, row) + "\n" + to_move_line(lang, row, item.now) if row.status == "active"
                else over_text(lang, row))
        return [board_reply(lang, row, text)]
    if isinstance(item, PdnText):
        return [Reply(item.text, document=(f"game-{item.game_id}.pdn", item.text.encode("utf-8")))]
    if isinstance(item, GameEnded):
        return [board_reply(lang, item.game, over_text(lang, item.game, item.result))]
    if isinstance(item, ResignAsked):
        row = item.game
        button = Button(t(lang, "button.resign"), action(ButtonKind.RESIGN, row.id, row.ply),
                        f"/resign #{row.id}", style="stop")
        text = t(lang, "resign.confirm", name=item.asker, id=row.id, other=name_of(lang, row, _other(item.color)))
        return [Reply(text, buttons=[[button]])]
    if isinstance(item, DrawOffered):
        row = item.game
        other = name_of(lang, row, _other(item.color))
        return [Reply(t(lang, "draw.offered", name=item.offerer, other=other, id=row.id),
                      buttons=[[Button(t(lang, "button.accept_draw"), action(ButtonKind.DRAW, row.id, row.ply),
                                       f"/draw #{row.id}", style="go")]])]
    if isinstance(item, PiecesShown):
        return [board_reply(lang, item.game, to_move_line(lang, item.game, item.now), replaces=True)]
    if isinstance(item, PiecePicked):
        return [_select_reply(lang, item.game, item.square)]
    if isinstance(item, PathsOffered):
        return [_paths_reply(lang, item.game, item.legal, item.matching)]
    if isinstance(item, RepeatedPress):
        text = t(lang, "move.played", name=item.mover, move=item.notation, id=item.game.id)
        text += "\n" + to_move_line(lang, item.game, item.now)
        return [board_reply(lang, item.game, text, replaces=True)]
    if isinstance(item, BotDrawAnswer):
        name = bot_name(lang, item.game)
        if item.result is None:
            return [Reply(t(lang, "bot.draw_declined", bot=name))]
        return [board_reply(lang, item.game, t(lang, "bot.draw_accepted", bot=name) + "\n"
                            + over_text(lang, item.game, item.result))]
    if isinstance(item, BotGameStarted):
        return [_bot_game_started(lang, item)]
    return _present_challenge(lang, item)


def _bot_game_started(lang: str, item: BotGameStarted) -> Reply:
    row = item.game
    lines = [t(lang, "play.started", id=row.id, variant=variant_name(lang, row.variant), name=item.player,
               color=t(lang, f"side.{item.color}"), level=row.bot_level)]
    lines.append(t(lang, "bot.thinking", bot=bot_name(lang, row)) if bot_to_move(row)
                 else to_move_line(lang, row, item.now))
    return board_reply(lang, row, "\n".join(lines))


# -- challenges --------------------------------------------------------------------------------------------


def _present_challenge(lang: str, item: ChallengeOpened | ChallengeChoice | ChallengeDeclined
                       | ChallengesCancelled | GamesPage) -> list[Reply]:
    if isinstance(item, ChallengeOpened):
        ch = item.challenge
        key = "new.open" if ch.target_username is None else "new.targeted"
        name = ch.challenger_name
        text = t(lang, key, name=name, id=ch.id, target=ch.target_username or "",
                 variant=variant_name(lang, ch.variant), colors=t(lang, f"colors.{ch.color}", name=name),
                 time=duration(lang, ch.move_seconds))
        buttons = [Button(t(lang, "button.accept"), action(ButtonKind.ACCEPT, ch.id), f"/accept #{ch.id}",
                          style="go")]
        if ch.target_username:
            buttons.append(Button(t(lang, "button.decline"), action(ButtonKind.DECLINE, ch.id),
                                  f"/decline #{ch.id}", style="stop"))
        return [Reply(text, buttons=[buttons], challenge_id=ch.id)]
    if isinstance(item, ChallengeChoice):
        listing = short_list(lang, [challenge_line(lang, c) for c in item.challenges])
        return [Reply(t(lang, item.reason) + "\n" + listing, private=item.private)]
    if isinstance(item, ChallengeDeclined):
        ch = item.challenge
        text = t(lang, "decline.done", id=ch.id, name=item.by, challenger=ch.challenger_name)
        return [Reply(text), *(closed_edit(e) for e in item.edits)]
    if isinstance(item, ChallengesCancelled):
        key = "cancel.done" if len(item.ids) == 1 else "cancel.done_many"
        return [Reply(t(lang, key, ids=_ids(list(item.ids)))), *(closed_edit(e) for e in item.edits)]
    lines = []
    if item.pages > 1:
        lines.append(t(lang, "games.page", page=item.page, pages=item.pages, total=item.total))
    if item.games:
        lines.append(t(lang, "games.header"))
        lines += [clip_line(game_line(lang, g)) for g in item.games]
    if item.challenges:
        lines.append(t(lang, "games.challenges"))
        lines += [clip_line(challenge_line(lang, c)) for c in item.challenges]
    if item.later:
        lines.append(t(lang, "games.more", count=item.later, next=item.page + 1))
    return [Reply("\n".join(lines))]


def _no_game(lang: str, item: NoGame) -> Reply:
    """Why no game was found for what the user asked, and, where it helps, which ones there are."""
    if item.reason == "recently_over" and item.games:
        return Reply(over_text(lang, item.games[0]) + "\n" + t(lang, "game.new_hint"))
    if item.reason == "which":
        listing = short_list(lang, [game_line(lang, g) for g in item.games])
        return Reply(t(lang, "game.which") + "\n" + listing)
    if item.reason in ("unknown", "not_player"):
        return Reply(t(lang, f"game.{item.reason}", id=item.ref), private=item.private)
    key = {"over": "err.game_over", "spectator": "game.spectator", "stale": "move.stale"}.get(item.reason, "game.none")
    return Reply(t(lang, key), private=item.private)


def _select_reply(lang: str, row: GameRecord, square: int) -> Reply:
    pos = Position.from_fen(row.variant, row.fen)
    moves = [m for m in pos.legal_moves() if m.start == square]
    if not moves:
        return Reply(t(lang, "button.stale"), private=True)
    ends = sorted({m.end for m in moves})
    # The opponent's last move stays drawn while the player chooses.
    view = boards.board_view(pos, *_last_move(row), dots=ends, selected=square, flipped=reply_flipped(row))
    gid, ply = row.id, row.ply
    buttons = []
    for end in ends:
        same = [m for m in moves if m.end == end]
        command = f"/m {same[0]}" if len(same) == 1 else None
        buttons.append(Button(f"{square}→{end}", action(ButtonKind.DESTINATION, gid, ply, square, end), command))
    rows = button_rows(buttons, reserve=1)
    rows.append([Button(t(lang, "button.back"), action(ButtonKind.PIECES, gid, ply), style="back")])
    return Reply(t(lang, "select.piece", square=square), image=boards.png(view), board_text=boards.text(view),
                 buttons=rows, replaces_board=True, game_id=gid, board_stage=stage_of(row))


def _paths_reply(lang: str, row: GameRecord, legal: tuple[Move, ...], matching: tuple[Move, ...]) -> Reply:
    pos = Position.from_fen(row.variant, row.fen)
    gid, ply = row.id, row.ply
    # Button n is the route drawn with number n; no more routes are drawn than fit as buttons.
    buttons = [Button(f"{n}: {m}", action(ButtonKind.PATH, gid, ply, legal.index(m)), f"/m {m}")
               for n, m in enumerate(matching, 1)]
    rows = button_rows(buttons, reserve=1)
    shown = matching[:sum(len(r) for r in rows)]
    rows.append([Button(t(lang, "button.back"), action(ButtonKind.PIECES, gid, ply), style="back")])
    view = boards.board_view(pos, *_last_move(row), dots=[matching[0].end], selected=matching[0].start,
                             flipped=reply_flipped(row), routes=[m.path for m in shown])
    return Reply(t(lang, "select.path"), image=boards.png(view), board_text=boards.text(view), buttons=rows,
                 replaces_board=True, game_id=gid, board_stage=stage_of(row))
