"""Rows for tests: a platform, a course, a placement of a lesson, its students, their work."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from core.cases import CaseVerdict
from core.compare import LineDiff
from core.messages import verbatim
from core.runs import RunStatus
from core.verdicts import Verdict
from service.queue import Queue
from service.settings import Settings
from service.store import submissions
from service.store.database import Store
from service.store.models import Course, Placement, Platform, User, utcnow

SCALED = "expert/scaled-dot-product"
SEED = "expert/what-is-attention"  # one output, no cases: a fake that prints it passes


def settings_in(directory: Path, database: str = "codeblanks.db", **changes: Any) -> Settings:
    """Return this host's settings with the instance and a SQLite store in `directory` and a
    Redis that refuses connections (nothing is graded), then `changes` over them."""
    return replace(
        Settings.from_env(),
        **{
            "instance_dir": directory / "instance",
            "database_url": f"sqlite:///{directory / database}",
            "redis_url": "redis://127.0.0.1:9/0",
            **changes,
        },
    )


def verdict(
    status: RunStatus = RunStatus.PASSED,
    stdout: str = "",
    stderr: str = "",
    diff: LineDiff | None = None,
    ms: int = 12,
    feedback: str | None = None,
    exit_code: int | None = 0,
) -> Verdict:
    """Return the verdict of one visible case that ended as `status`, with its output."""
    words = f"{status.value} feedback" if feedback is None else feedback
    case = CaseVerdict(
        name="output", status=status, weight=1.0, hidden=False, feedback=words,
        input="", expected="", got=stdout, stdout=stdout, stderr=stderr,
        exit_code=exit_code, duration_ms=ms, diff=diff, message=verbatim(words),
    )  # fmt: skip
    return Verdict(status, ms, verbatim(words), (case,))


@dataclass(frozen=True)
class Placed:
    """A placement, and the first student in its course."""

    placement_id: int
    user_id: int
    platform_id: int


def place(store: Store, lesson_id: str = SCALED, **policy: Any) -> Placed:
    """Place a lesson in a fresh course of a fresh platform, with one student."""
    with store.session() as session:
        count = session.query(Platform).count()
        platform = Platform(
            issuer=f"https://lms{count}.example",
            client_id="tool",
            name="Test LMS",
            auth_login_url="https://lms.example/auth",
            auth_token_url="https://lms.example/token",
            key_set_url="https://lms.example/jwks",
        )
        session.add(platform)
        session.flush()
        course = Course(platform_id=platform.id, context_id="course-1", title="Attention")
        session.add(course)
        session.flush()
        placement = Placement(
            course_id=course.id, resource_link_id="link-1", lesson_id=lesson_id, **policy
        )
        session.add(placement)
        session.flush()
        user = User(platform_id=platform.id, sub="student-1", name="Ada")
        session.add(user)
        session.flush()
        return Placed(placement.id, user.id, platform.id)


def add_student(store: Store, placed: Placed, sub: str) -> int:
    """Add another student to the placement's platform; return their id."""
    with store.session() as session:
        user = User(platform_id=placed.platform_id, sub=sub, name=sub)
        session.add(user)
        session.flush()
        return user.id


def submission(
    store: Store,
    placement_id: int,
    user_id: int,
    source: str = "print(1)",
    late: bool = False,
    queue: str = Queue.GRADE,
) -> int:
    """Write a queued submission as the submit path does (its store writer); return its id."""
    with store.transaction() as connection:
        created = submissions.queue_new(
            connection, placement_id, user_id, source, late, utcnow(), queue
        )
        return created.submission_id
