"""What a grade sync does, decided from what the store holds of the pair: no I/O, no clock.

One read of the store builds a `Found`; `decide` turns it into a step (wait, hold, skip,
pause, or post this score with this stamp; a placement holding its scores posts "handed
in" without the points, and its syncs are then held with the regrades' until released);
one write applies it and, for a post, takes the pair's turn (`Take`); `taken` says what
the post does with it. After the post, `conclude` turns the LMS's answer into an
`Outcome` that one more write records.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime, timedelta

from core.lesson_scores import LessonScore
from core.platforms import Outage, PlatformAway, Posted, Probe, ScorePost, ScoreUnwanted, probing

NO_LINE_ITEM = "the LMS gave no line item (nor a line items URL) for this placement"
NO_POSTER = "no grade poster is configured"
EARLY = timedelta(seconds=0.5)  # a retry this much before its due time posts now
SECOND = timedelta(seconds=1)
COALESCE = timedelta(seconds=1.5)  # wait at most this long for a later whole second
FULLY_GRADED = "FullyGraded"
PENDING_MANUAL = "PendingManual"
TURN = timedelta(seconds=60)  # a post's turn: past the outbound deadline, re-post included
_TURN_POLL_S = 2.0
_BUSY_S = 0.5  # another sync took the turn between the read and the write


def reaches_lms(line_item_url: str | None, line_items_url: str | None) -> bool:
    """Return whether a placement's grades go to an LMS: it has a line item, or can make one.

    The one place this is decided: a claim carries it to finish(), and a sync asks it again
    of the placement as it is when it posts.
    """
    return bool(line_item_url or line_items_url)


def missing_lesson(lesson_id: str) -> str:
    """Return why a grade cannot be computed: its lesson is not in the catalog."""
    return f"the lesson {lesson_id!r} is not in the catalog"


def next_stamp(last: datetime | None, now: datetime) -> datetime:
    """Return the timestamp of the next post: now in whole seconds, and after `last`."""
    stamp = now.replace(microsecond=0)
    if last is not None and stamp <= last:
        stamp = last.replace(microsecond=0) + SECOND
    return stamp


@dataclass(frozen=True)
class Due:
    """What a due sync decides on beyond its pending rows, as the same read found it."""

    awaits_review: bool  # a score of the pair is held (a regrade under review, or a hold)
    lesson_id: str
    score: LessonScore | None  # the score now; None: the lesson is not in the catalog
    label: str  # the placement's title, or its lesson's
    user_sub: str
    line_item_url: str | None
    line_items_url: str
    resource_link_id: str
    outage: Outage | None  # the platform's, while it is away
    lms_at: datetime | None  # the timestamp of the last post the LMS accepted
    posting_until: datetime | None  # another sync's turn to post ends then
    in_flight: bool  # a submission of the pair is queued or running
    held: bool = False  # the placement holds its scores until they are released
    comment: str = ""  # why the score is what it is, in the student's language
    override_comment: str | None = None  # the teacher's, while an override stands


@dataclass(frozen=True)
class Found:
    """Everything a sync decides on, as one read of the store found it for one pair."""

    user_id: int
    placement_id: int
    sync_ids: tuple[int, ...]  # the pending syncs: a decision settles these, no others
    attempts: int  # the most made on any of them
    due_at: datetime | None  # the earliest of their next attempts
    platform_id: int
    due: Due | None  # None: a retry come early (see `early`), for which nothing more is read


def early(attempts: int, due_at: datetime | None, now: datetime) -> bool:
    """Return whether a retry came before its due time: it waits, deciding on nothing else.

    A retry's backoff longer than a wait in the broker may be (workers.tasks.wait_s) goes
    in hops. A change not yet tried is due at once, even if the clock that stamped it runs
    ahead of ours.
    """
    return bool(attempts) and due_at is not None and due_at > now + EARLY


@dataclass(frozen=True)
class Wait:
    """Come back in `retry_in_s`; `score`, when there is one, is kept for the gradebook."""

    retry_in_s: float
    score: LessonScore | None = None


@dataclass(frozen=True)
class Hold:
    """Hold the pending syncs with the pair's held score, until it is released (release_held)."""


@dataclass(frozen=True)
class Skip:
    """Settle the pending syncs as skipped, for `reason`, keeping `score` if there is one."""

    reason: str
    score: LessonScore | None = None


@dataclass(frozen=True)
class Pause:
    """Keep `score`; post nothing while another pair probes the platform."""

    score: LessonScore


@dataclass(frozen=True)
class Post:
    """Keep the score, take the pair's turn until `until` (and the probe), then post this."""

    score_post: ScorePost
    until: datetime
    probe: bool  # the platform is away: this post is its probe


Decision = Wait | Hold | Skip | Pause | Post


class Take(enum.StrEnum):
    """What the write found when it took a post's turn."""

    TAKEN = "taken"
    BUSY = "busy"  # another sync of the pair took the turn first
    PROBED = "probed"  # the platform is away and another pair took its probe


def decide(found: Found, can_post: bool, now: datetime) -> Decision:
    """Decide what a sync of the pair does now: wait, hold, skip, pause, or post."""
    if found.due_at is not None and early(found.attempts, found.due_at, now):
        return Wait((found.due_at - now).total_seconds())
    due = found.due
    if due is None:  # read as early, at another time than now: look again
        return Wait(0.0)
    if due.awaits_review:
        # the score now would include held work (a regrade the teacher has not sent yet, or
        # a placement's held score): this change goes out with it, at release_held; the LMS
        # keeps what it shows (a regrade: the old score; a hold: handed in, not graded)
        return Hold()
    score = due.score
    if score is None:
        return Skip(missing_lesson(due.lesson_id))
    to_lms = reaches_lms(due.line_item_url, due.line_items_url)
    if not can_post or not to_lms:
        return Skip(NO_LINE_ITEM if not to_lms else NO_POSTER, score)
    step, wait = probing(due.outage, found.user_id, found.placement_id, now)
    if step is Probe.PAUSE:
        # one post every few seconds tells when the LMS is back, not one per grade
        return Pause(score)
    if step is Probe.WAIT:
        return Wait(wait, score)
    if due.posting_until is not None and due.posting_until > now:
        # another sync of the pair is posting: look again when it should have ended
        wait = (due.posting_until - now).total_seconds()
        return Wait(min(max(wait, 0.2), _TURN_POLL_S), score)
    stamp = next_stamp(due.lms_at, now)
    if timedelta(0) < stamp - now <= COALESCE:
        # the LMS holds a score of this second: post in the next one, with what is new then
        return Wait((stamp - now).total_seconds() + 0.05, score)
    post = ScorePost(
        found.platform_id,
        due.line_item_url or "",
        due.user_sub,
        score,
        stamp,
        activity_progress="Submitted" if due.in_flight else "Completed",
        # FullyGraded, but while the placement holds its scores: then PendingManual with no
        # points, the LMS's own "handed in, a teacher grades it" (Moodle shows the grade
        # blank, Canvas lists the submission as needing grading, FINDINGS.md), rather than
        # nothing at all, which would say the student never handed in; the post is accepted
        # as held (`held_post`), and the release posts the score FullyGraded
        grading_progress=PENDING_MANUAL if due.held else FULLY_GRADED,
        line_items_url=due.line_items_url,
        resource_link_id=due.resource_link_id,
        resource_id=due.lesson_id,
        label=due.label,
        # the teacher's comment goes with their score, else the automatic one: a later
        # automatic grade never replaces an override, nor its words
        comment=due.override_comment if due.override_comment is not None else due.comment,
        placement_id=found.placement_id,
    )
    return Post(post, now + TURN, probe=due.outage is not None)


def held_post(post: ScorePost) -> bool:
    """Return whether a post says only "handed in": a held score, its points not sent."""
    return post.grading_progress != FULLY_GRADED


def taken(decision: Decision, take: Take) -> Decision:
    """Return what the sync does once the write tried to take the post's turn."""
    if not isinstance(decision, Post) or take is Take.TAKEN:
        return decision
    score = decision.score_post.score
    return Wait(_BUSY_S, score) if take is Take.BUSY else Pause(score)


@dataclass(frozen=True)
class Accepted:
    """The LMS took `score_post`; `line_item`, when not None, is one it made for it."""

    score_post: ScorePost
    response: str
    line_item: str | None
    at: datetime


@dataclass(frozen=True)
class Failed:
    """The LMS refused or broke: an attempt; retried in `retry_in_s`, or None: out of them."""

    error: str
    attempt: int
    retry_in_s: float | None
    at: datetime


@dataclass(frozen=True)
class Away:
    """The LMS did not take the post: the platform is away, and no attempt is counted."""

    error: str
    at: datetime


Outcome = Accepted | Failed | Away


def conclude(
    found: Found,
    sent: ScorePost,
    answer: Posted | Exception,
    max_attempts: int,
    delay_s: float,
    started: datetime,
    now: datetime,
) -> Outcome:
    """Decide what the LMS's answer to `sent` makes of the pair's syncs.

    `delay_s` is the backoff before the next attempt, should this one fail and not be the
    last; a failure counts from `started` (the sync's start), the rest from `now`.
    """
    if isinstance(answer, Posted):
        made = answer.line_item_url
        new = made if made and made != sent.line_item_url else None
        return Accepted(sent, answer.response, new, now)
    error = f"{type(answer).__name__}: {answer}"
    if isinstance(answer, PlatformAway):
        return Away(error, now)
    attempt = found.attempts + 1
    # no attempt can help (Canvas's 422s, no score scope): failed until the teacher or admin acts
    if isinstance(answer, ScoreUnwanted):
        return Failed(error, attempt, None, started)
    return Failed(error, attempt, None if attempt >= max_attempts else delay_s, started)
