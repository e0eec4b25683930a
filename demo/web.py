"""The Flask blueprint and app factories of the demo LMS."""

from __future__ import annotations

from flask import Blueprint, Flask, Response, jsonify, render_template, request

from demo.config import DemoConfig
from demo.lms_errors import DemoError
from demo.lms_views import JSON_ENDPOINTS, register_views
from demo.pages import register_pages
from demo.platform import DemoPlatform

EXTENSION = "codeblanks_demo"
# what a tool calls (not the admin API): where an LMS's own error statuses apply
SERVICE_ENDPOINTS = {
    "token", "register", "lineitems", "lineitem", "scores", "results", "memberships"
}  # fmt: skip


def create_demo_blueprint(config: DemoConfig, platform: DemoPlatform | None = None) -> Blueprint:
    """Return the demo LMS as a blueprint mounted at the path of `config.base_url`."""
    platform = platform or DemoPlatform(config)
    bp = Blueprint(
        "demo", __name__, url_prefix=config.mount_path or None, template_folder="templates"
    )
    register_views(bp, platform)
    register_pages(bp, platform)

    @bp.errorhandler(DemoError)
    def refused(exc: DemoError) -> tuple[Response | str, int, dict[str, str]]:
        if exc.body is not None:  # Canvas's own shapes (demo/lms_canvas.py)
            return jsonify(exc.body), exc.status, {}
        headers = {}
        if exc.status == 401:
            headers["WWW-Authenticate"] = f'Bearer error="{exc.error}"'
        endpoint = (request.endpoint or "").rpartition(".")[2]
        plays = config.plays
        if endpoint in JSON_ENDPOINTS:
            if plays.scope_error_header and exc.error == "invalid_scope":
                # Sakai: {"error":"invalid_scope"} and the scope in a header (LTI13Util.return400)
                headers[plays.scope_error_header] = exc.message
                headers["Cache-Control"] = "no-store"
                return jsonify({"error": exc.error}), 400, headers
            body = jsonify({"error": exc.error, "error_description": exc.message})
            as_400 = plays.errors_as_400 and endpoint in SERVICE_ENDPOINTS
            return body, 400 if as_400 else exc.status, headers
        page = render_template(
            "demo/error.html", status=exc.status, message=exc.message, error=exc.error
        )
        return page, exc.status, headers

    bp.record_once(lambda state: state.app.extensions.setdefault(EXTENSION, platform))
    return bp


def create_demo_app(config: DemoConfig) -> Flask:
    """Return a Flask app serving only the demo LMS (tests, standalone runs)."""
    app = Flask(__name__)
    app.register_blueprint(create_demo_blueprint(config))
    return app


def platform_of(app: Flask) -> DemoPlatform:
    """Return the DemoPlatform a blueprint registered on `app`."""
    platform: DemoPlatform = app.extensions[EXTENSION]
    return platform
