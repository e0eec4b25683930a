"""core/messages: a sentence's English stays as it was; rendered, it is translated and its
numbers are written by the formatter given (the web app's is the locale's); stored as JSON, it
reads back, and what does not read back is None (the page then shows the stored English)."""

import json
from datetime import UTC, datetime

import pytest

from core.cases import Case, judge_case
from core.compare import CompareMode, Tolerance
from core.lessons import Exercise
from core.messages import (
    Joined,
    Message,
    Moment,
    Percent,
    from_json,
    join,
    say,
    say_n,
    to_json,
    verbatim,
)
from core.runs import Limits, RunOutcome, RunResult, RunStatus
from core.verdicts import grade_source, judge

FAKE_TR = {
    "Your program ran out of time ({time_s} s). Look for an endless loop.": (
        "Programının süresi doldu ({time_s} sn). Sonsuz bir döngü olup olmadığına bak."
    ),
    "Case '{name}' failed.": "'{name}' testi geçemedi.",
    "{passed} of {count} cases passed ({percent} of the points).": (
        "{count} testten {passed} tanesi geçti (puanların {percent} kadarı)."
    ),
    "Line {line} differs: expected {expected}, got {got}.": (
        "{line}. satır farklı: beklenen {expected}, gelen {got}."
    ),
    "A broken translation {nope}.": "Bozuk çeviri {yok}.",
}


def fake_number(value: float) -> str:
    """A Turkish-like number formatter: decimal comma, '.' between thousands."""
    text = f"{value:,}" if isinstance(value, int) else f"{value:,.15f}".rstrip("0").rstrip(".")
    return text.replace(",", "_").replace(".", ",").replace("_", ".")


def fake_percent(ratio: float) -> str:
    return f"%{ratio * 100:.0f}"


def tr(text: Message | Joined) -> str:
    return text.render(lambda msgid: FAKE_TR.get(msgid, msgid), fake_number, fake_percent)


@pytest.mark.parametrize(
    ("text", "english", "turkish"),
    [
        (
            say("Your program ran out of time ({time_s} s). Look for an endless loop.", time_s=2.5),
            "Your program ran out of time (2.5 s). Look for an endless loop.",
            "Programının süresi doldu (2,5 sn). Sonsuz bir döngü olup olmadığına bak.",
        ),
        (  # a nested sentence is translated too; text arguments are shown as they are
            say(
                "{case} {why}",
                case=say("Case '{name}' failed.", name="büyük {x}"),
                why=say("Nested {n}.", n=0.5),
            ),
            "Case 'büyük {x}' failed. Nested 0.5.",
            "'büyük {x}' testi geçemedi. Nested 0,5.",
        ),
        (  # a share is the locale's percentage, not a pre-formatted "50%"
            say(
                "{passed} of {count} cases passed ({percent} of the points).",
                passed=3,
                count=6,
                percent=Percent(0.5),
            ),
            "3 of 6 cases passed (50% of the points).",
            "6 testten 3 tanesi geçti (puanların %50 kadarı).",
        ),
        (  # thousands are the locale's; a sentence without a translation stays English
            join(
                say(
                    "Line {line} differs: expected {expected}, got {got}.",
                    line=12345,
                    expected="`0.5`",
                    got="`0.25`",
                ),
                say("No translation for {this}.", this=1.5),
            ),
            "Line 12345 differs: expected `0.5`, got `0.25`. No translation for 1.5.",
            "12.345. satır farklı: beklenen `0.5`, gelen `0.25`. No translation for 1,5.",
        ),
        (  # a translation whose fields do not fit falls back to the English template
            say("A broken translation {nope}.", nope=7),
            "A broken translation 7.",
            "A broken translation 7.",
        ),
        (verbatim("shown {as} it is"), "shown {as} it is", "shown {as} it is"),
        (  # English numbers as the f-strings wrote them ({x:g} for floats)
            say("{a} {b} {c} {d}", a=5.0, b=1e-06, c=0.001, d=64),
            "5 1e-06 0.001 64",
            "5 0,000001 0,001 64",
        ),
    ],
)
def test_render(text, english, turkish):
    assert str(text) == english
    assert tr(text) == turkish
    stored = json.loads(json.dumps(to_json(text)))  # as the store's JSON column holds it
    assert from_json(stored) == text
    assert tr(from_json(stored)) == turkish


def test_say_refuses_a_template_it_cannot_fill():
    with pytest.raises(ValueError):
        say("Line {line} differs.")
    with pytest.raises(ValueError):
        say("Line {line:>3} differs.", line=2)


def _nested(depth: int) -> dict:
    data: dict = {"t": "x", "a": {}}
    for _ in range(depth):
        data = {"t": "{v}", "a": {"v": data}}
    return data


@pytest.mark.parametrize(
    "stored",
    [
        None,
        "a string",
        [],
        {"t": "Line {line} differs.", "a": {}},  # a field without its argument
        {"t": "Line {line.__class__} differs.", "a": {"line": 1}},  # not a plain name
        {"t": "{0}", "a": {"0": 1}},
        {"t": 3, "a": {}},
        {"t": "x", "a": {}, "extra": 1},
        {"t": "{v}", "a": {"v": True}},
        {"t": "{v}", "a": {"v": None}},
        {"t": "{v}", "a": {"v": [1]}},
        {"t": "{v}", "a": {"v": {"%": "50"}}},
        {"t": "x" * 20_001, "a": {}},
        {"j": []},
        {"j": "not a list"},
        _nested(20),  # deeper than any verdict nests
        {"j": [{"t": "x", "a": {}}] * 3000},  # more parts than any verdict has
    ],
)
def test_from_json_refuses_what_it_did_not_store(stored):
    assert from_json(stored) is None


LIMITS = Limits(time_s=2.5, memory_mb=128, output_kb=32)


def _case(name: str, output: str = "1\n", hidden: bool = False, **kw: object) -> Case:
    return Case(name, 1.0, hidden, CompareMode.NUMERIC, Tolerance(), output=output, **kw)


def _exited(stdout: bytes = b"", stderr: bytes = b"", code: int = 0) -> RunResult:
    return RunResult(RunOutcome.EXITED, stdout, stderr, exit_code=code, duration_ms=3)


VALUE = Case(
    "value", 1.0, False, CompareMode.EXACT, Tolerance(), expr="f()", expected={"a": [1, 2]}
)
# Every way a case ends, for the checks below: each gives its English from the message.
RESULTS = [
    (_case("ok"), _exited(b"1\n")),
    (_case("differs"), _exited(b"2\n")),
    (_case("word"), _exited(b"x\n")),
    (_case("missing", "1\n2\n"), _exited(b"1\n")),
    (_case("extra"), _exited(b"1\n2\n3\n")),
    (_case("crash"), _exited(b"", b"Traceback\nZeroDivisionError: x\n", 1)),
    (_case("status"), _exited(code=4)),
    (_case("killed"), RunResult(RunOutcome.EXITED, exit_code=-9, signal=9)),
    (_case("signal 99"), RunResult(RunOutcome.EXITED, exit_code=-99, signal=99)),
    (_case("slow", hidden=True), RunResult(RunOutcome.TIMEOUT)),
    (_case("memory"), RunResult(RunOutcome.MEMORY_LIMIT)),
    (_case("output"), RunResult(RunOutcome.OUTPUT_LIMIT)),
    (_case("rejected"), RunResult(RunOutcome.REJECTED, reason="Too big.")),
    (VALUE, _exited(b'{"$dict": {"a": [1, 3]}}')),
    (VALUE, _exited(b'{"$dict": {"a": [1, 2], "b": 1}}')),
    (VALUE, _exited(b'{"$unsupported": "a generator"}')),
    (VALUE, _exited(b"not json")),
    (VALUE, _exited(b"")),
    (VALUE, _exited(b'{"$dict": {"a": [1, 2]}}')),
]


@pytest.mark.parametrize(("case", "result"), RESULTS, ids=lambda x: getattr(x, "name", ""))
def test_every_case_message_gives_its_english(case, result):
    verdict = judge_case(case, result, LIMITS)
    assert verdict.message is None if verdict.passed else str(verdict.message) == verdict.feedback
    record = json.loads(json.dumps(verdict.record()))
    assert str(from_json(record["feedback_message"])) == record["feedback"] == verdict.summary()
    if verdict.passed:
        assert record["detail_message"] is None and record["detail"] == ""
    else:
        assert str(from_json(record["detail_message"])) == record["detail"]


def test_a_verdicts_message_gives_its_english():
    cases = tuple(case for case, _ in RESULTS[:13])
    exercise = Exercise(
        title="T", prompt="P", entrypoint="m.py", compare=CompareMode.EXACT,
        tolerance=Tolerance(), limits=LIMITS, points=5, starter={"m.py": ""},
        solution={"m.py": ""}, expected_output="1\n", cases=cases, has_cases=True,
    )  # fmt: skip
    verdict = judge(exercise, [result for _, result in RESULTS[:13]])
    assert verdict.feedback.startswith("1 of 13 cases passed (8% of the points). ")
    assert str(verdict.message) == verdict.feedback
    assert str(from_json(json.loads(json.dumps(to_json(verdict.message))))) == verdict.feedback
    assert "Hidden case 'slow' ran out of time." in verdict.feedback
    assert tr(verdict.message).startswith("13 testten 1 tanesi geçti (puanların %8 kadarı). ")
    assert "'differs' testi geçemedi. Line 1 differs: expected `1`, got `2`. " in tr(
        verdict.message
    )  # a sentence the fake catalog lacks stays English, among translated ones


def test_a_refused_source_is_a_translatable_reason():
    single = Exercise(
        title="T", prompt="P", entrypoint="m.py", compare=CompareMode.EXACT,
        tolerance=Tolerance(), limits=LIMITS, points=5, starter={"m.py": ""},
        solution={"m.py": ""}, expected_output="1\n", cases=(_case("expected output"),),
    )  # fmt: skip
    verdict = grade_source(single, b"\xff", sandbox=None)  # type: ignore[arg-type]
    assert verdict.status is RunStatus.REJECTED
    assert verdict.feedback == (
        "Your submission was not run. The code is not UTF-8 text (invalid byte at position 0)."
    )
    assert str(verdict.message) == verdict.feedback
    translated = {"The code is not UTF-8 text (invalid byte at position {position}).": "Bozuk."}
    assert verdict.message.render(lambda m: translated.get(m, m), str).endswith("run. Bozuk.")


PLURAL_TR = {  # a fake catalog with plural forms, as Babel's Translations.ngettext reads one
    ("You have used your {num} attempt.", "You have used all {num} attempts."): (
        "{num} denemeni kullandın.",
        "{num} denemenin hepsini kullandın.",
    ),
}


def fake_ngettext(singular: str, plural: str, n: int) -> str:
    forms = PLURAL_TR.get((singular, plural))
    if forms is None:
        return singular if n == 1 else plural
    return forms[0] if n == 1 else forms[1]


@pytest.mark.parametrize(
    ("num", "english", "turkish"),
    [
        (1, "You have used your 1 attempt.", "1 denemeni kullandın."),
        (3, "You have used all 3 attempts.", "3 denemenin hepsini kullandın."),
        (1000, "You have used all 1000 attempts.", "1.000 denemenin hepsini kullandın."),
    ],
)
def test_a_plural_is_chosen_by_its_count_in_each_language(num, english, turkish):
    text = say_n("You have used your {num} attempt.", "You have used all {num} attempts.", num=num)
    assert str(text) == english
    worded = text.render(lambda m: m, fake_number, translate_n=fake_ngettext)
    assert worded == turkish
    assert from_json(json.loads(json.dumps(to_json(text)))) == text


def test_a_plural_needs_its_count_and_its_fields():
    with pytest.raises(ValueError, match="wait"):
        say_n("Wait {wait} s.", "Wait {wait} s, {num} times.", num=2)
    stored = to_json(say_n("{num} try", "{num} tries", num=2))
    assert from_json({**stored, "a": {}}) is None  # its count gone
    assert from_json({**stored, "a": {"num": "2"}}) is None  # a count that is no int
    assert from_json({**stored, "p": 7}) is None


def test_a_moment_is_written_by_the_readers_locale_and_kept_as_english():
    due = datetime(2027, 1, 31, 23, 59, tzinfo=UTC)
    text = say("This lesson was due on {due}.", due=Moment(due))
    assert str(text) == "This lesson was due on 2027-01-31 23:59 UTC."
    worded = text.render(lambda m: m, fake_number, moment=lambda at: f"{at:%d.%m.%Y %H:%M}")
    assert worded == "This lesson was due on 31.01.2027 23:59."
    assert from_json(json.loads(json.dumps(to_json(text)))) == text
    assert from_json({"t": "{due}", "a": {"due": {"@": "tomorrow"}}}) is None
