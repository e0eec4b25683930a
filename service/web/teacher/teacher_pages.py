"""The teacher's pages: the course gradebook (and its CSV), a placement, a student's work.

Every route checks that the signed-in user teaches the course; every form carries a CSRF
token, and every link the signed session (see service.web.auth).
"""

from __future__ import annotations

from flask import Blueprint, Response, jsonify, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue

from core.messages import say
from service.store.models import Placement, utcnow
from service.web import csrf, labels
from service.web.auth import link_token, page_session
from service.web.extensions import catalog, celery_app, follow, store
from service.web.student.actions import Refused
from service.web.teacher import course_gradebook, lesson_report, placement_settings
from service.web.teacher.access import course_teacher, placement_teacher

bp = Blueprint("teacher", __name__, url_prefix="/teach")


@bp.get("/courses/<int:course_id>")
def gradebook(course_id: int) -> str:
    """Show the course's roster by its placed lessons (a stale roster is read in the background)."""
    course_teacher(course_id)
    book = course_gradebook.for_teacher(store(), catalog(), celery_app(), course_id, utcnow())
    return render_template(
        "teacher/gradebook.html",
        book=book,
        resent=request.args.get("resent", type=int),
        **page_session(),
    )


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
    """Show a placed lesson to its teacher: scores, failures, settings, regrade."""
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
    placement_settings.save(store(), placement_id, parsed)
    target = url_for("teacher.placement", placement_id=placement_id, s=link_token(), saved=1)
    return redirect(f"{target}#settings", code=303)


@bp.get("/placements/<int:placement_id>/students/<int:user_id>")
def student(placement_id: int, user_id: int) -> str:
    """Show one student's submissions (code, output, verdict) and answers on a placement."""
    _user, found = placement_teacher(placement_id)
    work = lesson_report.student_work(store(), catalog(), found, user_id)
    if work is None:
        raise Refused(404, "unknown_student", say("This student is not in the course."))
    return render_template("teacher/student.html", work=work, **page_session())


def _placement_page(found: Placement, form: dict[str, str], errors: dict[str, str]) -> str:
    course_gradebook.ask_for_results(store(), celery_app(), [found.id], utcnow())
    report = lesson_report.report(store(), catalog(), found)
    note = course_gradebook.roster_note(store(), celery_app(), found.course_id, utcnow())
    return render_template(
        "teacher/placement.html",
        report=report,
        roster_note=note,
        placement=found,
        lesson=report.lesson,
        form=form,
        errors=errors,
        reveals=labels.reveals(),
        saved=request.args.get("saved") == "1",
        **page_session(),
    )
