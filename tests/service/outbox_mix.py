"""A realistic outbox: what the service says on its own over a day of several chats.

Used by tests/service/test_outbox_notifications.py (row sizes) and bench/outbox_two_processes.py
(two processes delivering it).  Only the service's public entry points are used (``handle``,
``run_due``, ``settle``), so the same script runs on older versions of the bot.

Per chat: a game between two people with an hour per move (a reminder, then a loss on time), two
games against the bot (the bot answers a move; the bot opens), and the daily puzzle (posted at
08:00 UTC).
"""

from __future__ import annotations

from bot.service import ChatEvent, GameService

PLATFORM = "test"
# 2023-11-14 22:13:20 UTC: the daily posts are due the next morning.
T0 = 1_700_000_000.0
HOUR = 3600.0


def event(chat: str, user: str, text: str, *, admin: bool = False) -> ChatEvent:
    return ChatEvent(platform=PLATFORM, chat_id=chat, user_id=user, user_name=user.capitalize(), chat_kind="group",
                     username=user, language="es" if chat.endswith("es") else "en", text=text, is_admin=admin)


def fill(service: GameService, now: list[float], chats: int = 6, settle: float = 60.0) -> None:
    """Play a day of ``chats`` group chats on ``service`` (its clock reads ``now[0]``); the outbox
    is left holding what it said on its own, none of it delivered."""
    start(service, chats, settle)
    begun = now[0]
    # Later: the reminders (a tenth of the hour left), the losses on time, the next morning's
    # daily posts.
    for later in LATER:
        now[0] = begun + later
        service.run_due(PLATFORM)
    service.settle(settle)


# When the timed work is looked at, after ``start``: the reminders, the losses on time, the daily posts.
LATER = (0.91 * HOUR, 1.01 * HOUR, 11 * HOUR)


def start(service: GameService, chats: int = 6, settle: float = 60.0) -> None:
    """The games and subscriptions of ``chats`` chats, and the bot's answers; the rest of the day
    is timed work (``LATER``)."""
    names = [f"chat-{i}-{'es' if i % 2 else 'en'}" for i in range(chats)]
    for number, chat in enumerate(names):
        ana, bob, eve, ivo = f"ana{number}", f"bob{number}", f"eve{number}", f"ivo{number}"

        def say(user: str, text: str, chat: str = chat) -> None:
            service.handle(event(chat, user, text))
        say(ana, "/new italian white 1h")
        say(bob, "/accept")
        say(ana, "/m 22-18" if number % 2 == 0 else "/m 21-17")
        say(eve, "/play italian white level 1")
        say(eve, "/m 23-19")
        say(ivo, "/play italian black level 1")
        service.handle(event(chat, ana, "/daily on 08:00 UTC italian", admin=True))
    # The bot answers every game it is in (unless its engine is held: then the next process does).
    if settle:
        service.settle(settle)
