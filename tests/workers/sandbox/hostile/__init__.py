"""Hostile submissions, by what they attack, each with the verdicts that keep the host safe.

A case's source may name the host's things by placeholder, filled in by the test:
$PORT (a listener on 127.0.0.1 that must get no connection), $MARKER and $HOST_TMP (host
files that must not appear), $INSTANCE (a fake instance dir with keys, database, config and a
stored submission), $LESSON (the seed lesson's dir: solution and expected output).
Planted secrets all hold one token that no run's output may contain.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.runs import RunStatus
from core.verdicts import Verdict

S = RunStatus


@dataclass(frozen=True)
class Case:
    """One hostile submission and what a safe sandbox must answer."""

    id: str
    source: str
    verdicts: frozenset[RunStatus]
    prelude: str = ""  # helper code put before the source
    forbid: tuple[str, ...] = ()  # must appear in neither stdout nor stderr
    require: tuple[str, ...] = ()  # must appear in stdout: the probe did run
    timed: bool = False  # the verdict must come within the time limit + 1.5 s
    after: str | None = None  # a probe run right after, which must print exactly CLEAN
    victim: bool = False  # another submission runs alongside, holding the secret token
    check: Callable[[Verdict], bool] = field(default=lambda verdict: True)


def case(id: str, source: str, verdicts: set[RunStatus], **kwargs: Any) -> Case:
    """Build a case; `verdicts` is the set of safe statuses."""
    return Case(id, source, frozenset(verdicts), **kwargs)


def all_cases() -> list[Case]:
    """Return every case, in a stable order."""
    from tests.workers.sandbox.hostile import escape, output, reach, resources, syscalls

    return [*resources.CASES, *output.CASES, *reach.CASES, *escape.CASES, *syscalls.CASES]
