"""A running test app given another resource: changed settings, a store that is away."""

from __future__ import annotations

from typing import TYPE_CHECKING

from flask import Flask

if TYPE_CHECKING:
    from core.lessons import Catalog
    from service.settings import Settings
    from service.store.database import Store


def swap(
    app: Flask,
    *,
    settings: Settings | None = None,
    store: Store | None = None,
    catalog: Catalog | None = None,
) -> None:
    """Give `app` these in place of its own (read back, as ever, through service.web.extensions)."""
    if settings is not None:
        app.config["SETTINGS"] = settings
    if store is not None:
        app.extensions["store"] = store
    if catalog is not None:
        app.extensions["catalog"] = catalog
