"""The teacher's pages: the course gradebook (and its CSV), a placement, a student's work
and the override of their score.

Every route checks that the signed-in user teaches the course; every form carries a CSRF
token, and every link the signed session (see service.web.auth).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue

from core.lessons import Lesson
from core.messages import say
from core.overrides import MAX_COMMENT, Scored
from service.queue import SyncMessage
from service.store import placement_rows, policies, releases
from service.store.models import Placement, utcnow
from service.web import csrf, labels
from service.web.auth import link_token, page_session
from service.web.extensions import catalog, celery_app, follow, store
from service.web.student.actions import Refused
from service.web.teacher import (
    course_gradebook,
    exception_form,
    lesson_report,
    overriding,
    placement_settings,
)
from service.web.teacher.access import course_teacher, placement_teacher

bp = Blueprint("teacher", __name__, url_prefix="/teach")


@bp.get("/courses/<int:course_id>")
def gradebook(course_id: int) -> str:
    """Show the course's roster by its placed lessons (a stale roster is read in the background)."""
    course_teacher(course_id)
    return _gradebook_page(course_id, exception_form.form_of(None), {})


@bp.post("/courses/<int:course_id>/exceptions")
def course_exception(course_id: int) -> ResponseReturnValue:
    """Give one student an exception on one of the course's placements, from the gradebook."""
    teacher = course_teacher(course_id)
    csrf.check(request.form.get(csrf.FIELD))
    placement_id = request.form.get("placement_id", type=int)
    found = placement_rows.find(store(), placement_id) if placement_id is not None else None
    if found is None or found.course_id != course_id:
        raise Refused(404, "unknown_placement", say("There is no such lesson in this course."))
    user_id = request.form.get("user_id", type=int)
    if user_id is None or lesson_report.student_work(store(), catalog(), found, user_id) is None:
        raise Refused(404, "unknown_student", say("This student is not in the course."))
    exception, errors = exception_form.parse(request.form, policies.policy_of(found, None))
    if exception is None:
        return _gradebook_page(course_id, request.form.to_dict(), errors), 400
    follow(exception_form.save(store(), found, user_id, exception, teacher.user_id, utcnow()))
    target = url_for("teacher.gradebook", course_id=course_id, s=link_token(), excepted=1)
    return redirect(f"{target}#exceptions", code=303)


@bp.get("/courses/<int:course_id>/gradebook.csv")
def gradebook_csv(course_id: int) -> Response:
    """Download the gradebook as CSV (cells that look like formulas are made text)."""
    course_teacher(course_id)
    book = course_gradebook.build(store(), catalog(), course_id)
    headers = {
        "Content-Disposition": f'attachment; filename="gradebook-{course_id}.csv"',
        "Cache-Control": "no-store",
    }
    return Response(course_gradebook.as_csv(book), mimetype="text/csv", headers=headers)


@bp.post("/courses/<int:course_id>/resend")
def resend(course_id: int) -> ResponseReturnValue:
    """Send failed grade syncs again: one student's on one lesson, or all of the course's."""
    course_teacher(course_id)
    csrf.check(request.form.get(csrf.FIELD))
    placement_id = request.form.get("placement_id", type=int)
    user_id = request.form.get("user_id", type=int)
    syncs = course_gradebook.resend(store(), course_id, placement_id, user_id, utcnow())
    follow(syncs)
    target = url_for("teacher.gradebook", course_id=course_id, s=link_token(), resent=len(syncs))
    return redirect(target, code=303)


@bp.get("/courses/<int:course_id>/results.json")
def results(course_id: int) -> ResponseReturnValue:
    """Return which of the course's placements wait for a read of the LMS's results."""
    course_teacher(course_id)
    return jsonify(reading=course_gradebook.reading(store(), course_id))


@bp.get("/placements/<int:placement_id>")
def placement(placement_id: int) -> str:
    """Show a placed lesson to its teacher: scores, failures, settings, release, regrade."""
    _user, found = placement_teacher(placement_id)
    return _placement_page(found, placement_settings.form_of(found), {})


@bp.post("/placements/<int:placement_id>/settings")
def settings(placement_id: int) -> ResponseReturnValue:
    """Change a placement's reveal policy, attempts, due date and late penalty."""
    _user, found = placement_teacher(placement_id)
    csrf.check(request.form.get(csrf.FIELD))
    parsed, errors = placement_settings.parse(request.form)
    if parsed is None:
        return _placement_page(found, request.form.to_dict(), errors), 400
    follow(placement_settings.save(store(), placement_id, parsed, utcnow()))
    target = url_for("teacher.placement", placement_id=placement_id, s=link_token(), saved=1)
    return redirect(f"{target}#settings", code=303)


@bp.post("/placements/<int:placement_id>/release")
def release(placement_id: int) -> ResponseReturnValue:
    """Release a placement's held scores: to the LMS and the students, all at once."""
    _user, found = placement_teacher(placement_id)
    csrf.check(request.form.get(csrf.FIELD))
    with store().session() as session:
        users = releases.release(session, placement_id, utcnow())
    follow(tuple(SyncMessage(user_id, placement_id) for user_id in users))
    back: dict[str, Any] = {"s": link_token(), "released": len(users)}
    if request.form.get("back") == "gradebook":
        return redirect(url_for("teacher.gradebook", course_id=found.course_id, **back), 303)
    target = url_for("teacher.placement", placement_id=placement_id, **back)
    return redirect(f"{target}#release", code=303)


@bp.get("/placements/<int:placement_id>/students/<int:user_id>")
def student(placement_id: int, user_id: int) -> str:
    """Show one student's work on a placement (submissions, answers) and their score's override."""
    _user, found = placement_teacher(placement_id)
    work = _work_of(found, user_id)
    return _student_page(work, exception_form.form_of(work.exception), {})


@bp.post("/placements/<int:placement_id>/students/<int:user_id>/exception")
def student_exception(placement_id: int, user_id: int) -> ResponseReturnValue:
    """Set, or remove, one student's exception to the placement's policy."""
    teacher, found = placement_teacher(placement_id)
    csrf.check(request.form.get(csrf.FIELD))
    work = _work_of(found, user_id)
    exception = None
    if request.form.get("remove") != "1":
        exception, errors = exception_form.parse(request.form, policies.policy_of(found, None))
        if exception is None:
            return _student_page(work, request.form.to_dict(), errors), 400
    follow(exception_form.save(store(), found, user_id, exception, teacher.user_id, utcnow()))
    target = url_for(
        "teacher.student", placement_id=placement_id, user_id=user_id, s=link_token(), saved=1
    )
    return redirect(f"{target}#exception", code=303)


@bp.post("/placements/<int:placement_id>/students/<int:user_id>/override")
def override(placement_id: int, user_id: int) -> ResponseReturnValue:
    """Set the student's score (the lesson's, or the exercise's part) with a comment."""
    teacher, found = placement_teacher(placement_id)
    csrf.check(request.form.get(csrf.FIELD))
    work = _work_of(found, user_id)
    lesson, scored = _scored(work)
    setting, errors = overriding.parse(request.form, scored)
    if setting is None:
        return _student_page(work, request.form.to_dict(), errors), 400
    follow(
        overriding.set_override(store(), found, lesson, user_id, teacher.user_id, setting, utcnow())
    )
    return _back_to_student(placement_id, user_id, "set")


@bp.post("/placements/<int:placement_id>/students/<int:user_id>/override/remove")
def remove_override(placement_id: int, user_id: int) -> ResponseReturnValue:
    """Remove the override: the automatic score (the newest result) counts again."""
    teacher, found = placement_teacher(placement_id)
    csrf.check(request.form.get(csrf.FIELD))
    lesson, _scored_now = _scored(_work_of(found, user_id))
    follow(overriding.remove_override(store(), found, lesson, user_id, teacher.user_id, utcnow()))
    return _back_to_student(placement_id, user_id, "removed", found.course_id)


@bp.post("/placements/<int:placement_id>/students/<int:user_id>/override/keep")
def keep_override(placement_id: int, user_id: int) -> ResponseReturnValue:
    """Keep the override over the newer automatic result the teacher saw."""
    teacher, found = placement_teacher(placement_id)
    csrf.check(request.form.get(csrf.FIELD))
    lesson, _scored_now = _scored(_work_of(found, user_id))
    seen = request.form.get("seen", "")
    overriding.keep_override(store(), found, lesson, user_id, teacher.user_id, seen, utcnow())
    return _back_to_student(placement_id, user_id, "kept", found.course_id)


def _work_of(found: Placement, user_id: int) -> lesson_report.StudentWork:
    work = lesson_report.student_work(store(), catalog(), found, user_id)
    if work is None:
        raise Refused(404, "unknown_student", say("This student is not in the course."))
    return work


def _scored(work: lesson_report.StudentWork) -> tuple[Lesson, Scored]:
    if work.lesson is None or work.scored is None:
        raise Refused(
            404,
            "unknown_lesson",
            say("This lesson is not in the catalog: its score stays as it is."),
        )
    return work.lesson, work.scored


def _student_page(
    work: lesson_report.StudentWork, form: dict[str, str], errors: dict[str, str]
) -> str:
    return render_template(
        "teacher/student.html",
        work=work,
        policy=policies.policy_of(work.placement, None),
        form=form,
        errors=errors,
        saved=request.args.get("saved") == "1",
        done=request.args.get("done", ""),
        max_comment=MAX_COMMENT,
        **page_session(),
    )


def _gradebook_page(course_id: int, form: dict[str, str], errors: dict[str, str]) -> str:
    book = course_gradebook.for_teacher(store(), catalog(), celery_app(), course_id, utcnow())
    return render_template(
        "teacher/gradebook.html",
        book=book,
        grades_note=course_gradebook.grades_note(store(), course_id),
        resent=request.args.get("resent", type=int),
        released=request.args.get("released", type=int),
        excepted=request.args.get("excepted") == "1",
        form=form,
        errors=errors,
        **page_session(),
    )


def _back_to_student(
    placement_id: int, user_id: int, done: str, course_id: int | None = None
) -> ResponseReturnValue:
    if course_id is not None and request.form.get("back") == "gradebook":  # the cell's buttons
        return redirect(url_for("teacher.gradebook", course_id=course_id, s=link_token()), code=303)
    target = url_for(
        "teacher.student", placement_id=placement_id, user_id=user_id, s=link_token(), done=done
    )
    return redirect(f"{target}#override", code=303)


def _placement_page(found: Placement, form: dict[str, str], errors: dict[str, str]) -> str:
    course_gradebook.ask_for_results(store(), celery_app(), [found.id], utcnow())
    report = lesson_report.report(store(), catalog(), found)
    note = course_gradebook.roster_note(store(), celery_app(), found.course_id, utcnow())
    return render_template(
        "teacher/placement.html",
        report=report,
        roster_note=note,
        grades_note=course_gradebook.grades_note(store(), found.course_id),
        placement=found,
        lesson=report.lesson,
        form=form,
        errors=errors,
        reveals=labels.reveals(),
        saved=request.args.get("saved") == "1",
        released=request.args.get("released", type=int),
        **page_session(),
    )
