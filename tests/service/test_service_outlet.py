"""The use cases' outlet (issue 31, item 2): its own object, built by the composition root with
the outbox, not the facade handed down to them (which tied service, compose, the chat layer, the
web board and the notice presenter into one import knot).

Everything is real: a SQLite file in tmp_path, the outbox, the notice presenter and its catalogs."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

from harness import T0

from bot.i18n import t
from bot.service import GameService
from bot.service.compose import ServiceConfig, UseCases, compose
from bot.service.features.base import UseCase
from bot.service.notifications import ChallengeLapsed
from bot.service.outbox import Outbox, ServiceOutlet
from bot.storage import SQLiteStore


def use_cases(app: UseCases) -> list[UseCase]:
    return [getattr(app, f.name) for f in fields(UseCases) if f.name not in ("runtime", "bus", "outlet")]


def test_compose_builds_the_use_cases_and_their_outlet_without_a_facade(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "o.db")
    try:
        app = compose(ServiceConfig(storage=store, clock=lambda: T0))
        assert isinstance(app.outlet, ServiceOutlet)
        assert all(case.outlet is app.outlet for case in use_cases(app))
        heard: list[str] = []
        app.outlet.add_listener(heard.append)
        with store.transaction():
            item = app.outlet.notify("test", "c1", ChallengeLapsed(7, "en"))
        app.outlet.wake("test")
        assert heard == ["test"]
        # Written to the outbox on the configuration's store, at the runtime's clock.
        assert [(row.id, row.chat_id) for row in app.outlet.outbox.claim("test")] == [(item, "c1")]
    finally:
        store.close()


def test_the_outbox_a_service_is_given_is_where_its_use_cases_write(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "o.db")
    now = [T0]
    service = GameService(store, clock=lambda: now[0])
    try:
        assert service.app.outlet is not service               # the facade is no use case's outlet
        other = Outbox(store, lambda: now[0], owner="another process")
        service.outbox = other
        assert service.app.outlet.outbox is other
        with store.transaction():
            service.app.games.tell("test", "c1", ChallengeLapsed(7, "en"))
        # Worded when delivered, by the presenter the service gave the outbox it was handed.
        assert [(o.chat_id, o.reply.text) for o in other.drain("test")] == [
            ("c1", t("en", "challenge.expired", id=7))]
    finally:
        service.close()
        store.close()


def test_a_failing_listener_is_logged_and_the_others_still_hear(tmp_path: Path, bot_errors) -> None:
    store = SQLiteStore(tmp_path / "o.db")
    try:
        outlet = ServiceOutlet(Outbox(store, lambda: T0))
        heard: list[str] = []

        def broken(platform: str) -> None:
            raise RuntimeError("an adapter's bug")

        outlet.add_listener(broken)
        outlet.add_listener(heard.append)
        outlet.wake("test")
        assert heard == ["test"]
        assert [record.getMessage() for record in bot_errors] == ["outbox listener failed"]
        bot_errors.clear()                  # logged on purpose
    finally:
        store.close()
