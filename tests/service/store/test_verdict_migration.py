"""Migration 0011: a verdict stored once (issue 28, point 3).

Rows written as revision 0010 held them (the English feedback beside its text, or alone;
the output, score and difference beside the cases, or without cases) are migrated and read
back through the product's readers: the JSON API's verdict and the teacher's page show
what they showed before, value for value.
"""

from datetime import datetime

import sqlalchemy as sa
from alembic import command

from core.student_views import stored_view
from service.store.case_tallies import tally
from service.store.migrate import config, upgrade
from service.store.models import Submission
from service.web.student.actions import describe
from testkit.factories import place

AT = datetime(2026, 11, 20, 9, 0)
SHOWN = {"name": "shown", "status": "passed", "weight": 1.0, "hidden": False,
         "feedback": "Case 'shown' passed.", "input": "", "expected": "ok\n", "got": "ok\n",
         "stdout": "ok\n", "stderr": "", "exit_code": 0, "duration_ms": 4,
         "diff": None}  # fmt: skip
SECRET = {"name": "secret", "status": "failed", "weight": 3.0, "hidden": True,
          "feedback": "Hidden case 'secret' failed.", "input": "41", "expected": "42\n",
          "got": "43\n", "stdout": "43\n", "stderr": "", "exit_code": 0, "duration_ms": 5,
          "diff": {"line": 1, "expected": "42", "got": "43"}}  # fmt: skip
MATCHES = {"t": "Your output matches.", "a": {}}
OLD = {
    # graded before cases or texts were kept: one run's output, score and difference
    1: dict(run_status="failed", score=0.0, stdout="43\n", stderr="warning\n", exit_code=0,
            duration_ms=30, feedback="Line 1 differs: expected `42`, got `43`.",
            feedback_message=None, diff_line=1, diff_expected="42", diff_got="43", cases=None),
    # a share of the points without cases (several cases, before they were kept)
    2: dict(run_status="failed", score=0.5, stdout="", stderr="", exit_code=None,
            duration_ms=2000, feedback="1 of 2 cases passed (50% of the points).",
            feedback_message=None, diff_line=None, diff_expected=None, diff_got=None,
            cases=None),
    # cases kept, texts not yet, and the output lent by a hidden first case (as before
    # 78f5c2a): shown as it was
    3: dict(run_status="failed", score=0.25, stdout="43\n", stderr="", exit_code=0,
            duration_ms=9, feedback="1 of 2 cases passed (25% of the points).",
            feedback_message=None, diff_line=None, diff_expected=None, diff_got=None,
            cases=[SECRET, SHOWN]),
    # as today's grader stores it: nothing to move
    4: dict(run_status="failed", score=0.25, stdout="ok\n", stderr="", exit_code=0,
            duration_ms=9, feedback="Your output matches.", feedback_message=MATCHES,
            diff_line=None, diff_expected=None, diff_got=None, cases=[SHOWN, SECRET]),
    # the grader failed: no case ran
    5: dict(run_status="error", score=0.0, stdout="", stderr="", exit_code=None,
            duration_ms=0, feedback="The grader could not run your submission.",
            feedback_message={"t": "The grader could not run your submission.", "a": {}},
            diff_line=None, diff_expected=None, diff_got=None, cases=None,
            grader_error="GraderError: gone"),
    # a text that does not read back: its English was shown
    6: dict(run_status="passed", score=1.0, stdout="ok\n", stderr="", exit_code=0,
            duration_ms=4, feedback="Your output matches.", feedback_message={"t": 5},
            diff_line=None, diff_expected=None, diff_got=None, cases=[SHOWN]),
}  # fmt: skip


def old_reader(row: dict) -> dict:
    """Return the API's verdict as revision 0010's reader made it of a row, all revealed."""
    diff = None
    if row["diff_line"] is not None:
        diff = {"line": row["diff_line"], "expected": row["diff_expected"], "got": row["diff_got"]}
    cases = row["cases"] or []
    return {
        "status": row["run_status"],
        "score": row["score"],
        "stdout": row["stdout"],
        "stderr": row["stderr"],
        "exit_code": row["exit_code"],
        "duration_ms": row["duration_ms"],
        "feedback": row["feedback"],
        "first_difference": diff,
        "grader_failed": row.get("grader_error") is not None,
        "cases": cases,
        "output_case": next((c["name"] for c in cases if not c["hidden"]), None),
        "figures": [],  # an old verdict drew none
    }


def graded(placed) -> dict:
    """Return the columns, but the verdict's, of a graded submission of `placed`'s student."""
    return dict(placement_id=placed.placement_id, user_id=placed.user_id, source="print(1)",
                status="graded", queue="grade", late=False, created_at=AT, enqueued_at=AT,
                claims=1, gradings=1, regrades=0, graded_at=AT)  # fmt: skip


def at(store, revision):
    cfg = config()
    with store.engine.begin() as connection:
        cfg.attributes["connection"] = connection
        command.downgrade(cfg, revision)


def test_old_verdicts_read_back_as_they_were_shown(store):
    placed = place(store)  # the rows of today's models, kept as later revisions come off
    at(store, "0010")
    base = graded(placed)
    with store.engine.begin() as connection:
        table = sa.Table("submissions", sa.MetaData(), autoload_with=connection)
        for number, row in OLD.items():
            # one student each: every row is its student's latest, for the tally
            user = connection.execute(
                sa.text(
                    "INSERT INTO users (platform_id, sub, name, email) "
                    "VALUES (:platform, :sub, '', '') RETURNING id"
                ),
                {"platform": placed.platform_id, "sub": f"old-{number}"},
            ).scalar_one()
            connection.execute(table.insert(), {**base, "id": number, "user_id": user, **row})
    upgrade(store)
    columns = {column["name"] for column in sa.inspect(store.engine).get_columns("submissions")}
    assert not columns & {"stdout", "stderr", "exit_code", "feedback", "diff_got"}
    with store.session() as session:
        for number, row in OLD.items():
            submission = session.get(Submission, number)
            assert describe(submission, revealed=True)["verdict"] == old_reader(row), number
            view = stored_view(submission)  # the teacher's page
            assert (view.feedback, view.score, view.stdout, view.stderr, view.exit_code) == (
                row["feedback"], row["score"], row["stdout"], row["stderr"], row["exit_code"]
            ), number  # fmt: skip
        # before a reveal, the hidden case shows as a pass or fail only, as before
        withheld = describe(session.get(Submission, 3), revealed=False)["verdict"]
        assert [c["name"] for c in withheld["cases"]] == ["secret", "shown"]
        assert set(withheld["cases"][0]) == {"name", "status", "weight", "hidden", "feedback",
                                             "feedback_message"}  # fmt: skip
        assert (withheld["stdout"], withheld["score"]) == ("43\n", 0.25)
        # a verdict from before cases were kept is still counted as one without them
        counted = tally(session, placed.placement_id, ["shown", "secret"])
        assert (counted.students, counted.unrecorded) == (3, 2)


def test_a_downgrade_gives_the_columns_back(store):
    placed = place(store)  # the rows of today's models, kept as later revisions come off
    at(store, "0010")
    row = {**graded(placed), **OLD[1]}
    with store.engine.begin() as connection:
        table = sa.Table("submissions", sa.MetaData(), autoload_with=connection)
        connection.execute(table.insert(), {"id": 1, **row})
    upgrade(store)
    at(store, "0010")
    with store.engine.begin() as connection:
        table = sa.Table("submissions", sa.MetaData(), autoload_with=connection)
        back = connection.execute(sa.select(table)).mappings().one()
    names = ("score", "stdout", "stderr", "exit_code", "feedback", "diff_line", "diff_got")
    assert {name: back[name] for name in names} == {name: OLD[1][name] for name in names}
    upgrade(store)
