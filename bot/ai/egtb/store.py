"""Table files: one xz-compressed file per variant and piece count.

A file is a JSON header line (format, variant, the rules it was built by, pieces, and each
material's name and length in order) followed by the tables' bytes one after the other, the
whole compressed with xz (whose own check catches a damaged file).  Shipped files live in
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
    header = {
        "format": FORMAT,
        "variant": v.id,
        "rules": rules_tag(v),
        "pieces": pieces,
        "materials": [[name(m), list(m), len(tables[m])] for m in order],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".part")
    with lzma.open(tmp, "wb", preset=9 | lzma.PRESET_EXTREME) as out:
        out.write(json.dumps(header).encode() + b"\n")
        for m in order:
            out.write(bytes(tables[m]))
    os.replace(tmp, path)
    return path.stat().st_size


def load(path: Path, v: Variant) -> tuple[int, dict[Material, bytes]]:
    """(pieces, tables) from a file written by ``save``; TableFileError when it cannot be used."""
    try:
        raw = lzma.decompress(path.read_bytes())
    except (OSError, lzma.LZMAError, EOFError) as err:
        raise TableFileError(f"{path}: {err}") from None
    end = raw.find(b"\n")
    try:
        header = json.loads(raw[:end])
    except ValueError:
        raise TableFileError(f"{path}: no header") from None
    if header.get("format") != FORMAT or header.get("rules") != rules_tag(v):
        raise TableFileError(f"{path}: built for other rules or another format")
    pieces = int(header["pieces"])
    expected = materials(pieces)
    listed = [tuple(entry[1]) for entry in header["materials"]]
    if listed != expected:
        raise TableFileError(f"{path}: the materials are not those of {pieces} pieces")
    tables: dict[Material, bytes] = {}
    view = memoryview(raw)
    at = end + 1
    for entry in header["materials"]:
        m = tuple(entry[1])
        size = int(entry[2])
        tables[(m[0], m[1], m[2], m[3])] = bytes(view[at:at + size])
        at += size
    if at != len(raw):
        raise TableFileError(f"{path}: {len(raw) - at} bytes more or less than the header says")
    return pieces, tables


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
