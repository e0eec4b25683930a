"""What a valid launch records: its claims, read into the store's terms, then stored."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.lessons import Catalog
from service import wording
from service.lti import reviews
from service.lti.claims import DEEP_LINKING, is_teacher
from service.lti.validation import ValidLaunch
from service.store import launches
from service.store.database import Store
from service.store.launches import LaunchFacts, LinkFacts, Opened

AGS = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
NRPS = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"

__all__ = ["AGS", "NRPS", "Opened", "facts_of", "record"]


def record(store: Store, catalog: Catalog, launch: ValidLaunch) -> Opened:
    """Upsert the launch's user, course and membership; find or make its placement."""
    return launches.record(store, facts_of(catalog, launch))


def facts_of(catalog: Catalog, launch: ValidLaunch) -> LaunchFacts:
    """Return what the store keeps of a valid launch."""
    body = launch.body
    context = launch.claim("context") or {}
    link = launch.claim("resource_link") or {}
    ags = body.get(AGS) or {}
    nrps = body.get(NRPS) or {}
    tool_platform = launch.claim("tool_platform")
    site_name = product = None
    if isinstance(tool_platform, dict):
        code = tool_platform.get("product_family_code")
        product = code if isinstance(code, str) else None
        if isinstance(tool_platform.get("name"), str):
            site_name = tool_platform["name"].strip()[:255]
    roles = " ".join(str(r) for r in launch.claim("roles", []))
    return LaunchFacts(
        platform_id=launch.platform_id,
        site_name=site_name,
        product_code=product,
        sub=body["sub"],
        name=_name(body),
        email=str(body.get("email", ""))[:320],
        locale=wording.tag_of(_object(launch.claim("launch_presentation")).get("locale")),
        context_id=context.get("id") or f"link:{link.get('id', 'none')}",
        course_title=str(context.get("title") or context.get("label") or "")[:255],
        line_items_url=ags["lineitems"] if isinstance(ags.get("lineitems"), str) else None,
        memberships_url=(
            nrps["context_memberships_url"]
            if isinstance(nrps.get("context_memberships_url"), str)
            else None
        ),
        roles=roles[:2000],
        teacher=is_teacher(body),
        resource_link_id=link.get("id"),
        link=None if launch.message_type == DEEP_LINKING else _link(catalog, launch, link, ags),
        ags_scopes=_scopes(ags),
    )


def _link(
    catalog: Catalog, launch: ValidLaunch, link: dict[str, Any], ags: dict[str, Any]
) -> LinkFacts:
    lesson_id = (launch.claim("custom") or {}).get("lesson")
    known = isinstance(lesson_id, str) and catalog.lesson(lesson_id) is not None
    # a review opens work on a placement there is; it never places a lesson
    known = known and reviews.wanted(launch) is None
    return LinkFacts(
        resource_link_id=link["id"],
        title=str(link.get("title") or "")[:255],
        lesson_id=lesson_id if known else None,
        line_item_url=ags.get("lineitem") if isinstance(ags.get("lineitem"), str) else None,
    )


def _scopes(ags: object) -> tuple[str, ...] | None:
    """Return the AGS claim's scope list (None: no AGS claim at all)."""
    if not isinstance(ags, dict) or not ags:
        return None
    listed = ags.get("scope")
    return tuple(str(s) for s in listed)[:20] if isinstance(listed, list) else ()


def _object(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


def _name(body: Mapping[str, Any]) -> str:
    name = (
        body.get("name")
        or " ".join(str(body.get(k, "")) for k in ("given_name", "family_name")).strip()
    )
    return str(name)[:255]
