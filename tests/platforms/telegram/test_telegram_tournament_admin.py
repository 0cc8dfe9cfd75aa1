"""Issue 32 (TFIX2): on Telegram the adapter asks getChatMember only when the registry says a use
of a command is for admins; an accented or capitalised /tournament subcommand (which the command
reads folded) must be asked about as the plain word is, and refused for a member.  The real
python-telegram-bot Application and adapter, the real service on SQLite, the strict fake Bot API."""

from __future__ import annotations

import pytest
from telegram_fake_api import GROUP, USERS

from bot.i18n import t

CHAT = GROUP["id"]


@pytest.mark.parametrize("words", ["nuévo swiss 3", "NEW swiss 3", "stárt", "STÁRT", "cancél"])
async def test_a_member_s_accented_admin_word_is_asked_of_telegram_and_refused(tg, words):
    if "new" not in words.lower() and "nuévo" not in words:
        tg.http.admins.add((CHAT, USERS["ana"]["id"]))
        await tg.say("ana", "/tournament new swiss 3")
        assert tg.storage.tournaments.find() != []
    before = [(r.status, r.state) for r in tg.storage.tournaments.find()]
    asked = len(tg.http.named("getChatMember"))
    await tg.say("bob", f"/tournament {words}")
    assert len(tg.http.named("getChatMember")) == asked + 1
    assert tg.http.named("sendMessage")[-1].params["text"] == t("en", "error.admins_only", command="tournament")
    assert [(r.status, r.state) for r in tg.storage.tournaments.find()] == before
