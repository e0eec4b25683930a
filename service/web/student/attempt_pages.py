"""The student's attempts: a page of them, one attempt whole, putting one back in the editor
(plain forms: no JavaScript needed), and one attempt for the lesson page's script (JSON).

Each is its author's alone (attempt_view); the pages carry the session as the lesson page's
do (`s` in links and forms, a CSRF token in the form), the JSON its header.
"""

from __future__ import annotations

from flask import Blueprint, Response, jsonify, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue

from core.messages import say
from service.web import csrf
from service.web.auth import link_token, page_session
from service.web.student import actions, attempt_view
from service.web.student.actions import Refused

bp = Blueprint("attempts", __name__)

_PAGE_DIGITS = 6  # a page number is no longer than this: a million pages of attempts


@bp.get("/lessons/<int:placement_id>/attempts")
def listing(placement_id: int) -> str:
    """List a page of the student's attempts on a placement, newest first."""
    listed = attempt_view.attempt_list(actions.asker(), placement_id, _page())
    return render_template("pages/attempts.html", listed=listed, **page_session())


@bp.get("/lessons/<int:placement_id>/attempts/<int:submission_id>")
def attempt(placement_id: int, submission_id: int) -> str:
    """Show one attempt: its verdict, its code, the change from the one before."""
    shown = attempt_view.attempt_page(actions.asker(), placement_id, submission_id)
    return render_template("pages/attempt.html", attempt=shown, **page_session())


@bp.post("/lessons/<int:placement_id>/attempts/<int:submission_id>/restore")
def restore(placement_id: int, submission_id: int) -> ResponseReturnValue:
    """Put an attempt's code back in the editor (a plain form), then show the lesson again."""
    asker = actions.asker()
    csrf.check(request.form.get(csrf.FIELD))
    attempt_view.restore(asker, placement_id, submission_id)
    target = url_for("pages.lesson", placement_id=placement_id, s=link_token())
    return redirect(f"{target}#submit-form", code=303)


@bp.get("/api/placements/<int:placement_id>/attempts/<int:submission_id>")
def attempt_json(placement_id: int, submission_id: int) -> Response:
    """Return one attempt for the lesson page's script: its JSON, and `html` to show it."""
    shown = attempt_view.attempt_page(actions.asker(), placement_id, submission_id)
    html = render_template("pages/_attempt.html", attempt=shown, level=4, **page_session())
    return jsonify({**shown.as_json(), "html": html})


def _page() -> int:
    raw = request.args.get("page", "1")
    if not (raw.isascii() and raw.isdigit() and len(raw) <= _PAGE_DIGITS):
        raise Refused(404, "unknown_page", say("There is no such page of your attempts."))
    return int(raw)
