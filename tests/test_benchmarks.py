"""The benchmarks' own code paths, run at a tiny size: they print figures, these check counts."""

import json
import subprocess
import sys

import pytest

from testkit.servers import REPO

RUSH_KEYS = {
    "students", "window_s", "cores", "concurrency", "sync_pool", "sandbox", "load_before",
    "load_after", "sandbox_only_per_s", "submitted", "graded", "lost", "duplicated", "reposted",
    "failures", "failed", "dropped_polls", "verdict_ms", "seen_ms", "gradebook_ms", "worst_wait_ms",
    "not_in_gradebook", "all_seen_s",
}  # fmt: skip


@pytest.mark.slow
@pytest.mark.redis
@pytest.mark.celery
@pytest.mark.bwrap
def test_the_rush_grades_every_student_once_and_lands_every_score() -> None:
    done = subprocess.run(
        [sys.executable, "benchmarks/rush.py", "--students", "4", "--window-s", "2", "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(result) == RUSH_KEYS
    assert result["students"] == 4 and result["failures"] == 0, result["failed"]
    assert result["submitted"] == result["graded"] == 4
    assert result["lost"] == 0 and result["duplicated"] == 0
    assert result["not_in_gradebook"] == 0
    # every well-behaved student's figures were measured (values are printed, never judged)
    for key in ("verdict_ms", "seen_ms", "gradebook_ms"):
        assert set(result[key]) == {"p50", "p95", "max"} and None not in result[key].values()
    assert result["sandbox_only_per_s"] > 0


@pytest.mark.bwrap
def test_the_isolation_steps_are_each_measured_inside_the_sandbox_s_interpreter() -> None:
    done = subprocess.run(
        [sys.executable, "benchmarks/isolation_steps.py", "--runs", "2", "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    walls = {"fork", "user", "pid", "mount", "ipc", "net", "caps", "filter", "all"}
    assert set(result["fork_ms"]) == set(result["wall_ms"]) == walls
    # every step's child ran the case and exited 0 (the script asserts it), and was timed
    assert all(ms > 0 for ms in result["fork_ms"].values())
    assert result["warm_run_ms"] > 0
    assert set(result["five_cases_in_runs"]) == {"one_after_another", "at_once"}


@pytest.mark.slow
@pytest.mark.redis
@pytest.mark.celery
@pytest.mark.bwrap
def test_the_practice_run_benchmark_times_every_lesson_through_the_served_app() -> None:
    done = subprocess.run(
        [sys.executable, "benchmarks/practice_run.py", "--runs", "2", "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["runs"] == 2 and result["concurrency"] == 1
    lessons = result["lessons"]
    # the seed lesson's one case; four visible cases of six; the student's input and four
    runs = {lesson: figures["sandbox_runs"] for lesson, figures in lessons.items()}
    assert runs == {
        "expert/what-is-attention": 1,
        "expert/scaled-dot-product": 4,
        "expert/positional-encoding": 5,
    }
    for figures in lessons.values():  # every figure was measured (printed, never judged)
        for key in ("done_ms", "shown_ms", "server_ms"):
            assert set(figures[key]) == {"median", "p95"} and figures[key]["median"] > 0
    assert "practice runs: POST to result" in done.stdout


@pytest.mark.bwrap
def test_the_sandbox_benchmark_times_a_drawing_run_with_its_figure() -> None:
    done = subprocess.run(
        [sys.executable, "benchmarks/sandbox.py", "--runs", "2", "--json",
         "--modes", "warm_draw,warm_drawing,warm_drawing_draw,bwrap_cold_draw"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    modes = json.loads(done.stdout.strip().splitlines()[-1])["modes"]
    # each drawing run came back with its one figure (the benchmark asserts it), and was timed
    assert set(modes) >= {"warm_draw", "warm_drawing", "warm_drawing_draw", "bwrap_cold_draw"}
    assert all(mode["median_ms"] > 0 for mode in modes.values())
