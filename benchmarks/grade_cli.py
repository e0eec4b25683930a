"""The `codeblanks grade` command end to end, beside plain python, in the same run.

Usage: .venv/bin/python benchmarks/grade_cli.py [--runs N]
Interleaves three commands N times each and prints their medians:
  codeblanks grade lessons/expert/what-is-attention solution/model.py --json   (the CLI, sandboxed)
  chroot RUNTIME python3 model.py     (the sandbox's own interpreter and numpy, no isolation)
  python3 model.py                    (this machine's python3 with the venv's numpy, if any)
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SEED = REPO / "lessons" / "expert" / "what-is-attention"
SOLUTION = SEED / "solution" / "model.py"


def commands(runtime: Path) -> dict[str, list[str]]:
    """Return the commands to time, by label."""
    found = {
        "codeblanks grade --json": [
            str(REPO / ".venv" / "bin" / "codeblanks"),
            "grade",
            str(SEED),
            str(SOLUTION),
            "--json",
        ],
        "plain python3 (runtime tree)": [
            "chroot",
            str(runtime),
            "/usr/bin/python3",
            "-c",
            SOLUTION.read_text(),
        ],
    }
    host = shutil.which("python3")
    probe = subprocess.run([host or "python3", "-c", "import numpy"], capture_output=True)
    if host and probe.returncode == 0:
        found["plain python3 (host)"] = [host, str(SOLUTION)]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from service.settings import Settings

    runs = commands(Settings.from_env().runtime_dir)
    times: dict[str, list[float]] = {label: [] for label in runs}
    for _ in range(args.runs):
        for label, argv in runs.items():
            started = time.perf_counter()
            done = subprocess.run(argv, capture_output=True)
            times[label].append((time.perf_counter() - started) * 1000)
            assert done.returncode == 0, (label, done.stderr[-500:])
    for label, values in times.items():
        print(f"{label:<32} median {statistics.median(values):7.1f} ms over {len(values)} runs")


if __name__ == "__main__":
    main()
