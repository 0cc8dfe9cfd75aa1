"""The send budget shared by the processes of one bot (``Store.reserve_sends``, ``hold_sends``,
``prune_sends``; issue 29), checked against every backend of the contract suite
(test_contract.BACKENDS): the GCRA per scope, the refusal beyond ``max_wait`` that changes
nothing, a hold, and two stores on one database (two processes' connections) reserving at once
never both getting the same slot."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from storage_helpers import give_back
from test_contract import BACKENDS, T0

from bot.storage import SQLiteStore, Store


@pytest.fixture(params=[factory for _, factory in BACKENDS], ids=[name for name, _ in BACKENDS])
def store(request, tmp_path: Path):
    s = request.param(tmp_path)
    yield s
    give_back(s)


CHAT = ("chat:-100", 1.1, 2.2)       # one per 1.1 s, three at once
ALL = ("all", 0.05, 0.05)


def test_a_scope_lets_its_burst_through_then_spaces(store: Store) -> None:
    starts = [store.reserve_sends([CHAT], T0, max_wait=10.0) for _ in range(5)]
    assert starts[:3] == [T0, T0, T0]
    assert starts[3] == pytest.approx(T0 + 1.1) and starts[4] == pytest.approx(T0 + 2.2)


def test_a_send_beyond_max_wait_is_refused_and_takes_nothing(store: Store) -> None:
    for _ in range(3):
        assert store.reserve_sends([CHAT], T0, max_wait=0.0) == T0
    refused = store.reserve_sends([CHAT], T0, max_wait=0.5)
    assert refused == pytest.approx(T0 + 1.1)
    # Nothing was taken: the next send is still due at the same time.
    assert store.reserve_sends([CHAT], T0, max_wait=5.0) == pytest.approx(T0 + 1.1)
    assert store.reserve_sends([CHAT], T0, max_wait=5.0) == pytest.approx(T0 + 2.2)


def test_every_scope_must_allow_the_send_and_all_move_on(store: Store) -> None:
    # The global scope is busy: a chat's first message waits for it, and both are reserved.
    for _ in range(2):
        store.reserve_sends([ALL], T0, max_wait=1.0)
    start = store.reserve_sends([CHAT, ALL], T0, max_wait=1.0)
    assert start == pytest.approx(T0 + 0.05)
    assert store.reserve_sends([ALL], T0, max_wait=1.0) == pytest.approx(T0 + 0.1)
    # Later on, both scopes are free again.
    assert store.reserve_sends([CHAT, ALL], T0 + 100, max_wait=0.0) == T0 + 100


def test_a_hold_keeps_the_scope_back_and_never_moves_it_back(store: Store) -> None:
    store.hold_sends(CHAT[0], T0 + 30 + CHAT[2])
    assert store.reserve_sends([CHAT], T0, max_wait=5.0) == pytest.approx(T0 + 30)
    store.hold_sends(CHAT[0], T0 + 1)             # an older, shorter wait changes nothing
    assert store.reserve_sends([CHAT], T0, max_wait=60.0) == pytest.approx(T0 + 30)


def test_prune_forgets_scopes_that_ran_out(store: Store) -> None:
    store.reserve_sends([CHAT], T0, max_wait=0.0)
    store.reserve_sends([("chat:-200", 1.1, 2.2)], T0 + 50, max_wait=0.0)
    assert store.prune_sends(T0 + 10) == 1
    assert store.reserve_sends([CHAT], T0 + 1, max_wait=0.0) == T0 + 1
    assert store.reserve_sends([("chat:-200", 1.1, 2.2)], T0 + 50, max_wait=0.0) == pytest.approx(T0 + 50)


def test_two_connections_reserving_at_once_never_share_a_slot(store: Store, tmp_path: Path) -> None:
    if isinstance(store, SQLiteStore):
        other: Store = SQLiteStore(store.path, busy_timeout=5.0)
    else:
        from bot.storage.postgres import PostgresStore
        assert isinstance(store, PostgresStore)
        other = PostgresStore(store.url)
    scope = ("all", 0.01, 0.0)
    got: list[float] = []
    lock = threading.Lock()

    def reserve(s: Store) -> None:
        for _ in range(40):
            start = s.reserve_sends([scope], T0, max_wait=100.0)
            with lock:
                got.append(start)

    try:
        threads = [threading.Thread(target=reserve, args=(s,)) for s in (store, other)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    finally:
        other.close()
    assert sorted(round((start - T0) / 0.01) for start in got) == list(range(80))
