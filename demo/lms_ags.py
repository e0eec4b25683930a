"""Assignment and Grade Services, platform side: line items, scores, results."""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeGuard
from urllib.parse import urlencode, urlsplit

from demo import lms_canvas
from demo.lms_errors import DemoError
from demo.lms_models import COURSES, LineItem, Score
from demo.personalities import MOODLE, Personality
from demo.tokens import Access

if TYPE_CHECKING:
    from demo.platform import DemoPlatform

LINEITEM_TYPE = "application/vnd.ims.lis.v2.lineitem+json"
CONTAINER_TYPE = "application/vnd.ims.lis.v2.lineitemcontainer+json"
SCORE_TYPE = "application/vnd.ims.lis.v1.score+json"
RESULTS_TYPE = "application/vnd.ims.lis.v2.resultcontainer+json"
CANVAS_SUBMISSION = "https://canvas.instructure.com/lti/submission"
ACTIVITY = ("Initialized", "Started", "InProgress", "Submitted", "Completed")
GRADING = ("FullyGraded", "Pending", "PendingManual", "Failed", "NotReady")


def to_json(platform: DemoPlatform, item: LineItem) -> dict[str, Any]:
    """Return a line item in the AGS line item media type."""
    out: dict[str, Any] = {
        "id": platform.lineitem_url(item),
        "label": item.label,
        "scoreMaximum": item.score_maximum,
    }
    optional = {
        "resourceId": item.resource_id,
        "tag": item.tag,
        "resourceLinkId": item.resource_link_id,
        "startDateTime": item.start_date_time,
        "endDateTime": item.end_date_time,
        "submissionReview": item.submission_review,
    }
    if platform.config.plays.canvas_ags:
        # line_items_serializer.rb: start/endDateTime are taken but not served back
        optional.pop("startDateTime")
        optional.pop("endDateTime")
    return out | {k: v for k, v in optional.items() if v is not None}


def find(
    platform: DemoPlatform, access: Access, course_id: str, lineitem_id: int, own: bool = True
) -> LineItem:
    """Return a line item of this course that belongs to the calling tool; 404 otherwise.

    Canvas (gradebook_services.rb) lets a tool score another tool's line item of a course it
    is installed in (`own` False: scores, results); show/update/destroy answer 412.
    """
    canvas = platform.config.plays.canvas_ags
    if canvas and course_id not in COURSES:
        raise lms_canvas.render_error("Context is deleted or not found", 404)
    item = platform.records.lineitem(lineitem_id)
    if canvas and item is not None and item.course_id == course_id:
        if own and item.client_id != access.client_id:
            raise lms_canvas.render_error("Tool does not have permission to view line_item")
        return item
    if item is None or item.course_id != course_id or item.client_id != access.client_id:
        raise DemoError(404, f"no line item {lineitem_id} of this tool in course {course_id!r}")
    return item


def search(
    platform: DemoPlatform, access: Access, course_id: str, query: Mapping[str, str]
) -> list[LineItem]:
    """Return the tool's line items of a course, filtered like the AGS container GET."""
    _course(course_id)
    items = [i for i in platform.records.lineitems(course_id) if i.client_id == access.client_id]
    filters = {"resource_link_id": "resource_link_id", "resource_id": "resource_id", "tag": "tag"}
    for param, attr in filters.items():
        if param in query:
            items = [i for i in items if getattr(i, attr) == query[param]]
    if query.get("limit", "").isdigit() and platform.config.plays.page_size is None:
        items = items[: int(query["limit"])]  # Canvas pages by `limit` instead
    return items


def save(
    platform: DemoPlatform,
    access: Access,
    course_id: str,
    content_type: str,
    body: object,
    existing: LineItem | None = None,
) -> LineItem:
    """Create a line item (existing=None) or update one, from an AGS line item body."""
    _course(course_id)
    if content_type != LINEITEM_TYPE:
        raise DemoError(415, f"Content-Type must be {LINEITEM_TYPE}, got {content_type!r}")
    if not isinstance(body, dict):
        raise DemoError(400, "the line item must be a JSON object")
    if platform.config.plays.canvas_ags:
        # Lti::LineItem validates score_maximum and label presence: save! -> 422 RecordInvalid
        if body.get("scoreMaximum") is None:
            raise lms_canvas.invalid("score_maximum", "can't be blank")
        if not _number(body["scoreMaximum"]):
            raise lms_canvas.invalid("score_maximum", "is not a number")
        if not body.get("label"):
            raise lms_canvas.invalid("label", "can't be blank")
        link_id = body.get("resourceLinkId")
        if link_id is not None and platform.records.link(str(link_id)) is None:
            raise lms_canvas.not_found()
    maximum = body.get("scoreMaximum")
    if not _number(maximum) or maximum <= 0:
        raise DemoError(400, "scoreMaximum must be a number above 0")
    label = body.get("label")
    if not isinstance(label, str) or not label.strip():
        raise DemoError(400, "label must be a non-empty string")
    for name in ("resourceId", "tag", "resourceLinkId"):
        if body.get(name) is not None and not isinstance(body[name], str):
            raise DemoError(400, f"{name} must be a string")
    for name in ("startDateTime", "endDateTime"):
        if body.get(name) is not None:
            _timestamp(body[name], name)
    review = submission_review(body.get("submissionReview"), "submissionReview")
    link_id = body.get("resourceLinkId")
    if link_id is not None:
        link = platform.records.link(link_id)
        if link is None or link.course_id != course_id or link.client_id != access.client_id:
            raise DemoError(400, f"resourceLinkId {link_id!r} is not a link of this tool here")
    item = LineItem(
        id=existing.id if existing else 0,
        course_id=course_id,
        client_id=access.client_id,
        label=label,
        score_maximum=float(maximum),
        resource_id=body.get("resourceId"),
        tag=body.get("tag"),
        resource_link_id=link_id,
        start_date_time=body.get("startDateTime"),
        end_date_time=body.get("endDateTime"),
        submission_review=review,
    )
    if existing is None:
        return platform.records.add_lineitem(item)
    platform.records.put_lineitem(item)
    return item


def submission_review(value: object, name: str) -> dict[str, Any] | None:
    """Return a line item's submissionReview checked (None when it has none); 400 if malformed.

    Moodle keeps `url` (or DEFAULT, the link's own URL, without one) and `custom` to send a
    gradebook's review launch; the spec requires `reviewableStatus`, a list.
    """
    if value is None:
        return None
    if not isinstance(value, dict):
        raise DemoError(400, f"{name} must be an object")
    statuses = value.get("reviewableStatus")
    if not isinstance(statuses, list) or not all(isinstance(s, str) for s in statuses):
        raise DemoError(400, f"{name}.reviewableStatus must be a list of strings")
    if "label" in value and not isinstance(value["label"], str):
        raise DemoError(400, f"{name}.label must be a string")
    if value.get("url") is not None:
        url = value["url"]
        if not isinstance(url, str) or urlsplit(url).scheme not in ("http", "https"):
            raise DemoError(400, f"{name}.url must be an http(s) URL")
    custom = value.get("custom", {})
    if not isinstance(custom, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in custom.items()
    ):
        raise DemoError(400, f"{name}.custom must map names to strings")
    return {k: value[k] for k in ("reviewableStatus", "label", "url", "custom") if k in value}


def post_score(platform: DemoPlatform, item: LineItem, content_type: str, body: object) -> Score:
    """Check a score against the AGS schema (and Canvas's extension), then keep it.

    A score whose timestamp is not a later whole second than the grade held is kept as
    refused and answered 409, as Moodle does.
    """
    if platform.config.plays.canvas_ags:
        return _canvas_score(platform, item, body if isinstance(body, dict) else {})
    if content_type != SCORE_TYPE:
        raise DemoError(415, f"Content-Type must be {SCORE_TYPE}, got {content_type!r}")
    if not isinstance(body, dict):
        raise DemoError(400, "the score must be a JSON object")
    user_id = body.get("userId")
    if not isinstance(user_id, str) or user_id not in platform.users:
        raise DemoError(400, f"userId {user_id!r} is not a member of the course")
    if body.get("activityProgress") not in ACTIVITY:
        raise DemoError(400, f"activityProgress must be one of {', '.join(ACTIVITY)}")
    if body.get("gradingProgress") not in GRADING:
        raise DemoError(400, f"gradingProgress must be one of {', '.join(GRADING)}")
    _timestamp(body.get("timestamp"), "timestamp")
    given, maximum = body.get("scoreGiven"), body.get("scoreMaximum")
    plays = platform.config.plays
    if maximum is not None and (not _number(maximum) or maximum <= 0):
        raise DemoError(400, "scoreMaximum must be a number above 0")
    if given is not None:
        if maximum is None and plays.scoreless_deletes:
            maximum = item.score_maximum  # Blackboard: the column's own maximum applies
        if maximum is None:
            raise DemoError(400, "scoreMaximum is required with scoreGiven")
        top = math.inf if plays.clip_scores else maximum  # Brightspace clips, later
        if not _number(given) or not _number(maximum) or not 0 <= given <= top:
            raise DemoError(400, f"scoreGiven must be a number from 0 to scoreMaximum ({maximum})")
    if body.get("comment") is not None and not isinstance(body["comment"], str):
        raise DemoError(400, "comment must be a string")
    if CANVAS_SUBMISSION in body:
        _canvas_submission(body[CANVAS_SUBMISSION])
    score = platform.records.add_score(item.id, user_id, body)
    if not score.applied:
        raise DemoError(409, refusal(score))
    return score


def results(
    platform: DemoPlatform, item: LineItem, user_id: str | None = None
) -> list[dict[str, Any]]:
    """Return the AGS results of a line item: each user's latest applied score, scaled.

    As Moodle's (gradebookservices::result_for_json): a result whose grade holds no points
    (blanked by a score that was not FullyGraded, cleared by a teacher, or 0) lists its user
    only, with no resultScore, resultMaximum or timestamp.
    """
    url = platform.lineitem_url(item)
    if platform.config.plays.canvas_ags and user_id is not None and not student(platform, user_id):
        return []  # results_controller.rb#index: a non-student's results are an empty list
    cleared = platform.records.cleared(item.id)
    out = []
    for score in latest_scores(platform, item, user_id).values():
        body = score.body
        result: dict[str, Any] = {
            "id": f"{url.split('?')[0]}/results/{score.user_id}",
            "userId": score.user_id,
        }
        points = scaled(item, score, platform.config.plays)
        if score.user_id in cleared and cleared[score.user_id] >= score.received_at:
            points = None
        if points:
            result |= {
                "scoreOf": url,
                "resultScore": points,
                "resultMaximum": item.score_maximum,
                "timestamp": body["timestamp"],
            }
            if body.get("comment"):
                result["comment"] = body["comment"]
        out.append(result)
    return out


def page_of(
    found: list[dict[str, Any]], url: str, query: Mapping[str, str], per_page: int | None
) -> tuple[list[dict[str, Any]], str | None]:
    """Return one page of results and its Link header, as Moodle's results.php pages them.

    `limit` and `from` choose the page (without `limit`, `per_page` if set, else all); the
    header names the next page `rel=“next”`, in Moodle's curly quotes.
    """
    limit = int(query["limit"]) if query.get("limit", "").isdigit() else per_page or 0
    start = int(query["from"]) if query.get("from", "").isdigit() else 0
    if limit <= 0:
        return found, None
    page = found[start : start + limit]
    if start + limit >= len(found):
        return page, None
    keep = [(k, v) for k, v in query.items() if k not in ("limit", "from")]
    after = urlencode([*keep, ("limit", str(limit)), ("from", str(start + limit))])
    return page, f"<{url.split('?')[0]}?{after}>; rel=\u201cnext\u201d"


def latest_scores(
    platform: DemoPlatform, item: LineItem, user_id: str | None = None
) -> dict[str, Score]:
    """Return each user's latest applied score of a line item.

    In a Blackboard a score without scoreGiven deletes the grade: its user has none.
    """
    latest: dict[str, Score] = {}
    deletes = platform.config.plays.scoreless_deletes
    for score in platform.records.scores(item.id, user_id):
        if score.applied:
            latest[score.user_id] = score  # scores come oldest first
            if deletes and score.body.get("scoreGiven") is None:
                del latest[score.user_id]
    return latest


def given(score: Score, canvas: bool = False) -> float | None:
    """Return the points a score leaves in the gradebook: none unless it is FullyGraded.

    Moodle stores scoreGiven as null for any other gradingProgress, so a Pending score
    blanks the points an earlier score had put there.
    """
    if score.body.get("gradingProgress") not in kept_under(canvas):
        return None
    value = score.body.get("scoreGiven")
    return None if value is None else float(value)


def scaled(item: LineItem, score: Score, plays: Personality = MOODLE) -> float | None:
    """Return a score's points on the line item's scale (as Moodle and Canvas show them).

    A Brightspace's are no more than the item's maximum (Personality.clip_scores). A score
    without scoreMaximum (a Blackboard's) is on the item's own scale.
    """
    points = given(score, plays.canvas_ags)
    if points is None:
        return None
    points *= item.score_maximum / float(score.body.get("scoreMaximum") or item.score_maximum)
    return min(points, item.score_maximum) if plays.clip_scores else points


def refusal(score: Score) -> str:
    """Return why a score was refused, in Moodle's words."""
    return (
        f"Refusing score with an earlier timestamp for item {score.lineitem_id}"
        f" and user {score.user_id}"
    )


def _course(course_id: str) -> None:
    if course_id not in COURSES:
        raise DemoError(404, f"no course {course_id!r}")


def _number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _timestamp(value: object, name: str) -> datetime:
    try:
        stamp = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        stamp = None
    if stamp is None or stamp.tzinfo is None:
        raise DemoError(400, f"{name} must be an ISO 8601 date-time with a UTC offset")
    return stamp


def _canvas_submission(ext: object) -> None:
    if not isinstance(ext, dict):
        raise DemoError(400, f"{CANVAS_SUBMISSION} must be an object")
    for name in ("new_submission", "prioritize_non_tool_grade"):
        if name in ext and not isinstance(ext[name], bool):
            raise DemoError(400, f"{CANVAS_SUBMISSION}.{name} must be true or false")
    for name in ("submission_type", "submission_data"):
        if name in ext and not isinstance(ext[name], str):
            raise DemoError(400, f"{CANVAS_SUBMISSION}.{name} must be a string")
    if "submitted_at" in ext:
        _timestamp(ext["submitted_at"], f"{CANVAS_SUBMISSION}.submitted_at")


def kept_under(canvas: bool) -> tuple[str, ...]:
    """Return the gradingProgress values under which a score's points stand: Moodle's
    FullyGraded only; Canvas's FullyGraded and PendingManual (Lti::Result::
    ACCEPT_GIVEN_SCORE_TYPES, scores_controller.rb reset_score?)."""
    return ("FullyGraded", "PendingManual") if canvas else ("FullyGraded",)


def student(platform: DemoPlatform, user_id: str) -> bool:
    """Return whether Canvas counts `user_id` a student of the course (course.rb
    user_is_student?: an active student enrolment, in a course that is available)."""
    user = platform.users.get(user_id)
    return user is not None and not user.is_instructor and platform.course_published


def attempts(platform: DemoPlatform, item: LineItem, user_id: str) -> int:
    """Return how many submission attempts Canvas would have made of a user's scores: every
    accepted score whose extension leaves new_submission unset or true and whose
    submission_type is not "none" (scores_controller.rb new_submission?)."""
    made = 0
    for score in platform.records.scores(item.id, user_id):
        ext = score.body.get(CANVAS_SUBMISSION) or {}
        flag = ext.get("new_submission")
        if score.applied and (flag is None or flag) and ext.get("submission_type") != "none":
            made += 1
    return made


CANVAS_SUBMISSION_TYPES = (
    "none",
    "basic_lti_launch",
    "online_text_entry",
    "online_url",
    "external_tool",
    "online_upload",
)


def _canvas_score(platform: DemoPlatform, item: LineItem, body: dict[str, Any]) -> Score:
    """Take a score as scores_controller.rb does, in its before_action order."""
    user_id = body.get("userId")
    # verify_user_in_context runs before verify_required_params: no userId is this 422 too
    if not isinstance(user_id, str) or not student(platform, user_id):
        raise lms_canvas.render_error(lms_canvas.NOT_A_STUDENT, 422)
    for name in ("activityProgress", "gradingProgress", "timestamp"):  # REQUIRED_PARAMS
        if body.get(name) in (None, ""):
            raise lms_canvas.missing(name)
    raw = str(body["timestamp"])
    stamp = _parse(raw)
    if stamp is None:
        raise lms_canvas.render_error(f"Provided timestamp of {raw} not a valid timestamp", 400)
    held = latest_scores(platform, item, user_id).get(user_id)
    if held is not None:
        before = _parse(str(held.body["timestamp"]))
        if before is not None and before > stamp:  # an equal timestamp is accepted
            raise lms_canvas.render_error(
                f"Provided timestamp of {raw} before last updated timestamp of "
                f"{before.isoformat(timespec='milliseconds')}",
                400,
            )
    given_, maximum = body.get("scoreGiven"), body.get("scoreMaximum")
    reset = body.get("gradingProgress") not in ("FullyGraded", "PendingManual") or given_ is None
    if not reset:
        if maximum is None:
            raise lms_canvas.render_error("ScoreMaximum not supplied when ScoreGiven present.", 422)
        if not _number(maximum) or maximum < 0:
            raise lms_canvas.render_error("ScoreMaximum must be greater than or equal to 0", 422)
        if maximum == 0 and item.score_maximum != 0:
            raise lms_canvas.render_error("cannot be zero if line item's maximum is not zero", 422)
        if not _number(given_) or given_ < 0:  # above the maximum is extra credit: taken
            raise lms_canvas.render_error("ScoreGiven must be greater than or equal to 0", 422)
    ext = body.get(CANVAS_SUBMISSION) or {}
    if not isinstance(ext, dict):
        ext = {}
    submitted = ext.get("submitted_at")
    if submitted is not None:
        at = _parse(str(submitted))
        if at is None:
            raise lms_canvas.render_error(
                f"Provided submitted_at timestamp of {submitted} not a valid timestamp", 400
            )
        if (at - datetime.now(UTC)).total_seconds() > 60:
            raise lms_canvas.render_error(
                f"Provided submitted_at timestamp of {submitted} in the future", 400
            )
    kind = ext.get("submission_type", "external_tool")
    if kind not in CANVAS_SUBMISSION_TYPES:
        raise lms_canvas.render_error(f"Invalid submission_type {kind}", 400)
    if item.id in platform.unpublished:
        # submission.rb can_autograde?: :unpublished -> save! raises RecordInvalid; the whole
        # score is one transaction, so nothing is kept
        raise lms_canvas.invalid("grade", lms_canvas.UNPUBLISHED)
    return platform.records.add_score(item.id, user_id, body, whole=False)


def _parse(value: str) -> datetime | None:
    try:
        stamp = datetime.fromisoformat(value)
    except ValueError:
        return None
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=UTC)
