"""The storage contract (``bot.storage.base.Store``), checked against every backend.

Written from the docstrings of base.py and records.py, not from any one implementation: a new
backend is added to BACKENDS below and must pass the same tests unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from storage_helpers import give_back

from bot.rules import Position
from bot.storage import (
    ChallengeRecord,
    ChatRecord,
    GameRecord,
    MoveRecord,
    NotifyRecord,
    OutboxRecord,
    PlayerRecord,
    SQLiteStore,
    StaleGame,
    Store,
)
from bot.storage.base import NEW_CHALLENGE_FIELDS, NEW_CHALLENGE_OPTIONAL, NEW_GAME_FIELDS, NEW_GAME_OPTIONAL
from bot.storage.records import AnalysisRecord


# Every backend the contract is checked against: (name, factory); a factory gets an empty
# directory of its own and returns an open, empty store.
def _postgres(_tmp_path: Path) -> Store:
    """An empty, migrated database on this test process's PostgreSQL server (tests/pg_server.py;
    the test skips where there is none, unless DRAUGHTS_REQUIRE_POSTGRES=1): a new one, or one a
    finished test gave back emptied (storage_helpers.give_back)."""
    from storage_helpers import contract_database_url

    from bot.storage.postgres import PostgresStore

    return PostgresStore(contract_database_url(), busy_timeout=1.0)


BACKENDS: list[tuple[str, Callable[[Path], Store]]] = [
    ("sqlite", lambda tmp_path: SQLiteStore(tmp_path / "contract.db", busy_timeout=1.0)),
    ("postgres", _postgres),
]

T0 = 1_700_000_000.0
P = "test"
OTHER = "other"
GROUP = "-1001234567890"
GROUP2 = "-1009876543210"
START = Position.start("italian")
FEN = START.fen()
HOUR = 3600


def _line(count: int) -> list[tuple[str, tuple[int, ...], tuple[int, ...], str]]:
    """(notation, path, captured, fen after) of the first ``count`` moves of a real game."""
    position, line = START, []
    for _ in range(count):
        move = position.legal_moves()[0]
        position = position.play(move)
        notation = ("x" if move.captured else "-").join(map(str, move.path))
        line.append((notation, tuple(move.path), tuple(move.captured), position.fen()))
    return line


LINE = _line(6)


@pytest.fixture(params=[factory for _, factory in BACKENDS], ids=[name for name, _ in BACKENDS])
def make_store(request, tmp_path: Path):
    """Opens stores of the backend under test, each on its own empty database; closes them after."""
    opened: list[Store] = []

    def make() -> Store:
        folder = tmp_path / f"db{len(opened)}"
        folder.mkdir()
        opened.append(request.param(folder))
        return opened[-1]

    yield make
    for store in opened:
        give_back(store)


@pytest.fixture
def store(make_store) -> Store:
    return make_store()


# -- helpers ----------------------------------------------------------------------------------------


def challenge_fields(**over) -> dict:
    fields = dict(platform=P, chat_id=GROUP, challenger_id="1001", challenger_name="Ana", target_username="bob",
                  variant="italian", color="white", move_seconds=HOUR, created_at=T0)
    fields.update(over)
    return fields


def game_fields(**over) -> dict:
    """The fields create_game needs (and a deadline an hour away)."""
    fields = dict(platform=P, chat_id=GROUP, variant="italian", white_id="1001", white_name="Ana",
                  black_id="1002", black_name="Bob", fen=FEN, move_seconds=HOUR, created_at=T0,
                  deadline_at=T0 + HOUR)
    fields.update(over)
    return fields


def required(allowed, optional) -> list[str]:
    return sorted(set(allowed) - set(optional))


def new_game(store: Store, **over) -> GameRecord:
    return store.game(store.create_game(game_fields(**over)))


def move_fields(ply: int, by_user: str = "1001") -> dict:
    notation, _, _, fen_after = LINE[ply - 1]
    return dict(ply=ply, notation=notation, fen_after=fen_after, by_user=by_user, played_at=T0 + ply)


def play(store: Store, game_id: int, count: int) -> GameRecord:
    """Play the first ``count`` moves of LINE in a game, the way the service does."""
    for ply in range(1, count + 1):
        game = store.game(game_id)
        _, path, captured, fen_after = LINE[ply - 1]
        store.update_game(game_id, game.version, {"fen": fen_after, "ply": ply, "last_path": list(path),
                                                  "last_captured": list(captured)}, move=move_fields(ply))
    return store.game(game_id)


def finish(store: Store, game_id: int, at: float = T0 + 100) -> GameRecord:
    game = store.game(game_id)
    store.update_game(game_id, game.version, {"status": "finished", "result_score": "1-0", "winner": "W",
                                              "result_reason": "resign", "finished_at": at, "deadline_at": None})
    return store.game(game_id)


# -- players ----------------------------------------------------------------------------------------


def test_unknown_player_is_none(store):
    assert store.player(P, "1001") is None


def test_save_player_stores_a_player_record(store):
    assert store.save_player(P, "1001", "Ana", "ana", "it", T0) is True
    assert store.player(P, "1001") == PlayerRecord(P, "1001", "Ana", "ana", "it", T0)


def test_save_player_unchanged_returns_false_and_writes_nothing(store):
    store.save_player(P, "1001", "Ana", "ana", "it", T0)
    before = store.dump()
    assert store.save_player(P, "1001", "Ana", "ana", "it", T0 + 60) is False
    assert store.dump() == before
    assert store.player(P, "1001").updated_at == T0


def test_save_player_with_a_new_name_updates_it(store):
    store.save_player(P, "1001", "Ana", "ana", "it", T0)
    assert store.save_player(P, "1001", "Ana Rossi", None, None, T0 + 60) is True
    assert store.player(P, "1001") == PlayerRecord(P, "1001", "Ana Rossi", None, None, T0 + 60)


def test_players_are_kept_per_platform(store):
    store.save_player(P, "1001", "Ana", "ana", "it", T0)
    assert store.player(OTHER, "1001") is None


# -- turn notifications (/notify) -------------------------------------------------------------------


def test_a_user_who_never_chose_has_no_notify_setting(store):
    assert store.notify_setting(P, "1001") is None
    # Nothing to mark: a user without the setting is pinged in the group anyway.
    assert store.set_unreachable(P, "1001", True, T0) is False
    assert store.notify_setting(P, "1001") is None


def test_set_notify_stores_the_choice_per_platform(store):
    store.set_notify(P, "1001", True, T0)
    assert store.notify_setting(P, "1001") == NotifyRecord(P, "1001", True, False, T0)
    assert store.notify_setting(OTHER, "1001") is None
    store.set_notify(P, "1001", False, T0 + 60)
    assert store.notify_setting(P, "1001") == NotifyRecord(P, "1001", False, False, T0 + 60)


def test_unreachable_is_noted_once_and_cleared_by_a_new_choice(store):
    store.set_notify(P, "1001", True, T0)
    assert store.set_unreachable(P, "1001", True, T0 + 1) is True
    assert store.set_unreachable(P, "1001", True, T0 + 2) is False
    assert store.notify_setting(P, "1001") == NotifyRecord(P, "1001", True, True, T0 + 1)
    store.set_notify(P, "1001", True, T0 + 3)
    assert store.notify_setting(P, "1001").unreachable is False
    store.set_unreachable(P, "1001", True, T0 + 4)
    assert store.set_unreachable(P, "1001", False, T0 + 5) is True
    assert store.notify_setting(P, "1001") == NotifyRecord(P, "1001", True, False, T0 + 5)


# -- chats ------------------------------------------------------------------------------------------


def test_unknown_chat_is_none(store):
    assert store.chat(P, GROUP) is None


def test_ensure_chat_creates_a_chat_with_no_settings(store):
    chat = store.ensure_chat(P, GROUP, "group", T0)
    assert chat == ChatRecord(P, GROUP, "group", None, None, T0)
    assert store.chat(P, GROUP) == chat


def test_ensure_chat_of_a_known_chat_returns_it_and_writes_nothing(store):
    first = store.ensure_chat(P, GROUP, "group", T0)
    store.set_chat(P, GROUP, language="it")
    before = store.dump()
    again = store.ensure_chat(P, GROUP, "supergroup", T0 + 60)
    assert again == store.chat(P, GROUP) == ChatRecord(P, GROUP, first.kind, "it", None, T0)
    assert store.dump() == before


def test_set_chat_changes_language_and_variant(store):
    store.ensure_chat(P, GROUP, "group", T0)
    store.set_chat(P, GROUP, language="es", variant="spanish")
    store.set_chat(P, GROUP, variant="italian")
    chat = store.chat(P, GROUP)
    assert (chat.language, chat.variant) == ("es", "italian")


def test_set_chat_rejects_an_unknown_field_and_changes_nothing(store):
    store.ensure_chat(P, GROUP, "group", T0)
    before = store.dump()
    with pytest.raises(ValueError):
        store.set_chat(P, GROUP, language="it", colour="white")
    assert store.dump() == before


def test_set_chat_rejects_a_column_the_caller_may_not_set(store):
    store.ensure_chat(P, GROUP, "group", T0)
    before = store.dump()
    with pytest.raises(ValueError):
        store.set_chat(P, GROUP, kind="private")
    assert store.dump() == before


def test_move_chat_carries_settings_challenges_games_and_board_messages_over(store):
    store.ensure_chat(P, GROUP, "group", T0)
    store.set_chat(P, GROUP, language="it", variant="italian")
    challenge = store.create_challenge(**challenge_fields())
    game = new_game(store).id
    store.remember_message(P, GROUP, "m1", game)
    store.move_chat(P, GROUP, GROUP2)
    assert store.chat(P, GROUP) is None
    assert store.chat(P, GROUP2) == ChatRecord(P, GROUP2, "group", "it", "italian", T0)
    assert [c.id for c in store.open_challenges(P, GROUP2)] == [challenge]
    assert [g.id for g in store.active_games(P, GROUP2)] == [game]
    assert store.game(game).chat_id == GROUP2 and store.challenge(challenge).chat_id == GROUP2
    assert store.board_messages(P, GROUP2) == [("m1", game)]
    assert store.game_of_message(P, GROUP2, "m1") == game


def test_move_chat_leaves_nothing_under_the_old_id(store):
    store.ensure_chat(P, GROUP, "group", T0)
    store.create_challenge(**challenge_fields())
    game = new_game(store).id
    store.remember_message(P, GROUP, "m1", game)
    store.move_chat(P, GROUP, GROUP2)
    assert store.open_challenges(P, GROUP) == [] and store.active_games(P, GROUP) == []
    assert store.board_messages(P, GROUP) == [] and store.game_of_message(P, GROUP, "m1") is None
    assert store.find_challenges(chat_id=GROUP) == [] and store.find_games(chat_id=GROUP) == []


def test_move_chat_keeps_the_new_chats_settings_when_it_exists(store):
    store.ensure_chat(P, GROUP, "group", T0)
    store.set_chat(P, GROUP, language="it", variant="italian")
    store.ensure_chat(P, GROUP2, "supergroup", T0 + 60)
    store.set_chat(P, GROUP2, language="es")
    challenge = store.create_challenge(**challenge_fields())
    store.move_chat(P, GROUP, GROUP2)
    assert store.chat(P, GROUP) is None
    assert store.chat(P, GROUP2) == ChatRecord(P, GROUP2, "supergroup", "es", None, T0 + 60)
    assert [c.id for c in store.open_challenges(P, GROUP2)] == [challenge]


def test_move_chat_keeps_the_new_chats_game_for_a_message_known_under_both_ids(store):
    store.ensure_chat(P, GROUP, "group", T0)
    store.ensure_chat(P, GROUP2, "supergroup", T0)
    old_game, new_game_id = new_game(store).id, new_game(store, chat_id=GROUP2).id
    store.remember_message(P, GROUP, "m1", old_game)
    store.remember_message(P, GROUP, "m2", old_game)
    store.remember_message(P, GROUP2, "m1", new_game_id)
    store.move_chat(P, GROUP, GROUP2)
    assert store.game_of_message(P, GROUP2, "m1") == new_game_id
    assert store.game_of_message(P, GROUP2, "m2") == old_game
    assert sorted(store.board_messages(P, GROUP2)) == [("m1", new_game_id), ("m2", old_game)]


def test_move_chat_touches_only_its_platform(store):
    store.ensure_chat(P, GROUP, "group", T0)
    store.ensure_chat(OTHER, GROUP, "group", T0)
    game = new_game(store, platform=OTHER).id
    store.move_chat(P, GROUP, GROUP2)
    assert store.chat(OTHER, GROUP) is not None and store.game(game).chat_id == GROUP


# -- challenges ---------------------------------------------------------------------------------------


def test_challenges_lapse_after_the_lifetime_or_their_move_time_if_longer(store):
    day = store.create_challenge(**challenge_fields(move_seconds=HOUR, created_at=T0))
    week = store.create_challenge(**challenge_fields(move_seconds=7 * 24 * HOUR, created_at=T0))
    other = store.create_challenge(**challenge_fields(platform=OTHER, move_seconds=HOUR, created_at=T0 + 60))
    assert store.lapsed_challenges(P, T0 + 24 * HOUR - 1, 24 * HOUR) == []
    assert [c.id for c in store.lapsed_challenges(P, T0 + 24 * HOUR, 24 * HOUR)] == [day]
    assert [c.id for c in store.lapsed_challenges(None, T0 + 8 * 24 * HOUR, 24 * HOUR)] == [day, week, other]
    assert store.next_challenge_lapse(P, 24 * HOUR) == T0 + 24 * HOUR
    assert store.next_challenge_lapse(OTHER, 24 * HOUR) == T0 + 60 + 24 * HOUR
    store.close_challenge(day, "cancelled")
    assert store.lapsed_challenges(P, T0 + 24 * HOUR, 24 * HOUR) == []
    assert store.next_challenge_lapse(P, 24 * HOUR) == T0 + 7 * 24 * HOUR
    store.close_challenge(week, "expired")
    assert store.next_challenge_lapse(P, 24 * HOUR) is None


def test_the_messages_of_a_challenge_are_remembered(store):
    cid = store.create_challenge(**challenge_fields())
    assert store.challenge_messages(cid) == []
    store.remember_challenge_message(P, GROUP, "10", cid)
    store.remember_challenge_message(P, GROUP, "12", cid)
    store.remember_challenge_message(P, GROUP, "12", cid)
    assert store.challenge_messages(cid) == [(P, GROUP, "10"), (P, GROUP, "12")]
    assert store.challenge_messages(cid + 1) == []


def test_create_challenge_stores_an_open_challenge(store):
    cid = store.create_challenge(**challenge_fields())
    assert store.challenge(cid) == ChallengeRecord(cid, P, GROUP, "1001", "Ana", "bob", "italian", "white", HOUR,
                                                   "open", T0, None)


def test_create_challenge_without_target_username(store):
    fields = challenge_fields()
    del fields["target_username"]
    assert store.challenge(store.create_challenge(**fields)).target_username is None


def test_unknown_challenge_is_none(store):
    assert store.challenge(1) is None


def test_create_challenge_rejects_an_unknown_field_and_changes_nothing(store):
    before = store.dump()
    with pytest.raises(ValueError):
        store.create_challenge(**challenge_fields(colour="white"))
    assert store.dump() == before


@pytest.mark.parametrize("assigned", ["id", "status", "game_id"])
def test_create_challenge_rejects_a_field_the_store_assigns(store, assigned):
    before = store.dump()
    with pytest.raises(ValueError):
        store.create_challenge(**challenge_fields(**{assigned: 7 if assigned != "status" else "accepted"}))
    assert store.dump() == before


def test_create_challenge_rejects_each_missing_required_field_and_changes_nothing(store):
    before = store.dump()
    for name in required(NEW_CHALLENGE_FIELDS, NEW_CHALLENGE_OPTIONAL):
        fields = challenge_fields()
        del fields[name]
        with pytest.raises(ValueError):
            store.create_challenge(**fields)
    assert store.dump() == before


def test_open_challenges_are_those_still_open_in_the_chat_oldest_first(store):
    first = store.create_challenge(**challenge_fields())
    closed = store.create_challenge(**challenge_fields(created_at=T0 + 1))
    second = store.create_challenge(**challenge_fields(created_at=T0 + 2))
    store.create_challenge(**challenge_fields(chat_id=GROUP2))
    store.create_challenge(**challenge_fields(platform=OTHER))
    store.close_challenge(closed, "cancelled")
    assert [c.id for c in store.open_challenges(P, GROUP)] == [first, second]
    assert all(isinstance(c, ChallengeRecord) for c in store.open_challenges(P, GROUP))


def test_find_challenges_filters_by_platform_chat_and_status_oldest_first(store):
    a = store.create_challenge(**challenge_fields())
    b = store.create_challenge(**challenge_fields(chat_id=GROUP2, created_at=T0 + 1))
    c = store.create_challenge(**challenge_fields(platform=OTHER, created_at=T0 + 2))
    d = store.create_challenge(**challenge_fields(created_at=T0 + 3))
    store.close_challenge(d, "expired")
    assert [x.id for x in store.find_challenges()] == [a, b, c, d]
    assert [x.id for x in store.find_challenges(platform=P)] == [a, b, d]
    assert [x.id for x in store.find_challenges(platform=P, chat_id=GROUP)] == [a, d]
    assert [x.id for x in store.find_challenges(chat_id=GROUP)] == [a, c, d]
    assert [x.id for x in store.find_challenges(status="open")] == [a, b, c]
    assert [x.id for x in store.find_challenges(platform=P, chat_id=GROUP, status="expired")] == [d]


@pytest.mark.parametrize("status", ["declined", "cancelled", "expired"])
def test_close_challenge_closes_an_open_challenge(store, status):
    cid = store.create_challenge(**challenge_fields())
    assert store.close_challenge(cid, status) is True
    assert store.challenge(cid).status == status and store.challenge(cid).game_id is None
    assert store.open_challenges(P, GROUP) == []


def test_close_challenge_that_is_no_longer_open_returns_false_and_keeps_its_status(store):
    cid = store.create_challenge(**challenge_fields())
    store.close_challenge(cid, "declined")
    assert store.close_challenge(cid, "expired") is False
    assert store.challenge(cid).status == "declined"


def test_close_challenge_after_it_was_accepted_returns_false(store):
    cid = store.create_challenge(**challenge_fields())
    gid = store.accept_challenge(cid, game_fields())
    before = store.dump()
    assert store.close_challenge(cid, "cancelled") is False
    assert store.challenge(cid).status == "accepted" and store.challenge(cid).game_id == gid
    assert store.dump() == before


def test_close_challenge_as_accepted_does_not_accept_it(store):
    cid = store.create_challenge(**challenge_fields())
    try:
        closed = store.close_challenge(cid, "accepted")
    except ValueError:
        closed = False
    assert closed is False and store.challenge(cid).status == "open"


def test_accept_challenge_starts_a_game_under_the_challenges_number(store):
    cid = store.create_challenge(**challenge_fields())
    gid = store.accept_challenge(cid, game_fields())
    assert gid == cid
    challenge, game = store.challenge(cid), store.game(gid)
    assert (challenge.status, challenge.game_id) == ("accepted", gid)
    assert isinstance(game, GameRecord)
    assert (game.status, game.ply, game.version, game.reminded) == ("active", 0, 0, False)
    assert store.open_challenges(P, GROUP) == []


def test_second_accept_returns_none_and_changes_nothing(store):
    cid = store.create_challenge(**challenge_fields())
    store.accept_challenge(cid, game_fields())
    before = store.dump()
    assert store.accept_challenge(cid, game_fields(black_id="1003", black_name="Carol")) is None
    assert store.dump() == before
    assert len(store.find_games()) == 1


def test_accept_of_a_closed_challenge_returns_none_and_starts_no_game(store):
    cid = store.create_challenge(**challenge_fields())
    store.close_challenge(cid, "cancelled")
    before = store.dump()
    assert store.accept_challenge(cid, game_fields()) is None
    assert store.dump() == before and store.find_games() == []


def test_accept_challenge_rejects_bad_game_fields_and_the_challenge_stays_open(store):
    cid = store.create_challenge(**challenge_fields())
    before = store.dump()
    with pytest.raises(ValueError):
        store.accept_challenge(cid, game_fields(colour="white"))
    incomplete = game_fields()
    del incomplete["fen"]
    with pytest.raises(ValueError):
        store.accept_challenge(cid, incomplete)
    assert store.dump() == before and store.challenge(cid).status == "open"


# -- numbering ----------------------------------------------------------------------------------------


def test_challenges_and_games_share_one_numbering(store):
    first = store.create_challenge(**challenge_fields())
    game = store.create_game(game_fields())
    second = store.create_challenge(**challenge_fields())
    assert len({first, game, second}) == 3
    assert store.challenge(game) is None and store.game(first) is None and store.game(second) is None


def test_every_new_number_is_above_every_id_in_use(store):
    in_use: list[int] = []

    def new(number: int) -> None:
        assert number > max(in_use, default=0)
        in_use.append(number)

    a = store.create_challenge(**challenge_fields())
    new(a)
    new(store.create_challenge(**challenge_fields()))
    assert store.accept_challenge(a, game_fields()) == a
    new(store.create_game(game_fields()))
    new(store.create_challenge(**challenge_fields()))
    new(store.create_game(game_fields()))


# -- games ----------------------------------------------------------------------------------------------


def test_create_game_starts_active_at_ply_0_version_0_with_defaults(store):
    fields = game_fields()
    del fields["deadline_at"]
    gid = store.create_game(fields)
    assert store.game(gid) == GameRecord(
        id=gid, platform=P, chat_id=GROUP, variant="italian", start_fen=None, white_id="1001", white_name="Ana",
        black_id="1002", black_name="Bob", fen=FEN, ply=0, quiet_plies=0, version=0, status="active",
        result_score=None, result_reason=None, winner=None, draw_offer=None, move_seconds=HOUR, deadline_at=None,
        reminded=False, last_path=(), last_captured=(), created_at=T0, finished_at=None)


def test_create_game_keeps_the_optional_fields_given(store):
    _, path, captured, fen = LINE[0]
    game = new_game(store, start_fen=FEN, fen=fen, draw_offer="W", last_path=list(path),
                    last_captured=list(captured))
    assert (game.start_fen, game.fen, game.draw_offer, game.deadline_at) == (FEN, fen, "W", T0 + HOUR)
    assert game.last_path == path and isinstance(game.last_path, tuple)
    assert game.last_captured == () and isinstance(game.last_captured, tuple)


def test_unknown_game_is_none(store):
    assert store.game(1) is None


def test_create_game_rejects_an_unknown_field_and_changes_nothing(store):
    before = store.dump()
    with pytest.raises(ValueError):
        store.create_game(game_fields(colour="white"))
    assert store.dump() == before


@pytest.mark.parametrize("assigned", ["id", "version", "ply", "quiet_plies", "status", "reminded"])
def test_create_game_rejects_a_field_the_store_assigns(store, assigned):
    value = {"status": "finished", "reminded": True}.get(assigned, 5)
    before = store.dump()
    with pytest.raises(ValueError):
        store.create_game(game_fields(**{assigned: value}))
    assert store.dump() == before


def test_create_game_rejects_each_missing_required_field_and_changes_nothing(store):
    before = store.dump()
    for name in required(NEW_GAME_FIELDS, NEW_GAME_OPTIONAL):
        fields = game_fields()
        del fields[name]
        with pytest.raises(ValueError):
            store.create_game(fields)
    assert store.dump() == before


def test_update_game_changes_fields_and_bumps_the_version(store):
    game = new_game(store)
    returned = store.update_game(game.id, 0, {"draw_offer": "B", "quiet_plies": 3, "deadline_at": T0 + 2 * HOUR})
    after = store.game(game.id)
    assert returned == after            # the game as changed comes back: no read after the write
    assert (after.draw_offer, after.quiet_plies, after.deadline_at, after.version) == ("B", 3, T0 + 2 * HOUR, 1)
    assert store.moves(game.id) == []


def test_update_game_records_the_move_with_the_change(store):
    game = new_game(store)
    notation, path, _, fen = LINE[0]
    returned = store.update_game(game.id, 0, {"fen": fen, "ply": 1, "last_path": list(path)}, move=move_fields(1))
    assert store.game(game.id).fen == fen and store.game(game.id).version == 1
    assert returned == store.game(game.id)
    assert store.moves(game.id) == [MoveRecord(game.id, 1, notation, fen, "1001", T0 + 1)]


def test_update_game_returns_decoded_values(store):
    game = new_game(store)
    returned = store.update_game(game.id, 0, {"last_path": [22, 13, 6], "last_captured": [18, 10], "reminded": True})
    after = store.game(game.id)
    assert returned == after
    assert after.last_path == (22, 13, 6) and isinstance(after.last_path, tuple)
    assert after.last_captured == (18, 10) and isinstance(after.last_captured, tuple)
    assert after.reminded is True


def test_update_game_can_finish_a_game(store):
    game = finish(store, new_game(store).id)
    assert (game.status, game.result_score, game.winner, game.result_reason) == ("finished", "1-0", "W", "resign")
    assert (game.finished_at, game.deadline_at, game.version) == (T0 + 100, None, 1)


def test_update_game_with_a_stale_version_raises_and_changes_nothing(store):
    game = play(store, new_game(store).id, 1)
    before = store.dump()
    with pytest.raises(StaleGame):
        store.update_game(game.id, game.version - 1, {"fen": LINE[1][3], "ply": 2}, move=move_fields(2))
    assert store.dump() == before
    assert store.game(game.id) == game and len(store.moves(game.id)) == 1


def test_of_two_writers_at_the_same_version_exactly_one_wins(store):
    game = new_game(store)
    store.update_game(game.id, game.version, {"draw_offer": "W"})
    with pytest.raises(StaleGame):
        store.update_game(game.id, game.version, {"status": "finished", "winner": "B"})
    after = store.game(game.id)
    assert (after.draw_offer, after.status, after.version) == ("W", "active", 1)


@pytest.mark.parametrize("bad", [{"colour": "white"}, {"version": 5}, {"id": 99}])
def test_update_game_rejects_fields_the_caller_may_not_set_and_changes_nothing(store, bad):
    game = new_game(store)
    before = store.dump()
    with pytest.raises(ValueError):
        store.update_game(game.id, 0, {"draw_offer": "W", **bad})
    assert store.dump() == before


def test_update_game_rejects_an_incomplete_or_unknown_move_and_changes_nothing(store):
    game = new_game(store)
    before = store.dump()
    incomplete = move_fields(1)
    del incomplete["by_user"]
    for move in (incomplete, {**move_fields(1), "comment": "!"}, {**move_fields(1), "game_id": game.id}):
        with pytest.raises(ValueError):
            store.update_game(game.id, 0, {"fen": LINE[0][3], "ply": 1}, move=move)
    assert store.dump() == before


def test_moves_are_returned_in_order(store):
    game = play(store, new_game(store).id, 4)
    moves = store.moves(game.id)
    assert [m.ply for m in moves] == [1, 2, 3, 4]
    assert [m.fen_after for m in moves] == [fen for *_, fen in LINE[:4]]
    assert all(isinstance(m, MoveRecord) and m.game_id == game.id for m in moves)


def test_moves_of_a_game_are_its_own(store):
    a, b = new_game(store).id, new_game(store).id
    play(store, a, 2)
    assert store.moves(b) == [] and store.recent_fens(b, 4) == []


def test_recent_fens_are_the_last_few_oldest_first(store):
    game = play(store, new_game(store).id, 5)
    fens = [fen for *_, fen in LINE[:5]]
    assert store.recent_fens(game.id, 3) == fens[2:]
    assert store.recent_fens(game.id, 10) == fens


def test_active_games_are_the_chats_unfinished_games_oldest_first(store):
    a = new_game(store).id
    done = new_game(store, created_at=T0 + 1).id
    b = new_game(store, created_at=T0 + 2).id
    new_game(store, chat_id=GROUP2)
    new_game(store, platform=OTHER)
    finish(store, done)
    assert [g.id for g in store.active_games(P, GROUP)] == [a, b]


def test_recent_games_are_a_players_games_in_the_chat_newest_first(store):
    a = new_game(store).id
    b = finish(store, new_game(store, created_at=T0 + 1, white_id="1003", black_id="1001").id).id
    c = new_game(store, created_at=T0 + 2).id
    new_game(store, created_at=T0 + 3, white_id="1003", black_id="1002")
    new_game(store, created_at=T0 + 4, chat_id=GROUP2)
    assert [g.id for g in store.recent_games(P, GROUP, "1001")] == [c]
    assert [g.id for g in store.recent_games(P, GROUP, "1001", limit=5)] == [c, b, a]
    assert store.recent_games(P, GROUP, "1999", limit=5) == []


def test_last_game_is_the_chats_most_recent_finished_or_not(store):
    assert store.last_game(P, GROUP) is None
    new_game(store)
    latest = finish(store, new_game(store, created_at=T0 + 1).id)
    new_game(store, chat_id=GROUP2, created_at=T0 + 2)
    assert store.last_game(P, GROUP) == latest


def test_find_games_filters_and_returns_newest_first(store):
    a = new_game(store).id
    b = finish(store, new_game(store, created_at=T0 + 1).id).id
    c = new_game(store, chat_id=GROUP2, created_at=T0 + 2).id
    d = new_game(store, platform=OTHER, created_at=T0 + 3).id
    assert [g.id for g in store.find_games()] == [d, c, b, a]
    assert [g.id for g in store.find_games(platform=P)] == [c, b, a]
    assert [g.id for g in store.find_games(platform=P, chat_id=GROUP)] == [b, a]
    assert [g.id for g in store.find_games(chat_id=GROUP2)] == [c]
    assert [g.id for g in store.find_games(status="finished")] == [b]
    assert [g.id for g in store.find_games(status="active", limit=2)] == [d, c]


# -- reminders and due games --------------------------------------------------------------------------


def test_mark_reminded_notes_it_without_bumping_the_version(store):
    game = new_game(store)
    assert store.mark_reminded(game.id, 0) is True
    assert store.game(game.id).reminded is True and store.game(game.id).version == 0
    store.update_game(game.id, 0, {"draw_offer": "W"})          # a move read before the reminder still wins
    assert store.game(game.id).version == 1


def test_mark_reminded_twice_returns_false(store):
    game = new_game(store)
    store.mark_reminded(game.id, 0)
    before = store.dump()
    assert store.mark_reminded(game.id, 0) is False
    assert store.dump() == before


def test_mark_reminded_after_the_game_moved_on_returns_false(store):
    game = play(store, new_game(store).id, 1)
    before = store.dump()
    assert store.mark_reminded(game.id, game.version - 1) is False
    assert store.dump() == before and store.game(game.id).reminded is False


def test_due_games_is_empty_before_the_reminder_time(store):
    new_game(store)
    assert store.due_games(T0 + HOUR - HOUR / 10 - 1) == []


def test_due_games_includes_a_game_whose_reminder_is_due(store):
    game = new_game(store)
    assert store.due_games(T0 + HOUR - HOUR / 20) == [game]


def test_due_games_skips_a_reminded_game_until_its_deadline(store):
    game = new_game(store)
    store.mark_reminded(game.id, 0)
    assert store.due_games(T0 + HOUR - HOUR / 20) == []
    assert [g.id for g in store.due_games(T0 + HOUR + 1)] == [game.id]


def test_due_games_leaves_out_finished_games_and_games_without_a_clock(store):
    finish(store, new_game(store).id)
    new_game(store, deadline_at=None)
    assert store.due_games(T0 + 10 * HOUR) == []


def test_due_games_are_earliest_deadline_first(store):
    late = new_game(store, deadline_at=T0 + 2 * HOUR).id
    early = new_game(store, deadline_at=T0 + HOUR).id
    assert [g.id for g in store.due_games(T0 + 3 * HOUR)] == [early, late]


def test_due_games_of_one_platform(store):
    mine = new_game(store).id
    theirs = new_game(store, platform=OTHER, deadline_at=T0 + 60).id
    assert [g.id for g in store.due_games(T0 + 2 * HOUR, platform=P)] == [mine]
    assert [g.id for g in store.due_games(T0 + 2 * HOUR, platform=OTHER)] == [theirs]
    assert [g.id for g in store.due_games(T0 + 2 * HOUR)] == [theirs, mine]


# -- board messages ------------------------------------------------------------------------------------


def test_remember_message_names_the_game_of_a_board_message(store):
    game = new_game(store).id
    store.remember_message(P, GROUP, "501", game)
    assert store.game_of_message(P, GROUP, "501") == game
    assert store.game_of_message(P, GROUP, "502") is None
    assert store.game_of_message(P, GROUP2, "501") is None
    assert store.game_of_message(OTHER, GROUP, "501") is None


def test_board_messages_are_in_the_order_noted(store):
    a, b = new_game(store).id, new_game(store).id
    store.remember_message(P, GROUP, "509", a)
    store.remember_message(P, GROUP, "501", b)
    store.remember_message(P, GROUP, "505", a)
    store.remember_message(P, GROUP2, "502", b)
    assert store.board_messages(P, GROUP) == [("509", a), ("501", b), ("505", a)]
    assert store.board_messages(P, "-100555") == []


# -- heartbeat and downtime -----------------------------------------------------------------------------


def test_last_beat_is_none_before_any_beat(store):
    assert store.last_beat(P) is None and store.last_beat(None) is None


def test_beat_is_kept_per_platform(store):
    store.beat(P, T0)
    store.beat(OTHER, T0 + 5)
    store.beat(P, T0 + 30)
    assert (store.last_beat(P), store.last_beat(OTHER)) == (T0 + 30, T0 + 5)


def test_beat_for_every_platform(store):
    store.beat(None, T0 + 7)
    assert store.last_beat(None) == T0 + 7


def test_resume_after_downtime_pushes_active_deadlines_by_the_gap(store):
    game = new_game(store)
    store.beat(P, T0 + 100)
    assert store.resume_after_downtime(P, T0 + 1100, threshold=60) == pytest.approx(1000)
    assert store.game(game.id).deadline_at == pytest.approx(T0 + HOUR + 1000)
    assert store.last_beat(P) == T0 + 1100


def test_resume_after_downtime_happens_once(store):
    game = new_game(store)
    store.beat(P, T0)
    store.resume_after_downtime(P, T0 + 1000, threshold=60)
    deadline = store.game(game.id).deadline_at
    assert store.resume_after_downtime(P, T0 + 1001, threshold=60) == 0
    assert store.game(game.id).deadline_at == deadline


def test_resume_after_a_gap_within_the_threshold_changes_no_deadline(store):
    game = new_game(store)
    store.beat(P, T0)
    assert store.resume_after_downtime(P, T0 + 30, threshold=60) == 0
    assert store.game(game.id).deadline_at == T0 + HOUR


def test_resume_without_any_heartbeat_changes_no_deadline(store):
    game = new_game(store)
    assert store.resume_after_downtime(P, T0 + 1000, threshold=60) == 0
    assert store.game(game.id).deadline_at == T0 + HOUR


def test_resume_after_downtime_pushes_only_that_platforms_active_games(store):
    mine, theirs = new_game(store).id, new_game(store, platform=OTHER).id
    done, unclocked = finish(store, new_game(store).id, at=T0 + 50), new_game(store, deadline_at=None).id
    store.beat(P, T0)
    store.beat(OTHER, T0)
    store.resume_after_downtime(P, T0 + 1000, threshold=60)
    assert store.game(mine).deadline_at == pytest.approx(T0 + HOUR + 1000)
    assert store.game(theirs).deadline_at == T0 + HOUR
    assert store.game(done.id).deadline_at is None and store.game(unclocked).deadline_at is None
    assert store.last_beat(OTHER) == T0


def test_resume_after_downtime_of_every_platform_pushes_all_games(store):
    mine, theirs = new_game(store).id, new_game(store, platform=OTHER).id
    store.beat(None, T0)
    assert store.resume_after_downtime(None, T0 + 500, threshold=60) == pytest.approx(500)
    assert store.game(mine).deadline_at == pytest.approx(T0 + HOUR + 500)
    assert store.game(theirs).deadline_at == pytest.approx(T0 + HOUR + 500)


# -- pending questions -------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [{"game": 3, "by": "1001", "moves": ["21-17", "9-13"]}, [1, "two", None, 3.5],
                                   "resign", 42, 2.5, True, False, {"nested": {"deep": [{}]}}])
def test_pending_round_trips_any_json_value(store, value):
    store.set_pending(f"{P}:{GROUP}:1001", value)
    assert store.pending(f"{P}:{GROUP}:1001") == value
    assert type(store.pending(f"{P}:{GROUP}:1001")) is type(value)


def test_pending_of_an_unknown_key_is_none(store):
    assert store.pending("test:-100:1") is None


def test_set_pending_replaces_the_value(store):
    store.set_pending("k", {"game": 1})
    store.set_pending("k", {"game": 2})
    assert store.pending("k") == {"game": 2}


def test_drop_pending_forgets_only_that_question(store):
    store.set_pending("k1", 1)
    store.set_pending("k2", 2)
    store.drop_pending("k1")
    store.drop_pending("never-set")
    assert (store.pending("k1"), store.pending("k2")) == (None, 2)


# -- outbox -------------------------------------------------------------------------------------------


def test_enqueue_adds_a_pending_message_due_now(store):
    mid = store.enqueue(P, GROUP, '{"text": "Your move"}', T0)
    assert store.outbox_message(mid) == OutboxRecord(mid, P, GROUP, '{"text": "Your move"}', "pending", 0, T0, T0,
                                                     None, None)


def test_unknown_outbox_message_is_none(store):
    assert store.outbox_message(1) is None


def test_due_messages_are_a_platforms_messages_whose_time_has_come_oldest_first(store):
    first = store.enqueue(P, GROUP, "first", T0)
    store.enqueue(OTHER, GROUP, "other", T0 + 1)
    second = store.enqueue(P, GROUP2, "second", T0 + 5)
    late = store.enqueue(P, GROUP, "late", T0 + 10)
    assert [m.id for m in store.due_messages(P, T0 + 6)] == [first, second]
    assert [m.id for m in store.due_messages(P, T0 + 10)] == [first, second, late]
    assert all(isinstance(m, OutboxRecord) for m in store.due_messages(P, T0 + 10))


def test_due_messages_put_an_older_retried_message_first(store):
    retried = store.enqueue(P, GROUP, "retried", T0)
    newer = store.enqueue(P, GROUP, "newer", T0 + 10)
    store.retry_later(retried, T0 + 60, "timed out")
    assert [m.id for m in store.due_messages(P, T0 + 100)] == [retried, newer]


def test_due_messages_limit(store):
    ids = [store.enqueue(P, GROUP, f"m{i}", T0 + i) for i in range(5)]
    assert [m.id for m in store.due_messages(P, T0 + 10, limit=2)] == ids[:2]


def test_mark_sent_only_once(store):
    mid = store.enqueue(P, GROUP, "hello", T0)
    assert store.mark_sent(mid, T0 + 1) is True
    assert store.mark_sent(mid, T0 + 2) is False
    sent = store.outbox_message(mid)
    assert (sent.status, sent.sent_at) == ("sent", T0 + 1)
    assert store.due_messages(P, T0 + 10) == []


def test_retry_later_counts_the_attempt_and_postpones_the_message(store):
    mid = store.enqueue(P, GROUP, "hello", T0)
    store.retry_later(mid, T0 + 60, "timed out")
    msg = store.outbox_message(mid)
    assert (msg.status, msg.attempts, msg.next_attempt_at, msg.error) == ("pending", 1, T0 + 60, "timed out")
    assert store.due_messages(P, T0 + 59) == []
    assert [m.id for m in store.due_messages(P, T0 + 60)] == [mid]
    store.retry_later(mid, T0 + 180, "timed out again")
    assert (store.outbox_message(mid).attempts, store.outbox_message(mid).next_attempt_at) == (2, T0 + 180)


def test_retry_later_cuts_the_error_to_500_characters(store):
    mid = store.enqueue(P, GROUP, "hello", T0)
    store.retry_later(mid, T0 + 60, "x" * 2000)
    assert store.outbox_message(mid).error == "x" * 500


def test_retry_later_of_a_sent_message_does_nothing(store):
    mid = store.enqueue(P, GROUP, "hello", T0)
    store.mark_sent(mid, T0 + 1)
    before = store.dump()
    store.retry_later(mid, T0 + 60, "late failure")
    assert store.dump() == before


def test_drop_message_keeps_it_marked_dropped(store):
    mid = store.enqueue(P, GROUP, "hello", T0)
    store.drop_message(mid, "chat not found " * 100)
    msg = store.outbox_message(mid)
    assert (msg.status, msg.attempts, msg.sent_at) == ("dropped", 1, None)
    assert msg.error == ("chat not found " * 100)[:500]
    assert store.due_messages(P, T0 + 10) == [] and store.mark_sent(mid, T0 + 10) is False


def test_drop_message_of_a_message_no_longer_pending_does_nothing(store):
    sent, dropped = store.enqueue(P, GROUP, "a", T0), store.enqueue(P, GROUP, "b", T0)
    store.mark_sent(sent, T0 + 1)
    store.drop_message(dropped, "forbidden")
    before = store.dump()
    store.drop_message(sent, "too late")
    store.drop_message(dropped, "again")
    assert store.dump() == before


def test_find_outbox_filters_by_platform_and_status_oldest_first(store):
    a = store.enqueue(P, GROUP, "a", T0)
    b = store.enqueue(OTHER, GROUP, "b", T0 + 1)
    c = store.enqueue(P, GROUP2, "c", T0 + 2)
    store.mark_sent(a, T0 + 3)
    assert [m.id for m in store.find_outbox()] == [a, b, c]
    assert [m.id for m in store.find_outbox(platform=P)] == [a, c]
    assert [m.id for m in store.find_outbox(status="pending")] == [b, c]
    assert [m.id for m in store.find_outbox(platform=P, status="sent")] == [a]


def test_outbox_platforms_are_those_with_pending_messages(store):
    assert store.outbox_platforms() == []
    store.enqueue(P, GROUP, "now", T0)
    store.enqueue(P, GROUP, "later", T0 + HOUR)
    sent = store.enqueue(OTHER, GROUP, "x", T0)
    store.enqueue("third", GROUP, "y", T0)
    store.mark_sent(sent, T0 + 1)
    assert sorted(store.outbox_platforms()) == sorted([P, "third"])


# -- next wake-up -------------------------------------------------------------------------------------


def test_next_wakeup_is_none_when_nothing_is_due(store):
    finish(store, new_game(store).id)
    store.mark_sent(store.enqueue(P, GROUP, "x", T0), T0 + 1)
    assert store.next_wakeup(P) is None and store.next_wakeup(None) is None


def test_next_wakeup_is_the_earliest_pending_message(store):
    store.enqueue(P, GROUP, "b", T0 + 50)
    store.enqueue(P, GROUP, "a", T0 + 20)
    assert store.next_wakeup(P) == T0 + 20


def test_next_wakeup_follows_a_retry(store):
    mid = store.enqueue(P, GROUP, "a", T0)
    store.retry_later(mid, T0 + 90, "busy")
    assert store.next_wakeup(P) == T0 + 90


def test_next_wakeup_is_the_reminder_time_then_the_deadline(store):
    game = new_game(store)
    assert store.next_wakeup(P) == pytest.approx(T0 + HOUR - HOUR / 10)
    store.mark_reminded(game.id, 0)
    assert store.next_wakeup(P) == T0 + HOUR


def test_next_wakeup_is_the_minimum_of_messages_reminders_and_deadlines(store):
    new_game(store, deadline_at=T0 + 2 * HOUR)
    reminded = new_game(store, deadline_at=T0 + HOUR + 600)
    store.mark_reminded(reminded.id, 0)
    store.enqueue(P, GROUP, "later", T0 + 3 * HOUR)
    assert store.next_wakeup(P) == T0 + HOUR + 600
    store.enqueue(P, GROUP, "soon", T0 + 10)
    assert store.next_wakeup(P) == T0 + 10


def test_next_wakeup_of_one_platform_or_all(store):
    new_game(store)
    store.enqueue(OTHER, GROUP, "x", T0 + 30)
    assert store.next_wakeup(P) == pytest.approx(T0 + HOUR - HOUR / 10)
    assert store.next_wakeup(OTHER) == T0 + 30
    assert store.next_wakeup(None) == T0 + 30
    assert store.next_wakeup("third") is None


# -- transactions -------------------------------------------------------------------------------------


def test_transaction_commits_everything_together(store):
    with store.transaction():
        cid = store.create_challenge(**challenge_fields())
        store.set_pending("k", {"challenge": cid})
        mid = store.enqueue(P, GROUP, "challenge", T0)
    assert store.challenge(cid).status == "open" and store.pending("k") == {"challenge": cid}
    assert store.outbox_message(mid).status == "pending"


def test_transaction_that_raises_writes_nothing(store):
    game = new_game(store)
    before = store.dump()
    with pytest.raises(RuntimeError), store.transaction():
        store.create_challenge(**challenge_fields())
        store.update_game(game.id, 0, {"draw_offer": "W"}, move=None)
        store.set_pending("k", 1)
        store.ensure_chat(P, GROUP, "group", T0)
        raise RuntimeError("boom")
    assert store.dump() == before and store.game(game.id) == game


def test_enqueue_inside_a_transaction_that_raises_leaves_no_message(store):
    with pytest.raises(RuntimeError), store.transaction():
        mid = store.enqueue(P, GROUP, "Game #1 starts", T0)
        raise RuntimeError("the change that caused it failed")
    assert store.outbox_message(mid) is None
    assert store.due_messages(P, T0 + 10) == [] and store.outbox_platforms() == [] and store.next_wakeup(P) is None


def test_nested_transactions_join_the_outer_one(store):
    before = store.dump()
    with pytest.raises(RuntimeError), store.transaction():
        with store.transaction():
            store.set_pending("inner", 1)
            store.enqueue(P, GROUP, "inner", T0)
        store.set_pending("outer", 2)
        raise RuntimeError("boom")
    assert store.dump() == before


def test_reads_inside_a_transaction_see_its_writes(store):
    with store.transaction():
        cid = store.create_challenge(**challenge_fields())
        assert store.challenge(cid).status == "open"
        gid = store.accept_challenge(cid, game_fields())
        assert store.game(gid).version == 0 and store.challenge(cid).game_id == gid
        store.update_game(gid, 0, {"draw_offer": "B"})
        assert store.game(gid).version == 1
        store.set_pending("k", [1, 2])
        assert store.pending("k") == [1, 2]
        mid = store.enqueue(P, GROUP, "m", T0)
        assert [m.id for m in store.due_messages(P, T0)] == [mid]


def test_an_exception_caught_inside_a_transaction_does_not_undo_earlier_writes(store):
    game = new_game(store)
    with store.transaction():
        store.set_pending("kept", 1)
        with pytest.raises(ValueError):
            store.create_game(game_fields(colour="white"))
        with pytest.raises(StaleGame):
            store.update_game(game.id, 7, {"draw_offer": "W"})
        store.set_pending("also kept", 2)
    assert (store.pending("kept"), store.pending("also kept")) == (1, 2)
    assert store.game(game.id) == game


# -- dump ------------------------------------------------------------------------------------------------


def populate(store: Store) -> None:
    store.save_player(P, "1001", "Ana", "ana", "it", T0)
    store.ensure_chat(P, GROUP, "group", T0)
    store.set_chat(P, GROUP, language="it")
    cid = store.create_challenge(**challenge_fields())
    gid = store.accept_challenge(cid, game_fields())
    play(store, gid, 2)
    store.remember_message(P, GROUP, "501", gid)
    store.beat(P, T0)
    store.set_pending("k", {"game": gid})
    store.retry_later(store.enqueue(P, GROUP, "m", T0), T0 + 60, "busy")


def test_dump_is_tables_of_row_tuples_and_stable(store):
    populate(store)
    dump = store.dump()
    assert isinstance(dump, dict) and all(isinstance(rows, list) for rows in dump.values())
    assert all(isinstance(row, tuple) for rows in dump.values() for row in rows)
    assert store.dump() == dump


def test_dump_shows_every_kind_of_write(store):
    writes = [lambda: store.save_player(P, "1001", "Ana", None, None, T0),
              lambda: store.ensure_chat(P, GROUP, "group", T0),
              lambda: store.set_chat(P, GROUP, variant="spanish"),
              lambda: store.create_challenge(**challenge_fields()),
              lambda: store.create_game(game_fields()),
              lambda: store.beat(P, T0),
              lambda: store.set_pending("k", 1),
              lambda: store.enqueue(P, GROUP, "m", T0)]
    for write in writes:
        before = store.dump()
        write()
        assert store.dump() != before


def test_two_stores_given_the_same_calls_dump_the_same(make_store):
    first, second = make_store(), make_store()
    populate(first)
    populate(second)
    assert first.dump() == second.dump()


def test_dump_is_unchanged_by_calls_that_fail(store):
    populate(store)
    game = store.find_games()[0]
    before = store.dump()
    for call in (lambda: store.set_chat(P, GROUP, colour="red"),
                 lambda: store.create_challenge(**challenge_fields(colour="red")),
                 lambda: store.create_game(game_fields(colour="red")),
                 lambda: store.update_game(game.id, game.version, {"colour": "red"})):
        with pytest.raises(ValueError):
            call()
    with pytest.raises(StaleGame):
        store.update_game(game.id, game.version + 1, {"draw_offer": "W"})
    assert store.dump() == before


def test_move_chat_carries_messages_still_to_be_sent_over(store):
    store.ensure_chat(P, GROUP, "group", T0)
    queued = store.enqueue(P, GROUP, '{"text": "reminder"}', T0)
    store.mark_sent(store.enqueue(P, GROUP, '{"text": "old"}', T0), T0)
    store.move_chat(P, GROUP, GROUP2)
    assert [(m.id, m.chat_id) for m in store.due_messages(P, T0)] == [(queued, GROUP2)]


# -- analyses ---------------------------------------------------------------------------------------


NOTES = [{"ply": 0, "move": "24-20", "best": "24-20", "best_score": 10, "played_score": 10, "forced": False},
         {"ply": 1, "move": "12-15", "best": "11-15", "best_score": 20, "played_score": -5, "forced": False}]


def test_an_analysis_never_saved_is_none(store):
    game = finish(store, play(store, new_game(store).id, 2).id)
    assert store.analysis(game.id, game.ply) is None


def test_save_analysis_keeps_the_notes_per_game_and_ply(store):
    game = finish(store, play(store, new_game(store).id, 2).id)
    other = new_game(store)
    store.save_analysis(game.id, game.ply, NOTES, T0 + 200)
    record = store.analysis(game.id, game.ply)
    assert record == AnalysisRecord(game.id, 2, tuple(NOTES), T0 + 200)
    # Keyed by game and ply: neither another game nor another ply of this one has notes.
    assert store.analysis(other.id, game.ply) is None and store.analysis(game.id, 1) is None


def test_save_analysis_again_replaces_the_notes(store):
    game = finish(store, play(store, new_game(store).id, 2).id)
    store.save_analysis(game.id, game.ply, NOTES, T0 + 200)
    store.save_analysis(game.id, game.ply, NOTES[:1], T0 + 300)
    assert store.analysis(game.id, game.ply) == AnalysisRecord(game.id, 2, tuple(NOTES[:1]), T0 + 300)
    assert len(store.dump()["analyses"]) == 1


def test_save_analysis_inside_a_transaction_that_fails_keeps_nothing(store):
    game = finish(store, play(store, new_game(store).id, 2).id)
    before = store.dump()
    with pytest.raises(RuntimeError), store.transaction():
        store.save_analysis(game.id, game.ply, NOTES, T0 + 200)
        raise RuntimeError("the notification could not be written")
    assert store.analysis(game.id, game.ply) is None and store.dump() == before
