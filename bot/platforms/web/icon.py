"""The board's icon (``/favicon.ico``): a white draughts man on a dark square, drawn here as a
32x32 PNG inside an ICO file, so no binary file has to ship with the package and browsers that
ask for the icon on every page load get one instead of a 404."""

from __future__ import annotations

import functools
import struct
import zlib

SIZE = 32
SQUARE = (160, 112, 72, 255)        # board.css .dark
MAN = (242, 230, 200, 255)          # board.css .pw
RIM = (72, 54, 42, 255)             # its stroke
CROWN = (232, 182, 36, 255)         # board.css .crown


def _pixel(x: int, y: int) -> tuple[int, int, int, int]:
    dx, dy = x + 0.5 - SIZE / 2, y + 0.5 - SIZE / 2
    r = (dx * dx + dy * dy) ** 0.5
    if r <= 6.5:
        return MAN
    if r <= 8.5:
        return CROWN
    if r <= 12.5:
        return MAN
    if r <= 14.5:
        return RIM
    return SQUARE


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png() -> bytes:
    """The icon as a PNG (8-bit RGBA)."""
    rows = b"".join(b"\x00" + b"".join(bytes(_pixel(x, y)) for x in range(SIZE)) for y in range(SIZE))
    header = struct.pack(">IIBBBBB", SIZE, SIZE, 8, 6, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(rows, 9))
            + _chunk(b"IEND", b""))


@functools.cache
def ico() -> bytes:
    """The icon as an ICO file holding the PNG (one image; every current browser reads PNG in ICO)."""
    image = png()
    directory = struct.pack("<HHH", 0, 1, 1)
    entry = struct.pack("<BBBBHHII", SIZE, SIZE, 0, 0, 1, 32, len(image), len(directory) + 16)
    return directory + entry + image
