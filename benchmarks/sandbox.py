"""Sandbox overhead: the seed's sample solution, plain and in each backend, side by side.

Usage: .venv/bin/python benchmarks/sandbox.py [--runs N] [--json]
Prints a table; with --json, ends with one JSON line:
  {"plain_ms": ..., "modes": {"<mode>": {"median_ms", "p95_ms", "runs_per_s", "peak_rss_mb",
  "ratio_to_plain"}}}
"plain" is the sandbox's own interpreter and numpy (the runtime tree), run with no isolation.
Latency rounds interleave the modes, so that drift in the machine's speed hits all alike;
throughput runs one slot per core.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.errors import GraderError  # noqa: E402
from core.lessons import load_lesson  # noqa: E402
from core.runs import RunRequest, RunResult, RunStatus, Sandbox  # noqa: E402
from core.verdicts import grade_source  # noqa: E402
from service.settings import Settings  # noqa: E402
from workers.sandbox import make_sandbox  # noqa: E402

SEED = Path(__file__).resolve().parent.parent / "lessons" / "expert" / "what-is-attention"
Runner = Callable[[], int]  # runs once, returns the run's peak memory in KiB


def plain_runner(root: Path, source: bytes) -> Runner:
    """Run the source with the runtime tree's python3, with no isolation (a chroot only)."""

    def run() -> int:
        pid = os.posix_spawn(
            "/usr/sbin/chroot",
            ["chroot", str(root), "/usr/bin/python3", "-c", source.decode()],
            {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
            file_actions=[(os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0)],
        )
        _, status, usage = os.wait4(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        return int(usage.ru_maxrss)

    return run


class _Recording:
    """Wraps a sandbox to keep the last result's peak memory."""

    def __init__(self, inner: Sandbox) -> None:
        self.inner = inner
        self.last: RunResult | None = None
        self.parallel_runs = inner.parallel_runs

    def run(self, request: RunRequest) -> RunResult:
        self.last = self.inner.run(request)
        return self.last


def backend_runner(backend: str, source: bytes) -> Runner:
    """Grade the source through a sandbox backend, exactly as a submission is graded."""
    exercise = load_lesson(SEED).exercise
    assert exercise is not None
    sandbox = _Recording(make_sandbox(backend, Settings.from_env().runtime_dir))
    getattr(sandbox.inner, "start", lambda: None)()  # a pool starts with its worker, not the clock
    atexit.register(getattr(sandbox.inner, "close", lambda: None))  # and its zygotes end with us

    def run() -> int:
        verdict = grade_source(exercise, source, sandbox)
        assert verdict.status is RunStatus.PASSED, verdict.feedback
        return sandbox.last.peak_memory_kb if sandbox.last else 0

    return run


def runners(source: bytes) -> dict[str, Runner]:
    """Return every mode this machine can run, by name; "plain" first."""
    root = Settings.from_env().runtime_dir
    modes = {
        "plain": plain_runner(root, source),
        "bwrap_cold": backend_runner("bwrap", source),
    }
    if available("docker"):  # a daemon and the runner image (runtime/build-image.sh)
        modes["docker_cold"] = backend_runner("docker", source)
    if available("warm"):
        modes["warm"] = backend_runner("warm", source)
    return modes


def available(backend: str) -> bool:
    """Return whether a backend can run here: it builds and its check(), if any, passes."""
    try:
        sandbox = make_sandbox(backend, Settings.from_env().runtime_dir)
        getattr(sandbox, "check", lambda: None)()
    except GraderError:
        return False
    return True


def throughput(run: Runner, total: int) -> float:
    """Return runs per second with one concurrent run per core."""
    started = time.perf_counter()
    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        list(pool.map(lambda _: run(), range(total)))
    return total / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    args = parser.parse_args()
    source = (SEED / "solution" / "model.py").read_bytes()
    modes = runners(source)
    times: dict[str, list[float]] = {name: [] for name in modes}
    peaks: dict[str, int] = dict.fromkeys(modes, 0)
    for run in modes.values():
        run()  # warm caches
    for _ in range(args.runs):
        for name, run in modes.items():
            started = time.perf_counter()
            peak = run()
            times[name].append((time.perf_counter() - started) * 1000)
            peaks[name] = max(peaks[name], peak)
    rows: dict[str, dict[str, float]] = {}
    for name, run in modes.items():
        ordered = sorted(times[name])
        rows[name] = {
            "median_ms": round(statistics.median(ordered), 1),
            "p95_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))], 1),
            "runs_per_s": round(throughput(run, max(args.runs, 8)), 1),
            "peak_rss_mb": round(peaks[name] / 1024, 1),
        }
    plain = rows["plain"]["median_ms"]
    for figures in rows.values():
        figures["ratio_to_plain"] = round(figures["median_ms"] / plain, 2)
    print(f"seed solution, {args.runs} interleaved runs per mode, {os.cpu_count()} cores")
    print(f"{'mode':<12}{'median ms':>10}{'p95 ms':>9}{'runs/s':>8}{'peak MB':>9}{'x plain':>9}")
    for name, f in rows.items():
        print(
            f"{name:<12}{f['median_ms']:>10}{f['p95_ms']:>9}{f['runs_per_s']:>8}"
            f"{f['peak_rss_mb']:>9}{f['ratio_to_plain']:>9}"
        )
    if args.json:
        modes_json = {name: f for name, f in rows.items() if name != "plain"}
        print(json.dumps({"plain_ms": plain, "modes": modes_json}))


if __name__ == "__main__":
    main()
