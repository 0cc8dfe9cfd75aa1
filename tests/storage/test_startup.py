"""A database the bot cannot use stops `python -m bot` at start with one clear line on stderr
(no traceback) and exit code 2: not a database, truncated, damaged, read-only, locked by another
process, or written by a newer version of the bot.

SQLite only: every case is about the database file (its bytes, pages, modes, WAL and SHM files, a
file deleted or replaced under the console).  PostgreSQL's start-up refusals (unreachable server,
newer schema, missing driver) are in test_postgres_migrations.py."""

from __future__ import annotations

import io
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import pytest
from catalog_text import says

from bot.storage import MIGRATIONS, Storage, StorageError

REPO = Path(__file__).resolve().parents[2]
NOBODY = 65534


def run_bot(db: Path, stdin: str = "/games\n", **env_extra: str):
    env = {k: v for k, v in os.environ.items() if not k.endswith("_BOT_TOKEN")}
    env.update(DRAUGHTS_DB=str(db), DRAUGHTS_IMAGES=str(db.parent / "boards"), PYTHONPATH=str(REPO),
               LANG="en_US.UTF-8", PYTHONDONTWRITEBYTECODE="1", **env_extra)
    return subprocess.run([sys.executable, "-m", "bot"], input=stdin, capture_output=True, text=True,
                          cwd=db.parent, env=env, timeout=60)


def refused(proc: subprocess.CompletedProcess) -> str:
    """The one stderr line of a start that was refused (checked: exit 2, no traceback, no chat)."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ")
    assert "Draughts console chat" not in proc.stdout
    return lines[0]


def filled_database(path: Path) -> Path:
    """A real bot database with enough rows to span several pages."""
    storage = Storage(path)
    for n in range(400):
        storage.ensure_chat("console", f"chat-{n}", "group", 1.0)
        storage.save_player("console", f"user-{n}", f"User {n}", f"user{n}", "en", 1.0)
    storage.close()
    return path


def test_a_file_that_is_not_a_database(tmp_path):
    db = tmp_path / "notes.db"
    db.write_text("these are my notes, not a database\n" * 50)
    line = refused(run_bot(db))
    assert "is not an SQLite database" in line and str(db) in line
    assert db.read_text().startswith("these are my notes")


def test_a_truncated_database(tmp_path):
    db = filled_database(tmp_path / "t.db")
    with db.open("r+b") as f:
        f.truncate(db.stat().st_size // 2)
    assert "damaged" in refused(run_bot(db))


def test_a_damaged_database_fails_the_integrity_check(tmp_path):
    db = filled_database(tmp_path / "d.db")
    with db.open("r+b") as f:
        f.seek(4096 * 3)
        f.write(b"\xa5" * 2000)
    line = refused(run_bot(db))
    assert "damaged" in line


def test_a_database_from_a_newer_bot_is_refused_naming_both_versions(tmp_path):
    db = tmp_path / "new.db"
    Storage(db).close()
    newer = len(MIGRATIONS) + 1
    conn = sqlite3.connect(db)
    # What a newer bot might have done: a changed column, and its schema number.
    conn.execute("ALTER TABLE games RENAME COLUMN fen TO position")
    conn.execute(f"PRAGMA user_version = {newer}")
    conn.commit()
    conn.close()
    line = refused(run_bot(db))
    assert f"version {newer}" in line and f"version {len(MIGRATIONS)}" in line and "newer" in line
    with pytest.raises(StorageError, match=f"schema version {newer}"):
        Storage(db)


def test_a_lock_held_at_start(tmp_path):
    db = tmp_path / "l.db"
    Storage(db).close()
    other = sqlite3.connect(db, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        other.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('held', 1)")
        line = refused(run_bot(db, DRAUGHTS_BUSY_TIMEOUT="0.3"))
    finally:
        other.close()
    assert "locked by another process" in line
    assert run_bot(db).returncode == 0


def test_a_bad_busy_timeout_is_one_line(tmp_path):
    assert "DRAUGHTS_BUSY_TIMEOUT" in refused(run_bot(tmp_path / "x.db", DRAUGHTS_BUSY_TIMEOUT="soon"))


@pytest.fixture
def shared_dir():
    """A folder another user can reach (pytest's tmp_path is private to its owner)."""
    path = Path(tempfile.mkdtemp(prefix="draughts-ro-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        for p in [path, *path.rglob("*")]:
            p.chmod(0o755 if p.is_dir() else 0o644)
        shutil.rmtree(path)


def run_app_as_nobody(db: Path) -> subprocess.CompletedProcess:
    """The app's run() in a forked child that became nobody: root writes anything whatever the
    mode bits say, and nobody cannot exec the venv's interpreter (it lives under /root), so the
    child keeps the interpreter it has, with every module the start needs already imported."""
    from bot.app import run
    from bot.cli import build_parser
    from bot.platforms.console import ConsoleChat  # noqa: F401  (imported before dropping rights)

    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:       # the child: never returns into pytest
        code = 99
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            os.dup2(write_end, 2)
            os.environ["DRAUGHTS_DB"] = str(db)
            sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), write_through=True)
            sys.stdout = io.StringIO()
            sys.stdin = io.StringIO("/games\n")
            code = run(build_parser().parse_args([]))
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as err:
        stderr = err.read().decode()
    _, status = os.waitpid(pid, 0)
    return subprocess.CompletedProcess([], os.waitstatus_to_exitcode(status), "", stderr)


@pytest.mark.parametrize("what", ["file", "folder"])
def test_a_read_only_database(shared_dir, what):
    folder = shared_dir / "data"
    folder.mkdir()
    db = filled_database(folder / "ro.db")
    db.chmod(0o444 if what == "file" else 0o666)
    folder.chmod(0o555 if what == "folder" else 0o777)
    proc = run_app_as_nobody(db) if os.geteuid() == 0 else run_bot(db)
    line = refused(proc)
    assert "read-only" in line and str(db) in line


def test_a_good_database_still_starts(tmp_path):
    db = filled_database(tmp_path / "ok.db")
    proc = run_bot(db)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


def damage_index(db: Path, index: str, old: bytes, new: bytes) -> None:
    """Rewrite entries of one index in place (same length, so every page stays well-formed): the
    damage PRAGMA quick_check does not see, since it never compares an index with its table."""
    conn = sqlite3.connect(db)
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name=?", (index,)).fetchone()[0]
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    with db.open("r+b") as f:
        f.seek((root - 1) * page_size)
        page = f.read(page_size)
        assert old in page
        f.seek((root - 1) * page_size)
        f.write(page.replace(old, new))
    check = sqlite3.connect(db)
    assert check.execute("PRAGMA quick_check").fetchall() == [("ok",)]
    check.close()


def test_a_damaged_index_is_refused_though_quick_check_passes(tmp_path):
    db = tmp_path / "i.db"
    started = run_bot(db, "/new italian\n/as Bob\n/accept\n")
    assert started.returncode == 0 and says(started.stdout, "en", "game.started", id=1), started.stdout
    # The chat's active game drops out of the index the chat's games are looked up by.
    damage_index(db, "games_chat", b"main", b"mais")
    line = refused(run_bot(db))
    assert "damaged" in line and str(db) in line and "games_chat" in line


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_a_database_deleted_or_replaced_under_the_console_stops_it_with_one_line(tmp_path, how):
    db = tmp_path / "gone.db"
    env = {k: v for k, v in os.environ.items() if not k.endswith("_BOT_TOKEN")}
    env.update(DRAUGHTS_DB=str(db), DRAUGHTS_IMAGES=str(tmp_path / "boards"), PYTHONPATH=str(REPO),
               LANG="en_US.UTF-8", PYTHONDONTWRITEBYTECODE="1")
    out = (tmp_path / "out.txt").open("w+")
    proc = subprocess.Popen([sys.executable, "-m", "bot"], stdin=subprocess.PIPE, stdout=out,
                            stderr=subprocess.PIPE, cwd=tmp_path, env=env, text=True)
    proc.stdin.write("/new italian\n")
    proc.stdin.flush()
    for _ in range(600):
        if says((tmp_path / "out.txt").read_text(), "en", "new.open", id=1):
            break
        time.sleep(0.05)
    else:
        raise AssertionError(f"no challenge #1 in 30 s: {(tmp_path / 'out.txt').read_text()!r}")
    if how == "deleted":
        db.unlink()
    else:
        Storage(tmp_path / "other.db").close()
        os.replace(tmp_path / "other.db", db)
    _, stderr = proc.communicate("/as Bob\n/accept\n", timeout=60)
    out.close()
    assert proc.returncode == 1, ((tmp_path / "out.txt").read_text(), stderr)
    assert "Traceback" not in stderr and len(stderr.splitlines()) == 1, stderr
    assert stderr.startswith("error: ") and how in stderr and str(db) in stderr
    assert not says((tmp_path / "out.txt").read_text(), "en", "game.started", id=1)   # the /accept was never answered


# -- issue 21, item 3: only the owner may read the database ------------------------------------------


def _mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def test_a_new_database_and_its_wal_and_shm_are_readable_by_the_owner_only(tmp_path):
    old = os.umask(0o022)           # the usual umask, under which files come out 0644
    try:
        db = tmp_path / "new.db"
        storage = Storage(db)
        storage.ensure_chat("console", "c", "group", 1.0)
        storage.save_player("console", "u", "Ana", None, "en", 1.0)
        wal, shm = Path(f"{db}-wal"), Path(f"{db}-shm")
        assert wal.exists() and shm.exists()
        assert (_mode(db), _mode(wal), _mode(shm)) == (0o600, 0o600, 0o600)
        storage.close()
    finally:
        os.umask(old)


def test_an_existing_world_readable_database_is_tightened_at_start(tmp_path):
    db = filled_database(tmp_path / "old.db")
    os.chmod(db, 0o644)
    storage = Storage(db)
    try:
        storage.save_player("console", "u", "Ana", None, "en", 1.0)
        assert _mode(db) == 0o600
        assert all(_mode(Path(f"{db}-{ext}")) == 0o600 for ext in ("wal", "shm"))
    finally:
        storage.close()
    # A read-only file stays read-only (only the others' bits go).
    os.chmod(db, 0o444)
    try:
        Storage(db).close()         # root may still write it; anyone else is refused
    except StorageError as err:
        assert "read-only" in str(err)
    assert _mode(db) == 0o400
