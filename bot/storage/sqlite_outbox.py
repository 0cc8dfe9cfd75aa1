"""The SQLite side of the outbox (mixed into ``SQLiteStore``): messages waiting for delivery, claimed
with a lease by the process that sends them.

A process claims due rows (``claimed_by`` its owner id, ``lease_until`` a time) in one write
transaction, which SQLite's write lock (``BEGIN IMMEDIATE``) makes atomic: another process never
gets a claimed row until its lease has run out.  Marking a row sent, counting its delivered parts
or putting it back is done only by its owner (an ownerless call acts only on an unclaimed row).
A row's chat stays with the process that holds any of its rows, so a chat's messages keep their
order across processes.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from bot.redact import redact

from .records import OutboxRecord, field_names

_OUTBOX_COLUMNS = ", ".join(field_names(OutboxRecord))
ERROR_CHARS = 500


def _owned(owner: str | None) -> tuple[str, tuple[Any, ...]]:
    """The condition that a row is the caller's to change."""
    if owner is None:
        return "claimed_by IS NULL", ()
    return "claimed_by=?", (owner,)


class SQLiteOutbox:
    """The outbox methods of the storage contract (``bot/storage/base.py``); the store gives
    ``transaction``, ``db`` and its record readers."""

    db: Any

    if TYPE_CHECKING:          # given by SQLiteStore
        def transaction(self, wait: float | None = None) -> AbstractContextManager[None]: ...

        def _records(self, cls: type, where: str, params: tuple = ()) -> list[Any]: ...

        def _record(self, cls: type, where: str, params: tuple = ()) -> Any: ...

        def _all(self, sql: str, params: tuple = (), first: bool = False) -> list[dict[str, Any]]: ...

        def _one(self, sql: str, params: tuple = ()) -> dict[str, Any] | None: ...

    def enqueue(self, platform: str, chat_id: str, payload: str, now: float) -> int:
        with self.transaction():
            cur = self.db.execute(
                "INSERT INTO outbox (platform, chat_id, payload, next_attempt_at, created_at) VALUES (?,?,?,?,?)",
                (platform, chat_id, payload, now, now))
            return int(cur.lastrowid)

    def due_messages(self, platform: str, now: float, limit: int = 50,
                     exclude: Sequence[str] = ()) -> list[OutboxRecord]:
        skip = f" AND chat_id NOT IN ({','.join('?' * len(exclude))})" if exclude else ""
        return self._records(OutboxRecord, f"platform=? AND status='pending' AND next_attempt_at<=?{skip} "
                             "ORDER BY id LIMIT ?", (platform, now, *exclude, limit))

    def claim_messages(self, platform: str, owner: str, now: float, lease_until: float, limit: int = 50,
                       exclude: Sequence[str] = ()) -> list[OutboxRecord]:
        skip = f" AND o.chat_id NOT IN ({','.join('?' * len(exclude))})" if exclude else ""
        with self.transaction():
            # Read and claimed under one write lock: no other process claims between the two.
            rows = self._all(
                "SELECT o.id AS id FROM outbox o WHERE o.platform=? AND o.status='pending' AND o.next_attempt_at<=? "
                "AND (o.claimed_by IS NULL OR o.claimed_by=? OR o.lease_until<=?)"
                f"{skip} AND NOT EXISTS (SELECT 1 FROM outbox h WHERE h.platform=o.platform AND h.chat_id=o.chat_id "
                "AND h.status='pending' AND h.claimed_by<>? AND h.lease_until>?) ORDER BY o.id LIMIT ?",
                (platform, now, owner, now, *exclude, owner, now, limit))
            ids = [int(row["id"]) for row in rows]
            if not ids:
                return []
            marks = ",".join("?" * len(ids))
            self.db.execute(f"UPDATE outbox SET claimed_by=?, lease_until=? WHERE id IN ({marks})",
                            (owner, lease_until, *ids))
            return self._records(OutboxRecord, f"id IN ({marks}) ORDER BY id", tuple(ids))

    def hold_messages(self, message_ids: Collection[int], owner: str, lease_until: float) -> set[int]:
        ids = list(message_ids)
        if not ids:
            return set()
        marks = ",".join("?" * len(message_ids))
        with self.transaction():
            self.db.execute(f"UPDATE outbox SET lease_until=? WHERE id IN ({marks}) AND claimed_by=? "
                            "AND status='pending'", (lease_until, *ids, owner))
            rows = self._all(f"SELECT id FROM outbox WHERE id IN ({marks}) AND claimed_by=? AND status='pending'",
                             (*ids, owner))
            return {int(row["id"]) for row in rows}

    def release_messages(self, owner: str) -> int:
        with self.transaction():
            cur = self.db.execute("UPDATE outbox SET claimed_by=NULL, lease_until=NULL "
                                  "WHERE claimed_by=? AND status='pending'", (owner,))
            return int(cur.rowcount)

    def outbox_message(self, message_id: int) -> OutboxRecord | None:
        return self._record(OutboxRecord, "id=?", (message_id,))

    def find_outbox(self, platform: str | None = None, status: str | None = None) -> list[OutboxRecord]:
        given = {name: value for name, value in (("platform", platform), ("status", status)) if value is not None}
        where = " AND ".join(f"{name}=?" for name in given) or "1"
        return self._records(OutboxRecord, f"{where} ORDER BY id", tuple(given.values()))

    def mark_sent(self, message_id: int, now: float, owner: str | None = None) -> bool:
        mine, params = _owned(owner)
        with self.transaction():
            cur = self.db.execute("UPDATE outbox SET status='sent', sent_at=?, claimed_by=NULL, lease_until=NULL "
                                  f"WHERE id=? AND status='pending' AND {mine}", (now, message_id, *params))
            return cur.rowcount == 1

    def retry_later(self, message_id: int, at: float, error: str, owner: str | None = None) -> None:
        mine, params = _owned(owner)
        with self.transaction():
            self.db.execute("UPDATE outbox SET attempts=attempts+1, next_attempt_at=?, error=?, claimed_by=NULL, "
                            f"lease_until=NULL WHERE id=? AND status='pending' AND {mine}",
                            (at, redact(error)[:ERROR_CHARS], message_id, *params))

    def set_delivered(self, message_id: int, delivered: int, owner: str | None = None,
                      lease_until: float | None = None) -> None:
        mine, params = _owned(owner)
        with self.transaction():
            self.db.execute("UPDATE outbox SET delivered=?, lease_until=coalesce(?, lease_until) "
                            f"WHERE id=? AND status='pending' AND {mine}",
                            (delivered, lease_until, message_id, *params))

    def drop_message(self, message_id: int, error: str, owner: str | None = None) -> None:
        mine, params = _owned(owner)
        with self.transaction():
            self.db.execute("UPDATE outbox SET status='dropped', attempts=attempts+1, error=?, claimed_by=NULL, "
                            f"lease_until=NULL WHERE id=? AND status='pending' AND {mine}",
                            (redact(error)[:ERROR_CHARS], message_id, *params))

    def prune_outbox(self, before: float, limit: int = 500) -> int:
        with self.transaction():
            cur = self.db.execute(
                "DELETE FROM outbox WHERE id IN (SELECT id FROM outbox WHERE status IN ('sent', 'dropped') "
                "AND created_at<? ORDER BY id LIMIT ?)", (before, limit))
            return int(cur.rowcount)

    def outbox_platforms(self) -> list[str]:
        return [r["platform"] for r in self._all("SELECT DISTINCT platform FROM outbox WHERE status='pending'")]

    def next_wakeup(self, platform: str | None) -> float | None:
        where = " AND platform=?" if platform is not None else ""
        params = (platform,) if platform is not None else ()
        # A row another process holds is due again for us only when its lease runs out.
        outbox = self._one("SELECT min(CASE WHEN claimed_by IS NOT NULL AND lease_until>next_attempt_at "
                           f"THEN lease_until ELSE next_attempt_at END) AS t FROM outbox WHERE status='pending'{where}",
                           params)
        clocks = self._one(
            "SELECT min(CASE WHEN reminded=0 THEN deadline_at - move_seconds / 10.0 ELSE deadline_at END) AS t "
            f"FROM games WHERE status='active' AND deadline_at IS NOT NULL{where}", params)
        times = [row["t"] for row in (outbox, clocks) if row and row["t"] is not None]
        return min(times) if times else None
