"""Judging answers to a puzzle against its proven solution tree, and picking the puzzle of a day.

Pure: a puzzle record (as in the bank) and the moves played so far go in, a verdict comes out.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass, field
from enum import Enum

from bot.rules import IllegalMove, Move, Position

from .prove import Tree, balance, line_length


class Verdict(Enum):
    """What an answer was."""

    RIGHT = "right"            # a move of the golpe; the line goes on
    SOLVED = "solved"          # the golpe is complete
    WRONG = "wrong"            # legal, but not the golpe
    ILLEGAL = "illegal"        # the rules forbid it (``error`` says why)


@dataclass
class Answer:
    """The outcome of one answer: the verdict, the moves played (the solver's and the forced
    replies), the position reached, and the rule broken for an illegal move."""

    verdict: Verdict
    played: list[str] = field(default_factory=list)
    position: Position | None = None
    error: IllegalMove | None = None
    wrong: str | None = None          # the token, as typed, of a legal move that is not the golpe


def _follow(puzzle: dict, moves: list[str]) -> tuple[Position, Tree]:
    """The position and the solver node after a prefix of accepted moves and replies."""
    pos = Position.from_fen(puzzle["variant"], puzzle["fen"])
    node: Tree = puzzle["tree"]
    for text in moves:                  # solver node -> opponent node -> solver node ...
        pos = pos.play(pos.parse_move(text))
        node = node[text]
    return pos, node


def position_after(puzzle: dict, moves: list[str]) -> Position:
    """The position after the accepted moves so far."""
    return _follow(puzzle, moves)[0]


def forced_reply(opponent_node: dict[str, Tree]) -> str:
    """The reply the bot plays: the most stubborn defence (the main line's)."""
    return max(opponent_node, key=lambda r: (line_length(opponent_node[r]), r))


def judge(puzzle: dict, moves: list[str], text: str | Move) -> Answer:
    """Judge typed text (one move, or several moves of the line in turn) after ``moves``, or one
    move already read (a legal move of the position after ``moves``, as a board's buttons give it).

    Replies in the text are optional: the bot plays the forced reply after each right move, and a
    typed reply that the tree allows is taken as typed.  Nothing is changed on a wrong or illegal
    move: ``played`` then holds only the right moves before it."""
    pos, node = _follow(puzzle, moves)
    played: list[str] = []
    tokens: list[str | Move] = [text] if isinstance(text, Move) else list(text.replace(",", " ").split())
    i = 0
    if not tokens:
        return Answer(Verdict.ILLEGAL, [], pos, None)
    while i < len(tokens):
        token = tokens[i]
        try:
            move = token if isinstance(token, Move) else pos.parse_move(token)
        except IllegalMove as err:
            return Answer(Verdict.ILLEGAL, played, pos, err)
        name = str(move)
        if name not in node:
            return Answer(Verdict.WRONG, played, pos, wrong=str(token))
        pos = pos.play(move)
        played.append(name)
        replies = node[name]
        if not replies:
            return Answer(Verdict.SOLVED, played, pos)
        i += 1
        reply = None
        if i < len(tokens):
            try:
                typed = str(pos.parse_move(str(tokens[i])))
            except IllegalMove:
                typed = None
            if typed in replies:
                reply, i = typed, i + 1
        reply = reply or forced_reply(replies)
        pos = pos.play(pos.parse_move(reply))
        played.append(reply)
        node = replies[reply]
    return Answer(Verdict.RIGHT, played, pos)


def hint(puzzle: dict, moves: list[str]) -> int:
    """The square of the piece that moves next in the golpe."""
    _, node = _follow(puzzle, moves)
    best = min(node, key=lambda m: (1 + max((line_length(s) for s in node[m].values()), default=0), m))
    return int(best.replace("x", "-").split("-")[0])


def puzzle_of_day(puzzles: list[dict], day: dt.date, variant: str) -> dict:
    """The same puzzle for everyone on a given day: a different one every day for len(puzzles)
    days, in an order that mixes difficulties and does not follow the bank's order."""
    if not puzzles:
        raise ValueError(f"no {variant} puzzles")
    ordered = sorted(puzzles, key=lambda p: hashlib.sha1(f"{variant}|{p['id']}".encode()).hexdigest())
    return ordered[day.toordinal() % len(ordered)]


def refutation(puzzle: dict, moves: list[str], wrong: str, plies: int = 3) -> list[str]:
    """Why a wrong move fails: the defender's best answer to it and what follows (a short line
    chosen by material after ``plies`` plies, captures searched a little further)."""
    pos = position_after(puzzle, moves)
    solver = pos.turn
    try:
        pos = pos.play(pos.parse_move(wrong))
    except IllegalMove:
        return []
    line = _best_line(pos, solver, plies)[1]
    return line


def _best_line(pos: Position, solver: str, plies: int) -> tuple[float, list[str]]:
    """(the solver's material balance, the line) with both sides playing for material."""
    legal = pos.legal_moves()
    if not legal:
        # No move left: the side to move has lost.
        return (100.0 if pos.turn != solver else -100.0), []
    if plies <= 0 and not legal[0].is_capture:
        return balance(pos, solver), []
    depth = plies - 1 if plies > 0 else -1
    if depth < -2:
        return balance(pos, solver), []
    best: tuple[float, list[str]] | None = None
    for move in legal:
        score, rest = _best_line(pos.play(move), solver, depth)
        better = best is None or (score > best[0] if pos.turn == solver else score < best[0])
        if better:
            best = (score, [str(move), *rest])
    assert best is not None
    return best


def reply_is_forced(puzzle: dict, moves: list[str]) -> bool:
    """Whether the defender had one legal move after the solver's last move in ``moves``."""
    return len(position_after(puzzle, moves).legal_moves()) == 1
