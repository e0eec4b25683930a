"""The JSON API of the pages: submit code, follow it live, run it for practice, answer
questions, sign links."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request, url_for
from flask_babel import gettext as _
from sqlalchemy.exc import DBAPIError

from core.messages import say
from core.sources import check_input, check_source, check_text
from service.store.models import PracticeStatus, SubmissionStatus, utcnow
from service.web import extensions, figure_views
from service.web.auth import HEADER, link_token
from service.web.student import actions, practice_actions
from service.web.student.actions import Refused, signed_in
from service.web.student.streams import follow

bp = Blueprint("api", __name__, url_prefix="/api")


@bp.before_request
def refuse_cross_site_writes() -> None:
    """Refuse writes that a page of another site could have made with the user's cookie.

    A cross-site form can only send simple bodies (form or text/plain) without custom
    headers; a write here must be JSON or carry the session header, which would need a CORS
    preflight that this API never grants.
    """
    if request.method in ("POST", "PUT", "PATCH", "DELETE"):
        if not request.is_json and HEADER not in request.headers:
            raise Refused(
                403,
                "cross_site",
                say(
                    "Send JSON (Content-Type: application/json) or the X-CodeBlanks-Session header."
                ),
            )


@bp.post("/placements/<int:placement_id>/submissions")
def submit(placement_id: int) -> tuple[Response, int, dict[str, str]]:
    """Take a student's code for a placement: 202 with the submission's URL."""
    asker = actions.asker()
    submitted = actions.submit(asker, placement_id, _source())
    extensions.follow(submitted.follows)
    submission_id = submitted.submission_id
    url = url_for("api.submission", submission_id=submission_id)
    body = {
        "id": submission_id,
        "status": SubmissionStatus.QUEUED.value,
        "url": url,
        "events": f"{url}/events",
    }
    return jsonify(body), 202, {"Location": url}


@bp.post("/placements/<int:placement_id>/runs")
def run(placement_id: int) -> tuple[Response, int, dict[str, str]]:
    """Take a student's code (and input) for a practice run: 202 with the run's URL.

    No attempt, no score, no LMS: see service/web/student/practice_actions.py.
    """
    asker = actions.asker()
    source = _source()
    started = practice_actions.start(asker, placement_id, source, _stdin())
    extensions.follow(started.follows)
    url = url_for("api.practice_run", run_id=started.run_id)
    body = {"id": started.run_id, "status": PracticeStatus.QUEUED.value, "url": url}
    return jsonify(body), 202, {"Location": url}


@bp.get("/runs/<int:run_id>")
def practice_run(run_id: int) -> Response:
    """Return the practice run's status and, once done, what it found; only to its author."""
    asker = actions.asker()
    run = practice_actions.find(asker, run_id)
    return jsonify(practice_actions.viewed(asker, run, link=figure_views.linker()).as_json())


@bp.put("/placements/<int:placement_id>/draft")
def draft(placement_id: int) -> tuple[str, int]:
    """Keep the student's unsubmitted code, so that a reload or a new window finds it."""
    asker = actions.asker()
    actions.save_draft(asker, placement_id, _source())
    return "", 204


@bp.get("/submissions/<int:submission_id>")
def submission(submission_id: int) -> Response:
    """Return the submission's status and, once graded, its verdict."""
    return jsonify(actions.status_of(actions.asker(), submission_id, figure_views.linker()))


@bp.get("/submissions/<int:submission_id>/events")
def events(submission_id: int) -> Response:
    """Stream the submission's status (Server-Sent Events): short, capped; see its module."""
    asker, link = actions.asker(), figure_views.linker()
    first = actions.status_of(asker, submission_id, link)  # 404 now, not in the stream
    stream = _stream(asker, submission_id, first, link)
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return Response(stream, mimetype="text/event-stream", headers=headers)


@bp.post("/placements/<int:placement_id>/answers")
def answer(placement_id: int) -> tuple[Response, int]:
    """Score an answer to one of the lesson's questions at once."""
    asker = actions.asker()
    body = _json_body()
    question_id = body.get("question_id")
    if not isinstance(question_id, str) or "answer" not in body:
        raise Refused(400, "bad_request", _('Send {"question_id": "...", "answer": ...}.'))
    scored = actions.answer(asker, placement_id, question_id, body["answer"])
    extensions.follow(scored.follows)
    return jsonify(scored.as_json()), 201


@bp.post("/session/link")
def link() -> Response:
    """Sign the page's session afresh for its links (static/session.js): short-lived, see auth."""
    if HEADER not in request.headers:
        raise Refused(401, "not_signed_in", say("Send the page's session in its header."))
    signed_in()
    lifetime = int(current_app.config["LINK_LIFETIME"].total_seconds())
    return jsonify(token=link_token(), lifetime_s=lifetime)


def _source() -> str:
    """Return the submitted code: a JSON {"source": ...} body, or the raw body as text.

    A source that may not be run is a SourceRefused: the boundary's 413 or 400.
    """
    if request.is_json:
        source = _json_body().get("source")
        if not isinstance(source, str):
            raise Refused(400, "bad_request", _('Send {"source": "<your code>"}.'))
        return check_text(source)
    return check_source(request.get_data(cache=False))


def _stdin() -> str | None:
    """Return the practice run's input: a JSON body's `stdin` (None when absent: no run on an
    input of the student's). A refused one is a SourceRefused: the boundary's 413 or 400."""
    if not request.is_json:
        return None
    stdin = _json_body().get("stdin")
    if stdin is None:
        return None
    if not isinstance(stdin, str):
        raise Refused(400, "bad_request", _('Send {"source": "<your code>", "stdin": "<input>"}.'))
    return check_input(stdin)


def _json_body() -> dict[str, Any]:
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        raise Refused(400, "bad_request", say("The body must be a JSON object."))
    return body


def _stream(
    asker: actions.Asker, submission_id: int, first: dict[str, Any], link: Callable[[int], str]
) -> Iterator[str]:
    def look() -> dict[str, Any] | None:
        try:  # each look at its own time: a reveal that comes due shows in the stream
            return actions.status_of(replace(asker, now=utcnow()), submission_id, link)
        except DBAPIError:
            return None  # the database blinked; the stream looks again shortly

    streams, user_id = extensions.streams(), asker.user.user_id
    return follow(streams, user_id, first, look, asker.settings.stream_max_s)
