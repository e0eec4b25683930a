"""The student's pages: a placed lesson, and the course's list of lessons."""

from __future__ import annotations

from flask import Blueprint, abort, current_app, render_template
from sqlalchemy import select

from core.lessons import Catalog
from service.auth import current_user, session_token
from service.store.database import Store
from service.store.models import Placement

bp = Blueprint("pages", __name__)


@bp.get("/lessons/<int:placement_id>")
def lesson(placement_id: int) -> str:
    """Show a placed lesson to a student who launched it."""
    user = current_user()
    if user is None or not user.may_open(placement_id):
        abort(403)
    with _store().reading() as session:
        placement = session.get(Placement, placement_id)
    if placement is None:
        abort(404)
    found = _catalog().lesson(placement.lesson_id)
    if found is None:
        abort(404)
    return render_template(
        "pages/lesson.html", lesson=found, placement=placement, token=session_token()
    )


@bp.get("/courses/<int:course_id>")
def course(course_id: int) -> str:
    """List the course's placed lessons that the student has opened."""
    user = current_user()
    if user is None:
        abort(403)
    with _store().reading() as session:
        placements = list(
            session.scalars(
                select(Placement).where(
                    Placement.course_id == course_id, Placement.id.in_(user.placement_ids)
                )
            )
        )
    return render_template("pages/course.html", placements=placements, token=session_token())


def _store() -> Store:
    store: Store = current_app.extensions["store"]
    return store


def _catalog() -> Catalog:
    catalog: Catalog = current_app.extensions["catalog"]
    return catalog
