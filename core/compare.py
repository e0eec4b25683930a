"""Output comparison: `exact` and `numeric`, with the first difference explained."""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass, field

from core.messages import Message, say, verbatim

_TOKEN = re.compile(
    r"(?P<word>[^\W\d]\w*)"
    r"|(?P<number>[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?)"
    r"|(?P<other>\S)"
)
_SHOWN = 120


class CompareMode(enum.StrEnum):
    """How a program's output is held against the expected output."""

    EXACT = "exact"
    NUMERIC = "numeric"


@dataclass(frozen=True)
class Tolerance:
    """Numbers a and b (expected) agree when |a - b| <= abs + rel * |b|."""

    rel: float = 1e-6
    abs: float = 1e-3

    def accepts(self, got: float, expected: float) -> bool:
        """Return whether `got` is close enough to `expected`."""
        if math.isnan(expected) or math.isnan(got):
            return math.isnan(expected) and math.isnan(got)
        if math.isinf(expected) or math.isinf(got):
            return got == expected
        return abs(got - expected) <= self.abs + self.rel * abs(expected)


@dataclass(frozen=True)
class LineDiff:
    """The first line where output and expectation part ways (1-based)."""

    line: int
    expected: str | None
    got: str | None
    detail: str  # in English; `message` is the same sentence to be translated
    message: Message | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Comparison:
    """The verdict of one comparison, with the first difference when there is one."""

    matches: bool
    diff: LineDiff | None = None

    def explain(self) -> str:
        """Return a sentence for the student about the first difference."""
        return str(self.explanation())

    def explanation(self) -> Message:
        """Return the sentence about the first difference, to be translated."""
        if self.diff is None or self.diff.message is None:
            return say("The output matches.") if self.diff is None else verbatim(self.diff.detail)
        return self.diff.message


def normalise(text: str) -> list[str]:
    """Split text into lines, ignoring line-ending style and trailing whitespace."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = [line.rstrip() for line in text.split("\n")]
    while lines and lines[-1] == "":
        lines.pop()
    return lines


def compare(
    expected: str,
    got: str,
    mode: CompareMode = CompareMode.EXACT,
    tolerance: Tolerance | None = None,
) -> Comparison:
    """Compare a program's output with the expected output, line by line."""
    want, have = normalise(expected), normalise(got)
    tol = tolerance or Tolerance()
    for index in range(max(len(want), len(have))):
        line = index + 1
        if index >= len(have):
            return _missing(line, want[index], len(have))
        if index >= len(want):
            return _extra(line, have[index], len(want))
        if mode is CompareMode.EXACT:
            differs, hint = want[index] != have[index], None
        else:
            differs, hint = _numeric_problem(want[index], have[index], tol)
        if differs:
            expected, got = _show(want[index]), _show(have[index])
            if hint is None:
                message = say(
                    "Line {line} differs: expected {expected}, got {got}.",
                    line=line,
                    expected=expected,
                    got=got,
                )
            else:
                message = say(
                    "Line {line} differs: expected {expected}, got {got}. {hint}",
                    line=line,
                    expected=expected,
                    got=got,
                    hint=hint,
                )
            return Comparison(False, _diff(line, want[index], have[index], message))
    return Comparison(True)


def _diff(line: int, expected: str | None, got: str | None, message: Message) -> LineDiff:
    return LineDiff(line, expected, got, str(message), message)


def _missing(line: int, expected: str, count: int) -> Comparison:
    shown = _show(expected)
    if count == 1:
        message = say(
            "Line {line} is missing: expected {expected}, but your output has only {count} line.",
            line=line,
            expected=shown,
            count=count,
        )
    else:
        message = say(
            "Line {line} is missing: expected {expected}, but your output has only {count} lines.",
            line=line,
            expected=shown,
            count=count,
        )
    return Comparison(False, _diff(line, expected, None, message))


def _extra(line: int, got: str, count: int) -> Comparison:
    shown = _show(got)
    if count == 1:
        message = say(
            "Line {line} is extra: the expected output has only {count} line, "
            "but you printed {got}.",
            line=line,
            count=count,
            got=shown,
        )
    else:
        message = say(
            "Line {line} is extra: the expected output has only {count} lines, "
            "but you printed {got}.",
            line=line,
            count=count,
            got=shown,
        )
    return Comparison(False, _diff(line, None, got, message))


def _numeric_problem(want: str, have: str, tol: Tolerance) -> tuple[bool, Message | None]:
    """Return whether the lines differ, and a hint about where when there is one."""
    want_tokens, have_tokens = _tokens(want), _tokens(have)
    position = 0
    for (want_kind, want_text), (have_kind, have_text) in zip(
        want_tokens, have_tokens, strict=False
    ):
        if want_kind == "number":
            position += 1
            if have_kind != "number":
                hint = say(
                    "Value {position} should be a number, not {got}.",
                    position=position,
                    got=_show(have_text),
                )
                return True, hint
            if not tol.accepts(float(have_text), float(want_text)):
                return True, say(
                    "Value {position} is {got}, expected {expected} "
                    "(within {abs} + {rel} x |expected|).",
                    position=position,
                    got=have_text,
                    expected=want_text,
                    abs=float(tol.abs),
                    rel=float(tol.rel),
                )
        elif want_text != have_text:
            return True, None
    return len(want_tokens) != len(have_tokens), None


def _tokens(line: str) -> list[tuple[str, str]]:
    return [(m.lastgroup or "other", m.group()) for m in _TOKEN.finditer(line)]


def _show(text: str) -> str:
    if len(text) > _SHOWN:
        text = text[:_SHOWN] + "…"
    return f"`{text}`"
