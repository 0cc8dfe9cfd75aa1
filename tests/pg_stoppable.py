"""A throw-away PostgreSQL server a test may stop and start again (an outage of the bot's database).

Its own server, not the test process's shared one (tests/pg_server.py): stopping that one would
fail whatever else runs in the process.  It comes back on the same port and data folder, as a
restarted server does; what was committed before the stop is there again.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pg_server import REQUIRE, PostgresServer, find_binaries, unavailable_reason


class StoppableServer(PostgresServer):
    """A PostgresServer with ``halt`` (pg_ctl stop) and ``resume`` (pg_ctl start on the same port
    and data folder)."""

    def start(self) -> None:
        super().start()
        self.running = True

    def _options(self) -> str:
        # As PostgresServer.start gives them to a durable server (a restart must listen where the
        # bot connects).
        return " ".join([f"-p {self.port}", f"-k {self.folder}", "-c listen_addresses=127.0.0.1",
                         "-c max_connections=200", "-c shared_buffers=32MB"])

    def halt(self, mode: str = "fast") -> None:
        """Stop the server: ``fast`` ends every session with a goodbye (57P01), ``immediate``
        kills them without one (as a crash does)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop")
        self.running = False

    def resume(self) -> None:
        """Start it again on the same port and data folder; returns once it accepts connections."""
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.folder / "log"), "-w", "-t", "60",
                  "-o", self._options(), "start")
        self.running = True


def stoppable_server() -> StoppableServer:
    """A started server of the caller's own (skips, or fails under DRAUGHTS_REQUIRE_POSTGRES,
    where none can run); the caller stops it (``stop``)."""
    reason = unavailable_reason()
    if reason is not None:
        if REQUIRE:
            pytest.fail(f"PostgreSQL tests required (DRAUGHTS_REQUIRE_POSTGRES) but cannot run: {reason}")
        pytest.skip(reason)
    binaries = find_binaries()
    assert binaries is not None
    # Durable: what the bot was told is committed must survive an immediate stop, as in production.
    server = StoppableServer(binaries, durable=True)
    try:
        server.start()
    except Exception:
        server.stop()
        raise
    return server


@pytest.fixture(scope="module", name="server")
def module_server() -> Iterator[StoppableServer]:
    """The fixture ``server``: one stoppable server for a test module, stopped after it.  A module
    takes it with ``from pg_stoppable import module_server as module_server``."""
    started = stoppable_server()
    try:
        yield started
    finally:
        started.stop()
