"""An exercise's cases (LESSONS.md, "Cases"): what each run gets, and how its result is judged.

A run case runs the entrypoint with its stdin and argv and compares stdout; a value case
imports the entrypoint and compares the value of an expression. What goes into the sandbox is
the student's files and the case's input; the expected output or value stays here, on the host.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core import lesson_fields as fields
from core import values
from core.compare import CompareMode, LineDiff, Tolerance, compare
from core.errors import LessonError
from core.figures import Figure, drop_note
from core.messages import N_, Message, Text, join, say, to_json, verbatim
from core.runs import Limits, RunOutcome, RunRequest, RunResult, RunStatus, student_text

HARNESS = "__codeblanks_case__.py"
HARNESS_CONFIG = "__codeblanks_case__.json"
HARNESS_SOURCE = (Path(__file__).parent / "case_harness.py").read_bytes()
_RUN_KEYS = {"stdin", "argv", "expected_output", "output"}
_VALUE_KEYS = {"expr", "expected"}
_COMMON_KEYS = {"name", "weight", "hidden", "compare", "tolerance"}
_MAX_CASES = 50
_MAX_NAME = 80
_MAX_INPUT = 64 * 1024


@dataclass(frozen=True)
class Case:
    """One check of an exercise: a run (stdin/argv -> stdout) or a value (expr -> value)."""

    name: str
    weight: float
    hidden: bool
    compare: CompareMode
    tolerance: Tolerance
    stdin: str = ""
    argv: tuple[str, ...] = ()
    output: str = ""  # a run case's expected stdout
    expr: str | None = None  # set for a value case
    expected: Any = None  # a value case's expected value (plain data)

    @property
    def is_value(self) -> bool:
        """Return whether this case checks an expression's value (else a run's stdout)."""
        return self.expr is not None

    def describe_input(self) -> str:
        """Say what the program is given, for a student who may see this case."""
        if self.expr is not None:
            return self.expr
        parts = []
        if self.argv:
            parts.append("arguments: " + " ".join(json.dumps(arg) for arg in self.argv))
        if self.stdin:
            parts.append("stdin:\n" + self.stdin)
        return "\n".join(parts) or "(no input)"

    def describe_expected(self) -> str:
        """Render the expected output or value, for a student who may see this case."""
        return values.show(self.expected) if self.expr is not None else self.output

    def request(self, files: Mapping[str, bytes], entrypoint: str, limits: Limits) -> RunRequest:
        """Return the run of this case: the student's files and this case's input, no answer.

        A hidden case's figures stay in the sandbox: they would show what its input was.
        """
        stdin, figures = self.stdin.encode(), not self.hidden
        if self.expr is None and not self.argv:
            return RunRequest(files, entrypoint, limits, stdin=stdin, figures=figures)
        config: dict[str, Any] = {"entrypoint": entrypoint}
        if self.expr is not None:
            config.update(mode="value", expr=self.expr)
        else:
            config.update(mode="run", argv=list(self.argv))
        with_harness = {
            **files,
            HARNESS: HARNESS_SOURCE,
            HARNESS_CONFIG: json.dumps(config).encode(),
        }
        return RunRequest(with_harness, HARNESS, limits, stdin=stdin, figures=figures)


@dataclass(frozen=True)
class CaseVerdict:
    """How one case went, with everything a teacher may see (core.student_views: its student's)."""

    name: str
    status: RunStatus
    weight: float
    hidden: bool
    feedback: str  # what went wrong (or right), in full
    input: str
    expected: str
    got: str  # the output, or the value as shown
    stdout: str
    stderr: str
    exit_code: int | None
    duration_ms: int
    diff: LineDiff | None = None
    message: Text | None = None  # `feedback`, to be translated (None: English only)
    figures: tuple[Figure, ...] = ()  # what it drew, re-encoded; kept apart from its record

    @property
    def passed(self) -> bool:
        """Return whether the case passed."""
        return self.status is RunStatus.PASSED

    def summary(self) -> str:
        """Return the case's line, as stored and as the CLI prints it: a hidden one, its status.

        Its student reads core.student_views's line instead: a hidden case passed or failed.
        """
        head = str(case_line(self.status, self.name, self.hidden))
        return head if self.hidden else f"{head} {self.feedback}".rstrip()

    def summary_message(self) -> Text | None:
        """Return summary() to be translated; None when the feedback has no message."""
        head = case_line(self.status, self.name, self.hidden)
        if self.hidden or not self.feedback:
            return head
        return None if self.message is None else join(head, self.message)

    def as_json(self) -> dict[str, object]:
        """Return the case as stored and as the CLI prints it (`feedback` is the summary)."""
        return {
            "name": self.name,
            "status": self.status.value,
            "weight": self.weight,
            "hidden": self.hidden,
            "feedback": self.summary(),
        }

    def record(self) -> dict[str, object]:
        """Return everything about the case, for the store (shown per the reveal policy).

        `feedback_message` and `detail_message` are `feedback` and `detail` to be translated
        (core.messages.to_json), None when there is none.
        """
        summary = self.summary_message()
        return {
            **self.as_json(),
            "feedback_message": None if summary is None else to_json(summary),
            "detail": self.feedback,
            "detail_message": None if self.message is None else to_json(self.message),
            "input": self.input,
            "expected": self.expected,
            "got": self.got,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "exit_code": self.exit_code,
            "duration_ms": self.duration_ms,
            "diff": None
            if self.diff is None
            else {"line": self.diff.line, "expected": self.diff.expected, "got": self.diff.got},
        }


def judge_case(
    case: Case, result: RunResult, limits: Limits, refusal: Message | None = None
) -> CaseVerdict:
    """Turn one case's run into its verdict; the comparison happens here, outside the sandbox.

    `refusal` is a rejected run's reason to be translated (else its `reason` is shown as is).
    A visible case keeps the figures its run drew, and says which it could not keep.
    """
    stdout, stderr = _text(result.stdout), _text(result.stderr)
    notes = [] if case.hidden else [drop_note(dropped) for dropped in result.dropped]

    def verdict(
        status: RunStatus, feedback: Text | None, got: str = "", diff: LineDiff | None = None
    ) -> CaseVerdict:
        if notes:
            feedback = join(*notes) if feedback is None else join(feedback, *notes)
        return CaseVerdict(
            name=case.name,
            status=status,
            weight=case.weight,
            hidden=case.hidden,
            feedback="" if feedback is None else str(feedback),
            input=case.describe_input(),
            expected=case.describe_expected(),
            got=got if case.is_value else stdout,
            stdout=stdout,
            stderr=stderr,
            exit_code=result.exit_code,
            duration_ms=result.duration_ms,
            diff=diff,
            message=feedback,
            figures=() if case.hidden else result.figures,
        )

    if result.outcome is not RunOutcome.EXITED:
        status = RunStatus(result.outcome.value)
        reason = refusal if refusal is not None else result.reason
        return verdict(status, student_text(status, limits, reason))
    if result.exit_code != 0:
        return verdict(RunStatus.ERROR, crash_message(result))
    if not case.is_value:
        comparison = compare(case.output, stdout, case.compare, case.tolerance)
        if comparison.matches:
            return verdict(RunStatus.PASSED, None)
        return verdict(RunStatus.FAILED, comparison.explanation(), diff=comparison.diff)
    if not result.stdout:
        return verdict(RunStatus.ERROR, say("No value came back: did the program exit early?"))
    try:
        got = values.decode(result.stdout)
    except values.ValueRefused as refused:
        return verdict(
            RunStatus.ERROR, say("Its value could not be read: {reason}.", reason=refused.words)
        )
    shown = values.show(got)
    if isinstance(got, values.Unsupported):
        return verdict(
            RunStatus.FAILED,
            say(
                "The expression gave {what}, which is not a value that can be checked.",
                what=got.what,
            ),
            shown,
        )
    held = values.compare_values(case.expected, got, case.compare, case.tolerance)
    if held.matches:
        return verdict(RunStatus.PASSED, None, shown)
    return verdict(RunStatus.FAILED, held.message or verbatim(held.detail), shown)


def crash_detail(result: RunResult) -> str:
    """Say how a program that exited with an error ended: its signal or its last error line."""
    return str(crash_message(result))


def crash_message(result: RunResult) -> Message:
    """Return crash_detail(), to be translated."""
    import signal as signals

    if result.signal is not None:
        try:
            name = signals.Signals(result.signal).name
        except ValueError:
            return say("It was killed by signal {signal}.", signal=result.signal)
        return say("It was killed by {name}.", name=name)
    stderr = _text(result.stderr)
    last = next((line for line in reversed(stderr.splitlines()) if line.strip()), "")
    if last:
        return say("Last error line: {line}", line=last.strip()[:300])
    return say("It exited with status {status}.", status=str(result.exit_code))


def load_cases(
    path: Path, raw: object, compare_mode: CompareMode, tolerance: Tolerance
) -> tuple[Case, ...]:
    """Read exercise.yaml's `cases`; raise LessonError naming the file, the case and the field."""
    if not isinstance(raw, list) or not raw:
        raise LessonError(str(path), "cases", "must be a non-empty list of cases")
    if len(raw) > _MAX_CASES:
        raise LessonError(str(path), "cases", f"has more than {_MAX_CASES} cases")
    cases: list[Case] = []
    for index, item in enumerate(raw):
        case = _case(path, index, item, compare_mode, tolerance)
        if any(other.name == case.name for other in cases):
            field = f"cases[{index}] ({case.name!r}).name"
            raise LessonError(str(path), field, f"{case.name!r} is used twice")
        cases.append(case)
    return tuple(cases)


def _case(
    path: Path, index: int, item: object, compare_mode: CompareMode, tolerance: Tolerance
) -> Case:
    at = f"cases[{index}]"
    if not isinstance(item, dict):
        raise LessonError(str(path), at, "each case must be a mapping")
    name = item.get("name")
    if isinstance(name, str) and name.strip():
        at = f"cases[{index}] ({name.strip()[:_MAX_NAME]!r})"
    is_value = "expr" in item or "expected" in item
    kind_keys = _VALUE_KEYS if is_value else _RUN_KEYS
    mixed = sorted(item.keys() & ((_RUN_KEYS | _VALUE_KEYS) - kind_keys))
    if mixed:
        raise LessonError(
            str(path),
            f"{at}.{mixed[0]}",
            "a case is either a run case (stdin, argv, output or expected_output) "
            "or a value case (expr and expected), not both",
        )
    required = {"name"} | (_VALUE_KEYS if is_value else set())
    fields.check_keys(path, item, required=required, optional=_COMMON_KEYS | kind_keys, at=at)
    name = fields.text(path, item, "name", at=at).strip()
    if len(name) > _MAX_NAME:
        raise LessonError(str(path), f"{at}.name", f"is longer than {_MAX_NAME} characters")
    mode, case_tolerance = _comparison(path, item, at, compare_mode, tolerance)
    weight, hidden = _weight(path, item, at), _flag(path, item, at, "hidden")
    if is_value:
        expr = fields.text(path, item, "expr", at=at)
        try:
            compile(expr, "<case>", "eval", dont_inherit=True)
        except SyntaxError as exc:
            problem = f"is not a Python expression: {exc.msg}"
            raise LessonError(str(path), f"{at}.expr", problem) from None
        except (ValueError, MemoryError, RecursionError):  # nested too deeply to compile
            problem = "is not a Python expression Python can compile (nested too deeply)"
            raise LessonError(str(path), f"{at}.expr", problem) from None
        wrong = values.check_expected(item["expected"])
        if wrong:
            raise LessonError(str(path), f"{at}.expected", wrong)
        expected = item["expected"]
        return Case(name, weight, hidden, mode, case_tolerance, expr=expr, expected=expected)
    return Case(
        name,
        weight,
        hidden,
        mode,
        case_tolerance,
        stdin=_input_text(path, item, at),
        argv=_argv(path, item, at),
        output=_output(path, item, at),
    )


def _comparison(
    path: Path, item: dict[str, Any], at: str, mode: CompareMode, tolerance: Tolerance
) -> tuple[CompareMode, Tolerance]:
    if "compare" in item:
        try:
            mode = CompareMode(item["compare"])
        except ValueError:
            raise LessonError(str(path), f"{at}.compare", "must be 'exact' or 'numeric'") from None
    if "tolerance" in item:
        if mode is not CompareMode.NUMERIC:
            raise LessonError(str(path), f"{at}.tolerance", "applies only with compare: numeric")
        tolerance = fields.tolerance(path, item["tolerance"], at=at)
    return mode, tolerance


def _weight(path: Path, item: dict[str, Any], at: str) -> float:
    value = item.get("weight", 1)
    if not isinstance(value, int | float) or isinstance(value, bool) or not 0 < value <= 1000:
        raise LessonError(str(path), f"{at}.weight", "must be a number in (0, 1000]")
    return float(value)


def _flag(path: Path, item: dict[str, Any], at: str, key: str) -> bool:
    value = item.get(key, False)
    if not isinstance(value, bool):
        raise LessonError(str(path), f"{at}.{key}", "must be true or false")
    return value


def _input_text(path: Path, item: dict[str, Any], at: str) -> str:
    value = item.get("stdin", "")
    if not isinstance(value, str):
        raise LessonError(str(path), f"{at}.stdin", "must be text (quote it in YAML)")
    if len(value.encode()) > _MAX_INPUT:
        raise LessonError(str(path), f"{at}.stdin", f"is larger than {_MAX_INPUT // 1024} KiB")
    return value


def _argv(path: Path, item: dict[str, Any], at: str) -> tuple[str, ...]:
    value = item.get("argv", [])
    # text only: YAML would turn `0.10` into "0.1" and `yes` into "True" on the way
    if not isinstance(value, list) or not all(isinstance(a, str) for a in value):
        raise LessonError(str(path), f"{at}.argv", "must be a list of text (quote numbers)")
    argv = tuple(value)
    if any("\0" in a for a in argv):
        raise LessonError(str(path), f"{at}.argv", "an argument holds a NUL character")
    return argv


def _output(path: Path, item: dict[str, Any], at: str) -> str:
    if ("output" in item) == ("expected_output" in item):
        raise LessonError(
            str(path), f"{at}.output", "a run case needs exactly one of output or expected_output"
        )
    if "output" in item:
        value = item["output"]
        if not isinstance(value, str):
            raise LessonError(str(path), f"{at}.output", "must be text (quote it in YAML)")
        return value
    name = fields.text(path, item, "expected_output", at=at)
    field = f"{at}.expected_output"
    lesson_dir = path.parent.resolve()
    target = (lesson_dir / name).resolve()
    if not target.is_relative_to(lesson_dir):
        raise LessonError(str(path), field, "must name a file of the lesson directory")
    # starter/ goes into the sandbox with the student's files: no answer may live there
    # (the resolved path, so that "./starter/x" or "a/../starter/x" is caught too)
    if target.relative_to(lesson_dir).parts[:1] in (("starter",), ("solution",)):
        raise LessonError(str(path), field, "must not be a file of starter/ or solution/")
    step = lesson_dir
    for part in Path(name).parts:
        step = step / part
        if step.is_symlink():
            raise LessonError(str(path), field, "must not be a symbolic link")
    if not target.is_file():
        raise LessonError(str(path), field, f"{name!r} is not a file of the lesson directory")
    try:
        return fields.read_text(target)
    except LessonError as exc:
        raise LessonError(str(path), field, f"{name!r} {exc.problem}") from None


# a case's line, visible and hidden: a whole sentence per verdict (its words agree in Turkish)
_CASE_LINES: dict[RunStatus, tuple[str, str]] = {
    RunStatus.PASSED: (N_("Case '{name}' passed."), N_("Hidden case '{name}' passed.")),
    RunStatus.FAILED: (N_("Case '{name}' failed."), N_("Hidden case '{name}' failed.")),
    RunStatus.ERROR: (
        N_("Case '{name}' stopped with an error."),
        N_("Hidden case '{name}' stopped with an error."),
    ),
    RunStatus.TIMEOUT: (
        N_("Case '{name}' ran out of time."),
        N_("Hidden case '{name}' ran out of time."),
    ),
    RunStatus.MEMORY_LIMIT: (
        N_("Case '{name}' used too much memory."),
        N_("Hidden case '{name}' used too much memory."),
    ),
    RunStatus.OUTPUT_LIMIT: (
        N_("Case '{name}' printed too much."),
        N_("Hidden case '{name}' printed too much."),
    ),
    RunStatus.REJECTED: (N_("Case '{name}' was not run."), N_("Hidden case '{name}' was not run.")),
}


def case_line(status: RunStatus, name: str, hidden: bool) -> Message:
    """Return "Case 'x' failed." or "Hidden case 'x' failed.", as the status says."""
    visible, secret = _CASE_LINES[status]
    return say(secret if hidden else visible, name=name)


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")
