"""The app's one error boundary: every refusal and failure answered as JSON or a page.

Registered once, for every blueprint. Every refusal (core.errors.Refusal: its status, code
and words) is rendered here and nowhere else, its words in the request's language: under /api
(and for clients that ask for JSON) `{"error": code, "message": words}`; elsewhere a page that
says what to do. A client's fault is
a 4xx; a database that cannot be reached is a 503 with Retry-After; anything else is a 500
that shows the request id and never a traceback (the traceback goes to the log).
"""

from __future__ import annotations

import logging
from typing import Any

from flask import Flask, Response, g, jsonify, render_template, request
from flask.json.provider import DefaultJSONProvider
from flask_babel import gettext as _
from sqlalchemy.exc import InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from werkzeug.exceptions import HTTPException

from core.errors import Refusal
from core.messages import N_
from service.lti.claims import LtiProblem
from service.lti.registration import RegistrationProblem
from service.web.auth import current_user, name_of
from service.web.feedback import rendered

log = logging.getLogger("codeblanks.web")
lti_log = logging.getLogger("codeblanks.lti")
Answer = tuple[Response | str, int, dict[str, str]]
STORE_DOWN = (OperationalError, InterfaceError, PoolTimeout)
_RETRY_S = 5
# Werkzeug's errors in the user's words: (title, sentence) by status, the sentence used only
# when the error carries Werkzeug's own English description (ours are translated already)
HTTP_WORDS: dict[int, tuple[str, str]] = {
    400: (N_("Bad request"), N_("The request could not be understood; open the page again.")),
    401: (N_("Not signed in"), N_("Open this page from your course to sign in.")),
    403: (N_("Forbidden"), N_("You may not open this page.")),
    404: (N_("Not found"), N_("There is no such page here. Open it again from your course.")),
    405: (N_("Method not allowed"), N_("This page cannot be used that way.")),
    413: (N_("Too large"), N_("What was sent is too large.")),
    415: (N_("Unsupported media type"), N_("What was sent is not in a form this page takes.")),
    429: (N_("Too many requests"), N_("Too many requests at once; wait a moment and try again.")),
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
    app.register_error_handler(Refusal, refused)
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


def refused(exc: Refusal) -> Answer:
    """Render any refusal: JSON `{"error": code, "message"}`, else a page that says why."""
    headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after else {}
    if isinstance(exc, LtiProblem):  # an admin reads the log: what the LMS sent, in English
        kind = "registration" if isinstance(exc, RegistrationProblem) else "launch"
        lti_log.warning(
            "%s refused: %s",
            kind,
            exc,
            extra={"title": str(exc.title), "check": str(exc.check), "path": request.path},
        )
    # the LMS opens a registration in its own frame, for its admin to read: always a page
    if wants_json() and not isinstance(exc, RegistrationProblem):
        return jsonify(error=exc.code, message=rendered(exc.words)), exc.status, headers
    if isinstance(exc, LtiProblem):
        registering = isinstance(exc, RegistrationProblem)
        template = "lti/registration_error.html" if registering else "lti/error.html"
        shown = {name: rendered(getattr(exc, name)) for name in ("title", "detail", "check")}
        return render_template(template, problem=shown), exc.status, headers
    shown = {"message": rendered(exc.words)}
    page = render_template("pages/refused.html", problem=shown, signed_in_as=_signed_in_as())
    return page, exc.status, headers


def _signed_in_as() -> str:
    """Return whose session a refusal page is shown in ("" for nobody, or if the store is down)."""
    user = current_user()
    try:
        return name_of(user.user_id) if user else ""
    except STORE_DOWN:
        return ""


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
    return _(words[0]), _(words[1]) if default else description


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
