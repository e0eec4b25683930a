"""What a student does with a placement: submit code, answer a question, follow a submission.

Each action takes the request's `Asker` (who asks, when, with the app's store, catalog and
settings), made once per request by `asker()`. Refusals are `Refused` (a core.errors.Refusal:
a status, a stable code and its words); the app's error boundary renders them, as it does a
SourceRefused or an AnswerError.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from core.errors import Refusal
from core.lessons import Catalog, Lesson
from core.messages import Text, say, say_n, verbatim
from core.placements import Closure, Reveal
from core.questions import score_answer
from core.student_views import case_records, student_view
from service.queue import GradeMessage, Message, SyncMessage
from service.settings import Settings
from service.store import answers, drafts, figure_rows, placement_rows, policies, submissions
from service.store.database import Store
from service.store.models import Placement, Submission, SubmissionStatus, utcnow
from service.web import extensions
from service.web.auth import SignedIn, current_user


class Refused(Refusal):
    """A request the student cannot have: its status, its code and what to tell them.

    Its words are a core.messages text, worded in the reader's language when the boundary
    renders it; a sentence with a plural (`ngettext`, which core.messages has no form for)
    comes already worded, in the request it answers.
    """

    def __init__(
        self, status: int, code: str, words: Text | str, retry_after: int | None = None
    ) -> None:
        shown = verbatim(words) if isinstance(words, str) else words
        super().__init__(shown, status=status, code=code, retry_after=retry_after)


def signed_in(unknown: Text | str | None = None) -> SignedIn:
    """Return the request's signed-in user; Refused (401, saying `unknown`) for nobody."""
    user = current_user()
    if user is None:
        message = unknown or say("Open this lesson from your course to sign in.")
        raise Refused(401, "not_signed_in", message)
    return user


@dataclass(frozen=True)
class Asker:
    """A signed-in student's request as the actions take it: who, when, and with what."""

    user: SignedIn
    now: datetime
    store: Store
    catalog: Catalog
    settings: Settings


def asker(unknown: Text | str | None = None) -> Asker:
    """Return the request's asker, with the app's resources; Refused (401) for nobody."""
    user = signed_in(unknown)
    return Asker(user, utcnow(), extensions.store(), extensions.catalog(), extensions.settings())


@dataclass(frozen=True)
class Scored:
    """A scored answer, as the student sees it."""

    question_id: str
    earned: float
    possible: float
    explanation: str
    follows: tuple[Message, ...] = ()  # to send once kept: the lesson's score to the LMS

    def as_json(self) -> dict[str, object]:
        """Return the answer's result for the JSON API."""
        return {
            "question_id": self.question_id,
            "earned": self.earned,
            "possible": self.possible,
            "correct": self.earned >= self.possible,
            "explanation": self.explanation,
        }


@dataclass(frozen=True)
class Submitted:
    """A queued submission, and what to send once it is committed: its grading, unless it
    waits behind its author's one before it (then that one's verdict sends it)."""

    submission_id: int
    follows: tuple[Message, ...] = ()


def submit(asker: Asker, placement_id: int, source: str) -> Submitted:
    """Check the placement, the rate and the policy, then write a queued submission."""
    user, now, settings = asker.user, asker.now, asker.settings
    if not user.may_open(placement_id):
        raise Refused(403, "not_launched", say("Open this lesson from your course first."))
    with asker.store.transaction() as connection:
        found = policies.submitting(connection, placement_id, user.user_id)
        if found is None:
            raise Refused(404, "unknown_placement", say("There is no such lesson placement."))
        lesson_id, policy = found
        lesson = _lesson(asker.catalog, lesson_id)
        if lesson.exercise is None:
            raise Refused(404, "no_exercise", say("This lesson has no exercise to submit code to."))
        submissions.lock_author(connection, user.user_id)
        since = now - timedelta(seconds=settings.submit_window_s)
        count, oldest = submissions.recent(connection, user.user_id, since)
        _check_rate(count, oldest, since, settings)
        used = None  # without a limit (or a reveal that counts them), attempts need no counting
        if policy.max_attempts is not None or policy.reveal is Reveal.AFTER_ATTEMPTS:
            used = submissions.attempts_used(connection, placement_id, user.user_id)
        passed = policy.reveal is Reveal.AFTER_PASS and submissions.has_passed(
            connection, placement_id, user.user_id
        )
        # once the sample solution is shown, handing it in would earn its points (the rule
        # of reveals(), read here in the submission's own transaction)
        revealed = policy.reveals(now, used or 0, passed)
        closed = policy.closed(now, used, revealed)
        if closed is not None:
            status = 403 if closed.closure is Closure.PAST_DUE else 409
            raise Refused(status, closed.closure.value, closed.message)
        late = policy.is_late(now)
        created = submissions.queue_new(connection, placement_id, user.user_id, source, late, now)
        # nothing goes to the LMS yet: a score posted now could only repeat the one it holds
        # (Moodle blanks a Pending one), and would push the graded score a second later
        grading = (GradeMessage(created.submission_id),) if created.send else ()
        return Submitted(created.submission_id, grading)


def answer(asker: Asker, placement_id: int, question_id: str, given: object) -> Scored:
    """Score an answer at once and keep it; the first answer to a question counts."""
    user, now = asker.user, asker.now
    placement, lesson = open_placement(asker, placement_id)
    question = lesson.question(question_id)
    if question is None:
        raise Refused(
            404,
            "unknown_question",
            say("This lesson has no question {question}.", question=repr(question_id)),
        )
    with asker.store.reading() as session:
        policy = policies.student_policy(session, placement, user.user_id)
    closed = policy.closed(now)
    if closed is not None:
        raise Refused(403, closed.closure.value, closed.message)
    result = score_answer(question, given)  # an AnswerError is the boundary's 400
    kept = answers.record(
        asker.store,
        placement.id,
        user.user_id,
        question.id,
        given,
        result.earned,
        result.possible,
        policy.is_late(now),
        now,
    )
    if not kept:
        raise Refused(409, "already_answered", say("You have answered this question already."))
    sync = SyncMessage(user.user_id, placement.id)
    return Scored(question.id, result.earned, result.possible, question.explanation, (sync,))


def save_draft(asker: Asker, placement_id: int, source: str) -> None:
    """Keep the student's newest unsubmitted code for the placement's exercise."""
    open_placement(asker, placement_id)
    drafts.save(asker.store, placement_id, asker.user.user_id, source, asker.now)


def reveals(asker: Asker, placement: Placement, used: int | None = None) -> bool:
    """Return whether the placement's reveal policy lets the student see more now.

    The one decision behind the sample solution, the answers of answered questions and
    what the hidden cases show beyond their names, weights and pass or fail (their inputs,
    results, times and how they failed), for the page, the API and the stream alike.
    `used` is the attempts count when the caller has it already.
    """
    if Reveal(placement.reveal) is Reveal.NEVER:  # no exception changes when answers show
        return False
    user_id = asker.user.user_id
    with asker.store.reading() as session:
        policy = policies.student_policy(session, placement, user_id)
        if used is None and policy.reveal is Reveal.AFTER_ATTEMPTS:
            used = submissions.attempts_used(session, placement.id, user_id)
        passed = policy.reveal is Reveal.AFTER_PASS and submissions.has_passed(
            session, placement.id, user_id
        )
    return policy.reveals(asker.now, used or 0, passed)


def status_of(
    asker: Asker, submission_id: int, link: Callable[[int], str] | None = None
) -> dict[str, Any]:
    """Return the submission's status and, once graded, its verdict; only to its author.

    `link` makes a figure's URL from its id (figure_views.linker): without it, a verdict's
    figures are listed without a URL."""
    submission = submissions.get(asker.store, submission_id)
    if submission is None or submission.user_id != asker.user.user_id:
        raise Refused(404, "unknown_submission", say("There is no such submission of yours."))
    revealed = held = False
    figures: list[dict[str, Any]] = []
    if submission.status == SubmissionStatus.GRADED:  # a stream polls: nothing read before
        placement = placement_rows.find(asker.store, submission.placement_id)
        if placement is not None:
            held = placement.holds_scores
            # only with a hidden case withheld is the policy worth its queries
            revealed = withholds(submission) and reveals(asker, placement)
        with asker.store.reading() as session:
            drawn = figure_rows.listed(session, [submission.id]).get(submission.id, [])
        figures = [figure_json(figure, link) for figure in drawn]
    return describe(submission, revealed, held, figures)


def withholds(submission: Submission) -> bool:
    """Return whether a graded submission has a hidden case, whose details wait for a reveal."""
    graded = submission.status == SubmissionStatus.GRADED
    return graded and any(record.get("hidden") for record in case_records(submission.cases))


def describe(
    submission: Submission,
    revealed: bool = False,
    held: bool = False,
    figures: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """Return a submission as the JSON API shows it: once graded, its student's view.

    The verdict is core.student_views.student_view's: a hidden case by name, weight and
    pass or fail only until `revealed`; `stdout` and `stderr` are those of the case
    `output_case` names (the first visible one), none when every case is hidden. While
    the placement is `held`, its `score` is null (the shape stays; the feedback shows).
    `figures` are what its visible cases drew (a hidden case's never left the sandbox), as
    figure_json() lists them.
    """
    verdict = None
    if submission.status == SubmissionStatus.GRADED:
        view = student_view(submission, revealed)
        verdict = {
            "status": view.status,
            "score": None if held else view.score,
            "stdout": view.stdout,
            "stderr": view.stderr,
            "exit_code": view.exit_code,
            "duration_ms": view.duration_ms,
            "feedback": view.feedback,
            "first_difference": view.diff,
            "grader_failed": submission.grader_error is not None,
            "cases": list(view.cases),
            "output_case": view.output_case,
            "figures": list(figures),
        }
    return {
        "id": submission.id,
        "placement_id": submission.placement_id,
        # a submission queued again for a bulk regrade keeps showing its last verdict
        "status": submission.status,
        "late": submission.late,
        "created_at": submission.created_at.isoformat(),
        "graded_at": submission.graded_at.isoformat() if submission.graded_at else None,
        "verdict": verdict,
    }


def figure_json(figure: figure_rows.Listed, link: Callable[[int], str] | None) -> dict[str, Any]:
    """Return a figure as a verdict's JSON lists it (ARCHITECTURE.md: `figures`)."""
    shown: dict[str, Any] = {"width": figure.width, "height": figure.height, "alt": figure.alt}
    if link is not None:
        shown["url"] = link(figure.id)
    if figure.case is not None:
        shown["case"] = figure.case
    return shown


def open_placement(asker: Asker, placement_id: int) -> tuple[Placement, Lesson]:
    """Return the placement and its lesson, if the user's launches opened it."""
    # the launch check first: whether a placement exists is nobody else's business
    if not asker.user.may_open(placement_id):
        raise Refused(403, "not_launched", say("Open this lesson from your course first."))
    placement = placement_rows.find(asker.store, placement_id)
    if placement is None:
        raise Refused(404, "unknown_placement", say("There is no such lesson placement."))
    return placement, _lesson(asker.catalog, placement.lesson_id)


def _lesson(catalog: Catalog, lesson_id: str) -> Lesson:
    lesson = catalog.lesson(lesson_id)
    if lesson is None:
        raise Refused(
            404,
            "unknown_lesson",
            say("The lesson {lesson} is not in the catalog.", lesson=repr(lesson_id)),
        )
    return lesson


def _check_rate(count: int, oldest: datetime | None, since: datetime, settings: Settings) -> None:
    if count >= settings.submit_rate and oldest is not None:
        wait = math.ceil((oldest - since).total_seconds()) or 1
        raise Refused(
            429,
            "rate_limited",
            say_n(
                "You submitted {num} time in {window} s; wait {wait} s before submitting again.",
                "You submitted {num} times in {window} s; wait {wait} s before submitting again.",
                num=count,
                window=settings.submit_window_s,
                wait=wait,
            ),
            retry_after=wait,
        )
