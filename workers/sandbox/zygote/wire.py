"""Frames between the host and a run's supervisor: a JSON header, then raw byte blobs.

A frame is a 4-byte big-endian header length, the JSON header, then each blob whose length
the header lists under "blobs". JSON and bytes only: nothing that crosses is ever unpickled.
"""

from __future__ import annotations

import json
import socket
import struct
from typing import Any

MAX_HEADER = 1 << 20
MAX_BLOBS = 64 << 20


def send(sock: socket.socket, header: dict[str, Any], blobs: list[bytes] | None = None) -> None:
    """Send one frame."""
    blobs = blobs or []
    data = json.dumps({**header, "blobs": [len(b) for b in blobs]}).encode()
    sock.sendall(b"".join([struct.pack(">I", len(data)), data, *blobs]))


def receive(
    sock: socket.socket, max_blobs: int = MAX_BLOBS
) -> tuple[dict[str, Any], list[bytes]] | None:
    """Receive one frame; None if the peer closed before it began. Raise OSError if it broke
    (or if its blobs would pass `max_blobs` bytes)."""
    first = _read(sock, 4, eof_ok=True)
    if first is None:
        return None
    (size,) = struct.unpack(">I", first)
    if size > MAX_HEADER:
        raise OSError(f"frame header of {size} bytes")
    header = json.loads(_read(sock, size) or b"")
    if not isinstance(header, dict):
        raise OSError("frame header is not an object")
    sizes = [int(n) for n in header.pop("blobs", [])]
    if sum(sizes) > max_blobs or min(sizes, default=0) < 0:
        raise OSError("frame blobs too large")
    return header, [_read(sock, n) or b"" for n in sizes]


def _read(sock: socket.socket, size: int, eof_ok: bool = False) -> bytes | None:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = sock.recv(min(size - len(chunks), 1 << 20))
        if not chunk:
            if eof_ok and not chunks:
                return None
            raise OSError("connection closed inside a frame")
        chunks += chunk
    return bytes(chunks)
