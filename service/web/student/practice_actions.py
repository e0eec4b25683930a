"""What a student does with the Run button: start a practice run, follow it, see what it found.

A practice run (core.practice) is no submission: it counts as no attempt, changes no score
and reaches no LMS; it runs the student's code on their own input and on the visible cases
only, so nothing it shows was computed from a hidden case. It comes in by a submission's
doors (the placement launched, the lesson's exercise, the source's one check) with a rate of
its own, and it is allowed when a submission is not (past the due date, no attempt left,
the sample solution shown): it changes nothing. Only its author may read it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from core.lessons import Lesson
from core.messages import say, say_n
from core.practice import InputRun, input_from
from core.student_views import StudentView, stored_view
from service.queue import Message, PracticeMessage
from service.settings import Settings
from service.store import figure_rows, practice_runs, submissions
from service.store.models import PracticeRun, PracticeStatus
from service.web.student.actions import Asker, Refused, figure_json, open_placement
from service.web.student.lesson_view import ShownCase, shown_cases


@dataclass(frozen=True)
class Started:
    """A practice run just written, and what to send once it is committed: its message,
    unless it waits for its author's running one to stop (that one's end sends it)."""

    run_id: int
    follows: tuple[Message, ...] = ()


def start(asker: Asker, placement_id: int, source: str, stdin: str | None) -> Started:
    """Check the placement and the rate, then write a queued practice run (replacing the
    student's queued one). `source` and `stdin` are checked already (core.sources)."""
    user, now, settings = asker.user, asker.now, asker.settings
    placement, lesson = open_placement(asker, placement_id)
    if lesson.exercise is None:
        raise Refused(404, "no_exercise", say("This lesson has no exercise to run code for."))
    with asker.store.transaction() as connection:
        submissions.lock_author(connection, user.user_id)  # one Run at a time, as one submit
        since = now - timedelta(seconds=settings.run_window_s)
        count, oldest = practice_runs.recent(connection, user.user_id, since)
        if count >= settings.run_rate and oldest is not None:
            raise _too_often(count, math.ceil((oldest - since).total_seconds()) or 1, settings)
        created = practice_runs.queue_new(
            connection, placement.id, user.user_id, source, stdin, now
        )
    sent = (PracticeMessage(created.run_id),) if created.send else ()
    return Started(created.run_id, sent)


def _too_often(count: int, wait: int, settings: Settings) -> Refused:
    words = say_n(
        "You ran your code {num} time in {window} s; wait {wait} s before running it again.",
        "You ran your code {num} times in {window} s; wait {wait} s before running it again.",
        num=count,
        window=settings.run_window_s,
        wait=wait,
    )
    return Refused(429, "rate_limited", words, retry_after=wait)


def find(asker: Asker, run_id: int, placement_id: int | None = None) -> PracticeRun:
    """Return the practice run if the asker started it (on the placement, when one is
    named); Refused (404) for anyone else."""
    run = practice_runs.get(asker.store, run_id)
    mine = run is not None and run.user_id == asker.user.user_id
    if run is None or not mine or placement_id not in (None, run.placement_id):
        raise Refused(404, "unknown_run", say("There is no such practice run of yours."))
    return run


def shown(asker: Asker, placement_id: int, run_id: int) -> PracticeView:
    """Return the student's practice run of a placement they launched, as the page shows it."""
    _placement, lesson = open_placement(asker, placement_id)
    return viewed(asker, find(asker, run_id, placement_id), lesson)


def viewed(
    asker: Asker,
    run: PracticeRun,
    lesson: Lesson | None = None,
    link: Callable[[int], str] | None = None,
) -> PracticeView:
    """Return the practice run as its student sees it, with the figures it drew (once done).

    `link` makes a figure's URL from its id (figure_views.linker) for the JSON API; a page
    links them itself.
    """
    drawn: tuple[figure_rows.Listed, ...] = ()
    if run.status == PracticeStatus.DONE:
        with asker.store.reading() as session:
            drawn = tuple(figure_rows.run_listed(session, run.id))
    return PracticeView(run, lesson, drawn, link)


@dataclass(frozen=True)
class PracticeView:
    """A practice run as its student sees it: every case in it is a visible one. `lesson`
    (the page's) tells value cases from run cases; the JSON API needs none."""

    run: PracticeRun
    lesson: Lesson | None = None
    drawn: tuple[figure_rows.Listed, ...] = ()  # its figures (viewed() reads them)
    link: Callable[[int], str] | None = None  # a figure's URL, for the JSON API

    @property
    def status(self) -> str:
        """Return where the run is: queued, running or done (PracticeStatus)."""
        return self.run.status

    @property
    def pending(self) -> bool:
        """Return whether the run is still queued or running."""
        return self.run.status != PracticeStatus.DONE

    @property
    def waiting(self) -> bool:
        """Return whether it waits for the student's run before it to stop."""
        return self.run.status == PracticeStatus.QUEUED and self.run.enqueued_at is None

    @property
    def replaced(self) -> bool:
        """Return whether it ended unrun (or cut short): a newer run of the student's came."""
        return self.run.replaced

    @property
    def grader_failed(self) -> bool:
        """Return whether the grader, not the student's code, ended it."""
        return self.run.grader_error is not None

    @property
    def on_input(self) -> InputRun | None:
        """Return the run on the student's own input, when it made one."""
        return input_from(self.run.on_input)

    @property
    def verdict(self) -> StudentView | None:
        """Return the visible cases' verdict (None before it is done, or with no case run)."""
        if self.pending or self.run.run_status is None:
            return None
        return stored_view(self.run)

    @property
    def cases(self) -> list[ShownCase]:
        """Return the verdict's cases to list, as the lesson page lists a verdict's; [] for
        none, or for an exercise without `cases` (its one implicit case is no list)."""
        exercise = self.lesson.exercise if self.lesson else None
        if exercise is None or not exercise.has_cases:
            return []
        return shown_cases(self.verdict, exercise)

    @property
    def figures(self) -> list[dict[str, Any]]:
        """Return the figures the run drew, as a verdict's JSON lists them."""
        return [figure_json(figure, self.link) for figure in self.drawn]

    def figures_of(self, case: str | None) -> list[figure_rows.Listed]:
        """Return the figures a case drew (None: the run on the student's own input)."""
        return [figure for figure in self.drawn if figure.case == case]

    @property
    def case_figures(self) -> list[figure_rows.Listed]:
        """Return the figures its cases drew (not the run on the student's input)."""
        return [figure for figure in self.drawn if figure.case is not None]

    def as_json(self) -> dict[str, Any]:
        """Return the run as the JSON API shows it; `result` once done (None if replaced)."""
        run = self.run
        return {
            "id": run.id,
            "placement_id": run.placement_id,
            "status": run.status,
            "waiting": self.waiting,
            "replaced": run.replaced,
            "created_at": run.created_at.isoformat(),
            "finished_at": run.finished_at.isoformat() if run.finished_at else None,
            "result": None if self.pending or run.replaced else self._result(),
        }

    def _result(self) -> dict[str, Any]:
        verdict, own = self.verdict, self.on_input
        shown: Any = own or verdict
        return {
            "status": verdict.status if verdict else None,
            # the output of the run on the student's input, else of the first case, as a
            # verdict's (`output_case` names it)
            "stdout": shown.stdout if shown else "",
            "stderr": shown.stderr if shown else "",
            "exit_code": shown.exit_code if shown else None,
            "output_case": None if own or verdict is None else verdict.output_case,
            "duration_ms": self.run.duration_ms,
            "feedback": verdict.feedback if verdict else "",
            "first_difference": verdict.diff if verdict else None,
            "grader_failed": self.grader_failed,
            "cases": list(verdict.cases) if verdict else [],
            "input": None if own is None else {"stdin": self.run.stdin, **own.record()},
            "figures": self.figures,
        }


def latest(asker: Asker, placement_id: int, lesson: Lesson) -> PracticeView | None:
    """Return the student's newest practice run of the placement, as the lesson page shows it."""
    with asker.store.reading() as session:
        run = practice_runs.latest(session, placement_id, asker.user.user_id)
    return None if run is None else viewed(asker, run, lesson)
