"""Security headers on every answer of the tool: CSP with per-page nonces, framing, referrers.

The tool lives in the LMS's iframe, so it cannot forbid framing outright; instead a page may
be framed only by the origins of the LMS its session was launched from (the issuer, its
login host and the page that framed the launch: for Canvas, the school's own domain), so
that no other site can frame a teacher's page and trick a click on "Send regrade". Pages
that belong to the launch itself (login, launch, registration) carry nothing to click on
and may be framed by any LMS. Inline scripts run only with the page's nonce.
"""

from __future__ import annotations

import secrets

from flask import Flask, Response, g, request

from service.web import extensions
from service.web.auth import frame_origins

# the launch's own steps: framed by whichever LMS starts them, before any session exists
FRAMEABLE_BY_ANY = frozenset({"lti.login", "lti.launch", "lti.register"})


def init_app(app: Flask) -> None:
    """Offer `csp_nonce()` to templates and add the headers to every answer."""
    app.jinja_env.globals["csp_nonce"] = nonce
    app.after_request(secure)


def nonce() -> str:
    """Return this request's script nonce, for an inline <script nonce=...>."""
    if "csp_nonce" not in g:
        g.csp_nonce = secrets.token_urlsafe(16)
    return str(g.csp_nonce)


def secure(response: Response) -> Response:
    """Add the security headers to an answer."""
    response.headers["X-Content-Type-Options"] = "nosniff"
    # a page's address may carry a link token (`s`, see service.web.auth): no request it
    # makes, to the tool itself (whose logs keep the Referer) or elsewhere, repeats it
    response.headers.setdefault("Referrer-Policy", "no-referrer")
    if extensions.settings().base_url.startswith("https://"):
        response.headers.setdefault("Strict-Transport-Security", "max-age=31536000")
    if request.blueprint == "demo":
        return response  # the demo LMS is a platform of its own, with its own pages
    if "Content-Security-Policy" in response.headers:
        return response  # an answer that is no page sets a stricter one (a figure's PNG)
    scripts = "'self'" + (f" 'nonce-{g.csp_nonce}'" if "csp_nonce" in g else "")
    policy = [
        "default-src 'self'",
        f"script-src {scripts}",
        # CodeMirror adds its styles at run time, and a few elements carry a style attribute
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        f"frame-ancestors {ancestors()}",
    ]
    response.headers["Content-Security-Policy"] = "; ".join(policy)
    return response


def ancestors() -> str:
    """Return who may frame this answer: the session's LMS, any LMS for the launch, or us."""
    origins = frame_origins()
    if origins:
        return " ".join(["'self'", *origins])
    if request.endpoint in FRAMEABLE_BY_ANY:
        return "*"
    return "'self'"
