"""A student's attempts on a placement, as they see them: the list, page by page, and one
attempt whole (its code, its verdict, the change from the attempt before it), which they may
put back in the editor.

Only the author's own submissions on this placement are found: another student's, or one of
another placement (another lesson), is "no such attempt of yours" (404), as one that does
not exist. A verdict here is the student's view (core.student_views), with the page's one
reveal decision (actions.reveals) and no score while the placement holds its scores: never
more than the verdict on the lesson page shows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from core.code_changes import Changes, compare
from core.lessons import Lesson
from core.messages import say
from core.student_views import StudentView
from service.store import drafts, figure_rows, work
from service.store.models import Placement, Submission
from service.store.work import Attempt, AttemptRow
from service.web.student import actions
from service.web.student.actions import Refused
from service.web.student.lesson_view import ShownCase, seen, shown_cases

ATTEMPTS_A_PAGE = 25  # each row reads its verdict's cases (up to the output limit each)


@dataclass(frozen=True)
class AttemptList:
    """One page of a student's attempts on a placement, newest first."""

    placement: Placement
    lesson: Lesson
    attempts: list[AttemptRow]
    count: int  # all of them
    page: int  # from 1
    revealed: bool

    @property
    def pages(self) -> int:
        """Return how many pages the attempts fill (1 for none)."""
        return max(1, math.ceil(self.count / ATTEMPTS_A_PAGE))

    def seen(self, row: AttemptRow) -> StudentView | None:
        """Return an attempt's verdict as its student may see it (None until it is graded)."""
        return seen(row, row.status, self.revealed)


@dataclass(frozen=True)
class AttemptPage:
    """One attempt as its student sees it, with the change from the attempt before it."""

    placement: Placement
    lesson: Lesson
    attempt: Attempt
    revealed: bool
    changes: Changes | None  # None for the first attempt
    figures: list[figure_rows.Listed]  # what its visible cases drew

    @property
    def submission(self) -> Submission:
        """Return the attempt's submission row."""
        return self.attempt.submission

    @property
    def number(self) -> int:
        """Return the attempt's number, the first 1."""
        return self.attempt.number

    @property
    def held(self) -> bool:
        """Return whether the placement holds its scores (no score is shown)."""
        return self.placement.holds_scores

    @property
    def verdict(self) -> StudentView | None:
        """Return the attempt's verdict as its student may see it (None until it is graded)."""
        return seen(self.submission, self.submission.status, self.revealed)

    @property
    def cases(self) -> list[ShownCase]:
        """Return the verdict's cases to list, as the lesson page lists them; [] for none."""
        return shown_cases(self.verdict, self.lesson.exercise)

    def as_json(self) -> dict[str, Any]:
        """Return the attempt for the JSON API: GET /api/submissions/<id>'s answer, and its
        number, code and neighbours."""
        previous = self.attempt.previous
        return {
            **actions.describe(self.submission, self.revealed, self.held),
            "number": self.number,
            "source": self.submission.source,
            "previous_id": previous[0] if previous else None,
            "next_id": self.attempt.next_id,
        }


def attempt_list(asker: actions.Asker, placement_id: int, page: int) -> AttemptList:
    """Return a page of the student's attempts on the placement; Refused when not theirs."""
    placement, lesson = actions.open_placement(asker, placement_id)
    user_id = asker.user.user_id
    page = max(page, 1)
    with asker.store.reading() as session:
        count = work.attempt_count(session, placement_id, user_id)
        offset = (page - 1) * ATTEMPTS_A_PAGE
        rows = work.attempt_rows(session, placement_id, user_id, ATTEMPTS_A_PAGE, offset)
    if page > 1 and not rows:
        raise Refused(404, "unknown_page", say("There is no such page of your attempts."))
    revealed = actions.reveals(asker, placement)
    return AttemptList(placement, lesson, rows, count, page, revealed)


def attempt_page(asker: actions.Asker, placement_id: int, submission_id: int) -> AttemptPage:
    """Return one of the student's attempts on the placement; Refused (404) when not theirs."""
    placement, lesson = actions.open_placement(asker, placement_id)
    with asker.store.reading() as session:
        found = work.attempt(session, placement_id, asker.user.user_id, submission_id)
        figures = figure_rows.listed(session, [submission_id]).get(submission_id, [])
    if found is None:
        raise _unknown()
    # only a verdict with a hidden case withheld is worth the reveal's queries
    revealed = actions.withholds(found.submission) and actions.reveals(asker, placement)
    changes = compare(found.previous[1], found.submission.source) if found.previous else None
    return AttemptPage(placement, lesson, found, revealed, changes, figures)


def restore(asker: actions.Asker, placement_id: int, submission_id: int) -> None:
    """Put an attempt's code back in the editor: keep it as the draft.

    Nothing is submitted; the code the editor held is replaced, as typing would.
    """
    actions.open_placement(asker, placement_id)
    user_id = asker.user.user_id
    with asker.store.reading() as session:
        source = work.attempt_source(session, placement_id, user_id, submission_id)
    if source is None:
        raise _unknown()
    drafts.save(asker.store, placement_id, user_id, source, asker.now)


def _unknown() -> Refused:
    return Refused(404, "unknown_attempt", say("There is no such attempt of yours."))
