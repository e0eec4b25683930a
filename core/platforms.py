"""What the grader asks of a platform (a registered LMS): to take a lesson's score.

The LTI Assignment and Grade Services poster implements GradePoster; tests use a fake.
While a platform is away (down, unreachable, overloaded), its grades wait for it together:
one pair's post probes it now and then, and the first answer releases them all
(`probing`, `probe_wait`; the store keeps the outage, core.syncs decides on it).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from core.errors import GraderError
from core.lesson_scores import LessonScore


@dataclass(frozen=True)
class ScorePost:
    """One score for one user on one placement's line item."""

    platform_id: int
    line_item_url: str  # empty when the launch gave none: the poster makes one
    user_sub: str
    score: LessonScore
    timestamp: datetime
    activity_progress: str = "Completed"  # Submitted while a run is queued or running
    # FullyGraded: Moodle blanks the points of any other progress (FINDINGS.md); only a
    # held score goes PendingManual, without its points (core.syncs.decide)
    grading_progress: str = "FullyGraded"
    line_items_url: str = ""  # where to make the line item when there is none
    resource_link_id: str = ""
    resource_id: str = ""  # the lesson id
    label: str = ""  # the lesson title
    comment: str = ""
    canvas: bool = False  # add Canvas's submission extension
    placement_id: int = 0  # whose line item a made one becomes (the first made wins)


@dataclass(frozen=True)
class Posted:
    """The platform's answer to a score, and the line item it went to."""

    response: str
    line_item_url: str


class ScoreRefused(GraderError):
    """The LMS refused the score as no newer than the one it holds (HTTP 409 in Moodle)."""


class ScoreUnwanted(GraderError):
    """The LMS will not take this score as things stand there, however often it is sent:
    Canvas's 422 for a user who is not a student (or a course that is unpublished), for an
    unpublished assignment or for attempts used up. No retry: the sync fails at once, and
    the teacher, told why, changes the LMS and resends."""


class NoScoreScope(ScoreUnwanted):
    """The LMS grants this tool no score scope: no retry helps until its admin changes the
    tool's registration there (a Sakai without both grade boxes ticked)."""


class PlatformAway(GraderError):
    """The LMS did not take the request at all: the platform is away, not this score wrong."""


# the answers of a platform that is away rather than refusing: its web server without its
# application (Moodle with php-fpm stopped: 502), maintenance (503), a gateway's timeout
# (504), and throttling (429), which is about the tool's calls, not this score
AWAY_STATUSES = frozenset({429, 502, 503, 504})

# Probes of a platform that is away go 2 s, then every 4 s apart: a grade waits at most 4 s
# past the LMS's return, plus the posts of every grade released with it (200 took 3.9 s on
# 2 cores, CPU-bound: the 6 s of before left 200 grades at 8.4-10 s); a long outage costs
# the LMS fifteen requests a minute, however many grades wait.
_PROBE_FIRST_S = 2.0
_PROBE_EVERY_S = 4.0


def probe_wait(probes: int) -> float:
    """Return the wait after the `probes`-th failed request to a platform that is away."""
    # the exponent stays small: a day's outage counts ten thousand probes, and 2.0 ** 1024
    # overflows
    return min(_PROBE_EVERY_S, _PROBE_FIRST_S * 2.0 ** min(max(probes - 1, 0), 8))


@dataclass(frozen=True)
class Outage:
    """A platform that is away: since when, how many requests failed, and who probes next."""

    since: datetime
    probes: int
    probe_at: datetime  # the next probe goes then (while one is posting: when its turn ends)
    user_id: int  # the pair whose sync probes next
    placement_id: int


class Probe(enum.StrEnum):
    """What a grade sync does about its platform's outage."""

    POST = "post"  # no outage, or a probe is due: post (as the probe, if it takes the turn)
    WAIT = "wait"  # this pair probes next: wait until then
    PAUSE = "pause"  # another pair probes: wait, without a post, to be released


def probing(
    outage: Outage | None, user_id: int, placement_id: int, now: datetime
) -> tuple[Probe, float]:
    """Decide whether a pair's sync posts during its platform's outage; with the wait in s."""
    if outage is None or outage.probe_at <= now:
        return Probe.POST, 0.0
    if (outage.user_id, outage.placement_id) == (user_id, placement_id):
        return Probe.WAIT, (outage.probe_at - now).total_seconds()
    return Probe.PAUSE, 0.0


class GradePoster(Protocol):
    """Posts scores to a platform's gradebook. Posting the same score twice is harmless."""

    def post(self, score_post: ScorePost) -> Posted:
        """Post the score; return the platform's answer; raise GraderError when it fails."""
        ...
