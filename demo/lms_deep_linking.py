"""The deep-linking return: check the tool's LtiDeepLinkingResponse, then create its links."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from demo import assertions, lms_ags
from demo.lms_errors import DemoError
from demo.lms_models import COURSE, LineItem, Link, Tool
from demo.lms_registration import check_url

if TYPE_CHECKING:
    from demo.platform import DemoPlatform

LTI = "https://purl.imsglobal.org/spec/lti/claim/"
DL = "https://purl.imsglobal.org/spec/lti-dl/claim/"


@dataclass(frozen=True)
class DeepLinkResult:
    """What a deep-linking response added, and the messages the tool wanted shown."""

    links: list[Link]
    lineitems: list[LineItem]
    msg: str | None = None
    errormsg: str | None = None


def receive(platform: DemoPlatform, form: Mapping[str, str]) -> DeepLinkResult:
    """Verify the posted JWT strictly and add one resource link per ltiResourceLink item."""
    token = form.get("JWT", "")
    if not token:
        raise DemoError(400, "the JWT form field is missing")
    client_id = str(assertions.peek(token).get("iss", ""))
    tool = platform.records.tool(client_id)
    if tool is None:
        raise DemoError(400, f"the JWT's iss {client_id!r} is not a registered client id")
    claims = assertions.verify(token, tool, platform.config.leeway_s)
    if not assertions.audience_includes(claims, platform.issuer):
        raise DemoError(400, f"the JWT's aud must be the platform issuer {platform.issuer}")
    expected = {
        "message_type": "LtiDeepLinkingResponse",
        "version": "1.3.0",
        "deployment_id": tool.deployment_id,
    }
    for name, value in expected.items():
        if claims.get(LTI + name) != value:
            raise DemoError(400, f"the {name} claim must be {value!r}")
    nonce = claims.get("nonce")
    if not isinstance(nonce, str) or not nonce:
        raise DemoError(400, "the JWT has no nonce")
    if not platform.records.remember("dl_nonce", f"{client_id} {nonce}", float(claims["exp"])):
        raise DemoError(400, "the JWT's nonce was used before: a replayed response")
    data = claims.get(DL + "data")
    sent = platform.records.peek("dl_data", data) if isinstance(data, str) else None
    if not isinstance(data, str) or sent is None or sent["client_id"] != client_id:
        raise DemoError(400, "the data claim does not match a pending deep-linking request")
    items = claims.get(DL + "content_items", [])
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise DemoError(400, "content_items must be a list of objects")
    checked = [_check_item(i, tool) for i in items]
    if platform.records.take("dl_data", data) is None:
        raise DemoError(400, "this deep-linking request was already answered")

    links, lineitems = [], []
    for item in checked:
        link = Link(
            id=f"rl-{secrets.token_hex(6)}",
            course_id=COURSE.id,
            client_id=tool.client_id,
            title=item.get("title") or "Untitled",
            url=item.get("url") or tool.launch_url,
            custom=item.get("custom") or {},
        )
        platform.records.put_link(link)
        links.append(link)
        spec = item.get("lineItem")
        if spec is not None:
            made = platform.records.add_lineitem(
                LineItem(
                    id=0,
                    course_id=COURSE.id,
                    client_id=tool.client_id,
                    label=spec.get("label") or link.title,
                    score_maximum=float(spec["scoreMaximum"]),
                    resource_id=spec.get("resourceId"),
                    tag=spec.get("tag"),
                    resource_link_id=link.id,
                    submission_review=spec.get("submissionReview"),
                )
            )
            if platform.config.plays.deep_linked_unpublished:
                # deep_linking_modules.rb create_update_assignment!: workflow_state unpublished
                platform.unpublished.add(made.id)
            lineitems.append(made)
    msg, errormsg = claims.get(DL + "msg"), claims.get(DL + "errormsg")
    return DeepLinkResult(links, lineitems, _text(msg), _text(errormsg))


def _check_item(item: dict[str, Any], tool: Tool) -> dict[str, Any]:
    if item.get("type") != "ltiResourceLink":
        raise DemoError(400, f"content item type {item.get('type')!r} was not asked for")
    if "title" in item and not isinstance(item["title"], str):
        raise DemoError(400, "a content item's title must be a string")
    if "url" in item:
        url = check_url(item["url"], "a content item's url")
        if urlsplit(url).netloc != urlsplit(tool.launch_url).netloc:
            raise DemoError(400, f"content item url {url!r} is not on the tool's host")
    custom = item.get("custom", {})
    if not isinstance(custom, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in custom.items()
    ):
        raise DemoError(400, "a content item's custom must map names to strings")
    spec = item.get("lineItem")
    if spec is not None:
        if not isinstance(spec, dict):
            raise DemoError(400, "a content item's lineItem must be an object")
        maximum = spec.get("scoreMaximum")
        if isinstance(maximum, bool) or not isinstance(maximum, int | float) or maximum <= 0:
            raise DemoError(400, "a lineItem's scoreMaximum must be a number above 0")
        for name in ("label", "resourceId", "tag"):
            if name in spec and not isinstance(spec[name], str):
                raise DemoError(400, f"a lineItem's {name} must be a string")
        lms_ags.submission_review(spec.get("submissionReview"), "a lineItem's submissionReview")
    return item


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
