"""Where the compiled search (bot/ai/jit.py) is kept, and compiling it once per machine.

numba's default keeps a compiled function beside its source, in ``bot/ai/__pycache__``: inside the
installed package, in files pip's RECORD does not list.  An uninstall leaves them behind, and the
half package left in site-packages then shadows a later install (``cannot import name 'egtb' from
'bot.ai'``).  So the cache lives in the user's cache folder: ``$DRAUGHTS_CACHE_DIR``, else
``$NUMBA_CACHE_DIR`` (numba's own setting, for a deployment that already sets it), else
``$XDG_CACHE_HOME/draughts-bot/numba``, else ``~/.cache/draughts-bot/numba``
(``%LOCALAPPDATA%\\draughts-bot\\numba`` on Windows).  numba reads it when it decides where a
function's cache goes (at ``@njit(cache=True)``), so ``configure`` runs before jit.py imports numba,
in every process that imports the engine (the engine workers too).

The bot starts several engine processes at once, and each would compile the search on its own (about
10 s of CPU each, so a minute on a busy two-core machine).  ``first_compile`` lets one of them
compile: the first to take the folder's lock compiles and writes the cache, the others wait for the
lock and then load what it wrote; a ``ready-*`` mark then lets every later process skip the lock.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import os
import platform
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from bot import config

ENV = "DRAUGHTS_CACHE_DIR"
LOCK_NAME = "compile.lock"

_configured: Path | None = None


def cache_dir() -> Path:
    """The folder the environment names for the compiled search (bot.config.cache_folder: see the
    module's docstring)."""
    folder = config.engine().cache_dir
    return folder if folder is not None else _fallback()


def _fallback() -> Path:
    uid = os.getuid() if hasattr(os, "getuid") else os.getpid()
    return Path(tempfile.gettempdir()) / f"draughts-bot-numba-{uid}"


def _check_writable(folder: Path) -> None:
    """OSError unless files can be made in ``folder`` (made if missing)."""
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile(dir=folder):
        pass


def configure() -> Path:
    """Point numba at the cache folder (made if missing) and return it.  Once per process; call it
    before numba is imported, or at least before any ``@njit(cache=True)`` is applied."""
    global _configured
    if _configured is not None:
        return _configured
    folder = cache_dir()
    try:
        _check_writable(folder)
    except OSError:
        # Never the package folder: a temp folder still lets the workers share one compile.
        folder = _fallback()
        with contextlib.suppress(OSError):
            _check_writable(folder)
    # The environment for numba's import and its config reloads, and for child processes; numba's
    # config directly when it was imported already.
    config.set_numba_cache_dir(folder)
    numba_config = sys.modules.get("numba.core.config")
    if numba_config is not None:
        numba_config.CACHE_DIR = str(folder)  # type: ignore[attr-defined]
    _configured = folder
    return folder


def folder() -> Path:
    """The folder in use (``configure`` chooses it the first time)."""
    return configure()


def _version_key() -> str:
    """What a compiled cache is good for: the compiled module's source and where it is (numba keeps
    one cache per source path: each install has its own), numba's version, this Python and this
    kind of machine (numba compiles again when any of them changes)."""
    source = Path(__file__).resolve().with_name("jit.py")
    digest = hashlib.sha256(source.read_bytes())
    digest.update(str(source).encode("utf-8", "surrogateescape"))
    try:
        numba = importlib.metadata.version("numba")
    except importlib.metadata.PackageNotFoundError:
        numba = "none"
    digest.update(f"{numba} {sys.version_info[:2]} {platform.machine()} {sys.platform}".encode())
    return digest.hexdigest()[:20]


def _mark() -> Path:
    return folder() / f"ready-{_version_key()}"


def ready() -> bool:
    """Whether this machine holds the compiled search of this version (a process then loads it in
    well under a second)."""
    try:
        return _mark().exists()
    except OSError:
        return False


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    try:
        handle = open(folder() / LOCK_NAME, "a+b")  # noqa: SIM115 - closed below, after unlocking
    except OSError:
        yield                                   # no lock to be had: each process compiles, as before
        return
    with handle:
        _lock(handle)
        try:
            yield
        finally:
            _unlock(handle)


def _lock(handle: IO[bytes]) -> None:
    if sys.platform == "win32":
        import msvcrt

        while True:
            try:
                msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
                return
            except OSError:
                time.sleep(0.2)
    import fcntl

    fcntl.flock(handle.fileno(), fcntl.LOCK_EX)   # let go by the kernel if the holder dies


def _unlock(handle: IO[bytes]) -> None:
    if sys.platform == "win32":
        import msvcrt

        with contextlib.suppress(OSError):
            msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
        return
    import fcntl

    fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


@contextlib.contextmanager
def first_compile() -> Iterator[None]:
    """Around the first compile of a process: with the cache ready, nothing; else the machine's
    compile lock is held, so that one process compiles (and writes the cache) while the others wait
    and then load it.  The body succeeding marks the cache ready."""
    if ready():
        yield
        return
    with _locked():
        yield
        with contextlib.suppress(OSError):
            _mark().touch()
