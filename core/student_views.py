"""A stored verdict as its student may see it: the one view behind every student's door.

The store keeps everything a teacher (and the CLI, a lesson author) needs: each case's
status, time, input, output and detail. Of a hidden case, until the reveal policy allows
more, its student sees its name, its weight and whether it passed, and nothing else that
was computed from it: not how it failed (a time-out or a crash is a channel too), not its
run time (a program that sleeps for each character of its input spells the input out),
so not the verdict's status, time or feedback where a hidden case would be in them. The
API, its stream and the lesson page all show this view; whatever tells the LMS why a
score is what it is (an AGS comment) must word this view too, never the stored one.
What still tells of a hidden case is the time a verdict arrives (docs/security.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from core.cases import case_line
from core.messages import Text, from_json, to_json, verbatim
from core.runs import RunStatus
from core.verdicts import cases_feedback


class StoredVerdict(Protocol):
    """What the store keeps of a graded submission (service.store.models.Submission)."""

    @property
    def run_status(self) -> str | None: ...
    @property
    def score(self) -> float | None: ...
    @property
    def stdout(self) -> str | None: ...
    @property
    def stderr(self) -> str | None: ...
    @property
    def exit_code(self) -> int | None: ...
    @property
    def duration_ms(self) -> int | None: ...
    @property
    def feedback(self) -> str | None: ...
    @property
    def feedback_message(self) -> Any: ...
    @property
    def diff_line(self) -> int | None: ...
    @property
    def diff_expected(self) -> str | None: ...
    @property
    def diff_got(self) -> str | None: ...
    @property
    def cases(self) -> Any: ...


@dataclass(frozen=True)
class StudentView:
    """A verdict as its student sees it; `cases` are CaseVerdict.record() dicts, or less.

    `feedback_message` is `feedback` to be translated (core.messages JSON; None: English
    only); `duration_ms` is None when no case's time may be shown (every case hidden).
    """

    status: str | None
    score: float | None
    stdout: str | None
    stderr: str | None
    exit_code: int | None
    duration_ms: int | None
    feedback: str | None
    feedback_message: Any
    diff: dict[str, Any] | None
    cases: tuple[dict[str, Any], ...]

    @property
    def passed(self) -> bool:
        """Return whether the verdict, as shown, is a pass."""
        return self.status == RunStatus.PASSED

    @property
    def output_case(self) -> str | None:
        """Return the case whose output `stdout` and `stderr` are: the first visible one.

        core.verdicts never lends a hidden case's output to the verdict (it would show what
        the case's input was); with every case hidden, the verdict has no output.
        """
        return next((str(case["name"]) for case in self.cases if not case.get("hidden")), None)


def student_view(stored: StoredVerdict, revealed: bool) -> StudentView:
    """Return what the student may see of a stored verdict; `revealed`: the policy allows all.

    A verdict with no hidden case withheld is shown as it was stored. Otherwise its status,
    time and feedback are those of the cases as shown, derived as core.verdicts derives
    them from all the cases: the first failing case's status, the cases' times summed.
    """
    records = [r for r in stored.cases or [] if isinstance(r, Mapping)]
    cases = tuple(shown_case(record, revealed) for record in records)
    # the first failing case's difference, never a hidden one's (core.verdicts.judge): that
    # there is one says only that the hidden cases before it passed
    diff = None
    if stored.diff_line is not None:
        diff = {"line": stored.diff_line, "expected": stored.diff_expected, "got": stored.diff_got}
    view = StudentView(
        status=stored.run_status,
        score=stored.score,
        stdout=stored.stdout,
        stderr=stored.stderr,
        exit_code=stored.exit_code,
        duration_ms=stored.duration_ms,
        feedback=stored.feedback,
        feedback_message=stored.feedback_message,
        diff=diff,
        cases=cases,
    )
    if not any(_withheld(record, revealed) for record in records):
        return view
    failing = next((case for case in cases if case.get("status") != RunStatus.PASSED), None)
    times = [case["duration_ms"] for case in cases if isinstance(case.get("duration_ms"), int)]
    feedback = _feedback(cases, stored.score or 0.0)
    return replace(
        view,
        status=RunStatus.PASSED.value if failing is None else failing.get("status"),
        duration_ms=sum(times) if times else None,
        feedback=str(feedback),
        feedback_message=to_json(feedback),
    )


def shown_case(record: Mapping[str, Any], revealed: bool) -> dict[str, Any]:
    """Return a stored case (CaseVerdict.record()) as its student may see it.

    A hidden case shows its name, weight and whether it passed until the reveal policy
    allows more; then it is shown like a visible case.
    """
    if not _withheld(record, revealed):
        return dict(record)
    name = str(record.get("name", ""))
    status = RunStatus.PASSED if record.get("status") == RunStatus.PASSED else RunStatus.FAILED
    line = case_line(status, name, hidden=True)
    return {
        "name": name,
        "status": status.value,
        "weight": record.get("weight"),
        "hidden": True,
        "feedback": str(line),
        "feedback_message": to_json(line),
    }


def _withheld(record: Mapping[str, Any], revealed: bool) -> bool:
    return bool(record.get("hidden")) and not revealed


def _feedback(cases: Sequence[Mapping[str, Any]], score: float) -> Text:
    failed = [_line(case) for case in cases if case.get("status") != RunStatus.PASSED]
    return cases_feedback(len(cases) - len(failed), len(cases), score, failed)


def _line(case: Mapping[str, Any]) -> Text:
    """Return a shown case's line as its record keeps it (its English, if that is all)."""
    stored = from_json(case.get("feedback_message"))
    return stored if stored is not None else verbatim(str(case.get("feedback") or ""))
