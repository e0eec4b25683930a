import pytest

from tests.service.cli import codeblanks

pytestmark = pytest.mark.bwrap


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
