"""The LTI Assignment and Grade Services poster: scores to the placement's line item.

Implements core.platforms.GradePoster. Scores go through pylti1p3's AGS service (its Grade,
LineItem and score URL handling, which keeps Moodle's `?type_id=N` query intact) over our
CachingConnector (shared access tokens, timeouts). Timestamps go in whole seconds, the
resolution Moodle compares them at; a 409 (a timestamp no later than the LMS's own) raises
ScoreRefused (so does Canvas's 400 for a timestamp before its own), which workers.syncing
answers with one re-post a second later; Canvas's 422s (not a student, an unpublished course
or assignment) raise ScoreUnwanted, failed at once with our words for why; a platform that
does not take the request at all (service.lti.services.away) raises PlatformAway, which
makes its grades wait for it together.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any, NoReturn, cast

from pylti1p3.assignments_grades import AssignmentsGradesService
from pylti1p3.exception import LtiServiceException
from pylti1p3.grade import Grade
from pylti1p3.lineitem import LineItem

from core.errors import GraderError
from core.platforms import (
    NoScoreScope,
    PlatformAway,
    Posted,
    ScorePost,
    ScoreRefused,
    ScoreUnwanted,
)
from core.syncs import held_post
from service.lti import line_items, reviews
from service.lti.line_items import NO_SCORE_SCOPE
from service.lti.services import (
    SCOPE_LINEITEM,
    SCOPE_SCORE,
    CachingConnector,
    away,
    describe,
    scope_refused,
)
from service.store import platform_rows
from service.store.models import Platform
from service.store.placement_rows import LineItemWanted

CANVAS_SUBMISSION = "https://canvas.instructure.com/lti/submission"
# Canvas's refusals that no retry mends, each as its answer words it (matched, never shown)
# and in our words, for the teacher: scores_controller.rb, course.rb user_is_student?,
# submission.rb GRADE_STATUS_MESSAGES_MAP, gradebook_services.rb
UNWANTED = (
    (
        "User not found in course or is not a student",
        "the LMS takes grades of its students only: this person is not a student of the course"
        " there, or the course is not published",
    ),
    (
        "This assignment is still unpublished",
        "the assignment is unpublished in the LMS: publish it there, then resend the grade",
    ),
    (
        "maximum number of allowed attempts",
        "the assignment's attempts are used up in the LMS: allow more there, then resend",
    ),
    (
        "course has concluded",
        "the course has concluded in the LMS: it takes no more grades",
    ),
)
# Canvas's 400 for a timestamp earlier than the result it holds (scores_controller.rb
# verify_valid_timestamp): the same as Moodle's 409, a post superseded
SUPERSEDED = "before last updated timestamp"


class AgsPoster:
    """Posts lesson scores to LMS gradebooks; made once per worker process."""

    def __init__(self, lti: object) -> None:
        from service.lti.tool import LtiContext

        assert isinstance(lti, LtiContext)
        self._lti = lti

    def post(self, score_post: ScorePost) -> Posted:
        """Post one score, creating the line item first when the launch gave none."""
        platform = platform_rows.find(self._lti.store, score_post.platform_id)
        if platform is None:
            raise GraderError(f"platform {score_post.platform_id} is no longer registered")
        access = self._lti.access(platform)
        connector = CachingConnector(access, self._lti.tokens, self._lti.http)

        def service(scope: str) -> AssignmentsGradesService:
            # One scope a token: Canvas grants all the scopes asked for or none
            # (canvas/oauth/provider.rb valid_scopes?), so a key whose admin unticked results
            # would otherwise take no score at all; Moodle grants what it can either way.
            return AssignmentsGradesService(
                connector,
                {
                    "scope": cast(Any, [scope]),  # pylti1p3 types them as Literals
                    "lineitems": score_post.line_items_url,
                    "lineitem": score_post.line_item_url,
                },
            )

        try:
            line_item_url = score_post.line_item_url or self._create_line_item(
                service(SCOPE_LINEITEM), connector, score_post
            )
            grade = self._grade(score_post, platform)
            service(SCOPE_SCORE).put_grade(grade, LineItem({"id": line_item_url}))
        except LtiServiceException as exc:
            status, text = exc.response.status_code, _words(exc.response.content)
            if status == HTTPStatus.CONFLICT or (
                status == HTTPStatus.BAD_REQUEST and SUPERSEDED in text
            ):
                # Moodle's answer to a timestamp no later, in whole seconds, than its own;
                # Canvas's to one earlier than its own
                raise ScoreRefused(f"the LMS refused the score: {describe(exc)}") from exc
            if status == HTTPStatus.UNPROCESSABLE_ENTITY:
                why = next((ours for theirs, ours in UNWANTED if theirs in text), None)
                raise ScoreUnwanted(
                    f"the LMS refused the score: {describe(exc)}"
                    + (f": {why}" if why else " (it will not take it as it stands)")
                ) from exc
            self._failed(exc, platform)
        except Exception as exc:  # noqa: BLE001  any failure of the LMS call is retried
            self._failed(exc, platform)
        # the LMS's own answer is never shown on a page (the teacher's gradebook shows this)
        return Posted(response="The LMS accepted the score.", line_item_url=line_item_url)

    def _failed(self, exc: Exception, platform: Platform) -> NoReturn:
        why = describe(exc)
        if scope_refused(exc):
            raise NoScoreScope(NO_SCORE_SCOPE) from exc
        if "401" in why:
            self._lti.tokens.forget(platform.id)
        if away(exc):
            raise PlatformAway(f"the LMS did not take the score: {why}") from exc
        raise GraderError(f"the LMS refused the score: {why}") from exc

    def _create_line_item(
        self, service: AssignmentsGradesService, connector: CachingConnector, post: ScorePost
    ) -> str:
        if not post.line_items_url:
            raise GraderError("the launch gave neither a line item nor a line items URL")
        wanted = LineItemWanted(
            post.placement_id,
            post.platform_id,
            post.line_items_url,
            post.resource_link_id,
            post.resource_id,
            post.label,
        )
        return line_items.find_or_make(self._lti, connector, service, wanted, post.score.maximum)

    def _grade(self, post: ScorePost, platform: Platform) -> Grade:
        grade = (
            Grade()
            .set_activity_progress(post.activity_progress)
            .set_grading_progress(post.grading_progress)
            .set_timestamp(post.timestamp.isoformat(timespec="seconds"))
            .set_user_id(post.user_sub)
        )
        if not held_post(post):  # a held score says "handed in" and keeps its points (and why)
            grade.set_score_given(post.score.given).set_score_maximum(post.score.maximum)
            if post.comment:
                grade.set_comment(post.comment)  # Moodle and Canvas show it to the student
        if "instructure.com" in platform.issuer or post.canvas:
            grade.set_extra_claims(
                {
                    CANVAS_SUBMISSION: {
                        "new_submission": post.grading_progress == "FullyGraded",
                        "submission_type": "basic_lti_launch",
                        "submitted_at": post.timestamp.isoformat(timespec="seconds"),
                        # the URL SpeedGrader launches for this submission
                        "submission_data": reviews.submission_url(
                            self._lti.review_url, post.user_sub
                        ),
                    }
                }
            )
        return grade


def _words(content: bytes) -> str:
    """Return the start of an answer as text, only to match known refusals against."""
    return content[:4000].decode("utf-8", "replace")
