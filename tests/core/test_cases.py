"""core/cases.py: the loader of exercise.yaml's `cases`, a case's run request, and judge_case.

Every loader error names exercise.yaml, the case (its index, and its name once it has one) and
the field at fault; a case's run never carries its expected output or value.
"""

import json
from pathlib import Path

import pytest

from core.cases import HARNESS, HARNESS_CONFIG, Case, judge_case, load_cases
from core.compare import CompareMode, Tolerance
from core.errors import LessonError
from core.lessons import Exercise, load_lesson
from core.runs import Limits, RunOutcome, RunResult, RunStatus

HEAD = (
    "title: Cases\n"
    "prompt: Write softmax.\n"
    "entrypoint: model.py\n"
    "compare: numeric\n"
    "tolerance: {rel: 1.0e-6, abs: 1.0e-3}\n"
    "points: 6\n"
)
RUN = '  - name: run\n    output: "x\\n"\n'


def _exercise(lesson_dir: Path, cases: str) -> Exercise:
    (lesson_dir / "exercise.yaml").write_text(HEAD + cases)
    exercise = load_lesson(lesson_dir).exercise
    assert exercise is not None
    return exercise


def _case(*lines: str) -> str:
    """One case of the `cases:` list, `lines` its fields ("name: a", ...)."""
    return "  - " + "\n    ".join(lines) + "\n"


def _cases(*cases: str) -> str:
    return "cases:\n" + "".join(cases)


BROKEN = [
    # (the `cases:` section, the field named, a piece of the problem)
    ("cases: {a: 1}\n", "cases", "non-empty list"),
    ("cases: []\n", "cases", "non-empty list"),
    ("cases:\n", "cases", "non-empty list"),
    (_cases(RUN, "  - 5\n"), "cases[1]", "must be a mapping"),
    (_cases(_case('output: "x"')), "cases[0].name", "is required"),
    (_cases(_case("name: 5", 'output: "x"')), "cases[0].name", "non-empty text"),
    (_cases(_case('name: "  "', 'output: "x"')), "cases[0].name", "non-empty text"),
    (
        _cases(_case("name: " + "n" * 81, 'output: "x"')),
        "cases[0] ('" + "n" * 80 + "').name",
        "longer than 80",
    ),
    (
        _cases(RUN, _case("name: a", 'output: "y"'), _case('name: " a "', 'output: "z"')),
        "cases[2] ('a').name",
        "'a' is used twice",
    ),
    (
        _cases(_case("name: a", 'output: "x"', "hiden: true")),
        "cases[0] ('a').hiden",
        "did you mean 'hidden'?",
    ),
    (
        _cases(_case("name: a", "expr: f(1)", "expectd: 1")),
        "cases[0] ('a').expectd",
        "did you mean 'expected'?",
    ),
    (_cases(_case("name: a", 'outptu: "x"')), "cases[0] ('a').outptu", "did you mean 'output'?"),
    (
        _cases(_case("name: a", "expr: f(1)", "expected: 1", 'stdin: "1"')),
        "cases[0] ('a').stdin",
        "not both",
    ),
    (_cases(_case("name: a", "expected: 1", 'output: "1"')), "cases[0] ('a').output", "not both"),
    (_cases(_case("name: a", "expr: f(1)")), "cases[0] ('a').expected", "is required"),
    (_cases(_case("name: a", "expected: 1")), "cases[0] ('a').expr", "is required"),
    (
        _cases(_case("name: a", "expr: x = 1", "expected: 1")),
        "cases[0] ('a').expr",
        "not a Python expression",
    ),
    (_cases(_case("name: a", "expr: 5", "expected: 5")), "cases[0] ('a').expr", "non-empty text"),
    (
        _cases(_case("name: a", 'expr: "f(\\0)"', "expected: 1")),
        "cases[0] ('a').expr",
        "not a Python expression",
    ),
    (
        _cases(_case("name: a", "expr: " + "1+" * 20000 + "1", "expected: 1")),
        "cases[0] ('a').expr",
        "can compile",
    ),
    (
        _cases(_case("name: a", "expr: f()", "expected: 2001-01-01")),
        "cases[0] ('a').expected",
        "holds a date",
    ),
    (
        _cases(_case("name: a", "expr: f()", "expected: [1, 2001-12-14t21:59:43.10-05:00]")),
        "cases[0] ('a').expected",
        "holds a datetime",
    ),
    (
        _cases(_case("name: a", "expr: f()", "expected: !!set {x, y}")),
        "cases[0] ('a').expected",
        "holds a set",
    ),
    (
        _cases(_case("name: a", "expr: f()", "expected: {1: 2}")),
        "cases[0] ('a').expected",
        "keys are not all text",
    ),
    (
        _cases(_case("name: a", "expr: f()", "expected: {x: {2: 3}}")),
        "cases[0] ('a').expected",
        "keys are not all text",
    ),
    (
        _cases(_case("name: a", "expr: f()", "expected: !!binary aGVsbG8=")),
        "cases[0] ('a').expected",
        "holds a bytes",
    ),
    (
        _cases(_case("name: a", "expr: f()", "expected: " + "[" * 70 + "]" * 70)),
        "cases[0] ('a').expected",
        "nested deeper than 64",
    ),
    (
        _cases(_case("name: a", "expr: f()", "expected: 0x" + "f" * 2000)),
        "cases[0] ('a').expected",
        "too large",
    ),
    (_cases(_case("name: a", 'output: "x"', "weight: 0")), "cases[0] ('a').weight", "(0, 1000]"),
    (_cases(_case("name: a", 'output: "x"', "weight: -1")), "cases[0] ('a').weight", "(0, 1000]"),
    (_cases(_case("name: a", 'output: "x"', "weight: true")), "cases[0] ('a').weight", "number"),
    (_cases(_case("name: a", 'output: "x"', 'weight: "2"')), "cases[0] ('a').weight", "number"),
    (_cases(_case("name: a", 'output: "x"', "weight: .nan")), "cases[0] ('a').weight", "number"),
    (_cases(_case("name: a", 'output: "x"', "weight: 1001")), "cases[0] ('a').weight", "number"),
    (
        _cases(_case("name: a", 'output: "x"', 'hidden: "yes"')),
        "cases[0] ('a').hidden",
        "true or false",
    ),
    (
        _cases(_case("name: a", 'output: "x"', "hidden: 1")),
        "cases[0] ('a').hidden",
        "true or false",
    ),
    (
        _cases(_case("name: a", 'output: "x"', "hidden: null")),
        "cases[0] ('a').hidden",
        "true or false",
    ),
    (
        _cases(_case("name: a", 'output: "x"', "compare: exact", "tolerance: {abs: 1}")),
        "cases[0] ('a').tolerance",
        "only with compare: numeric",
    ),
    (
        _cases(_case("name: a", 'output: "x"', "tolerance: {rel: -1}")),
        "cases[0] ('a').tolerance.rel",
        "number >= 0",
    ),
    (
        _cases(_case("name: a", 'output: "x"', "tolerance: {abs: .nan}")),
        "cases[0] ('a').tolerance.abs",
        "number >= 0",
    ),
    (
        _cases(_case("name: a", 'output: "x"', "tolerance: {abss: 1}")),
        "cases[0] ('a').tolerance.abss",
        "did you mean 'abs'?",
    ),
    (
        _cases(_case("name: a", 'output: "x"', "tolerance: 0.1")),
        "cases[0] ('a').tolerance",
        "mapping",
    ),
    (
        _cases(_case("name: a", 'output: "x"', "compare: fuzzy")),
        "cases[0] ('a').compare",
        "'exact' or 'numeric'",
    ),
    (
        _cases(_case("name: a", 'output: "x"', "expected_output: expected_output.txt")),
        "cases[0] ('a').output",
        "exactly one of",
    ),
    (_cases(_case("name: a", 'stdin: "1"')), "cases[0] ('a').output", "exactly one of"),
    (_cases(_case("name: a", "output: 5")), "cases[0] ('a').output", "must be text"),
    (
        _cases(_case("name: a", "expected_output: ../x.txt")),
        "cases[0] ('a').expected_output",
        "file of the lesson directory",
    ),
    (
        _cases(_case("name: a", "expected_output: /etc/passwd")),
        "cases[0] ('a').expected_output",
        "file of the lesson directory",
    ),
    (
        _cases(_case("name: a", "expected_output: starter/model.py")),
        "cases[0] ('a').expected_output",
        "starter/ or solution/",
    ),
    (
        _cases(_case("name: a", "expected_output: ./starter/model.py")),
        "cases[0] ('a').expected_output",
        "starter/ or solution/",
    ),
    (
        _cases(_case("name: a", "expected_output: questions.yaml/../starter/model.py")),
        "cases[0] ('a').expected_output",
        "starter/ or solution/",
    ),
    (
        _cases(_case("name: a", "expected_output: solution/model.py")),
        "cases[0] ('a').expected_output",
        "starter/ or solution/",
    ),
    (
        _cases(_case("name: a", "expected_output: nope.txt")),
        "cases[0] ('a').expected_output",
        "'nope.txt' is not a file",
    ),
    (
        _cases(_case("name: a", "expected_output: 5")),
        "cases[0] ('a').expected_output",
        "non-empty text",
    ),
    (_cases(_case("name: a", 'argv: "a b"')), "cases[0] ('a').argv", "list of text"),
    (
        _cases(_case("name: a", "argv: [0.10, 2]", 'output: "x"')),
        "cases[0] ('a').argv",
        "list of text",
    ),
    (
        _cases(_case("name: a", "argv: [yes]", 'output: "x"')),
        "cases[0] ('a').argv",
        "list of text",
    ),
    (
        _cases(_case("name: a", "argv: [[a]]", 'output: "x"')),
        "cases[0] ('a').argv",
        "list of text",
    ),
    (_cases(_case("name: a", 'argv: ["a\\0"]', 'output: "x"')), "cases[0] ('a').argv", "NUL"),
    (_cases(_case("name: a", "stdin: 5", 'output: "x"')), "cases[0] ('a').stdin", "must be text"),
    (
        _cases(_case("name: a", "stdin: [1]", 'output: "x"')),
        "cases[0] ('a').stdin",
        "must be text",
    ),
]


@pytest.mark.parametrize(("cases", "field", "problem"), BROKEN, ids=[b[1] for b in BROKEN])
def test_a_broken_case_names_the_file_the_case_and_the_field(seed_copy, cases, field, problem):
    with pytest.raises(LessonError) as info:
        _exercise(seed_copy, cases)
    assert info.value.path == str(seed_copy / "exercise.yaml")
    assert info.value.field == field
    assert problem in info.value.problem
    assert str(info.value).startswith(f"{seed_copy / 'exercise.yaml'}: {field}: ")


def test_expected_output_may_not_be_a_symbolic_link(seed_copy):
    (seed_copy / "outside.txt").symlink_to("/etc/passwd")
    (seed_copy / "inside.txt").symlink_to(seed_copy / "expected_output.txt")
    (seed_copy / "linked").symlink_to(seed_copy / "starter")  # a linked directory on the way
    (seed_copy / "real").mkdir()
    (seed_copy / "real" / "out.txt").write_text("x\n")
    (seed_copy / "alias").symlink_to(seed_copy / "real")
    for name, problem in [
        ("outside.txt", "file of the lesson directory"),
        ("inside.txt", "symbolic link"),
        ("linked/model.py", "starter/ or solution/"),
        ("alias/out.txt", "symbolic link"),
    ]:
        with pytest.raises(LessonError) as info:
            _exercise(seed_copy, _cases(_case("name: a", f"expected_output: {name}")))
        assert info.value.field == "cases[0] ('a').expected_output", name
        assert problem in info.value.problem, name
    exercise = _exercise(seed_copy, _cases(_case("name: a", "expected_output: real/out.txt")))
    assert exercise.cases[0].output == "x\n"


def test_an_unreadable_expected_output_names_the_case(seed_copy):
    (seed_copy / "big.txt").write_text("x" * (65 * 1024))
    (seed_copy / "latin.txt").write_bytes(b"caf\xe9\n")
    (seed_copy / "dir").mkdir()
    for name, problem in [
        ("big.txt", "'big.txt' is larger than 64 KiB"),
        ("latin.txt", "'latin.txt' is not UTF-8"),
        ("dir", "'dir' is not a file"),
    ]:
        with pytest.raises(LessonError) as info:
            _exercise(seed_copy, _cases(RUN, _case("name: b", f"expected_output: {name}")))
        assert info.value.path == str(seed_copy / "exercise.yaml")
        assert info.value.field == "cases[1] ('b').expected_output"
        assert problem in info.value.problem


def test_limits_only_load_cases_can_reach(tmp_path):
    path = tmp_path / "exercise.yaml"
    args = (CompareMode.EXACT, Tolerance())
    big = {"name": "big", "stdin": "1" * (64 * 1024 + 1), "output": "x"}
    with pytest.raises(LessonError) as info:
        load_cases(path, [big], *args)
    assert info.value.field == "cases[0] ('big').stdin" and "larger than 64 KiB" in str(info.value)
    assert load_cases(path, [{**big, "stdin": "1" * 64 * 1024}], *args)[0].stdin == "1" * 65536
    many = [{"name": f"c{i}", "output": "x"} for i in range(51)]
    with pytest.raises(LessonError, match="more than 50 cases") as info:
        load_cases(path, many, *args)
    assert info.value.field == "cases"
    assert len(load_cases(path, many[:50], *args)) == 50


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[" * 5000 + "]" * 5000, "nested too deeply"),
        ("a: 2001-02-30\n", "cannot read"),
        ("a: " + "1" * 5000 + "\n", "cannot read"),
    ],
)
def test_yaml_that_python_cannot_build_is_a_lesson_error(seed_copy, text, problem):
    (seed_copy / "exercise.yaml").write_text(text)
    with pytest.raises(LessonError, match=problem) as info:
        load_lesson(seed_copy)
    assert info.value.path == str(seed_copy / "exercise.yaml")


def test_a_valid_set_of_cases_loads_as_written(seed_copy):
    (seed_copy / "outputs").mkdir()
    (seed_copy / "outputs" / "two.txt").write_text("[0.5 0.5]\n")
    exercise = _exercise(
        seed_copy,
        _cases(
            _case("name: example", "expected_output: expected_output.txt"),
            _case(
                "name: two",
                'stdin: "2\\n1 1\\n"',
                'argv: ["-v", "0.10"]',
                "expected_output: outputs/two.txt",
                "weight: 2.5",
            ),
            _case(
                "name: zeros",
                "expr: softmax(np.zeros(4))",
                "expected: [0.25, 0.25, 0.25, 0.25]",
                "hidden: true",
                "tolerance: {abs: 0.01}",
            ),
            _case(
                "name: exactly", "expr: \"{'a': None}\"", "expected: {a: null}", "compare: exact"
            ),
            _case("name: nothing", "expr: None", "expected: null"),
        ),
    )
    assert exercise.has_cases and exercise.points == 6
    example, two, zeros, exactly, null = exercise.cases
    assert example == Case(
        "example",
        1.0,
        False,
        CompareMode.NUMERIC,
        Tolerance(1e-6, 1e-3),
        output=(seed_copy / "expected_output.txt").read_text(),
    )
    assert (two.stdin, two.argv, two.output, two.weight) == (
        "2\n1 1\n",
        ("-v", "0.10"),
        "[0.5 0.5]\n",
        2.5,
    )
    assert not two.is_value and zeros.is_value
    assert zeros.hidden and zeros.tolerance == Tolerance(1e-6, 0.01)
    assert zeros.expected == [0.25] * 4 and zeros.compare is CompareMode.NUMERIC
    assert exactly.compare is CompareMode.EXACT and exactly.expected == {"a": None}
    assert null.is_value and null.expected is None


def test_without_cases_the_exercise_has_one_implicit_case(seed_copy):
    lesson = load_lesson(seed_copy)
    assert lesson.exercise is not None and not lesson.exercise.has_cases
    expected = (seed_copy / "expected_output.txt").read_text()
    assert lesson.exercise.expected_output == expected
    assert lesson.exercise.cases == (
        Case("expected output", 1.0, False, CompareMode.EXACT, Tolerance(), output=expected),
    )


@pytest.mark.parametrize("where", ["starter", "solution"])
@pytest.mark.parametrize("name", [HARNESS, HARNESS_CONFIG])
def test_a_lesson_file_may_not_take_the_harness_name(seed_copy, where, name):
    (seed_copy / where / name).write_text("print('mine')\n")
    with pytest.raises(LessonError, match="this file name is the grader's") as info:
        load_lesson(seed_copy)
    assert info.value.path == str(seed_copy / where) and info.value.field == name


# -- a case's run request: the student's files and the case's input, never its answer ----------

SECRET_OUTPUT = "SECRET-OUTPUT-7f3a\n"
SECRET_VALUE = ["SECRET-VALUE-91c2", 4242.125]
FILES = {"model.py": b"print(1)\n", "data/w.txt": b"0.5\n"}
LIMITS = Limits(time_s=2.0)
ANSWER_CASES = [
    Case("plain", 1, False, CompareMode.EXACT, Tolerance(), stdin="3\n", output=SECRET_OUTPUT),
    Case("args", 1, True, CompareMode.EXACT, Tolerance(), argv=("-n", "2"), output=SECRET_OUTPUT),
    Case("value", 1, True, CompareMode.NUMERIC, Tolerance(), expr="f(2)", expected=SECRET_VALUE),
]


@pytest.mark.parametrize("case", ANSWER_CASES, ids=lambda case: case.name)
def test_a_run_request_never_holds_the_expected_result(case):
    request = case.request(FILES, "model.py", LIMITS)
    everything = b"".join([*request.files.values(), request.stdin, request.entrypoint.encode()])
    for secret in (SECRET_OUTPUT.strip(), SECRET_VALUE[0], "4242.125", "4242"):
        assert secret.encode() not in everything
    assert request.limits == LIMITS
    assert {k: v for k, v in request.files.items() if k in FILES} == FILES


def test_a_plain_run_case_is_the_program_itself():
    request = ANSWER_CASES[0].request(FILES, "model.py", LIMITS)
    assert dict(request.files) == FILES
    assert request.entrypoint == "model.py" and request.stdin == b"3\n"


def test_argv_and_value_cases_run_the_harness_with_their_input_only():
    args = ANSWER_CASES[1].request(FILES, "model.py", LIMITS)
    assert args.entrypoint == HARNESS and set(args.files) == {*FILES, HARNESS, HARNESS_CONFIG}
    config = json.loads(args.files[HARNESS_CONFIG])
    assert config == {"entrypoint": "model.py", "mode": "run", "argv": ["-n", "2"]}
    value = ANSWER_CASES[2].request(FILES, "model.py", LIMITS)
    config = json.loads(value.files[HARNESS_CONFIG])
    assert config == {"entrypoint": "model.py", "mode": "value", "expr": "f(2)"}
    assert value.stdin == b""


# -- judge_case: one case's run turned into its verdict ---------------------------------------

RUN_CASE = Case("r", 2, False, CompareMode.EXACT, Tolerance(), stdin="1\n", output="a\nb\n")
VALUE_CASE = Case("v", 1, False, CompareMode.NUMERIC, Tolerance(), expr="f()", expected=[1.0, 2])


def _exited(stdout: bytes = b"", stderr: bytes = b"", code: int = 0) -> RunResult:
    return RunResult(RunOutcome.EXITED, stdout, stderr, exit_code=code, duration_ms=7)


JUDGED = [
    # (case, result, status, a piece of the feedback, got)
    (RUN_CASE, _exited(b"a\nb\n"), RunStatus.PASSED, "", "a\nb\n"),
    (RUN_CASE, _exited(b"a\nc\n"), RunStatus.FAILED, "Line 2 differs", "a\nc\n"),
    (
        RUN_CASE,
        _exited(b"", b"Traceback\nZeroDivisionError: x\n", 1),
        RunStatus.ERROR,
        "Last error line: ZeroDivisionError: x",
        "",
    ),
    (
        RUN_CASE,
        RunResult(RunOutcome.EXITED, exit_code=-9, signal=9),
        RunStatus.ERROR,
        "killed by SIGKILL",
        "",
    ),
    (RUN_CASE, RunResult(RunOutcome.TIMEOUT), RunStatus.TIMEOUT, "ran out of time (2 s)", ""),
    (RUN_CASE, RunResult(RunOutcome.MEMORY_LIMIT), RunStatus.MEMORY_LIMIT, "(256 MB)", ""),
    (RUN_CASE, RunResult(RunOutcome.OUTPUT_LIMIT), RunStatus.OUTPUT_LIMIT, "(64 KB)", ""),
    (
        RUN_CASE,
        RunResult(RunOutcome.REJECTED, reason="Too big."),
        RunStatus.REJECTED,
        "was not run. Too big.",
        "",
    ),
    (VALUE_CASE, _exited(b"[1.0, 2.0000001]"), RunStatus.PASSED, "", "[1.0, 2.0000001]"),
    (
        VALUE_CASE,
        _exited(b'{"$ndarray": {"dtype": "float64", "shape": [2], "data": [1.0, 2.0]}}'),
        RunStatus.PASSED,
        "",
        "array([1.0, 2.0], dtype=float64)",
    ),
    (VALUE_CASE, _exited(b"[1.0, 3]"), RunStatus.FAILED, "At [1]: expected 2, got 3", "[1.0, 3]"),
    (
        VALUE_CASE,
        _exited(b'{"$unsupported": "a function (f)"}'),
        RunStatus.FAILED,
        "gave a function (f), which is not a value",
        "a function (f)",
    ),
    (VALUE_CASE, _exited(b""), RunStatus.ERROR, "No value came back", ""),
    (VALUE_CASE, _exited(b"[1.0,"), RunStatus.ERROR, "could not be read", ""),
    (VALUE_CASE, _exited(b'{"$pickle": "gASV"}'), RunStatus.ERROR, "unknown tag '$pickle'", ""),
    (VALUE_CASE, _exited(b"1" * 400), RunStatus.FAILED, "expected a list like [1.0, 2]", ""),
]


@pytest.mark.parametrize(("case", "result", "status", "feedback", "got"), JUDGED)
def test_judge_case(case, result, status, feedback, got):
    verdict = judge_case(case, result, LIMITS)
    assert verdict.status is status
    assert feedback in verdict.feedback
    if got:
        assert verdict.got == got
    assert verdict.passed == (status is RunStatus.PASSED)
    assert (verdict.name, verdict.weight, verdict.hidden) == (case.name, case.weight, case.hidden)
    assert verdict.input == case.describe_input() and verdict.expected == case.describe_expected()
    assert (verdict.diff is not None) == (status is RunStatus.FAILED and not case.is_value)


def test_a_hidden_case_summary_and_json_say_only_its_name_and_verdict():
    hidden = Case(
        "secret", 3, True, CompareMode.EXACT, Tolerance(), stdin="IN-77\n", output="OUT\n"
    )
    verdict = judge_case(hidden, _exited(b"GOT-55\n", b"ERR-33\n"), LIMITS)
    assert verdict.summary() == "Hidden case 'secret' failed."
    assert verdict.as_json() == {
        "name": "secret",
        "status": "failed",
        "weight": 3,
        "hidden": True,
        "feedback": "Hidden case 'secret' failed.",
    }
    record = verdict.record()  # for the store: everything, shown per the reveal policy
    assert (record["input"], record["expected"], record["got"], record["stderr"]) == (
        "stdin:\nIN-77\n",
        "OUT\n",
        "GOT-55\n",
        "ERR-33\n",
    )
