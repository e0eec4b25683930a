"""The Flask LTI tool: app factory, LTI, student and teacher pages, JSON API, store, CLI."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any

# Flask, SQLAlchemy and Celery are imported inside the functions below: `codeblanks grade`
# and every `import service.settings` would otherwise pay a second of start-up for them.
if TYPE_CHECKING:
    from celery import Celery
    from flask import Flask

    from service.settings import Settings

# JSON escapes can make 64 KiB of code several times longer on the wire; the API checks the
# code's own size. `codeblanks serve` refuses a larger body before the app sees it
# (service/web/buffering.py), and so does the compose file's proxy (docker/proxy.conf)
MAX_BODY = 1024 * 1024


def create_app(
    test_config: Mapping[str, Any] | None = None, celery_app: Celery | None = None
) -> Flask:
    """Build the tool: settings, secret key, store, catalog, queue, blueprints.

    `test_config` overrides Flask config keys; its SETTINGS, if any, replaces the
    environment's settings. `celery_app` replaces the one made for the settings (a test's
    testkit.celery.FakeCelery, which records what is sent).
    """
    from flask import Flask

    from service.instance import secret_key
    from service.settings import Settings

    settings = (test_config or {}).get("SETTINGS") or Settings.from_env()
    app = Flask(__name__, instance_path=str(settings.instance_dir.resolve()))
    app.config.from_mapping(
        SETTINGS=settings,
        SECRET_KEY=secret_key(settings.instance_dir),
        MAX_CONTENT_LENGTH=MAX_BODY,
        MIGRATE_ON_START=True,
        PERMANENT_SESSION_LIFETIME=timedelta(hours=8),
        # a token in a URL (service.web.auth): long enough to follow a link of a page loaded
        # without its script; the script signs a fresh one while the page is in use
        LINK_LIFETIME=timedelta(minutes=15),
    )
    if test_config:
        app.config.from_mapping(test_config)
    if not app.testing:
        from service import logs

        logs.configure(settings.log_format)
    register_extensions(app, settings, celery_app)
    register_blueprints(app)
    register_errorhandlers(app)
    return app


def register_extensions(app: Flask, settings: Settings, celery_app: Celery | None) -> None:
    """Attach the store (migrated), the catalog, the Celery app (to send), LTI and sessions."""
    from service.web import auth, extensions, headers, i18n, labels, proxies, rendering
    from service.web.ops import request_ids

    extensions.init_app(app, settings, celery_app)
    auth.init_app(app)
    request_ids.init_app(app)
    headers.init_app(app)
    i18n.init_app(app)
    rendering.init_app(app)
    labels.init_app(app)
    proxies.init_app(app)


def register_blueprints(app: Flask) -> None:
    """Mount one blueprint per concern."""
    from service.web import admin, figure_views, home, switching
    from service.web.lms import endpoints, picker
    from service.web.ops import health, metrics
    from service.web.student import api, attempt_pages, student_pages
    from service.web.teacher import regrade_pages, teacher_pages

    app.register_blueprint(api.bp)
    app.register_blueprint(health.bp)
    app.register_blueprint(metrics.bp)
    app.register_blueprint(home.bp)
    app.register_blueprint(admin.bp)
    app.register_blueprint(endpoints.bp)
    app.register_blueprint(picker.bp)
    app.register_blueprint(student_pages.bp)
    app.register_blueprint(attempt_pages.bp)
    app.register_blueprint(teacher_pages.bp)
    app.register_blueprint(regrade_pages.bp)
    app.register_blueprint(switching.bp)
    app.register_blueprint(figure_views.bp)


def register_errorhandlers(app: Flask) -> None:
    """Answer every refusal and failure in one place: JSON under /api, a page elsewhere."""
    from service.web import boundary

    boundary.init_app(app)
