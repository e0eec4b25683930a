"""The LTI endpoints: login, launch, key set, Canvas configuration, dynamic registration.

A view parses the request, calls one function, and renders. Every refusal is a LaunchProblem
(or a RegistrationProblem) that the app's error boundary (service.web.boundary) renders as a 4xx
page saying what to check, and logs; nothing about the user is stored.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlencode

from flask import Blueprint, Response, jsonify, redirect, render_template, request
from werkzeug.wrappers import Response as WebResponse

from core.messages import say
from service.lti import logins, registration
from service.lti.claims import LaunchProblem, check_target
from service.lti.registration import RegistrationProblem
from service.queue import PlatformCheckMessage, send_platform_check
from service.store import platform_rows, registration_tokens
from service.store.models import utcnow
from service.web import extensions
from service.web.lms import launch_pages

bp = Blueprint("lti", __name__, url_prefix="/lti")
log = logging.getLogger("codeblanks.lti")
COOKIE_PREFIX = "cb_login_"
MAX_LOGIN_BODY = 64 * 1024  # a login request is a few short parameters


@bp.route("/login", methods=["GET", "POST"])
def login() -> WebResponse:
    """Start an OIDC login for a platform's launch (Moodle POSTs it; Canvas GETs it).

    Anybody may call this, and a login is stored until it expires: only the parameters of
    the LTI login request are kept, each bounded, and a large body is refused unread.
    """
    request.max_content_length = MAX_LOGIN_BODY
    params = logins.login_params(request.values)
    for required in ("iss", "login_hint", "target_link_uri"):
        if not params.get(required):
            raise LaunchProblem(
                say("Incomplete login"),
                say("the login request has no {required}", required=required),
                say("the LMS's tool URL"),
            )
    context = extensions.lti()
    check_target(params["target_link_uri"], context.settings.base_url)
    platform = logins.find_platform(context.store, params["iss"], params.get("client_id"))
    storage = params.get("lti_storage_target") or None
    started = logins.start(context.store, platform, params, storage)
    query = {
        "scope": "openid",
        "response_type": "id_token",
        "response_mode": "form_post",
        "prompt": "none",
        "client_id": platform.client_id,
        "redirect_uri": context.launch_url,
        "login_hint": params["login_hint"],
        "state": started.state,
        "nonce": started.nonce,
    }
    if params.get("lti_message_hint"):
        query["lti_message_hint"] = params["lti_message_hint"]
    auth_url = platform.auth_login_url + ("&" if "?" in platform.auth_login_url else "?")
    auth_url += urlencode(query)
    if storage:
        response: WebResponse = Response(
            render_template(
                "lti/storage_login.html",
                auth_url=auth_url,
                target=storage,
                key=f"state_{started.state}",
                value=started.browser_token,
                origin=_origin(platform.auth_login_url),
            )
        )
    else:
        response = redirect(auth_url)
    _set_login_cookie(response, started.state, started.browser_token)
    return response


@bp.post("/launch")
def launch() -> WebResponse | str:
    """Validate a launch and open what it points at (lesson, picker or deep linking)."""
    form = {k: v for k, v in request.form.items() if isinstance(v, str)}
    state = form.get("state", "")
    if not state:
        raise LaunchProblem(
            say("Missing state"), say("the launch POST carries no state"), status=400
        )
    context = extensions.lti()
    pending = logins.pending(context.store, state)
    token = request.cookies.get(COOKIE_PREFIX + state[:16]) or form.get("browser_token")
    if not token:
        if pending.storage_target:
            return render_template(
                "lti/storage_launch.html",
                form=form,
                target=pending.storage_target,
                key=f"state_{state}",
                origin=_origin(_auth_url(context, pending.platform_id)),
            )
        return render_template(
            "lti/new_window.html",
            relaunch=context.base_url + "/lti/login?" + urlencode(pending.params),
        )
    valid = launch_pages.validate(context, form, logins.consume(context.store, pending, token))
    response = launch_pages.open(context, extensions.celery_app(), valid)
    response.delete_cookie(COOKIE_PREFIX + state[:16], path="/lti/")
    return response


@bp.get("/jwks")
def jwks() -> Response:
    """Publish the tool's public keys (current and recently retired)."""
    response = jsonify(extensions.lti().keys.jwks())
    response.headers["Cache-Control"] = "public, max-age=300"
    return response


@bp.get("/config.json")
def canvas_config() -> Response:
    """Return the Canvas developer-key JSON for this tool."""
    return jsonify(registration.canvas_config(extensions.lti()))


@bp.get("/register")
def register() -> str:
    """Answer a platform's dynamic registration, if the URL carries an admin's valid token.

    The token is checked before anything is fetched or stored: without one, a stranger
    cannot make the tool call out or trust a platform.
    """
    context = extensions.lti()
    try:
        grant = registration_tokens.claim(context.store, request.args.get("token", ""), utcnow())
    except registration_tokens.TokenRefused as exc:
        raise RegistrationProblem(
            say("No valid registration token"), exc.words, status=403
        ) from None
    try:
        platform = registration.register(
            context,
            request.args.get("openid_configuration", ""),
            request.args.get("registration_token"),
            grant,
        )
    except BaseException:
        registration_tokens.release(context.store, grant)
        raise
    registration_tokens.spend(context.store, grant, platform.id, utcnow())
    log.info(
        "platform registered",
        extra={
            "platform_id": platform.id,
            "issuer": platform.issuer,
            "platform_name": platform.name,
        },
    )
    # the self-test makes a dozen calls to the LMS, each up to the outbound deadline: in the
    # background, so the LMS's registration window closes at once (the admin page shows it)
    testing = send_platform_check(extensions.celery_app(), PlatformCheckMessage(platform.id))
    return render_template("lti/registered.html", platform=platform, testing=testing)


def _set_login_cookie(response: WebResponse, state: str, token: str) -> None:
    secure = request.is_secure
    response.set_cookie(
        COOKIE_PREFIX + state[:16],
        token,
        max_age=int(logins.LOGIN_LIFETIME.total_seconds()),
        path="/lti/",
        httponly=True,
        secure=secure,
        # the launch is a cross-site POST from the LMS: only SameSite=None (which browsers
        # accept only with Secure) comes back with it; plain http is for loopback LMSs
        samesite="None" if secure else "Lax",
    )


def _origin(url: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _auth_url(context: Any, platform_id: int) -> str:
    platform = platform_rows.find(context.store, platform_id)
    return platform.auth_login_url if platform else ""
