"""The LMS admin's page: the registered platforms, with forms to add and remove them.

Off unless CODEBLANKS_ADMIN_PASSWORD is set; then HTTP Basic (user "admin") guards it, over
https in production. Forms carry a CSRF token bound to the session, because browsers send
Basic credentials along with any cross-site form.
"""

from __future__ import annotations

import hmac
from datetime import timedelta

from flask import Blueprint, Response, abort, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue
from flask_babel import gettext as _

from core.lms_traps import SelfTest
from service.lti import registration, self_test
from service.store import platform_checks, throttles
from service.store.models import utcnow
from service.store.platform_rows import PlatformFields
from service.web import csrf, extensions

bp = Blueprint("admin", __name__, url_prefix="/admin")
USER = "admin"
ACCOUNT = f"admin-account:{USER}"
FAILURE_WINDOW = timedelta(minutes=15)
CLIENT_FAILURES = 10  # wrong passwords from one address per window
ACCOUNT_FAILURES = 50  # wrong passwords for the account per window, from anywhere


@bp.before_request
def require_admin() -> Response | None:
    """Answer 404 when the page is off, 401 until the admin's password is given, 429 to guessers.

    Failed passwords are counted per client address and for the account as a whole (in the
    database, so every web process counts the same): past the limit, nothing is checked
    until the window ends.
    """
    password = extensions.settings().admin_password
    if not password:
        abort(404)
    store, now = extensions.store(), utcnow()
    client = f"admin-client:{request.remote_addr or '-'}"[:128]
    limits = {client: CLIENT_FAILURES, ACCOUNT: ACCOUNT_FAILURES}
    wait = throttles.wait_s(store, limits, FAILURE_WINDOW, now)
    if wait:
        return Response(
            _("Too many wrong passwords; try again in %(wait)d s.", wait=wait),
            429,
            {"Retry-After": str(wait)},
            mimetype="text/plain",
        )
    auth = request.authorization
    given = auth.password if auth and auth.username == USER else None
    if given is None or not hmac.compare_digest(given.encode(), password.encode()):
        if auth is not None:  # a browser's first request, with no credentials, is no guess
            throttles.fail(store, [client, ACCOUNT], FAILURE_WINDOW, now)
        return Response(
            _("The admin password is needed."),
            401,
            {"WWW-Authenticate": 'Basic realm="CodeBlanks admin", charset="UTF-8"'},
        )
    return None


@bp.get("/platforms")
def platforms() -> str:
    """List the registered platforms, with a form to add one."""
    return _page()


@bp.post("/platforms")
def add() -> ResponseReturnValue:
    """Register a platform from the form (or add deployments to one registered)."""
    csrf.check(request.form.get(csrf.FIELD))
    form = request.form
    try:
        fields = PlatformFields(
            issuer=form.get("issuer", "").strip(),
            client_id=form.get("client_id", "").strip(),
            deployment_ids=tuple(
                d.strip() for d in form.get("deployment_ids", "").split(",") if d.strip()
            ),
            auth_login_url=form.get("auth_login_url", "").strip(),
            auth_token_url=form.get("auth_token_url", "").strip(),
            key_set_url=form.get("key_set_url", "").strip(),
            name=form.get("name", "").strip(),
            auto_add_deployments=form.get("auto_add_deployments") == "on",
            token_audience=form.get("token_audience", "").strip() or None,
        )
        registration.add_platform(extensions.store(), fields, replace=form.get("replace") == "on")
    except ValueError as exc:
        return _page(error=str(exc), form=form), 400
    return redirect(url_for("admin.platforms"), code=303)


@bp.post("/platforms/register-url")
def register_url() -> ResponseReturnValue:
    """Make a single-use registration URL for an LMS's dynamic registration, and show it."""
    csrf.check(request.form.get(csrf.FIELD))
    form = request.form
    hours = form.get("valid_hours", "24").strip()
    replaces = form.get("replaces", "").strip()
    try:
        if not (hours.isascii() and hours.isdigit() and len(hours) <= 4):
            raise ValueError(_("give the hours the URL is valid as a whole number"))
        url = registration.registration_url(
            extensions.store(),
            extensions.settings().base_url,
            name=form.get("name", "").strip(),
            valid_hours=int(hours),
            replaces_id=int(replaces) if replaces.isascii() and replaces.isdigit() else None,
            now=utcnow(),
        )
    except ValueError as exc:
        return _page(error=str(exc), form=form), 400
    return _page(registration_url=url)


@bp.get("/platforms/<int:platform_id>/check")
def check(platform_id: int) -> str:
    """Show a platform's latest self-test: each check, each trap and its fix."""
    found = next(
        (p for p in registration.list_platforms(extensions.store()) if p.id == platform_id), None
    )
    if found is None:
        abort(404)
    latest = platform_checks.latest(extensions.store()).get(platform_id)
    result = SelfTest.from_json(latest.result) if latest else None
    return render_template(
        "admin/platform_check.html",
        platform=found,
        latest=latest,
        result=result,
        csrf_token=csrf.token(),
    )


@bp.post("/platforms/<int:platform_id>/check")
def run_check(platform_id: int) -> ResponseReturnValue:
    """Run a platform's self-test now (the admin waits: each call has the outbound deadline)."""
    csrf.check(request.form.get(csrf.FIELD))
    if self_test.run(extensions.lti(), platform_id) is None:
        abort(404)
    return redirect(url_for("admin.check", platform_id=platform_id), code=303)


@bp.post("/platforms/<int:platform_id>/remove")
def remove(platform_id: int) -> ResponseReturnValue:
    """Remove a platform and everything recorded for it."""
    csrf.check(request.form.get(csrf.FIELD))
    if not registration.remove_platform(extensions.store(), platform_id):
        abort(404)
    return redirect(url_for("admin.platforms"), code=303)


def _page(error: str = "", form: object = None, registration_url: str = "") -> str:
    base = extensions.settings().base_url.rstrip("/")
    return render_template(
        "admin/platforms.html",
        platforms=registration.list_platforms(extensions.store()),
        checks=platform_checks.latest(extensions.store()),
        error=error,
        form=form or {},
        csrf_token=csrf.token(),
        base=base,
        registration_url=registration_url,
    )
