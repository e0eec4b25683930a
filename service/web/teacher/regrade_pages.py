"""The teacher's bulk regrade of a placed lesson: start it, watch it, compare, send.

A regrade runs on the low-priority queue; its new scores are held back (see
service.store.regrades) until the teacher has seen old and new side by side and sends them.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, jsonify, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue

from service.store.models import Placement, utcnow
from service.store.regrades import RegradeProblem
from service.web import csrf
from service.web.auth import link_token, page_session
from service.web.extensions import catalog, follow, store
from service.web.feedback import rendered
from service.web.teacher import lesson_report, regrading
from service.web.teacher.access import placement_teacher

bp = Blueprint("regrades", __name__, url_prefix="/teach/placements")


@bp.post("/<int:placement_id>/regrade")
def start(placement_id: int) -> ResponseReturnValue:
    """Grade every graded submission of the placement again, holding the new scores."""
    user, found = placement_teacher(placement_id)
    csrf.check(request.form.get(csrf.FIELD))
    try:
        gradings = regrading.start_regrade(store(), catalog(), found, user.user_id, utcnow())
    except RegradeProblem as exc:
        return _page(found, None, rendered(exc.words)), exc.status  # beside its form
    follow(gradings)
    return _back(placement_id, started=len(gradings))


@bp.get("/<int:placement_id>/regrade")
def show(placement_id: int) -> str:
    """Show the regrade's progress and, once done, each student's old and new score."""
    _user, found = placement_teacher(placement_id)
    return _page(found, request.args.get("started", type=int), None)


@bp.get("/<int:placement_id>/regrade.json")
def progress(placement_id: int) -> ResponseReturnValue:
    """Return the newest regrade's progress, for the page to follow."""
    _user, found = placement_teacher(placement_id)
    done = lesson_report.regrade_progress(store(), found.id)
    if done is None:
        return jsonify(total=0, done=0, finished=True, sent=False)
    return jsonify(
        total=done.total, done=done.done, finished=done.finished, sent=done.sent_at is not None
    )


@bp.post("/<int:placement_id>/regrade/send")
def send(placement_id: int) -> ResponseReturnValue:
    """Send the regrade's new scores to the LMS."""
    _user, found = placement_teacher(placement_id)
    csrf.check(request.form.get(csrf.FIELD))
    try:
        syncs = regrading.sync_regrade(store(), placement_id, utcnow())
    except RegradeProblem as exc:
        return _page(found, None, rendered(exc.words)), exc.status  # beside its form
    follow(syncs)
    return _back(placement_id, sent=len(syncs))


def _page(found: Placement, started: int | None, message: str | None) -> str:
    report = lesson_report.report(store(), catalog(), found)
    return render_template(
        "teacher/regrade.html",
        report=report,
        placement=found,
        started=started,
        sent=request.args.get("sent", type=int),
        message=message,
        **page_session(),
    )


def _back(placement_id: int, **args: int) -> ResponseReturnValue:
    query: dict[str, Any] = {"placement_id": placement_id, "s": link_token(), **args}
    target = url_for("regrades.show", **query)
    return redirect(target, code=303)
