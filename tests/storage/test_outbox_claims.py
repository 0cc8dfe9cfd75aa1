"""The storage contract's outbox claims (issue 18): a row is claimed with a lease by one owner at a
time, only its owner marks, counts or puts it back, and old sent or dropped rows are pruned."""

from __future__ import annotations

from pathlib import Path

import pytest
from storage_helpers import give_back
from test_contract import BACKENDS

from bot.storage import Store

T0 = 1_700_000_000.0
P, G1, G2 = "test", "g1", "g2"
A, B = "host:1", "host:2"


@pytest.fixture(params=[factory for _, factory in BACKENDS], ids=[name for name, _ in BACKENDS])
def store(request, tmp_path: Path):
    """Each backend of the contract suite (test_contract.BACKENDS), on an empty database."""
    s: Store = request.param(tmp_path)
    yield s
    give_back(s)


def test_a_claim_gives_each_row_to_one_owner_until_the_lease_ends(store):
    first = store.enqueue(P, G1, "a", T0)
    second = store.enqueue(P, G2, "b", T0)
    assert [m.id for m in store.claim_messages(P, A, T0, T0 + 60, limit=1)] == [first]
    claimed = store.outbox_message(first)
    assert (claimed.claimed_by, claimed.lease_until) == (A, T0 + 60)
    assert [m.id for m in store.claim_messages(P, B, T0 + 1, T0 + 61)] == [second]
    assert [m.id for m in store.claim_messages(P, B, T0 + 59, T0 + 119)] == [second]     # its own only
    assert [m.id for m in store.claim_messages(P, B, T0 + 60, T0 + 120)] == [first, second]
    assert store.outbox_message(first).claimed_by == B


def test_a_chat_with_a_held_row_is_left_to_its_holder(store):
    held = store.enqueue(P, G1, "a", T0)
    store.claim_messages(P, A, T0, T0 + 60)
    later = store.enqueue(P, G1, "b", T0 + 1)
    assert store.claim_messages(P, B, T0 + 2, T0 + 62) == []
    assert [m.id for m in store.claim_messages(P, A, T0 + 2, T0 + 62)] == [held, later]


def test_claims_skip_excluded_chats_other_platforms_and_rows_not_due(store):
    store.enqueue(P, G1, "a", T0)
    store.enqueue("other", G2, "b", T0)
    late = store.enqueue(P, G2, "c", T0 + 100)
    assert store.claim_messages(P, A, T0, T0 + 60, exclude=[G1]) == []
    assert [m.id for m in store.claim_messages(P, A, T0 + 100, T0 + 160, exclude=[G1])] == [late]


def test_only_the_owner_marks_counts_puts_back_or_drops_a_claimed_row(store):
    mid = store.enqueue(P, G1, "a", T0)
    store.claim_messages(P, A, T0, T0 + 60)
    assert store.mark_sent(mid, T0 + 1, B) is False and store.mark_sent(mid, T0 + 1) is False
    store.set_delivered(mid, 2, B)
    store.retry_later(mid, T0 + 10, "x", B)
    store.drop_message(mid, "x", B)
    row = store.outbox_message(mid)
    assert (row.status, row.delivered, row.attempts, row.claimed_by) == ("pending", 0, 0, A)
    store.set_delivered(mid, 2, A, T0 + 90)
    assert (store.outbox_message(mid).delivered, store.outbox_message(mid).lease_until) == (2, T0 + 90)
    store.retry_later(mid, T0 + 10, "502", A)
    row = store.outbox_message(mid)
    assert (row.attempts, row.next_attempt_at, row.claimed_by, row.lease_until) == (1, T0 + 10, None, None)
    store.claim_messages(P, B, T0 + 10, T0 + 70)
    assert store.mark_sent(mid, T0 + 11, A) is False
    assert store.mark_sent(mid, T0 + 11, B) is True
    row = store.outbox_message(mid)
    assert (row.status, row.claimed_by, row.delivered) == ("sent", None, 2)


def test_holding_renews_only_the_owners_pending_rows(store):
    a, b, c = (store.enqueue(P, chat, "x", T0) for chat in ("g1", "g2", "g3"))
    store.claim_messages(P, A, T0, T0 + 60)
    store.mark_sent(c, T0 + 1, A)
    assert store.hold_messages([a, b, c], A, T0 + 200) == {a, b}
    assert store.outbox_message(a).lease_until == T0 + 200
    assert store.hold_messages([a], B, T0 + 300) == set() and store.hold_messages([], A, T0) == set()
    assert store.outbox_message(a).lease_until == T0 + 200


def test_releasing_gives_up_every_claim_of_an_owner(store):
    a = store.enqueue(P, G1, "x", T0)
    b = store.enqueue(P, G2, "y", T0)
    store.claim_messages(P, A, T0, T0 + 600)
    assert store.release_messages(A) == 2 and store.release_messages(A) == 0
    assert [m.id for m in store.claim_messages(P, B, T0 + 1, T0 + 61)] == [a, b]


def test_a_held_row_wakes_others_when_its_lease_ends(store):
    store.enqueue(P, G1, "x", T0)
    store.claim_messages(P, A, T0, T0 + 60)
    assert store.next_wakeup(P) == T0 + 60


def test_pruning_deletes_old_sent_and_dropped_rows_oldest_first_in_batches(store):
    sent = [store.enqueue(P, G1, f"s{i}", T0 + i) for i in range(5)]
    for mid in sent:
        store.mark_sent(mid, T0 + 10)
    dropped = store.enqueue(P, G1, "d", T0 + 5)
    store.drop_message(dropped, "gone")
    pending = store.enqueue(P, G1, "p", T0)
    young = store.enqueue(P, G1, "y", T0 + 100)
    store.mark_sent(young, T0 + 101)
    assert store.prune_outbox(T0 + 50, limit=3) == 3
    assert [m.id for m in store.find_outbox()] == [*sent[3:], dropped, pending, young]
    assert store.prune_outbox(T0 + 50, limit=3) == 3
    assert store.prune_outbox(T0 + 50, limit=3) == 0
    assert [m.id for m in store.find_outbox()] == [pending, young]
