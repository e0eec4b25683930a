"""core/values.py: a value case's JSON read back as data, held against the expected value."""

import json
import math

import pytest

from core.compare import CompareMode, Tolerance
from core.values import Array, Unsupported, ValueRefused, compare_values, decode, show

EXACT, NUMERIC = CompareMode.EXACT, CompareMode.NUMERIC
TOL = Tolerance(rel=1e-6, abs=1e-3)
NAN, INF = float("nan"), float("inf")


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


DECODED = [
    # (the channel's bytes, the value)
    (b"null", None),
    (b"true", True),
    (b"-3", -3),
    (b"2.5", 2.5),
    (b'"\\u00e7ok"', "çok"),
    ('"çok"'.encode(), "çok"),
    (b"[1, [2, 3]]", [1, [2, 3]]),
    (b'{"$tuple": [1, {"$tuple": []}]}', (1, ())),
    (b'{"$dict": {"a": {"$tuple": [1]}, "$b": 2}}', {"a": (1,), "$b": 2}),
    (b'{"$float": "inf"}', INF),
    (b'{"$float": "-inf"}', -INF),
    (b'{"$scalar": {"dtype": "int64", "value": 7}}', 7),
    (b'{"$scalar": {"dtype": "float32", "value": {"$float": "-inf"}}}', -INF),
    (b'{"$unsupported": "a function (f)"}', Unsupported("a function (f)")),
    (b'{"$unsupported": "' + b"x" * 1000 + b'"}', Unsupported("x" * 300)),
    (
        b'{"$ndarray": {"dtype": "float64", "shape": [2, 2], "data": [[1.0, 2.0], [3.0, 4.0]]}}',
        Array("float64", (2, 2), [[1.0, 2.0], [3.0, 4.0]]),
    ),
    (b'{"$ndarray": {"dtype": "int64", "shape": [], "data": 5}}', Array("int64", (), 5)),
    (b'{"$ndarray": {"dtype": "int64", "shape": [0, 3], "data": []}}', Array("int64", (0, 3), [])),
    (b"1" * 4000, int("1" * 4000)),
]


@pytest.mark.parametrize(("raw", "value"), DECODED)
def test_decode(raw, value):
    got = decode(raw)
    assert got == value and type(got) is type(value)


def test_decode_nan_and_nesting():
    array = decode(b'{"$ndarray": {"dtype": "float64", "shape": [1], "data": [{"$float": "nan"}]}}')
    assert isinstance(array, Array) and math.isnan(array.items[0])
    assert math.isnan(decode(b'{"$float": "nan"}'))
    deep = decode(_nested(64).encode())
    for _ in range(63):
        deep = deep[0]
    assert deep == []


REFUSED = [
    # (the channel's bytes, a piece of the reason)
    (b"", "did not hold JSON"),
    (b"[1, 2", "did not hold JSON"),
    (b"1 2", "did not hold JSON"),
    (b"\xff\xfe", "did not hold JSON"),
    ('"ç"'.encode("latin-1"), "did not hold JSON"),
    (b"1" * 5000, "did not hold JSON"),  # longer than Python reads an int
    (_nested(66).encode(), "nested deeper than 64"),
    (_nested(100_000).encode(), "nested too deeply"),
    (b'{"$tuple": [' * 70 + b"]}" * 70, "nested deeper than 64"),
    (b"{}", "not a tagged value"),
    (b'{"a": 1}', "unknown tag 'a'"),
    (b'{"$tuple": [1], "$dict": {}}', "not a tagged value"),
    (b'{"$pickle": "gASVAAAA"}', "unknown tag '$pickle'"),
    (b'{"$tuple": 5}', "unknown tag '$tuple'"),
    (b'{"$dict": [1]}', "unknown tag '$dict'"),
    (b'{"$float": "NaN!"}', "unknown tag '$float'"),
    (b'{"$unsupported": 5}', "unknown tag"),
    (b'{"$scalar": {"value": 1}}', "unknown tag '$scalar'"),
    (b'{"$scalar": {"dtype": "int64", "value": [1, 2]}}', "more than one value"),
    (b'{"$scalar": {"dtype": "int64", "value": {"$dict": {}}}}', "more than one value"),
    (b'{"$ndarray": {"dtype": "f8", "data": [1]}}', "without a valid shape"),
    (b'{"$ndarray": {"dtype": "f8", "shape": [-1], "data": []}}', "without a valid shape"),
    (b'{"$ndarray": {"dtype": "f8", "shape": [1.0], "data": [1]}}', "without a valid shape"),
    (b'{"$ndarray": {"dtype": "f8", "shape": [true], "data": [1]}}', "without a valid shape"),
    (b'{"$ndarray": {"dtype": "f8", "shape": [2, 2], "data": [[1, 2], [3]]}}', "do not fit"),
    (b'{"$ndarray": {"dtype": "f8", "shape": [2], "data": [[1], [2]]}}', "do not fit"),
    (b'{"$ndarray": {"dtype": "f8", "shape": [3], "data": [1, 2]}}', "do not fit"),
    (b'{"$ndarray": {"dtype": "f8", "shape": [], "data": [1]}}', "do not fit"),
    (b'{"$ndarray": {"dtype": "f8", "shape": [1], "data": 1}}', "do not fit"),
]


@pytest.mark.parametrize(("raw", "reason"), REFUSED)
def test_decode_refuses(raw, reason):
    with pytest.raises(ValueRefused, match=reason.replace("$", r"\$")):
        decode(raw)


def _array(items, dtype="float64"):
    shape, level = [], items
    while isinstance(level, list):
        shape.append(len(level))
        level = level[0] if level else None
    return Array(dtype, tuple(shape), items)


COMPARED = [
    # (expected, got, mode, matches, a piece of the detail)
    (1.0, 1.0005, NUMERIC, True, ""),
    (1.0, 1.002, NUMERIC, False, "expected 1.0, got 1.002 (within 0.001 + 1e-06 x |expected|)"),
    (1.0, 1.0005, EXACT, False, "expected 1.0, got 1.0005."),
    (1e9, 1e9 + 900, NUMERIC, True, ""),  # the relative part
    (1, 1.0, EXACT, True, ""),
    (3, 3, EXACT, True, ""),
    (NAN, NAN, NUMERIC, True, ""),
    (NAN, NAN, EXACT, True, ""),
    (1.0, NAN, NUMERIC, False, "expected the number 1.0, got nan"),
    (1.0, NAN, EXACT, False, "got nan"),
    (NAN, 1.0, NUMERIC, False, "expected nan, got 1.0"),
    (NAN, 1.0, EXACT, False, "expected nan, got 1.0"),
    (INF, INF, NUMERIC, True, ""),
    (INF, INF, EXACT, True, ""),
    (-INF, -INF, NUMERIC, True, ""),
    (INF, -INF, NUMERIC, False, "expected inf, got -inf"),
    (1e308, INF, NUMERIC, False, "got inf"),
    (INF, 1e308, NUMERIC, False, "expected inf"),
    (1.0, 10**400, NUMERIC, False, "expected 1.0, got 1000"),
    (1.0, 10**400, EXACT, False, "expected 1.0, got 1000"),
    (10**400, 10**400, NUMERIC, True, ""),
    (10**400, 10**400 + 1, NUMERIC, False, "got 1000"),
    (1, True, NUMERIC, False, "expected the number 1, got True"),
    (0, False, EXACT, False, "expected the number 0, got False"),
    (True, 1, EXACT, False, "expected True, got 1"),
    (True, True, EXACT, True, ""),
    (False, 0.0, NUMERIC, False, "expected False, got 0.0"),
    (None, None, EXACT, True, ""),
    (None, 0, EXACT, False, "expected None, got 0"),
    (None, "None", EXACT, False, "expected None, got 'None'"),
    ("a", "a", EXACT, True, ""),
    ("a", "a ", NUMERIC, False, "expected 'a', got 'a '"),
    ("1", 1, EXACT, False, "expected '1', got 1"),
    (1.0, "1.0", NUMERIC, False, "expected the number 1.0, got '1.0'"),
    ([1, 2], [1, 2], EXACT, True, ""),
    ([1, 2], (1, 2), EXACT, True, ""),  # a tuple stands for a list (JSON has one sequence)
    ([1, [2, 3]], (1, (2, 3.0004)), NUMERIC, True, ""),
    ([1, 2], [1, 2, 3], EXACT, False, "expected 2 items, got 3: [1, 2, 3]"),
    ([1, 2], [1, 3], EXACT, False, "At [1]: expected 2, got 3."),
    ([[1, 2], [3, 4]], [[1, 2], [3, 5]], EXACT, False, "At [1][1]: expected 4, got 5."),
    ([1, 2], {"a": 1}, EXACT, False, "expected a list like [1, 2], got {'a': 1}"),
    ([1, 2], "12", EXACT, False, "expected a list like [1, 2], got '12'"),
    ([0.5, 0.5], _array([0.5, 0.5]), NUMERIC, True, ""),
    ([0.5, 0.5], _array([0.5, 0.5004]), NUMERIC, True, ""),
    ([0.5, 0.5], _array([0.5, 0.6]), NUMERIC, False, "At [1]: expected 0.5, got 0.6"),
    ([[1, 2], [3, 4]], _array([[1, 2], [3, 4]], "int64"), EXACT, True, ""),
    (
        [[1, 2], [3, 4]],
        _array([1, 2, 3, 4], "int64"),
        EXACT,
        False,
        "got an array of shape 4.",
    ),
    (
        [1, 2, 3, 4],
        _array([[1, 2], [3, 4]], "int64"),
        EXACT,
        False,
        "got an array of shape 2x2.",
    ),
    ([[1, 2]], _array([[1, 2], [3, 4]], "int64"), EXACT, False, "got an array of shape 2x2."),
    ([], Array("float64", (0,), []), EXACT, True, ""),
    ([[]], Array("float64", (0,), []), EXACT, False, "got an array of shape 0."),
    (2.0, Array("float64", (), 2.0), EXACT, True, ""),
    ([2.0], Array("float64", (), 2.0), EXACT, False, "got an array of shape scalar."),
    ([True, False], _array([True, False], "bool"), EXACT, True, ""),
    (
        [1, 0],
        _array([True, False], "bool"),
        EXACT,
        False,
        "At [0]: expected the number 1, got True",
    ),
    (["a", "b"], _array(["a", "b"], "<U1"), EXACT, True, ""),
    ({"a": 1, "b": [2]}, {"b": [2], "a": 1.0}, EXACT, True, ""),
    ({"a": 1, "b": 2}, {"a": 1}, EXACT, False, "the key 'b' is missing from {'a': 1}"),
    ({"a": 1}, {"a": 1, "c": 3}, EXACT, False, "the key 'c' is not expected"),
    ({"a": {"b": 1}}, {"a": {"b": 2}}, EXACT, False, "At ['a']['b']: expected 1, got 2."),
    ({"a": 1}, [["a", 1]], EXACT, False, "expected a mapping like {'a': 1}"),
    ({}, {}, EXACT, True, ""),
    (
        1,
        Unsupported("a function (f)"),
        EXACT,
        False,
        "your expression gave a function (f), which is not a value that can be checked.",
    ),
    ([1, 2], [1, Unsupported("a generator")], EXACT, False, "At [1]: your expression gave a gen"),
    ({"a": 1}, {"a": Unsupported("a module")}, NUMERIC, False, "At ['a']: your expression gave a"),
]


@pytest.mark.parametrize(("expected", "got", "mode", "matches", "detail"), COMPARED)
def test_compare_values(expected, got, mode, matches, detail):
    held = compare_values(expected, got, mode, TOL)
    assert held.matches is matches
    assert detail in held.detail
    assert (held.detail == "") is matches


def test_compare_values_with_the_tolerance_given():
    assert compare_values(1.0, 1.2, NUMERIC, Tolerance(rel=0.0, abs=0.25)).matches
    assert not compare_values(1.0, 1.2, NUMERIC, Tolerance(rel=0.0, abs=0.1)).matches
    assert compare_values(100.0, 110.0, NUMERIC, Tolerance(rel=0.1, abs=0.0)).matches
    assert not compare_values(100.0, 110.0, EXACT, Tolerance(rel=1.0, abs=1.0)).matches


SHOWN = [
    (None, "None"),
    (True, "True"),
    (0.1, "0.1"),
    (NAN, "nan"),
    ("a'b", '"a\'b"'),
    ([1, (2,), ()], "[1, (2,), ()]"),
    ((1, 2), "(1, 2)"),
    ({"a": [1.5]}, "{'a': [1.5]}"),
    (Array("float64", (2,), [1.0, 2.0]), "array([1.0, 2.0], dtype=float64)"),
    (Unsupported("a generator"), "a generator"),
]


@pytest.mark.parametrize(("value", "text"), SHOWN)
def test_show(value, text):
    assert show(value) == text


def test_show_cuts_long_values_short():
    long = list(range(1000))
    text = show(long)
    assert len(text) == 301 and text.endswith("…") and text.startswith("[0, 1, 2, ")
    assert show(list(range(10))) == "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]"
    exactly = "x" * 298  # repr adds the quotes: 300 characters are shown whole
    assert show(exactly) == repr(exactly)
    assert show(exactly + "y") == repr(exactly + "y")[:300] + "…"


def test_a_roundtrip_of_what_the_harness_writes():
    """The tags the harness writes (core/case_harness.py's _encode) decode to these values."""
    written = {
        "$dict": {
            "t": {"$tuple": [1, {"$float": "inf"}]},
            "a": {"$ndarray": {"dtype": "int64", "shape": [2], "data": [1, 2]}},
        }
    }
    value = decode(json.dumps(written).encode())
    assert value == {"t": (1, INF), "a": Array("int64", (2,), [1, 2])}
    assert compare_values({"t": [1, INF], "a": [1, 2]}, value, EXACT, TOL).matches
