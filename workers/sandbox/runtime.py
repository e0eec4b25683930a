"""The runtime tree: one minimal Debian with python3, numpy and matplotlib, shared by every
backend."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from core.errors import GraderError

DEFAULT_ROOT = Path("/var/lib/codeblanks/runtime/bookworm")
PYTHON = "/usr/bin/python3"
MANIFEST = "codeblanks-runtime.json"
# how a run draws (runtime/codeblanks_drawing.py, which the tree imports as Python starts):
# matplotlib's rc file where the sandbox sees it (Debian's is /etc/matplotlibrc, outside
# it), its config and cache dir in the run's own /tmp (the hook puts the tree's font list
# there), and the tree's Agg backend that keeps plt.show()'s figures
DRAWING_ENV = {
    "MPLBACKEND": "module://codeblanks_drawing",
    "MATPLOTLIBRC": "/usr/share/matplotlib/mpl-data/matplotlibrc",
    "MPLCONFIGDIR": "/tmp/matplotlib",
}


@dataclass(frozen=True)
class Runtime:
    """A read-only tree holding the interpreter and libraries that submissions run with."""

    root: Path

    def check(self) -> None:
        """Raise GraderError, saying how to fix it, when the tree is missing or incomplete."""
        if not (self.root / PYTHON.lstrip("/")).exists():
            raise GraderError(
                f"the sandbox runtime tree {self.root} has no {PYTHON}; "
                "build it with runtime/build.sh (the README's set-up command does)"
            )

    def versions(self) -> dict[str, str]:
        """Return the recorded versions (python, numpy, matplotlib) from the tree's manifest."""
        try:
            data = json.loads((self.root / MANIFEST).read_text())
        except (OSError, ValueError):
            return {}
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}
