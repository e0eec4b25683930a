"""A worker's context over a test's web app, as workers.app makes one at a worker's start."""

from __future__ import annotations

import os
from typing import Any

from core.runs import Sandbox
from service.lti.ags import AgsPoster
from service.web import extensions
from workers.context import WorkerContext


def attach_worker(app: Any, sandbox: Sandbox | None = None) -> WorkerContext:
    """Give the app's Celery app a worker context on the app's own store, catalog and LTI
    context, so that its tasks run in this process (`task.apply()`) as a worker runs them."""
    lti = extensions.lti(app)
    context = WorkerContext(
        settings=extensions.settings(app),
        store=extensions.store(app),
        catalog=extensions.catalog(app),
        lti=lti,
        poster=AgsPoster(lti),
    )
    if sandbox is not None:
        context.sandboxes[os.getpid()] = sandbox
    context.attach(extensions.celery_app(app))
    return context
