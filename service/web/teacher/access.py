"""Who may see a teacher's page: the course's staff, as their launches showed them."""

from __future__ import annotations

from core.messages import say
from service.store import placement_rows
from service.store.models import Placement
from service.web.auth import SignedIn
from service.web.extensions import store
from service.web.student.actions import Refused, signed_in


def course_teacher(course_id: int) -> SignedIn:
    """Return the signed-in teacher of the course; Refused for anybody else."""
    user = signed_in(say("Open this page from your course to sign in."))
    if not user.teaches(course_id):
        raise Refused(403, "not_a_teacher", say("Only the course's teachers can see this page."))
    return user


def placement_teacher(placement_id: int) -> tuple[SignedIn, Placement]:
    """Return the signed-in teacher and the placement of their course; Refused otherwise."""
    user = signed_in(say("Open this page from your course to sign in."))
    placement = placement_rows.find(store(), placement_id)
    # the same answer for a placement that does not exist and one of another course
    if placement is None or not user.teaches(placement.course_id):
        raise Refused(403, "not_a_teacher", say("Only the course's teachers can see this page."))
    return user, placement
