"""The app's one error boundary: every refusal and failure answered as JSON or a page.

Registered once, for every blueprint. Under /api (and for clients that ask for JSON) the
answer is `{"error", "message"}`; elsewhere a page that says what to do. A client's fault is
a 4xx; a database that cannot be reached is a 503 with Retry-After; anything else is a 500
that shows the request id and never a traceback (the traceback goes to the log).
"""

from __future__ import annotations

import logging
from typing import Any

from flask import Flask, Response, g, jsonify, render_template, request
from flask.json.provider import DefaultJSONProvider
from flask_babel import LazyString
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from sqlalchemy.exc import InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from werkzeug.exceptions import HTTPException

from service.lti.claims import LaunchProblem
from service.lti.registration import RegistrationProblem
from service.web.auth import current_user, name_of
from service.web.student.actions import Refused

log = logging.getLogger("codeblanks.web")
lti_log = logging.getLogger("codeblanks.lti")
Answer = tuple[Response | str, int, dict[str, str]]
STORE_DOWN = (OperationalError, InterfaceError, PoolTimeout)
_RETRY_S = 5
# Werkzeug's errors in the user's words: (title, sentence) by status, the sentence used only
# when the error carries Werkzeug's own English description (ours are translated already)
HTTP_WORDS: dict[int, tuple[LazyString, LazyString]] = {
    400: (_l("Bad request"), _l("The request could not be understood; open the page again.")),
    401: (_l("Not signed in"), _l("Open this page from your course to sign in.")),
    403: (_l("Forbidden"), _l("You may not open this page.")),
    404: (_l("Not found"), _l("There is no such page here. Open it again from your course.")),
    405: (_l("Method not allowed"), _l("This page cannot be used that way.")),
    413: (_l("Too large"), _l("What was sent is too large.")),
    415: (_l("Unsupported media type"), _l("What was sent is not in a form this page takes.")),
    429: (_l("Too many requests"), _l("Too many requests at once; wait a moment and try again.")),
}


class JsonProvider(DefaultJSONProvider):
    """Flask's JSON, with a body nested deeper than Python recurses read as malformed."""

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        """Parse JSON; a ValueError (a 400 for request bodies) for any malformed input."""
        try:
            return super().loads(s, **kwargs)
        except RecursionError:
            raise ValueError("the JSON is nested too deeply") from None


def init_app(app: Flask) -> None:
    """Register the handlers, once for the whole app."""
    app.json = JsonProvider(app)
    app.register_error_handler(Refused, refused)
    app.register_error_handler(LaunchProblem, launch_refused)
    app.register_error_handler(RegistrationProblem, registration_refused)
    app.register_error_handler(HTTPException, http_error)
    for error in STORE_DOWN:
        app.register_error_handler(error, store_down)
    app.register_error_handler(Exception, internal_error)


def wants_json() -> bool:
    """Return whether the request is the JSON API's, or a client that asked for JSON."""
    if request.path.startswith("/api/") or request.path.endswith(".json"):
        return True
    best = request.accept_mimetypes.best_match(["text/html", "application/json"], "text/html")
    return best == "application/json"


def refused(exc: Refused) -> Answer:
    """Render a refusal: JSON for the API, else a page that says what to do."""
    headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after else {}
    if wants_json():
        return jsonify(error=exc.error, message=exc.message), exc.status, headers
    page = render_template("pages/refused.html", problem=exc, signed_in_as=_signed_in_as())
    return page, exc.status, headers


def _signed_in_as() -> str:
    """Return whose session a refusal page is shown in ("" for nobody, or if the store is down)."""
    user = current_user()
    try:
        return name_of(user.user_id) if user else ""
    except STORE_DOWN:
        return ""


def launch_refused(problem: LaunchProblem) -> Answer:
    """Render a refused launch: what went wrong and what the admin should check; log it."""
    lti_log.warning(
        "launch refused: %s",
        problem,
        extra={"title": problem.title, "check": problem.check, "path": request.path},
    )
    shown = problem.translated()
    if wants_json():
        return jsonify(error="launch_refused", message=str(shown)), problem.status, {}
    return render_template("lti/error.html", problem=shown), problem.status, {}


def registration_refused(problem: RegistrationProblem) -> Answer:
    """Render a refused registration in the words of registration, not of launches; log it."""
    lti_log.warning(
        "registration refused: %s",
        problem,
        extra={"title": problem.title, "check": problem.check, "path": request.path},
    )
    shown = problem.translated()
    return render_template("lti/registration_error.html", problem=shown), problem.status, {}


def http_error(exc: HTTPException) -> Answer:
    """Render Werkzeug's errors (400 from a form check, 404, 405, 413, ...) for the client."""
    code = exc.code or 500
    name = exc.name or "Error"
    headers = dict(exc.get_headers()) if code == 405 else {}
    headers.pop("Content-Type", None)
    title, message = _words(exc, code, name)
    if wants_json():
        # `error` is the stable English code; only the sentence is in the user's language
        return jsonify(error=name.lower().replace(" ", "_"), message=message), code, headers
    page = render_template("error.html", title=title, message=message)
    return page, code, headers


def _words(exc: HTTPException, code: int, name: str) -> tuple[str, str]:
    """Return an HTTP error's title and sentence in the user's language."""
    description = exc.description or ""
    words = HTTP_WORDS.get(code)
    if words is None:
        return name, description
    default = description == type(exc).description or not description
    return str(words[0]), str(words[1]) if default else description


def store_down(exc: Exception) -> Answer:
    """Answer 503 while the database is unreachable or locked; the client may try again."""
    log.warning("the store is unavailable: %s", type(exc).__name__, extra={"path": request.path})
    message = _("The grader's database is unavailable for a moment; try again in a few seconds.")
    headers = {"Retry-After": str(_RETRY_S)}
    if wants_json():
        return jsonify(error="unavailable", message=message), 503, headers
    page = render_template("error.html", title=_("Unavailable for a moment"), message=message)
    return page, 503, headers


def internal_error(exc: Exception) -> Answer:
    """Log an unexpected failure with its traceback; show the request id, nothing more."""
    if isinstance(exc, HTTPException):  # pragma: no cover - Flask routes these above
        return http_error(exc)
    log.exception("unhandled error on %s %s", request.method, request.path)
    request_id = str(g.get("request_id", ""))
    message = _(
        "Something went wrong on our side. If it keeps happening, tell the tool's "
        "administrator this request id: %(request_id)s.",
        request_id=request_id,
    )
    if wants_json():
        return jsonify(error="internal_error", message=message, request_id=request_id), 500, {}
    page = render_template("error.html", title=_("Something went wrong"), message=message)
    return page, 500, {}
