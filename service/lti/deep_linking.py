"""Deep linking: the teacher picks lessons; each becomes an ltiResourceLink with a line item."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import jwt
from pylti1p3.deep_link import DeepLink, TDeepLinkData
from pylti1p3.deep_link_resource import DeepLinkResource
from pylti1p3.lineitem import LineItem

from core.lessons import Lesson
from service.lti import reviews
from service.lti.services import PlatformAccess, registration


class _SignedDeepLink(DeepLink):
    """pylti1p3's DeepLink, signing with our key id (its own guess of the kid differs)."""

    def __init__(self, access: PlatformAccess, deployment_id: str, settings: Mapping[str, Any]):
        super().__init__(registration(access), deployment_id, cast(TDeepLinkData, dict(settings)))
        self._access = access

    def encode_jwt(self, message: Mapping[str, Any]) -> str:
        return jwt.encode(
            dict(message),
            self._access.key.private_pem,
            algorithm="RS256",
            headers={"kid": self._access.key.kid},
        )


def resource(lesson: Lesson, launch_url: str, review_url: str) -> DeepLinkResource:
    """Return the content item for one lesson: its launch URL, custom lesson id, line item.

    The line item declares the submission review (the way back from the gradebook).
    """
    line_item = (
        LineItem()
        .set_label(lesson.title)
        .set_score_maximum(lesson.points)
        .set_resource_id(lesson.id)
        .set_tag("codeblanks")
        .set_submission_review(reviews.REVIEWABLE, reviews.LABEL, review_url)
    )
    return (
        DeepLinkResource()
        .set_url(launch_url)
        .set_title(lesson.title)
        .set_custom_params({"lesson": lesson.id})
        .set_lineitem(line_item)
    )


def response_jwt(
    access: PlatformAccess,
    deployment_id: str,
    settings: Mapping[str, Any],
    lessons: Sequence[Lesson],
    launch_url: str,
    review_url: str,
) -> str:
    """Return the signed LtiDeepLinkingResponse carrying one link per lesson."""
    link = _SignedDeepLink(access, deployment_id, settings)
    items = [resource(lesson, launch_url, review_url) for lesson in lessons]
    message = link.get_message_jwt(items)
    return str(link.encode_jwt(message))
