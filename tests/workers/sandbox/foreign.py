"""Another codeblanks on the same machine: one sandbox backend, running runs in a loop.

`python -m tests.workers.sandbox.foreign BACKEND` builds the backend as a worker does, prints
one JSON line saying who it is (its pid and, for docker, its instance id), then one line per run
("ok N" or "bad N: why") until its stdin closes, and a last line "done OK BAD".
Used by test_sharing.py to prove that the sandbox tests leave another codeblanks alone.
"""

import json
import os
import sys
import threading

from core.errors import GraderError
from core.runs import Limits, RunRequest
from service.settings import Settings
from testkit import slowness
from tests.workers.sandbox import docker_waits
from workers.sandbox import make_sandbox

# numpy and a child process: each run makes processes, a cgroup and (bwrap) a tmpfs of its own
SOURCE = b"import numpy, subprocess\nsubprocess.run(['true'])\nprint(int(numpy.ones(N).sum()))\n"


def main(backend: str) -> int:
    """Run the loop until stdin closes; exit 0 if every run printed what it should."""
    sandbox = make_sandbox(
        backend, Settings.from_env().runtime_dir, Settings.from_env().runner_image
    )
    getattr(sandbox, "check", lambda: None)()
    getattr(sandbox, "start", lambda: None)()
    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    print(json.dumps({"pid": os.getpid(), "instance": getattr(sandbox, "instance", None)}))
    sys.stdout.flush()
    ok = bad = 0
    while not stop.is_set():
        n = ok + bad
        files = {"main.py": SOURCE.replace(b"N", str(n + 1).encode())}
        try:
            result = sandbox.run(RunRequest(files, "main.py", slowness.stretch(Limits(time_s=5))))
            good = result.exit_code == 0 and result.stdout == f"{n + 1}\n".encode()
            why = f"{result.outcome} {result.exit_code} {result.stderr[-300:]!r}"
        except GraderError as exc:
            good, why = False, f"GraderError: {exc}"
        if good:
            ok += 1
            print(f"ok {n}")
        else:
            bad += 1
            print(f"bad {n}: {why}")
        sys.stdout.flush()
    getattr(sandbox, "close", lambda: None)()
    print(f"done {ok} {bad}")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    with docker_waits.scaled():  # as the tests' own docker runs wait (conftest.py)
        code = main(sys.argv[1])
    sys.exit(code)
