"""The teacher's pages through the Flask test client: access, gradebook, CSV, resend, settings,
and the regrade with its preview."""

import csv
import io
from dataclasses import replace

import pytest
from sqlalchemy import select, update

from core.runs import RunStatus
from service.queue import TaskName
from service.store import grades
from service.store.models import (
    Course,
    GradeSync,
    Membership,
    Placement,
    QuestionAnswer,
    Regrade,
    Submission,
    User,
    utcnow,
)
from service.web import extensions
from testkit.celery import Sent
from testkit.factories import add_student, place
from testkit.sessions import sign_in
from tests.service.sessions import form_token, grade, text_of
from tests.service.web import two_stores

# every test here runs on SQLite and on PostgreSQL
database_url, store = two_stores.database_url, two_stores.store
celery_app, sent = two_stores.celery_app, two_stores.sent  # every send recorded

LESSON = "expert/what-is-attention"


@pytest.fixture
def course(store):
    """A course with the seed lesson placed, two students (one never started), a teacher."""
    placed = place(store, lesson_id=LESSON)
    quiet = add_student(store, placed, "student-2")
    teacher = add_student(store, placed, "teacher-1")
    with store.session() as session:
        placement = session.get(Placement, placed.placement_id)
        course_id = placement.course_id
        session.execute(update(User).where(User.id == quiet).values(name="Berna"))
        for user_id, is_teacher in ((placed.user_id, False), (quiet, False), (teacher, True)):
            session.add(Membership(course_id=course_id, user_id=user_id, teacher=is_teacher))
    return replace(placed, platform_id=course_id), teacher, quiet


def course_id_of(course):
    return course[0].platform_id  # the fixture keeps the course id there


@pytest.fixture
def teacher(client, course):
    placed, teacher_id, _ = course
    sign_in(client, teacher_id, teaches=[course_id_of(course)])
    return placed


def work(store, placed, answer=True, submission=RunStatus.PASSED):
    """Give the first student an answer and a graded submission."""
    with store.session() as session:
        if answer:
            session.add(QuestionAnswer(placement_id=placed.placement_id, user_id=placed.user_id,
                                       question_id="rnn-advantage", answer=1, earned=1.0,
                                       possible=1.0))  # fmt: skip
        row = Submission(placement_id=placed.placement_id, user_id=placed.user_id, source="x")
        session.add(row)
        session.flush()
        submission_id = row.id
    grade(store, submission_id, submission)
    return submission_id


def routes(course):
    placed, _, student_id = course
    course_id, placement_id = course_id_of(course), placed.placement_id
    return [
        ("get", f"/teach/courses/{course_id}"),
        ("get", f"/teach/courses/{course_id}/gradebook.csv"),
        ("post", f"/teach/courses/{course_id}/resend"),
        ("get", f"/teach/placements/{placement_id}"),
        ("post", f"/teach/placements/{placement_id}/settings"),
        ("get", f"/teach/placements/{placement_id}/students/{student_id}"),
        ("post", f"/teach/placements/{placement_id}/students/{student_id}/exception"),
        ("post", f"/teach/courses/{course_id}/exceptions"),
        ("post", f"/teach/placements/{placement_id}/students/{student_id}/override"),
        ("post", f"/teach/placements/{placement_id}/students/{student_id}/override/remove"),
        ("post", f"/teach/placements/{placement_id}/students/{student_id}/override/keep"),
        ("get", f"/teach/placements/{placement_id}/regrade"),
        ("get", f"/teach/placements/{placement_id}/regrade.json"),
        ("post", f"/teach/placements/{placement_id}/regrade"),
        ("post", f"/teach/placements/{placement_id}/regrade/send"),
    ]


@pytest.mark.parametrize("who", ["nobody", "student", "teacher-of-another-course"])
def test_teacher_routes_refuse_everyone_else(client, store, course, sent, who):
    placed = course[0]
    if who == "student":
        sign_in(client, placed.user_id, [placed.placement_id])
    elif who == "teacher-of-another-course":
        other = place(store, lesson_id=LESSON)
        with store.session() as session:
            other_course = session.get(Placement, other.placement_id).course_id
        sign_in(client, other.user_id, teaches=[other_course])
    for method, url in routes(course):
        answer = getattr(client, method)(url)
        assert answer.status_code == (401 if who == "nobody" else 403), (method, url)
        assert "Gradebook" not in answer.get_data(as_text=True)
    assert sent == []


def test_the_gradebook_shows_scores_attempts_activity_and_sync_status(client, store, teacher):
    work(store, teacher)
    with store.session() as session:
        session.add(GradeSync(placement_id=teacher.placement_id, user_id=teacher.user_id,
                              status="failed", last_error="HTTP 502 <from> the LMS"))  # fmt: skip
    page = client.get(f"/teach/courses/{teacher.platform_id}").get_data(as_text=True)
    text = text_of(page, spaced=True)
    assert "What is attention? out of 8" in text
    assert "Ada 6 1 attempt" in text  # 1 question + the exercise's 5 points
    assert "Berna not started" in text
    table = text_of(page.split("<table")[1].split("</table>")[0], spaced=True)
    assert "teacher-1" not in table  # staff are not students
    assert "Signed in as teacher-1" in text  # but the page says whose session it is
    assert "LMS: failed" in text and "HTTP 502 &lt;from&gt; the LMS" in page
    assert "Resend the 1 score that failed or that the LMS lost" in text
    assert text.count("Resend") == 2
    # no roster service in this course: the page says so, softly
    assert "The LMS offers no roster for this course" in text


def test_the_gradebook_adds_up_as_the_grade_sync_does(client, store, teacher):
    late = place(store, lesson_id=LESSON, late_penalty=0.5)
    for placed in (teacher, late):
        work(store, placed, submission=RunStatus.PASSED)
    with store.session() as session:
        session.execute(update(Submission).values(late=True))
        session.execute(update(QuestionAnswer).values(late=True))
    from service.web.teacher import course_gradebook

    catalog = extensions.catalog(client.application)
    for placed in (teacher, late):
        with store.session() as session:
            placement = session.get(Placement, placed.placement_id)
            expected = grades.score(session, placement, catalog.lesson(LESSON), placed.user_id)
        book = course_gradebook.build(store, catalog, placement.course_id)
        [row] = [r for r in book.rows if r.user_id == placed.user_id]
        assert row.cells[0].score == expected
    assert expected.given == 3.0  # half of 6, late


def test_csv_export_has_every_student_and_defuses_formulas(client, store, teacher):
    work(store, teacher)
    with store.session() as session:
        session.execute(update(User).where(User.id == teacher.user_id)
                        .values(name="=HYPERLINK(\"http://evil\")", email="+1@x"))  # fmt: skip
    answer = client.get(f"/teach/courses/{teacher.platform_id}/gradebook.csv")
    assert answer.status_code == 200 and answer.mimetype == "text/csv"
    assert "attachment" in answer.headers["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(answer.get_data(as_text=True))))
    assert rows[0] == [
        "Student",
        "Email",
        "What is attention? (out of 8)",
        "What is attention?: LMS",
        "What is attention?: override",
    ]
    # no line item: the grade was kept, its sync skipped, as it was saved
    assert ['\'=HYPERLINK("http://evil")', "'+1@x", "6", "skipped", ""] in rows
    assert ["Berna", "", "", "", ""] in rows


def test_csv_header_follows_the_viewer_and_its_cells_stay_machine_readable(client, store, teacher):
    work(store, teacher)
    client.environ_base["HTTP_ACCEPT_LANGUAGE"] = "tr"
    answer = client.get(f"/teach/courses/{teacher.platform_id}/gradebook.csv")
    rows = list(csv.reader(io.StringIO(answer.get_data(as_text=True))))
    assert rows[0] == [
        "Öğrenci",
        "E-posta",
        "What is attention? (8 üzerinden)",
        "What is attention?: LMS",
        "What is attention?: elle verilen puan",
    ]
    assert [row[2:] for row in rows[1:] if row[2]] == [["6", "skipped", ""]]  # the columns' order


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        ("=1+1", "'=1+1"),
        ("+1", "'+1"),
        ("-1", "'-1"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "'\t'=1"),
        ("\r=1", "'\r'=1"),
        # a ";" locale (Turkish, German Excel) splits here and would run the second cell
        ("x;=1+1", "x;'=1+1"),
        ("Ali; =cmd|' /C calc'!A0", "Ali; '=cmd|' /C calc'!A0"),
        ("a,+1", "a,'+1"),
        ("a\t-1", "a\t'-1"),
        ("a|@x", "a|'@x"),
        ("line\n=2", "line\n'=2"),
        ("Ada =1+1", "Ada =1+1"),
        ("Ayşe-Nur Öztürk", "Ayşe-Nur Öztürk"),
        ("ali+tag@example.org", "ali+tag@example.org"),
    ],
)
def test_csv_cells_that_look_like_formulas_become_text(value, cell):
    from service.web.teacher.course_gradebook import _cell

    assert _cell(value) == cell


def test_csv_in_a_semicolon_locale_has_no_formula_cell(client, store, teacher):
    work(store, teacher)
    with store.session() as session:
        session.execute(update(User).where(User.id == teacher.user_id)
                        .values(name="Ali;=1+1", email="x; +SUM(A1)"))  # fmt: skip
    text = client.get(f"/teach/courses/{teacher.platform_id}/gradebook.csv").get_data(as_text=True)
    # what Excel with ";" as its list separator makes of it: every cell, quotes or not
    cells = [cell.strip().strip('"') for line in text.splitlines() for cell in line.split(";")]
    cells += [c for line in text.splitlines() for c in next(csv.reader([line], delimiter=";"))]
    assert not [cell for cell in cells if cell.lstrip().startswith(("=", "+", "-", "@"))]


def test_resend_makes_failed_syncs_pending_again_and_enqueues_them(client, store, teacher, sent):
    other = place(store, lesson_id=LESSON)  # another course's failure stays as it is
    with store.session() as session:
        for placed in (teacher, other):
            session.add(GradeSync(placement_id=placed.placement_id, user_id=placed.user_id,
                                  status="failed", attempts=8, last_error="down"))  # fmt: skip
    page = client.get(f"/teach/courses/{teacher.platform_id}").get_data(as_text=True)
    url = f"/teach/courses/{teacher.platform_id}/resend"
    assert client.post(url, data={"placement_id": str(teacher.placement_id)}).status_code == 400
    answer = client.post(
        url, data={"csrf": form_token(page), "placement_id": str(other.placement_id)}
    )
    assert answer.status_code == 303 and sent == []
    answer = client.post(url, data={"csrf": form_token(page),
                                    "placement_id": str(teacher.placement_id),
                                    "user_id": str(teacher.user_id)})  # fmt: skip
    assert answer.status_code == 303 and "resent=1" in answer.headers["Location"]
    assert sent == [Sent(TaskName.SYNC_GRADE, [teacher.user_id, teacher.placement_id],
                         options={"queue": "sync"})]  # fmt: skip
    with store.session() as session:
        rows = {r.placement_id: (r.status, r.attempts) for r in session.scalars(select(GradeSync))}
    assert rows == {teacher.placement_id: ("pending", 0), other.placement_id: ("failed", 8)}
    assert "1 grade sync sent again" in client.get(answer.headers["Location"]).get_data(
        as_text=True
    )


def test_the_gradebook_shows_what_the_lms_holds_while_a_newer_score_is_on_its_way(
    client, store, teacher
):
    from core.lesson_scores import LessonScore

    now = utcnow()
    with store.session() as session:
        grades.save_grade(session, teacher.placement_id, teacher.user_id, LessonScore(6, 8), now)
        grades.end_turn(
            session, teacher.placement_id, teacher.user_id, accepted=LessonScore(1, 8), at=now
        )
        session.add(GradeSync(placement_id=teacher.placement_id, user_id=teacher.user_id,
                              status="pending", score_given=6.0, score_maximum=8.0,
                              last_error="HTTP 503 Service Unavailable"))  # fmt: skip
    text = text_of(
        client.get(f"/teach/courses/{teacher.platform_id}").get_data(as_text=True), spaced=True
    )
    assert "LMS: pending" in text and "the LMS shows 1" in text
    with store.session() as session:
        grades.end_turn(
            session, teacher.placement_id, teacher.user_id, accepted=LessonScore(6, 8), at=now
        )
        session.execute(update(GradeSync).values(status="sent", last_error=None))
    text = text_of(
        client.get(f"/teach/courses/{teacher.platform_id}").get_data(as_text=True), spaced=True
    )
    assert "LMS: sent" in text and "the LMS shows 1" not in text  # it holds what was sent
    assert "the LMS shows 6" not in text


def test_a_grader_error_shows_the_teacher_that_it_is_retried(client, store, teacher):
    from service.store import submissions

    with store.session() as session:
        row = Submission(placement_id=teacher.placement_id, user_id=teacher.user_id, source="x")
        session.add(row)
        session.flush()
        submission_id = row.id
    claimed = submissions.claim(store, submission_id, 60, utcnow())
    problem = "GraderError: the sandbox could not start"
    assert submissions.release(store, claimed, utcnow(), problem=problem)
    url = f"/teach/placements/{teacher.placement_id}/students/{teacher.user_id}"
    text = text_of(client.get(url).get_data(as_text=True), spaced=True)
    assert "grader error, retrying" in text and "the sandbox could not start" in text


def test_a_students_submissions_in_full_for_the_teacher(client, store, teacher, course):
    submission_id = work(store, teacher, submission=RunStatus.FAILED)
    with store.session() as session:
        session.execute(update(Submission).where(Submission.id == submission_id)
                        .values(source="print('<b>hi</b>')"))  # fmt: skip
    url = f"/teach/placements/{teacher.placement_id}/students/{teacher.user_id}"
    page = client.get(url).get_data(as_text=True)
    text = text_of(page, spaced=True)
    assert "Output differs, 0%" in text and "failed feedback" in text
    assert "&lt;b&gt;hi&lt;/b&gt;" in page and "<b>hi</b>" not in page
    assert "It relates distant positions in one step" in text  # the answer, in words
    stranger = place(store, lesson_id=LESSON).user_id
    assert (
        client.get(f"/teach/placements/{teacher.placement_id}/students/{stranger}").status_code
        == 404
    )


def test_the_placement_page_shows_a_histogram_and_the_commonest_failing_line(
    client, store, teacher
):
    from core.compare import LineDiff

    work(store, teacher, submission=RunStatus.PASSED)
    with store.session() as session:
        rows = [Submission(placement_id=teacher.placement_id, user_id=teacher.user_id, source="x")
                for _ in range(3)]  # fmt: skip
        session.add_all(rows)
        session.flush()
        ids = [r.id for r in rows]
    for i, submission_id in enumerate(ids):
        line = 2 if i else 1
        grade(store, submission_id, RunStatus.FAILED,
              diff=LineDiff(line, f"expected {line}", "got", "d"))  # fmt: skip
    text = text_of(client.get(f"/teach/placements/{teacher.placement_id}").get_data(as_text=True),
                   spaced=True)  # fmt: skip
    assert "1 of 2 students have started" in text
    assert "70–79% 1" in text  # 6 of 8 points
    assert text.index("Line 2, expected expected 2 : 2 submissions by 1 student") < text.index(
        "Line 1, expected expected 1 : 1 submission by 1 student"
    )


@pytest.mark.parametrize(
    ("form", "errors"),
    [
        ({"reveal": "never", "late": "refuse"}, {}),
        ({"reveal": "sometimes", "late": "refuse"}, {"reveal"}),
        # answers shown while attempts are left would be worth points: a maximum is needed,
        # and the reveal comes with the last attempt
        ({"reveal": "after_attempts", "late": "refuse"}, {"max_attempts"}),
        (
            {"reveal": "after_attempts", "reveal_after_attempts": "3", "late": "refuse"},
            {"max_attempts"},
        ),  # fmt: skip
        (
            {
                "reveal": "after_attempts",
                "reveal_after_attempts": "1",
                "max_attempts": "3",
                "late": "refuse",
            },
            {"reveal_after_attempts"},
        ),  # fmt: skip
        (
            {
                "reveal": "after_attempts",
                "reveal_after_attempts": "3",
                "max_attempts": "3",
                "late": "refuse",
            },
            set(),
        ),  # fmt: skip
        ({"reveal": "after_attempts", "max_attempts": "3", "late": "refuse"}, set()),
        (
            {
                "reveal": "after_attempts",
                "reveal_after_attempts": "3",
                "max_attempts": "2",
                "late": "refuse",
            },
            {"reveal_after_attempts"},
        ),  # fmt: skip
        ({"reveal": "never", "max_attempts": "0", "late": "refuse"}, {"max_attempts"}),
        ({"reveal": "never", "max_attempts": "1.5", "late": "refuse"}, {"max_attempts"}),
        ({"reveal": "never", "max_attempts": "1001", "late": "refuse"}, {"max_attempts"}),
        ({"reveal": "after_due", "late": "refuse"}, {"due_at"}),
        ({"reveal": "never", "due_at": "31/01/2027", "late": "refuse"}, {"due_at"}),
        ({"reveal": "never", "late": "accept", "late_penalty": ""}, {"late_penalty"}),
        ({"reveal": "never", "late": "accept", "late_penalty": "101"}, {"late_penalty"}),
        ({"reveal": "never", "late": "accept", "late_penalty": "nan"}, {"late_penalty"}),
        # digits of other scripts, and numbers too long for int(): refused, never a 500
        ({"reveal": "never", "max_attempts": "²", "late": "refuse"}, {"max_attempts"}),
        ({"reveal": "never", "max_attempts": "٣", "late": "refuse"}, {"max_attempts"}),
        ({"reveal": "never", "max_attempts": "9" * 5000, "late": "refuse"}, {"max_attempts"}),
        (
            {
                "reveal": "after_attempts",
                "reveal_after_attempts": "9" * 5000,
                "max_attempts": "3",
                "late": "refuse",
            },
            {"reveal_after_attempts"},
        ),  # fmt: skip
        ({"reveal": "never", "late": "accept", "late_penalty": "٣"}, {"late_penalty"}),
        ({"reveal": "never", "late": "accept", "late_penalty": "1e1"}, {"late_penalty"}),
        ({"reveal": "never", "late": "accept", "late_penalty": "9" * 5000}, {"late_penalty"}),
        # late work after the answers are out would earn points for copying them
        (
            {
                "reveal": "after_due",
                "due_at": "2027-01-31T23:59",
                "late": "accept",
                "late_penalty": "10",
            },
            {"late"},
        ),  # fmt: skip
        ({"reveal": "never", "late": "maybe"}, {"late"}),
        (
            {
                "reveal": "after_pass",
                "due_at": "2027-01-31T23:59",
                "late": "accept",
                "late_penalty": "12.5",
                "max_attempts": "5",
            },
            {},
        ),  # fmt: skip
        ({"reveal": "after_due", "due_at": "2027-01-31T23:59", "late": "refuse"}, set()),
    ],
)
def test_settings_are_checked(form, errors):
    from service.web.teacher.placement_settings import parse

    parsed, found = parse(form)
    assert set(found) == set(errors)
    assert (parsed is None) == bool(errors)


def test_settings_are_saved_and_shown_again(client, store, teacher):
    url = f"/teach/placements/{teacher.placement_id}"
    page = client.get(url).get_data(as_text=True)
    form = {"csrf": form_token(page), "reveal": "after_pass", "due_at": "2027-01-31T23:59",
            "late": "accept", "late_penalty": "12.5", "max_attempts": "5"}  # fmt: skip
    answer = client.post(f"{url}/settings", data=form)
    assert answer.status_code == 303 and answer.headers["Location"].endswith("saved=1#settings")
    with store.session() as session:
        saved = session.get(Placement, teacher.placement_id)
    assert (saved.reveal, saved.max_attempts, saved.late_penalty) == ("after_pass", 5, 0.125)
    assert saved.due_at.isoformat() == "2027-01-31T23:59:00+00:00"
    shown = client.get(answer.headers["Location"]).get_data(as_text=True)
    assert "Settings saved." in shown and 'value="2027-01-31T23:59"' in shown
    bad = client.post(f"{url}/settings", data={**form, "max_attempts": "lots"})
    assert bad.status_code == 400
    assert 'aria-invalid="true" aria-describedby="max_attempts-error"' in bad.get_data(as_text=True)
    assert 'value="lots"' in bad.get_data(as_text=True)
    with store.session() as session:
        assert session.get(Placement, teacher.placement_id).max_attempts == 5
    assert client.post(f"{url}/settings", data={**form, "csrf": "x"}).status_code == 400


def test_a_regrade_holds_new_scores_until_the_teacher_sends_them(client, store, teacher, sent):
    first = work(store, teacher, submission=RunStatus.PASSED)
    with store.session() as session:
        session.execute(update(GradeSync).values(status="sent"))
    page = client.get(f"/teach/placements/{teacher.placement_id}").get_data(as_text=True)
    csrf = form_token(page)
    started = client.post(f"/teach/placements/{teacher.placement_id}/regrade", data={"csrf": csrf})
    assert started.status_code == 303
    assert sent == [Sent(TaskName.GRADE_SUBMISSION, [first], options={"queue": "regrade"})]
    progress = client.get(f"/teach/placements/{teacher.placement_id}/regrade.json").get_json()
    assert progress == {"total": 1, "done": 0, "finished": False, "sent": False}
    running = text_of(client.get(started.headers["Location"]).get_data(as_text=True), spaced=True)
    assert "1 submission queued for regrading" in running
    assert "0 of 1 submissions regraded" in running and "regrading…" in running
    again = client.post(f"/teach/placements/{teacher.placement_id}/regrade", data={"csrf": csrf})
    assert again.status_code == 409 and "waiting for your review" in again.get_data(as_text=True)
    early = client.post(
        f"/teach/placements/{teacher.placement_id}/regrade/send", data={"csrf": csrf}
    )
    assert early.status_code == 409 and "still running" in early.get_data(as_text=True)

    grade(store, first, RunStatus.FAILED)  # the worker's new verdict
    with store.session() as session:
        assert session.scalars(select(GradeSync.status).order_by(GradeSync.id)).all() == [
            "sent", "held"
        ]  # fmt: skip
    review = text_of(client.get(started.headers["Location"]).get_data(as_text=True), spaced=True)
    assert "1 of 1 score changes" in review and "Nothing has been sent to the LMS yet" in review
    assert "Ada 6 of 8 1 of 8 −5" in review
    sent.clear()
    done = client.post(
        f"/teach/placements/{teacher.placement_id}/regrade/send", data={"csrf": csrf}
    )
    assert done.status_code == 303
    assert sent == [Sent(TaskName.SYNC_GRADE, [teacher.user_id, teacher.placement_id],
                         options={"queue": "sync"})]  # fmt: skip
    with store.session() as session:
        assert session.scalars(select(GradeSync.status).order_by(GradeSync.id)).all() == [
            "sent", "pending"
        ]  # fmt: skip
        assert session.scalar(select(Regrade.sent_at)) is not None
    shown = text_of(client.get(done.headers["Location"]).get_data(as_text=True), spaced=True)
    assert "New scores sent to the LMS for 1 student" in shown


def test_the_clis_regrade_is_not_held(store, celery_app):
    from service.queue import send
    from service.web.teacher.regrading import queue_regrade

    # a placement whose grades go to an LMS: its syncs wait for their posts
    placed = place(
        store, lesson_id=LESSON, line_item_url="https://lms.example/lineitems/1/lineitem"
    )
    first = work(store, placed)
    assert send(celery_app, queue_regrade(store, placed.placement_id)) == 1
    grade(store, first, RunStatus.FAILED)
    with store.session() as session:
        assert session.scalars(select(GradeSync.status).order_by(GradeSync.id)).all() == [
            "pending", "pending"
        ]  # fmt: skip


def test_the_roster_is_read_in_the_background_and_the_pages_say_so(client, store, teacher, sent):
    from service.store import roster_reads

    course_id = teacher.platform_id  # the fixture keeps the course id there
    with store.session() as session:
        session.execute(update(Course).values(memberships_url="https://lms.example/members"))
    gradebook, lesson = f"/teach/courses/{course_id}", f"/teach/placements/{teacher.placement_id}"
    page = text_of(client.get(gradebook).get_data(as_text=True), spaced=True)
    assert "The roster is being refreshed from the LMS; reload in a moment." in page
    assert "Ada" in page  # what is stored, meanwhile
    assert "being refreshed" in text_of(client.get(lesson).get_data(as_text=True))
    assert sent == [Sent(TaskName.REFRESH_ROSTER, [course_id], options={"queue": "sync"})]  # once

    roster_reads.failed(store, course_id, "the LMS roster could not be read: HTTP 503")
    for url in (gradebook, lesson):
        text = text_of(client.get(url).get_data(as_text=True), spaced=True)
        assert (
            "The roster could not be refreshed (the LMS roster could not be read: HTTP 503); "
            "showing the students known so far." in text
        )
    with store.session() as session:
        roster_reads.read(session, course_id, utcnow())
    for url in (gradebook, lesson):
        assert "roster" not in text_of(client.get(url).get_data(as_text=True))
    assert len(sent) == 1


def test_a_score_the_lms_changed_is_shown_and_resent_by_the_one_resend(
    client, store, teacher, sent
):
    """Issue 29, point 7: a read found the LMS holding 5 where the tool's 8 had landed."""
    from core.lesson_scores import LessonScore
    from service.store.models import Grade, LineItemRead

    now = utcnow()
    with store.session() as session:
        session.execute(update(Placement).values(line_item_url="https://lms.example/items/1"))
        grades.save_grade(session, teacher.placement_id, teacher.user_id, LessonScore(8, 8), now)
        grades.end_turn(session, teacher.placement_id, teacher.user_id, LessonScore(8, 8), now)
        session.add(GradeSync(placement_id=teacher.placement_id, user_id=teacher.user_id,
                              status="sent", score_given=8, score_maximum=8))  # fmt: skip
        session.execute(update(Grade).values(read_given=5.0, read_maximum=8.0, read_at=now))
        session.add(LineItemRead(placement_id=teacher.placement_id, requested_at=now, read_at=now))
    page = client.get(f"/teach/courses/{teacher.platform_id}").get_data(as_text=True)
    text = text_of(page, spaced=True)
    assert "LMS has 5, tool sent 8" in text and "LMS checked" in text
    assert sent == []  # read a moment ago: not read again
    assert client.get(f"/teach/courses/{teacher.platform_id}/results.json").get_json() == {
        "reading": []
    }
    answer = client.post(f"/teach/courses/{teacher.platform_id}/resend",
                         data={"csrf": form_token(page)})  # fmt: skip
    assert answer.status_code == 303 and "resent=1" in answer.headers["Location"]
    assert sent == [Sent(TaskName.SYNC_GRADE, [teacher.user_id, teacher.placement_id],
                         options={"queue": "sync"})]  # fmt: skip
    with store.session() as session:
        statuses = sorted(session.scalars(select(GradeSync.status)))
    assert statuses == ["pending", "sent"]  # a sync of its own, the sent one kept


def test_a_stale_line_item_is_asked_for_once_and_its_page_follows_the_read(
    client, store, teacher, sent
):
    with store.session() as session:
        session.execute(update(Placement).values(line_item_url="https://lms.example/items/1"))
    for _ in range(3):
        page = client.get(f"/teach/courses/{teacher.platform_id}").get_data(as_text=True)
    assert [m.name for m in sent] == [TaskName.READ_RESULTS]
    assert "Checking the LMS…" in page and "data-results-url" in page
    assert client.get(f"/teach/courses/{teacher.platform_id}/results.json").get_json() == {
        "reading": [teacher.placement_id]
    }
    other = place(store, lesson_id=LESSON)  # another course's: not this teacher's to ask
    with store.session() as session:
        elsewhere = session.get(Placement, other.placement_id).course_id
    assert client.get(f"/teach/courses/{elsewhere}/results.json").status_code == 403
