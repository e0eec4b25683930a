"""A placement's line item, made by the tool when the LMS made none (AGS line items).

Brightspace's links make no grade item ("In LTI1.3 the container is not created",
hypothesis/lms PR #4726), nor does a Blackboard link deep linked without a lineItem
(anthologydevdocs dl/02-content-types.md): their launches carry the line items URL but no
line item. The tool makes one per placement, bound to the resource link (resourceLinkId)
and tagged, so that it finds it again rather than making another: asked for at the first
launch (a task, so that the launch never waits on the LMS), or at the first grade post if
that comes first. Two makers at once (two students launching together) may each make one:
the store keeps the first (outbox.adopt_line_item) and the other deletes its own.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, cast

from celery import Celery
from pylti1p3.assignments_grades import AssignmentsGradesService
from pylti1p3.lineitem import LineItem

from core.errors import GraderError
from core.platforms import NoScoreScope
from service.lti import reviews
from service.lti.services import SCOPE_LINEITEM, CachingConnector, describe, scope_refused
from service.queue import LineItemMessage, send_line_item
from service.store import outbox, placement_rows, platform_rows
from service.store.database import Store
from service.store.placement_rows import LineItemWanted

if TYPE_CHECKING:
    from service.lti.tool import LtiContext

TAG = "codeblanks"  # the tag of every line item the tool makes
# what a teacher reads when the LMS will take no score (the tool's words, never the LMS's)
NO_SCORE_SCOPE = (
    "this LMS grants the tool no score scope, so it cannot take grades; its admin must "
    "allow the tool to send grades (in Sakai: tick both 'Allow External Tool to return "
    "grades' and 'Allow External Tool to create grade columns'), then resend"
)

log = logging.getLogger(__name__)


def ask_to_make(store: Store, celery_app: Celery, placement_id: int) -> bool:
    """Have the placement's line item made in the background if it needs one; return whether
    asked. The launch of a link without one asks; the task finds it made if it was."""
    if placement_rows.line_item_wanted(store, placement_id) is None:
        return False
    return send_line_item(celery_app, LineItemMessage(placement_id))


def make(lti: LtiContext, placement_id: int) -> str | None:
    """Find or make the placement's line item in its LMS; return its URL (None: not wanted).

    Raise NoScoreScope when the LMS grants no line item scope, GraderError when it fails.
    """
    wanted = placement_rows.line_item_wanted(lti.store, placement_id)
    if wanted is None:
        return None
    lesson = lti.catalog.lesson(wanted.lesson_id)
    if lesson is None:
        raise GraderError(f"the lesson {wanted.lesson_id!r} is not in the catalog")
    platform = platform_rows.find(lti.store, wanted.platform_id)
    if platform is None:
        raise GraderError(f"platform {wanted.platform_id} is no longer registered")
    connector = CachingConnector(lti.access(platform), lti.tokens, lti.http)
    service = AssignmentsGradesService(
        connector, {"scope": cast(Any, [SCOPE_LINEITEM]), "lineitems": wanted.line_items_url}
    )
    try:
        return find_or_make(lti, connector, service, wanted, lesson.points)
    except GraderError:
        raise
    except Exception as exc:  # noqa: BLE001  any failure of the LMS call: the task retries
        if scope_refused(exc):
            raise NoScoreScope(NO_SCORE_SCOPE) from exc
        raise GraderError(f"the LMS did not make the line item: {describe(exc)}") from exc


def find_or_make(
    lti: LtiContext,
    connector: CachingConnector,
    service: AssignmentsGradesService,
    wanted: LineItemWanted,
    maximum: float,
) -> str:
    """Return the placement's line item: the one bound to its link, or a new one."""
    item = service.find_or_create_lineitem(
        LineItem()
        .set_label(wanted.title)
        .set_score_maximum(maximum)
        .set_resource_id(wanted.lesson_id)
        .set_resource_link_id(wanted.resource_link_id)
        .set_tag(TAG)
        .set_submission_review(reviews.REVIEWABLE, reviews.LABEL, lti.review_url),
        find_by="resource_link_id",
    )
    url = item.get_id()
    if not url:
        raise GraderError("the LMS made a line item without an id")
    if not wanted.placement_id:
        return str(url)
    with lti.store.session() as session:
        kept = outbox.adopt_line_item(session, wanted.placement_id, str(url))
    if kept != url and item.get_tag() == TAG:
        try:
            connector.delete(str(url), (SCOPE_LINEITEM,))
        except Exception as exc:  # noqa: BLE001  the grades still go to the kept one
            log.warning("could not delete a duplicate line item %s: %s", url, describe(exc))
    return kept
