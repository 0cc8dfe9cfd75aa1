"""The words of a challenge: its line in a list, and its message once it is closed.  No drawing
here: the challenges' use case words the closed messages of other chats (the outbox's) with it."""

from __future__ import annotations

from bot.i18n import t
from bot.service.chat.wording import duration, variant_name
from bot.service.events import Reply
from bot.service.features.results_games import ChallengeClosed
from bot.storage.records import ChallengeRecord


def challenge_line(lang: str, ch: ChallengeRecord) -> str:
    target = f" → @{ch.target_username}" if ch.target_username else ""
    return (f"#{ch.id} {ch.challenger_name}{target}: {variant_name(lang, ch.variant)}, "
            f"{t(lang, 'color.' + ch.color)}, {duration(lang, ch.move_seconds)}")


def closed_text(lang: str, ch: ChallengeRecord, status: str, by: str | None = None, game_id: int | None = None) -> str:
    """A closed challenge's message as it becomes: the challenge and what became of it."""
    return (challenge_line(lang, ch) + "\n"
            + t(lang, f"challenge.was_{status}", id=ch.id, name=ch.challenger_name, by=by or "", game=game_id or 0))


def closed_edit(item: ChallengeClosed) -> Reply:
    """The edit of a closed challenge's message, in its chat's language."""
    return Reply(closed_text(item.chat_lang, item.challenge, item.status, item.by, item.game_id),
                 edit_of=item.message_id)
