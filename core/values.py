"""A value case's result: read back from JSON as plain data, and held against the expected value.

The sandbox's harness (core/case_harness.py) writes the value as JSON with tags for what JSON
lacks: `{"$tuple": [...]}`, `{"$dict": {...}}`, `{"$float": "nan"|"inf"|"-inf"}`, a numpy
array as `{"$ndarray": {"dtype", "shape", "data"}}`, a numpy scalar as
`{"$scalar": {"dtype", "value"}}`, and anything that is not plain data as
`{"$unsupported": "what it was"}`. Nothing is ever unpickled, and nothing the program sent can
run on the host: decoding makes plain Python values and two small records, nothing else.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from core.compare import CompareMode, Tolerance
from core.errors import Refusal
from core.messages import Message, say

_SHOWN = 300
_MAX_DEPTH = 64
_MAX_BITS = 4096  # an expected int fits in float range, near enough, and prints (< 4300 digits)


@dataclass(frozen=True)
class Array:
    """A numpy array as data: its dtype, shape and items (nested lists, as `tolist()` gives)."""

    dtype: str
    shape: tuple[int, ...]
    items: Any


@dataclass(frozen=True)
class Unsupported:
    """What came back was not plain data (an object, a function, a generator...)."""

    what: str


class ValueRefused(Refusal):
    """The program's value channel held something that is not a value we can read.

    Its str() is the reason in English; `words` the same to be translated. core.cases makes
    it a case's error (a value): it never reaches a request, so its status is only nominal.
    """

    code = "unreadable_value"
    status = 422


@dataclass(frozen=True)
class ValueComparison:
    """Whether a value matches the expected one, and if not, a sentence on the first difference."""

    matches: bool
    detail: str = ""  # in English; `message` is the same sentence to be translated
    message: Message | None = field(default=None, compare=False)


def decode(raw: bytes) -> Any:
    """Read the harness's JSON into plain values, Arrays and Unsupporteds; raise ValueRefused."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise ValueRefused(say("the value is nested too deeply to be read")) from None
    except (UnicodeDecodeError, ValueError) as exc:
        refused = say("the value channel did not hold JSON ({problem})", problem=str(exc))
        raise ValueRefused(refused) from None
    return _untag(data, 0)


def _untag(data: Any, depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise ValueRefused(say("the value is nested deeper than {depth} levels", depth=_MAX_DEPTH))
    if data is None or isinstance(data, bool | int | str):
        return data
    if isinstance(data, float):
        return data
    if isinstance(data, list):
        return [_untag(item, depth + 1) for item in data]
    if not isinstance(data, dict) or len(data) != 1:
        raise ValueRefused(say("the value channel held an object that is not a tagged value"))
    ((tag, body),) = data.items()
    if tag == "$tuple" and isinstance(body, list):
        return tuple(_untag(item, depth + 1) for item in body)
    if tag == "$dict" and isinstance(body, dict):
        return {str(key): _untag(item, depth + 1) for key, item in body.items()}
    if tag == "$float" and body in ("nan", "inf", "-inf"):
        return float(body)
    if tag == "$unsupported" and isinstance(body, str):
        return Unsupported(body[:_SHOWN])
    if tag == "$scalar" and isinstance(body, dict) and isinstance(body.get("dtype"), str):
        value = _untag(body.get("value"), depth + 1)
        if value is not None and not isinstance(value, bool | int | float | str):
            raise ValueRefused(say("a numpy scalar came back holding more than one value"))
        return value
    if tag == "$ndarray" and isinstance(body, dict):
        shape = body.get("shape")
        if not isinstance(shape, list) or not all(type(n) is int and n >= 0 for n in shape):
            raise ValueRefused(say("an array came back without a valid shape"))
        items = _untag(body.get("data"), depth + 1)
        if not _fits(items, tuple(shape)):
            raise ValueRefused(say("an array came back whose items do not fit its shape"))
        return Array(str(body.get("dtype"))[:40], tuple(shape), items)
    raise ValueRefused(say("the value channel held an unknown tag {tag}", tag=repr(str(tag)[:40])))


def _fits(items: Any, shape: tuple[int, ...]) -> bool:
    """Return whether nested lists have exactly this shape (a scalar for the empty shape)."""
    if not shape:
        return not isinstance(items, list | tuple)
    if not isinstance(items, list | tuple) or len(items) != shape[0]:
        return False
    return all(_fits(item, shape[1:]) for item in items)


def check_expected(value: Any, depth: int = 0) -> str | None:
    """Say what is wrong with a lesson's expected value; None when it is plain data."""
    if depth > _MAX_DEPTH:
        return f"is nested deeper than {_MAX_DEPTH} levels"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > _MAX_BITS:
        return f"has an integer of more than {_MAX_BITS} bits, too large to compare or show"
    if value is None or isinstance(value, bool | int | float | str):
        return None
    if isinstance(value, list):
        return next(
            (problem for item in value if (problem := check_expected(item, depth + 1))), None
        )
    if isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            return "has a mapping whose keys are not all text"
        return next(
            (problem for item in value.values() if (problem := check_expected(item, depth + 1))),
            None,
        )
    kinds = "null, bool, number, text, list, mapping"
    return f"holds a {type(value).__name__}, which is not plain data ({kinds})"


def compare_values(
    expected: Any, got: Any, mode: CompareMode, tolerance: Tolerance
) -> ValueComparison:
    """Hold a decoded value against the expected one; say where they first part ways."""
    found = _first_difference(expected, got, mode, tolerance, "")
    if found is None:
        return ValueComparison(True)
    at, problem = found
    if at:
        problem = say("At {at}: {problem}", at=at, problem=problem)
    return ValueComparison(False, str(problem), problem)


def _first_difference(
    expected: Any, got: Any, mode: CompareMode, tolerance: Tolerance, at: str
) -> tuple[str, Message] | None:
    """Return where the values first part ways and what differs there (no 'At ...' yet)."""
    if isinstance(got, Unsupported):
        return at, say(
            "your expression gave {what}, which is not a value that can be checked.",
            what=got.what,
        )
    if isinstance(got, Array):
        if isinstance(expected, list) and not _fits(expected, got.shape):
            shape = "x".join(map(str, got.shape)) or "scalar"
            return at, say(
                "expected {expected}, got an array of shape {shape}.",
                expected=show(expected),
                shape=shape,
            )
        got = got.items
    if expected is None or isinstance(expected, bool) or isinstance(expected, str):
        if type(got) is type(expected) and got == expected:
            return None
        return at, _expected_got(expected, got)
    if isinstance(expected, int | float):
        problem = _number_difference(expected, got, mode, tolerance)
        return None if problem is None else (at, problem)
    if isinstance(expected, list):
        if not isinstance(got, list | tuple):
            return at, say(
                "expected a list like {expected}, got {got}.",
                expected=show(expected),
                got=show(got),
            )
        if len(got) != len(expected):
            return at, say(
                "expected {count} items, got {got_count}: {got}.",
                count=len(expected),
                got_count=len(got),
                got=show(got),
            )
        for index, (want, have) in enumerate(zip(expected, got, strict=True)):
            found = _first_difference(want, have, mode, tolerance, f"{at}[{index}]")
            if found is not None:
                return found
        return None
    if isinstance(expected, Mapping):
        if not isinstance(got, dict):
            return at, say(
                "expected a mapping like {expected}, got {got}.",
                expected=show(expected),
                got=show(got),
            )
        missing = [key for key in expected if key not in got]
        if missing:
            return at, say(
                "the key {key} is missing from {got}.", key=repr(missing[0]), got=show(got)
            )
        extra = [key for key in got if key not in expected]
        if extra:
            return at, say(
                "the key {key} is not expected, in {got}.", key=repr(extra[0]), got=show(got)
            )
        for key, want in expected.items():
            found = _first_difference(want, got[key], mode, tolerance, f"{at}[{key!r}]")
            if found is not None:
                return found
        return None
    return at, say("the expected value cannot be compared.")  # refused by the loader


def _expected_got(expected: Any, got: Any) -> Message:
    return say("expected {expected}, got {got}.", expected=show(expected), got=show(got))


def _number_difference(
    expected: float, got: Any, mode: CompareMode, tolerance: Tolerance
) -> Message | None:
    if isinstance(got, bool) or not isinstance(got, int | float):
        return say(
            "expected the number {expected}, got {got}.", expected=show(expected), got=show(got)
        )
    try:
        got_float, expected_float = float(got), float(expected)
    except OverflowError:  # an int past float's range: only an equal int matches it
        return None if got == expected else _expected_got(expected, got)
    if math.isnan(got_float) and not math.isnan(expected_float):
        return say("expected the number {expected}, got nan.", expected=show(expected))
    if mode is CompareMode.EXACT:
        if got == expected or (math.isnan(got_float) and math.isnan(expected_float)):
            return None
        return _expected_got(expected, got)
    if tolerance.accepts(got_float, expected_float):
        return None
    return say(
        "expected {expected}, got {got} (within {abs} + {rel} x |expected|).",
        expected=show(expected),
        got=show(got),
        abs=float(tolerance.abs),
        rel=float(tolerance.rel),
    )


def show(value: Any) -> str:
    """Render a value for a student, Python-like and cut short."""
    text = _render(value)
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "…"


def _render(value: Any) -> str:
    if isinstance(value, Array):
        return f"array({_render(value.items)}, dtype={value.dtype})"
    if isinstance(value, Unsupported):
        return value.what
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_render(item) for item in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(_render(item) for item in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key!r}: {_render(item)}" for key, item in value.items()) + "}"
    return repr(value)
