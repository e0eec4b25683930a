"""The student's pages: a placed lesson (with plain-form fallbacks), and the course's lessons.

Every page carries the signed session (`s` in its links and forms, a header in its fetches),
since inside an LMS iframe the cookie may never come back; every form carries a CSRF token.
"""

from __future__ import annotations

from flask import Blueprint, jsonify, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue

from core.sources import check_input, check_text
from service.web import csrf, extensions
from service.web.auth import link_token, page_session
from service.web.feedback import rendered
from service.web.student import actions, course_view, practice_actions
from service.web.student.lesson_view import answer_by_form, lesson_page

bp = Blueprint("pages", __name__)


@bp.get("/lessons/<int:placement_id>")
def lesson(placement_id: int) -> str:
    """Show a placed lesson to a student who launched it: text, questions, exercise, results."""
    asker = actions.asker()
    page = lesson_page(asker, placement_id)
    practice = practice_actions.latest(asker, placement_id, page.lesson)
    return render_template("pages/lesson.html", page=page, practice=practice, **page_session())


@bp.get("/lessons/<int:placement_id>/progress")
def progress(placement_id: int) -> ResponseReturnValue:
    """Return the page's score and results, rendered, for the page to swap in after a change."""
    page = lesson_page(actions.asker(), placement_id)
    fields = {"page": page, **page_session()}
    return jsonify(
        score=render_template("pages/_score.html", **fields),
        results=render_template("pages/_results.html", **fields),
        pending=page.pending,
        revealed=page.revealed,
        closed=rendered(page.closed.message) if page.closed else None,
    )


@bp.post("/lessons/<int:placement_id>/answers")
def answer(placement_id: int) -> ResponseReturnValue:
    """Take a question's answer from a plain form (no JavaScript), then show the lesson again."""
    asker = actions.asker()
    csrf.check(request.form.get(csrf.FIELD))
    scored = answer_by_form(asker, placement_id, request.form)
    extensions.follow(scored.follows)
    return _back(placement_id, f"q-{scored.question_id}")


@bp.post("/lessons/<int:placement_id>/submissions")
def submit(placement_id: int) -> ResponseReturnValue:
    """Take code from a plain form (no JavaScript), queue it, then show the lesson again."""
    asker = actions.asker()
    csrf.check(request.form.get(csrf.FIELD))
    submitted = actions.submit(asker, placement_id, _form_source())
    extensions.follow(submitted.follows)
    return _back(placement_id, "results")


@bp.post("/lessons/<int:placement_id>/runs")
def run(placement_id: int) -> ResponseReturnValue:
    """Take code (and input) from a plain form (no JavaScript) for a practice run, queue it,
    then show the lesson again: its practice run shows under the editor once done."""
    asker = actions.asker()
    csrf.check(request.form.get(csrf.FIELD))
    stdin = request.form.get("stdin")  # the input box, which a lesson that reads stdin shows
    given = None if stdin is None else check_input(stdin.replace("\r\n", "\n"))
    started = practice_actions.start(asker, placement_id, _form_source(), given)
    extensions.follow(started.follows)
    return _back(placement_id, "practice")


@bp.get("/lessons/<int:placement_id>/runs/<int:run_id>")
def practice_run(placement_id: int, run_id: int) -> ResponseReturnValue:
    """Return a practice run of the student's, rendered, for the page to show under its editor."""
    practice = practice_actions.shown(actions.asker(), placement_id, run_id)
    fields = {"practice": practice, "lesson": practice.lesson, **page_session()}
    return jsonify(
        status=practice.status,
        pending=practice.pending,
        practice=render_template("pages/_practice.html", **fields),
    )


@bp.get("/courses/<int:course_id>")
def course(course_id: int) -> str:
    """List the course's placed lessons for a student, with their score on each."""
    listing = course_view.student_listing(actions.asker(), course_id)
    return render_template("pages/course.html", listing=listing, **page_session())


def _form_source() -> str:
    # browsers send a textarea's lines with CRLF ends
    source = request.form.get("source", "").replace("\r\n", "\n")
    return check_text(source)  # a SourceRefused is the boundary's 413 or 400


def _back(placement_id: int, anchor: str) -> ResponseReturnValue:
    target = url_for("pages.lesson", placement_id=placement_id, s=link_token())
    return redirect(f"{target}#{anchor}", code=303)
