"""Output comparison: `exact` and `numeric`, with the first difference explained."""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass

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
    detail: str


@dataclass(frozen=True)
class Comparison:
    """The verdict of one comparison, with the first difference when there is one."""

    matches: bool
    diff: LineDiff | None = None

    def explain(self) -> str:
        """Return a sentence for the student about the first difference."""
        if self.diff is None:
            return "The output matches."
        return self.diff.detail


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
            problem = None if want[index] == have[index] else ""
        else:
            problem = _numeric_problem(want[index], have[index], tol)
        if problem is not None:
            shown = f"expected {_show(want[index])}, got {_show(have[index])}"
            detail = f"Line {line} differs: {shown}."
            if problem:
                detail += f" {problem}"
            return Comparison(False, LineDiff(line, want[index], have[index], detail))
    return Comparison(True)


def _missing(line: int, expected: str, count: int) -> Comparison:
    lines = "line" if count == 1 else "lines"
    detail = (
        f"Line {line} is missing: expected {_show(expected)}, "
        f"but your output has only {count} {lines}."
    )
    return Comparison(False, LineDiff(line, expected, None, detail))


def _extra(line: int, got: str, count: int) -> Comparison:
    lines = "line" if count == 1 else "lines"
    detail = (
        f"Line {line} is extra: the expected output has only {count} {lines}, "
        f"but you printed {_show(got)}."
    )
    return Comparison(False, LineDiff(line, None, got, detail))


def _numeric_problem(want: str, have: str, tol: Tolerance) -> str | None:
    """Return None when the lines agree, else a (possibly empty) hint about where."""
    want_tokens, have_tokens = _tokens(want), _tokens(have)
    position = 0
    for (want_kind, want_text), (have_kind, have_text) in zip(
        want_tokens, have_tokens, strict=False
    ):
        if want_kind == "number":
            position += 1
            if have_kind != "number":
                return f"Value {position} should be a number, not {_show(have_text)}."
            if not tol.accepts(float(have_text), float(want_text)):
                return (
                    f"Value {position} is {have_text}, expected {want_text} "
                    f"(within {tol.abs:g} + {tol.rel:g} x |expected|)."
                )
        elif want_text != have_text:
            return ""
    if len(want_tokens) != len(have_tokens):
        return ""
    return None


def _tokens(line: str) -> list[tuple[str, str]]:
    return [(m.lastgroup or "other", m.group()) for m in _TOKEN.finditer(line)]


def _show(text: str) -> str:
    if len(text) > _SHOWN:
        text = text[:_SHOWN] + "…"
    return f"`{text}`"
