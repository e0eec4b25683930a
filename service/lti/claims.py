"""Checks of a decoded id_token's claims that pylti1p3 leaves out. Pure functions.

Each check returns a LaunchProblem naming what is wrong and what an admin should check;
the launch view turns it into a 4xx page and a log line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self
from urllib.parse import urlsplit

from core.errors import Refusal
from core.messages import Joined, Message, Text, say, verbatim

LTI = "https://purl.imsglobal.org/spec/lti/claim/"
DL = "https://purl.imsglobal.org/spec/lti-dl/claim/"
RESOURCE_LINK = "LtiResourceLinkRequest"
DEEP_LINKING = "LtiDeepLinkingRequest"
SUBMISSION_REVIEW = "LtiSubmissionReviewRequest"
MESSAGE_TYPES = (RESOURCE_LINK, DEEP_LINKING, SUBMISSION_REVIEW)
MAX_ID = 255
MAX_TEXT = 4096
TEACHER_ROLES = ("Instructor", "TeachingAssistant", "Administrator", "ContentDeveloper")


class LtiProblem(Refusal):
    """An LTI refusal: a short title, the detail, and what the admin should check."""

    code = "launch_refused"
    check_by_default: Message

    def __init__(
        self, title: Text, detail: Text | str, check: Text | None = None, status: int = 400
    ) -> None:
        self.title = title
        self.detail = detail if isinstance(detail, Message | Joined) else verbatim(detail)
        self.check = self.check_by_default if check is None else check
        super().__init__(say("{title}: {detail}", title=title, detail=self.detail), status=status)

    def anew(self) -> Self:
        """Return the same problem, to raise again (a cached failure, with a fresh traceback)."""
        return type(self)(self.title, self.detail, self.check, self.status)


class LaunchProblem(LtiProblem):
    """Why a launch was refused (cached and raised again by a key set's failure)."""

    check_by_default = say(
        "that the activity was opened from the LMS just now (not replayed or bookmarked), and "
        "that the tool's registration there matches this one: issuer, client id, deployment "
        "id and key set URL"
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
        say("No client id"),
        say("the id_token has several audiences and no 'azp' naming which one is this tool"),
        say("the platform's LTI 1.3 settings for this tool"),
    )


def check_audience(body: Mapping[str, Any], client_id: str) -> None:
    """Require our client id among the audiences, and azp to name it when present or needed."""
    aud = body.get("aud")
    audiences = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
    if client_id not in audiences:
        raise LaunchProblem(
            say("Wrong audience"),
            say(
                "the id_token is for {audiences}, not this tool's client id {client_id}",
                audiences=repr(audiences),
                client_id=repr(client_id),
            ),
            say("the client id registered for this tool in the LMS and here"),
        )
    azp = body.get("azp")
    if (azp is not None or len(audiences) > 1) and azp != client_id:
        raise LaunchProblem(
            say("Wrong authorized party"),
            say(
                "'azp' is {azp}; it must be this tool's client id {client_id}",
                azp=repr(azp),
                client_id=repr(client_id),
            ),
            say("the client id registered for this tool"),
        )


def check_message(body: Mapping[str, Any], base_url: str) -> str:
    """Check version, message type, ids, roles, sizes and target; return the message type."""
    version = body.get(LTI + "version")
    if version != "1.3.0":
        raise LaunchProblem(
            say("Unsupported LTI version"),
            say("version is {version}, not '1.3.0'", version=repr(version)),
        )
    message_type = body.get(LTI + "message_type")
    if message_type not in MESSAGE_TYPES:
        raise LaunchProblem(
            say("Unsupported message type"),
            say(
                "{message_type} is not one of {types}",
                message_type=repr(message_type),
                types=", ".join(MESSAGE_TYPES),
            ),
            say("the placement configured in the LMS"),
        )
    _check_id(body.get("sub"), say("sub (the user id)"))
    _check_id(body.get(LTI + "deployment_id"), "deployment_id")
    roles = body.get(LTI + "roles")
    if not isinstance(roles, list) or not all(isinstance(r, str) for r in roles):
        refused = say("the roles claim must be a list of role URIs")
        raise LaunchProblem(say("Missing roles"), refused)
    context = body.get(LTI + "context")
    if context is not None:
        if not isinstance(context, dict):
            raise LaunchProblem(say("Bad context"), say("the context claim must be an object"))
        _check_id(context.get("id"), "context.id")
    if message_type == DEEP_LINKING:
        _check_deep_linking(body.get(DL + "deep_linking_settings"))
    else:
        link = body.get(LTI + "resource_link")
        if not isinstance(link, dict):
            needed = say("a resource link launch needs one")
            raise LaunchProblem(say("Missing resource link"), needed)
        _check_id(link.get("id"), "resource_link.id")
    if message_type == SUBMISSION_REVIEW:
        for_user = body.get(LTI + "for_user")
        if not isinstance(for_user, dict):
            needed = say("a submission review names the student whose work it opens")
            raise LaunchProblem(say("Missing for_user"), needed)
        _check_id(for_user.get("user_id"), "for_user.user_id")
    check_target(body.get(LTI + "target_link_uri"), base_url)
    for key, value in body.items():
        if isinstance(value, str) and len(value) > MAX_TEXT:
            raise LaunchProblem(
                say("Oversized claim"),
                say("{key} is {length} characters long", key=repr(key), length=len(value)),
            )
    return str(message_type)


def is_teacher(body: Mapping[str, Any]) -> bool:
    """Return whether the launch's roles make the user staff of the course."""
    roles = body.get(LTI + "roles") or []
    return any(str(role).rsplit("#", 1)[-1] in TEACHER_ROLES for role in roles)


def _check_id(value: object, name: str | Message) -> None:
    if not isinstance(value, str) or not value:
        raise LaunchProblem(
            say("Missing {name}", name=name), say("the id_token has no {name}", name=name)
        )
    if len(value) > MAX_ID:
        raise LaunchProblem(
            say("Oversized {name}", name=name),
            say(
                "{name} is {length} characters; at most {most} allowed",
                name=name,
                length=len(value),
                most=MAX_ID,
            ),
        )


def _check_deep_linking(settings: object) -> None:
    if not isinstance(settings, dict):
        raise LaunchProblem(say("Missing deep linking settings"), say("the request carries none"))
    if not isinstance(settings.get("deep_link_return_url"), str):
        raise LaunchProblem(say("Missing return URL"), say("deep_link_return_url is required"))
    for key in ("deep_link_return_url", "data"):
        if len(str(settings.get(key, ""))) > 2048:
            raise LaunchProblem(
                say("Oversized claim"), say("deep_linking_settings.{key} is too long", key=key)
            )
    accepted = settings.get("accept_types") or []
    if "ltiResourceLink" not in accepted:
        raise LaunchProblem(
            say("Unsupported content type"),
            say(
                "the LMS accepts {accepted}; this tool returns ltiResourceLink items",
                accepted=repr(accepted),
            ),
            say("the deep linking placement in the LMS"),
        )


def check_target(target: object, base_url: str) -> None:
    """Refuse a target_link_uri that is not a URL of this tool."""
    if not isinstance(target, str):
        raise LaunchProblem(
            say("Missing target_link_uri"), say("the id_token has no target_link_uri")
        )
    ours, theirs = urlsplit(base_url), urlsplit(target)
    if (theirs.scheme, theirs.netloc) != (ours.scheme, ours.netloc) or not theirs.path.startswith(
        ours.path.rstrip("/") + "/"
    ):
        raise LaunchProblem(
            say("Foreign target_link_uri"),
            say(
                "{target} is not a URL of this tool ({base_url})",
                target=repr(target),
                base_url=base_url,
            ),
            say("the tool's launch URL registered in the LMS"),
        )
