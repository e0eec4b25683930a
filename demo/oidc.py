"""Launches, platform side: the login initiation, the strict /auth check, the signed id_token."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import parse_qsl, urlsplit

from lti1p3platform.ags import LtiAgs
from lti1p3platform.registration import Registration

from demo.adapters import Launch, Login, ParamsRequest, PlatformConf, SigningRegistration
from demo.lms_errors import DemoError
from demo.lms_models import (
    COURSE,
    COURSES,
    AutoPost,
    Link,
    LoginInitiation,
    Tool,
    User,
)
from demo.tokens import AGS_SCOPES, MEMBERSHIPS

if TYPE_CHECKING:
    from demo.platform import DemoPlatform

Claims = dict[str, Any]
# A test's hook over the claims before signing: change them in place or return new ones.
Mutate = Callable[[Claims], Claims | None]

HINT_TTL_S = 600
DEEP_LINK_TTL_S = 3600
AGS_CLAIM = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
LTI = "https://purl.imsglobal.org/spec/lti/claim/"
SUBMISSION_REVIEW = "LtiSubmissionReviewRequest"
TOOL_PLATFORM_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/tool_platform"
COURSE_OFFERING = "http://purl.imsglobal.org/vocab/lis/v2/course#CourseOffering"
# Substitution variables replaced in custom parameter values ("$User.id" -> the sub).
VARIABLES = (
    "Context.id",
    "Context.title",
    "ResourceLink.id",
    "ResourceLink.title",
    "User.id",
    "Person.name.full",
    "Person.email.primary",
)
_AUTH_FIXED = {
    "scope": "openid",
    "response_type": "id_token",
    "response_mode": "form_post",
    "prompt": "none",
}


def initiate(
    platform: DemoPlatform,
    user_sub: str,
    *,
    link_id: str | None = None,
    client_id: str | None = None,
    locale: str = "en",
    for_user: str | None = None,
) -> LoginInitiation:
    """Start a launch of a link (or, given a client id, a deep-linking request) as a user.

    `locale` is the user's LMS language, sent as `launch_presentation.locale`. `for_user` (a
    sub) makes it a submission review of that student's work on the link, as Moodle's
    gradebook link does: to the line item's `submissionReview.url` when it declared one,
    else to the link's own URL; only a teacher may review another person's work.
    """
    user = platform.users.get(user_sub)
    if user is None:
        raise DemoError(404, f"no user {user_sub!r} in the demo course")
    link = platform.records.link(link_id) if link_id else None
    if link_id and link is None:
        raise DemoError(404, f"no resource link {link_id!r}")
    tool = platform.records.tool(link.client_id if link else client_id or "")
    if tool is None:
        raise DemoError(404, f"no tool registered with client id {client_id!r}")
    if not tool.active:
        raise DemoError(403, f"the tool {tool.name!r} is registered but waits for activation")
    if link is None and not user.is_instructor:
        raise DemoError(403, "only an instructor can add content by deep linking")
    target = link.url if link else tool.deep_link_url or tool.launch_url
    if for_user is not None:
        target = _review_target(platform, user, link, for_user)
    hint = secrets.token_urlsafe(16)
    data = {"user": user.sub, "client_id": tool.client_id, "link_id": link_id, "locale": locale}
    data["for_user"] = for_user
    platform.records.grant("hint", hint, data, HINT_TTL_S)

    registration = (
        Registration()
        .set_iss(platform.issuer)
        .set_client_id(tool.client_id)
        .set_deployment_id(tool.deployment_id)
        .set_oidc_login_url(tool.login_url)
        .set_launch_url(tool.launch_url)
    )
    login = Login(None, PlatformConf(registration=registration))
    login.set_lti_message_hint(hint=hint)
    login.set_launch_url(target)
    url: str = login.initiate_login(user.sub)
    own = dict(parse_qsl(urlsplit(tool.login_url).query))
    params = {k: v for k, v in parse_qsl(urlsplit(url).query) if k not in own}
    if platform.config.storage_target:
        params["lti_storage_target"] = platform.config.storage_target
    if platform.config.plays.canvas_launch:
        # lti_advantage_adapter.rb#login_request: deployment_id (not lti_deployment_id), and
        # where the launch comes from; lti_storage_target only when config.storage_target asks
        params.pop("lti_deployment_id", None)
        params["deployment_id"] = tool.deployment_id
        params["canvas_environment"] = "prod"
        params["canvas_region"] = "not_configured"
    return LoginInitiation(tool.login_url, platform.config.login_method, params)


def authorize(
    platform: DemoPlatform,
    params: Mapping[str, str],
    *,
    mutate: Mutate | None = None,
    headers: dict[str, Any] | None = None,
    algorithm: str = "RS256",
) -> AutoPost:
    """Check the tool's authentication request strictly; return the auto-post launch form.

    `mutate`, `headers` and `algorithm` let a test tamper with the id_token after every check
    passed, to see the tool refuse it.
    """
    p = {k: str(v) for k, v in params.items()}
    for name, value in _AUTH_FIXED.items():
        if p.get(name) != value:
            raise DemoError(400, f"{name} must be {value!r}, got {p.get(name)!r}")
    tool = platform.records.tool(p.get("client_id", ""))
    if tool is None:
        raise DemoError(400, f"unknown client_id {p.get('client_id')!r}", "unauthorized_client")
    if not tool.active:
        raise DemoError(400, f"client_id {tool.client_id!r} waits for activation")
    if p.get("redirect_uri") not in tool.redirect_uris:
        raise DemoError(
            400,
            f"redirect_uri {p.get('redirect_uri')!r} is not one of the tool's registered "
            f"redirect URIs: {', '.join(tool.redirect_uris)}",
        )
    for name in ("nonce", "state", "login_hint", "lti_message_hint"):
        if not p.get(name):
            raise DemoError(400, f"{name} is missing")
    hint = platform.records.peek("hint", p["lti_message_hint"])
    if hint is None:
        raise DemoError(400, "lti_message_hint is unknown, already used or expired")
    if hint["client_id"] != tool.client_id:
        raise DemoError(400, "lti_message_hint was issued for another client_id")
    if p["login_hint"] != hint["user"]:
        raise DemoError(400, "login_hint does not match the user this launch was issued for")
    if platform.records.take("hint", p["lti_message_hint"]) is None:
        raise DemoError(400, "lti_message_hint already used")

    signed: Claims = {}

    def sign(claims: Claims) -> str:
        changed = mutate(claims) if mutate else None
        signed.update(claims if changed is None else changed)
        return platform.key.sign(signed, headers, algorithm)

    link = platform.records.link(hint["link_id"]) if hint["link_id"] else None
    user = platform.users[hint["user"]]
    launch = _assemble(platform, tool, user, link, p, SigningRegistration(sign))
    if hint.get("for_user") and link is not None:
        _review(launch, platform, link, platform.users[hint["for_user"]])
    presentation = launch.lti_claim_launch_presentation or {}
    for claim in presentation.values():  # Moodle and Canvas send the user's language
        claim["locale"] = str(hint.get("locale") or "en")
    data = launch.lti_launch()
    fields = {"id_token": data["id_token"], "state": data["state"]}
    if platform.config.plays.canvas_launch and platform.config.storage_target:
        # authentication_controller.rb launch_parameters: the launch names the frame too
        fields["lti_storage_target"] = platform.config.storage_target
    return AutoPost(data["launch_url"], fields, signed)


def _review_target(platform: DemoPlatform, user: User, link: Link | None, for_user: str) -> str:
    if link is None:
        raise DemoError(400, "a submission review is of a link's work")
    if for_user not in platform.users:
        raise DemoError(404, f"no user {for_user!r} in the demo course")
    if for_user != user.sub and not user.is_instructor:
        raise DemoError(403, "only an instructor can review another person's submission")
    items = platform.lineitems_of(link)
    if not items:
        raise DemoError(400, f"the link {link.id!r} has no grade column to review")
    declared = (items[0].submission_review or {}).get("url")
    return str(declared) if declared else link.url


def _review(launch: Launch, platform: DemoPlatform, link: Link, student: User) -> None:
    """Make the launch a submission review of `student`'s work, as Moodle's gradebook does."""
    review = platform.lineitems_of(link)[0].submission_review or {}
    url = review.get("url")
    if url:
        launch.set_launch_url(url)
    launch.set_extra_claims(
        {
            LTI + "message_type": SUBMISSION_REVIEW,
            LTI + "for_user": {
                "user_id": student.sub,
                "given_name": student.given_name,
                "family_name": student.family_name,
                "name": student.name,
                "email": student.email,
                "roles": [student.role],
            },
        }
    )


def _assemble(
    platform: DemoPlatform,
    tool: Tool,
    user: User,
    link: Link | None,
    params: dict[str, str],
    registration: SigningRegistration,
) -> Launch:
    """Set every claim of a resource-link launch (link given) or a deep-linking request."""
    course = COURSES[link.course_id if link else COURSE.id]
    registration.set_iss(platform.issuer).set_client_id(tool.client_id)
    registration.set_deployment_id(tool.deployment_id).set_launch_url(tool.launch_url)
    launch = Launch(ParamsRequest(params), PlatformConf(registration=registration))
    launch.set_id_token_expiration(platform.config.id_token_lifetime_s)
    launch.set_user_data(user.sub, [user.role], full_name=user.name, email_address=user.email)
    launch.set_launch_context_claim(course.id, [COURSE_OFFERING], course.title, course.label)
    launch.set_launch_presentation_claim("iframe", return_url=platform.config.url("/"))
    launch.set_extra_claims(
        {
            "given_name": user.given_name,
            "family_name": user.family_name,
            TOOL_PLATFORM_CLAIM: {
                "guid": platform.issuer,
                "name": "Codeblanks demo LMS",
                "product_family_code": platform.config.product_family_code,
                # jwt_message.rb add_tool_platform_claims!: Canvas says "cloud"
                "version": "cloud" if platform.config.plays.canvas_launch else "1.0",
            },
        }
    )
    custom = {**tool.custom, **(link.custom if link else {})}
    if custom:
        values = {
            "Context.id": course.id,
            "Context.title": course.title,
            "ResourceLink.id": link.id if link else None,
            "ResourceLink.title": link.title if link else None,
            "User.id": user.sub,
            "Person.name.full": user.name,
            "Person.email.primary": user.email,
        }
        # An unknown or unavailable variable stays as written, as the LTI spec asks.
        launch.set_custom_parameters_claim(
            {k: (values.get(v[1:]) or v) if v.startswith("$") else v for k, v in custom.items()}
        )
    scopes = [s for s in AGS_SCOPES if s in tool.scopes]
    boxes = platform.checkboxes(tool.client_id)
    if platform.config.plays.scope_checkboxes and not (boxes.outcomes or boxes.lineitems):
        scopes = []  # a Sakai tool allowed neither: no AGS claim
    if scopes:
        items = platform.lineitems_of(link) if link else []
        item = items[0] if items else None
        claim = LtiAgs(
            platform.lineitems_url(course.id),
            platform.lineitem_url(item) if item else None,
        ).get_lti_ags_launch_claim()
        claim[AGS_CLAIM]["scope"] = scopes  # the library narrows them; Moodle sends all four
        if platform.config.plays.launch_scopes is not None:
            claim[AGS_CLAIM]["scope"] = list(platform.config.plays.launch_scopes)
        if platform.config.plays.scope_checkboxes and not boxes.outcomes:
            # Sakai: the URLs only with "return grades" ticked (SakaiBLTIUtil.java)
            claim[AGS_CLAIM] = {"scope": claim[AGS_CLAIM]["scope"]}
        launch.set_extra_claims(claim)
    if MEMBERSHIPS in tool.scopes:
        launch.set_nrps(platform.memberships_url(course.id))
    if platform.config.plays.canvas_launch:
        _canvas_claims(launch, tool, user, link)
    if link is not None:
        launch.set_launch_url(link.url)
        launch.set_resource_link_claim(link.id, title=link.title)
        return launch
    data = secrets.token_urlsafe(16)
    sent = {"client_id": tool.client_id, "deployment_id": tool.deployment_id, "user": user.sub}
    platform.records.grant("dl_data", data, sent, DEEP_LINK_TTL_S)
    registration.set_deeplink_launch_url(tool.deep_link_url or tool.launch_url)
    # The spec's `data` is an opaque string; the library's annotation says dict.
    launch.set_dl(
        platform.config.url("/deep_link_return"),
        title=course.title,
        accept_types={"ltiResourceLink"},
        extra_data=cast(Any, data),
    )
    return launch


def _canvas_claims(launch: Launch, tool: Tool, user: User, link: Link | None) -> None:
    """Add the claims Canvas's jwt_message.rb adds: azp, the LTI 1.1 user id, the lis claim,
    the placement, and a one-hour id_token."""
    launch.set_id_token_expiration(3600)  # jwt_message.rb: exp 1.hour.from_now
    launch.set_extra_claims(
        {
            "azp": tool.client_id,
            LTI + "lti11_legacy_user_id": hashlib.sha1(user.sub.encode()).hexdigest(),
            LTI + "lis": {"person_sourcedid": None, "course_offering_sourcedid": None},
            # the placement name; a plain module/assignment launch has none
            "https://www.instructure.com/placement": None if link else "link_selection",
        }
    )
