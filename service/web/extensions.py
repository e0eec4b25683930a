"""The one way to what the app factory attached: settings, store, catalog, Celery app, LTI
(and each web process's live status streams, made on first use); what follows a committed
action is sent through `follow`.

`init_app` attaches them; each accessor returns one, typed, from the current app (or from
`app`, for code that runs before a request: an `init_app`, a command). No other module reads
`app.extensions` or `app.config["SETTINGS"]` (tests/test_architecture.py holds it).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from flask import Flask, current_app

from service.queue import Message, send

if TYPE_CHECKING:
    from celery import Celery

    from core.lessons import Catalog
    from service.lti.tool import LtiContext
    from service.settings import Settings
    from service.store.database import Store
    from service.web.student.streams import Streams


def init_app(app: Flask, settings: Settings, celery_app: Celery | None = None) -> None:
    """Attach the store (migrated), the catalog, the Celery app (this one, or one made for
    the settings) and the LTI context over them; `settings` are the app's SETTINGS."""
    from core.lessons import load_catalog
    from service.lti.tool import make_context
    from service.queue.broker import make_celery
    from service.store import Store, upgrade

    store = Store(settings.database)
    if app.config.get("MIGRATE_ON_START", True):
        upgrade(store)
    catalog = load_catalog(settings.lessons_dir)
    app.extensions["store"] = store
    app.extensions["catalog"] = catalog
    app.extensions["celery"] = make_celery(settings) if celery_app is None else celery_app
    app.extensions["lti"] = make_context(settings, store, catalog)


def settings(app: Flask | None = None) -> Settings:
    """Return the app's settings (by default, the current app's)."""
    found: Settings = _app(app).config["SETTINGS"]
    return found


def store(app: Flask | None = None) -> Store:
    """Return the app's store."""
    found: Store = _app(app).extensions["store"]
    return found


def catalog(app: Flask | None = None) -> Catalog:
    """Return the app's lesson catalog."""
    found: Catalog = _app(app).extensions["catalog"]
    return found


def follow(messages: Iterable[Message]) -> None:
    """Send what follows an action, once its change is committed (service.queue.send)."""
    send(celery_app(), messages)


def celery_app(app: Flask | None = None) -> Celery:
    """Return the app's Celery app: what service.queue's senders send through."""
    found: Celery = _app(app).extensions["celery"]
    return found


def lti(app: Flask | None = None) -> LtiContext:
    """Return the app's LTI context."""
    found: LtiContext = _app(app).extensions["lti"]
    return found


def streams(app: Flask | None = None) -> Streams:
    """Return this process's live status streams (their caps), made on first use.

    Made on first use, not in init_app: with `gunicorn --preload` the app is built before
    the fork, and each web process must count its own threads.
    """
    from service.web.student.streams import Streams

    found_app = _app(app)
    found = found_app.extensions.get("streams")
    if found is None:
        config = settings(found_app)
        made = Streams(config.streams_per_session, config.streams_per_process)
        found = found_app.extensions.setdefault("streams", made)  # atomic: one wins, both use it
    assert isinstance(found, Streams)
    return found


def _app(app: Flask | None) -> Flask:
    return current_app if app is None else app
