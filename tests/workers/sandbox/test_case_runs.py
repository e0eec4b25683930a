"""Cases run on every sandbox backend (issue 15, "Running"): run cases with stdin and argv,
value cases coming back as plain data only, exits and oversized values, a fresh state per
case, and cases of one submission running side by side. Graded through core.verdicts."""

from __future__ import annotations

import ast
import textwrap
from typing import Any

from core.cases import HARNESS
from core.runs import RunStatus, Sandbox, student_message
from core.verdicts import Verdict, grade_source
from tests.conftest import SEED
from tests.workers.sandbox.case_lessons import (
    Recording,
    write_lesson,
)


def grade(exercise: Any, source: str, sandbox: Sandbox) -> Verdict:
    """Grade a source written as an indented block."""
    return grade_source(exercise, textwrap.dedent(source).encode(), sandbox)


def statuses(verdict: Verdict) -> dict[str, RunStatus]:
    """Return each case's status by name."""
    return {case.name: case.status for case in verdict.cases}


def by_name(verdict: Verdict) -> dict[str, Any]:
    """Return each case's verdict by name."""
    return {case.name: case for case in verdict.cases}


def value_case(name: str, expr: str, expected: Any, **more: Any) -> dict[str, Any]:
    """Return a value case as exercise.yaml holds it."""
    return {"name": name, "expr": expr, "expected": expected, **more}


# --- run cases ------------------------------------------------------------------------------

ECHO = """\
import os, sys
data = sys.stdin.read().split()
print(os.path.basename(sys.argv[0]), __name__)
print(repr(sys.argv[1:]))
print(sum(int(x) for x in data))
"""


def test_run_cases_get_their_stdin_and_argv(sandbox, tmp_path):
    cases: list[dict[str, Any]] = [
        {"name": "stdin only", "stdin": "1 2\n3\n", "output": "model.py __main__\n[]\n6\n"},
        {
            "name": "argv only",
            "argv": ["a b", "--flag", "3", ""],
            "output": "model.py __main__\n['a b', '--flag', '3', '']\n0\n",
        },
        {
            "name": "both",
            "argv": ["x"],
            "stdin": "40 2",
            "output": "model.py __main__\n['x']\n42\n",
        },
        {"name": "wrong on purpose", "stdin": "1", "output": "model.py __main__\n[]\n2\n"},
    ]
    recording = Recording(sandbox)
    verdict = grade(write_lesson(tmp_path, cases), ECHO, recording)
    assert statuses(verdict) == {
        "stdin only": RunStatus.PASSED,
        "argv only": RunStatus.PASSED,
        "both": RunStatus.PASSED,
        "wrong on purpose": RunStatus.FAILED,
    }, verdict.feedback
    assert verdict.score == 0.75
    assert verdict.feedback.startswith("3 of 4 cases passed (75% of the points).")
    assert by_name(verdict)["wrong on purpose"].got.endswith("\n1\n")
    # a case without argv is the plain run; with argv the harness runs the entrypoint
    entrypoints = sorted(request.entrypoint for request in recording.requests)
    assert entrypoints == sorted(["model.py", HARNESS, HARNESS, "model.py"])


def test_an_exercise_without_cases_is_graded_as_before(sandbox, tmp_path):
    exercise = write_lesson(tmp_path, None)
    assert not exercise.has_cases
    assert [case.name for case in exercise.cases] == ["expected output"]
    recording = Recording(sandbox)
    solution = (SEED / "solution" / "model.py").read_bytes()
    verdict = grade_source(exercise, solution, recording)
    assert verdict.status is RunStatus.PASSED
    assert verdict.score == 1.0
    assert verdict.feedback == student_message(RunStatus.PASSED, exercise.limits)
    assert verdict.stdout == (SEED / "expected_output.txt").read_text()
    # one plain run of the student's file, no harness
    [request] = recording.requests
    assert request.entrypoint == "model.py"
    assert set(request.files) == {"model.py"}
    assert request.stdin == b""

    wrong = grade(exercise, "print('nope')\n", sandbox)
    assert wrong.status is RunStatus.FAILED
    assert wrong.score == 0.0
    assert wrong.feedback.startswith(student_message(RunStatus.FAILED, exercise.limits))
    assert wrong.diff is not None


# --- value cases ----------------------------------------------------------------------------

VALUES = """\
import numpy as np

def add(a, b):
    return a + b

def nothing():
    return None

print(5)  # a print at import is not the result
"""


def test_value_cases_compare_plain_data(sandbox, tmp_path):
    near = {"rel": 1.0e-6, "abs": 1.0e-3}
    passing = [
        value_case("int", "add(2, 3)", 5),
        value_case("text", "add('a', 'b')", "ab"),
        value_case("none", "nothing()", None),
        value_case("list within tolerance", "[0.1 + 0.2, 1.0005]", [0.3, 1.0]),
        value_case("tuple as a list", "(1, 'a', None)", [1, "a", None]),
        value_case("dict", "{'a': 1, 'b': [1.0, 2]}", {"a": 1, "b": [1, 2]}),
        value_case("array as a nested list", "np.arange(6).reshape(2, 3)", [[0, 1, 2], [3, 4, 5]]),
        value_case("float array", "np.array([0.5, 0.25], dtype=np.float32)", [0.5, 0.25]),
        value_case("float64 scalar", "np.float64(2.5)", 2.5),
        value_case("float32 scalar", "np.float32(0.5)", 0.5),
        value_case("int64 scalar", "np.int64(7)", 7),
        value_case("bool scalar", "np.bool_(True)", True),
        value_case("bool", "1 < 2", True),
        value_case("nan expected and got", "float('nan')", float("nan"), compare="exact"),
        value_case("text array", "np.array(['x', 'y'])", ["x", "y"]),
        value_case("empty array", "np.zeros((0,))", []),
    ]
    failing = [
        value_case("exact is exact", "0.1 + 0.2", 0.3, compare="exact"),
        value_case("outside the tolerance", "1.01", 1.0),
        value_case("wrong shape", "np.arange(6)", [[0, 1, 2], [3, 4, 5]]),
        value_case("nan for a number", "float('nan')", 1.0),
        value_case("nan in an array", "np.array([1.0, np.nan])", [1.0, 2.0]),
        value_case("inf for a number", "float('inf')", 1.0e300),
        value_case("bool for a number", "True", 1),
        value_case("number for a bool", "1", True),
        value_case("numpy bool for a number", "np.bool_(True)", 1),
        value_case("missing key", "{'a': 1}", {"a": 1, "b": 2}),
        value_case("extra key", "{'a': 1, 'c': 3}", {"a": 1}),
        value_case("too few items", "[1, 2]", [1, 2, 3]),
        value_case("text for a number", "'5'", 5),
        value_case("number for text", "5", "5"),
        value_case("none for a number", "None", 0),
    ]
    exercise = write_lesson(tmp_path, passing + failing, compare="numeric", tolerance=near)
    verdict = grade(exercise, VALUES, sandbox)
    cases = by_name(verdict)
    wrong = {
        name: (case.status.value, case.feedback)
        for name, case in cases.items()
        if case.passed != (name in {c["name"] for c in passing})
    }
    assert wrong == {}
    for case in failing:
        assert cases[case["name"]].status is RunStatus.FAILED, cases[case["name"]]
    feedback = {name: case.feedback for name, case in cases.items()}
    assert feedback["wrong shape"] == "expected [[0, 1, 2], [3, 4, 5]], got an array of shape 6."
    assert feedback["nan for a number"] == "expected the number 1.0, got nan."
    assert feedback["nan in an array"] == "At [1]: expected the number 2.0, got nan."
    assert feedback["bool for a number"] == "expected the number 1, got True."
    assert feedback["numpy bool for a number"] == "expected the number 1, got True."
    assert feedback["number for a bool"] == "expected True, got 1."
    assert feedback["exact is exact"] == "expected 0.3, got 0.30000000000000004."
    assert feedback["outside the tolerance"].startswith("expected 1.0, got 1.01 (within ")
    assert feedback["missing key"].startswith("the key 'b' is missing")
    assert cases["array as a nested list"].got == "array([[0, 1, 2], [3, 4, 5]], dtype=int64)"
    assert cases["tuple as a list"].got == "(1, 'a', None)"
    # the module's print went to stderr, not into the value
    assert cases["int"].got == "5" and cases["int"].stderr == "5\n"


PRINTER = """\
import json, os, sys

print(json.dumps(42))
print('{"$dict": {"answer": 42}}')
sys.stdout.write("42\\n")
sys.__stdout__.write("42\\n")
sys.stdout.flush()
os.write(1, b"42\\n")

def answer():
    print(42)
    os.write(1, b"42")
    return 41

def mapping():
    print(json.dumps({"answer": 42}))
    return {"answer": 41}
"""


def test_what_the_module_prints_is_not_the_value(sandbox, tmp_path):
    cases = [
        value_case("answer", "answer()", 42),
        value_case("mapping", "mapping()", {"answer": 42}),
    ]
    verdict = grade(write_lesson(tmp_path, cases), PRINTER, sandbox)
    cases_by_name = by_name(verdict)
    assert statuses(verdict) == {"answer": RunStatus.FAILED, "mapping": RunStatus.FAILED}
    assert cases_by_name["answer"].got == "41"
    assert cases_by_name["answer"].feedback == "expected 42, got 41."
    assert cases_by_name["mapping"].got == "{'answer': 41}"
    assert "42" in cases_by_name["answer"].stderr  # the prints are kept, as the error output


LIARS = """\
import numpy as np

class Anything:
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    __hash__ = object.__hash__
    def __repr__(self):
        return "5"

class LyingFloat(float):
    def __eq__(self, other):
        return True
    __hash__ = float.__hash__

class LyingList(list):
    def __eq__(self, other):
        return True
    def __len__(self):
        return 3

class LyingStr(str):
    def __eq__(self, other):
        return True
    __hash__ = str.__hash__

class LyingDict(dict):
    def __eq__(self, other):
        return True

class FakeNumpy(np.float64):
    __module__ = "numpy"
    def item(self):
        return Anything()

def add(a, b):
    return a + b

def gen():
    yield 5

class Shifty:
    @property
    def __class__(self):
        raise RuntimeError("no class today")

class Disguised:
    __class__ = property(lambda self: int)
"""


def test_values_that_are_not_plain_data_fail_and_say_what_they_were(sandbox, tmp_path):
    cases = [
        value_case("equal to anything", "Anything()", 5),
        value_case("lying float", "LyingFloat(2.0)", 1.0),
        value_case("lying list", "LyingList([1])", [1, 2, 3]),
        value_case("lying str", "LyingStr('no')", "yes"),
        value_case("lying dict", "LyingDict()", {"a": 1}),
        value_case("inside a list", "[1, Anything()]", [1, 5]),
        value_case("inside a dict", "{'a': Anything()}", {"a": 5}),
        value_case("function", "add", 5),
        value_case("builtin", "len", 5),
        value_case("lambda", "lambda: 5", 5),
        value_case("generator", "gen()", [5]),
        value_case("class", "Anything", 5),
        value_case("module", "np", 5),
        value_case("object array", "np.array([Anything()], dtype=object)", [5]),
        value_case("masked array", "np.ma.masked_array([5])", [5]),
        value_case("numpy scalar impostor", "FakeNumpy(5.0)", 5.0),
        value_case("set", "{5}", [5]),
        value_case("bytes", "b'5'", "5"),
        value_case("complex", "5 + 0j", 5),
        value_case("int keys", "{1: 5}", {"1": 5}),
        value_case("a __class__ that raises", "Shifty()", 5),
        value_case("a __class__ that lies", "Disguised()", 5),
        value_case("a bound method", "Anything().__eq__", 5),
    ]
    verdict = grade(write_lesson(tmp_path, cases, compare="numeric"), LIARS, sandbox)
    cases_by_name = by_name(verdict)
    assert verdict.score == 0.0
    impostor = cases_by_name.pop("numpy scalar impostor")
    assert impostor.status in (RunStatus.FAILED, RunStatus.ERROR), impostor
    assert {c.status for c in cases_by_name.values()} == {RunStatus.FAILED}, verdict.feedback
    said = {name: case.got for name, case in cases_by_name.items()}
    assert said["equal to anything"] == "a Anything object"
    assert said["lying float"] == "a LyingFloat object (a subclass of float)"
    assert said["lying list"] == "a LyingList object (a subclass of list)"
    assert said["lying str"] == "a LyingStr object (a subclass of str)"
    assert said["lying dict"] == "a LyingDict object (a subclass of dict)"
    assert said["inside a list"] == "[1, a Anything object]"
    assert said["function"] == "a function (add)"
    assert said["builtin"] == "a function (len)"
    assert said["lambda"] == "a function (<lambda>)"
    assert said["a bound method"] == "a method"
    assert said["generator"] == "a generator"
    assert said["class"] == "a class (Anything)"
    assert said["a __class__ that raises"] == "a Shifty object"
    assert said["a __class__ that lies"] == "a Disguised object"
    assert said["module"] == "a module"
    assert said["object array"] == "a numpy array of dtype object"
    assert said["masked array"] == "a MaskedArray object"
    assert said["set"] == "a set object"
    assert said["int keys"] == "a dict whose keys are not all text"
    feedback = cases_by_name["equal to anything"].feedback
    assert (
        feedback
        == "The expression gave a Anything object, which is not a value that can be checked."
    )
    assert cases_by_name["inside a dict"].feedback.startswith("At ['a']: your expression gave a ")


# --- exits, sizes, garbage ------------------------------------------------------------------

ANSWER = """\
def answer():
    return 42
"""
# writes to every descriptor but the standard three: the value's own channel is among them
TO_THE_CHANNEL = """\
import os
def _forge(data):
    for fd in range(3, 64):
        try:
            os.write(fd, data)
        except OSError:
            pass
    os._exit(0)
"""
EXITS = {
    "sys.exit(0) at import": (
        "import sys\nsys.exit(0)\n" + ANSWER,
        RunStatus.ERROR,
        "leave exit() out of its top level",
    ),
    "exit() at import": ("exit()\n" + ANSWER, RunStatus.ERROR, "SystemExit: None"),
    "os._exit(0) at import": (
        "import os\nos._exit(0)\n" + ANSWER,
        RunStatus.ERROR,
        "No value came back: did the program exit early?",
    ),
    "sys.exit(0) in the expression": (
        "import sys\ndef answer():\n    sys.exit(0)\n",
        RunStatus.ERROR,
        "SystemExit: 0",
    ),
    "os._exit(0) in the expression": (
        "import os\ndef answer():\n    os._exit(0)\n",
        RunStatus.ERROR,
        "No value came back",
    ),
    "an exception": (
        "def answer():\n    raise KeyError('k')\n",
        RunStatus.ERROR,
        "Last error line: KeyError: 'k'",
    ),
    "garbage to fd 1": (
        "import os\nos.write(1, b'{\"$dict\": 5}')\n" + ANSWER,
        RunStatus.PASSED,  # fd 1 is stderr while the module runs: the garbage goes nowhere
        "",
    ),
    "garbage to the channel": (
        TO_THE_CHANNEL + "_forge(b'{\"$dict\": 5}')\n" + ANSWER,
        RunStatus.ERROR,
        "Its value could not be read: the value channel held an unknown tag '$dict'.",
    ),
    "not JSON to the channel": (
        TO_THE_CHANNEL + "_forge(b'\\xff\\xfe{{{')\n" + ANSWER,
        RunStatus.ERROR,
        "Its value could not be read: the value channel did not hold JSON",
    ),
    "a forged deep value": (
        TO_THE_CHANNEL + "_forge(b'[' * 30000 + b']' * 30000)\n" + ANSWER,
        RunStatus.ERROR,
        "Its value could not be read: the value is nested too deeply to be read.",
    ),
    "a forged value past the depth": (
        TO_THE_CHANNEL + "_forge(b'[' * 100 + b']' * 100)\n" + ANSWER,
        RunStatus.ERROR,
        "Its value could not be read: the value is nested deeper than 64 levels.",
    ),
    "a forged array that lies about its shape": (
        TO_THE_CHANNEL
        + '_forge(b\'{"$ndarray": {"dtype": "int64", "shape": [3], "data": [42]}}\')\n'
        + ANSWER,
        RunStatus.ERROR,
        "an array came back whose items do not fit its shape",
    ),
    "a value too large": (
        "def answer():\n    return 'x' * 200_000\n",
        RunStatus.OUTPUT_LIMIT,
        "printed more than allowed",
    ),
    "a value nested too deeply": (
        "def answer():\n    v = 42\n    for _ in range(10_000):\n        v = [v]\n    return v\n",
        RunStatus.FAILED,
        "a value nested too deeply (or holding itself)",
    ),
    "a value holding itself": (
        "def answer():\n    v = [42]\n    v.append(v)\n    return v\n",
        RunStatus.FAILED,
        "a value nested too deeply (or holding itself)",
    ),
    "an int too long to write": (
        "def answer():\n    return 10 ** 5000\n",
        RunStatus.FAILED,
        "a value that cannot be written",
    ),
    "right": (ANSWER, RunStatus.PASSED, ""),
}


def test_exits_garbage_and_oversized_values_never_pass_and_never_break_the_grader(
    sandbox, tmp_path
):
    exercise = write_lesson(
        tmp_path,
        [value_case("the answer", "answer()", 42)],
        limits={"time_s": 5, "memory_mb": 256, "output_kb": 64},
    )
    wrong = {}
    for name, (source, status, says) in EXITS.items():
        verdict = grade(exercise, source, sandbox)
        [case] = verdict.cases
        if case.status is not status or says not in case.feedback:
            wrong[name] = (case.status.value, case.feedback, case.stderr[-300:])
    assert wrong == {}


# --- fresh state, concurrency ---------------------------------------------------------------

STATE = """\
import builtins, os, sys
import numpy

seen = []
names = ("state.txt", "/tmp/state.txt", "~/state.txt")
for path in sorted({os.path.realpath(os.path.expanduser(p)) for p in names}):
    if os.path.exists(path):
        seen.append(path)
    try:
        with open(path, "a") as handle:
            handle.write("x")
    except OSError:
        pass
builtins.COUNTER = getattr(builtins, "COUNTER", 0) + 1
numpy.COUNTER = getattr(numpy, "COUNTER", 0) + 1
os.environ["CB_STATE"] = os.environ.get("CB_STATE", "") + "x"

def state():
    wrote = [os.path.exists("state.txt"), os.path.exists("/tmp/state.txt")]
    return [seen, builtins.COUNTER, numpy.COUNTER, os.environ["CB_STATE"], wrote]

if __name__ == "__main__":
    print(state())
"""


def test_every_case_starts_from_a_fresh_state(sandbox, tmp_path):
    fresh = [[], 1, 1, "x", [True, True]]  # nothing seen, though every case wrote
    cases = [value_case(f"value {i}", "state()", fresh) for i in range(4)]
    cases += [{"name": f"run {i}", "output": f"{fresh}\n"} for i in range(2)]
    cases += [
        {"name": f"run with argv {i}", "argv": ["a"], "output": f"{fresh}\n"} for i in range(2)
    ]
    verdict = grade(write_lesson(tmp_path, cases), STATE, sandbox)
    assert verdict.status is RunStatus.PASSED, [
        (c.name, c.feedback) for c in verdict.cases if not c.passed
    ]
    assert len(verdict.cases) == 8


SPAN = """\
import sys, time
started = time.time()
time.sleep(1.0)
print(repr([started, time.time()]))
"""


def test_the_cases_of_a_submission_run_side_by_side(sandbox, tmp_path):
    assert sandbox.parallel_runs > 1  # this machine has more than one CPU, and so slots
    cases = [{"name": f"span {i}", "stdin": str(i), "output": "never"} for i in range(4)]
    verdict = grade(write_lesson(tmp_path, cases), SPAN, sandbox)
    spans = [ast.literal_eval(case.stdout) for case in verdict.cases]
    assert all(end - start >= 1.0 for start, end in spans), spans

    def at_once(moment: float) -> int:
        return sum(start <= moment < end for start, end in spans)

    most = max(at_once(start) for start, _ in spans)
    assert most == min(len(spans), sandbox.parallel_runs), spans


def test_a_case_runs_with_the_exercises_limits(sandbox, tmp_path):
    cases = [
        value_case("slow", "slow()", 1),
        value_case("greedy", "greedy()", 1),
        {"name": "chatty", "output": "x"},
        value_case("fine", "1", 1),
    ]
    source = """\
    import sys, time
    def slow():
        while True:
            pass
    def greedy():
        return len(bytearray(512 * 1024 * 1024))
    if __name__ == "__main__":
        sys.stdout.write("x" * 100_000)
    """
    limits = {"time_s": 1, "memory_mb": 128, "output_kb": 16}
    exercise = write_lesson(tmp_path, cases, limits=limits)
    verdict = grade(exercise, source, sandbox)
    assert statuses(verdict) == {
        "slow": RunStatus.TIMEOUT,
        "greedy": RunStatus.MEMORY_LIMIT,
        "chatty": RunStatus.OUTPUT_LIMIT,
        "fine": RunStatus.PASSED,
    }, verdict.feedback
    assert verdict.status is RunStatus.TIMEOUT  # the first case, in file order, not passed
    assert verdict.score == 0.25
    shown = f"ran out of time ({exercise.limits.time_s:g} s)"  # 1 s, stretched to the host
    assert shown in by_name(verdict)["slow"].feedback
