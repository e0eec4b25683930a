"""What the worker's tasks share in one process: settings, store, catalog, LTI, grade poster,
and this process's sandbox. Made once at the worker's start (workers.app), without Flask."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from core.lessons import Catalog, load_catalog
from core.platforms import GradePoster
from core.runs import Sandbox
from service.lti.ags import AgsPoster
from service.lti.tool import LtiContext, make_context
from service.settings import Settings
from service.store import Store, upgrade
from workers.sandbox import close, make_sandbox


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

    def sandbox(self) -> Sandbox:
        """Return this process's sandbox, made on first use: a warm pool must not fork, so
        each pool process makes its own."""
        pid = os.getpid()
        if pid not in self.sandboxes:
            self.sandboxes[pid] = make_sandbox(self.settings.sandbox, self.settings.runtime_dir)
        return self.sandboxes[pid]

    def close_sandbox(self) -> None:
        """Close this process's sandbox, if it made one: its processes and cgroups go with it."""
        sandbox = self.sandboxes.pop(os.getpid(), None)
        if sandbox is not None:
            close(sandbox)
