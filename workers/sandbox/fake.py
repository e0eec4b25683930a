"""A fake backend for tests of the code above the sandbox: answers from a script, runs nothing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from core.runs import RunOutcome, RunRequest, RunResult

Responder = Callable[[RunRequest], RunResult]


def echo_source(request: RunRequest) -> RunResult:
    """Pretend the entrypoint printed the text after a `# prints: ` marker in its source."""
    source = request.files[request.entrypoint].decode()
    marker = "# prints: "
    printed = [line.split(marker, 1)[1] for line in source.splitlines() if marker in line]
    text = "\n".join(p.encode().decode("unicode_escape") for p in printed)
    return RunResult(RunOutcome.EXITED, stdout=text.encode(), exit_code=0, duration_ms=1)


@dataclass
class FakeSandbox:
    """Records every request and answers with `responder` (by default, echo_source)."""

    responder: Responder = echo_source
    requests: list[RunRequest] = field(default_factory=list)
    parallel_runs: int = 1  # runs in the caller's thread, in order

    def run(self, request: RunRequest) -> RunResult:
        """Record the request and return the scripted result."""
        self.requests.append(request)
        return self.responder(request)
