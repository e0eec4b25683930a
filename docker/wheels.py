"""Print what the image's Python needs beyond the wheels in a directory, one requirement a line.

`pip wheel` resolves for the interpreter that runs it, so a dependency behind a marker such as
`python_full_version < "3.11.3"` is left out when the host's Python is newer than the image's.
Usage: python docker/wheels.py WHEEL_DIR TARGET_PYTHON_VERSION   (e.g. docker/wheels 3.11.2)
"""

from __future__ import annotations

import sys
import zipfile
from email.parser import Parser
from pathlib import Path

try:
    from packaging.markers import default_environment
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name, parse_wheel_filename
except ImportError:  # a venv without packaging still has pip's copy
    from pip._vendor.packaging.markers import default_environment
    from pip._vendor.packaging.requirements import Requirement
    from pip._vendor.packaging.utils import canonicalize_name, parse_wheel_filename


def missing(wheel_dir: Path, python: str) -> list[str]:
    """Return the requirements of the wheels, for `python`, that no wheel there provides."""
    env = {**default_environment(), "extra": ""}
    env.update(python_full_version=python, python_version=".".join(python.split(".")[:2]))
    have: set[str] = set()
    needed: dict[str, Requirement] = {}
    for wheel in sorted(wheel_dir.glob("*.whl")):
        have.add(canonicalize_name(parse_wheel_filename(wheel.name)[0]))
        with zipfile.ZipFile(wheel) as archive:
            meta = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
            headers = Parser().parsestr(archive.read(meta).decode())
        for line in headers.get_all("Requires-Dist") or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate(env):
                needed.setdefault(canonicalize_name(requirement.name), requirement)
    lines = []
    for name, requirement in sorted(needed.items()):
        if name not in have:
            requirement.marker = None
            lines.append(str(requirement))
    return lines


if __name__ == "__main__":
    print("\n".join(missing(Path(sys.argv[1]), sys.argv[2])))
