"""A run's figures: what may cross the sandbox boundary, what the host keeps, what it says.

A program draws with matplotlib (plt.show(), or savefig of a PNG into its work dir); the
sandbox hands back at most MAX_FIGURES PNG files of at most MAX_FIGURE_BYTES each, as bytes
(workers/sandbox/zygote/figure_files.py), and the host checks and re-encodes every one
(workers/sandbox/reencoding.py) before anything keeps or shows it. A figure that fails is
dropped with a note (`Dropped`, worded by `drop_note`), never the grade.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeVar

from core.messages import N_, Message, say

K = TypeVar("K")  # what names a figure's case: its name, or None for a practice run's input

MAX_FIGURES = 4  # per run, and per verdict
MAX_FIGURE_BYTES = 1024 * 1024  # per PNG, as the program wrote it
MAX_SIDE = 4096  # pixels, either way
MAX_PIXELS = 4 * 1024 * 1024  # width x height: 16 MiB of RGBA when decoded
MAX_ALT = 300  # characters of a figure's text alternative
MAX_NAME = 60  # characters of a file's name in a note
SHOWN_DIR = "/tmp/.codeblanks-figures"  # where plt.show() keeps them (runtime/codeblanks_drawing)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# the bounds the sandbox's side reads figures within (zygote/figure_files.py), as data
BOUNDS = {
    "most": MAX_FIGURES,
    "max_bytes": MAX_FIGURE_BYTES,
    "max_side": MAX_SIDE,
    "max_pixels": MAX_PIXELS,
}


@dataclass(frozen=True)
class Figure:
    """A figure as the host re-encoded it: a fresh PNG (no text, no metadata), its size, and
    its text alternative (the figure's titles and labels, plain text; may be empty)."""

    png: bytes
    width: int
    height: int
    alt: str = ""


class DropReason(enum.StrEnum):
    """Why a figure the program made was not kept."""

    TOO_MANY = "too_many"  # past MAX_FIGURES
    TOO_LARGE = "too_large"  # a file past MAX_FIGURE_BYTES
    TOO_MANY_PIXELS = "too_many_pixels"  # past MAX_SIDE or MAX_PIXELS
    NOT_PNG = "not_png"  # named *.png, but it is not one (or not one the host could read)
    NOT_A_FILE = "not_a_file"  # a link, a pipe, a directory named *.png


@dataclass(frozen=True)
class Dropped:
    """A figure not kept: its file's name (as the program chose it, cut short) and why."""

    name: str
    reason: DropReason


_NOTES = {
    DropReason.TOO_MANY: N_("The figure {name} was not kept: a run keeps {most} figures at most."),
    DropReason.TOO_LARGE: N_("The figure {name} was not kept: it is larger than {mib} MiB."),
    DropReason.TOO_MANY_PIXELS: N_(
        "The figure {name} was not kept: it has more than {pixels} million pixels, "
        "or a side longer than {side}."
    ),
    DropReason.NOT_PNG: N_(
        "The figure {name} was not kept: it is not a PNG image that can be read."
    ),
    DropReason.NOT_A_FILE: N_("The figure {name} was not kept: it is not a plain file."),
}
_NUMBERS = {
    DropReason.TOO_MANY: {"most": MAX_FIGURES},
    DropReason.TOO_LARGE: {"mib": MAX_FIGURE_BYTES // (1024 * 1024)},
    DropReason.TOO_MANY_PIXELS: {"pixels": MAX_PIXELS // (1024 * 1024), "side": MAX_SIDE},
}


def drop_note(dropped: Dropped) -> Message:
    """Word why a figure was not kept, for the feedback of the case that made it."""
    numbers: dict[str, int] = _NUMBERS.get(dropped.reason, {})
    return say(_NOTES[dropped.reason], name=f"'{dropped.name}'", **numbers)


def shown_name(index: int) -> str:
    """Name the n-th figure plt.show() kept (1-based), as the drawing hook writes it."""
    return f"figure-{index:02d}.png"


def work_files(names: Iterable[str]) -> list[str]:
    """Return the run's own files at the top of its work dir: never taken for figures."""
    return sorted(name for name in names if "/" not in name)


def distinct(figures: Iterable[tuple[K, Figure]]) -> list[tuple[K, Figure]]:
    """Keep the first MAX_FIGURES figures of (case name, figure), each picture once.

    The cases of one submission often draw the same picture (a value case imports the
    program, whose top level draws): the first case that drew it names it.
    """
    kept: list[tuple[K, Figure]] = []
    seen: set[bytes] = set()
    for case, figure in figures:
        if figure.png in seen:
            continue
        seen.add(figure.png)
        kept.append((case, figure))
        if len(kept) == MAX_FIGURES:
            break
    return kept


def name_shown(name: str) -> str:
    """Return a file name as a note may show it: printable, cut at MAX_NAME characters."""
    clean = "".join(ch if ch.isprintable() else "?" for ch in name)
    return clean if len(clean) <= MAX_NAME else clean[: MAX_NAME - 1] + "…"
