"""A student's source, checked before anything runs it: its size, UTF-8, no NUL character.

One check for every door a source comes in by (the JSON API, the lesson page's form, the
CLI, and the grader itself), with one sentence per fault; and the same for the input a
student gives a practice run (its stdin), which is smaller.
"""

from __future__ import annotations

import enum

from core.errors import Refusal
from core.messages import Message, say
from core.runs import MAX_SOURCE_BYTES

# a practice run's own input (the page's input box): a few lines of numbers or words; a
# case of a lesson may give 64 KiB, but nobody types that into a box
MAX_INPUT_BYTES = 16 * 1024


class Fault(enum.StrEnum):
    """Why a source is not run; the values are the JSON API's error codes."""

    TOO_LARGE = "too_large"
    NOT_UTF8 = "not_utf8"
    NUL_CHARACTER = "nul_character"


class SourceRefused(Refusal):
    """A source that is not run: its fault (the code), and one sentence that says why.

    413 when too large, else 400; `str()` is the sentence in English, `words` the same to be
    translated.
    """

    words: Message

    def __init__(self, fault: Fault, words: Message) -> None:
        status = 413 if fault is Fault.TOO_LARGE else 400
        super().__init__(words, status=status, code=fault.value)
        self.fault = fault


def too_large(size: int) -> SourceRefused:
    """Return the refusal of a source of `size` bytes, over the limit."""
    limit = MAX_SOURCE_BYTES // 1024
    text = say("The code is larger than {limit} KiB ({size} bytes).", limit=limit, size=size)
    return SourceRefused(Fault.TOO_LARGE, text)


def check_text(text: str) -> str:
    """Return the source's text; raise SourceRefused unless it may be run."""
    try:
        raw = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate, from JSON's \ud800 escapes
        raise SourceRefused(Fault.NOT_UTF8, say("The code is not valid UTF-8 text.")) from None
    return check_source(raw)


def check_source(raw: bytes) -> str:
    """Return the source's text; raise SourceRefused unless it may be run."""
    if len(raw) > MAX_SOURCE_BYTES:
        raise too_large(len(raw))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        refusal = say(
            "The code is not UTF-8 text (invalid byte at position {position}).",
            position=exc.start,
        )
        raise SourceRefused(Fault.NOT_UTF8, refusal) from None
    if "\x00" in text:
        raise SourceRefused(Fault.NUL_CHARACTER, say("The code contains a NUL character."))
    return text


def check_input(text: str) -> str:
    """Return the input a student gives a practice run; raise SourceRefused unless it may
    be its stdin (16 KiB of UTF-8 text, no NUL character)."""
    try:
        raw = text.encode("utf-8")
    except UnicodeEncodeError:
        raise SourceRefused(Fault.NOT_UTF8, say("The input is not valid UTF-8 text.")) from None
    if len(raw) > MAX_INPUT_BYTES:
        words = say(
            "The input is larger than {limit} KiB ({size} bytes).",
            limit=MAX_INPUT_BYTES // 1024,
            size=len(raw),
        )
        raise SourceRefused(Fault.TOO_LARGE, words)
    if "\x00" in text:
        raise SourceRefused(Fault.NUL_CHARACTER, say("The input contains a NUL character."))
    return text
