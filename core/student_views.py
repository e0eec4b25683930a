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
from core.messages import Percent, Text, from_json, join, say, say_n, to_json, verbatim
from core.runs import RunStatus
from core.verdicts import cases_feedback

# the key of the record a migration (service/store/migrations, 0011) made of what an older
# grader stored of a verdict beside its cases, where its cases do not give it (a verdict
# graded before cases were kept; one whose output was a hidden first case's): the score,
# output and difference as they were shown, so that no old page changes; case_records()
# leaves it out, for it is no case.
AS_GRADED = "as_graded"


class StoredVerdict(Protocol):
    """What the store keeps of a graded submission (service.store.models.Submission): its
    status, time, feedback (core.messages.to_json) and cases; the rest is derived."""

    @property
    def run_status(self) -> str | None: ...
    @property
    def duration_ms(self) -> int | None: ...
    @property
    def message(self) -> Any: ...
    @property
    def cases(self) -> Any: ...


@dataclass(frozen=True)
class StudentView:
    """A verdict as its student sees it; `cases` are CaseVerdict.record() dicts, or less.

    `message` is `feedback` to be translated; `duration_ms` is None when no case's time
    may be shown (every case hidden).
    """

    status: str | None
    score: float | None
    stdout: str | None
    stderr: str | None
    exit_code: int | None
    duration_ms: int | None
    message: Text
    diff: dict[str, Any] | None
    cases: tuple[dict[str, Any], ...]

    @property
    def passed(self) -> bool:
        """Return whether the verdict, as shown, is a pass."""
        return self.status == RunStatus.PASSED

    @property
    def feedback(self) -> str:
        """Return the feedback in English."""
        return str(self.message)

    @property
    def output_case(self) -> str | None:
        """Return the case whose output `stdout` and `stderr` are: the first visible one.

        core.verdicts never lends a hidden case's output to the verdict (it would show what
        the case's input was); with every case hidden, the verdict has no output.
        """
        return next((str(case["name"]) for case in self.cases if not case.get("hidden")), None)


def stored_view(stored: StoredVerdict) -> StudentView:
    """Return a stored verdict whole (as its teacher sees it), derived as core.verdicts
    derives a Verdict's: the score from the cases' weights, the output from the first
    visible case, the difference from the first failing case unless it is hidden."""
    cases = tuple(case_records(stored.cases))
    records = stored.cases if isinstance(stored.cases, list) else []
    whole = next((r for r in records if isinstance(r, Mapping) and r.get(AS_GRADED)), None)
    shown = whole or next((case for case in cases if not case.get("hidden")), None) or {}
    # the first failing case's difference, never a hidden one's: that there is one says
    # only that the hidden cases before it passed
    failing = whole or next((c for c in cases if c.get("status") != RunStatus.PASSED), None)
    diff = None if failing is None or failing.get("hidden") else failing.get("diff")
    message = from_json(stored.message)  # what finish() wrote, or 0011 made of the English
    return StudentView(
        status=stored.run_status,
        score=whole.get("score") if whole else _score(cases),
        stdout=shown.get("stdout", ""),
        stderr=shown.get("stderr", ""),
        exit_code=shown.get("exit_code"),
        duration_ms=stored.duration_ms,
        message=verbatim("") if message is None else message,
        diff=diff if isinstance(diff, dict) else None,
        cases=cases,
    )


def case_records(stored: Any) -> list[dict[str, Any]]:
    """Return a submission's stored cases (CaseVerdict.record() dicts), in order."""
    records = stored if isinstance(stored, list) else []
    return [dict(r) for r in records if isinstance(r, Mapping) and not r.get(AS_GRADED)]


def student_view(stored: StoredVerdict, revealed: bool) -> StudentView:
    """Return what the student may see of a stored verdict; `revealed`: the policy allows all.

    A verdict with no hidden case withheld is shown as it was stored. Otherwise its status,
    time and feedback are those of the cases as shown, derived as core.verdicts derives
    them from all the cases: the first failing case's status, the cases' times summed.
    """
    whole = stored_view(stored)
    view = replace(whole, cases=tuple(shown_case(case, revealed) for case in whole.cases))
    if not any(_withheld(case, revealed) for case in whole.cases):
        return view
    cases = view.cases
    failing = next((case for case in cases if case.get("status") != RunStatus.PASSED), None)
    times = [case["duration_ms"] for case in cases if isinstance(case.get("duration_ms"), int)]
    return replace(
        view,
        status=RunStatus.PASSED.value if failing is None else failing.get("status"),
        duration_ms=sum(times) if times else None,
        message=_feedback(cases, view.score or 0.0),
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


def _score(cases: Sequence[Mapping[str, Any]]) -> float:
    """Return the passed cases' weight over all the weight, as core.verdicts.score_of does."""
    weights = [(float(c.get("weight") or 0), c.get("status") == RunStatus.PASSED) for c in cases]
    total = sum(weight for weight, _ in weights)
    return sum(weight for weight, passed in weights if passed) / total if total else 0.0


def _feedback(cases: Sequence[Mapping[str, Any]], score: float) -> Text:
    failed = [_line(case) for case in cases if case.get("status") != RunStatus.PASSED]
    return cases_feedback(len(cases) - len(failed), len(cases), score, failed)


def _line(case: Mapping[str, Any]) -> Text:
    """Return a shown case's line as its record keeps it (its English, if that is all)."""
    stored = from_json(case.get("feedback_message"))
    return stored if stored is not None else verbatim(str(case.get("feedback") or ""))


_NAMED_AT_MOST = 3  # failing cases named in a score's comment; the rest are counted


def score_comment(
    best: StoredVerdict | None,
    exercise: bool,
    questions: Sequence[tuple[float | None, float]],
    late_penalty: float = 0.0,
) -> Text | None:
    """Word why a lesson's score is what it is, as its LMS shows it (the AGS comment).

    `best` is the submission the score counts (None: none graded yet), `exercise` whether
    the lesson has one, `questions` each question's (earned or None unanswered, possible),
    `late_penalty` the share late work lost, when some did. The cases are worded as their
    student sees them before any reveal: a hidden case by its name and whether it passed.
    None when the lesson has neither exercise nor questions.
    """
    parts: list[Text] = []
    if exercise:
        parts.extend(_exercise_comment(best))
    if questions:
        parts.extend(_questions_comment(questions))
    if late_penalty > 0:
        parts.append(say("Late work lost {percent} of its points.", percent=Percent(late_penalty)))
    return join(*parts) if parts else None


def _exercise_comment(best: StoredVerdict | None) -> list[Text]:
    if best is None:
        return [say("No code handed in yet.")]
    cases = student_view(best, revealed=False).cases
    if not cases:
        return [say("The code could not be graded.")]
    failing = [case for case in cases if case.get("status") != RunStatus.PASSED]
    head = say_n(
        "{passed} of {num} case passed.",
        "{passed} of {num} cases passed.",
        num=len(cases),
        passed=len(cases) - len(failing),
    )
    named: list[Text] = [_failed(case) for case in failing[:_NAMED_AT_MOST]]
    more = len(failing) - _NAMED_AT_MOST
    if more > 0:
        named.append(say_n("{num} more case failed.", "{num} more cases failed.", num=more))
    return [head, *named]


def _failed(case: Mapping[str, Any]) -> Text:
    """Return a failing case's line by its name alone: what it held is no comment's."""
    try:
        status = RunStatus(str(case.get("status")))
    except ValueError:
        status = RunStatus.FAILED
    hidden = bool(case.get("hidden"))
    return case_line(RunStatus.FAILED if hidden else status, str(case.get("name", "")), hidden)


def _questions_comment(questions: Sequence[tuple[float | None, float]]) -> list[Text]:
    answered = [(earned, possible) for earned, possible in questions if earned is not None]
    right = sum(1 for earned, possible in answered if earned >= possible - _EPSILON)
    partly = sum(1 for earned, possible in answered if _EPSILON < earned < possible - _EPSILON)
    parts: list[Text] = [
        say_n(
            "{right} of {num} question right.",
            "{right} of {num} questions right.",
            num=len(questions),
            right=right,
        )
    ]
    if partly:
        parts.append(
            say_n("{num} question partly right.", "{num} questions partly right.", num=partly)
        )
    if len(answered) < len(questions):
        unanswered = len(questions) - len(answered)
        parts.append(
            say_n("{num} question not answered.", "{num} questions not answered.", num=unanswered)
        )
    return parts


_EPSILON = 1e-9  # points are sums of floats: 0.1 + 0.2 of 0.3 is right
