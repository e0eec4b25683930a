"""Checks of a decoded id_token's claims that pylti1p3 leaves out. Pure functions.

Each check returns a LaunchProblem naming what is wrong and what an admin should check;
the launch view turns it into a 4xx page and a log line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from service.lti.words import _l, translated

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
    check: str = _l(
        "that the activity was opened from the LMS just now (not replayed or bookmarked), and "
        "that the tool's registration there matches this one: issuer, client id, deployment "
        "id and key set URL"
    )
    status: int = 400

    def __str__(self) -> str:
        return f"{self.title}: {self.detail}"

    def translated(self) -> LaunchProblem:
        """Return the problem in the request's language (see service.lti.words)."""
        return replace(
            self,
            title=translated(self.title),
            detail=translated(self.detail),
            check=translated(self.check),
        )


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
        _l("No client id"),
        _l("the id_token has several audiences and no 'azp' naming which one is this tool"),
        _l("the platform's LTI 1.3 settings for this tool"),
    )


def check_audience(body: Mapping[str, Any], client_id: str) -> None:
    """Require our client id among the audiences, and azp to name it when present or needed."""
    aud = body.get("aud")
    audiences = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
    if client_id not in audiences:
        raise LaunchProblem(
            _l("Wrong audience"),
            _l(
                "the id_token is for %(audiences)s, not this tool's client id %(client_id)s",
                audiences=repr(audiences),
                client_id=repr(client_id),
            ),
            _l("the client id registered for this tool in the LMS and here"),
        )
    azp = body.get("azp")
    if (azp is not None or len(audiences) > 1) and azp != client_id:
        raise LaunchProblem(
            _l("Wrong authorized party"),
            _l(
                "'azp' is %(azp)s; it must be this tool's client id %(client_id)s",
                azp=repr(azp),
                client_id=repr(client_id),
            ),
            _l("the client id registered for this tool"),
        )


def check_message(body: Mapping[str, Any], base_url: str) -> str:
    """Check version, message type, ids, roles, sizes and target; return the message type."""
    version = body.get(LTI + "version")
    if version != "1.3.0":
        raise LaunchProblem(
            _l("Unsupported LTI version"),
            _l("version is %(version)s, not '1.3.0'", version=repr(version)),
        )
    message_type = body.get(LTI + "message_type")
    if message_type not in MESSAGE_TYPES:
        raise LaunchProblem(
            _l("Unsupported message type"),
            _l(
                "%(message_type)s is not one of %(types)s",
                message_type=repr(message_type),
                types=", ".join(MESSAGE_TYPES),
            ),
            _l("the placement configured in the LMS"),
        )
    _check_id(body.get("sub"), _l("sub (the user id)"))
    _check_id(body.get(LTI + "deployment_id"), "deployment_id")
    roles = body.get(LTI + "roles")
    if not isinstance(roles, list) or not all(isinstance(r, str) for r in roles):
        raise LaunchProblem(_l("Missing roles"), _l("the roles claim must be a list of role URIs"))
    context = body.get(LTI + "context")
    if context is not None:
        if not isinstance(context, dict):
            raise LaunchProblem(_l("Bad context"), _l("the context claim must be an object"))
        _check_id(context.get("id"), "context.id")
    if message_type == RESOURCE_LINK:
        link = body.get(LTI + "resource_link")
        if not isinstance(link, dict):
            raise LaunchProblem(_l("Missing resource link"), _l("a resource link launch needs one"))
        _check_id(link.get("id"), "resource_link.id")
    else:
        _check_deep_linking(body.get(DL + "deep_linking_settings"))
    check_target(body.get(LTI + "target_link_uri"), base_url)
    for key, value in body.items():
        if isinstance(value, str) and len(value) > MAX_TEXT:
            raise LaunchProblem(
                _l("Oversized claim"),
                _l("%(key)s is %(length)s characters long", key=repr(key), length=len(value)),
            )
    return str(message_type)


def is_teacher(body: Mapping[str, Any]) -> bool:
    """Return whether the launch's roles make the user staff of the course."""
    roles = body.get(LTI + "roles") or []
    return any(str(role).rsplit("#", 1)[-1] in TEACHER_ROLES for role in roles)


def _check_id(value: object, name: str) -> None:
    if not isinstance(value, str) or not value:
        raise LaunchProblem(
            _l("Missing %(name)s", name=name), _l("the id_token has no %(name)s", name=name)
        )
    if len(value) > MAX_ID:
        raise LaunchProblem(
            _l("Oversized %(name)s", name=name),
            _l(
                "%(name)s is %(length)s characters; at most %(most)s allowed",
                name=name,
                length=len(value),
                most=MAX_ID,
            ),
        )


def _check_deep_linking(settings: object) -> None:
    if not isinstance(settings, dict):
        raise LaunchProblem(_l("Missing deep linking settings"), _l("the request carries none"))
    if not isinstance(settings.get("deep_link_return_url"), str):
        raise LaunchProblem(_l("Missing return URL"), _l("deep_link_return_url is required"))
    for key in ("deep_link_return_url", "data"):
        if len(str(settings.get(key, ""))) > 2048:
            raise LaunchProblem(
                _l("Oversized claim"), _l("deep_linking_settings.%(key)s is too long", key=key)
            )
    accepted = settings.get("accept_types") or []
    if "ltiResourceLink" not in accepted:
        raise LaunchProblem(
            _l("Unsupported content type"),
            _l(
                "the LMS accepts %(accepted)s; this tool returns ltiResourceLink items",
                accepted=repr(accepted),
            ),
            _l("the deep linking placement in the LMS"),
        )


def check_target(target: object, base_url: str) -> None:
    """Refuse a target_link_uri that is not a URL of this tool."""
    if not isinstance(target, str):
        raise LaunchProblem(
            _l("Missing target_link_uri"), _l("the id_token has no target_link_uri")
        )
    ours, theirs = urlsplit(base_url), urlsplit(target)
    if (theirs.scheme, theirs.netloc) != (ours.scheme, ours.netloc) or not theirs.path.startswith(
        ours.path.rstrip("/") + "/"
    ):
        raise LaunchProblem(
            _l("Foreign target_link_uri"),
            _l(
                "%(target)s is not a URL of this tool (%(base_url)s)",
                target=repr(target),
                base_url=base_url,
            ),
            _l("the tool's launch URL registered in the LMS"),
        )
