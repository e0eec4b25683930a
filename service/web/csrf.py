"""CSRF tokens for the tool's forms, bound to the session.

The session may come from the cookie (which a cross-site form post would carry) or from
the page's `s` parameter, so every form that changes something also carries a token that
only a page of this session could have: a random value kept in the session, signed with
the instance's secret key and dated. check() compares it with the session's own value.
"""

from __future__ import annotations

import hmac
import secrets

from flask import abort, current_app, session
from flask_babel import gettext as _
from itsdangerous import BadSignature, URLSafeTimedSerializer

FIELD = "csrf"
_KEY = "csrf_nonce"
_SALT = "codeblanks.csrf"


def token() -> str:
    """Return a CSRF token for this session's forms (making the session's nonce at first).

    Call it before signing the session for a page (service.web.auth.page_session): the
    nonce is part of the session.
    """
    nonce = session.get(_KEY)
    if not isinstance(nonce, str):
        nonce = secrets.token_urlsafe(16)
        session[_KEY] = nonce
    return str(_serializer().dumps(nonce))


def check(value: str | None) -> None:
    """Abort with 400 unless `value` is a fresh token of this session."""
    expected = session.get(_KEY)
    if not value or not isinstance(expected, str):
        abort(400, _("The form is missing its security token; open the page again."))
    max_age = int(current_app.permanent_session_lifetime.total_seconds())
    try:
        nonce = _serializer().loads(value, max_age=max_age)
    except BadSignature:
        abort(400, _("The form's security token is stale or invalid; open the page again."))
    if not isinstance(nonce, str) or not hmac.compare_digest(nonce, expected):
        abort(400, _("The form's security token belongs to another session; open the page again."))


def _serializer() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(current_app.secret_key, salt=_SALT)  # type: ignore[arg-type]
