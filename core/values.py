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
from dataclasses import dataclass
from typing import Any

from core.compare import CompareMode, Tolerance

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


class ValueRefused(Exception):
    """The program's value channel held something that is not a value we can read."""


@dataclass(frozen=True)
class ValueComparison:
    """Whether a value matches the expected one, and if not, a sentence on the first difference."""

    matches: bool
    detail: str = ""


def decode(raw: bytes) -> Any:
    """Read the harness's JSON into plain values, Arrays and Unsupporteds; raise ValueRefused."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise ValueRefused("the value is nested too deeply to be read") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValueRefused(f"the value channel did not hold JSON ({exc})") from None
    return _untag(data, 0)


def _untag(data: Any, depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise ValueRefused(f"the value is nested deeper than {_MAX_DEPTH} levels")
    if data is None or isinstance(data, bool | int | str):
        return data
    if isinstance(data, float):
        return data
    if isinstance(data, list):
        return [_untag(item, depth + 1) for item in data]
    if not isinstance(data, dict) or len(data) != 1:
        raise ValueRefused("the value channel held an object that is not a tagged value")
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
            raise ValueRefused("a numpy scalar came back holding more than one value")
        return value
    if tag == "$ndarray" and isinstance(body, dict):
        shape = body.get("shape")
        if not isinstance(shape, list) or not all(type(n) is int and n >= 0 for n in shape):
            raise ValueRefused("an array came back without a valid shape")
        items = _untag(body.get("data"), depth + 1)
        if not _fits(items, tuple(shape)):
            raise ValueRefused("an array came back whose items do not fit its shape")
        return Array(str(body.get("dtype"))[:40], tuple(shape), items)
    raise ValueRefused(f"the value channel held an unknown tag {str(tag)[:40]!r}")


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
    problem = _difference(expected, got, mode, tolerance, "")
    return ValueComparison(True) if problem is None else ValueComparison(False, problem)


def _difference(
    expected: Any, got: Any, mode: CompareMode, tolerance: Tolerance, at: str
) -> str | None:
    where = f"At {at}: " if at else ""
    if isinstance(got, Unsupported):
        return f"{where}your expression gave {got.what}, which is not a value that can be checked."
    if isinstance(got, Array):
        if isinstance(expected, list) and not _fits(expected, got.shape):
            shape = "x".join(map(str, got.shape)) or "scalar"
            return f"{where}expected {show(expected)}, got an array of shape {shape}."
        got = got.items
    if expected is None or isinstance(expected, bool) or isinstance(expected, str):
        if type(got) is type(expected) and got == expected:
            return None
        return f"{where}expected {show(expected)}, got {show(got)}."
    if isinstance(expected, int | float):
        return _number_difference(expected, got, mode, tolerance, where)
    if isinstance(expected, list):
        if not isinstance(got, list | tuple):
            return f"{where}expected a list like {show(expected)}, got {show(got)}."
        if len(got) != len(expected):
            return f"{where}expected {len(expected)} items, got {len(got)}: {show(got)}."
        for index, (want, have) in enumerate(zip(expected, got, strict=True)):
            problem = _difference(want, have, mode, tolerance, f"{at}[{index}]")
            if problem is not None:
                return problem
        return None
    if isinstance(expected, Mapping):
        if not isinstance(got, dict):
            return f"{where}expected a mapping like {show(expected)}, got {show(got)}."
        missing = [key for key in expected if key not in got]
        if missing:
            return f"{where}the key {missing[0]!r} is missing from {show(got)}."
        extra = [key for key in got if key not in expected]
        if extra:
            return f"{where}the key {extra[0]!r} is not expected, in {show(got)}."
        for key, want in expected.items():
            problem = _difference(want, got[key], mode, tolerance, f"{at}[{key!r}]")
            if problem is not None:
                return problem
        return None
    return f"{where}the expected value cannot be compared."  # refused by the loader


def _number_difference(
    expected: float, got: Any, mode: CompareMode, tolerance: Tolerance, where: str
) -> str | None:
    if isinstance(got, bool) or not isinstance(got, int | float):
        return f"{where}expected the number {show(expected)}, got {show(got)}."
    try:
        got_float, expected_float = float(got), float(expected)
    except OverflowError:  # an int past float's range: only an equal int matches it
        if got == expected:
            return None
        return f"{where}expected {show(expected)}, got {show(got)}."
    if math.isnan(got_float) and not math.isnan(expected_float):
        return f"{where}expected the number {show(expected)}, got nan."
    if mode is CompareMode.EXACT:
        if got == expected or (math.isnan(got_float) and math.isnan(expected_float)):
            return None
        return f"{where}expected {show(expected)}, got {show(got)}."
    if tolerance.accepts(got_float, expected_float):
        return None
    return (
        f"{where}expected {show(expected)}, got {show(got)} "
        f"(within {tolerance.abs:g} + {tolerance.rel:g} x |expected|)."
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
