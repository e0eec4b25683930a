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


CASES = """\
title: Softmax, case by case
prompt: Write softmax(z, eksen=-1).
entrypoint: model.py
compare: numeric
points: 6
cases:
  - name: the lesson's example
    expected_output: expected_output.txt
  - name: equal scores
    expr: softmax(np.zeros(4))
    expected: [0.25, 0.25, 0.25, 0.25]
    hidden: true
  - name: arguments
    argv: ["a"]
    output: "[0.787 0.107 0.107]\\n[0.893 0.213]\\nTrue\\n"
"""


def test_lessons_check_passes_a_lesson_with_cases(seed_copy):
    (seed_copy / "exercise.yaml").write_text(CASES)
    done = codeblanks("lessons", "check", seed_copy)
    assert done.returncode == 0, done.stdout
    assert done.stdout.startswith("ok   expert/what-is-attention: 3 questions, ")
    assert "solution passed 3 cases" in done.stdout


def test_lessons_check_names_the_hidden_case_a_solution_fails(seed_copy):
    wrong = "  - name: wrong on purpose\n    expr: softmax(np.zeros(2))\n    expected: [0.4, 0.6]\n"
    (seed_copy / "exercise.yaml").write_text(CASES + wrong + "    hidden: true\n")
    done = codeblanks("lessons", "check", seed_copy)
    assert done.returncode == 1
    assert done.stdout.strip() == (
        "FAIL expert/what-is-attention: the solution does not pass: "
        "case 'wrong on purpose' (hidden) failed: At [0]: expected 0.4, got 0.5 "
        "(within 0.001 + 1e-06 x |expected|)."
    )


def test_lessons_check_names_every_case_a_solution_fails(seed_copy):
    exercise = CASES.replace("[0.25, 0.25, 0.25, 0.25]", "[0.25, 0.25]").replace(
        'argv: ["a"]', 'argv: ["a"]\n    stdin: "x"\n    weight: 3'
    )
    (seed_copy / "exercise.yaml").write_text(exercise)
    (seed_copy / "solution" / "model.py").write_text(
        (seed_copy / "solution" / "model.py").read_text()
        + "import sys\nif __name__ == '__main__' and sys.argv[1:] == ['a']:\n    sys.exit(1)\n"
    )
    done = codeblanks("lessons", "check", seed_copy)
    assert done.returncode == 1
    line = done.stdout.strip()
    assert line.startswith("FAIL expert/what-is-attention: the solution does not pass: ")
    assert "case 'the lesson's example'" not in line
    assert (
        "case 'equal scores' (hidden) failed: expected [0.25, 0.25], got an array of shape 4"
        in line
    )
    assert "; case 'arguments' error: It exited with status 1." in line


def test_lessons_check_fails_a_starter_that_passes_every_case(seed_copy):
    (seed_copy / "exercise.yaml").write_text(CASES)
    (seed_copy / "starter" / "model.py").write_text(
        (seed_copy / "solution" / "model.py").read_text().replace("skor", "scores")
    )
    done = codeblanks("lessons", "check", seed_copy)
    assert done.returncode == 1
    assert done.stdout.strip() == (
        "FAIL expert/what-is-attention: the starter code already passes all 3 cases"
    )


def test_lessons_check_reports_broken_cases(seed_copy):
    (seed_copy / "exercise.yaml").write_text(CASES.replace("hidden: true", "hidden: maybe"))
    done = codeblanks("lessons", "check", seed_copy)
    assert done.returncode == 1
    assert done.stdout.strip() == (
        f"FAIL {seed_copy}: {seed_copy / 'exercise.yaml'}: "
        "cases[1] ('equal scores').hidden: must be true or false"
    )
