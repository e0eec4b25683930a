"""Hidden cases cannot leak (issue 15, "Secrecy, tested"), on every sandbox backend.

The expected values are fresh random tokens of this test run. A submission searches all it
can reach from inside the sandbox for them: every regular file (bounded reads), every visible
process's environ, cmdline and readable memory (its own, its parent's, pid 1's), and its own
environment. It knows the tokens only by their SHA-256, so its own memory holds no copy, and a
control token that the case's input does carry into the sandbox shows that the search sees
what is there. Nothing of the expected values is found, and nothing of it is in the requests.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import textwrap
from typing import Any

from core.runs import RunRequest, RunStatus
from core.verdicts import Verdict, grade_source
from tests.workers.sandbox.case_lessons import (
    Recording,
    write_lesson,
)

SEARCH = """\
import hashlib, os, re, stat, sys

PATTERN = re.compile(rb"cb(?:secret|control)[0-9a-f]{32}")
CHUNK = 1 << 20
FILE_BYTES = 4 << 20  # read at most this much of each file
REGION_BYTES = 512 << 20  # and of each memory region


def _scan(data, found, where):
    for match in PATTERN.finditer(data):
        token = match.group()
        if hashlib.sha256(token).hexdigest() in HASHES:
            kind = "control" if token.startswith(b"cbcontrol") else "secret"
            found.setdefault(kind, set()).add(where)


def _read(path, found, where):
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        return 0
    total, tail = 0, b""
    try:
        while total < FILE_BYTES:
            try:
                block = os.read(fd, CHUNK)
            except OSError:
                break
            if not block:
                break
            total += len(block)
            _scan(tail + block, found, where)
            tail = block[-64:]
    finally:
        os.close(fd)
    return total


def _memory(pid, found):
    try:
        with open(f"/proc/{pid}/maps") as maps:
            lines = maps.read().splitlines()
        mem = os.open(f"/proc/{pid}/mem", os.O_RDONLY)
    except OSError:
        return 0
    total = 0
    try:
        for line in lines:
            fields = line.split()
            if "r" not in fields[1]:
                continue
            start, end = (int(x, 16) for x in fields[0].split("-"))
            tail = b""
            for at in range(start, min(end, start + REGION_BYTES), CHUNK):
                try:
                    block = os.pread(mem, min(CHUNK, end - at), at)
                except OSError:
                    break
                total += len(block)
                _scan(tail + block, found, f"mem:{pid}")
                tail = block[-64:]
    finally:
        os.close(mem)
    return total


def search():
    found, files = {}, 0
    for key, value in os.environ.items():
        _scan(f"{key}={value}".encode(), found, "environ")
    _scan(" ".join(sys.argv).encode(), found, "argv")
    for top in os.listdir("/"):
        if top in ("proc", "sys", "dev"):
            continue  # /proc is searched below; /sys and /dev hold no files of anyone's
        for here, dirs, names in os.walk("/" + top):
            for name in names:
                path = os.path.join(here, name)
                try:
                    if not stat.S_ISREG(os.lstat(path).st_mode):
                        continue
                except OSError:
                    continue
                files += 1
                _read(path, found, "file:" + path)
    pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    memory = {}
    for pid in pids:
        _read(f"/proc/{pid}/environ", found, f"environ:{pid}")
        _read(f"/proc/{pid}/cmdline", found, f"cmdline:{pid}")
        memory[pid] = _memory(pid, found)
    secret = sorted(found.get("secret", ()))
    control = sorted({place.split(":")[0] for place in found.get("control", ())})
    return (
        f"secret: {', '.join(secret)[:100] if secret else 'not found'}"
        f" | control: {','.join(control)} | files {files}"
        f" | self {os.getpid()} parent {os.getppid()} pids {','.join(map(str, pids))}"
        f" | memory of {','.join(str(pid) for pid in pids if memory[pid])}"
    )


if __name__ == "__main__":
    # kept: a freed input's memory may be taken again before the search reads it (it was,
    # once the warm zygote's heap held matplotlib too)
    INPUT = sys.stdin.read()
    print(search())
"""
REPORT = re.compile(
    r"secret: (?P<secret>.*?) \| control: (?P<control>[a-z,]*) \| files (?P<files>\d+)"
    r" \| self (?P<self>\d+) parent (?P<parent>\d+) pids (?P<pids>[\d,]*)"
    r" \| memory of (?P<memory>[\d,]*)"
)


def token(kind: str) -> str:
    """Return a fresh token of this test run: what the submission searches for."""
    return f"cb{kind}{secrets.token_hex(16)}"


def in_requests(requests: list[RunRequest], text: str) -> list[str]:
    """Return where the requests hold this text: a file's name, or stdin."""
    needle = text.encode()
    found = [
        f"{name} of a run of {request.entrypoint}"
        for request in requests
        for name, data in request.files.items()
        if needle in data or needle in name.encode()
    ]
    return found + ["stdin" for request in requests if needle in request.stdin]


def student_view(verdict: Verdict) -> str:
    """Return everything of the verdict a student is shown."""
    return json.dumps(verdict.as_json("secrecy"), ensure_ascii=False) + verdict.feedback


def test_a_search_of_everything_the_run_can_reach_finds_no_expected_value(sandbox, tmp_path):
    control = token("control")
    hidden_value, hidden_output, hidden_stdin_output, visible_value = (
        token("secret") for _ in range(4)
    )
    cases: list[dict[str, Any]] = [
        {"name": "hidden value", "expr": f"search() if True else {control!r}",
         "expected": hidden_value, "hidden": True},
        {"name": "hidden run with argv", "argv": [control], "output": f"{hidden_output}\n",
         "hidden": True},
        {"name": "hidden run with stdin", "stdin": f"{control}\n",
         "output": f"{hidden_stdin_output}\n", "hidden": True},
        {"name": "visible value", "expr": "{'found': search()}",
         "expected": {"found": visible_value, "pad": [visible_value]}},
    ]  # fmt: skip
    tokens = [control, hidden_value, hidden_output, hidden_stdin_output, visible_value]
    hashes = {hashlib.sha256(t.encode()).hexdigest() for t in tokens}
    source = f"HASHES = {sorted(hashes)!r}\n" + SEARCH
    exercise = write_lesson(tmp_path, cases, limits={"time_s": 60, "memory_mb": 512})
    recording = Recording(sandbox)
    verdict = grade_source(exercise, source.encode(), recording)

    reports: dict[str, Any] = {}
    for case in verdict.cases:
        assert case.status is RunStatus.FAILED, (case.name, case.feedback, case.stderr[-2000:])
        match = REPORT.search(case.got)
        assert match is not None, (case.name, case.got, case.stderr[-2000:])
        reports[case.name] = match.groupdict()
        print(f"SEARCH {case.name}: {case.got}")
    assert {name: r["secret"] for name, r in reports.items()} == dict.fromkeys(reports, "not found")
    # the search saw what the sandbox holds: the control token of the input, in the files of
    # the run (the harness's config) and in the process's memory, or on its stdin
    assert "file" in reports["hidden value"]["control"].split(","), reports
    assert "mem" in reports["hidden value"]["control"].split(","), reports
    assert "file" in reports["hidden run with argv"]["control"].split(","), reports
    assert "mem" in reports["hidden run with stdin"]["control"].split(","), reports
    for report in reports.values():
        assert int(report["files"]) > 1000, report  # the whole runtime was walked
        assert report["self"] in report["memory"].split(","), report
        assert report["parent"] in report["pids"].split(",") or report["parent"] == "0", report

    # nothing of any expected value went into any run; the control (an input) did
    assert len(recording.requests) == len(cases)
    for secret in tokens[1:]:
        assert in_requests(recording.requests, secret) == []
    assert in_requests(recording.requests, control) != []
    for each in exercise.cases:
        expected = json.dumps(each.expected) if each.is_value else each.output
        assert in_requests(recording.requests, expected) == []

    # a student's view holds no hidden expected value and no hidden input
    shown = student_view(verdict)
    for secret in (control, hidden_value, hidden_output, hidden_stdin_output):
        assert secret not in shown
    assert "search() if True" not in shown


RUN_INPUT, VALUE_INPUT = 7361901, 4243077  # the hidden cases' inputs
GUESSES = {
    # reads the input, and prints the answer only for the visible case's
    "guesses the hidden input wrong": """\
        import sys
        def square(x):
            return 9 if x == 3 else 4
        if __name__ == "__main__":
            print(square(int(sys.stdin.read())))
        """,
    # hard codes the hidden run's answer (a right guess passes: it is right), and prints the
    # hidden value's answer when imported, but returns a wrong value
    "prints the right answers, returns wrong": f"""\
        import sys
        def square(x):
            print({VALUE_INPUT**2})
            return {VALUE_INPUT**2 - 1}
        if __name__ == "__main__":
            print({{3: 9}}.get(int(sys.stdin.read()), {RUN_INPUT**2}))
        else:
            print({VALUE_INPUT**2})
        """,
    "right": """\
        import sys
        def square(x):
            return x * x
        if __name__ == "__main__":
            print(square(int(sys.stdin.read())))
        """,
}
EXPECTED_SCORES = {
    "guesses the hidden input wrong": 1 / 3,
    "prints the right answers, returns wrong": 2 / 3,
    "right": 1.0,
}


def test_guessing_a_hidden_case_still_needs_the_right_answer(sandbox, tmp_path):
    cases: list[dict[str, Any]] = [
        {"name": "visible", "stdin": "3\n", "output": "9\n"},
        {"name": "hidden run", "stdin": f"{RUN_INPUT}\n", "output": f"{RUN_INPUT**2}\n",
         "hidden": True},
        {"name": "hidden value", "expr": f"square({VALUE_INPUT})", "expected": VALUE_INPUT**2,
         "hidden": True},
    ]  # fmt: skip
    exercise = write_lesson(tmp_path, cases)
    scores = {}
    for name, source in GUESSES.items():
        verdict = grade_source(exercise, textwrap.dedent(source).encode(), sandbox)
        scores[name] = verdict.score
        hidden_value = [c for c in verdict.cases if c.name == "hidden value"][0]
        if name == "right":
            assert hidden_value.passed
        else:
            assert hidden_value.status is RunStatus.FAILED, hidden_value
        if name == "prints the right answers, returns wrong":
            assert hidden_value.got == str(VALUE_INPUT**2 - 1)
            assert str(VALUE_INPUT**2) in hidden_value.stderr  # printed, and not the value
        shown = student_view(verdict)
        for hidden in (RUN_INPUT, RUN_INPUT**2, VALUE_INPUT, VALUE_INPUT**2, VALUE_INPUT**2 - 1):
            assert str(hidden) not in shown, (name, hidden, shown)
    assert scores == EXPECTED_SCORES
