"""/storm in the chats (issue 33): a storm run started for the one who asks, its link given to them
alone (a run is played on the web board, never in the chat), and its result as the chat hears it.

In a group the run's link is the player's own (it plays their run): on Telegram it goes to their
private chat with the bot (the group sees a reaction to the command), on Discord it is ephemeral,
and the group hears one line that a storm started.  The result comes later through the outbox
(``StormFinished``, worded by ``result_reply``) in the chat where /storm was asked.
"""

from __future__ import annotations

import re

from bot.i18n import t
from bot.service.chat.commands import parse_variant
from bot.service.chat.context import Ctx
from bot.service.chat.links import WebLinks
from bot.service.chat.wording import variant_name
from bot.service.compose import UseCases
from bot.service.events import Button, Reply
from bot.service.features.storm import MISS_SECONDS, RUN_SECONDS, StormUnavailable
from bot.service.notifications import StormFinished

# ``/start storm<run>`` in a private chat (Telegram's link for a member whose private chat with the
# bot was not open when the run's link was sent there): the run's link again, to its player only (a
# run's number alone gives nobody else anything).
START = re.compile(r"storm([0-9]{1,9})")


def start(app: UseCases, ctx: Ctx, args: list[str], links: WebLinks | None) -> list[Reply]:
    """/storm [variant]: a new run of the variant (else the chat's) and its link, to the asker alone."""
    variant = None
    if args:
        variant = parse_variant(args)
        if variant is None:
            return [Reply(t(ctx.lang, "rules.unknown", word=" ".join(args)[:30]), private=True)]
    if links is None:
        return [Reply(t(ctx.lang, "storm.off"), private=True)]
    event = ctx.event
    variant = variant or app.games.default_variant(ctx.caller, ctx.lang)
    started = app.storm.start(ctx.caller, variant, ctx.lang)
    name = variant_name(ctx.lang, variant)
    if isinstance(started, StormUnavailable):
        return [Reply(t(ctx.lang, "storm.no_puzzles", variant=name), private=True)]
    own = _link_reply(ctx, links, started.run_id, started.variant, again=started.running)
    if event.chat_kind == "private" or started.running:
        # A run given back is no news to the group (it heard of it when it started).
        return [own]
    return [Reply(t(ctx.lang, "storm.group", name=ctx.caller.name, variant=name)), own]


def _link_reply(ctx: Ctx, links: WebLinks, run_id: int, variant: str, again: bool = False) -> Reply:
    """The run's link for its player, said to them alone (a group's member: in their private chat
    on Telegram, which ``/start storm<run>`` opens when it was not open yet); ``again``: the run
    was running already (/storm asked again gives it back)."""
    event = ctx.event
    private_chat = event.chat_kind == "private"
    url = links.storm(run_id, event.platform, event.user_id)
    text = t(ctx.lang, "storm.running" if again else "storm.started", variant=variant_name(ctx.lang, variant),
             minutes=int(RUN_SECONDS // 60), seconds=int(MISS_SECONDS))
    # Telegram opens a web_app button as the Mini App, only in a private chat and only over https.
    web_app = event.platform == "telegram" and private_chat and links.url.startswith("https://")
    return Reply(text, buttons=[[Button(t(ctx.lang, "storm.open"), "", url=url, web_app=web_app)]], private=True,
                 start_payload=None if private_chat else f"storm{run_id}")


def open_run(app: UseCases, ctx: Ctx, run_id: int, links: WebLinks | None) -> list[Reply]:
    """``/start storm<run>`` in a private chat: the run's link, when the one asking plays it and it
    is still running; else that there is no such storm for them (nothing is said of another's)."""
    if links is None:
        return [Reply(t(ctx.lang, "storm.off"))]
    row = app.storm.run(run_id)
    if row is None or (row.platform, row.user_id) != (ctx.event.platform, ctx.event.user_id) or row.status != "running":
        return [Reply(t(ctx.lang, "storm.no_run"))]
    return [_link_reply(ctx, links, run_id, row.variant)]


def result_reply(notice: StormFinished) -> Reply:
    """A finished run's line in the chat where it was asked for."""
    return Reply(t(notice.lang, "storm.result", name=notice.name, variant=variant_name(notice.lang, notice.variant),
                   solved=notice.solved, missed=notice.missed))
