"""A student's exception to a placement's policy, as its teacher sets it: the form's fields,
their checks, and saving it (from the student's page or the gradebook).

Times are UTC as on the placement's settings form (placement_settings.moment reads both).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from flask_babel import gettext as _

from core.placements import Policy, StudentException
from service.queue import SyncMessage
from service.store import policy_exceptions
from service.store.database import Store
from service.store.models import Placement
from service.store.policy_exceptions import Set
from service.web.rendering import when
from service.web.teacher.placement_settings import count, form_time, moment


def form_of(found: Set | None) -> dict[str, str]:
    """Return a student's exception as the form's field values (blank for none)."""
    exception = found.exception if found else StudentException()
    return {
        "due_at": form_time(exception.due_at),
        "max_attempts": "" if exception.max_attempts is None else str(exception.max_attempts),
        "waive_penalty": "1" if exception.waive_penalty else "",
    }


def parse(
    form: Mapping[str, str], policy: Policy
) -> tuple[StudentException | None, dict[str, str]]:
    """Check the form against the placement's `policy`; return the exception, or the errors.

    An exception only allows more than the placement does, so each part must: a later
    due date, more attempts, a penalty to waive.
    """
    errors: dict[str, str] = {}
    due_at = moment(form, "due_at", errors)
    if due_at is not None:
        if policy.due_at is None:
            errors["due_at"] = _("This lesson has no due date to extend.")
        elif due_at <= policy.due_at:
            errors["due_at"] = _(
                "Give a date after the lesson's due date, %(due)s.", due=when(policy.due_at)
            )
    most = count(form, "max_attempts", errors, required=False)
    if most is not None:
        if policy.max_attempts is None:
            errors["max_attempts"] = _("This lesson has no limit on attempts to raise.")
        elif most <= policy.max_attempts:
            errors["max_attempts"] = _(
                "Give more than the lesson's %(most)d attempts.", most=policy.max_attempts
            )
    waive = form.get("waive_penalty", "") == "1"
    if waive and policy.late_penalty is None:
        errors["waive_penalty"] = _(
            "This lesson takes no late work, so there is no penalty to waive: give a later "
            "due date instead."
        )
    if errors:
        return None, errors
    exception = StudentException(due_at, most, waive)
    if exception.empty:
        return None, {
            "exception": _(
                "Give a later due date, more attempts, or waive the late penalty; to take the "
                "exception away, remove it."
            )
        }
    return exception, {}


def save(
    store: Store,
    placement: Placement,
    user_id: int,
    exception: StudentException | None,
    by: int,
    now: datetime,
) -> tuple[SyncMessage, ...]:
    """Set (or with None remove) the student's exception; return the sync to send once committed."""
    with store.session() as session:
        synced = policy_exceptions.save(session, placement, user_id, exception, by, now)
    return (SyncMessage(user_id, placement.id),) if synced else ()
