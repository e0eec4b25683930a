"""The teacher's pages: a placement's results and settings, and the course gradebook."""

from __future__ import annotations

from flask import Blueprint, abort, current_app, render_template

from service.auth import current_user, session_token
from service.store.database import Store
from service.store.models import Placement

bp = Blueprint("teacher", __name__, url_prefix="/teach")


@bp.get("/placements/<int:placement_id>")
def placement(placement_id: int) -> str:
    """Show a placement to a teacher of its course."""
    user = current_user()
    with _store().reading() as session:
        found = session.get(Placement, placement_id)
    if found is None:
        abort(404)
    if user is None or not user.teaches(found.course_id):
        abort(403)
    lesson = current_app.extensions["catalog"].lesson(found.lesson_id)
    return render_template(
        "teacher/placement.html", placement=found, lesson=lesson, token=session_token()
    )


@bp.get("/courses/<int:course_id>")
def gradebook(course_id: int) -> str:
    """Show the course gradebook to its teacher."""
    user = current_user()
    if user is None or not user.teaches(course_id):
        abort(403)
    return render_template("teacher/gradebook.html", course_id=course_id, token=session_token())


def _store() -> Store:
    store: Store = current_app.extensions["store"]
    return store
