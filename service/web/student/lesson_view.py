"""What the student's lesson page shows: their answers, attempts, score, draft, and reveals.

Everything here is read for one user; nothing of another student's work is ever loaded.
The attempts are the newest ATTEMPTS_LISTED, without their code; one attempt whole, and the
rest of the list, are attempt_view's.
The sample solution, the question answers and the hidden cases' details are in the page only
when `revealed`; every verdict on it is its student's view (core.student_views).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from core.lesson_scores import LessonScore
from core.lessons import Exercise, Lesson
from core.messages import Text
from core.overrides import Override
from core.placements import Closed, Policy, Reveal, StudentException
from core.questions import ChoiceQuestion, MatchQuestion, Question
from core.runs import RunStatus
from core.student_views import StoredVerdict, StudentView, student_view
from service.store import (
    drafts,
    figure_rows,
    grades,
    policies,
    policy_exceptions,
    score_comments,
    submissions,
    work,
)
from service.store.models import Placement, QuestionAnswer, Submission, SubmissionStatus
from service.store.work import AttemptRow
from service.web.student import actions

# the newest attempts the lesson page lists; the rest are a link away (attempt_pages), so
# that 200 attempts make no longer a page than 10 (and none of their code is in it)
ATTEMPTS_LISTED = 10


@dataclass(frozen=True)
class LessonPage:
    """One student's view of a placement, as the page renders it."""

    placement: Placement
    lesson: Lesson
    policy: Policy  # the student's own: the placement's, with their exception
    exception: StudentException | None  # theirs, shown to them alone
    answers: Mapping[str, QuestionAnswer]
    attempts: list[AttemptRow]  # the newest ATTEMPTS_LISTED, newest first, without their code
    shown: Submission | None  # the newest graded submission, whose verdict the page shows
    score: LessonScore  # the teacher's to see while the placement holds it (not shown then)
    comment: Text | None  # why the score is what it is: the LMS shows the same sentence
    override: Override | None  # the teacher's, with its comment, while it stands
    attempts_used: int
    revealed: bool
    closed: Closed | None  # why the exercise takes no more submissions, if it does not
    questions_closed: Closed | None  # why answers are no longer taken (past due), if so
    code: str  # what the editor opens with: the draft, the last submission, or the starter
    figures: list[figure_rows.Listed] = field(default_factory=list)  # the shown verdict's

    def figures_of(self, case: str | None) -> list[figure_rows.Listed]:
        """Return the shown verdict's figures that a case drew (all of them for None)."""
        return [f for f in self.figures if case is None or f.case == case]

    @property
    def graded(self) -> bool:
        """Return whether any of the student's work has been scored (an answer, a verdict)."""
        return bool(self.answers) or self.shown is not None

    @property
    def extended(self) -> bool:
        """Return whether the student's exception gives them a later due date."""
        given = self.exception.due_at if self.exception else None
        return given is not None and self.policy.due_at == given

    @property
    def more_attempts(self) -> bool:
        """Return whether the student's exception gives them more attempts."""
        given = self.exception.max_attempts if self.exception else None
        return given is not None and self.policy.max_attempts == given

    @property
    def waived(self) -> bool:
        """Return whether the student's exception waives the late penalty of accepted work."""
        return (
            self.exception is not None
            and self.exception.waive_penalty
            and (self.policy.late_penalty is not None)
        )

    @property
    def latest(self) -> AttemptRow | None:
        """Return the newest submission, graded or not."""
        return self.attempts[0] if self.attempts else None

    @property
    def attempt_count(self) -> int:
        """Return how many submissions the student has made (listed or not)."""
        return self.attempts[0].number if self.attempts else 0  # the newest's number

    @property
    def more_listed(self) -> bool:
        """Return whether older attempts than those listed here exist."""
        return self.attempt_count > len(self.attempts)

    def shows_answer(self, question_id: str) -> bool:
        """Return whether a question's answer may be shown: revealed, and no longer open.

        An answer shown beside an open question would be worth its points: it waits until
        the student has answered (the first answer counts) or the questions have closed.
        """
        return self.revealed and (question_id in self.answers or self.questions_closed is not None)

    @property
    def verdict(self) -> StudentView | None:
        """Return the shown submission's verdict as its student may see it."""
        return None if self.shown is None else self.seen(self.shown)

    def seen(self, submission: Submission | AttemptRow) -> StudentView | None:
        """Return a submission's verdict as its student may see it (None until it is graded)."""
        return seen(submission, submission.status, self.revealed)

    @property
    def reveals_later(self) -> bool:
        """Return whether the policy ever shows the sample solution (and hidden cases' details)."""
        return self.policy.reveal is not Reveal.NEVER

    @property
    def cases(self) -> list[ShownCase]:
        """Return the shown verdict's cases to list, as the student may see them; [] for none."""
        return shown_cases(self.verdict, self.lesson.exercise)

    @property
    def pending(self) -> bool:
        """Return whether a submission is still queued or running."""
        return self.latest is not None and self.latest.status != SubmissionStatus.GRADED


def seen(stored: StoredVerdict, status: str, revealed: bool) -> StudentView | None:
    """Return a submission's verdict as its student may see it, None until it is graded.

    One rule for every verdict of the student's pages: a submission queued again (a
    teacher's regrade) shows none until its new one is saved.
    """
    return student_view(stored, revealed) if status == SubmissionStatus.GRADED else None


@dataclass(frozen=True)
class ShownCase:
    """One case of a verdict as its student sees it (core.student_views.shown_case)."""

    record: Mapping[str, Any]
    value: bool | None  # a value case, a run case, or unknown (no longer in the lesson)

    @property
    def name(self) -> str:
        """Return the case's name."""
        return str(self.record.get("name", ""))

    @property
    def status(self) -> str:
        """Return the case's run status."""
        return str(self.record.get("status", ""))

    @property
    def passed(self) -> bool:
        """Return whether the case passed."""
        return self.status == RunStatus.PASSED

    @property
    def hidden(self) -> bool:
        """Return whether the case is a hidden one (shown or not)."""
        return bool(self.record.get("hidden"))

    @property
    def detailed(self) -> bool:
        """Return whether its input, expected and actual result may be shown."""
        return "input" in self.record

    def get(self, key: str) -> Any:
        """Return one of the record's fields (None when it is not shown)."""
        return self.record.get(key)


def shown_cases(verdict: StudentView | None, exercise: Exercise | None) -> list[ShownCase]:
    """Return a verdict's cases to list, as its student may see them; [] for none.

    An exercise without `cases` keeps its one-run verdict: its implicit case is no list.
    """
    if verdict is None or exercise is None:
        return []
    if not (exercise.has_cases or len(verdict.cases) > 1):
        return []
    kinds = {case.name: case.is_value for case in exercise.cases}
    return [ShownCase(record, kinds.get(str(record.get("name")))) for record in verdict.cases]


def lesson_page(asker: actions.Asker, placement_id: int) -> LessonPage:
    """Load the placement's lesson and this user's work on it; Refused when not theirs."""
    placement, lesson = actions.open_placement(asker, placement_id)
    store, user_id, now = asker.store, asker.user.user_id, asker.now
    draft = drafts.load(store, placement_id, user_id)
    with store.reading() as session:
        answers = {a.question_id: a for a in work.answers(session, placement_id, user_id)}
        attempts = work.attempt_rows(session, placement_id, user_id, ATTEMPTS_LISTED)
        shown = work.newest(session, placement_id, user_id, graded=True)
        # the editor opens with the draft, else the newest code (often the graded one's)
        newest = shown if shown is not None and shown.id == attempts[0].id else None
        if newest is None and draft is None and attempts:
            newest = work.newest(session, placement_id, user_id)
        used = submissions.attempts_used(session, placement_id, user_id)
        scored = grades.scored(session, placement, lesson, user_id)
        found = policy_exceptions.get(session, placement_id, user_id)
        comment = score_comments.comment(session, placement, lesson, user_id)
        figures = figure_rows.listed(session, [shown.id]).get(shown.id, []) if shown else []
    exception = found.exception if found is not None else None
    policy = policies.policy_of(placement, exception)
    revealed = actions.reveals(asker, placement, used)
    starter = lesson.exercise.starter_code if lesson.exercise else ""
    return LessonPage(
        placement=placement,
        lesson=lesson,
        policy=policy,
        exception=exception,
        answers=answers,
        attempts=attempts,
        shown=shown,
        score=scored.score,
        comment=comment,
        override=scored.override,
        attempts_used=used,
        revealed=revealed,
        closed=policy.closed(now, used, revealed),
        questions_closed=policy.closed(now),
        code=draft.source if draft else (newest.source if newest else starter),
        figures=figures,
    )


def answer_by_form(
    asker: actions.Asker, placement_id: int, form: Mapping[str, str]
) -> actions.Scored:
    """Score a question's answer sent by a plain form, as the JSON API would."""
    _placement, lesson = actions.open_placement(asker, placement_id)
    question_id = form.get("question_id", "")
    question = lesson.question(question_id)
    given = answer_from_form(question, form) if question else None
    return actions.answer(asker, placement_id, question_id, given)


def answer_from_form(question: Question, form: Mapping[str, str]) -> object:
    """Return a plain form's answer as the JSON API takes it (the form fallback of the page).

    choice: `answer` is the option's index; blank: `answer` is the fill; match: `term-<i>`
    holds the meaning picked for the i-th term.
    """
    if isinstance(question, ChoiceQuestion):
        raw = form.get("answer", "")
        # ASCII digits only: "²".isdigit() holds, and int() refuses it
        return int(raw) if raw.isascii() and raw.isdigit() and len(raw) <= 6 else raw
    if isinstance(question, MatchQuestion):
        return {
            term: form[f"term-{index}"]
            for index, term in enumerate(question.terms)
            if form.get(f"term-{index}")
        }
    return form.get("answer", "")
