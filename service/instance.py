"""The instance directory: secrets generated at first start, kept out of git."""

from __future__ import annotations

import os
import secrets
import tempfile
from pathlib import Path

_SECRET_KEY = "secret_key"


def prepare(instance_dir: Path) -> Path:
    """Create the instance dir if needed, readable by its owner only (it holds the secrets)."""
    instance_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(instance_dir, 0o700)
    return instance_dir


def secret_key(instance_dir: Path) -> bytes:
    """Return the session-signing key, creating it (mode 0600) on first start."""
    prepare(instance_dir)
    path = instance_dir / _SECRET_KEY
    if not path.exists():
        fd, draft = tempfile.mkstemp(dir=instance_dir, prefix=".secret-")  # mode 0600
        with os.fdopen(fd, "w") as out:
            out.write(secrets.token_hex(32))
        try:
            # a hard link appears whole or not at all, and fails if another process that
            # started at the same time got there first: every process reads one key
            os.link(draft, path)
        except FileExistsError:
            pass
        finally:
            os.unlink(draft)
    key = path.read_bytes().strip()
    if len(key) < 32:
        raise RuntimeError(f"{path}: the secret key is too short; delete the file to make anew")
    return key
