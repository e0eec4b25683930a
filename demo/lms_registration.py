"""Registering tools: by hand, and by LTI Dynamic Registration (the platform's side)."""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import requests

from demo.lms_errors import DemoError
from demo.lms_models import Tool
from demo.tokens import ALL_SCOPES
from service.outbound import loopback

if TYPE_CHECKING:
    from demo.platform import DemoPlatform

TOOL_CONFIG = "https://purl.imsglobal.org/spec/lti-tool-configuration"
MESSAGE_TYPES = ("LtiResourceLinkRequest", "LtiDeepLinkingRequest")
CANVAS_CONFIG_URL = "https://canvas.instructure.com/lti/registration_config_url"


def check_url(url: object, what: str) -> str:
    """Return `url` if it is absolute https, or http on a loopback host; refuse otherwise."""
    if not isinstance(url, str) or not url:
        raise DemoError(400, f"{what} is missing", "invalid_client_metadata")
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return url
    if parts.scheme == "http" and parts.hostname and loopback(parts.hostname):
        return url
    raise DemoError(
        400,
        f"{what} must be an https URL (http only on loopback): {url!r}",
        "invalid_client_metadata",
    )


def register_tool(
    platform: DemoPlatform,
    *,
    name: str,
    login_url: str,
    launch_url: str,
    jwks_url: str | None = None,
    jwks: dict[str, Any] | None = None,
    redirect_uris: list[str] | tuple[str, ...] | None = None,
    deep_link_url: str | None = None,
    scopes: list[str] | tuple[str, ...] = ALL_SCOPES,
    client_id: str | None = None,
    deployment_id: str | None = None,
    custom: dict[str, str] | None = None,
    active: bool = True,
) -> Tool:
    """Register a tool as an admin would by hand; return it with its client and deployment id."""
    if jwks_url is None and jwks is None:
        raise DemoError(400, "a tool needs a jwks_url or an inline jwks", "invalid_client_metadata")
    if jwks is not None and not isinstance(jwks.get("keys"), list):
        raise DemoError(
            400, "jwks must be a JSON key set {'keys': [...]}", "invalid_client_metadata"
        )
    uris = list(redirect_uris or dict.fromkeys([launch_url, deep_link_url or launch_url]))
    if platform.config.plays.canvas_deployment_ids:
        # a developer key's global id (10000000000001, ...) and a deployment id
        # "<ContextExternalTool id>:<40 hex context opaque id>" (context_external_tool.rb)
        client_id = client_id or str(10000000000000 + secrets.randbelow(10**6))
        deployment_id = deployment_id or f"{secrets.randbelow(999) + 1}:{secrets.token_hex(20)}"
    tool = Tool(
        client_id=client_id or f"demo-{secrets.token_hex(6)}",
        deployment_id=deployment_id or f"1:{secrets.token_hex(6)}",
        name=name,
        login_url=check_url(login_url, "login_url"),
        launch_url=check_url(launch_url, "launch_url"),
        redirect_uris=tuple(check_url(u, "redirect_uri") for u in uris),
        jwks_url=check_url(jwks_url, "jwks_url") if jwks_url is not None else None,
        jwks=jwks,
        deep_link_url=check_url(deep_link_url, "deep_link_url") if deep_link_url else None,
        scopes=tuple(s for s in scopes if s in ALL_SCOPES),
        custom=dict(custom or {}),
        active=active,
    )
    platform.records.put_tool(tool)
    return tool


def start_registration(platform: DemoPlatform, register_url: str) -> str:
    """Issue a one-time registration token; return the tool URL a browser must open."""
    if not platform.config.plays.dynamic_registration:
        raise DemoError(404, "this LMS registers tools by client id, not dynamically")
    check_url(register_url, "the tool's registration URL")
    token = secrets.token_urlsafe(24)
    platform.records.grant("registration", token, {}, platform.config.registration_token_lifetime_s)
    # like Moodle (moodle_url(...)->param()): the URL's own query stays, the two are added
    parts = urlsplit(register_url)
    query = [
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if k not in ("openid_configuration", "registration_token")
    ]
    query += [("openid_configuration", platform.openid_config_url), ("registration_token", token)]
    return urlunsplit(parts._replace(query=urlencode(query), fragment=""))


def complete_registration(
    platform: DemoPlatform, authorization: str | None, body: object
) -> dict[str, Any]:
    """Check a tool's registration request; register it and return the registration response."""
    scheme, _, token = (authorization or "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or platform.records.peek("registration", token) is None:
        raise DemoError(401, "registration token unknown, already used or expired", "invalid_token")
    if platform.config.plays.canvas_registration_checks:
        _canvas_checks(body)
    meta = _check_metadata(body, same_domain=not platform.config.plays.canvas_registration_checks)
    conf = meta[TOOL_CONFIG]
    messages = conf.get("messages", [])
    deep_link_url = next(
        (
            m.get("target_link_uri") or conf["target_link_uri"]
            for m in messages
            if m["type"] == "LtiDeepLinkingRequest"
        ),
        None,
    )
    granted = [s for s in str(meta.get("scope", "")).split() if s in ALL_SCOPES]
    # Only now is the token spent: a tool that sent bad metadata may fix it and retry.
    if platform.records.take("registration", token) is None:
        raise DemoError(401, "registration token already used", "invalid_token")
    tool = register_tool(
        platform,
        name=str(meta.get("client_name") or conf["domain"]),
        login_url=meta["initiate_login_uri"],
        launch_url=conf["target_link_uri"],
        jwks_url=meta["jwks_uri"],
        redirect_uris=meta["redirect_uris"],
        deep_link_url=deep_link_url,
        scopes=granted,
        custom=conf.get("custom_parameters") or {},
        active=platform.config.activate_registrations,
        deployment_id=platform.config.plays.registration_deployment_id,
    )
    if not platform.config.plays.registration_answers_deployment:
        # Canvas makes the deployment when the admin installs the key: the answer has no
        # deployment_id, the tool meets it at the first launch (dynamic_registration_controller.rb)
        config_url = platform.config.url(f"/api/lti/registrations/{tool.client_id}/view")
        return {
            **{k: v for k, v in meta.items() if k != TOOL_CONFIG},
            "client_id": tool.client_id,
            "scope": " ".join(tool.scopes),
            TOOL_CONFIG: {**conf, CANVAS_CONFIG_URL: config_url},
        }
    return {
        **{k: v for k, v in meta.items() if k != TOOL_CONFIG},
        "client_id": tool.client_id,
        "scope": " ".join(tool.scopes),
        TOOL_CONFIG: {**conf, "deployment_id": tool.deployment_id},
    }


def _check_metadata(body: object, same_domain: bool = True) -> dict[str, Any]:
    def refuse(message: str) -> DemoError:
        return DemoError(400, message, "invalid_client_metadata")

    if not isinstance(body, dict):
        raise refuse("the registration request must be a JSON object")
    if body.get("application_type") != "web":
        raise refuse("application_type must be 'web'")
    if "id_token" not in (body.get("response_types") or []):
        raise refuse("response_types must include 'id_token'")
    grants = body.get("grant_types") or []
    if "implicit" not in grants or "client_credentials" not in grants:
        raise refuse("grant_types must include 'implicit' and 'client_credentials'")
    if body.get("token_endpoint_auth_method") != "private_key_jwt":
        raise refuse("token_endpoint_auth_method must be 'private_key_jwt'")
    uris = body.get("redirect_uris")
    if not isinstance(uris, list) or not uris:
        raise refuse("redirect_uris must be a non-empty list")
    check_url(body.get("jwks_uri"), "jwks_uri")
    conf = body.get(TOOL_CONFIG)
    if not isinstance(conf, dict):
        raise refuse(f"the {TOOL_CONFIG} object is missing")
    domain = conf.get("domain")
    if not isinstance(domain, str) or not domain:
        raise refuse(f"{TOOL_CONFIG}.domain is missing")
    messages = conf.get("messages", [])
    if not isinstance(messages, list) or not all(
        isinstance(m, dict) and m.get("type") in MESSAGE_TYPES for m in messages
    ):
        raise refuse(f"{TOOL_CONFIG}.messages must be a list of {' or '.join(MESSAGE_TYPES)}")
    custom = conf.get("custom_parameters", {})
    if not isinstance(custom, dict) or not all(isinstance(v, str) for v in custom.values()):
        raise refuse(f"{TOOL_CONFIG}.custom_parameters must map names to strings")
    # Like Moodle: every URL the browser is sent to must be on the tool's declared domain.
    on_domain = [
        (body.get("initiate_login_uri"), "initiate_login_uri"),
        (conf.get("target_link_uri"), f"{TOOL_CONFIG}.target_link_uri"),
        *((u, "redirect_uri") for u in uris),
        *(
            (m["target_link_uri"], "a message's target_link_uri")
            for m in messages
            if "target_link_uri" in m
        ),
    ]
    for url, what in on_domain:
        if urlsplit(check_url(url, what)).netloc.lower() != domain.lower() and same_domain:
            raise refuse(f"{what} {url!r} is not on the tool's domain {domain!r}")
    return body


# lib/schemas/lti_configuration.rb (Schemas::LtiConfiguration) and doc/api/lti_dev_key_config.md
DEVELOPER_KEY_REQUIRED = ("title", "description", "target_link_uri", "oidc_initiation_url")
CANVAS_PLATFORM = "canvas.instructure.com"
PRIVACY_LEVELS = ("anonymous", "public", "name_only", "email_only")
PLACEMENT_MESSAGES = ("LtiResourceLinkRequest", "LtiDeepLinkingRequest")


def developer_key(
    platform: DemoPlatform, url: object, json_config: object, redirect_uris: object
) -> Tool:
    """Make a developer key from a Canvas JSON configuration, turned ON and deployed.

    The JSON is checked as Schemas::LtiConfiguration checks it; refusals are 422 with Canvas's
    `{"errors": [...]}`. Redirect URIs are not part of the JSON: the admin types them (default:
    the target_link_uri).
    """
    if json_config is None:
        config = _fetch_config(check_url(url, "the JSON configuration URL"))
    else:
        config = json_config
    problems = _config_problems(config)
    if problems:
        body = {"errors": [{"message": p} for p in problems]}
        raise DemoError(422, "; ".join(problems), body=body)
    assert isinstance(config, dict)
    uris = redirect_uris or [config["target_link_uri"]]
    if not isinstance(uris, list) or not all(isinstance(u, str) for u in uris):
        raise DemoError(400, "redirect_uris must be a list of URLs")
    placements = [p for e in config.get("extensions") or [] for p in e["settings"]["placements"]]
    deep = next(
        (
            p.get("target_link_uri") or config["target_link_uri"]
            for p in placements
            if p.get("message_type") == "LtiDeepLinkingRequest"
        ),
        None,
    )
    return register_tool(
        platform,
        name=config["title"],
        login_url=config["oidc_initiation_url"],
        launch_url=config["target_link_uri"],
        jwks_url=config.get("public_jwk_url"),
        jwks={"keys": [config["public_jwk"]]} if config.get("public_jwk") else None,
        redirect_uris=uris,
        deep_link_url=deep,
        scopes=[s for s in config.get("scopes") or [] if s in ALL_SCOPES],
        custom={str(k): str(v) for k, v in (config.get("custom_fields") or {}).items()},
    )


def _fetch_config(url: str) -> object:
    try:
        answer = requests.get(url, timeout=10)
        answer.raise_for_status()
        return answer.json()
    except (requests.RequestException, ValueError) as exc:
        raise DemoError(422, f"the JSON configuration could not be read from {url}: {exc}") from exc


def _config_problems(config: object) -> list[str]:
    if not isinstance(config, dict):
        return ["The JSON configuration must be an object"]
    problems = [
        f"The property '#/' did not contain a required property of '{name}'"
        for name in DEVELOPER_KEY_REQUIRED
        if not isinstance(config.get(name), str) or not config.get(name)
    ]
    if not config.get("public_jwk") and not config.get("public_jwk_url"):
        problems.append("public_jwk or public_jwk_url is required")
    scopes = config.get("scopes") or []
    unknown = [s for s in scopes if s not in ALL_SCOPES] if isinstance(scopes, list) else scopes
    if unknown:
        problems.append(f"Invalid scopes: {unknown}")
    extensions = config.get("extensions") or []
    if not isinstance(extensions, list):
        return [*problems, "extensions must be a list"]
    for n, ext in enumerate(extensions):
        if not isinstance(ext, dict) or ext.get("platform") != CANVAS_PLATFORM:
            problems.append(f"extensions[{n}].platform must be {CANVAS_PLATFORM}")
            continue
        settings = ext.get("settings")
        if not isinstance(settings, dict) or not isinstance(settings.get("placements"), list):
            problems.append(f"extensions[{n}].settings did not contain 'placements'")
            continue
        if ext.get("privacy_level", "anonymous") not in PRIVACY_LEVELS:
            problems.append(f"extensions[{n}].privacy_level must be one of {PRIVACY_LEVELS}")
        for placement in settings["placements"]:
            if not isinstance(placement, dict) or not placement.get("placement"):
                problems.append(f"extensions[{n}]: a placement without a name")
            elif placement.get("message_type", PLACEMENT_MESSAGES[0]) not in PLACEMENT_MESSAGES:
                problems.append(f"extensions[{n}]: message_type of {placement['placement']}")
    return problems


def _canvas_checks(body: object) -> None:
    """Refuse a registration as Lti::IMS::Registration's validations do (the body's exact
    shape is not in Canvas's controller: RecordInvalid, so the A.0 422 `{"errors": [...]}`)."""
    if not isinstance(body, dict):
        return  # _check_metadata refuses it
    problems = []
    conf = body.get(TOOL_CONFIG)
    if isinstance(conf, dict):
        for name in ("claims", "messages", "domain"):
            if name not in conf:
                problems.append(f"{TOOL_CONFIG}.{name} is required")
        if "://" in str(conf.get("domain", "")):
            problems.append(f"{TOOL_CONFIG}.domain must be a host name, without a scheme")
    scopes = [s for s in str(body.get("scope", "")).split() if s != "openid"]
    unknown = [s for s in scopes if s not in ALL_SCOPES]
    if unknown:
        problems.append(f"Invalid scopes: {' '.join(unknown)}")
    if problems:
        body_out = {"errors": [{"field": "lti_registration", "message": p} for p in problems]}
        raise DemoError(422, "; ".join(problems), body=body_out)
