"""core/verdicts.judge: the cases' results (plain RunResults, no sandbox) made one verdict.

Without `cases` the verdict reads as it did before cases existed (77cbcc0's judge); with them,
the score is the passed weight over all the weight, the status the first non-passed case's in
file order, and nothing a hidden case holds reaches the student's feedback, diff or output.
"""

from dataclasses import replace

import pytest

from core.cases import Case
from core.compare import CompareMode, LineDiff, Tolerance
from core.lessons import Exercise
from core.runs import Limits, RunOutcome, RunResult, RunStatus
from core.verdicts import grade_source, judge

EXPECTED = "[0.787 0.107 0.107]\n[0.893 0.213]\nTrue\n"
LIMITS = Limits(time_s=3.0, memory_mb=128, output_kb=32)
SINGLE = Exercise(
    title="T",
    prompt="P",
    entrypoint="model.py",
    compare=CompareMode.EXACT,
    tolerance=Tolerance(),
    limits=LIMITS,
    points=5,
    starter={"model.py": "# buraya yaz\n"},
    solution={"model.py": "print(1)\n"},
    expected_output=EXPECTED,
    cases=(Case("expected output", 1.0, False, CompareMode.EXACT, Tolerance(), output=EXPECTED),),
)


def _exited(stdout: str = "", stderr: str = "", code: int = 0) -> RunResult:
    return RunResult(
        RunOutcome.EXITED, stdout.encode(), stderr.encode(), exit_code=code, duration_ms=12
    )


# The feedback of 77cbcc0's judge() for each way a run ends, word for word (checked against
# `git show 77cbcc0:core/verdicts.py` when these cases were written).
BEFORE_CASES = [
    # (result, status, score, feedback, diff)
    (
        _exited(EXPECTED),
        RunStatus.PASSED,
        1.0,
        "Your program's output matches the expected output.",
        None,
    ),
    (
        _exited("[0.787 0.107 0.107]\n[0.9 0.2]\nTrue\n"),
        RunStatus.FAILED,
        0.0,
        "Your program ran, but its output differs from the expected output. "
        "Line 2 differs: expected `[0.893 0.213]`, got `[0.9 0.2]`.",
        LineDiff(2, "[0.893 0.213]", "[0.9 0.2]", ""),
    ),
    (
        _exited("[0.787 0.107 0.107]\n"),
        RunStatus.FAILED,
        0.0,
        "Your program ran, but its output differs from the expected output. "
        "Line 2 is missing: expected `[0.893 0.213]`, but your output has only 1 line.",
        LineDiff(2, "[0.893 0.213]", None, ""),
    ),
    (
        _exited("", "Traceback (most recent call last):\nNameError: name 'np' is not defined\n", 1),
        RunStatus.ERROR,
        0.0,
        "Your program stopped with an error. Read the error output below. "
        "Last error line: NameError: name 'np' is not defined",
        None,
    ),
    (
        _exited("", "", 3),
        RunStatus.ERROR,
        0.0,
        "Your program stopped with an error. Read the error output below. It exited with status 3.",
        None,
    ),
    (
        RunResult(RunOutcome.EXITED, exit_code=-11, signal=11),
        RunStatus.ERROR,
        0.0,
        "Your program stopped with an error. Read the error output below. "
        "It was killed by SIGSEGV.",
        None,
    ),
    (
        RunResult(RunOutcome.TIMEOUT, duration_ms=3000),
        RunStatus.TIMEOUT,
        0.0,
        "Your program ran out of time (3 s). Look for an endless loop.",
        None,
    ),
    (
        RunResult(RunOutcome.MEMORY_LIMIT),
        RunStatus.MEMORY_LIMIT,
        0.0,
        "Your program used more memory than allowed (128 MB).",
        None,
    ),
    (
        RunResult(RunOutcome.OUTPUT_LIMIT, stdout=b"x" * 10),
        RunStatus.OUTPUT_LIMIT,
        0.0,
        "Your program printed more than allowed (32 KB).",
        None,
    ),
    (
        RunResult(RunOutcome.REJECTED, reason="The source holds a NUL byte."),
        RunStatus.REJECTED,
        0.0,
        "Your submission was not run. The source holds a NUL byte.",
        None,
    ),
]


@pytest.mark.parametrize(("result", "status", "score", "feedback", "diff"), BEFORE_CASES)
def test_without_cases_the_verdict_reads_as_before(result, status, score, feedback, diff):
    verdict = judge(SINGLE, [result])
    assert verdict.status is status and verdict.score == score
    assert verdict.feedback == feedback
    assert (verdict.diff and replace(verdict.diff, detail="")) == diff
    assert verdict.stdout == result.stdout.decode() and verdict.stderr == result.stderr.decode()
    assert verdict.exit_code == result.exit_code and verdict.duration_ms == result.duration_ms
    assert [case.name for case in verdict.cases] == ["expected output"]


# -- an exercise with cases ----------------------------------------------------------------------

SECRETS = ("HIDDEN-IN-41", "HIDDEN-OUT-42", "HIDDEN-GOT-43", "HIDDEN-ERR-44", "HIDDEN-VALUE-45")


def _cases_exercise(*cases: Case) -> Exercise:
    return replace(SINGLE, expected_output="", cases=cases, has_cases=True)


def _run(name: str, weight: float = 1, hidden: bool = False, **more) -> Case:
    return Case(name, weight, hidden, CompareMode.EXACT, Tolerance(), **more)


VISIBLE = _run("visible", 1, stdin="1\n", output="ok\n")
HIDDEN = _run("secret", 2, True, stdin=SECRETS[0] + "\n", output=SECRETS[1] + "\n")
HIDDEN_VALUE = _run("secret value", 3, True, expr="f()", expected=[SECRETS[4]])
VALUE = _run("value", 4, expr="f()", expected=[1, 2])

PASS_VISIBLE = _exited("ok\n")
FAIL_VISIBLE = _exited("no\n")
PASS_HIDDEN = _exited(SECRETS[1] + "\n")
FAIL_HIDDEN = _exited(SECRETS[2] + "\n", SECRETS[3] + "\n")
CRASH_HIDDEN = _exited(SECRETS[2], f"Traceback\nValueError: {SECRETS[0]}\n", 1)
PASS_HIDDEN_VALUE = _exited(f'["{SECRETS[4]}"]')
FAIL_HIDDEN_VALUE = _exited(f'["{SECRETS[2]}"]', SECRETS[3])
PASS_VALUE = _exited("[1, 2]")
FAIL_VALUE = _exited("[1, 3]")

SCORED = [
    # (cases, results, status, score)
    ((VISIBLE, HIDDEN, VALUE), (PASS_VISIBLE, PASS_HIDDEN, PASS_VALUE), RunStatus.PASSED, 1.0),
    ((VISIBLE, HIDDEN, VALUE), (FAIL_VISIBLE, PASS_HIDDEN, PASS_VALUE), RunStatus.FAILED, 6 / 7),
    ((VISIBLE, HIDDEN, VALUE), (PASS_VISIBLE, FAIL_HIDDEN, PASS_VALUE), RunStatus.FAILED, 5 / 7),
    ((VISIBLE, HIDDEN, VALUE), (PASS_VISIBLE, CRASH_HIDDEN, FAIL_VALUE), RunStatus.ERROR, 1 / 7),
    ((VISIBLE, HIDDEN, VALUE), (FAIL_VISIBLE, CRASH_HIDDEN, FAIL_VALUE), RunStatus.FAILED, 0.0),
    (
        (VISIBLE, HIDDEN, VALUE),
        (RunResult(RunOutcome.TIMEOUT), FAIL_HIDDEN, RunResult(RunOutcome.MEMORY_LIMIT)),
        RunStatus.TIMEOUT,
        0.0,
    ),
    (
        (HIDDEN_VALUE, VISIBLE),
        (_exited(""), RunResult(RunOutcome.OUTPUT_LIMIT)),
        RunStatus.ERROR,  # no value came back
        0.0,
    ),
    ((HIDDEN_VALUE, VALUE), (PASS_HIDDEN_VALUE, FAIL_VALUE), RunStatus.FAILED, 3 / 7),
    ((HIDDEN_VALUE, VALUE), (FAIL_HIDDEN_VALUE, PASS_VALUE), RunStatus.FAILED, 4 / 7),
    ((VALUE,), (PASS_VALUE,), RunStatus.PASSED, 1.0),
]


@pytest.mark.parametrize(("cases", "results", "status", "score"), SCORED)
def test_score_is_the_passed_weight_and_status_the_first_non_passed_case(
    cases, results, status, score
):
    verdict = judge(_cases_exercise(*cases), results)
    assert verdict.status is status
    assert verdict.score == pytest.approx(score)
    assert [case.name for case in verdict.cases] == [case.name for case in cases]
    assert verdict.duration_ms == sum(result.duration_ms for result in results)
    passed = sum(case.passed for case in verdict.cases)
    if passed == len(cases):
        assert verdict.feedback == f"All {len(cases)} cases passed."
    else:
        assert verdict.feedback.startswith(
            f"{passed} of {len(cases)} cases passed ({score:.0%} of the points)."
        )
    for case in verdict.cases:  # every case that did not pass is named, in file order
        assert (case.summary() in verdict.feedback) is not case.passed
    for secret in SECRETS:
        assert secret not in verdict.feedback
        assert secret not in str(verdict.as_json("t/x"))
        assert verdict.diff is None or secret not in str(verdict.diff)


def test_the_feedback_names_visible_failures_with_their_detail():
    cases = (VISIBLE, HIDDEN, VALUE)
    verdict = judge(_cases_exercise(*cases), [FAIL_VISIBLE, FAIL_HIDDEN, FAIL_VALUE])
    assert verdict.feedback == (
        "0 of 3 cases passed (0% of the points). "
        "Case 'visible' failed. Line 1 differs: expected `ok`, got `no`. "
        "Hidden case 'secret' failed. "
        "Case 'value' failed. At [1]: expected 2, got 3."
    )
    assert verdict.diff is not None and (verdict.diff.expected, verdict.diff.got) == ("ok", "no")


def test_the_diff_comes_only_from_a_visible_first_failure():
    hidden_first = judge(_cases_exercise(HIDDEN, VISIBLE), [FAIL_HIDDEN, FAIL_VISIBLE])
    assert hidden_first.cases[0].diff is not None  # kept for the teacher, in the case's record
    assert hidden_first.diff is None
    visible_first = judge(_cases_exercise(VISIBLE, HIDDEN), [FAIL_VISIBLE, FAIL_HIDDEN])
    assert visible_first.diff == visible_first.cases[0].diff is not None


def test_a_hidden_first_case_lends_the_verdict_no_output():
    """The verdict's stdout and stderr are shown to the student beside the feedback: a hidden
    case's are not theirs to see (its output reflects its hidden input)."""
    verdict = judge(_cases_exercise(HIDDEN, VISIBLE), [FAIL_HIDDEN, FAIL_VISIBLE])
    assert (verdict.stdout, verdict.stderr, verdict.exit_code) == ("no\n", "", 0)
    all_hidden = judge(_cases_exercise(HIDDEN, HIDDEN_VALUE), [CRASH_HIDDEN, FAIL_HIDDEN_VALUE])
    assert (all_hidden.stdout, all_hidden.stderr, all_hidden.exit_code) == ("", "", None)
    for secret in SECRETS:
        assert secret not in str(verdict.as_json("t/x")) + str(all_hidden.as_json("t/x"))


class _NoSandbox:
    """A rejected source must never reach a sandbox."""

    parallel_runs = 4

    def run(self, request):
        raise AssertionError(f"ran {request.entrypoint}")


@pytest.mark.parametrize(
    ("source", "reason"),
    [(b"print(1)\0\n", "NUL"), (b"#" * (64 * 1024 + 1), "larger")],
)
def test_a_rejected_source_rejects_every_case(source, reason):
    exercise = _cases_exercise(VISIBLE, HIDDEN, VALUE)
    verdict = grade_source(exercise, source, _NoSandbox())
    assert verdict.status is RunStatus.REJECTED and verdict.score == 0.0
    assert [case.status for case in verdict.cases] == [RunStatus.REJECTED] * 3
    assert reason in verdict.feedback
    assert "Hidden case 'secret' was not run." in verdict.feedback
    single = grade_source(SINGLE, source, _NoSandbox())
    assert single.status is RunStatus.REJECTED
    assert single.feedback.startswith("Your submission was not run. ")
