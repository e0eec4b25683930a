"""The tool's front page: what it is, and the URLs an LMS admin registers."""

from __future__ import annotations

from flask import Blueprint, render_template

from service.web import extensions

bp = Blueprint("home", __name__)


@bp.get("/")
def index() -> str:
    """Show the registration URLs (for LMS admins) and, in dev mode, the demo LMS link."""
    settings = extensions.settings()
    base = settings.base_url.rstrip("/")
    urls = [
        (
            "Dynamic registration: a single-use URL from `codeblanks platforms register-url` "
            "or the admin page (Moodle: paste it as the tool URL)",
            f"{base}/lti/register?token=...",
        ),
        ("Canvas developer key (Enter URL)", f"{base}/lti/config.json"),
        ("OIDC login initiation", f"{base}/lti/login"),
        ("Launch / redirect URI", f"{base}/lti/launch"),
        ("Public keys (JWKS)", f"{base}/lti/jwks"),
    ]
    return render_template("home.html", urls=urls, demo=bool(settings.demo), base=base)
