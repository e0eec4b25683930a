"""Find the figures a run left: its PNG files, bounded, read without following a link.

The same code runs in three places: in a warm run's supervisor (zygote/run.py), in the
Docker runner's entry (docker.py sends this file's text ahead of docker_entry.py's), and on
the host for the bwrap backend, over the run's tmpfs. So: the standard library only, and
nothing trusted of what it finds. The places are the plt.show() directory (SHOWN, where
runtime/codeblanks_drawing.py keeps the figures in the order shown) and the top of the work
dir (the program's own savefig files, by name), both under `root`; every directory and
file is opened relative to its parent with O_NOFOLLOW, so a link planted by the program
(to /etc, to the host) is refused, never followed. A pipe, a socket or a directory named
*.png is not read. Of a file, its size and its PNG header (signature, IHDR size) are checked
before more than its first bytes are read; at most `most` files are read whole, each at most
`max_bytes`. The host checks and re-encodes what comes back (workers/sandbox/reencoding.py).
"""

from __future__ import annotations

import json
import os
import stat
import struct
from collections.abc import Collection, Mapping

SHOWN = ("tmp", ".codeblanks-figures")  # core.figures.SHOWN_DIR, under the run's root
WORK = ("work",)
_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_HEAD = 24  # signature, IHDR's length and type, width, height
_MOST_DROPPED = 8  # notes of figures not kept: the first few say enough


def collect(
    root: str, skip: Collection[str], bounds: Mapping[str, int]
) -> tuple[list[tuple[str, bytes]], list[tuple[str, str]]]:
    """Return ([(name, png bytes)], [(name, reason)]) of the figures under `root`.

    `skip`: names of the work dir that are the run's own files (never figures); `bounds`:
    {"most", "max_bytes", "max_side", "max_pixels"}. Reasons are core.figures.DropReason's.
    """
    found: list[tuple[str, bytes]] = []
    dropped: list[tuple[str, str]] = []
    try:
        base = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return found, dropped
    try:
        for parts, own in ((SHOWN, frozenset()), (WORK, frozenset(skip))):
            folder = _open_dir(base, parts)
            if folder is None:
                continue
            try:
                _collect_in(folder, own, parts == SHOWN, bounds, found, dropped)
            finally:
                os.close(folder)
    finally:
        os.close(base)
    return found, dropped[:_MOST_DROPPED]


def _open_dir(base: int, parts: tuple[str, ...]) -> int | None:
    fd = os.dup(base)
    for part in parts:
        try:
            step = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                           dir_fd=fd)  # fmt: skip
        except OSError:
            os.close(fd)
            return None
        os.close(fd)
        fd = step
    return fd


def _collect_in(
    folder: int,
    skip: Collection[str],
    shown: bool,
    bounds: Mapping[str, int],
    found: list[tuple[str, bytes]],
    dropped: list[tuple[str, str]],
) -> None:
    try:
        names = sorted(n for n in os.listdir(folder) if n.lower().endswith(".png"))
    except OSError:
        return
    for name in names:
        if name in skip:
            continue
        reason, head = _look(folder, name, shown, bounds)
        if reason is None and len(found) >= bounds["most"]:
            reason = "too_many"
        if reason is not None:
            dropped.append((name, reason))
            continue
        data = _read(folder, name, bounds["max_bytes"])
        if data is None or not data.startswith(head):
            dropped.append((name, "not_png"))  # it changed since it was looked at
        elif len(data) > bounds["max_bytes"]:
            dropped.append((name, "too_large"))
        else:
            found.append((name, data))


def _look(
    folder: int, name: str, shown: bool, bounds: Mapping[str, int]
) -> tuple[str | None, bytes]:
    """Return (why it is no figure, or None; its first bytes)."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, dir_fd=folder)
    except OSError:
        return "not_a_file", b""  # a link (ELOOP), a socket (ENXIO), gone
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return "not_a_file", b""
        if info.st_size == 0 and shown:
            return "too_many", b""  # plt.show() counted it, past the figures it keeps
        if info.st_size > bounds["max_bytes"]:
            return "too_large", b""
        head = os.read(fd, _HEAD)
    except OSError:
        return "not_a_file", b""
    finally:
        os.close(fd)
    if len(head) < _HEAD or not head.startswith(_SIGNATURE) or head[12:16] != b"IHDR":
        return "not_png", b""
    width, height = struct.unpack(">II", head[16:24])
    if width == 0 or height == 0:
        return "not_png", b""
    side = bounds["max_side"]
    if width > side or height > side or width * height > bounds["max_pixels"]:
        return "too_many_pixels", b""
    return None, head


def _read(folder: int, name: str, max_bytes: int) -> bytes | None:
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, dir_fd=folder)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes:
            chunk = os.read(fd, min(65536, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def pack(found: list[tuple[str, bytes]], dropped: list[tuple[str, str]]) -> bytes:
    """Return the figures as one frame of bytes: a 4-byte header length, the JSON header
    ({"figures": [name, size]..., "dropped": [[name, reason]...]}), then each PNG."""
    header = json.dumps(
        {"figures": [[name, len(data)] for name, data in found], "dropped": dropped}
    ).encode()
    return b"".join([struct.pack(">I", len(header)), header, *(data for _, data in found)])


def unpack(
    data: bytes, max_bytes: int
) -> tuple[list[tuple[str, bytes]], list[tuple[str, str]]] | None:
    """Read what pack() wrote (on the host, from an untrusted sender); None if malformed."""
    if len(data) < 4 or len(data) > max_bytes:
        return None
    (size,) = struct.unpack(">I", data[:4])
    try:
        header = json.loads(data[4 : 4 + size])
        sizes = [(str(name), int(length)) for name, length in header["figures"]]
        dropped = [(str(name), str(reason)) for name, reason in header["dropped"]]
    except (ValueError, TypeError, KeyError):
        return None
    found, at = [], 4 + size
    for name, length in sizes:
        if length < 0 or at + length > len(data):
            return None
        found.append((name, data[at : at + length]))
        at += length
    return (found, dropped) if at == len(data) else None
