"""Points, FIDE tie-breaks and the standings in rank order.

The rules are FIDE's Tie-Break Regulations (C.07, in force since 1 August 2024) as FIDE's
Technical Commission computes them in its reference TieBreakServer; docs/tournaments.md states
each one with the handling of unplayed rounds (byes, forfeits, rounds after a withdrawal).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .model import PLAYED, Format, Status, Tiebreak, Tournament

WIN = 1.0
DRAW = 0.5


@dataclass(frozen=True)
class Entry:
    """One round of one player, as the tie-breaks see it."""

    points: float
    opponent: str | None      # the scheduled opponent (None: a bye or absent)
    played: bool              # a game over the board
    bye: bool                 # a pairing-allocated bye
    # FIDE's "voluntarily unplayed round": a forfeit loss or a round absent after leaving.
    vur: bool


@dataclass(frozen=True)
class Standing:
    rank: int
    player: str
    points: float
    # In the order of the tournament's tie-breaks.
    tiebreaks: tuple[tuple[Tiebreak, float], ...]
    withdrawn: bool


def rounds_counted(t: Tournament) -> int:
    """Standings count the complete rounds (a running round shows up once it is over)."""
    n = len(t.rounds)
    if n and not t.rounds[-1].complete:
        n -= 1
    return n


def entries(t: Tournament, through: int) -> dict[str, list[Entry]]:
    bye_points = t.settings.bye_points
    table: dict[str, list[Entry]] = {p.id: [] for p in t.players}
    for rnd in t.rounds[:through]:
        seen: set[str] = set()
        for p in rnd.pairings:
            for pid in p.players():
                seen.add(pid)
                points = p.points(pid, bye_points) or 0.0
                if p.black is None:
                    table[pid].append(Entry(points, None, False, True, False))
                    continue
                other = p.black if pid == p.white else p.white
                played = p.result in PLAYED
                table[pid].append(Entry(points, other, played, False, not played and points < WIN))
        for pid, rows in table.items():
            if pid not in seen:
                rows.append(Entry(0.0, None, False, False, True))
    return table


def points_of(rows: Sequence[Entry]) -> float:
    return sum(e.points for e in rows)


def adjusted_score(rows: Sequence[Entry], swiss: bool) -> float:
    """A player's score as it counts in the opponents' Buchholz and Sonneborn-Berger (C.07 16.3):
    rounds without an opponent after the player's last round that was not voluntarily unplayed
    (the rounds after leaving) count as draws in a Swiss (nothing in a round robin); every other
    round counts what it scored."""
    last = max((i for i, e in enumerate(rows) if not e.vur), default=-1)
    return sum(e.points if i <= last or e.opponent is not None else (DRAW if swiss else 0.0)
               for i, e in enumerate(rows))


@dataclass(frozen=True)
class _Value:
    opponent_score: float
    points: float
    vur: bool


def _values(pid: str, table: dict[str, list[Entry]], adjusted: dict[str, float], swiss: bool) -> list[_Value]:
    """Per round, the opponent's score for Buchholz: a game played counts the opponent's adjusted
    score; in a Swiss every unplayed round (bye, forfeit, absence) is a game against a dummy
    opponent with the player's own score (C.07 16.4); in a round robin it counts nothing."""
    rows = table[pid]
    own = points_of(rows)
    out: list[_Value] = []
    for e in rows:
        if e.played:
            assert e.opponent is not None
            out.append(_Value(adjusted[e.opponent], e.points, False))
        elif swiss:
            out.append(_Value(own, e.points, e.vur))
        elif e.opponent is not None:
            out.append(_Value(0.0, e.points, e.vur))
    return out


def buchholz(values: Sequence[_Value]) -> float:
    return sum(v.opponent_score for v in values)


def buchholz_cut1(values: Sequence[_Value]) -> float:
    """Buchholz without its least significant value; a voluntarily unplayed round is cut first
    (the least of them) when there is one (C.07 14.6 / 16.5)."""
    if not values:
        return 0.0
    pool = [v for v in values if v.vur] or list(values)
    return buchholz(values) - min(v.opponent_score for v in pool)


def sonneborn_berger(values: Sequence[_Value]) -> float:
    return sum(v.opponent_score * v.points for v in values)


def wins(rows: Sequence[Entry]) -> float:
    """Rounds scored as a win, played or not (C.07 7.1: forfeit wins and full-point byes count)."""
    return float(sum(1 for e in rows if e.points == WIN))


def direct_encounter(group: Sequence[str], table: dict[str, list[Entry]],
                     swiss: bool) -> list[list[str]]:
    """Splits players tied so far by the games they played among themselves (C.07 6): if all have
    met, by points in those games (the average of two games against one opponent); in a Swiss
    where some have not met, a player goes ahead only with more points than any other could
    still reach.  Applied again within each group still tied, until nothing changes."""
    members = set(group)
    score: dict[str, float] = {}
    met: dict[str, int] = {}
    for pid in group:
        against: dict[str, list[float]] = {}
        for e in table[pid]:
            if e.played and e.opponent in members:
                against.setdefault(e.opponent, []).append(e.points)
        score[pid] = float(sum(sum(v) / len(v) for v in against.values()))
        met[pid] = len(against)
    need = len(group) - 1
    order = sorted(group, key=lambda pid: -score[pid])   # sorted() keeps the order so far in a tie
    if not swiss or all(met[pid] == need for pid in group):
        parts: list[list[str]] = []
        for pid in order:
            if parts and score[parts[-1][0]] == score[pid]:
                parts[-1].append(pid)
            else:
                parts.append([pid])
    else:
        most = {pid: score[pid] + (need - met[pid]) * WIN for pid in group}
        order = sorted(group, key=lambda pid: (-score[pid], -most[pid]))
        parts = []
        i = 0
        while i < len(order) - 1 and score[order[i]] > max(most[pid] for pid in order[i + 1:]):
            parts.append([order[i]])
            i += 1
        rest = set(order[i:])
        parts.append([pid for pid in group if pid in rest])   # still tied: in their order so far
    if len(parts) == 1:
        return [list(group)]
    return [sub for part in parts for sub in (direct_encounter(part, table, swiss) if len(part) > 1 else [part])]


def standings(t: Tournament, through: int | None = None) -> tuple[Standing, ...]:
    """Every player in rank order: points, then the tournament's tie-breaks in turn, then the
    starting number (where FIDE would draw lots)."""
    if not t.started:
        return ()
    n = rounds_counted(t) if through is None else through
    swiss = t.settings.format is Format.SWISS
    table = entries(t, n)
    adjusted = {pid: adjusted_score(rows, swiss) for pid, rows in table.items()}
    values = {pid: _values(pid, table, adjusted, swiss) for pid in table}
    numeric: dict[Tiebreak, Callable[[str], float]] = {
        Tiebreak.BUCHHOLZ: lambda pid: buchholz(values[pid]),
        Tiebreak.BUCHHOLZ_CUT1: lambda pid: buchholz_cut1(values[pid]),
        Tiebreak.SONNEBORN_BERGER: lambda pid: sonneborn_berger(values[pid]),
        Tiebreak.WINS: lambda pid: wins(table[pid]),
    }
    tb_values: dict[str, dict[Tiebreak, float]] = {pid: {} for pid in table}
    groups: list[list[str]] = [[p.id for p in t.players]]   # starting-number order: the last resort
    criteria: list[Tiebreak | None] = [None, *t.settings.tiebreaks]   # None: points
    for criterion in criteria:
        split: list[list[str]] = []
        for group in groups:
            if criterion is Tiebreak.DIRECT_ENCOUNTER:
                for pid in group:
                    tb_values[pid][criterion] = _de_points(pid, group, table)
                split.extend(direct_encounter(group, table, swiss) if len(group) > 1 else [group])
                continue
            key: Callable[[str], float] = (lambda pid: points_of(table[pid])) if criterion is None \
                else numeric[criterion]
            if criterion is not None:
                for pid in group:
                    tb_values[pid][criterion] = key(pid)
            split.extend(_by_value(group, key))
        groups = split
    # Values for display where a player's group was already alone before the criterion.
    for pid in table:
        for tb in t.settings.tiebreaks:
            if tb not in tb_values[pid]:
                tb_values[pid][tb] = _de_points(pid, [pid], table) if tb is Tiebreak.DIRECT_ENCOUNTER \
                    else numeric[tb](pid)
    gone = {pid for pid, _ in t.withdrawn}
    order = [pid for group in groups for pid in group]
    return tuple(Standing(rank, pid, points_of(table[pid]),
                          tuple((tb, tb_values[pid][tb]) for tb in t.settings.tiebreaks), pid in gone)
                 for rank, pid in enumerate(order, start=1))


def _by_value(group: Sequence[str], key: Callable[[str], float]) -> list[list[str]]:
    parts: list[list[str]] = []
    for pid in sorted(group, key=lambda pid: -key(pid)):
        if parts and key(parts[-1][0]) == key(pid):
            parts[-1].append(pid)
        else:
            parts.append([pid])
    return parts


def _de_points(pid: str, group: Sequence[str], table: dict[str, list[Entry]]) -> float:
    """What a player scored in games against the others tied with it (shown as DE)."""
    members = set(group) - {pid}
    against: dict[str, list[float]] = {}
    for e in table[pid]:
        if e.played and e.opponent in members:
            against.setdefault(e.opponent, []).append(e.points)
    return float(sum(sum(v) / len(v) for v in against.values()))


def final_standings(t: Tournament) -> tuple[Standing, ...]:
    return standings(t) if t.status is Status.FINISHED else ()
