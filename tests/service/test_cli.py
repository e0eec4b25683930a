import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, SEED

CLI = [sys.executable, "-m", "service"]
pytestmark = pytest.mark.bwrap


def codeblanks(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, cwd=cwd)


def test_grade_json_contract_for_the_seed_solution():
    done = codeblanks("grade", SEED, SEED / "solution" / "model.py", "--json")
    assert done.returncode == 0, done.stderr
    verdict = json.loads(done.stdout)
    assert set(verdict) == {
        "lesson",
        "status",
        "score",
        "stdout",
        "stderr",
        "exit_code",
        "duration_ms",
        "feedback",
    }
    assert verdict["lesson"] == "expert/what-is-attention"
    assert verdict["status"] == "passed" and verdict["score"] == 1.0
    assert verdict["exit_code"] == 0 and verdict["duration_ms"] > 0


def test_grade_starter_is_a_verdict_not_a_failure():
    done = codeblanks("grade", SEED, SEED / "starter" / "model.py", "--json")
    assert done.returncode == 0
    verdict = json.loads(done.stdout)
    assert verdict["status"] == "failed" and verdict["score"] == 0.0
    assert "Line 1 is missing" in verdict["feedback"]


def test_grade_human_output(tmp_path):
    answer = tmp_path / "answer.py"
    answer.write_text("print('[0.787 0.107 0.107]')\nprint('[0.9 0.2]')\nprint(True)\n")
    done = codeblanks("grade", SEED, answer)
    assert done.returncode == 0
    assert "expert/what-is-attention: failed (score 0" in done.stdout
    assert "Line 2 differs" in done.stdout


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda t: (t / "nolesson", SEED / "solution" / "model.py"), "no such lesson directory"),
        (lambda t: (t, SEED / "solution" / "model.py"), "not a lesson directory"),
        (lambda t: (SEED, t / "missing.py"), "no such file"),
        (lambda t: (SEED, t), "is a directory"),
    ],
)
def test_grade_usage_errors_exit_2_with_one_line(tmp_path, make, message):
    lesson, submission = make(tmp_path)
    done = codeblanks("grade", lesson, submission, "--json")
    assert done.returncode == 2
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert done.stdout == ""


def test_grade_non_utf8_file_exits_2(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_bytes(b"print('\xff')\n")
    done = codeblanks("grade", SEED, bad, "--json")
    assert done.returncode == 2
    assert "is not UTF-8 text" in done.stderr


def test_grade_broken_lesson_exits_2_naming_file_and_field(seed_copy):
    questions = seed_copy / "questions.yaml"
    questions.write_text(questions.read_text().replace("answer: 1", "answer: 9"))
    done = codeblanks("grade", seed_copy, seed_copy / "solution" / "model.py", "--json")
    assert done.returncode == 2
    assert "questions.yaml: [0].answer: 9 is not an index of options" in done.stderr


def test_lessons_check_passes_on_the_catalog():
    done = codeblanks("lessons", "check", "lessons/")
    assert done.returncode == 0, done.stdout
    lines = done.stdout.strip().splitlines()
    assert len(lines) >= 6 and all(line.startswith("ok ") for line in lines)


def test_lessons_check_fails_when_a_starter_passes(seed_copy):
    (seed_copy / "starter" / "model.py").write_text(
        (seed_copy / "solution" / "model.py").read_text()
    )
    done = codeblanks("lessons", "check", seed_copy)
    assert done.returncode == 1
    assert "FAIL expert/what-is-attention: the starter code already passes" in done.stdout


def test_lessons_check_fails_when_expected_output_is_wrong(seed_copy):
    (seed_copy / "expected_output.txt").write_text("[0.787 0.107 0.107]\n[0.8 0.2]\nTrue\n")
    done = codeblanks("lessons", "check", seed_copy)
    assert done.returncode == 1
    assert "the solution does not pass" in done.stdout and "Line 2" in done.stdout


def test_lessons_check_reports_a_broken_lesson(seed_copy):
    (seed_copy / "exercise.yaml").write_text("title: x\n")
    done = codeblanks("lessons", "check", seed_copy)
    assert done.returncode == 1
    assert "FAIL" in done.stdout and "exercise.yaml" in done.stdout


@pytest.mark.parametrize(("threads", "streams"), [(16, 8), (8, 4), (4, 2), (1, 1), (64, 8)])
def test_serve_leaves_half_of_each_processs_threads_to_pages(monkeypatch, threads, streams):
    import os

    from click.testing import CliRunner

    from service.cli import main

    monkeypatch.setenv("CODEBLANKS_STREAMS_PER_PROCESS", "8")
    started = []

    def execv(path, argv):
        started.append((argv, os.environ["CODEBLANKS_STREAMS_PER_PROCESS"]))
        raise SystemExit(0)

    monkeypatch.setattr(os, "execv", execv)
    result = CliRunner().invoke(main, ["serve", "--threads", str(threads)])
    assert result.exit_code == 0, result.output
    [(argv, cap)] = started
    assert int(cap) == streams and "python:service.web.serving" in argv
