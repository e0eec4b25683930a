"""Every hostile submission on every backend (conftest.py's `sandbox` fixture): a safe verdict
in time, and nothing left behind."""

import dataclasses
import json
import os
import re
import secrets
import shutil
import socket
import string
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.runs import Limits, RunRequest, RunStatus, Sandbox
from core.verdicts import grade_source
from testkit import slowness
from tests.conftest import SEED
from tests.workers.sandbox.hostile import Case, all_cases
from tests.workers.sandbox.leftovers import (
    bwrap_leftovers,
    docker_leftovers,
    settled,
    warm_leftovers,
)
from workers.sandbox.bwrap import BwrapSandbox
from workers.sandbox.docker import DockerSandbox
from workers.sandbox.warm import WarmSandbox

LIMITS = slowness.stretch(Limits(time_s=2, memory_mb=128))
TIME_SLACK_S = 1.5
SOLUTION = (SEED / "solution" / "model.py").read_bytes()
_RIGHT_RUN_S: dict[str, float] = {}  # by backend, measured once per session


def right_run_s(sandbox: Sandbox, seed) -> float:
    """Return what grading the right answer takes on this backend here, measured once.

    A timed case may take its limit, the slack, and this: a backend's own start and stop
    (Docker's create, start, inspect and removal) is no part of the limit. The host's
    slowness does not stand for it: in the emulated Debian 12 guest, measured at 18.9x,
    Docker's round trip took some 37 s, and a fork bomb's timeout ended 142.9 s after it
    began, against a bound of 133.2 s.
    """
    name = type(sandbox).__name__
    if name not in _RIGHT_RUN_S:
        started = time.monotonic()
        grade_source(seed, SOLUTION, sandbox)
        _RIGHT_RUN_S[name] = time.monotonic() - started
    return _RIGHT_RUN_S[name]


@pytest.fixture
def seed(seed):
    """The seed exercise (tests/workers/sandbox/conftest.py's), with the suite's small limits."""
    return dataclasses.replace(seed, limits=LIMITS)


@dataclasses.dataclass
class Host:
    """What the host holds during one case: planted secrets, markers, and listeners."""

    root: Path
    token: str
    listeners: list[socket.socket]

    @property
    def places(self) -> dict[str, str]:
        """Return the placeholder values of the cases' sources."""
        return {
            "PORT": str(self.listeners[0].getsockname()[1]),
            "MARKER": str(self.root / "drop" / "marker"),
            "HOST_TMP": f"/tmp/codeblanks-hostile-{self.token[-8:]}",
            "INSTANCE": str(self.root / "instance"),
            "LESSON": str(SEED),
        }

    def fill(self, text: str) -> str:
        """Return the text with its $PLACEHOLDERS filled in."""
        return string.Template(text).safe_substitute(self.places)

    def problems(self) -> list[str]:
        """Return every sign that the run reached the host."""
        found = []
        for listener in self.listeners:
            try:
                peer = listener.accept()[1]
                found.append(f"connection from {peer} to {listener.getsockname()}")
            except BlockingIOError:
                pass
        for key in ("MARKER", "HOST_TMP"):
            if os.path.lexists(self.places[key]):
                found.append(f"file left on the host: {self.places[key]}")
        if (SEED / "pwned").exists():
            found.append("file written into the lesson dir")
        return found


@pytest.fixture
def host(monkeypatch: pytest.MonkeyPatch) -> Iterator[Host]:
    """Plant secrets where a leaky sandbox could read them; open listeners on loopback."""
    token = f"CB-SECRET-{secrets.token_hex(8)}"
    root = Path(tempfile.mkdtemp(prefix="codeblanks-hostile-"))
    root.chmod(0o755)  # only the sandbox, not file modes, may keep the run out
    (root / "drop").mkdir(mode=0o777)
    (root / "drop").chmod(0o777)
    instance = root / "instance"
    (instance / "submissions" / "41").mkdir(parents=True)
    for name in ("lti-private-key.pem", "codeblanks.db", "config.env", "submissions/41/model.py"):
        (instance / name).write_text(f"{token}\n")
        (instance / name).chmod(0o644)
    for directory in (instance, instance / "submissions", instance / "submissions" / "41"):
        directory.chmod(0o755)
    monkeypatch.setenv("CODEBLANKS_HOSTILE_SECRET", token)
    listeners = [socket.create_server(("127.0.0.1", 0))]
    try:
        listeners.append(socket.create_server(("127.0.0.1", 6379)))
    except OSError:
        pass  # a real Redis holds the port; the run must not reach it either
    for listener in listeners:
        listener.setblocking(False)
    lesson_before = _snapshot(SEED)
    yield Host(root, token, listeners)
    for listener in listeners:
        listener.close()
    shutil.rmtree(root, ignore_errors=True)
    Path(f"/tmp/codeblanks-hostile-{token[-8:]}").unlink(missing_ok=True)
    (SEED / "pwned").unlink(missing_ok=True)
    assert _snapshot(SEED) == lesson_before, "the lesson dir changed"


def _snapshot(directory: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in directory.rglob("*")}


def leftovers(sandbox: Sandbox) -> list[str]:
    """Return what this sandbox's runs left on the host (another codeblanks's are not looked at)."""
    if isinstance(sandbox, WarmSandbox):
        return warm_leftovers(sandbox)
    if isinstance(sandbox, DockerSandbox):
        return docker_leftovers(sandbox)
    if isinstance(sandbox, BwrapSandbox):
        return bwrap_leftovers(sandbox)
    raise AssertionError(f"no leftover check for {type(sandbox).__name__}: add one")


def _victim(sandbox: Sandbox, token: str) -> threading.Thread:
    """Start another submission that holds the secret token in its source and its memory."""
    source = f"SECRET = {token!r}\nimport time\ntime.sleep(1.5)\n".encode()
    request = RunRequest({"model.py": source}, "model.py", LIMITS)
    thread = threading.Thread(target=sandbox.run, args=(request,))
    thread.start()
    return thread


CASES = all_cases()


@pytest.mark.parametrize("case", CASES, ids=[re.sub(r"\W+", "-", c.id).strip("-") for c in CASES])
def test_hostile_submission_is_contained(sandbox, seed, host, case: Case, request):
    bound = LIMITS.time_s + slowness.scaled(TIME_SLACK_S) + right_run_s(sandbox, seed)
    # what was there before (an earlier case's slow exit) is not this case's
    before = set(leftovers(sandbox))
    source = host.fill(textwrap.dedent(case.prelude) + textwrap.dedent(case.source))
    victim = _victim(sandbox, host.token) if case.victim else None
    started = time.monotonic()
    verdict = grade_source(seed, source.encode(), sandbox)
    elapsed = time.monotonic() - started
    if victim is not None:
        victim.join()
    print(f"VERDICT {request.node.callspec.id}: {verdict.status.value} {elapsed:.2f} s")
    shown = (
        f"{case.id}: {verdict.status.value} in {elapsed:.2f} s, exit {verdict.exit_code}\n"
        f"stdout: {verdict.stdout[:1500]!r}\nstderr: {verdict.stderr[-1500:]!r}"
    )
    assert verdict.status in case.verdicts, shown
    if case.timed:
        assert elapsed < bound, shown
    printed = verdict.stdout + verdict.stderr
    for word in (host.token, *(host.fill(w) for w in case.forbid)):
        assert word not in printed, shown
    for word in case.require:
        assert host.fill(word) in verdict.stdout, shown
    assert case.check(verdict), shown
    budget = LIMITS.output_kb * 1024
    assert len(verdict.stdout) <= budget and len(verdict.stderr) <= budget
    json.dumps(verdict.as_json("hostile"), ensure_ascii=False).encode()  # no lone surrogate

    assert settled(lambda: sorted(set(leftovers(sandbox)) - before)) == []
    assert host.problems() == []
    if case.after is not None:
        probe = RunRequest({"model.py": textwrap.dedent(case.after).encode()}, "model.py", LIMITS)
        result = sandbox.run(probe)
        assert result.stdout == b"CLEAN\n", (result.stdout, result.stderr[-1500:])
    follow_up = grade_source(seed, SOLUTION, sandbox)
    assert follow_up.status is RunStatus.PASSED, follow_up.feedback
