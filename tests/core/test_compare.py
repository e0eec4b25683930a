import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.compare import CompareMode, Tolerance, compare, normalise

EXACT, NUMERIC = CompareMode.EXACT, CompareMode.NUMERIC
SEED = "[0.787 0.107 0.107]\n[0.893 0.213]\nTrue\n"


@pytest.mark.parametrize(
    ("expected", "got", "mode", "matches", "line"),
    [
        (SEED, SEED, EXACT, True, None),
        (SEED, SEED.replace("\n", "\r\n"), EXACT, True, None),
        (SEED, "[0.787 0.107 0.107]   \n[0.893 0.213]\t\nTrue\n\n\n", EXACT, True, None),
        (SEED, SEED.rstrip("\n"), EXACT, True, None),
        (SEED, "[0.787 0.107 0.107]\n[0.893 0.214]\nTrue\n", EXACT, False, 2),
        (SEED, "[0.787 0.107 0.107]\n[0.893 0.213]\n", EXACT, False, 3),
        (SEED, SEED + "extra\n", EXACT, False, 4),
        (SEED, "", EXACT, False, 1),
        (SEED, " [0.787 0.107 0.107]\n[0.893 0.213]\nTrue\n", EXACT, False, 1),
        ("a\n\nb\n", "a\nb\n", EXACT, False, 2),
        (SEED, "[0.7869 0.1065 0.1065]\n[0.8935 0.2128]\nTrue\n", NUMERIC, True, None),
        (SEED, "[0.7869 0.1065 0.1065]\n[0.8935 0.2128]\nTrue\n", EXACT, False, 1),
        (SEED, "[0.787 0.107 0.107]\n[0.893 0.215]\nTrue\n", NUMERIC, False, 2),
        (SEED, "[0.787 0.107 0.107]\n[0.893 0.213]\nFalse\n", NUMERIC, False, 3),
        (SEED, "[0.787 0.107]\n[0.893 0.213]\nTrue\n", NUMERIC, False, 1),
        ("[ 1.  -2.5]\n", "[1.0 -2.5]\n", NUMERIC, True, None),
        ("1e-3\n", "0.001\n", NUMERIC, True, None),
        ("x1 = 2\n", "x1 = 2.0004\n", NUMERIC, True, None),
        ("x1 = 2\n", "x2 = 2\n", NUMERIC, False, 1),
        ("nan inf\n", "nan inf\n", NUMERIC, True, None),
        ("value: 3\n", "value: three\n", NUMERIC, False, 1),
    ],
)
def test_compare_table(expected, got, mode, matches, line):
    result = compare(expected, got, mode, Tolerance(rel=1e-6, abs=1e-3))
    assert result.matches is matches
    assert (result.diff.line if result.diff else None) == line


def test_feedback_names_line_and_both_sides():
    result = compare(SEED, "[0.787 0.107 0.107]\n[0.5 0.5]\nTrue\n")
    assert result.explain() == "Line 2 differs: expected `[0.893 0.213]`, got `[0.5 0.5]`."


def test_numeric_feedback_names_the_value():
    result = compare("[0.893 0.213]\n", "[0.893 0.5]\n", NUMERIC)
    assert "Value 2 is 0.5, expected 0.213" in result.explain()


def test_missing_line_feedback_counts_lines():
    result = compare("a\nb\n", "a\n")
    assert result.explain() == "Line 2 is missing: expected `b`, but your output has only 1 line."


def test_long_lines_are_shortened_in_feedback():
    result = compare("a\n", "b" * 10_000 + "\n")
    assert len(result.explain()) < 300


@pytest.mark.parametrize(
    ("got", "expected", "ok"),
    [
        (0.7869, 0.787, True),
        (0.789, 0.787, False),
        (1e9 + 500, 1e9, True),
        (float("nan"), float("nan"), True),
        (float("nan"), 1.0, False),
        (float("inf"), float("inf"), True),
        (float("inf"), 1e308, False),
    ],
)
def test_tolerance(got, expected, ok):
    assert Tolerance(rel=1e-6, abs=1e-3).accepts(got, expected) is ok


# properties

lines = st.lists(
    st.text(st.characters(blacklist_categories=("Cs", "Zl", "Zp", "Cc")), max_size=30), max_size=8
)


@given(lines)
def test_output_matches_itself_in_both_modes(text_lines):
    text = "\n".join(text_lines)
    assert compare(text, text, EXACT).matches
    assert compare(text, text, NUMERIC).matches


@given(lines, st.sampled_from(["\n", "\r\n", "\r"]), st.sampled_from(["", " ", "\t", "  "]))
def test_line_endings_and_trailing_space_never_matter(text_lines, newline, pad):
    text = "\n".join(text_lines)
    variant = newline.join(line + pad for line in text_lines) + newline
    assert compare(text, variant, EXACT).matches


@given(lines, lines)
def test_exact_match_implies_numeric_match(a, b):
    expected, got = "\n".join(a), "\n".join(b)
    if compare(expected, got, EXACT).matches:
        assert compare(expected, got, NUMERIC).matches


@given(st.lists(st.text("abc xyz", min_size=1, max_size=10), min_size=1, max_size=6), st.data())
def test_first_difference_is_the_changed_line(text_lines, data):
    text_lines = [line.strip() or "q" for line in text_lines]
    index = data.draw(st.integers(0, len(text_lines) - 1))
    changed = list(text_lines)
    changed[index] = changed[index] + "!"
    result = compare("\n".join(text_lines), "\n".join(changed), EXACT)
    assert not result.matches
    assert result.diff is not None and result.diff.line == index + 1


@given(
    st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=6),
    st.floats(-0.0009, 0.0009),
)
def test_numbers_within_tolerance_match(values, delta):
    expected = "[" + " ".join(f"{v:.3f}" for v in values) + "]"
    got = "[" + " ".join(f"{float(f'{v:.3f}') + delta:.6f}" for v in values) + "]"
    assert compare(expected, got, NUMERIC, Tolerance(rel=0, abs=1e-3)).matches


@given(lines)
def test_normalise_is_idempotent(text_lines):
    once = normalise("\n".join(text_lines))
    assert normalise("\n".join(once)) == once
