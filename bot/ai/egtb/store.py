"""Table files: one xz-compressed file per variant and piece count.

A file is a magic line, a JSON header line (format, variant, the rules it was built by, pieces,
and each material's name, length and packed length in order), then each material's table
compressed on its own with xz (whose check catches a damaged one).  A file is unpacked once per
machine into the engine's cache folder and mapped by every process that reads it (``TableFile``).
Shipped files live in
``data/`` next to this module; ``python -m bot ai egtb build`` writes to the user's table
directory (``DRAUGHTS_EGTB_DIR``, else ``~/.cache/draughts-bot/egtb``) unless told where.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import lzma
import mmap
import os
import threading
from pathlib import Path

from bot import config
from bot.rules import Variant
from bot.rules.variants import Crowning

from .solve import Material, materials, name

FORMAT = 1
MAGIC = b"draughts-egtb\n"
SHIPPED = Path(__file__).resolve().parent / "data"
SUFFIX = ".egtb.xz"
UNPACKED_SUFFIX = ".egtb"

log = logging.getLogger("bot.ai.egtb")


class TableFileError(Exception):
    """A table file that cannot be used (damaged, another format, other rules)."""


def user_dir() -> Path:
    """Where built tables go and are looked for first."""
    given = config.engine().egtb_dir
    return given if given is not None else Path.home() / ".cache" / "draughts-bot" / "egtb"


def file_name(v: Variant, pieces: int) -> str:
    return f"{v.id}-{pieces}{SUFFIX}"


def rules_tag(v: Variant) -> list[object]:
    """What the tables depend on: tables built under other rules are refused."""
    tag: list[object] = [v.id, v.size, v.flying_kings, v.men_capture_kings, str(v.priority)]
    # Flags added after tables were shipped are named only where they differ from the rules those
    # tables were built by, so the shipped tables' headers still match.
    if v.men_capture_backwards:
        tag.append("men_capture_backwards")
    if v.crowning is not Crowning.STOPS:
        tag.append(f"crowning={v.crowning.value}")
    return tag


def save(path: Path, v: Variant, pieces: int, tables: dict[Material, bytes | bytearray]) -> int:
    """Write the tables of ``v`` up to ``pieces`` to ``path`` (atomically); returns its size."""
    order = materials(pieces)
    packed = [lzma.compress(bytes(tables[m]), preset=9 | lzma.PRESET_EXTREME) for m in order]
    header = {
        "format": FORMAT,
        "variant": v.id,
        "rules": rules_tag(v),
        "pieces": pieces,
        "materials": [[name(m), list(m), len(tables[m]), len(z)] for m, z in zip(order, packed, strict=True)],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".part")
    with open(tmp, "wb") as out:
        out.write(MAGIC + json.dumps(header).encode() + b"\n")
        for z in packed:
            out.write(z)
    os.replace(tmp, path)
    return path.stat().st_size


class TableFile:
    """A table file whose materials are read where they are needed.

    On first use every material is unpacked, once per machine, into one file in the engine's cache
    folder (``unpacked_dir``), which each process then maps read-only: the bot's engine workers all
    read the same pages of the system's file cache instead of each holding its own copy (the
    largest variant's tables are 47 MB unpacked).  Where that folder cannot be written, each
    material is unpacked into this process's memory on first use instead."""

    def __init__(self, path: Path, v: Variant) -> None:
        self.path = path
        self.variant = v
        try:
            raw = path.read_bytes()
        except OSError as err:
            raise TableFileError(f"{path}: {err}") from None
        if not raw.startswith(MAGIC):
            raise TableFileError(f"{path}: not a table file")
        end = raw.find(b"\n", len(MAGIC))
        try:
            header = json.loads(raw[len(MAGIC):end])
        except ValueError:
            raise TableFileError(f"{path}: no header") from None
        if header.get("format") != FORMAT or header.get("rules") != rules_tag(v):
            raise TableFileError(f"{path}: built for other rules or another format")
        self.pieces = int(header["pieces"])
        listed = [tuple(entry[1]) for entry in header["materials"]]
        if listed != materials(self.pieces):
            raise TableFileError(f"{path}: the materials are not those of {self.pieces} pieces")
        self._raw: bytes | None = raw
        self._digest = hashlib.sha256(raw).hexdigest()[:20]
        self._where: dict[Material, tuple[int, int, int]] = {}
        at = end + 1
        for entry in header["materials"]:
            m = (int(entry[1][0]), int(entry[1][1]), int(entry[1][2]), int(entry[1][3]))
            self._where[m] = (at, int(entry[3]), int(entry[2]))
            at += int(entry[3])
        if at != len(raw):
            raise TableFileError(f"{path}: {len(raw) - at} bytes more or less than the header says")
        self._lock = threading.Lock()
        self._mapped: tuple[mmap.mmap, dict[Material, tuple[int, int]]] | None = None
        self._map_tried = False
        self._unpacked: dict[Material, bytes] = {}

    @property
    def materials(self) -> list[Material]:
        return list(self._where)

    def table(self, m: Material) -> bytes | memoryview:
        """Material ``m``'s table, unpacked (xz's own check catches a damaged one): a view of the
        shared mapping (``mapped``), else bytes of this process's own."""
        whole = self.mapped()
        if whole is not None:
            at, size = whole[1][m]
            return memoryview(whole[0])[at:at + size]
        with self._lock:
            got = self._unpacked.get(m)
            if got is None:
                got = self._unpacked[m] = self._unpack(m)
        return got

    def mapped(self) -> tuple[mmap.mmap, dict[Material, tuple[int, int]]] | None:
        """Every material in one mapping of the unpacked file (shared by every process that maps it)
        and where each material starts in it and how long it is; None when the file could not be
        written nor read, or a material is damaged (the materials are then unpacked in memory one
        by one, see ``table``, and only the damaged one fails).  Mapped
        copy-on-write: a writable buffer to numpy and numba (nothing writes to it), the same pages
        as every other process's until then."""
        if self._map_tried:
            return self._mapped
        with self._lock:
            if not self._map_tried:
                try:
                    self._mapped = self._map()
                except (OSError, TableFileError) as err:
                    log.warning("endgame tables %s kept in memory: the unpacked copy cannot be used (%s)",
                                self.path.name, err)
                    self._mapped = None
                if self._mapped is not None:
                    self._raw = None                    # everything is in the mapping now
                self._map_tried = True
        return self._mapped

    def unpacked_path(self) -> Path:
        """Where this file's tables are unpacked (named by the packed file's contents: a rebuilt or
        updated file gets a new one)."""
        return unpacked_dir() / f"{self.variant.id}-{self.pieces}-{self._digest}{UNPACKED_SUFFIX}"

    def _map(self) -> tuple[mmap.mmap, dict[Material, tuple[int, int]]]:
        where: dict[Material, tuple[int, int]] = {}
        at = 0
        for m, (_at, _packed, size) in self._where.items():
            where[m] = (at, size)
            at += size
        path = self.unpacked_path()
        if not (path.is_file() and path.stat().st_size == at):
            self._write_unpacked(path, at)
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size != at:
                raise OSError(f"{path} has {os.fstat(f.fileno()).st_size} bytes, not {at}")
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY), where

    def _write_unpacked(self, path: Path, size: int) -> None:
        """Unpack every material into ``path``: written aside, then linked in place only if no other
        process put it there first (so all of them map the same file, hence the same pages)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.part")
        try:
            with open(tmp, "wb") as out:
                for m in self._where:
                    out.write(self._unpack(m))
            if tmp.stat().st_size != size:
                raise OSError(f"{tmp}: written short")
            try:
                os.link(tmp, path)
            except FileExistsError:
                if path.stat().st_size != size:     # a damaged copy of an earlier run: replaced
                    os.replace(tmp, path)
            except OSError:                         # no hard links here: the last writer's copy
                os.replace(tmp, path)
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink()
        # Older unpacked copies of the same tables (an earlier version of the file) go.
        for old in path.parent.glob(f"{self.variant.id}-{self.pieces}-*{UNPACKED_SUFFIX}"):
            if old != path:
                with contextlib.suppress(OSError):
                    old.unlink()

    def _unpack(self, m: Material) -> bytes:
        at, packed, size = self._where[m]
        raw = self._raw
        if raw is None:                             # dropped once mapped: read again
            try:
                raw = self.path.read_bytes()
            except OSError as err:
                raise TableFileError(f"{self.path}: {err}") from None
        try:
            data = lzma.decompress(raw[at:at + packed])
        except lzma.LZMAError as err:
            raise TableFileError(f"{self.path}: {name(m)}: {err}") from None
        if len(data) != size:
            raise TableFileError(f"{self.path}: {name(m)} has {len(data)} bytes, not {size}")
        return data


def unpacked_dir() -> Path:
    """Where table files are unpacked for mapping: in the engine's cache folder (``jitcache``:
    ``$DRAUGHTS_CACHE_DIR``, else the user's cache folder)."""
    from bot.ai import jitcache

    return jitcache.folder() / "egtb"


def load(path: Path, v: Variant) -> tuple[int, dict[Material, bytes]]:
    """(pieces, every table) from a file written by ``save``; TableFileError when it cannot be used."""
    f = TableFile(path, v)
    return f.pieces, {m: f._unpack(m) for m in f.materials}


def find(v: Variant) -> list[Path]:
    """The table files of ``v`` that exist, most pieces first (the user's before the shipped
    at equal pieces)."""
    found: list[tuple[int, int, Path]] = []
    for rank, folder in enumerate((user_dir(), SHIPPED)):
        try:
            entries = list(folder.glob(f"{v.id}-*{SUFFIX}"))
        except OSError:
            continue
        for path in entries:
            middle = path.name[len(v.id) + 1:-len(SUFFIX)]
            if middle.isdigit():
                found.append((-int(middle), rank, path))
    return [path for _p, _r, path in sorted(found)]
