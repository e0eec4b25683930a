"""The Flask LTI tool: app factory, LTI, student and teacher pages, JSON API, store, CLI."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any

# Flask, SQLAlchemy and Celery are imported inside the functions below: `codeblanks grade`
# and every `import service.settings` would otherwise pay a second of start-up for them.
if TYPE_CHECKING:
    from flask import Flask

# JSON escapes can make 64 KiB of code several times longer on the wire; the API checks the
# code's own size. `codeblanks serve` refuses a larger body before the app sees it
# (service/web/buffering.py), and so does the compose file's proxy (docker/proxy.conf)
MAX_BODY = 1024 * 1024


def create_app(test_config: Mapping[str, Any] | None = None) -> Flask:
    """Build the tool: settings, secret key, store, catalog, queue, blueprints.

    `test_config` overrides Flask config keys; its SETTINGS, if any, replaces the
    environment's settings.
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
    register_extensions(app)
    register_blueprints(app)
    register_errorhandlers(app)
    return app


def register_extensions(app: Flask) -> None:
    """Attach the store (migrated), the catalog, the Celery app (to send), sessions and LTI."""
    from core.lessons import load_catalog
    from service.queue.broker import make_celery
    from service.store import Store, upgrade
    from service.web import auth, headers, i18n, proxies, rendering
    from service.web.lms import launch_pages
    from service.web.ops import request_ids

    settings = app.config["SETTINGS"]
    store = Store(settings.database)
    if app.config.get("MIGRATE_ON_START", True):
        upgrade(store)
    app.extensions["store"] = store
    app.extensions["catalog"] = load_catalog(settings.lessons_dir)
    app.extensions["celery"] = make_celery(settings)
    auth.init_app(app)
    request_ids.init_app(app)
    headers.init_app(app)
    i18n.init_app(app)
    rendering.init_app(app)
    launch_pages.init_app(app)
    proxies.init_app(app)


def register_blueprints(app: Flask) -> None:
    """Mount one blueprint per concern."""
    from service.web import admin, home, switching
    from service.web.lms import endpoints, picker
    from service.web.ops import health, metrics
    from service.web.student import api, student_pages
    from service.web.teacher import regrade_pages, teacher_pages

    app.register_blueprint(api.bp)
    app.register_blueprint(health.bp)
    app.register_blueprint(metrics.bp)
    app.register_blueprint(home.bp)
    app.register_blueprint(admin.bp)
    app.register_blueprint(endpoints.bp)
    app.register_blueprint(picker.bp)
    app.register_blueprint(student_pages.bp)
    app.register_blueprint(teacher_pages.bp)
    app.register_blueprint(regrade_pages.bp)
    app.register_blueprint(switching.bp)


def register_errorhandlers(app: Flask) -> None:
    """Answer every refusal and failure in one place: JSON under /api, a page elsewhere."""
    from service.web import boundary

    boundary.init_app(app)
