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
        "figures",
    }
    assert verdict["figures"] == []  # the seed draws nothing
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


CASES_EXERCISE = """\
title: Softmax, case by case
prompt: Write softmax(z, eksen=-1).
entrypoint: model.py
compare: numeric
tolerance: {rel: 1.0e-6, abs: 1.0e-3}
points: 6
cases:
  - name: the lesson's example
    expected_output: expected_output.txt
  - name: equal scores
    expr: softmax(np.zeros(4))
    expected: [0.25, 0.25, 0.25, 0.25]
    weight: 2
    hidden: true
  - name: a row of a matrix
    expr: softmax(np.array([[1.0, 1.0], [0.0, 0.0]]), eksen=1).tolist()
    expected: [[0.5, 0.5], [0.5, 0.5]]
    compare: exact
  - name: large scores stay finite
    expr: softmax(np.array([1000.0, 1000.0]))
    expected: [0.5, 0.5]
    hidden: true
  - name: arguments
    argv: ["a", "b"]
    output: "[0.787 0.107 0.107]\\n[0.893 0.213]\\nTrue\\n"
"""
# right but for large scores: exp(1000) overflows to inf, and inf / inf is nan
PARTIAL = """\
import numpy as np

def softmax(z, eksen=-1):
    e = np.exp(z)
    return e / e.sum(axis=eksen, keepdims=True)

degerler = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
a = softmax(np.array([2.0, 0.0, 0.0]))
print(np.round(a, 3))
print(np.round(a @ degerler, 3))
print(np.allclose(softmax(np.zeros(3)) @ degerler, degerler.mean(axis=0)))
"""


def _cases_lesson(seed_copy):
    (seed_copy / "exercise.yaml").write_text(CASES_EXERCISE)
    partial = seed_copy.parent / "partial.py"
    partial.write_text(PARTIAL)
    return partial


def test_grade_json_lists_every_case_and_scores_by_weight(seed_copy):
    partial = _cases_lesson(seed_copy)
    done = codeblanks("grade", seed_copy, partial, "--json")
    assert done.returncode == 0, done.stderr
    verdict = json.loads(done.stdout)
    assert verdict["status"] == "failed"
    assert verdict["score"] == pytest.approx(5 / 6)  # weights 1+2+1+1+1, the last 1 missed
    assert verdict["cases"] == [
        {
            "name": "the lesson's example",
            "status": "passed",
            "weight": 1.0,
            "hidden": False,
            "feedback": "Case 'the lesson's example' passed.",
        },
        {
            "name": "equal scores",
            "status": "passed",
            "weight": 2.0,
            "hidden": True,
            "feedback": "Hidden case 'equal scores' passed.",
        },
        {
            "name": "a row of a matrix",
            "status": "passed",
            "weight": 1.0,
            "hidden": False,
            "feedback": "Case 'a row of a matrix' passed.",
        },
        {
            "name": "large scores stay finite",
            "status": "failed",
            "weight": 1.0,
            "hidden": True,
            "feedback": "Hidden case 'large scores stay finite' failed.",
        },
        {
            "name": "arguments",
            "status": "passed",
            "weight": 1.0,
            "hidden": False,
            "feedback": "Case 'arguments' passed.",
        },
    ]
    assert verdict["feedback"] == (
        "4 of 5 cases passed (83% of the points). Hidden case 'large scores stay finite' failed."
    )
    # the hidden case's input and what came back stay out of what the student reads
    assert "1000" not in done.stdout and "nan" not in done.stdout
    assert verdict["stdout"] == (seed_copy / "expected_output.txt").read_text()
    solution = codeblanks("grade", seed_copy, seed_copy / "solution" / "model.py", "--json")
    assert json.loads(solution.stdout)["score"] == 1.0
    assert json.loads(solution.stdout)["feedback"] == "All 5 cases passed."


def test_grade_human_output_lists_the_cases_one_per_line(seed_copy):
    partial = _cases_lesson(seed_copy)
    done = codeblanks("grade", seed_copy, partial)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("expert/what-is-attention: failed (score 0.833333, ")
    start = lines.index("--- cases ---")
    assert lines[start + 1 : start + 6] == [
        "passed       Case 'the lesson's example' passed. (weight 1)",
        "passed       Hidden case 'equal scores' passed. (weight 2)",
        "passed       Case 'a row of a matrix' passed. (weight 1)",
        "failed       Hidden case 'large scores stay finite' failed. (weight 1)",
        "passed       Case 'arguments' passed. (weight 1)",
    ]
    assert "1000" not in done.stdout


def test_grade_human_output_without_cases_has_no_case_list():
    done = codeblanks("grade", SEED, SEED / "solution" / "model.py")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1] == "Your program's output matches the expected output."
    assert "--- cases ---" not in done.stdout


def test_grade_a_lesson_with_broken_cases_exits_2_naming_the_case(seed_copy):
    partial = _cases_lesson(seed_copy)
    exercise = seed_copy / "exercise.yaml"
    exercise.write_text(exercise.read_text().replace("weight: 2", "weight: 0"))
    done = codeblanks("grade", seed_copy, partial, "--json")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.strip() == (
        f"codeblanks: broken lesson: {exercise}: "
        "cases[1] ('equal scores').weight: must be a number in (0, 1000]"
    )


HEATMAP = SEED.parent / "attention-heatmap"


def test_grade_json_lists_the_figures_without_a_url_and_writes_them_when_asked(tmp_path):
    answer = HEATMAP / "solution" / "model.py"
    listed = json.loads(codeblanks("grade", HEATMAP, answer, "--json").stdout)
    alt = "Dikkat ağırlıkları, x: anahtar (bakılan kelime), y: sorgu (bakan kelime)"
    shown = {"case": "the lesson's sentence", "width": 640, "height": 480, "alt": alt}
    assert listed["status"] == "passed" and listed["figures"] == [shown]
    written = codeblanks("grade", HEATMAP, answer, "--json", "--figures", tmp_path / "out")
    assert written.returncode == 0, written.stderr
    figure = tmp_path / "out" / "figure-1.png"
    assert json.loads(written.stdout)["figures"] == [{**shown, "file": str(figure)}]
    assert figure.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["figure-1.png"]
    human = codeblanks("grade", HEATMAP, answer)
    assert "--- figures ---" in human.stdout and "640x480" in human.stdout


def test_grade_figures_dir_that_cannot_be_made_exits_2(tmp_path):
    (tmp_path / "file").write_text("")
    answer = HEATMAP / "solution" / "model.py"
    done = codeblanks("grade", HEATMAP, answer, "--figures", tmp_path / "file" / "out")
    assert done.returncode == 2 and "cannot be made" in done.stderr
