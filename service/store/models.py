"""The tables: platforms and their deployments, users, courses, placements, and the work.

Times are stored as naive UTC and read back timezone-aware (UtcDateTime), the same on
SQLite and PostgreSQL.
"""

from __future__ import annotations

import enum
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    CheckConstraint,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

ID = String(255)  # LTI ids longer than this are refused at the launch
URL = String(2048)


class SubmissionStatus(enum.StrEnum):
    """Where a submission is in its life (the `submissions.status` column)."""

    QUEUED = "queued"
    RUNNING = "running"  # a worker holds its lease
    GRADED = "graded"


class PracticeStatus(enum.StrEnum):
    """Where a practice run is in its life (the `practice_runs.status` column)."""

    QUEUED = "queued"
    RUNNING = "running"  # a worker holds its lease
    DONE = "done"


class SyncStatus(enum.StrEnum):
    """Where a grade sync is (the `grade_syncs.status` column)."""

    PENDING = "pending"
    SENT = "sent"
    SKIPPED = "skipped"  # nothing to post to, with the reason
    FAILED = "failed"  # out of attempts; the teacher may resend
    HELD = "held"  # a bulk regrade under review, or a placement holding its scores: sent at release


def utcnow() -> datetime:
    """Return the current time, timezone-aware, in UTC."""
    return datetime.now(UTC)


class UtcDateTime(TypeDecorator[datetime]):
    """A timezone-aware datetime kept as naive UTC, so both databases agree."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("store only timezone-aware datetimes")
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        return None if value is None else value.replace(tzinfo=UTC)


class Base(DeclarativeBase):
    """The declarative base; constraint names are fixed so that migrations can name them."""

    metadata = MetaData(
        naming_convention={
            "ix": "ix_%(table_name)s_%(column_0_N_name)s",
            "uq": "uq_%(table_name)s_%(column_0_N_name)s",
            "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
            "pk": "pk_%(table_name)s",
        }
    )
    type_annotation_map = {datetime: UtcDateTime(), str: Text()}


class Platform(Base):
    """A registered LMS, identified by (issuer, client id)."""

    __tablename__ = "platforms"
    __table_args__ = (UniqueConstraint("issuer", "client_id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    issuer: Mapped[str] = mapped_column(URL)
    client_id: Mapped[str] = mapped_column(ID)
    name: Mapped[str] = mapped_column(String(255), default="")
    auth_login_url: Mapped[str] = mapped_column(URL)
    auth_token_url: Mapped[str] = mapped_column(URL)
    key_set_url: Mapped[str] = mapped_column(URL)
    # the client assertion's `aud` at the token URL when the LMS wants another (Brightspace's
    # "OAuth2 Audience"); none: the token URL itself (service.lti.services.PlatformAccess)
    token_audience: Mapped[str | None] = mapped_column(URL, default=None)
    # off by default: a launch from a deployment nobody registered is refused
    auto_add_deployments: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class PlatformCheck(Base):
    """A platform's latest self-test (service.lti.self_test), and what its launches claimed.

    One row per platform, replaced by each self-test; launches keep `product_family` and
    `launch_scopes` current, the registration its `registered_scopes`.
    """

    __tablename__ = "platform_checks"
    platform_id: Mapped[int] = mapped_column(
        ForeignKey("platforms.id", ondelete="CASCADE"), primary_key=True
    )
    product_family: Mapped[str | None] = mapped_column(String(64))
    registered_scopes: Mapped[str | None] = mapped_column(String(2000))
    launch_scopes: Mapped[str | None] = mapped_column(String(2000))  # the AGS claim's, latest
    checked_at: Mapped[datetime | None]
    grades_ok: Mapped[bool | None]
    result: Mapped[Any] = mapped_column(JSON, nullable=True)  # core.lms_traps.SelfTest
    # when a launch last asked for a self-test (platform_checks.ask): one ask per while
    asked_at: Mapped[datetime | None]


class RegistrationToken(Base):
    """An admin's single-use, expiring permission for one LTI Dynamic Registration.

    Only the token's hash is kept. `claimed_at` marks a registration in progress (so that
    one URL cannot register twice at once); `used_at` and `platform_id` what it registered.
    """

    __tablename__ = "registration_tokens"
    id: Mapped[int] = mapped_column(primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(255), default="")
    # a platform whose URLs and keys this registration may replace; None: new ones only
    replaces_id: Mapped[int | None] = mapped_column(ForeignKey("platforms.id", ondelete="CASCADE"))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime]
    claimed_at: Mapped[datetime | None]
    used_at: Mapped[datetime | None]
    platform_id: Mapped[int | None] = mapped_column(ForeignKey("platforms.id", ondelete="SET NULL"))


class LoginFailures(Base):
    """Failed admin sign-ins counted per key (a client, or the account), in a time window."""

    __tablename__ = "login_failures"
    key: Mapped[str] = mapped_column(String(128), primary_key=True)
    count: Mapped[int] = mapped_column(default=0)
    window_start: Mapped[datetime]


class Deployment(Base):
    """One deployment of the tool in a platform (a platform may have many)."""

    __tablename__ = "deployments"
    __table_args__ = (UniqueConstraint("platform_id", "deployment_id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    platform_id: Mapped[int] = mapped_column(ForeignKey("platforms.id", ondelete="CASCADE"))
    deployment_id: Mapped[str] = mapped_column(ID)


class User(Base):
    """A person, as a platform knows them (the LTI `sub`)."""

    __tablename__ = "users"
    __table_args__ = (UniqueConstraint("platform_id", "sub"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    platform_id: Mapped[int] = mapped_column(ForeignKey("platforms.id", ondelete="CASCADE"))
    sub: Mapped[str] = mapped_column(ID)
    name: Mapped[str] = mapped_column(String(255), default="")
    email: Mapped[str] = mapped_column(String(320), default="")
    # their LMS language, from their last launch (`launch_presentation.locale`: "tr"), in
    # which the comments of their scores are worded; None: not sent, English
    locale: Mapped[str | None] = mapped_column(String(35))


class Course(Base):
    """A course of a platform (the LTI context)."""

    __tablename__ = "courses"
    __table_args__ = (UniqueConstraint("platform_id", "context_id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    platform_id: Mapped[int] = mapped_column(ForeignKey("platforms.id", ondelete="CASCADE"))
    context_id: Mapped[str] = mapped_column(ID)
    title: Mapped[str] = mapped_column(String(255), default="")
    line_items_url: Mapped[str | None] = mapped_column(URL)  # AGS, from the latest launch
    memberships_url: Mapped[str | None] = mapped_column(URL)  # NRPS, from the latest launch
    # the roster is read from the LMS by a background task (see service.store.roster_reads):
    # when one was last asked for, when one last succeeded, and why the last one failed
    roster_requested_at: Mapped[datetime | None]
    roster_read_at: Mapped[datetime | None]
    roster_error: Mapped[str | None] = mapped_column(String(500))


class Placement(Base):
    """A lesson placed in a course through a resource link, with the teacher's policy.

    `late_penalty` None: nothing is accepted after `due_at` (see core.placements.Policy).
    `hold_scores`: its scores wait for a release (the teacher's, or the sweep's at
    `release_at`), then go out all at once; `released_at` says when they went.
    """

    __tablename__ = "placements"
    __table_args__ = (UniqueConstraint("course_id", "resource_link_id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    course_id: Mapped[int] = mapped_column(ForeignKey("courses.id", ondelete="CASCADE"))
    resource_link_id: Mapped[str] = mapped_column(ID)
    lesson_id: Mapped[str] = mapped_column(String(255))
    title: Mapped[str] = mapped_column(String(255), default="")
    line_item_url: Mapped[str | None] = mapped_column(URL)
    reveal: Mapped[str] = mapped_column(String(32), default="never")
    reveal_after_attempts: Mapped[int | None]
    max_attempts: Mapped[int | None]
    due_at: Mapped[datetime | None]
    late_penalty: Mapped[float | None] = mapped_column(Float)
    hold_scores: Mapped[bool] = mapped_column(default=False, server_default=false())
    release_at: Mapped[datetime | None]
    released_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    @property
    def holds_scores(self) -> bool:
        """Return whether its scores wait for a release now (set to hold, not released)."""
        return self.hold_scores and self.released_at is None


class PolicyException(Base):
    """One student's exception to a placement's policy (core.placements.StudentException).

    Set by a teacher of the course (`set_by`, at `set_at`); removed by deleting the row.
    """

    __tablename__ = "policy_exceptions"
    __table_args__ = (UniqueConstraint("placement_id", "user_id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    placement_id: Mapped[int] = mapped_column(ForeignKey("placements.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    due_at: Mapped[datetime | None]
    max_attempts: Mapped[int | None]
    waive_penalty: Mapped[bool] = mapped_column(default=False)
    set_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    set_at: Mapped[datetime] = mapped_column(default=utcnow)


class LineItemRead(Base):
    """A placement's reads of its line item's results from the LMS (AGS), by a background
    task (service.store.result_reads): one row from the first time one was asked for."""

    __tablename__ = "line_item_reads"
    placement_id: Mapped[int] = mapped_column(
        ForeignKey("placements.id", ondelete="CASCADE"), primary_key=True
    )
    requested_at: Mapped[datetime | None]  # when a read was last asked for
    read_at: Mapped[datetime | None]  # when one last succeeded
    # why the last one failed (a core.messages text, worded for each teacher)
    error: Mapped[Any] = mapped_column(JSON, nullable=True)


class Submission(Base):
    """A student's code for a placement's exercise, and once graded, its verdict.

    status: queued -> running (a worker holds `lease_token` until `lease_expires_at`) ->
    graded, or back to queued when its grading pauses to let others go first. `claims`
    counts workers that took it; `gradings` counts verdicts saved, in the same statement as
    the verdict, so a second grading would show. `grader_error` is set when the verdict is
    our fault (the grader failed), not the student's.
    """

    __tablename__ = "submissions"
    __table_args__ = (
        Index(None, "user_id", "created_at"),
        Index(None, "placement_id", "user_id"),
        Index(None, "status", "enqueued_at"),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    placement_id: Mapped[int] = mapped_column(ForeignKey("placements.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    source: Mapped[str]
    status: Mapped[str] = mapped_column(String(16), default=SubmissionStatus.QUEUED)
    queue: Mapped[str] = mapped_column(String(16), default="grade")
    late: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # when its message was last sent; None while it waits behind its author's submission in
    # the queue (service.store.leased_work: a student's work takes turns)
    enqueued_at: Mapped[datetime | None] = mapped_column(default=utcnow)
    lease_token: Mapped[str | None] = mapped_column(String(32))
    lease_expires_at: Mapped[datetime | None]
    claims: Mapped[int] = mapped_column(Integer, default=0)
    gradings: Mapped[int] = mapped_column(Integer, default=0)
    regrades: Mapped[int] = mapped_column(Integer, default=0)
    run_status: Mapped[str | None] = mapped_column(String(16))
    duration_ms: Mapped[int | None]
    # the verdict is its feedback (core.messages.to_json) and its cases; its output, score
    # and difference are derived from them when read (core.student_views.stored_view)
    message: Mapped[Any] = mapped_column(JSON, nullable=True)
    # every case's verdict, with what a hidden case holds: shown to students per the reveal
    # policy only (core.student_views); None for a grader's failure (no case ran)
    cases: Mapped[Any] = mapped_column(JSON, nullable=True)
    # copies of derived values that SQL reads, written by submissions.finish() alone: the
    # score, which grades and gradebook take the best of per student (JSON has no portable
    # max), and the first difference, which work.failing_lines groups a placement's
    # failures by (reading every case record of a placement instead costs its whole output)
    score: Mapped[float | None] = mapped_column(Float)
    diff_line: Mapped[int | None]
    diff_expected: Mapped[str | None]
    # the run results (core.runs.result_record) of the cases a paused grading ran, until
    # its verdict is saved
    progress: Mapped[Any] = mapped_column(JSON, nullable=True)
    grader_error: Mapped[str | None]
    graded_at: Mapped[datetime | None]


class PracticeRun(Base):
    """A student's practice run (the page's Run button): their code on the exercise's
    visible cases and on an input of their own. No submission: it counts as no attempt,
    changes no score and reaches no LMS, so no query of submissions ever meets one.

    status: queued -> running (a worker holds `lease_token` until `lease_expires_at`) ->
    done, or back to queued when it pauses to let others go first (its runs so far kept in
    `progress`). A student has one in flight: a newer run replaces a queued one at once, and
    a running one at its next case (`replaced`), and waits for it (`enqueued_at` None). Once
    done it keeps what its student sees, as a verdict is kept: `run_status`, `duration_ms`,
    `message` and the visible cases' records (`cases`), and the run on their input
    (`on_input`, core.practice.InputRun.record). The sweep deletes it a day later.
    """

    __tablename__ = "practice_runs"
    __table_args__ = (
        Index(None, "user_id", "created_at"),
        Index(None, "status", "enqueued_at"),
        Index(None, "created_at"),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    placement_id: Mapped[int] = mapped_column(ForeignKey("placements.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    source: Mapped[str]
    stdin: Mapped[str | None]  # None: no input of the student's (the page's box not offered)
    status: Mapped[str] = mapped_column(String(16), default=PracticeStatus.QUEUED)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    enqueued_at: Mapped[datetime | None]  # None while it waits for its author's run before it
    lease_token: Mapped[str | None] = mapped_column(String(32))
    lease_expires_at: Mapped[datetime | None]
    claims: Mapped[int] = mapped_column(Integer, default=0)
    progress: Mapped[Any] = mapped_column(JSON, nullable=True)
    replaced: Mapped[bool] = mapped_column(default=False)  # ended unrun: a newer one came
    run_status: Mapped[str | None] = mapped_column(String(16))
    duration_ms: Mapped[int | None]
    message: Mapped[Any] = mapped_column(JSON, nullable=True)
    cases: Mapped[Any] = mapped_column(JSON, nullable=True)
    on_input: Mapped[Any] = mapped_column(JSON, nullable=True)
    grader_error: Mapped[str | None]
    finished_at: Mapped[datetime | None]


class QuestionAnswer(Base):
    """A student's answer to a question of a placement's lesson; the first answer counts."""

    __tablename__ = "question_answers"
    __table_args__ = (UniqueConstraint("placement_id", "user_id", "question_id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    placement_id: Mapped[int] = mapped_column(ForeignKey("placements.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    question_id: Mapped[str] = mapped_column(String(64))
    answer: Mapped[Any] = mapped_column(JSON)
    earned: Mapped[float] = mapped_column(Float)
    possible: Mapped[float] = mapped_column(Float)
    late: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Grade(Base):
    """A user's lesson score on a placement, as last computed for the LMS."""

    __tablename__ = "grades"
    __table_args__ = (UniqueConstraint("placement_id", "user_id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    placement_id: Mapped[int] = mapped_column(ForeignKey("placements.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    score_given: Mapped[float] = mapped_column(Float)
    score_maximum: Mapped[float] = mapped_column(Float)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)
    # what the LMS holds: the last score it accepted, and that post's timestamp (whole
    # seconds: Moodle refuses a score not strictly later, in seconds, than the one it has)
    lms_given: Mapped[float | None] = mapped_column(Float)
    lms_maximum: Mapped[float | None] = mapped_column(Float)
    lms_at: Mapped[datetime | None]
    # what a read of the LMS's results found it holding (read_given None: no score), when
    # that read began; None while no read has seen the score the LMS last accepted
    read_given: Mapped[float | None] = mapped_column(Float)
    read_maximum: Mapped[float | None] = mapped_column(Float)
    read_at: Mapped[datetime | None]
    # one post of the pair at a time: a sync holds the pair until this time, or until it ends
    posting_until: Mapped[datetime | None]


class GradeSync(Base):
    """The outbox: one row per post the LMS needs, with every attempt's outcome.

    status: pending -> sent | skipped (nothing to post to, with the reason) | failed (out of
    attempts; the teacher can resend). Written in the transaction that changed the grade.
    """

    __tablename__ = "grade_syncs"
    __table_args__ = (
        Index(None, "placement_id", "user_id", "status"),
        Index(None, "status", "next_attempt_at"),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    placement_id: Mapped[int] = mapped_column(ForeignKey("placements.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    status: Mapped[str] = mapped_column(String(16), default=SyncStatus.PENDING)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(default=utcnow)
    score_given: Mapped[float | None] = mapped_column(Float)
    score_maximum: Mapped[float | None] = mapped_column(Float)
    last_error: Mapped[str | None]  # the last failure, or why the sync was skipped
    lms_response: Mapped[str | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class PlatformOutage(Base):
    """A platform that is away (down, unreachable, overloaded): one row while the outage lasts.

    Its waiting grade syncs do not post: one pair's sync probes it every few seconds
    (core.platforms.probe_wait), and the first answer ends the outage and releases them all
    (service.store.outages, workers.syncing).
    """

    __tablename__ = "platform_outages"
    platform_id: Mapped[int] = mapped_column(
        ForeignKey("platforms.id", ondelete="CASCADE"), primary_key=True
    )
    since: Mapped[datetime] = mapped_column(default=utcnow)
    probes: Mapped[int] = mapped_column(Integer, default=1)  # requests failed since
    probe_at: Mapped[datetime]  # the next probe goes then (while one posts: its turn's end)
    # the pair whose sync probes next
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    placement_id: Mapped[int] = mapped_column(ForeignKey("placements.id", ondelete="CASCADE"))
    last_error: Mapped[str | None]


class Membership(Base):
    """A user's place in a course: from their launches, and from the LMS roster (NRPS)."""

    __tablename__ = "memberships"
    __table_args__ = (UniqueConstraint("course_id", "user_id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    course_id: Mapped[int] = mapped_column(ForeignKey("courses.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    roles: Mapped[str] = mapped_column(default="")
    teacher: Mapped[bool] = mapped_column(default=False)
    active: Mapped[bool] = mapped_column(default=True)
    seen_at: Mapped[datetime | None]  # last launch; None for someone only on the roster
    roster_at: Mapped[datetime | None]  # last seen in the LMS roster


class LtiLogin(Base):
    """An OIDC login in flight: its one-time state, its nonce and its browser binding."""

    __tablename__ = "lti_logins"
    __table_args__ = (Index(None, "expires_at"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    state: Mapped[str] = mapped_column(String(64), unique=True)
    platform_id: Mapped[int] = mapped_column(ForeignKey("platforms.id", ondelete="CASCADE"))
    nonce: Mapped[str] = mapped_column(String(64))
    browser_hash: Mapped[str] = mapped_column(String(64))
    storage_target: Mapped[str | None] = mapped_column(String(255))
    params: Mapped[Any] = mapped_column(JSON)  # the login request, to start it again
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime]
    used_at: Mapped[datetime | None]


class UsedNonce(Base):
    """A nonce a platform's id_token carried; a second launch with it is a replay."""

    __tablename__ = "lti_nonces"
    __table_args__ = (UniqueConstraint("issuer", "nonce"), Index(None, "expires_at"))
    id: Mapped[int] = mapped_column(primary_key=True)
    issuer: Mapped[str] = mapped_column(URL)
    nonce: Mapped[str] = mapped_column(ID)
    expires_at: Mapped[datetime]


class Draft(Base):
    """A student's unsubmitted code for a placement's exercise, saved as they type."""

    __tablename__ = "drafts"
    __table_args__ = (UniqueConstraint("placement_id", "user_id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    placement_id: Mapped[int] = mapped_column(ForeignKey("placements.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    source: Mapped[str]
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class Regrade(Base):
    """A teacher's bulk regrade of a placement: its submissions, and whether it was sent.

    While `sent_at` is None, the grade syncs its gradings make are held (status `held`), so
    that the teacher sees old and new scores before the LMS does.
    """

    __tablename__ = "regrades"
    __table_args__ = (Index(None, "placement_id", "sent_at"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    placement_id: Mapped[int] = mapped_column(ForeignKey("placements.id", ondelete="CASCADE"))
    started_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    submission_ids: Mapped[Any] = mapped_column(JSON)
    sent_at: Mapped[datetime | None]


class RegradeScore(Base):
    """A student's lesson score when a regrade started, to compare with the new one."""

    __tablename__ = "regrade_scores"
    __table_args__ = (UniqueConstraint("regrade_id", "user_id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    regrade_id: Mapped[int] = mapped_column(ForeignKey("regrades.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    old_given: Mapped[float] = mapped_column(Float)
    old_maximum: Mapped[float] = mapped_column(Float)


class ScoreOverride(Base):
    """A teacher's manual change of a student's score on a placement: the whole history.

    The pair's newest row says what stands: an override (`set`, `kept`) or the automatic
    score (`removed`). Rows are only ever added, so who changed what, and when, stays.
    """

    __tablename__ = "score_overrides"
    __table_args__ = (Index(None, "placement_id", "user_id", "id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    placement_id: Mapped[int] = mapped_column(ForeignKey("placements.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    change: Mapped[str] = mapped_column(String(16))  # core.overrides.Change
    part: Mapped[str] = mapped_column(String(16))  # core.overrides.Part
    given: Mapped[float | None] = mapped_column(Float)  # None once removed
    comment: Mapped[str] = mapped_column(Text, default="")
    automatic: Mapped[float] = mapped_column(Float)  # the part's automatic points then
    set_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    set_at: Mapped[datetime] = mapped_column(default=utcnow)


class FigureImage(Base):
    """A figure a graded run drew (core.figures), as the worker re-encoded it, and its owner.

    Its owner is a submission (the figures its verdict's visible cases drew, replaced
    whenever the verdict is) or a practice run (what its run on the student's input and its
    visible cases drew), one of the two, and it goes with its owner: deleting the submission
    (with its placement or its user) or the run (purged after a day) deletes them. The bytes
    are served to the owner's author and the course's teachers only
    (service/web/figure_views.py).
    """

    __tablename__ = "figures"
    __table_args__ = (
        UniqueConstraint("submission_id", "position"),
        UniqueConstraint("practice_run_id", "position"),
        CheckConstraint(
            "(submission_id IS NULL) != (practice_run_id IS NULL)", name="ck_figures_one_owner"
        ),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    submission_id: Mapped[int | None] = mapped_column(
        ForeignKey("submissions.id", ondelete="CASCADE")
    )
    practice_run_id: Mapped[int | None] = mapped_column(
        ForeignKey("practice_runs.id", ondelete="CASCADE")
    )
    position: Mapped[int] = mapped_column(Integer)  # 1, 2, ... in the verdict's order
    case_name: Mapped[str | None] = mapped_column(String(80))  # the visible case that drew it
    width: Mapped[int] = mapped_column(Integer)
    height: Mapped[int] = mapped_column(Integer)
    alt: Mapped[str] = mapped_column(String(300), default="")  # its text alternative
    png: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
