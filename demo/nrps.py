"""Names and Role Provisioning Services: the course roster, launched or not."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from lti1p3platform.membership import Context, ContextMembership, Status
from lti1p3platform.utils import dataclass_to_dict

from demo.lms_errors import DemoError
from demo.lms_models import COURSES
from demo.tokens import Access

if TYPE_CHECKING:
    from demo.platform import DemoPlatform

MEMBERSHIPS_TYPE = "application/vnd.ims.lti-nrps.v2.membershipcontainer+json"


def memberships(
    platform: DemoPlatform, access: Access, course_id: str, query: Mapping[str, str]
) -> dict[str, Any]:
    """Return the membership container of a course, optionally filtered by role."""
    course = COURSES.get(course_id)
    if course is None:
        raise DemoError(404, f"no course {course_id!r}")
    rlid = query.get("rlid")
    if rlid is not None:
        link = platform.records.link(rlid)
        if link is None or link.course_id != course_id or link.client_id != access.client_id:
            raise DemoError(403, f"resource link {rlid!r} is not this tool's link in the course")
    container: dict[str, Any] = dataclass_to_dict(
        ContextMembership(
            id=platform.memberships_url(course.id),
            context=Context(id=course.id, label=course.label, title=course.title),
        )
    )
    role = query.get("role")
    container["members"] = [
        {
            "status": Status.ACTIVE.value,
            "user_id": user.sub,
            "roles": [user.role],
            "name": user.name,
            "given_name": user.given_name,
            "family_name": user.family_name,
            "email": user.email,
        }
        for user in platform.users.values()
        # The spec lets a filter name a role by full URI or by its short name.
        if role is None or role in (user.role, user.role.rsplit("#", 1)[-1])
    ]
    if platform.config.plays.nrps_page_size is not None:
        # names_and_roles_serializer.rb#member: lti11_legacy_user_id always, nil keys dropped
        container["members"] = [
            {**m, "lti11_legacy_user_id": hashlib.sha1(m["user_id"].encode()).hexdigest()}
            for m in container["members"]
        ]
    return container
