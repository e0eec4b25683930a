import json

import pytest

from tests.conftest import SEED
from tests.service.cli import codeblanks

pytestmark = pytest.mark.bwrap


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
        "cases",
    }
    assert verdict["cases"] == [
        {
            "name": "expected output",
            "status": "passed",
            "weight": 1.0,
            "hidden": False,
            "feedback": "Case 'expected output' passed.",
        }
    ]
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
