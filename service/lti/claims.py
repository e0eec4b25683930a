"""Checks of a decoded id_token's claims that pylti1p3 leaves out. Pure functions.

Each check returns a LaunchProblem naming what is wrong and what an admin should check;
the launch view turns it into a 4xx page and a log line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

LTI = "https://purl.imsglobal.org/spec/lti/claim/"
DL = "https://purl.imsglobal.org/spec/lti-dl/claim/"
RESOURCE_LINK = "LtiResourceLinkRequest"
DEEP_LINKING = "LtiDeepLinkingRequest"
MESSAGE_TYPES = (RESOURCE_LINK, DEEP_LINKING)
MAX_ID = 255
MAX_TEXT = 4096
TEACHER_ROLES = ("Instructor", "TeachingAssistant", "Administrator", "ContentDeveloper")


@dataclass(frozen=True)
class LaunchProblem(Exception):
    """Why a launch was refused: a short title, the detail, and what the admin should check."""

    title: str
    detail: str
    check: str = (
        "that the activity was opened from the LMS just now (not replayed or bookmarked), and "
        "that the tool's registration there matches this one: issuer, client id, deployment "
        "id and key set URL"
    )
    status: int = 400

    def __str__(self) -> str:
        return f"{self.title}: {self.detail}"


def client_id_of(body: Mapping[str, Any]) -> str:
    """Return the client id a token was issued to: azp, or the only audience."""
    aud = body.get("aud")
    azp = body.get("azp")
    if isinstance(azp, str) and azp:
        return azp
    if isinstance(aud, str):
        return aud
    if isinstance(aud, list) and len(aud) == 1 and isinstance(aud[0], str):
        return aud[0]
    raise LaunchProblem(
        "No client id",
        "the id_token has several audiences and no 'azp' naming which one is this tool",
        "the platform's LTI 1.3 settings for this tool",
    )


def check_audience(body: Mapping[str, Any], client_id: str) -> None:
    """Require our client id among the audiences, and azp to name it when present or needed."""
    aud = body.get("aud")
    audiences = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
    if client_id not in audiences:
        raise LaunchProblem(
            "Wrong audience",
            f"the id_token is for {audiences!r}, not this tool's client id {client_id!r}",
            "the client id registered for this tool in the LMS and here",
        )
    azp = body.get("azp")
    if (azp is not None or len(audiences) > 1) and azp != client_id:
        raise LaunchProblem(
            "Wrong authorized party",
            f"'azp' is {azp!r}; it must be this tool's client id {client_id!r}",
            "the client id registered for this tool",
        )


def check_message(body: Mapping[str, Any], base_url: str) -> str:
    """Check version, message type, ids, roles, sizes and target; return the message type."""
    version = body.get(LTI + "version")
    if version != "1.3.0":
        raise LaunchProblem("Unsupported LTI version", f"version is {version!r}, not '1.3.0'")
    message_type = body.get(LTI + "message_type")
    if message_type not in MESSAGE_TYPES:
        raise LaunchProblem(
            "Unsupported message type",
            f"{message_type!r} is not one of {', '.join(MESSAGE_TYPES)}",
            "the placement configured in the LMS",
        )
    _check_id(body.get("sub"), "sub (the user id)")
    _check_id(body.get(LTI + "deployment_id"), "deployment_id")
    roles = body.get(LTI + "roles")
    if not isinstance(roles, list) or not all(isinstance(r, str) for r in roles):
        raise LaunchProblem("Missing roles", "the roles claim must be a list of role URIs")
    context = body.get(LTI + "context")
    if context is not None:
        if not isinstance(context, dict):
            raise LaunchProblem("Bad context", "the context claim must be an object")
        _check_id(context.get("id"), "context.id")
    if message_type == RESOURCE_LINK:
        link = body.get(LTI + "resource_link")
        if not isinstance(link, dict):
            raise LaunchProblem("Missing resource link", "a resource link launch needs one")
        _check_id(link.get("id"), "resource_link.id")
    else:
        _check_deep_linking(body.get(DL + "deep_linking_settings"))
    check_target(body.get(LTI + "target_link_uri"), base_url)
    for key, value in body.items():
        if isinstance(value, str) and len(value) > MAX_TEXT:
            raise LaunchProblem("Oversized claim", f"{key!r} is {len(value)} characters long")
    return str(message_type)


def is_teacher(body: Mapping[str, Any]) -> bool:
    """Return whether the launch's roles make the user staff of the course."""
    roles = body.get(LTI + "roles") or []
    return any(str(role).rsplit("#", 1)[-1] in TEACHER_ROLES for role in roles)


def _check_id(value: object, name: str) -> None:
    if not isinstance(value, str) or not value:
        raise LaunchProblem(f"Missing {name}", f"the id_token has no {name}")
    if len(value) > MAX_ID:
        raise LaunchProblem(
            f"Oversized {name}", f"{name} is {len(value)} characters; at most {MAX_ID} allowed"
        )


def _check_deep_linking(settings: object) -> None:
    if not isinstance(settings, dict):
        raise LaunchProblem("Missing deep linking settings", "the request carries none")
    if not isinstance(settings.get("deep_link_return_url"), str):
        raise LaunchProblem("Missing return URL", "deep_link_return_url is required")
    for key in ("deep_link_return_url", "data"):
        if len(str(settings.get(key, ""))) > 2048:
            raise LaunchProblem("Oversized claim", f"deep_linking_settings.{key} is too long")
    accepted = settings.get("accept_types") or []
    if "ltiResourceLink" not in accepted:
        raise LaunchProblem(
            "Unsupported content type",
            f"the LMS accepts {accepted!r}; this tool returns ltiResourceLink items",
            "the deep linking placement in the LMS",
        )


def check_target(target: object, base_url: str) -> None:
    """Refuse a target_link_uri that is not a URL of this tool."""
    if not isinstance(target, str):
        raise LaunchProblem("Missing target_link_uri", "the id_token has no target_link_uri")
    ours, theirs = urlsplit(base_url), urlsplit(target)
    if (theirs.scheme, theirs.netloc) != (ours.scheme, ours.netloc) or not theirs.path.startswith(
        ours.path.rstrip("/") + "/"
    ):
        raise LaunchProblem(
            "Foreign target_link_uri",
            f"{target!r} is not a URL of this tool ({base_url})",
            "the tool's launch URL registered in the LMS",
        )
