"""Configuration, read once from defaults plus CODEBLANKS_* environment variables."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path

PREFIX = "CODEBLANKS_"
_REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Settings:
    """Every setting of every command; each field is CODEBLANKS_<FIELD NAME IN CAPITALS>."""

    instance_dir: Path = Path("instance")
    lessons_dir: Path = _REPO / "lessons"
    runtime_dir: Path = Path("/var/lib/codeblanks/runtime/bookworm")
    sandbox: str = "bwrap"
    base_url: str = "http://127.0.0.1:5000"
    database_url: str = ""
    redis_url: str = ""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Return the defaults overridden by CODEBLANKS_* variables of `environ`."""
        environ = os.environ if environ is None else environ
        changes: dict[str, object] = {}
        for field in fields(cls):
            raw = environ.get(PREFIX + field.name.upper())
            if raw is None or raw == "":
                continue
            changes[field.name] = Path(raw) if field.type in ("Path", Path) else raw
        return replace(cls(), **changes)  # type: ignore[arg-type]
