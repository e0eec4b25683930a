"""Registering platforms: by hand (CLI, admin page), by LTI Dynamic Registration, for Canvas."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit

import requests
from sqlalchemy.exc import IntegrityError

from core.messages import Message, say
from service.lti.claims import LtiProblem
from service.lti.services import AGS_SCOPES, SCOPE_NRPS, unreadable
from service.outbound import Unreadable, check_url, document, explain, status_of
from service.store import platform_checks, platform_rows, registration_tokens
from service.store.database import Store
from service.store.platform_rows import PlatformFields
from service.store.registration_tokens import Grant

if TYPE_CHECKING:
    from service.lti.tool import LtiContext

TOOL_NAME = "CodeBlanks"
TOOL_CONFIG = "https://purl.imsglobal.org/spec/lti-tool-configuration"
PLATFORM_CONFIG = "https://purl.imsglobal.org/spec/lti-platform-configuration"
# the only site name a platform's configuration carries: Canvas's, for the school's account
# (Moodle's has none; its site name comes with each launch, in tool_platform.name)
SITE_NAMES = ("https://canvas.instructure.com/lti/account_name",)
SCOPES = (*AGS_SCOPES, SCOPE_NRPS)
log = logging.getLogger("codeblanks.lti")
CANVAS_ISSUERS = frozenset(
    f"https://canvas.{stage}instructure.com" for stage in ("", "beta.", "test.")
)


@dataclass(frozen=True, kw_only=True)
class Registered(PlatformFields):
    """A platform registration as shown to admins: its fields and its id."""

    id: int


def add_platform(
    store: Store, fields: PlatformFields, *, replace: bool = False, only: int | None = None
) -> Registered:
    """Register a platform, or add deployments to one; raise ValueError if bad.

    A registration that exists already keeps its URLs and settings unless `replace` says
    they may change: the key set URL decides whose launches are believed, so it is never
    overwritten silently. `only`, when given, is the one platform this call may touch.
    """
    for url, what in (
        (fields.issuer, "issuer"),
        (fields.auth_login_url, "auth login URL"),
        (fields.auth_token_url, "auth token URL"),
        (fields.key_set_url, "key set URL"),
        *([(fields.token_audience, "token audience")] if fields.token_audience else []),
    ):
        check_url(url, what)
        if len(url) > 2048:
            raise ValueError(f"the {what} must be at most 2048 characters")
    for value, what in [
        (fields.client_id, "client id"),
        *((d, "deployment id") for d in fields.deployment_ids),
    ]:
        if not value or len(value) > 255:
            raise ValueError(f"the {what} must be 1 to 255 characters")
    if len(fields.name) > 255:
        raise ValueError("the name must be at most 255 characters")
    platform_id = platform_rows.save(store, fields, replace=replace, only=only)
    return next(p for p in list_platforms(store) if p.id == platform_id)


def registration_url(
    store: Store,
    base_url: str,
    *,
    name: str = "",
    valid_hours: int = 24,
    replaces_id: int | None = None,
    now: datetime,
) -> str:
    """Make a single-use registration token; return the tool URL an LMS admin pastes."""
    token = registration_tokens.issue(store, now, timedelta(hours=valid_hours), name, replaces_id)
    return f"{base_url.rstrip('/')}/lti/register?{urlencode({'token': token})}"


def list_platforms(store: Store) -> list[Registered]:
    """Return every registration with its deployments."""
    return [
        Registered(
            id=p.id,
            issuer=p.issuer,
            client_id=p.client_id,
            deployment_ids=deployment_ids,
            auth_login_url=p.auth_login_url,
            auth_token_url=p.auth_token_url,
            key_set_url=p.key_set_url,
            name=p.name,
            auto_add_deployments=p.auto_add_deployments,
            token_audience=p.token_audience,
        )
        for p, deployment_ids in platform_rows.with_deployments(store)
    ]


def remove_platform(store: Store, platform_id: int) -> bool:
    """Delete a registration (and, by cascade, its deployments and data); return if found."""
    return platform_rows.remove(store, platform_id)


def tool_configuration(ctx: LtiContext) -> dict[str, Any]:
    """Return the tool's OpenID client registration document (LTI Dynamic Registration)."""
    base = ctx.base_url
    return {
        "application_type": "web",
        "response_types": ["id_token"],
        "grant_types": ["implicit", "client_credentials"],
        "initiate_login_uri": base + "/lti/login",
        "redirect_uris": [ctx.launch_url],
        "client_name": TOOL_NAME,
        "jwks_uri": base + "/lti/jwks",
        "token_endpoint_auth_method": "private_key_jwt",
        "scope": " ".join(SCOPES),
        TOOL_CONFIG: {
            "domain": urlsplit(base).netloc,
            "target_link_uri": ctx.launch_url,
            "description": "Interactive coding lessons, graded in a sandbox.",
            "claims": ["iss", "sub", "name", "given_name", "family_name", "email"],
            "messages": [
                {
                    "type": "LtiDeepLinkingRequest",
                    "target_link_uri": ctx.launch_url,
                    "label": "CodeBlanks lessons",
                },
                {"type": "LtiResourceLinkRequest", "target_link_uri": ctx.launch_url},
            ],
        },
    }


class RegistrationProblem(LtiProblem):
    """Why a dynamic registration was refused, in the words of registration (not launches)."""

    code = "registration_refused"
    check_by_default = say(
        "get a fresh registration URL from this tool's administrator (`codeblanks platforms "
        "register-url`, or the admin page /admin/platforms) and paste it into the LMS again"
    )


def register(
    ctx: LtiContext, config_url: str, platform_token: str | None, grant: Grant
) -> Registered:
    """Run dynamic registration with the platform whose configuration is at `config_url`.

    `grant` is the admin's claimed registration token. Nothing from the platform's answers
    is shown back (they may come from anywhere the URL points); URLs are checked before use
    and every request goes through the tool's outbound client.
    """
    if not config_url:
        raise RegistrationProblem(
            say("Not started by an LMS"),
            say(
                "the request carries no openid_configuration: paste this URL into the LMS's "
                'dynamic registration (Moodle: "Tool URL" then "Add LTI Advantage")'
            ),
            say("paste the registration URL into the LMS instead of opening it yourself"),
        )
    _checked(config_url, "openid_configuration")
    if platform_token is not None and len(platform_token) > 8192:
        raise RegistrationProblem(
            say("Bad registration request"), say("the registration_token is too long")
        )
    headers = {"Authorization": f"Bearer {platform_token}"} if platform_token else {}
    what = say("the LMS's configuration")
    config = _json(lambda: ctx.http.get(config_url, headers=headers), what)
    issuer = config.get("issuer")
    if not isinstance(issuer, str) or not _issuer_fits(issuer, config_url):
        raise RegistrationProblem(
            say("Issuer mismatch"),
            say(
                "the configuration at {config_url} names an issuer on another host",
                config_url=config_url,
            ),
            say("the LMS's site URL (its issuer must be on the host of its configuration URL)"),
        )
    _checked(issuer, "issuer")
    needed = ("registration_endpoint", "authorization_endpoint", "token_endpoint", "jwks_uri")
    missing = [key for key in needed if not isinstance(config.get(key), str)]
    if missing:
        raise RegistrationProblem(
            say("Incomplete configuration"),
            say("the LMS's configuration lacks {missing}", missing=", ".join(missing)),
        )
    for key in needed:
        _checked(config[key], key)
    audience = _token_audience(config)
    replaced = _replaced(ctx.store, grant, issuer)
    answer = _json(
        lambda: ctx.http.post(
            config["registration_endpoint"], json=tool_configuration(ctx), headers=headers
        ),
        say("the LMS's registration endpoint"),
    )
    client_id = answer.get("client_id")
    deployment_id = (answer.get(TOOL_CONFIG) or {}).get("deployment_id")
    if not isinstance(client_id, str) or not 0 < len(client_id) <= 255:
        raise RegistrationProblem(
            say("Registration refused"),
            say("the LMS's answer carries no usable client_id"),
            status=502,
        )
    if deployment_id is not None and (
        not isinstance(deployment_id, str) or not 0 < len(deployment_id) <= 255
    ):
        raise RegistrationProblem(
            say("Registration refused"),
            say("the LMS's answer carries an unusable deployment_id"),
            status=502,
        )
    # not the product's code ("moodle" names every Moodle): the admin's name, the site's, or
    # add_platform's (the issuer's host, until a launch brings the site's name)
    name = grant.name or _site_name(config)
    try:
        fields = PlatformFields(
            issuer=issuer,
            client_id=client_id,
            deployment_ids=(deployment_id,) if deployment_id else (),
            auth_login_url=config["authorization_endpoint"],
            auth_token_url=config["token_endpoint"],
            key_set_url=config["jwks_uri"],
            name=name[:255],
            # without a deployment id in the answer, accept the first one launches bring
            auto_add_deployments=not deployment_id,
            token_audience=audience,
        )
        found = add_platform(ctx.store, fields, replace=replaced is not None, only=replaced)
    except (ValueError, IntegrityError) as exc:
        log.warning("registration not stored: %.500s", exc)  # names the LMS's own values
        raise RegistrationProblem(
            say("Registration not stored"),
            _not_stored(ctx.store, issuer, client_id, replaced),
            status=409,
        ) from exc
    # what the LMS granted and calls itself, for the self-test (service.lti.self_test)
    scope = answer.get("scope")
    platform_checks.note_registration(
        ctx.store, found.id, _family(config), scope if isinstance(scope, str) else ""
    )
    return found


def _token_audience(config: dict[str, Any]) -> str | None:
    """Return the `aud` the platform's token endpoint wants when it is not the token URL.

    LTI Dynamic Registration 1.0 names it `authorization_server` in the platform's OpenID
    configuration ("the token endpoint if absent"): Brightspace's "OAuth2 Audience" (D2L KB
    23662). Not every platform means it so: Canvas names its issuer's host there
    ("canvas.instructure.com", doc/api/registration.md) while its token endpoint takes only
    the token URL as `aud` (issue 31 research, A.5). So only a URL is taken, and never
    Canvas's; anything else is logged and the token URL stays the `aud`. It is never fetched.
    """
    named = config.get("authorization_server")
    if named is None or named == config["token_endpoint"]:
        return None
    if _family(config) == "canvas":
        return None
    try:
        check_url(str(named), "authorization_server")
    except ValueError:
        log.warning("registration: authorization_server %.200r is not a URL; not used", named)
        return None
    return str(named)


def _family(config: dict[str, Any]) -> str | None:
    """Return the product_family_code the platform's configuration names, if any."""
    platform = config.get(PLATFORM_CONFIG)
    code = platform.get("product_family_code") if isinstance(platform, dict) else None
    return code if isinstance(code, str) else None


def _not_stored(store: Store, issuer: str, client_id: str, replaced: int | None) -> Message:
    """Say why the store kept a registration out, in our words (never the LMS's values)."""
    if replaced is not None:
        return say(
            "this registration URL was made to replace platform {replaces_id}, but the LMS "
            "registered another client id; nothing was changed",
            replaces_id=str(replaced),
        )
    found = platform_rows.with_issuer(store, issuer, client_id)
    if not found:  # two registrations of one client id at once: the other one was stored
        return say("another registration of this client id was stored at the same moment")
    return say(
        "platform {platform_id} is registered already with this issuer and client id, with "
        "other URLs or settings; they are kept. To change them, make a registration URL with "
        "`codeblanks platforms register-url --replace {platform_id}`",
        platform_id=str(found[0].id),
    )


def _site_name(config: dict[str, Any]) -> str:
    """Return the site's own name if the platform's configuration carries one, else ""."""
    platform = config.get(PLATFORM_CONFIG)
    if not isinstance(platform, dict):
        return ""
    names = [platform.get(key) for key in SITE_NAMES]
    return next((n.strip() for n in names if isinstance(n, str) and n.strip()), "")


def _issuer_fits(issuer: str, config_url: str) -> bool:
    """Return whether an LMS's configuration may name this issuer.

    An issuer must be on the host of the configuration URL, except Canvas's shared issuers:
    every Canvas school serves its configuration from its own domain and names the one
    issuer of all Canvas customers (told apart by client id).
    """
    return issuer in CANVAS_ISSUERS or urlsplit(issuer).netloc == urlsplit(config_url).netloc


def _replaced(store: Store, grant: Grant, issuer: str) -> int | None:
    """Return the platform a token may replace, checking that it is this LMS's."""
    if grant.replaces_id is None:
        return None
    old = platform_rows.find(store, grant.replaces_id)
    old_issuer = old.issuer if old is not None else None
    if old_issuer != issuer:
        log.warning("registration for platform %s names issuer %.200r", grant.replaces_id, issuer)
        raise RegistrationProblem(
            say("Another LMS"),
            say(
                "this registration URL was made to replace platform {replaces_id}, whose "
                "issuer is not this LMS's",
                replaces_id=str(grant.replaces_id),
            ),
            say("that the URL is pasted into the LMS it was made for"),
            status=409,
        )
    return grant.replaces_id


def _checked(url: object, what: str) -> str:
    try:
        check_url(str(url), what)
    except ValueError:
        log.warning("registration: refused %s %.200r", what, url)  # the LMS's words: logged
        raise RegistrationProblem(
            say("Refused URL"),
            say("the LMS's {what} is not an https URL (http only for loopback)", what=what),
        ) from None
    return str(url)


def canvas_config(ctx: LtiContext) -> dict[str, Any]:
    """Return the JSON a Canvas admin pastes (or links) into a new LTI developer key."""
    base, launch = ctx.base_url, ctx.launch_url
    deep = {"message_type": "LtiDeepLinkingRequest", "target_link_uri": launch}
    return {
        "title": TOOL_NAME,
        "description": "Interactive coding lessons, graded in a sandbox.",
        "oidc_initiation_url": base + "/lti/login",
        "target_link_uri": launch,
        "public_jwk_url": base + "/lti/jwks",
        "scopes": list(SCOPES),
        "extensions": [
            {
                "platform": "canvas.instructure.com",
                "privacy_level": "public",
                "domain": urlsplit(base).hostname,
                "settings": {
                    "placements": [
                        {"placement": "link_selection", **deep},
                        {"placement": "assignment_selection", **deep},
                        {
                            "placement": "course_navigation",
                            "message_type": "LtiResourceLinkRequest",
                            # the course view: the gradebook for staff, the lessons for students
                            "target_link_uri": base + "/lti/course",
                            "text": TOOL_NAME,
                            "default": "enabled",
                        },
                    ]
                },
            }
        ],
    }


def _json(call: Callable[[], requests.Response], what: Message) -> dict[str, Any]:
    """Return a JSON object from a platform's endpoint; no word of its answer is shown back."""
    try:
        response = call()
    except requests.RequestException as exc:
        raise RegistrationProblem(
            say("LMS unreachable"),
            say("{what} could not be fetched: {reason}", what=what, reason=explain(exc)),
            say(
                "that this server can reach the LMS (on-premises LMSs: CODEBLANKS_OUTBOUND_ALLOW, "
                "see docs/operations.md)"
            ),
            status=502,
        ) from exc
    if not response.ok:
        raise RegistrationProblem(
            say("LMS refused"),
            say("{what} answered {status}", what=what, status=status_of(response)),
            status=502,
        )
    try:
        return document(response)
    except Unreadable as exc:
        raise RegistrationProblem(
            say("Not an LTI platform"), unreadable(what, exc.fault), status=502
        ) from None
