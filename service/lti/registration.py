"""Registering platforms: by hand (CLI, admin page), by LTI Dynamic Registration, for Canvas."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import requests
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from service.lti.claims import LaunchProblem
from service.lti.services import AGS_SCOPES, SCOPE_NRPS
from service.store.database import Store
from service.store.models import Deployment, Platform

if TYPE_CHECKING:
    from service.lti.tool import LtiContext

TOOL_NAME = "CodeBlanks"
TOOL_CONFIG = "https://purl.imsglobal.org/spec/lti-tool-configuration"
PLATFORM_CONFIG = "https://purl.imsglobal.org/spec/lti-platform-configuration"
SCOPES = (*AGS_SCOPES, SCOPE_NRPS)
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


@dataclass(frozen=True)
class Registered:
    """A platform registration as shown to admins."""

    id: int
    name: str
    issuer: str
    client_id: str
    deployment_ids: tuple[str, ...]
    auth_login_url: str
    auth_token_url: str
    key_set_url: str
    auto_add_deployments: bool


def check_url(url: str, what: str) -> None:
    """Require https, except for loopback hosts (local LMSs and tests)."""
    parts = urlsplit(url)
    if parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in LOOPBACK):
        if parts.netloc:
            return
    raise ValueError(f"{what} must be an https URL (http only for loopback): {url!r}")


def add_platform(
    store: Store,
    *,
    issuer: str,
    client_id: str,
    deployment_ids: list[str],
    auth_login_url: str,
    auth_token_url: str,
    key_set_url: str,
    name: str = "",
    auto_add_deployments: bool = False,
) -> Registered:
    """Register a platform (or add deployments to an existing one); raise ValueError if bad."""
    for url, what in (
        (issuer, "issuer"),
        (auth_login_url, "auth login URL"),
        (auth_token_url, "auth token URL"),
        (key_set_url, "key set URL"),
    ):
        check_url(url, what)
    for value, what in [(client_id, "client id"), *((d, "deployment id") for d in deployment_ids)]:
        if not value or len(value) > 255:
            raise ValueError(f"the {what} must be 1 to 255 characters")
    with store.session() as session:
        platform = session.scalar(
            select(Platform).where(Platform.issuer == issuer, Platform.client_id == client_id)
        )
        if platform is None:
            platform = Platform(issuer=issuer, client_id=client_id)
            session.add(platform)
        platform.name = name or platform.name or urlsplit(issuer).hostname or issuer
        platform.auth_login_url = auth_login_url
        platform.auth_token_url = auth_token_url
        platform.key_set_url = key_set_url
        platform.auto_add_deployments = auto_add_deployments
        session.flush()
        known = set(
            session.scalars(
                select(Deployment.deployment_id).where(Deployment.platform_id == platform.id)
            )
        )
        for deployment_id in deployment_ids:
            if deployment_id not in known:
                session.add(Deployment(platform_id=platform.id, deployment_id=deployment_id))
        platform_id = platform.id
    return next(p for p in list_platforms(store) if p.id == platform_id)


def list_platforms(store: Store) -> list[Registered]:
    """Return every registration with its deployments."""
    with store.session() as session:
        platforms = list(session.scalars(select(Platform).order_by(Platform.id)))
        deployments = list(session.scalars(select(Deployment).order_by(Deployment.id)))
    return [
        Registered(
            p.id,
            p.name,
            p.issuer,
            p.client_id,
            tuple(d.deployment_id for d in deployments if d.platform_id == p.id),
            p.auth_login_url,
            p.auth_token_url,
            p.key_set_url,
            p.auto_add_deployments,
        )
        for p in platforms
    ]


def remove_platform(store: Store, platform_id: int) -> bool:
    """Delete a registration (and, by cascade, its deployments and data); return if found."""
    with store.session() as session:
        platform = session.get(Platform, platform_id)
        if platform is None:
            return False
        session.delete(platform)
    return True


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


def register(ctx: LtiContext, config_url: str, token: str | None) -> Registered:
    """Run dynamic registration with the platform whose configuration is at `config_url`."""
    try:
        check_url(config_url, "openid_configuration")
    except ValueError as exc:
        raise LaunchProblem("Bad registration request", str(exc)) from exc
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    config = _json(lambda: ctx.http.get(config_url, headers=headers), "its configuration")
    issuer = str(config.get("issuer", ""))
    if urlsplit(issuer).netloc != urlsplit(config_url).netloc or not issuer:
        raise LaunchProblem(
            "Issuer mismatch",
            f"the configuration at {config_url} names issuer {issuer!r} from another host",
            "the registration URL given to the LMS",
            status=400,
        )
    needed = ("registration_endpoint", "authorization_endpoint", "token_endpoint", "jwks_uri")
    missing = [key for key in needed if not isinstance(config.get(key), str)]
    if missing:
        raise LaunchProblem("Incomplete configuration", f"it lacks {', '.join(missing)}")
    answer = _json(
        lambda: ctx.http.post(
            config["registration_endpoint"], json=tool_configuration(ctx), headers=headers
        ),
        "the registration endpoint",
    )
    client_id = answer.get("client_id")
    deployment_id = (answer.get(TOOL_CONFIG) or {}).get("deployment_id")
    if not isinstance(client_id, str):
        raise LaunchProblem("Registration refused", f"the platform answered {answer!r}"[:500])
    product = (config.get(PLATFORM_CONFIG) or {}).get("product_family_code", "")
    try:
        return add_platform(
            ctx.store,
            issuer=issuer,
            client_id=client_id,
            deployment_ids=[deployment_id] if isinstance(deployment_id, str) else [],
            auth_login_url=config["authorization_endpoint"],
            auth_token_url=config["token_endpoint"],
            key_set_url=config["jwks_uri"],
            name=str(product or urlsplit(issuer).hostname),
            # without a deployment id in the answer, accept the first one launches bring
            auto_add_deployments=not isinstance(deployment_id, str),
        )
    except (ValueError, IntegrityError) as exc:
        raise LaunchProblem("Registration not stored", str(exc)) from exc


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


def _json(call: Callable[[], requests.Response], what: str) -> dict[str, Any]:
    try:
        response = call()
        response.raise_for_status()
        data = response.json()
    except (requests.RequestException, ValueError) as exc:
        raise LaunchProblem(
            "Registration failed", f"{what} did not answer JSON ({exc})", status=502
        ) from exc
    if not isinstance(data, dict):
        raise LaunchProblem("Registration failed", f"{what} answered {type(data).__name__}")
    return data
