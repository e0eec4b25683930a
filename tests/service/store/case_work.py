"""Graded submissions whose verdicts carry cases, written through the store as a worker does."""

from core.cases import CaseVerdict
from core.compare import LineDiff
from core.messages import verbatim
from core.runs import RunStatus
from core.verdicts import Verdict
from service.store import submissions
from service.store.models import utcnow
from testkit.factories import submission

# name -> (weight, hidden), in file order: the exercise the tests' verdicts come from
CASES = {"the example": (1.0, False), "equal scores": (2.0, True), "a row": (1.0, False)}


def case_verdict(name, status):
    """Return a case's verdict with everything a teacher may see."""
    weight, hidden = CASES[name]
    passed = status is RunStatus.PASSED
    return CaseVerdict(
        name=name, status=status, weight=weight, hidden=hidden,
        feedback="" if passed else f"{name} went wrong", input=f"input of {name}",
        expected=f"expected of {name}", got=f"got of {name}", stdout=f"stdout of {name}",
        stderr="" if passed else f"stderr of {name}", exit_code=0, duration_ms=5,
        diff=None if passed or hidden else LineDiff(2, "0.5", "0.4", "differs"),
    )  # fmt: skip


def graded(store, placement_id, user_id, statuses=None, grader_error=None):
    """Write and grade a submission: `statuses` {case name: RunStatus}; None keeps no cases."""
    submission_id = submission(store, placement_id, user_id)
    cases = tuple(case_verdict(n, s) for n, s in (statuses or {}).items())
    status = next((c.status for c in cases if not c.passed), RunStatus.PASSED)
    verdict = Verdict(status, 10, verbatim("feedback"), cases)
    claim = submissions.claim(store, submission_id, 30, utcnow())
    assert submissions.finish(store, claim, verdict, utcnow(), grader_error=grader_error).saved
    return submission_id
