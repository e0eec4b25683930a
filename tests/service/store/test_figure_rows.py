"""The figures of a verdict or a practice run in the store, on SQLite and PostgreSQL: written
with the verdict (or the run's result), replaced with it, listed in order without their bytes,
found with whose they are, and gone with their owner."""

from dataclasses import replace
from datetime import timedelta

import pytest
from sqlalchemy import delete, func, insert, select
from sqlalchemy.exc import IntegrityError

from core.figures import Figure
from core.practice import InputRun, Practice
from core.runs import RunOutcome, RunStatus
from service.store import figure_rows, practice_runs, submissions
from service.store.models import (
    FigureImage,
    Placement,
    PracticeRun,
    Submission,
    SubmissionStatus,
    User,
    utcnow,
)
from testkit import factories


def drawn(*alts: str, hidden: bool = False, case: str = "output"):
    """A verdict of one case that drew a figure per alt (a hidden case's would keep none)."""
    verdict = factories.verdict(RunStatus.PASSED)
    figures = tuple(Figure(f"png:{alt}".encode(), 64, 48, alt) for alt in alts)
    cases = (replace(verdict.cases[0], name=case, hidden=hidden, figures=figures),)
    return replace(verdict, cases=cases)


def graded(store, placed, verdict):
    submission_id = factories.submission(store, placed.placement_id, placed.user_id)
    claim = submissions.claim(store, submission_id, 30, utcnow())
    assert submissions.finish(store, claim, verdict, utcnow()).saved
    return submission_id


def count(store) -> int:
    with store.reading() as session:
        return session.scalar(select(func.count(FigureImage.id)))


def listed(store, *submission_ids):
    with store.reading() as session:
        return figure_rows.listed(session, submission_ids)


def test_a_verdict_s_figures_are_kept_in_order_and_found_with_their_owner(store):
    placed = factories.place(store)
    submission_id = graded(store, placed, drawn("first", "second"))
    other = graded(store, placed, drawn())
    found = listed(store, submission_id, other)
    assert list(found) == [submission_id]  # one that drew nothing has no key
    assert [(f.case, f.width, f.height, f.alt) for f in found[submission_id]] == [
        ("output", 64, 48, "first"),
        ("output", 64, 48, "second"),
    ]
    with store.reading() as session:
        course_id = session.get(Placement, placed.placement_id).course_id
    first = figure_rows.find(store, found[submission_id][0].id)
    assert first == figure_rows.Found(b"png:first", placed.user_id, course_id)
    assert figure_rows.find(store, 10**9) is None


def test_a_new_verdict_replaces_the_figures_and_a_grader_failure_leaves_none(store):
    placed = factories.place(store)
    submission_id = graded(store, placed, drawn("old", "older"))
    for verdict, alts in ((drawn("new"), ["new"]), (drawn(), [])):
        with store.session() as session:  # queued again, as a regrade queues it
            row = session.get(Submission, submission_id)
            row.status = SubmissionStatus.QUEUED
        claim = submissions.claim(store, submission_id, 30, utcnow())
        assert submissions.finish(store, claim, verdict, utcnow()).saved
        assert [f.alt for f in listed(store, submission_id).get(submission_id, [])] == alts
    with store.session() as session:
        session.get(Submission, submission_id).status = SubmissionStatus.QUEUED
    claim = submissions.claim(store, submission_id, 30, utcnow())
    submissions.finish(store, claim, drawn("again"), utcnow())
    claim = replace(claim, token="stale")  # a worker whose lease was taken over saves nothing
    assert not submissions.finish(store, claim, drawn("late"), utcnow()).saved
    assert [f.alt for f in listed(store, submission_id)[submission_id]] == ["again"]
    with store.session() as session:
        session.get(Submission, submission_id).status = SubmissionStatus.QUEUED
    claim = submissions.claim(store, submission_id, 30, utcnow())
    assert submissions.fail(store, claim, "the sandbox broke", utcnow()).saved
    assert listed(store, submission_id) == {} and count(store) == 0


def test_a_hidden_case_s_figures_are_never_stored(store):
    placed = factories.place(store)
    graded(store, placed, drawn("secret", hidden=True))
    assert count(store) == 0


def test_figures_go_with_their_submission_s_user_or_placement(store):
    placed = factories.place(store)
    graded(store, placed, drawn("a"))
    other = factories.place(store)
    graded(store, other, drawn("b", "c"))
    assert count(store) == 3
    with store.session() as session:
        session.execute(delete(User).where(User.id == placed.user_id))
    assert count(store) == 2
    with store.session() as session:
        session.execute(delete(Placement).where(Placement.id == other.placement_id))
    assert count(store) == 0


def run_drawn(store, placed, on_input=(), in_case=(), now=None):
    """A practice run of the student's that drew on their input and in its one visible case."""
    with store.transaction() as connection:
        created = practice_runs.queue_new(
            connection, placed.placement_id, placed.user_id, "print(1)", "3 4\n", now or utcnow()
        )
    claim = practice_runs.claim(store, created.run_id, 30, utcnow())
    figures = tuple(Figure(f"png:{alt}".encode(), 32, 24, alt) for alt in on_input)
    own = InputRun(RunOutcome.EXITED, "", "", 0, 5, figures=figures)
    practice = Practice(own, drawn(*in_case, case="shout"))
    assert practice_runs.finish(store, claim, practice, utcnow()).saved
    return created.run_id


def test_a_practice_run_s_figures_are_its_own_found_with_its_author_and_purged_with_it(store):
    placed = factories.place(store)
    submission_id = graded(store, placed, drawn("graded"))
    now = utcnow()
    run_id = run_drawn(store, placed, on_input=["mine", "same"], in_case=["case", "same"])
    with store.reading() as session:
        kept = figure_rows.run_listed(session, run_id)
        course_id = session.get(Placement, placed.placement_id).course_id
    # the input's first, then the case's; the same picture twice is kept once
    assert [(f.case, f.alt) for f in kept] == [(None, "mine"), (None, "same"), ("shout", "case")]
    assert figure_rows.find(store, kept[0].id) == figure_rows.Found(
        b"png:mine", placed.user_id, course_id
    )
    # a run's figures are not a submission's, nor the other way round
    assert [f.alt for f in listed(store, submission_id)[submission_id]] == ["graded"]
    old = run_drawn(store, placed, on_input=["old"], now=now - timedelta(days=2))
    with store.reading() as session:
        assert [f.alt for f in figure_rows.run_listed(session, old)] == ["old"]
    assert count(store) == 5
    assert practice_runs.purge(store, now - timedelta(days=1)) == 1
    assert count(store) == 4  # the purged run's figure went with it
    with store.session() as session:
        session.execute(delete(PracticeRun).where(PracticeRun.id == run_id))
    assert count(store) == 1


@pytest.mark.parametrize("owners", [{}, {"both": True}])
def test_a_figure_has_exactly_one_owner(store, owners):
    placed = factories.place(store)
    submission_id = graded(store, placed, drawn())
    run_id = run_drawn(store, placed)
    row = {"position": 1, "width": 1, "height": 1, "alt": "", "png": b"x", "created_at": utcnow()}
    if owners:
        row |= {"submission_id": submission_id, "practice_run_id": run_id}
    with pytest.raises(IntegrityError), store.transaction() as connection:
        connection.execute(insert(FigureImage), [row])
