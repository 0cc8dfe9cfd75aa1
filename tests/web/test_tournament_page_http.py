"""The tournament page over HTTP: the real aiohttp application on aiohttp's test server, the real
service on a real SQLite file, the tournament made, joined and started through the real
``Tournaments`` use case and its games finished in the chat.  A tournament's number alone shows
nothing; a signed link shows its standings and pairings, in the chat's language, names as text."""

from __future__ import annotations

import html as html_lib
import json
import re
from collections.abc import AsyncIterator

import pytest
from aiohttp.test_utils import TestClient, TestServer
from web_helpers import GROUP, PLATFORM, WebChat

from bot.i18n import t
from bot.platforms.web import WebConfig, make_app
from bot.rules import Position
from bot.service.features.identity import Caller, Player, Where
from bot.service.features.results_tournaments import NewTournamentArgs, Started, TournamentCreated

EVIL = '<img src=x onerror="alert(1)">&amp;"\'</td>'


@pytest.fixture
async def client(chat: WebChat) -> AsyncIterator[TestClient]:
    app = make_app(chat.service, WebConfig(poll_seconds=0.3))
    async with TestClient(TestServer(app)) as test_client:
        yield test_client


def caller(chat: WebChat, user: str, name: str | None = None) -> Caller:
    now = chat.now[0]
    record = chat.storage.players.ensure_chat(PLATFORM, GROUP, "group", now)
    return Caller(Player(PLATFORM, user, name or user.capitalize(), user, "en"), Where(PLATFORM, GROUP), now, now,
                  record)


def tournament(chat: WebChat, players: dict[str, str], fmt: str = "swiss", rounds: int | None = 3) -> int:
    """A tournament of the group made, joined by ``players`` (id: name) and started, through the
    use case; its number."""
    use = chat.service.app.tournaments
    made = use.create(caller(chat, "admin"), NewTournamentArgs(fmt, "italian", rounds, name="Club open"), "en")
    assert isinstance(made, TournamentCreated), made
    for user, name in players.items():
        use.join(caller(chat, user, name))
    started = use.start(caller(chat, "admin"))
    assert isinstance(started, Started), started
    return made.tournament.id


def signed(chat: WebChat, tid: int) -> str:
    return chat.service.web.tournament_path(tid)


def boot_of(page: str) -> dict:
    found = re.search(r'data-boot="([^"]*)"', page)
    assert found is not None
    return json.loads(html_lib.unescape(found[1]))


# -- refusals (nothing of the tournament, not even whether it exists) -------------------------------


async def test_a_tournaments_number_alone_shows_nothing(chat, client):
    for path in ("/t/1", "/t/1?lang=es", "/t/99"):
        page = await client.get(path)
        assert page.status == 403, path
        text = await page.text()
        assert text in (t("en", "webt.need_link"), t("es", "webt.need_link"))
    data = await client.get("/api/t/1")
    assert data.status == 403 and (await data.json()) == {"ok": False, "reason": "need_link",
                                                          "error": t("en", "webt.need_link")}


async def test_a_forged_or_another_tournaments_link_is_refused(chat, client):
    board = chat.service.web
    other = board.tournament_links.token(2)
    watch = board.watch_token(1)
    for token in (other, watch, "t1s" + "A" * 22, "garbage"):
        page = await client.get(f"/t/1?t={token}&lang=it")
        assert page.status == 401 and await page.text() == t("it", "webt.link_invalid"), token
        data = await client.get(f"/api/t/1?t={token}")
        assert data.status == 401 and (await data.json())["reason"] == "link_invalid"


async def test_a_signed_link_to_no_tournament_is_a_404(chat, client):
    page = await client.get(signed(chat, 41) + "&lang=es")
    assert page.status == 404 and await page.text() == t("es", "webt.no_tournament")
    data = await client.get("/api/t/41?t=" + chat.service.web.tournament_links.token(41))
    assert data.status == 404 and (await data.json())["reason"] == "no_tournament"


# -- the page and its data ------------------------------------------------------------------------------


async def test_the_page_shows_standings_and_pairings_with_names_as_text(chat, client):
    tid = tournament(chat, {"ana": EVIL, "bob": "Bob", "cid": "Cid", "dan": "Dan"})
    page = await client.get(signed(chat, tid))
    assert page.status == 200 and page.content_type == "text/html"
    body = await page.text()
    assert EVIL not in body and "<img" not in body            # escaped in the boot attribute
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    assert page.headers["Referrer-Policy"] == "no-referrer"
    boot = boot_of(body)
    view = boot["view"]
    assert boot["tournament"] == tid and view["id"] == tid and view["status"] == "running"
    assert EVIL in [row["name"] for row in view["standings"]]
    assert [tb["code"] for tb in view["tiebreaks"]] == ["BH-C1", "BH", "SB", "DE", "WIN"]
    (rnd,) = view["rounds"]
    assert rnd["number"] == 1 and len(rnd["pairings"]) == 2
    for board in rnd["pairings"]:
        assert board["result"] is None and board["game"] is not None
        # Each game's link is its own signed spectator page, and opens it.
        assert board["watch"] == f"/g/{board['game']}?t={chat.service.web.watch_token(board['game'])}"
        game_page = await client.get(board["watch"])
        assert game_page.status == 200
    for name in ("standings", "rounds", "live", "board", "white", "black", "result"):
        assert boot["texts"][name] == t("en", "webt." + name)


async def test_the_json_follows_a_result_and_the_page_speaks_the_chats_language(chat, client):
    chat.say("admin", "/lang es", admin=True)
    tid = tournament(chat, {"ana": "Ana", "bob": "Bob", "cid": "Cid"}, rounds=2)
    token = chat.service.web.tournament_links.token(tid)
    first = (await (await client.get(f"/api/t/{tid}?t={token}")).json())["tournament"]
    assert first["lang"] == "es" and first["rounds"][0]["title"] == t("es", "webt.round", n=1)
    assert (await (await client.get(f"/api/t/{tid}?t={token}&lang=it")).json())["tournament"]["lang"] == "it"
    again = (await (await client.get(f"/api/t/{tid}", headers={"Authorization": "Bearer " + token})).json())
    assert again["tournament"]["version"] == first["version"]         # nothing changed, nothing new
    game = next(b for b in first["rounds"][0]["pairings"] if not b["bye"])
    row = chat.storage.games.get(game["game"])
    assert row is not None
    # White moves, then resigns in the chat (asked, then confirmed): the tournament records 0-1
    # (resigning before one's first move would be a forfeit, -+).
    chat.say(row.white_id, f"/m #{row.id} {Position.from_fen(row.variant, row.fen).legal_moves()[0]}")
    chat.say(row.white_id, f"/resign #{row.id}")
    chat.say(row.white_id, f"/resign #{row.id}")
    after = (await (await client.get(f"/api/t/{tid}?t={token}")).json())["tournament"]
    assert after["version"] != first["version"]
    first_round = next(r for r in after["rounds"] if r["number"] == 1)
    board = next(b for b in first_round["pairings"] if b["game"] == row.id)
    assert board["result"] == "0-1" and board["shown"] == "0-1" and first_round["complete"]
    # Its only game over, round 1 counts in the standings and round 2 is paired (shown first).
    assert after["rounds_counted"] == 1 and [r["number"] for r in after["rounds"]] == [2, 1]
    black = row.black_name
    assert next(s for s in after["standings"] if s["name"] == black)["points"] == 1.0


async def test_reading_the_page_writes_nothing(chat, client):
    tid = tournament(chat, {"ana": "Ana", "bob": "Bob", "cid": "Cid"}, rounds=2)
    before = chat.storage.tournaments.get(tid)
    outbox = len(chat.outbox_notices())
    for _ in range(3):
        assert (await client.get(signed(chat, tid))).status == 200
        assert (await client.get(f"/api/t/{tid}?t={chat.service.web.tournament_links.token(tid)}")).status == 200
    assert chat.storage.tournaments.get(tid) == before
    assert len(chat.outbox_notices()) == outbox


async def test_the_script_and_style_are_served(client):
    for name, kind in (("tournament.js", "application/javascript"), ("tournament.css", "text/css")):
        found = await client.get(f"/static/{name}")
        assert found.status == 200 and found.content_type == kind
    script = await (await client.get("/static/tournament.js")).text()
    # Names go in as text only: the script never writes markup.
    assert "innerHTML" not in script and "insertAdjacentHTML" not in script and "document.write" not in script


async def test_a_round_robin_has_its_cross_table_a_swiss_none(chat, client):
    tid = tournament(chat, {"ana": "Ana", "bob": "Bob", "cid": "Cid"}, fmt="roundrobin", rounds=None)
    token = chat.service.web.tournament_links.token(tid)
    view = (await (await client.get(f"/api/t/{tid}?t={token}")).json())["tournament"]
    assert view["format"] == "roundrobin" and view["format_name"] == t("en", "webt.format.roundrobin")
    assert view["rounds_total"] == 3 and [tb["code"] for tb in view["tiebreaks"]] == ["DE", "WIN", "SB"]
    cross = view["cross"]
    assert len(cross) == 3 and all(len(row) == 3 for row in cross)
    assert [cross[i][i] for i in range(3)] == ["x", "x", "x"]
    assert all(cross[i][j] is None for i in range(3) for j in range(3) if i != j)      # nothing played yet
    swiss = tournament_in(chat, "other-group")
    assert (await (await client.get(f"/api/t/{swiss}?t={chat.service.web.tournament_links.token(swiss)}"))
            .json())["tournament"]["cross"] is None


def tournament_in(chat: WebChat, group: str) -> int:
    """A started 3-player Swiss in another group (a chat has one tournament at a time)."""
    use = chat.service.app.tournaments
    now = chat.now[0]

    def who(user: str) -> Caller:
        record = chat.storage.players.ensure_chat(PLATFORM, group, "group", now)
        return Caller(Player(PLATFORM, user, user.capitalize(), user, "en"), Where(PLATFORM, group), now, now, record)
    made = use.create(who("admin"), NewTournamentArgs("swiss", "italian", 2), "en")
    assert isinstance(made, TournamentCreated), made
    for user in ("ana", "bob", "cid"):
        use.join(who(user))
    assert isinstance(use.start(who("admin")), Started)
    return made.tournament.id


async def test_the_chats_standings_link_opens_the_page(chat, client):
    """The link the chat's /tournament standings carries (while the board is served) is this page."""
    tid = tournament(chat, {"ana": "Ana", "bob": "Bob", "cid": "Cid"}, rounds=2)
    base = str(client.make_url("")).rstrip("/")
    chat.service.chat.serve_web(base, chat.service.web)
    replies = chat.say("ana", "/tournament standings")
    urls = [b.url for r in replies for row in r.buttons for b in row if b.url]
    assert urls == [base + chat.service.web.tournament_path(tid)]
    page = await client.get(urls[0][len(base):])
    assert page.status == 200 and boot_of(await page.text())["view"]["id"] == tid
