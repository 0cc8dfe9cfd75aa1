"""Storm on the web board (issue 33): /storm typed in a group on the real service and a real SQLite
file, the run played over HTTP on the real aiohttp application (aiohttp's test server), the bank's
own puzzles judged by the real rules.  The server keeps the time (the test moves the service's
clock): a late answer, a stale one, a foreign or forged link change nothing; the result goes to the
group through the outbox, in the group's language, once."""

from __future__ import annotations

import html as html_lib
import json
import random
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer
from catalog_text import says
from web_helpers import GROUP, PLATFORM, WebChat

from bot.i18n import t
from bot.platforms.web import WebConfig, make_app
from bot.puzzles import bank
from bot.puzzles.solve import position_after
from bot.service import ChatEvent
from bot.service.chat.present_notices import NoticePresenter
from bot.service.features.storm import MISS_SECONDS, OPEN_SECONDS, RUN_SECONDS, choose_puzzles
from bot.service.notifications import StormFinished, from_json
from bot.storage.repositories import NewStormRun

LINK = re.compile(r"/storm/([0-9]+)\?t=(r[0-9]+s[A-Za-z0-9_-]{22})")


@pytest.fixture
async def client(chat: WebChat) -> AsyncIterator[TestClient]:
    chat.service.chat.serve_web("https://board.example", chat.service.web)
    app = make_app(chat.service, WebConfig(poll_seconds=0.3))
    async with TestClient(TestServer(app)) as test_client:
        yield test_client


def start(chat: WebChat, user: str = "ana", words: str = "italian", lang: str = "en") -> tuple[int, str]:
    """/storm typed in the group: the run's number and its signed path."""
    replies = chat.say(user, f"/storm {words}".strip(), lang)
    private = [r for r in replies if r.private]
    assert len(private) == 1, [r.text for r in replies]
    url = private[0].buttons[0][0].url
    assert url is not None
    found = LINK.search(url)
    assert found is not None, url
    return int(found[1]), found[0]


def puzzle_of(state: dict[str, Any]) -> dict[str, Any]:
    found = bank.by_id(state["variant"], state["puzzle"])
    assert found is not None
    return found


def path_of(state: dict[str, Any], notation: str) -> list[int]:
    """The path of the state's legal move written ``notation``."""
    moves = [m for m in state["moves"] if m["notation"] == notation]
    assert moves, (notation, [m["notation"] for m in state["moves"]])
    return moves[0]["path"]


def wrong_path(state: dict[str, Any]) -> list[int] | None:
    """A legal move that is not in the puzzle's tree at this point, if there is one."""
    pz = puzzle_of(state)
    node = pz["tree"]
    # Follow the moves played in this puzzle (the state's ply) through the tree.
    pos = position_after(pz, [])
    for text in pz["solution"][:state["ply"]]:
        node = node[text]
        pos = pos.play(pos.parse_move(text))
    for move in state["moves"]:
        if move["notation"] not in node:
            return move["path"]
    return None


def boot_of(page: str) -> dict[str, Any]:
    found = re.search(r'data-boot="([^"]*)"', page)
    assert found is not None
    return json.loads(html_lib.unescape(found[1]))


async def answer(client: TestClient, link: str, state: dict[str, Any], **move: Any) -> tuple[int, dict[str, Any]]:
    run = link.split("?")[0].rsplit("/", 1)[1]
    token = link.split("t=")[1]
    body = {"index": state["index"], "ply": state["ply"], **move}
    res = await client.post(f"/api/storm/{run}/move", json=body, headers={"Authorization": f"Bearer {token}"})
    return res.status, await res.json()


async def state_of(client: TestClient, path: str) -> dict[str, Any]:
    run = path.split("?")[0].rsplit("/", 1)[1]
    res = await client.get(f"/api/storm/{run}?t=" + path.split("t=")[1])
    assert res.status == 200
    return (await res.json())["state"]


def storm_notices(chat: WebChat) -> list[dict[str, Any]]:
    return [n for n in chat.outbox_notices() if n.get("notice") == "storm_finished"]


# -- starting ---------------------------------------------------------------------------------------


async def test_storm_in_a_group_gives_the_link_to_the_player_alone(chat, client):
    replies = chat.say("ana", "/storm italian")
    public = [r for r in replies if not r.private]
    private = [r for r in replies if r.private]
    assert [says(r.text, "en", "storm.group") for r in public] == [True]
    assert "/storm/" not in public[0].text and not public[0].buttons
    assert len(private) == 1 and says(private[0].text, "en", "storm.started")
    button = private[0].buttons[0][0]
    assert button.url is not None and LINK.search(button.url) and button.label == t("en", "storm.open")
    run_id = int(LINK.search(button.url)[1])          # type: ignore[index]
    row = chat.storage.storm_runs.get(run_id)
    assert row is not None and (row.user_id, row.chat_id, row.variant, row.status) == ("ana", GROUP, "italian",
                                                                                      "running")
    # The clock starts when the page is first opened; until then the run waits for it.
    assert row.ends_at - row.started_at == OPEN_SECONDS and row.opened_at is None


async def test_bad_input_to_storm_starts_nothing(chat, client):
    replies = chat.say("ana", "/storm chess")
    assert [says(r.text, "en", "rules.unknown") for r in replies] == [True]
    chat.service.chat.serve_web(None)
    replies = chat.say("ana", "/storm")
    assert [says(r.text, "en", "storm.off") for r in replies] == [True]
    assert chat.storage.storm_runs.get(1) is None and chat.storage.storm_runs.over(chat.now[0] + 10**6) == []


def test_the_puzzles_of_a_run_rise_in_rating():
    puzzles = bank.load("italian")
    chosen = choose_puzzles(puzzles, 90, random.Random(3).choice)
    ratings = [bank.by_id("italian", pid)["rating"] for pid in chosen]    # type: ignore[index]
    assert len(chosen) == 90 == len(set(chosen))
    assert ratings == sorted(ratings)
    everything = sorted(p["rating"] for p in puzzles)
    assert ratings[0] <= everything[len(everything) // 10] and ratings[-1] >= everything[-len(everything) // 10]


# -- links: a run's number alone, a forged or another run's link show and change nothing ----------------


async def test_a_runs_number_alone_or_a_foreign_link_shows_nothing(chat, client):
    run_id, path = start(chat, "ana")
    other_id, other = start(chat, "bob")
    for url in (f"/storm/{run_id}", f"/api/storm/{run_id}"):
        res = await client.get(url)
        assert res.status == 403
    # Bob's link on Ana's run, and a forged signature: refused before anything is read.
    bob_token = other.split("t=")[1]
    forged = path.split("t=")[1][:-3] + "AAA"
    for token in (bob_token, forged, "w1sAAAAAAAAAAAAAAAAAAAAAA", "junk"):
        res = await client.get(f"/api/storm/{run_id}?t={token}")
        assert res.status == 401, token
        assert (await res.json())["reason"] == "link_invalid"
        res = await client.post(f"/api/storm/{run_id}/move", json={"index": 0, "ply": 0, "path": [1, 2]},
                                headers={"Authorization": f"Bearer {token}"})
        assert res.status == 401
    row = chat.storage.storm_runs.get(run_id)
    assert row is not None and row.version == 0
    page = await client.get(path)
    assert page.status == 200
    boot = boot_of(await page.text())
    assert boot["run"] == run_id and boot["state"]["status"] == "running" and boot["state"]["index"] == 0
    assert boot["texts"]["time"] == t("en", "storm.page.time")
    assert page.headers["Content-Security-Policy"].startswith("default-src 'self'")
    assert other_id != run_id


# -- playing ----------------------------------------------------------------------------------------


async def test_a_solved_puzzle_scores_and_the_next_one_comes(chat, client):
    _run_id, path = start(chat)
    state = await state_of(client, path)
    pz = puzzle_of(state)
    line = pz["solution"]
    for i in range(0, len(line), 2):
        status, body = await answer(client, path, state, path=path_of(state, line[i]))
        assert status == 200, body
        state = body["state"]
        if i + 1 < len(line):
            assert body["verdict"] == "right" and says(body["message"], "en", "storm.right")
            assert state["index"] == 0 and state["ply"] == i + 2
            assert state["last_move"]["notation"] == line[i + 1]
    assert body["verdict"] == "solved" and says(body["message"], "en", "storm.solved")
    assert (state["index"], state["ply"], state["solved"], state["missed"]) == (1, 0, 1, 0)
    assert state["puzzle"] != pz["id"]


async def test_a_wrong_move_costs_ten_seconds_and_moves_on(chat, client):
    run_id, path = start(chat)
    state = await state_of(client, path)
    index = 0
    wrong = wrong_path(state)
    while wrong is None:            # a puzzle where every legal move wins: solve it and go on
        line = puzzle_of(state)["solution"]
        status, body = await answer(client, path, state, path=path_of(state, line[0]))
        state = body["state"]
        index = state["index"]
        wrong = wrong_path(state) if state["ply"] == 0 else None
        assert index < 10
    before = chat.storage.storm_runs.get(run_id)
    assert before is not None
    status, body = await answer(client, path, state, path=wrong)
    assert status == 200 and body["verdict"] == "wrong" and says(body["message"], "en", "storm.wrong")
    after = chat.storage.storm_runs.get(run_id)
    assert after is not None
    assert (after.missed, after.current, after.ends_at) == (before.missed + 1, index + 1, before.ends_at - MISS_SECONDS)
    assert body["state"]["left"] == pytest.approx(RUN_SECONDS - MISS_SECONDS)
    assert body["solution"][0] == puzzle_of(state)["solution"][0]


async def test_a_stale_answer_or_an_illegal_move_changes_nothing(chat, client):
    run_id, path = start(chat)
    state = await state_of(client, path)
    opened = chat.storage.storm_runs.get(run_id)
    assert opened is not None and opened.version == 1
    line = puzzle_of(state)["solution"]
    status, body = await answer(client, path, state, move="1-99")
    assert status == 422 and body["verdict"] == "illegal"
    stale = dict(state, index=state["index"] + 1)
    status, body = await answer(client, path, stale, path=path_of(state, line[0]))
    assert status == 409 and body["verdict"] == "stale" and says(body["message"], "en", "storm.stale")
    status, body = await answer(client, path, dict(state, ply=2), path=path_of(state, line[0]))
    assert status == 409 and body["verdict"] == "stale"
    status, body = await answer(client, path, state, path="22-18")
    assert status == 400
    row = chat.storage.storm_runs.get(run_id)
    assert row is not None and (row.version, row.current, row.solved, row.missed, row.moves) == (1, 0, 0, 0, "[]")


# -- the end: the server's clock, the result in the chat ------------------------------------------------


async def test_an_answer_after_the_time_is_up_is_refused_and_the_result_is_told_once(chat, client):
    chat.say("ana", "/lang es", "es", admin=True)
    run_id, path = start(chat, lang="es")
    state = await state_of(client, path)
    line = puzzle_of(state)["solution"]
    _status, body = await answer(client, path, state, path=path_of(state, line[0]))
    state = body["state"]
    before = chat.storage.storm_runs.get(run_id)
    assert before is not None
    chat.now[0] += RUN_SECONDS + 0.5
    status, body = await answer(client, path, state,
                                path=path_of(state, puzzle_of(state)["solution"][state["ply"]]))
    assert status == 409 and body["verdict"] == "over"
    assert says(body["message"], "es", "storm.late")
    assert body["state"]["status"] == "finished" and body["state"]["left"] == 0
    row = chat.storage.storm_runs.get(run_id)
    assert row is not None and (row.status, row.solved, row.current, row.moves, row.finished_at) == (
        "finished", before.solved, before.current, before.moves, row.ends_at)
    # Asked again, and the clock's own round: told once.
    again = await state_of(client, path)
    assert again["status"] == "finished" and again["version"] == row.version
    assert chat.service.app.clocks.run_due(PLATFORM) >= 0
    notices = storm_notices(chat)
    assert len(notices) == 1 and notices[0]["lang"] == "es" and notices[0]["solved"] == row.solved
    notice = from_json(notices[0])
    assert isinstance(notice, StormFinished)
    present = chat.service.outbox.present
    assert isinstance(present, NoticePresenter)
    text = present(notice).text
    assert says(text, "es", "storm.result") and "Ana" in text


async def test_a_run_left_alone_ends_by_the_clock_once(chat, client):
    run_id, path = start(chat)
    state = await state_of(client, path)
    line = puzzle_of(state)["solution"]
    await answer(client, path, state, path=path_of(state, line[0]))
    chat.now[0] += RUN_SECONDS + 1
    clocks = chat.service.app.clocks
    clocks.run_due(PLATFORM)
    clocks.run_due(PLATFORM)
    row = chat.storage.storm_runs.get(run_id)
    assert row is not None and row.status == "finished"
    notices = storm_notices(chat)
    assert len(notices) == 1 and notices[0]["run_id"] == run_id
    assert (await state_of(client, path))["status"] == "finished"
    assert len(storm_notices(chat)) == 1


async def test_the_storm_page_is_in_the_language_asked_or_the_chats(chat, client):
    _run_id, path = start(chat)
    page = await client.get(path + "&lang=it")
    boot = boot_of(await page.text())
    assert boot["lang"] == "it" and boot["texts"]["solved"] == t("it", "storm.page.solved")
    to_play = boot["state"]["to_play"]
    assert says(to_play, "it", "storm.white_plays") or says(to_play, "it", "storm.black_plays")
    res = await client.get("/static/storm.js")
    assert res.status == 200 and "api/storm" in await res.text()


async def test_a_finished_runs_score_goes_to_the_chats_record_for_storm(chat, client):
    run_id, path = start(chat)
    state = await state_of(client, path)
    line = puzzle_of(state)["solution"]
    for i in range(0, len(line), 2):
        _status, body = await answer(client, path, state, path=path_of(state, line[i]))
        state = body["state"]
    assert state["solved"] == 1
    chat.now[0] += RUN_SECONDS
    chat.service.app.clocks.run_due(PLATFORM)
    best = chat.storage.puzzle_runs.chat_best(PLATFORM, GROUP, "storm", "italian")
    assert best is not None and (best.score, best.user_id, best.name) == (1, "ana", "Ana")
    mine = chat.storage.puzzle_runs.personal_best(PLATFORM, "ana", "storm", "italian")
    assert mine is not None
    assert [n["solved"] for n in storm_notices(chat)] == [1]
    row = chat.storage.storm_runs.get(run_id)
    assert row is not None and row.status == "finished"


async def test_start_storm_in_a_private_chat_gives_the_link_to_the_runs_player_only(chat, client):
    run_id, path = start(chat)

    def private_start(user: str, payload: str) -> list:
        event = ChatEvent(platform=PLATFORM, chat_id=user, user_id=user, user_name=user.capitalize(), username=user,
                          language="en", text=f"/start {payload}", chat_kind="private")
        return chat.service.handle(event)

    (mine,) = private_start("ana", f"storm{run_id}")
    assert says(mine.text, "en", "storm.started") and mine.buttons[0][0].url.endswith(path)
    # https and a private chat: on Telegram it would be the Mini App; here (platform "test") a link.
    assert mine.buttons[0][0].web_app is False
    (other,) = private_start("bob", f"storm{run_id}")
    assert says(other.text, "en", "storm.no_run") and not other.buttons
    (missing,) = private_start("ana", f"storm{run_id + 50}")
    assert says(missing.text, "en", "storm.no_run")
    await state_of(client, path)
    chat.now[0] += RUN_SECONDS + 1
    chat.service.app.clocks.run_due(PLATFORM)
    (ended,) = private_start("ana", f"storm{run_id}")
    assert says(ended.text, "en", "storm.no_run")


# -- review fixes (issue 33): one running run a player, the clock from the page's opening --------------


async def test_storm_asked_again_gives_back_the_running_run_and_the_group_hears_it_once(chat, client):
    replies = [chat.say("ana", "/storm italian") for _ in range(5)]
    public = [r for rs in replies for r in rs if not r.private]
    assert [says(r.text, "en", "storm.group") for r in public] == [True]
    links = [LINK.search(r.buttons[0][0].url or "") for rs in replies for r in rs if r.private]
    assert len(links) == 5 and len({found[0] for found in links if found is not None}) == 1
    assert all(says(r.text, "en", "storm.running") for rs in replies[1:] for r in rs)
    run_id = int(links[0][1])                           # type: ignore[index]
    assert chat.storage.storm_runs.running(PLATFORM, "ana") == chat.storage.storm_runs.get(run_id)
    assert chat.storage.storm_runs.get(run_id + 1) is None
    # Another variant asked while it runs: still that run (one storm at a time).
    (again,) = chat.say("ana", "/storm spanish")
    assert says(again.text, "en", "storm.running") and again.buttons[0][0].url.endswith(links[0][0])
    # Once it is over, /storm starts a new one.
    await state_of(client, links[0][0])
    chat.now[0] += RUN_SECONDS + 1
    new_id, _path = start(chat)
    assert new_id != run_id
    old = chat.storage.storm_runs.get(run_id)
    assert old is not None and old.status == "finished"


async def test_a_run_without_answers_ends_without_a_word_to_the_group_or_a_record(chat, client):
    run_id, path = start(chat)
    assert (await state_of(client, path))["status"] == "running"
    chat.now[0] += RUN_SECONDS + 1
    assert chat.service.app.clocks.run_due(PLATFORM) >= 0
    state = await state_of(client, path)
    assert state["status"] == "finished" and says(state["status_text"], "en", "storm.page_result")
    row = chat.storage.storm_runs.get(run_id)
    assert row is not None and row.status == "finished"
    assert storm_notices(chat) == []
    assert chat.storage.puzzle_runs.chat_best(PLATFORM, GROUP, "storm", "italian") is None
    assert chat.storage.puzzle_runs.personal_best(PLATFORM, "ana", "storm", "italian") is None


async def test_the_clock_starts_when_the_player_first_opens_the_run(chat, client):
    run_id, path = start(chat)
    # The member first has to open the private chat: ten minutes pass before the page is opened.
    chat.now[0] += 600
    page = await client.get(path)
    assert page.status == 200
    opened = chat.now[0]
    assert boot_of(await page.text())["state"]["left"] == pytest.approx(RUN_SECONDS)
    row = chat.storage.storm_runs.get(run_id)
    assert row is not None and (row.opened_at, row.ends_at) == (opened, opened + RUN_SECONDS)
    # Asking again does not start it again.
    chat.now[0] += 30
    assert (await state_of(client, path))["left"] == pytest.approx(RUN_SECONDS - 30)
    again = chat.storage.storm_runs.get(run_id)
    assert again is not None and (again.opened_at, again.ends_at) == (opened, opened + RUN_SECONDS)


async def test_a_run_never_opened_expires_silently_after_its_grace(chat, client):
    run_id, path = start(chat)
    chat.now[0] += OPEN_SECONDS - 1
    chat.service.app.clocks.run_due(PLATFORM)
    row = chat.storage.storm_runs.get(run_id)
    assert row is not None and row.status == "running" and row.opened_at is None
    chat.now[0] += 2
    chat.service.app.clocks.run_due(PLATFORM)
    row = chat.storage.storm_runs.get(run_id)
    assert row is not None and row.status == "finished"
    assert storm_notices(chat) == []
    assert (await state_of(client, path))["status"] == "finished"


async def test_an_answer_opens_the_run_too(chat, client):
    run_id, path = start(chat)
    chat.now[0] += 900
    status, body = await answer(client, path, {"index": 0, "ply": 0}, move="1-99")
    assert status == 422 and body["state"]["left"] == pytest.approx(RUN_SECONDS)
    row = chat.storage.storm_runs.get(run_id)
    assert row is not None and row.opened_at == chat.now[0]


async def test_a_wrong_move_later_in_a_puzzle_names_the_move_expected_there(chat, client):
    _run_id, path = start(chat)
    state = await state_of(client, path)
    # The first puzzle of three plies or more with a wrong move after the first reply; the ones
    # before it solved.
    for _ in range(80):          # easy puzzles first: their last move is often forced
        line = puzzle_of(state)["solution"]
        if len(line) >= 3:
            _status, body = await answer(client, path, state, path=path_of(state, line[0]))
            state = body["state"]
            assert state["ply"] == 2
            wrong = wrong_path(state)
            if wrong is not None:
                break
        for i in range(state["ply"], len(line), 2):
            _status, body = await answer(client, path, state, path=path_of(state, line[i]))
            state = body["state"]
    else:
        pytest.fail("no puzzle with a wrong move at its second solver move")
    status, body = await answer(client, path, state, path=wrong)
    assert status == 200 and body["verdict"] == "wrong"
    assert body["message"] == t("en", "storm.wrong", line=line[2], seconds=int(MISS_SECONDS))
    assert body["expected"] == line[2]


async def test_stale_runs_of_another_platform_do_not_keep_this_ones_from_ending(chat, client):
    for n in range(60):
        chat.storage.storm_runs.create(NewStormRun(
            platform="other", chat_id="elsewhere", user_id=f"u{n}", name="U", lang="en", variant="italian",
            puzzles="[]", started_at=chat.now[0] - 10_000, ends_at=chat.now[0] - 9_000))
    run_id, path = start(chat)
    state = await state_of(client, path)
    line = puzzle_of(state)["solution"]
    await answer(client, path, state, path=path_of(state, line[0]))
    chat.now[0] += RUN_SECONDS + 1
    assert chat.service.app.storm.run_due(PLATFORM) == 1
    row = chat.storage.storm_runs.get(run_id)
    assert row is not None and row.status == "finished"
    assert [n["run_id"] for n in storm_notices(chat)] == [run_id]
