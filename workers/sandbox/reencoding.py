"""The host's check of a run's figures: each one decoded under bounds and written anew.

What the sandbox hands back (zygote/figure_files.py) is untrusted bytes. Each PNG is read
here, in the worker, before a verdict or a run result holds it: its size and its header's
pixel count are checked before Pillow sees it (a 100k x 100k header is refused unread), it is
opened as a PNG and nothing else, an animated one is refused (its frames would be decoded
one after another), its text chunks are bounded (a zTXt bomb), its pixels decoded, and a
fresh PNG is written from them alone: no text, no ICC profile, no EXIF, no chunk of the
program's survives. Its text alternative is read from its "Description" (or "Title") as
plain text, bounded; the page escapes it. A figure that fails is dropped with its reason,
never the run. A 640 x 480 figure (matplotlib's default) costs about 15 ms here (a 2-core VM
shared with other test runs), once per figure kept, in the worker before the verdict is saved.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Sequence

from core.figures import (
    MAX_ALT,
    MAX_FIGURE_BYTES,
    MAX_FIGURES,
    MAX_PIXELS,
    MAX_SIDE,
    PNG_SIGNATURE,
    Dropped,
    DropReason,
    Figure,
    name_shown,
)

_MOST_DROPPED = 8
_MAX_OUTPUT = 2 * MAX_FIGURE_BYTES  # a fresh PNG of a small picture is rarely larger
_TEXT_CHUNK = 64 * 1024  # Pillow's defaults (1 MiB a chunk, 64 MiB in all) are for photos
_TEXT_MEMORY = 256 * 1024


def checked(
    found: Sequence[tuple[str, bytes]], dropped: Sequence[tuple[str, str]]
) -> tuple[tuple[Figure, ...], tuple[Dropped, ...]]:
    """Return the figures re-encoded (MAX_FIGURES at most) and those dropped, with why.

    `found` and `dropped` are what the sandbox said ((name, bytes), (name, reason)).
    """
    figures: list[Figure] = []
    lost = [Dropped(name_shown(str(name)), _reason(reason)) for name, reason in dropped]
    for name, data in found:
        outcome = DropReason.TOO_MANY if len(figures) >= MAX_FIGURES else reencode(data)
        if isinstance(outcome, Figure):
            figures.append(outcome)
        else:
            lost.append(Dropped(name_shown(str(name)), outcome))
    return tuple(figures), tuple(lost[:_MOST_DROPPED])


def reencode(data: bytes) -> Figure | DropReason:
    """Return the PNG `data` decoded and written anew, or why it cannot be kept."""
    if len(data) > MAX_FIGURE_BYTES:
        return DropReason.TOO_LARGE
    size = header_size(data)
    if size is None:
        return DropReason.NOT_PNG
    width, height = size
    if width > MAX_SIDE or height > MAX_SIDE or width * height > MAX_PIXELS:
        return DropReason.TOO_MANY_PIXELS
    from PIL import Image, PngImagePlugin

    PngImagePlugin.MAX_TEXT_CHUNK = _TEXT_CHUNK
    PngImagePlugin.MAX_TEXT_MEMORY = _TEXT_MEMORY
    try:
        with Image.open(io.BytesIO(data), formats=["PNG"]) as image:
            if image.size != (width, height) or getattr(image, "is_animated", False):
                return DropReason.NOT_PNG
            image.load()
            alt = _alt(getattr(image, "text", {}))
            mode = "RGBA" if _has_alpha(image) else "RGB"
            pixels = image.convert(mode).tobytes()
        fresh = Image.frombytes(mode, (width, height), pixels)  # nothing of the file but pixels
        out = io.BytesIO()
        fresh.save(out, format="PNG")
    except Exception:  # noqa: BLE001  whatever a hostile file makes Pillow raise
        return DropReason.NOT_PNG
    png = out.getvalue()
    if len(png) > _MAX_OUTPUT:
        return DropReason.TOO_LARGE
    return Figure(png, width, height, alt)


def header_size(data: bytes) -> tuple[int, int] | None:
    """Return the width and height a PNG's header claims, or None if it is no PNG header."""
    if len(data) < 24 or not data.startswith(PNG_SIGNATURE) or data[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", data[16:24])
    return (width, height) if width and height else None


def _has_alpha(image: object) -> bool:
    mode = getattr(image, "mode", "")
    info = getattr(image, "info", {})
    return mode in ("RGBA", "LA", "PA", "La", "RGBa") or "transparency" in info


def _alt(text: object) -> str:
    if not isinstance(text, dict):
        return ""
    for key in ("Description", "Title"):
        value = text.get(key)
        if isinstance(value, str) and value.strip():
            clean = "".join(ch if ch.isprintable() else " " for ch in value[: MAX_ALT * 4])
            return " ".join(clean.split())[:MAX_ALT]
    return ""


def _reason(value: str) -> DropReason:
    try:
        return DropReason(value)
    except ValueError:
        return DropReason.NOT_PNG
