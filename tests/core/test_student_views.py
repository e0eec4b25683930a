"""core/student_views: a stored verdict as its student sees it (issue 25, point 1).

Of a hidden case not yet revealed, the student sees its name, weight and pass or fail; the
verdict's status, time and feedback are what the cases so shown make of them. Verdicts come
from core.verdicts.judge on plain RunResults and are stored as the store's writer
(service.store.submissions.finish) stores them: no sandbox, no database.
"""

from dataclasses import dataclass, replace
from typing import Any

import pytest

from core.cases import Case
from core.compare import CompareMode, Tolerance
from core.lessons import Exercise
from core.messages import from_json, to_json
from core.runs import Limits, RunOutcome, RunResult
from core.student_views import (
    AS_GRADED,
    StudentView,
    case_records,
    score_comment,
    shown_case,
    stored_view,
    student_view,
)
from core.verdicts import Verdict, judge

LIMITS = Limits(time_s=2.0)


def _run(name: str, hidden: bool = False, weight: float = 1) -> Case:
    return Case(name, weight, hidden, CompareMode.EXACT, Tolerance(), stdin=name, output="ok\n")


V1, V2 = _run("v1"), _run("v2", weight=2)
H1, H2 = _run("h1", hidden=True), _run("h2", hidden=True, weight=3)
MIXED = (V1, V2, H1, H2)
HIDDEN_FIRST = (H1, V1, H2, V2)


@dataclass(frozen=True)
class Stored:
    """A graded submission's verdict columns, as the store's writer fills them."""

    run_status: str | None
    duration_ms: int | None
    message: Any
    cases: Any


def stored(verdict: Verdict) -> Stored:
    return Stored(
        run_status=verdict.status.value,
        duration_ms=verdict.duration_ms,
        message=to_json(verdict.message),
        cases=[case.record() for case in verdict.cases] or None,
    )


def graded(cases: tuple[Case, ...], results: list[RunResult]) -> Stored:
    return stored(judged(cases, results))


def judged(cases: tuple[Case, ...], results: list[RunResult]) -> Verdict:
    exercise = Exercise(
        title="T",
        prompt="P",
        entrypoint="main.py",
        compare=CompareMode.EXACT,
        tolerance=Tolerance(),
        limits=LIMITS,
        points=6,
        starter={"main.py": ""},
        solution={"main.py": ""},
        expected_output="",
        cases=cases,
        has_cases=True,
    )
    return judge(exercise, results)


def ok(ms: int = 7) -> RunResult:
    return RunResult(RunOutcome.EXITED, b"ok\n", b"", exit_code=0, duration_ms=ms)


def wrong(ms: int = 7) -> RunResult:
    return RunResult(RunOutcome.EXITED, b"no\n", b"hint\n", exit_code=0, duration_ms=ms)


def ended(outcome: RunOutcome, ms: int = 7) -> RunResult:
    return RunResult(outcome, b"", b"", duration_ms=ms, reason="over the limit")


def crashed(ms: int = 7) -> RunResult:
    return RunResult(RunOutcome.EXITED, b"", b"ValueError: 41\n", exit_code=1, duration_ms=ms)


# every way a hidden case can fail, and how long it can take: one bit, failed, to the student
FAILING = [
    pytest.param(wrong(1900), id="wrong, slowly"),
    pytest.param(ended(RunOutcome.TIMEOUT, 2000), id="timeout"),
    pytest.param(crashed(), id="error"),
    pytest.param(RunResult(RunOutcome.EXITED, b"", b"", signal=9, duration_ms=7), id="killed"),
    pytest.param(ended(RunOutcome.MEMORY_LIMIT), id="memory_limit"),
    pytest.param(ended(RunOutcome.OUTPUT_LIMIT), id="output_limit"),
    pytest.param(ended(RunOutcome.REJECTED), id="rejected"),
]


@pytest.mark.parametrize("cases", [MIXED, HIDDEN_FIRST], ids=["visible first", "hidden first"])
@pytest.mark.parametrize("failing", FAILING)
def test_a_hidden_case_failing_any_way_shows_as_a_wrong_value(cases, failing):
    def results(h1: RunResult) -> list[RunResult]:  # v2 fails too, h2 passes
        return [h1 if case is H1 else wrong() if case is V2 else ok() for case in cases]

    assert student_view(graded(cases, results(failing)), False) == student_view(
        graded(cases, results(wrong())), False
    )


@pytest.mark.parametrize("ms", [0, 1, 500, 1999])
def test_a_hidden_case_passing_slowly_shows_as_one_passing_fast(ms):
    fast = student_view(graded(MIXED, [ok(5), ok(6), ok(1), ok(1)]), False)
    slow = student_view(graded(MIXED, [ok(5), ok(6), ok(ms), ok(2 * ms)]), False)
    assert slow == fast
    assert (fast.status, fast.duration_ms, fast.feedback) == ("passed", 11, "All 4 cases passed.")


VIEWS = [
    # (cases, results, status, duration_ms, feedback): what the student reads
    (MIXED, [ok(), ok(), ok(), ok()], "passed", 14, "All 4 cases passed."),
    (
        MIXED,
        [ok(), ok(), ended(RunOutcome.TIMEOUT, 2000), ok()],
        "failed",
        14,
        "3 of 4 cases passed (86% of the points). Hidden case 'h1' failed.",
    ),
    (
        MIXED,
        [ended(RunOutcome.TIMEOUT, 2000), ok(), crashed(), ok()],
        "timeout",  # a visible case's own status, as before
        2007,
        "2 of 4 cases passed (71% of the points). Case 'v1' ran out of time. "
        "Your program ran out of time (2 s). Look for an endless loop. Hidden case 'h1' failed.",
    ),
    (
        HIDDEN_FIRST,
        [ended(RunOutcome.MEMORY_LIMIT), crashed(), ok(), ok()],
        "failed",  # the first failing case is hidden: failed, not memory_limit
        14,
        "2 of 4 cases passed (71% of the points). Hidden case 'h1' failed. "
        "Case 'v1' stopped with an error. Last error line: ValueError: 41",
    ),
    (
        HIDDEN_FIRST,
        [ok(900), wrong(), crashed(1800), ok()],
        "failed",
        14,
        "2 of 4 cases passed (43% of the points). Case 'v1' failed. "
        "Line 1 differs: expected `ok`, got `no`. Hidden case 'h2' failed.",
    ),
]


@pytest.mark.parametrize(("cases", "results", "status", "duration_ms", "feedback"), VIEWS)
def test_the_status_time_and_feedback_are_the_shown_cases(
    cases, results, status, duration_ms, feedback
):
    view = student_view(graded(cases, results), False)
    assert (view.status, view.duration_ms, view.feedback) == (status, duration_ms, feedback)
    assert str(view.message) == feedback  # the same, to be translated
    for case in view.cases:
        if case["hidden"]:
            assert set(case) == {"name", "status", "weight", "hidden", "feedback",
                                 "feedback_message"}  # fmt: skip
            assert case["status"] in ("passed", "failed")


@pytest.mark.parametrize(("cases", "results", "status", "duration_ms", "feedback"), VIEWS)
def test_once_revealed_the_verdict_is_shown_as_stored(
    cases, results, status, duration_ms, feedback
):
    kept = graded(cases, results)
    view = student_view(kept, True)
    assert (view.status, view.duration_ms, view.feedback) == (
        kept.run_status, kept.duration_ms, str(from_json(kept.message))
    )  # fmt: skip
    assert list(view.cases) == kept.cases


def test_every_case_hidden_shows_no_time_and_no_output():
    view = student_view(graded((H1, H2), [ended(RunOutcome.TIMEOUT, 2000), ok(300)]), False)
    assert (view.status, view.duration_ms, view.stdout, view.output_case) == (
        "failed", None, "", None
    )  # fmt: skip
    assert view.feedback == "1 of 2 cases passed (75% of the points). Hidden case 'h1' failed."


@pytest.mark.parametrize(
    "results",
    [[ok(), ok()], [wrong(), ended(RunOutcome.TIMEOUT)], [crashed(), ended(RunOutcome.REJECTED)]],
)
def test_a_verdict_without_hidden_cases_is_shown_as_stored(results):
    verdict = judged((V1, V2), results)
    kept = stored(verdict)
    assert student_view(kept, False) == stored_view(kept)
    assert stored_view(kept).cases == tuple(kept.cases)


@pytest.mark.parametrize("cases", [MIXED, HIDDEN_FIRST, (H1, H2), (V1,)], ids=str)
@pytest.mark.parametrize("results", [row[1] for row in VIEWS])
def test_what_is_read_back_is_what_the_verdict_derives(cases, results):
    verdict = judged(cases, results[: len(cases)])
    view = stored_view(stored(verdict))
    diff = verdict.diff
    assert (view.status, view.score, view.stdout, view.stderr, view.exit_code) == (
        verdict.status.value, verdict.score, verdict.stdout, verdict.stderr, verdict.exit_code
    )  # fmt: skip
    assert (view.duration_ms, view.feedback, view.message) == (
        verdict.duration_ms, verdict.feedback, verdict.message
    )  # fmt: skip
    assert view.diff == (
        None if diff is None else {"line": diff.line, "expected": diff.expected, "got": diff.got}
    )


def test_a_record_as_graded_gives_its_values_and_is_no_case():
    kept = graded(MIXED, [wrong(), ok(), ok(), ok()])
    old = {"score": 0.25, "stdout": "from h1\n", "stderr": "", "exit_code": 3, "diff": None}
    view = student_view(replace(kept, cases=[*kept.cases, {AS_GRADED: True, **old}]), False)
    assert {key: getattr(view, key) for key in old} == old
    assert [case["name"] for case in view.cases] == ["v1", "v2", "h1", "h2"]
    assert case_records([{AS_GRADED: True, **old}]) == []


SHOWN_CASES = [
    # (status stored, shown): a hidden case's status, as its student sees it
    ("passed", "passed"),
    ("failed", "failed"),
    ("error", "failed"),
    ("timeout", "failed"),
    ("memory_limit", "failed"),
    ("output_limit", "failed"),
    ("rejected", "failed"),
    ("anything else", "failed"),
]


@pytest.mark.parametrize(("status", "shown"), SHOWN_CASES)
def test_a_hidden_case_shows_its_name_weight_and_pass_or_fail(status, shown):
    record = {
        "name": "h", "status": status, "weight": 2.0, "hidden": True,
        "feedback": "Hidden case 'h' ran out of time.", "detail": "It ran longer.",
        "input": "41", "expected": "42", "got": "43", "stdout": "43", "stderr": "44",
        "exit_code": 0, "duration_ms": 1900, "diff": None,
    }  # fmt: skip
    line = "Hidden case 'h' passed." if shown == "passed" else "Hidden case 'h' failed."
    assert shown_case(record, revealed=False) == {
        "name": "h",
        "status": shown,
        "weight": 2.0,
        "hidden": True,
        "feedback": line,
        "feedback_message": {"t": line.replace("'h'", "'{name}'"), "a": {"name": "h"}},
    }
    assert shown_case(record, revealed=True) == record
    visible = {**record, "hidden": False}
    assert shown_case(visible, revealed=False) == visible


def test_a_case_kept_before_its_message_was_is_worded_from_its_english():
    kept = graded(MIXED, [wrong(), ok(), wrong(), ok()])
    for case in kept.cases:
        case.pop("feedback_message")
    view = student_view(kept, False)
    assert view.feedback == (
        "2 of 4 cases passed (71% of the points). Case 'v1' failed. "
        "Line 1 differs: expected `ok`, got `no`. Hidden case 'h1' failed."
    )


def test_a_stored_verdict_without_cases_is_shown_as_stored():
    kept = replace(graded(MIXED, [ok(), ok(), ok(), ok()]), cases=None, duration_ms=99)
    view = student_view(kept, False)
    assert isinstance(view, StudentView) and view.cases == () and view.duration_ms == 99


# ---- a score's comment: why it is what it is, as the LMS shows it (issue 29, point 5) ------

FINITE = _run("scores around 1000 stay finite", hidden=True)
SIX = (V1, V2, _run("v3"), _run("v4"), FINITE, _run("h5", hidden=True))


def said(best, exercise=True, questions=(), late=0.0):
    text = score_comment(best, exercise, list(questions), late)
    return None if text is None else str(text)


def test_a_comment_says_the_cases_the_failing_hidden_one_by_name_and_the_questions():
    best = graded(SIX, [ok(), ok(), ok(), wrong(), ended(RunOutcome.TIMEOUT), ok()])
    assert said(best, questions=[(1.0, 1.0), (2.0, 2.0), (0.5, 0.5)]) == (
        "4 of 6 cases passed. Case 'v4' failed. "
        "Hidden case 'scores around 1000 stay finite' failed. 3 of 3 questions right."
    )


@pytest.mark.parametrize("failing", FAILING)
def test_a_hidden_case_is_named_and_nothing_more_however_it_failed(failing):
    best = graded(MIXED, [ok(), ok(), failing, ok()])
    record = [case for case in best.cases if case["name"] == "h1"][0]
    text = said(best)
    assert text == "3 of 4 cases passed. Hidden case 'h1' failed."
    # what the case held and what the program did on it stay out, however the case failed
    held = [record.get(key) for key in ("detail", "input", "expected", "got", "stdout", "stderr")]
    assert [value for value in held if value and str(value).strip() in text] == []
    assert str(record["duration_ms"]) not in text


def test_plurals_follow_the_counts():
    one = graded((V1,), [wrong()])
    assert said(one, questions=[(0.0, 1.0)]) == (
        "0 of 1 case passed. Case 'v1' failed. 0 of 1 question right."
    )
    answers = [(0.5, 1.0), (None, 1.0), (0.2, 1.0), (None, 2.0), (1.0, 1.0)]
    assert said(graded((V1, V2), [ok(), ok()]), questions=answers) == (
        "2 of 2 cases passed. 1 of 5 questions right. 2 questions partly right. "
        "2 questions not answered."
    )
    assert said(None, exercise=False, questions=[(0.3, 1.0), (None, 1.0)]) == (
        "0 of 2 questions right. 1 question partly right. 1 question not answered."
    )


def test_past_three_failing_cases_the_rest_are_counted():
    cases = tuple(_run(f"c{i}") for i in range(6))
    best = graded(cases, [wrong()] * 5 + [ok()])
    assert said(best) == (
        "1 of 6 cases passed. Case 'c0' failed. Case 'c1' failed. Case 'c2' failed. "
        "2 more cases failed."
    )
    assert said(graded(cases, [wrong()] * 4 + [ok()] * 2)).endswith("1 more case failed.")


def test_no_exercise_no_questions_no_submission_and_a_grader_failure():
    assert said(None, exercise=False, questions=[(1.0, 1.0)]) == "1 of 1 question right."
    assert said(graded((V1,), [ok()])) == "1 of 1 case passed."  # a lesson without questions
    assert said(None, questions=[(1.0, 1.0)]) == "No code handed in yet. 1 of 1 question right."
    failed = Stored(run_status="error", duration_ms=None, message=None, cases=None)
    assert said(failed) == "The code could not be graded."
    assert said(None, exercise=False) is None  # nothing to do, nothing to say


def test_late_work_says_what_it_lost():
    best = graded((V1,), [ok()])
    assert said(best, late=0.25) == "1 of 1 case passed. Late work lost 25% of its points."


def test_a_comment_is_a_text_that_reads_back():
    best = graded(MIXED, [ok(), wrong(), wrong(), ok()])
    text = score_comment(best, True, [(1.0, 1.0)], 0.0)
    assert text is not None and from_json(to_json(text)) == text
