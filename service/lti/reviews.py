"""The way back from the LMS gradebook: which student's work a launch asks to see. Pure.

Two LMS ways lead to it. Moodle's gradebook sends an LtiSubmissionReviewRequest (LTI
Submission Review 1.0) with the student in `for_user`, to the `submissionReview.url` our line
items declare. Canvas launches the URL a score's submission extension gave
(`submission_data`, shown in SpeedGrader and the submission details) as a plain resource
link launch: that URL names the student in its query.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlencode, urlsplit

from service.lti.claims import SUBMISSION_REVIEW
from service.lti.validation import ValidLaunch

PATH = "/lti/review"
# The AGS activityProgress values a line item offers the review link for: what the tool
# posts (Submitted while a run is queued, Completed after).
REVIEWABLE = ["Submitted", "Completed"]
# Stored once by the LMS with the line item, for every reader: not one person's language.
LABEL = "Attempts in CodeBlanks"


def submission_url(review_url: str, sub: str) -> str:
    """Return the URL of one student's work, for Canvas's submission extension."""
    return f"{review_url}?{urlencode({'for_user': sub})}"


def wanted(valid: ValidLaunch) -> str | None:
    """Return the sub of the student whose work the launch asks for, or None if it asks none."""
    if valid.message_type == SUBMISSION_REVIEW:
        return str(valid.claim("for_user")["user_id"])  # checked by claims.check_message
    target = urlsplit(str(valid.claim("target_link_uri", "")))
    if not target.path.endswith(PATH):
        return None
    subs = parse_qs(target.query).get("for_user") or [""]
    return subs[0] or None
