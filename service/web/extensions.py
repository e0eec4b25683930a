"""Typed access to what the app factory attached: the store, the catalog, the settings, the
queues (what follows a committed action is sent through `follow`)."""

from __future__ import annotations

from collections.abc import Iterable

from flask import current_app

from core.lessons import Catalog
from service.queue import Message, send
from service.settings import Settings
from service.store.database import Store


def store() -> Store:
    """Return the current app's store."""
    found: Store = current_app.extensions["store"]
    return found


def catalog() -> Catalog:
    """Return the current app's lesson catalog."""
    found: Catalog = current_app.extensions["catalog"]
    return found


def settings() -> Settings:
    """Return the current app's settings."""
    found: Settings = current_app.config["SETTINGS"]
    return found


def follow(messages: Iterable[Message]) -> None:
    """Send what follows an action, once its change is committed (service.queue.send)."""
    send(current_app.extensions["celery"], messages)
