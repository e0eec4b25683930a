"""Sandbox overhead: the seed's sample solution, plain and in each backend, side by side.

Usage: .venv/bin/python benchmarks/sandbox.py [--runs N] [--modes warm,warm_cases5] [--json]
Prints a table; with --json, ends with one JSON line:
  {"plain_ms": ..., "modes": {"<mode>": {"median_ms", "p95_ms", "runs_per_s", "peak_rss_mb",
  "ratio_to_plain"}}}
"plain" is the sandbox's own interpreter and numpy (the runtime tree), run with no isolation.
"warm_cases5" grades the same solution against the seed with five cases (CASES5: two run cases
without the harness, one argv case and two value cases through it) on the same pool as "warm";
a row there is one whole submission, and it adds "ratio_to_warm", its cost in single runs.
"warm_draw", "bwrap_cold_draw" and "docker_cold_draw" run the heat-map lesson's sample solution
once (expert/attention-heatmap: it imports matplotlib, draws the map and plt.show()s it), its
figure collected and re-encoded on the host as a run's always is; "warm_drawing" and
"warm_drawing_draw" are the seed and the heat map on a pool whose zygotes import matplotlib
ahead (CODEBLANKS_WARM_DRAWING=1). They run only when named in --modes (or with --draw),
since the seed's modes are the contract's.
Latency rounds interleave the modes, so that drift in the machine's speed hits all alike, and
each timed run meets a settled sandbox (SETTLE_S after the last), as a student's submission
meets a worker between submissions; throughput grades one submission per core at a time,
back to back, so a pool's idle reserve is soon spent there.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.errors import GraderError  # noqa: E402
from core.lessons import Exercise, load_lesson  # noqa: E402
from core.runs import RunRequest, RunResult, RunStatus, Sandbox  # noqa: E402
from core.verdicts import grade_source  # noqa: E402
from service.settings import Settings  # noqa: E402
from workers.sandbox import make_sandbox  # noqa: E402

SEED = Path(__file__).resolve().parent.parent / "lessons" / "expert" / "what-is-attention"
HEATMAP = SEED.parent / "attention-heatmap"
DRAWING = ("warm_draw", "bwrap_cold_draw", "docker_cold_draw", "warm_drawing", "warm_drawing_draw")
Runner = Callable[[], int]  # runs once, returns the run's peak memory in KiB
# the seed with five cases of every kind; its solution passes them all
CASES5 = """\
title: First attention, case by case
prompt: Compute the softmax weights.
entrypoint: model.py
compare: numeric
tolerance: {rel: 1.0e-6, abs: 1.0e-3}
points: 5
cases:
  - name: the lesson's example
    expected_output: expected_output.txt
  - name: with stdin
    stdin: "3\\n2 0 0\\n"
    expected_output: expected_output.txt
  - name: with arguments
    argv: ["a", "b"]
    expected_output: expected_output.txt
  - name: equal scores
    expr: softmax(np.zeros(4))
    expected: [0.25, 0.25, 0.25, 0.25]
  - name: large scores stay finite
    expr: softmax(np.array([[1000.0, 1000.0], [0.0, 0.0]]))
    expected: [[0.5, 0.5], [0.5, 0.5]]
    hidden: true
"""


SETTLE_S = 0.2  # a warm pool tops up its armed runs in this time after a submission


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
    """Wraps a sandbox to keep the largest peak memory of the runs since the last reset."""

    def __init__(self, inner: Sandbox) -> None:
        self.inner = inner
        self.peak_kb = 0
        self.parallel_runs = inner.parallel_runs

    def run(self, request: RunRequest) -> RunResult:
        result = self.inner.run(request)
        self.peak_kb = max(self.peak_kb, result.peak_memory_kb)
        return result


def started(backend: str, drawing: bool = False) -> _Recording:
    """Return a backend's sandbox, started as a worker starts it (before the clock)."""
    settings = Settings.from_env()
    sandbox = _Recording(
        make_sandbox(backend, settings.runtime_dir, settings.runner_image, drawing)
    )
    getattr(sandbox.inner, "start", lambda: None)()  # a pool starts with its worker, not the clock
    atexit.register(getattr(sandbox.inner, "close", lambda: None))  # and its zygotes end with us
    return sandbox


def backend_runner(sandbox: _Recording, exercise: Exercise, source: bytes) -> Runner:
    """Grade the source through a sandbox, exactly as a submission is graded."""

    def run() -> int:
        sandbox.peak_kb = 0
        verdict = grade_source(exercise, source, sandbox)
        assert verdict.status is RunStatus.PASSED, verdict.feedback
        return sandbox.peak_kb

    return run


def drawing_runner(sandbox: _Recording) -> Runner:
    """Run the heat-map solution once, as its lesson's run case does; its figure comes back."""
    files = {"model.py": (HEATMAP / "solution" / "model.py").read_bytes()}

    def run() -> int:
        sandbox.peak_kb = 0
        result = sandbox.run(RunRequest(files, "model.py"))
        assert result.exit_code == 0 and len(result.figures) == 1, result.stderr[-500:]
        return sandbox.peak_kb

    return run


def cases5_exercise(directory: Path) -> Exercise:
    """Return the seed's exercise with CASES5 as its cases, from a copy in `directory`."""
    lesson = directory / "what-is-attention-cases5"
    shutil.copytree(SEED, lesson)
    (lesson / "exercise.yaml").write_text(CASES5)
    exercise = load_lesson(lesson).exercise
    assert exercise is not None and len(exercise.cases) == 5
    return exercise


def runners(source: bytes, scratch: Path, wanted: set[str] | None) -> dict[str, Runner]:
    """Return the modes asked for (default: all) this machine can run; "plain" always, first."""
    root = Settings.from_env().runtime_dir
    seed = load_lesson(SEED).exercise
    assert seed is not None

    def want(*names: str) -> bool:
        return wanted is None or bool(wanted & set(names))

    def drawn(name: str) -> bool:  # the drawing modes run only when asked for
        return wanted is not None and name in wanted

    modes = {"plain": plain_runner(root, source)}
    if want("bwrap_cold", "bwrap_cold_draw"):
        cold = started("bwrap")
        if want("bwrap_cold"):
            modes["bwrap_cold"] = backend_runner(cold, seed, source)
        if drawn("bwrap_cold_draw"):
            modes["bwrap_cold_draw"] = drawing_runner(cold)
    if want("docker_cold", "docker_cold_draw") and available("docker"):  # daemon and image
        box = started("docker")
        if want("docker_cold"):
            modes["docker_cold"] = backend_runner(box, seed, source)
        if drawn("docker_cold_draw"):
            modes["docker_cold_draw"] = drawing_runner(box)
    if want("warm", "warm_cases5", "warm_draw") and available("warm"):
        pool = started("warm")  # one pool for all: a case costs what a run costs
        modes["warm"] = backend_runner(pool, seed, source)  # warm_cases5 is reported against it
        if want("warm_cases5"):
            modes["warm_cases5"] = backend_runner(pool, cases5_exercise(scratch), source)
        if drawn("warm_draw"):
            modes["warm_draw"] = drawing_runner(pool)
    if (drawn("warm_drawing") or drawn("warm_drawing_draw")) and available("warm"):
        preloaded = started("warm", drawing=True)
        if drawn("warm_drawing"):
            modes["warm_drawing"] = backend_runner(preloaded, seed, source)
        if drawn("warm_drawing_draw"):
            modes["warm_drawing_draw"] = drawing_runner(preloaded)
    return modes


def available(backend: str) -> bool:
    """Return whether a backend can run here: it builds and its check(), if any, passes."""
    try:
        sandbox = make_sandbox(
            backend, Settings.from_env().runtime_dir, Settings.from_env().runner_image
        )
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
    parser.add_argument(
        "--modes",
        help="comma-separated modes to run besides plain (default: every mode that can run)",
    )
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    parser.add_argument(
        "--draw", action="store_true", help="add the drawing modes (" + ", ".join(DRAWING) + ")"
    )
    args = parser.parse_args()
    source = (SEED / "solution" / "model.py").read_bytes()
    scratch = tempfile.TemporaryDirectory(prefix="codeblanks-bench-")
    wanted = set(args.modes.split(",")) if args.modes else None
    if args.draw:
        wanted = (wanted or {"bwrap_cold", "docker_cold", "warm", "warm_cases5"}) | set(DRAWING)
    modes = runners(source, Path(scratch.name), wanted)
    times: dict[str, list[float]] = {name: [] for name in modes}
    peaks: dict[str, int] = dict.fromkeys(modes, 0)
    for run in modes.values():
        run()  # warm caches
    for _ in range(args.runs):
        for name, run in modes.items():
            time.sleep(SETTLE_S)
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
    if "warm_cases5" in rows:
        cases5, warm = rows["warm_cases5"], rows["warm"]
        cases5["ratio_to_warm"] = round(cases5["median_ms"] / warm["median_ms"], 2)
    print(f"seed solution, {args.runs} interleaved runs per mode, {os.cpu_count()} cores")
    print(f"{'mode':<17}{'median ms':>10}{'p95 ms':>9}{'runs/s':>8}{'peak MB':>9}{'x plain':>9}")
    for name, f in rows.items():
        print(
            f"{name:<17}{f['median_ms']:>10}{f['p95_ms']:>9}{f['runs_per_s']:>8}"
            f"{f['peak_rss_mb']:>9}{f['ratio_to_plain']:>9}"
        )
    if "warm_cases5" in rows:
        print(
            f"warm_cases5: one 5-case submission costs {rows['warm_cases5']['ratio_to_warm']}x "
            "one single-case run on the same pool (runs/s there are submissions graded/s)"
        )
    if args.json:
        modes_json = {name: f for name, f in rows.items() if name != "plain"}
        print(json.dumps({"plain_ms": plain, "modes": modes_json}))


if __name__ == "__main__":
    main()
