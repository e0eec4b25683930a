"""What every `codeblanks` command gets from the group: the settings, read once."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from core.runs import Sandbox
from service.settings import Settings
from workers.sandbox import close, make_sandbox


@dataclass(frozen=True)
class Context:
    """What every command gets: the settings, read once."""

    settings: Settings

    @contextmanager
    def sandbox(self, backend: str | None = None) -> Iterator[Sandbox]:
        """Build the sandbox backend named, or the configured one, for the block.

        When the block ends, the sandbox is closed: its processes are gone and its cgroups
        removed, so the command leaves nothing running behind it.
        """
        settings = self.settings
        box = make_sandbox(
            backend or settings.sandbox,
            settings.runtime_dir,
            settings.runner_image,
            bool(settings.warm_drawing),
        )
        try:
            yield box
        finally:
            close(box)
