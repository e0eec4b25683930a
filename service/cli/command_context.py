"""What every `codeblanks` command gets from the group: the settings, read once."""

from __future__ import annotations

from dataclasses import dataclass

from core.runs import Sandbox
from service.settings import Settings
from workers.sandbox import make_sandbox


@dataclass(frozen=True)
class Context:
    """What every command gets: the settings, read once."""

    settings: Settings

    def sandbox(self, backend: str | None = None) -> Sandbox:
        """Build the sandbox backend named, or the configured one."""
        return make_sandbox(backend or self.settings.sandbox, self.settings.runtime_dir)
