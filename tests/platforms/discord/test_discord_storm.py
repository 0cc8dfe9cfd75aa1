"""/storm on Discord (issue 33), through the real DraughtsBot with its web board served, the real
service on a real SQLite file, and the strict fake Discord: the run's link is ephemeral (the
member's alone), the channel hears one line that a storm started; the run is answered on the board
(the storm page's own calls), and its end reaches the channel once, through the outbox's delivery
round: the result line, then the chat's record message."""

from __future__ import annotations

import time

import pytest
from catalog_text import tr
from discord_fake import CHANNEL_ID, Harness, Sent

from bot.puzzles import bank
from bot.service.features.storm import RUN_SECONDS

WEB_ENV = {"WEB_URL": "https://board.example.org", "PORT": "0", "WEB_HOST": "127.0.0.1"}


def link_buttons(sent: Sent) -> list[tuple[str, str]]:
    return [(c["label"], c["url"]) for row in sent.message["components"] for c in row["components"]
            if c.get("style") == 5]


@pytest.fixture
async def web_h(h: Harness):
    h.bot.env = WEB_ENV
    await h.bot.start_web()
    assert h.bot.web_server is not None
    return h


async def test_a_storm_in_a_channel_is_the_members_and_only_its_result_is_posted(web_h: Harness) -> None:
    h = web_h
    posts = len(h.fake.channel_posts())
    token = await h.slash("storm", "ana", {"variant": "italian"})
    answers = h.fake.answers(token)
    private = [a for a in answers if a.ephemeral]
    public = [a for a in answers if not a.ephemeral]
    assert len(private) == 1 and private[0].content.startswith(tr("en", "storm.started", variant=tr(
        "en", "variant.italian"), minutes=3, seconds=10)[:20])
    ((label, url),) = link_buttons(private[0])
    assert label == tr("en", "storm.open") and url.startswith("https://board.example.org/storm/")
    assert [p.content for p in public] == [tr("en", "storm.group", name="Ana", variant=tr("en", "variant.italian"))]
    assert all("/storm/" not in p.content for p in h.fake.channel_posts())

    # The run answered as its page does: the first puzzle solved.
    run_id = int(url.split("/storm/")[1].split("?")[0])
    page = h.bot.service.web.storm
    assert page is not None and page.check(run_id, url.partition("?t=")[2]) is None
    state = page.state(run_id, "en")
    assert state is not None
    puzzle = bank.by_id("italian", state["puzzle"])
    assert puzzle is not None
    line = puzzle["solution"]
    for i in range(0, len(line), 2):
        path = next(m["path"] for m in state["moves"] if m["notation"] == line[i])
        found = page.answer(run_id, "en", state["index"], state["ply"], path, None)
        assert found is not None and found[0] == 200
        state = found[1]["state"]
    assert state["solved"] == 1
    # The channel got nothing of the run itself (the line above is the command's answer).
    assert len(h.fake.channel_posts()) == posts

    # The server's clock runs out; the clocks end the run; one delivery round posts the result and
    # the chat's record (the first: a new message).
    h.bot.service.app.runtime.clock = lambda: time.time() + RUN_SECONDS + 1
    h.bot.service.app.clocks.run_due("discord")
    await h.bot.delivery_round()
    texts = [p.content for p in h.fake.channel_posts()[posts:]]
    result = tr("en", "storm.result", name="Ana", variant=tr("en", "variant.italian"), solved=1, missed=0)
    assert texts[0] == result
    assert texts[1] == tr("en", "records.message", mode=tr("en", "records.mode.storm"),
                          variant=tr("en", "variant.italian"), score=1, name="Ana")
    assert len(texts) == 2 and all(p.channel_id == CHANNEL_ID for p in h.fake.channel_posts())
    h.bot.service.app.clocks.run_due("discord")
    await h.bot.delivery_round()
    assert len(h.fake.channel_posts()) == posts + 2
