"""Every bad input gets a clear answer and changes nothing; a rejected move names its rule.

The positions are reached by real games from the start position (italian, Ana white, Bob
black); each test first checks with the rules engine that the position is what it claims.
"""

from __future__ import annotations

import pytest
from catalog_text import pattern, says
from harness import en, en_part

from bot.rules import ErrorCode, IllegalMove

# Black to move; 14x23 is compulsory.
COMPULSORY = "24-20 11-14 23-19".split()
# Black to move; the only capture is 10x17x26 (two pieces).
UNFINISHED = ("24-20 11-14 23-19 14x23 28x19 10-14 19x10 6x13 22-18 13x22 27x18 9-13 18x9 12-15 20x11 7x14 "
              "21-18 14x21 26x17 5-10 25-21 3-7 17-13").split()
# White to move; the king on 15 could take one piece (15x8), the man on 23 takes two (23x16x7).
QUANTITY = ("22-18 10-13 23-20 13x22 26x19 12-16 29-26 16x23 27x20 9-13 19-14 11x18 21x14 5-10 14x5 2x9 "
            "20-16 7-11 24-20 13-18 28-24 1-5 20-15 11x20 24x15 9-13 15-11 6x15 16-12 18-21 25x18x9x2 4-7 "
            "31-28 7x16 28-23 3-6 2x11x20 8-12 20-15 16-20").split()
# White to move; the white man on 32 faces the black king on 28 with 23 empty behind it.
MAN_VS_KING = ("24-20 12-16 20-15 11x20 21-17 10-13 17x10 6x13 23-19 20-24 19-15 2-6 22-18 13x22 27x18 8-12 "
               "15x8 7-12 26-22 3-7 18-13 9x18x27 31x22 24x31 29-26 16-20 30-27 6-10 27-23 20x27 22-19 "
               "10-14 19x10 5x14 26-22 12-15 22-19 15x22 25-21 31-28").split()


@pytest.fixture
def game(chat):
    return chat.new_game("ana", "bob", "italian")


def reached(chat, game, moves, code, typed):
    """Play ``moves``; check the engine rejects ``typed`` with ``code`` there; the snapshot."""
    chat.play(game, moves)
    with pytest.raises(IllegalMove) as err:
        chat.position(game).parse_move(typed)
    assert err.value.code == code
    return chat.snapshot()


def rejected(chat, user, text):
    """The answer to a rejected input; the database must not change."""
    before = chat.snapshot()
    replies = chat.say(user, text)
    assert replies, f"no answer to {text!r}"
    assert chat.snapshot() == before
    answer = "\n".join(r.text for r in replies)
    assert answer.strip()
    return answer


# -- rejected moves name their rule (docs/rules.md §5) -----------------------------------------------


def test_rejected_move_capture_is_compulsory(chat, game):
    reached(chat, game, COMPULSORY, ErrorCode.CAPTURE_COMPULSORY, "6-11")
    answer = rejected(chat, "bob", "/m 6-11")
    assert pattern("en", "err.capture_compulsory", "err.capture_compulsory_many").search(answer) and "14x23" in answer


def test_rejected_move_law_of_quantity(chat, game):
    reached(chat, game, QUANTITY, ErrorCode.LAW_OF_QUANTITY, "15x8")
    answer = rejected(chat, "ana", "/m 15x8")
    assert en("err.law_of_quantity", best="23x16x7", best_count=2, attempted="15x8", count=1) in answer


def test_rejected_move_capture_not_finished(chat, game):
    reached(chat, game, UNFINISHED, ErrorCode.CAPTURE_NOT_FINISHED, "10x17")
    answer = rejected(chat, "bob", "/m 10x17")
    assert says(answer, "en", "err.capture_not_finished", typed="10x17") and "10x17x26" in answer


def test_rejected_move_man_cannot_take_a_king_in_italian(chat, game):
    reached(chat, game, MAN_VS_KING, ErrorCode.MAN_CANNOT_TAKE_KING, "32x23")
    answer = rejected(chat, "ana", "/m 32x23")
    assert en("err.man_cannot_take_king", variant=en("variant.italian"), square=28) in answer


def test_rejected_move_not_your_turn(chat, game):
    answer = rejected(chat, "bob", "/m 11-15")
    assert en("err.not_your_turn", to_name="Ana") in answer


def test_rejected_move_no_piece(chat, game):
    answer = rejected(chat, "ana", "/m 17-13")
    assert en("err.no_piece", square=17) in answer


def test_rejected_move_not_your_piece(chat, game):
    answer = rejected(chat, "ana", "/m 9-13")
    assert en("err.not_your_piece", square=9) in answer


def test_rejected_move_illegal_step_explains_how_men_move(chat, game):
    answer = rejected(chat, "ana", "/m 22-15")
    assert en("err.illegal_step", move="22-15") in answer


def test_rejected_move_ambiguous_short_form_lists_the_paths(chat, game):
    chat.play(game, "22-18 11-15 27-22 10-13 30-27 15-19 23x14 5-10 14x5 1x10 22-19 13x22 27x18 7-11 31-27 "
                    "11-15 24-20".split())
    answer = rejected(chat, "bob", "/m 15x31")
    assert says(answer, "en", "err.ambiguous", typed="15x31") and "15x22x31" in answer and "15x24x31" in answer


def test_rejected_move_no_such_square(chat, game):
    answer = rejected(chat, "ana", "/m 22-99")
    assert en("err.no_such_square", square=99, max=32) in answer


# -- bad input of every kind ---------------------------------------------------------------------


def test_unknown_command(chat, game):
    answer = rejected(chat, "ana", "/castle")
    assert en("error.unknown_command", command="castle") in answer


def test_malformed_move(chat, game):
    assert en("err.malformed", max=32) in rejected(chat, "ana", "/m hello")


def test_move_by_a_spectator(chat, game):
    answer = rejected(chat, "carol", "/m 22-18")
    assert en("game.spectator") in answer


def test_move_by_a_spectator_naming_the_game(chat, game):
    assert en("game.not_player", id=game) in rejected(chat, "carol", f"/m #{game} 22-18")


def test_move_out_of_turn_with_the_moving_players_piece(chat, game):
    chat.say("ana", "/m 22-18")
    answer = rejected(chat, "ana", "/m 21-17")
    assert en("err.not_your_turn", to_name="Bob") in answer


def test_second_accept(chat, game):
    assert en("challenge.closed", id=1) in rejected(chat, "carol", "/accept #1")


def test_move_in_a_finished_game(chat, game):
    chat.resign("bob")
    assert en("err.game_over") in rejected(chat, "ana", f"/m #{game} 22-18")
    assert "/new" in rejected(chat, "ana", "/m 22-18")


def test_control_characters_in_a_move(chat, game):
    assert en("err.malformed", max=32) in rejected(chat, "ana", "/m 22-18\x00\x1b[2J")


def test_control_characters_only(chat, game):
    rejected(chat, "ana", "/m \x00\x07\x1b")


def test_ten_kilobytes_as_a_command(chat, game):
    answer = rejected(chat, "ana", "/m " + "22-18 " * 1707)
    assert en_part("error.too_long") in answer


def test_ten_kilobytes_as_a_command_with_another_name(chat, game):
    assert en_part("error.too_long") in rejected(chat, "ana", "/new " + "x" * 10_240)


def test_ten_kilobytes_of_plain_text_in_a_group_is_ignored(chat, game):
    before = chat.snapshot()
    replies = chat.say("ana", "y" * 10_240)
    assert all(en_part("error.too_long") in r.text for r in replies)
    assert chat.snapshot() == before


def test_ten_kilobytes_of_plain_text_in_private_chat(chat):
    before = chat.snapshot()
    replies = chat.say("ana", "y" * 10_240, chat="ana-private", kind="private")
    assert en_part("error.too_long") in replies[0].text
    assert chat.snapshot() == before


def test_emoji_as_a_move(chat, game):
    assert en("err.malformed", max=32) in rejected(chat, "ana", "/m 🙂")


def test_emoji_after_a_move(chat, game):
    assert en("err.malformed", max=32) in rejected(chat, "ana", "/m 22-18 🎉")


def test_emoji_command(chat, game):
    assert says(rejected(chat, "ana", "/🙂"), "en", "error.unknown_command")


def test_emoji_plain_text_from_a_player_is_ignored(chat, game):
    before = chat.snapshot()
    assert chat.say("ana", "🙂🙂🙂") == []
    assert chat.snapshot() == before


def test_right_to_left_override_around_a_move(chat, game):
    # Shown as "22-18" by a right-to-left renderer, but the characters say 81-22.
    assert en("err.no_such_square", square=81, max=32) in rejected(chat, "ana", "/m \u202e81-22\u202c")


def test_right_to_left_marks_with_letters(chat, game):
    assert en("err.malformed", max=32) in rejected(chat, "ana", "/m \u200fالف-باء\u200f")


def test_huge_numbers_in_a_move(chat, game):
    assert en("err.malformed", max=32) in rejected(chat, "ana", "/m 99999999999999999999-1")


def test_huge_game_reference(chat, game):
    rejected(chat, "ana", "/m #99999999999999999999 22-18")
    assert en("game.unknown", id=999999999) in rejected(chat, "ana", "/m #999999999 22-18")


def test_new_with_nonsense_arguments(chat, game):
    answer = rejected(chat, "ana", "/new banana")
    assert en("new.bad_arg", word="banana") in answer and en("new.usage") in answer


@pytest.mark.parametrize("args", ["italian spanish purple", "@", "#3", "1x", "99999h", "-5m", "2 h", "🙂",
                                  "white@bob", "\u202e\u200f!"])
def test_new_with_other_nonsense_creates_no_challenge(chat, args):
    replies = chat.say("ana", f"/new {args}")
    assert en("new.usage") in replies[0].text
    assert chat.rows("challenges") == []


def test_move_command_without_a_move(chat, game):
    assert en("move.usage") in rejected(chat, "ana", "/m")


def test_move_command_with_only_a_game_reference(chat, game):
    assert en("move.usage") in rejected(chat, "ana", f"/m #{game}")


def test_lone_slash(chat, game):
    rejected(chat, "ana", "/")


def test_command_with_only_spaces_and_tabs(chat, game):
    rejected(chat, "ana", "/m \t \n ")


@pytest.mark.parametrize("text", ["/m 22-18-14", "/m 22--18", "/m 22-", "/m -18", "/m 0-4",
                                  "/m 22 18 14 10", "/m 1e3-18", "/m ２２-１８x", "/m 22-18;DROP TABLE games"])
def test_other_malformed_or_illegal_moves_change_nothing(chat, game, text):
    rejected(chat, "ana", text)


def test_empty_event_text(chat, game):
    before = chat.snapshot()
    chat.check(chat.service.handle(chat.event("ana", text=None)))
    chat.check(chat.service.handle(chat.event("ana", text="")))
    assert chat.snapshot() == before


def test_odd_user_names_do_not_break_the_game(chat):
    cid = chat.challenge("ana", "white")
    event = chat.event("bob", text=f"/accept #{cid}")
    weird = type(event)(**{**event.__dict__, "user_name": "\u202e\x00🙂" + "n" * 500})
    replies = chat.check(chat.service.handle(weird))
    game_id = chat.storage.challenge(cid).game_id
    assert game_id is not None and replies[0].game_id == game_id
    assert len(chat.game(game_id).black_name) <= 64


# -- the buttons and commands added with the rematch, /games pages, /history, /notify, puzzles -------


def test_rematch_pressed_twice_opens_one_challenge(chat, game):
    chat.resign("bob")
    first = chat.press("ana", f"rm:{game}")
    cid = chat.rows("challenges")[-1].id
    assert f"#{cid}" in first[0].text
    answer = "\n".join(r.text for r in rejected_press(chat, "ana", f"rm:{game}"))
    assert f"#{cid}" in answer
    assert [c.id for c in chat.rows("challenges") if c.status == "open"] == [cid]


def test_rematch_pressed_by_both_players_starts_the_game(chat, game):
    chat.resign("bob")
    chat.press("ana", f"rm:{game}")
    replies = chat.press("bob", f"rm:{game}")
    games = chat.rows("games")
    assert len(games) == 2 and games[-1].status == "active"
    assert (games[-1].white_id, games[-1].black_id) == ("bob", "ana")
    assert replies[0].game_id == games[-1].id
    assert [c for c in chat.rows("challenges") if c.status == "open"] == []


def rejected_press(chat, user, action, **kw):
    """The answer to a button press that must change nothing."""
    before = chat.snapshot()
    replies = chat.press(user, action, **kw)
    assert replies, f"no answer to {action!r}"
    assert chat.snapshot() == before
    assert "\n".join(r.text for r in replies).strip()
    return replies


def everything(chat):
    """The whole database but the outbox and the meta rows (settings, subscriptions, puzzles too)."""
    return {table: rows for table, rows in chat.storage.dump().items() if table not in ("outbox", "meta")}


NEW_BAD_COMMANDS = ["/games 0", "/games -1", "/games 99999999999999999999", "/games 🙂", "/history @nobody",
                    "/history x", "/history @ana @bob", "/notify maybe", "/notify on off", "/lang xx", "/lang 🙂",
                    "/settings variant xx", "/settings lang xx", "/settings foo bar", "/puzzle giveup",
                    "/puzzle giveup #99", "/puzzle xx", "/hint #abc", "/daily on 25:99 Mars/Olympus",
                    "/daily on 7:00 Mars/Olympus", "/daily on 24:00", "/daily on -1:00", "/accept #abc",
                    "/accept #0", "/decline #abc", "/cancel #99999999999999", "/start p1_abc",
                    "/start p99999999999_x", "/start " + "p" * 100]
NEW_BAD_BUTTONS = ["rm:999999", "rm:abc", "rm:", "rm:1:1", "zg:1", "zg:999999999", "zn:-1", "zn:abc", "s:1:0:99",
                   "d:1:0:1:99", "m:1:0:999", "zs:1:0:99", "zh:1:99", "dr:1:0", "x" * 300, "🙂" * 40, "::::", ""]


@pytest.mark.parametrize("kind", ["group", "admin", "private"])
def test_bad_arguments_of_the_new_commands_change_nothing(chat, game, kind):
    kw = {"admin": True} if kind == "admin" else {"chat": "carol-dm", "kind": "private"} if kind == "private" else {}
    chat.say("carol", "/games", **kw)
    before = everything(chat)
    for text in NEW_BAD_COMMANDS:
        replies = chat.say("carol", text, **kw)
        assert replies and "\n".join(r.text for r in replies).strip(), text
        assert everything(chat) == before, text


@pytest.mark.parametrize("kind", ["group", "admin", "private"])
def test_hand_made_button_data_changes_nothing(chat, game, kind):
    kw = {"admin": True} if kind == "admin" else {"chat": "carol-dm", "kind": "private"} if kind == "private" else {}
    chat.say("carol", "/games", **kw)
    before = everything(chat)
    for data in NEW_BAD_BUTTONS:
        replies = chat.press("carol", data, **kw)
        assert replies and "\n".join(r.text for r in replies).strip(), data
        assert everything(chat) == before, data


def test_rematch_by_a_spectator_or_from_another_chat_changes_nothing(chat, game):
    chat.resign("bob")
    chat.say("carol", "/games")
    chat.say("ana", "/games", chat="group-2")
    chat.say("ana", "/games", chat="ana-dm", kind="private")
    before = everything(chat)
    assert en("game.not_player", id=game) in "\n".join(r.text for r in chat.press("carol", f"rm:{game}"))
    chat.press("ana", f"rm:{game}", chat="group-2")
    chat.press("ana", f"rm:{game}", chat="ana-dm", kind="private")
    assert everything(chat) == before


def test_rematch_of_a_game_against_the_bot_by_someone_else_starts_nothing(chat):
    chat.say("ana", "/play italian white")
    game = chat.rows("games")[-1].id
    chat.resign("ana")
    chat.say("carol", "/games")
    before = everything(chat)
    assert en("game.not_player", id=game) in "\n".join(r.text for r in chat.press("carol", f"rm:{game}"))
    assert everything(chat) == before


@pytest.mark.parametrize("text", ["/lang español", "/lang English", "/lingua italiano", "/idioma castellano",
                                  "/language Spanish"])
def test_a_language_named_in_words_by_a_member_who_is_no_admin_changes_nothing(chat, text):
    chat.say("carol", "/games")
    before = everything(chat)
    replies = chat.say("carol", text)
    assert says(replies[0].text, "en", "error.admins_only")
    assert everything(chat) == before
    assert chat.service.needs_admin(text)


@pytest.mark.parametrize("time", ["9:0٥", "9.3٠", "8:3٠pm", "09:0５", "1٩:00"])
def test_a_daily_time_with_other_digits_is_refused(chat, time):
    chat.say("ana", "/games")
    before = everything(chat)
    answer = "\n".join(r.text for r in chat.say("ana", f"/daily on {time}", admin=True))
    assert says(answer, "en", "daily.bad_word")
    assert everything(chat) == before
