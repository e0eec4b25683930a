"""PNG files made byte by byte, for the figure tests: right ones, and ones that lie."""

import struct
import zlib

SIGNATURE = b"\x89PNG\r\n\x1a\n"


def chunk(kind: bytes, data: bytes) -> bytes:
    """Return one PNG chunk: its length, type, data and CRC."""
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(
    width: int,
    height: int,
    *,
    rows: bytes | None = None,
    extra: tuple[bytes, ...] = (),
    level: int = 9,
) -> bytes:
    """Return an 8-bit RGB PNG; `rows` are its filtered scanlines (black when None), `extra`
    chunks go between the header and the pixels."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    if rows is None:
        rows = (b"\x00" + b"\x00" * 3 * width) * height
    pixels = zlib.compress(rows, level)
    return b"".join(
        [SIGNATURE, chunk(b"IHDR", header), *extra, chunk(b"IDAT", pixels), chunk(b"IEND", b"")]
    )


def bomb(side: int) -> bytes:
    """Return a PNG of side x side black pixels, compressed in a stream of zeros: a few
    hundred KB that decode to side * side * 3 bytes."""
    compressor = zlib.compressobj(9)
    row = b"\x00" * (1 + 3 * side)
    parts = [compressor.compress(row) for _ in range(side)]
    parts.append(compressor.flush())
    header = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    return b"".join(
        [SIGNATURE, chunk(b"IHDR", header), chunk(b"IDAT", b"".join(parts)), chunk(b"IEND", b"")]
    )


def chunk_types(data: bytes) -> list[bytes]:
    """Return the types of a PNG's chunks, in order."""
    assert data.startswith(SIGNATURE)
    at, kinds = len(SIGNATURE), []
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kinds.append(data[at + 4 : at + 8])
        at += 12 + length
    return kinds
