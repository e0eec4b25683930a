"""What the worker's tasks share in one process: settings, store, catalog, LTI, grade poster,
and this process's sandbox. Made once at the worker's start (workers.app), without Flask,
and carried by the worker's Celery app: `attach` puts it there, `of` is how a task reads it."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.lessons import Catalog, load_catalog
from core.platforms import GradePoster
from core.runs import Sandbox
from service.lti.ags import AgsPoster
from service.lti.tool import LtiContext, make_context
from service.settings import Settings
from service.store import Store, upgrade
from workers.sandbox import close, make_sandbox

if TYPE_CHECKING:
    from celery import Celery

# the attribute of the Celery app that holds its context: set by attach, read by of
_ATTRIBUTE = "codeblanks_context"


@dataclass
class WorkerContext:
    """The worker's resources; `poster` is None where no grade goes to an LMS (tests)."""

    settings: Settings
    store: Store
    catalog: Catalog
    lti: LtiContext
    poster: GradePoster | None
    sandboxes: dict[int, Sandbox] = field(default_factory=dict)  # by pid: see sandbox()

    @classmethod
    def start(cls, settings: Settings) -> WorkerContext:
        """Open the store (migrated), load the catalog, and make the LTI context and poster."""
        store = Store(settings.database)
        upgrade(store)
        catalog = load_catalog(settings.lessons_dir)
        lti = make_context(settings, store, catalog)
        return cls(settings, store, catalog, lti, AgsPoster(lti))

    def attach(self, celery_app: Celery) -> None:
        """Give the Celery app this context, for its tasks to read (`of`)."""
        setattr(celery_app, _ATTRIBUTE, self)

    @staticmethod
    def of(celery_app: Celery) -> WorkerContext:
        """Return the context that the Celery app carries; RuntimeError if it carries none."""
        found = getattr(celery_app, _ATTRIBUTE, None)
        if not isinstance(found, WorkerContext):
            raise RuntimeError(f"the Celery app {celery_app.main!r} carries no worker context")
        return found

    def sandbox(self) -> Sandbox:
        """Return this process's sandbox, made on first use: a warm pool must not fork, so
        each pool process makes its own."""
        pid = os.getpid()
        if pid not in self.sandboxes:
            settings = self.settings
            self.sandboxes[pid] = make_sandbox(
                settings.sandbox,
                settings.runtime_dir,
                settings.runner_image,
                bool(settings.warm_drawing),
            )
        return self.sandboxes[pid]

    def close_sandbox(self) -> None:
        """Close this process's sandbox, if it made one: its processes and cgroups go with it."""
        sandbox = self.sandboxes.pop(os.getpid(), None)
        if sandbox is not None:
            close(sandbox)
