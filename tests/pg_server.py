"""A throw-away PostgreSQL server for the tests, started from the machine's own binaries.

One server per test process (pytest-xdist worker), in a temporary folder, listening on a Unix
socket there and on a free loopback port; every test that needs a database gets a new, empty
one (``new_database``).  Nothing is mocked: it is the PostgreSQL the bot talks to in production.

The binaries are found on PATH (``initdb``, ``pg_ctl``, ``postgres``) or in Debian's
``/usr/lib/postgresql/<version>/bin``.  Where there are none, the tests that need a server skip,
unless ``DRAUGHTS_REQUIRE_POSTGRES=1`` (set by ``.ci/run``), which turns the skip into a failure.

initdb refuses to run as root: as root, the server runs as the ``postgres`` user (or ``nobody``),
which owns its folder.
"""

from __future__ import annotations

import atexit
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import threading
import uuid
from pathlib import Path

import pytest

REQUIRE = os.environ.get("DRAUGHTS_REQUIRE_POSTGRES", "") not in ("", "0")
USER = "draughts"


def find_binaries() -> Path | None:
    """The folder holding initdb, pg_ctl and postgres, or None."""
    initdb = shutil.which("initdb")
    if initdb and shutil.which("pg_ctl") and shutil.which("postgres"):
        return Path(initdb).resolve().parent
    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if all(Path(folder, name).exists() for name in ("initdb", "pg_ctl", "postgres")):
            return Path(folder)
    return None



def started_server(durable: bool = True) -> PostgresServer:
    """A started server of a script's own (the benches), which the script stops; a machine without
    the binaries ends the script with a message."""
    binaries = find_binaries()
    if binaries is None:
        raise SystemExit("no PostgreSQL binaries (initdb, pg_ctl, postgres) on this machine")
    server = PostgresServer(binaries, durable=durable)
    server.start()
    return server

def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PostgresServer:
    """One running server; ``url(name)`` names one of its databases."""

    def __init__(self, binaries: Path, durable: bool = False) -> None:
        self.binaries = binaries
        # Short: a Unix socket path must fit in 107 bytes.
        self.folder = Path(tempfile.mkdtemp(prefix="pg-"))
        self.data = self.folder / "data"
        self.port = _free_port()
        self.durable = durable
        self._lock = threading.Lock()
        self._run_as: pwd.struct_passwd | None = None
        if os.geteuid() == 0:
            for name in ("postgres", "nobody"):
                try:
                    self._run_as = pwd.getpwnam(name)
                    break
                except KeyError:
                    continue
            if self._run_as is None:
                raise RuntimeError("running as root and there is no 'postgres' or 'nobody' user to run PostgreSQL as")
            os.chown(self.folder, self._run_as.pw_uid, self._run_as.pw_gid)
        self._started = False

    def _as_owner(self) -> None:
        if self._run_as is not None:
            os.setgid(self._run_as.pw_gid)
            os.setuid(self._run_as.pw_uid)

    def _run(self, *args: str) -> None:
        env = dict(os.environ, LC_ALL="C", LANG="C")
        done = subprocess.run([str(self.binaries / args[0]), *args[1:]], preexec_fn=self._as_owner,
                              capture_output=True, text=True, env=env, cwd=self.folder, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{args[0]} failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}")

    def start(self) -> None:
        self._run("initdb", "-D", str(self.data), "-U", USER, "-A", "trust", "-E", "UTF8", "--no-sync")
        options = [f"-p {self.port}", f"-k {self.folder}", "-c listen_addresses=127.0.0.1",
                   "-c max_connections=200", "-c shared_buffers=32MB"]
        if not self.durable:
            # Test databases are thrown away: no fsync (a killed *client* still loses nothing it
            # was told was committed; only a crash of this machine would).
            options += ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"]
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.folder / "log"), "-w", "-t", "60",
                  "-o", " ".join(options), "start")
        self._started = True

    def stop(self) -> None:
        if self._started:
            self._started = False
            try:
                self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
            except (RuntimeError, subprocess.TimeoutExpired):
                pass
        shutil.rmtree(self.folder, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """The URL of a new, empty database on this server."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:16]}"
        with self._lock, psycopg.connect(self.url(), autocommit=True) as conn:
            # PostgreSQL 15 copies the template through its write-ahead log by default: about 0.1 s
            # of the server's CPU for each of the suite's hundreds of databases, against 0.02 s for
            # a file copy (the same empty database either way; the copy's checkpoint is cheap on a
            # server without fsync, so a durable server keeps the default).
            strategy = " STRATEGY FILE_COPY" if not self.durable and conn.info.server_version >= 150000 else ""
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE template0 ENCODING \'UTF8\'{strategy}')
        return self.url(name)

    def drop_database(self, url: str) -> None:
        import psycopg

        name = url.rsplit("/", 1)[1]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


_server: PostgresServer | None = None
_server_lock = threading.Lock()


def unavailable_reason() -> str | None:
    """Why PostgreSQL tests cannot run here, or None."""
    if find_binaries() is None:
        return "no PostgreSQL server binaries (initdb, pg_ctl, postgres) on this machine"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install '.[postgres]')"
    return None


def server() -> PostgresServer:
    """This process's server, started on first use (skips the test, or fails it under
    DRAUGHTS_REQUIRE_POSTGRES, where none can run)."""
    global _server
    reason = unavailable_reason()
    if reason is not None:
        if REQUIRE:
            pytest.fail(f"PostgreSQL tests required (DRAUGHTS_REQUIRE_POSTGRES) but cannot run: {reason}")
        pytest.skip(reason)
    with _server_lock:
        if _server is None:
            binaries = find_binaries()
            assert binaries is not None
            started = PostgresServer(binaries)
            try:
                started.start()
            except Exception:
                started.stop()
                raise
            atexit.register(started.stop)
            _server = started
    return _server


def new_database_url() -> str:
    """A new, empty database on this process's server (see ``server``)."""
    return server().new_database()
