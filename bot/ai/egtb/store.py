"""Table files: one xz-compressed file per variant and piece count.

A file is a magic line, a JSON header line (format, variant, the rules it was built by, pieces,
and each material's name, length and packed length in order), then each material's table
compressed on its own with xz (whose check catches a damaged one), so a process unpacks only
the materials its games reach.  Shipped files live in
``data/`` next to this module; ``python -m bot ai egtb build`` writes to the user's table
directory (``DRAUGHTS_EGTB_DIR``, else ``~/.cache/draughts-bot/egtb``) unless told where.
"""

from __future__ import annotations

import json
import lzma
import os
from pathlib import Path

from bot.rules import Variant

from .solve import Material, materials, name

FORMAT = 1
MAGIC = b"draughts-egtb\n"
SHIPPED = Path(__file__).resolve().parent / "data"
SUFFIX = ".egtb.xz"


class TableFileError(Exception):
    """A table file that cannot be used (damaged, another format, other rules)."""


def user_dir() -> Path:
    """Where built tables go and are looked for first."""
    env = os.environ.get("DRAUGHTS_EGTB_DIR", "").strip()
    return Path(env) if env else Path.home() / ".cache" / "draughts-bot" / "egtb"


def file_name(v: Variant, pieces: int) -> str:
    return f"{v.id}-{pieces}{SUFFIX}"


def rules_tag(v: Variant) -> list[object]:
    """What the tables depend on: tables built under other rules are refused."""
    return [v.id, v.size, v.flying_kings, v.men_capture_kings, str(v.priority)]


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
    """A table file read into memory still compressed; each material is unpacked on first use
    (a game reaches few of them, and the largest variant's tables are 47 MB unpacked)."""

    def __init__(self, path: Path, v: Variant) -> None:
        self.path = path
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
        self._raw = raw
        self._where: dict[Material, tuple[int, int, int]] = {}
        at = end + 1
        for entry in header["materials"]:
            m = (int(entry[1][0]), int(entry[1][1]), int(entry[1][2]), int(entry[1][3]))
            self._where[m] = (at, int(entry[3]), int(entry[2]))
            at += int(entry[3])
        if at != len(raw):
            raise TableFileError(f"{path}: {len(raw) - at} bytes more or less than the header says")

    @property
    def materials(self) -> list[Material]:
        return list(self._where)

    def table(self, m: Material) -> bytes:
        """Material ``m``'s table, unpacked (xz's own check catches a damaged one)."""
        at, packed, size = self._where[m]
        try:
            data = lzma.decompress(self._raw[at:at + packed])
        except lzma.LZMAError as err:
            raise TableFileError(f"{self.path}: {name(m)}: {err}") from None
        if len(data) != size:
            raise TableFileError(f"{self.path}: {name(m)} has {len(data)} bytes, not {size}")
        return data


def load(path: Path, v: Variant) -> tuple[int, dict[Material, bytes]]:
    """(pieces, every table) from a file written by ``save``; TableFileError when it cannot be used."""
    f = TableFile(path, v)
    return f.pieces, {m: f.table(m) for m in f.materials}


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
