"""The OAuth2 token endpoint (client_credentials + private_key_jwt) and bearer-token checks."""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import jwt

from demo import assertions
from demo.lms_errors import DemoError

if TYPE_CHECKING:
    from demo.platform import DemoPlatform

LINEITEM = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"
LINEITEM_READONLY = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly"
RESULT_READONLY = "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly"
SCORE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
MEMBERSHIPS = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
AGS_SCOPES = (LINEITEM, LINEITEM_READONLY, RESULT_READONLY, SCORE)
ALL_SCOPES = (*AGS_SCOPES, MEMBERSHIPS)
JWT_BEARER = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


@dataclass(frozen=True)
class Access:
    """Who a valid bearer token speaks for, and what it may do."""

    client_id: str
    scopes: frozenset[str]


def issue(platform: DemoPlatform, form: Mapping[str, str]) -> dict[str, Any]:
    """Check a token request strictly and return the RFC 6749 token response."""
    if platform.config.plays.canvas_tokens:
        return _canvas_issue(platform, form)
    if form.get("grant_type") != "client_credentials":
        raise DemoError(400, "grant_type must be client_credentials", "unsupported_grant_type")
    if form.get("client_assertion_type") != JWT_BEARER:
        raise DemoError(400, f"client_assertion_type must be {JWT_BEARER}")
    assertion = form.get("client_assertion", "")
    requested = form.get("scope", "").split()
    if not assertion:
        raise DemoError(400, "client_assertion is missing")
    if not requested:
        raise DemoError(400, "scope is missing", "invalid_scope")

    try:
        claims = assertions.peek(assertion)
        client_id = str(claims.get("sub") or claims.get("iss") or "")
        tool = platform.records.tool(client_id)
        if tool is None:
            raise DemoError(401, f"unknown client id {client_id!r}")
        if not tool.active:
            raise DemoError(401, f"client {client_id!r} is registered but not activated yet")
        claims = assertions.verify(assertion, tool, platform.config.leeway_s)
        if claims.get("iss") != client_id or claims.get("sub") != client_id:
            raise DemoError(401, "the client assertion's iss and sub must both be the client id")
        audience = platform.token_audience
        if not assertions.audience_includes(claims, audience):
            if platform.config.plays.token_audience:
                # Brightspace's refusal of an assertion it cannot validate (pylti1.3#43)
                said = f"Error validating assertion: the aud must be {audience}"
                answer = {"error": "invalid_grant", "error_description": said}
                raise DemoError(400, said, "invalid_grant", body=answer)
            raise DemoError(401, f"the client assertion's aud must be {audience}")
        jti = claims.get("jti")
        if not isinstance(jti, str) or not jti:
            raise DemoError(401, "the client assertion has no jti")
        if not platform.records.remember("jti", f"{client_id} {jti}", float(claims["exp"])):
            raise DemoError(401, f"the client assertion's jti {jti!r} was used before")
    except DemoError as exc:
        if exc.body is not None:
            raise  # an LMS's own refusal, as it answers it
        # RFC 6749 5.2: every failure to authenticate the client is invalid_client.
        raise DemoError(401, exc.message, "invalid_client") from exc

    refused = sorted(set(requested) - set(tool.scopes))
    if platform.config.plays.scope_checkboxes:
        refused = _unticked(platform, client_id, requested)
        if refused:
            # Sakai: the first scope not allowed fails the whole request; no down-scoping
            raise DemoError(400, refused[0], "invalid_scope")
    if refused:
        raise DemoError(
            400, f"scopes not granted to this tool: {' '.join(refused)}", "invalid_scope"
        )
    now = int(time.time())
    lifetime = platform.config.access_token_lifetime_s
    scope = " ".join(dict.fromkeys(requested))
    token = platform.key.sign(
        {
            "iss": platform.issuer,
            "aud": platform.issuer,
            "sub": client_id,
            "scope": scope,
            "iat": now,
            "exp": now + lifetime,
            "jti": uuid.uuid4().hex,
        }
    )
    return {"access_token": token, "token_type": "Bearer", "expires_in": lifetime, "scope": scope}


def _unticked(platform: DemoPlatform, client_id: str, requested: list[str]) -> list[str]:
    """Return the requested scopes a Sakai tool's checkboxes do not allow, as
    LTI13Servlet.java's token handler decides: lineitem(.readonly) needs "create grade
    columns", score and result.readonly need both boxes, NRPS needs "return grades"."""
    boxes = platform.checkboxes(client_id)
    allowed = {
        LINEITEM: boxes.lineitems,
        LINEITEM_READONLY: boxes.lineitems,
        SCORE: boxes.outcomes and boxes.lineitems,
        RESULT_READONLY: boxes.outcomes and boxes.lineitems,
        MEMBERSHIPS: boxes.outcomes,
    }
    return [s for s in requested if not allowed.get(s, False)]


def check(platform: DemoPlatform, authorization: str | None, any_of: tuple[str, ...]) -> Access:
    """Return the access of a bearer token that holds one of `any_of`; 401/403 otherwise."""
    if platform.config.plays.canvas_tokens:
        return _canvas_check(platform, authorization, any_of)
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise DemoError(
            401, "an 'Authorization: Bearer <token>' header is required", "invalid_token"
        )
    try:
        claims = jwt.decode(
            token.strip(),
            platform.key.public_pem,
            algorithms=["RS256"],
            audience=platform.issuer,
            issuer=platform.issuer,
            options={"require": ["exp", "iat", "sub", "scope"]},
        )
    except jwt.ExpiredSignatureError as exc:
        raise DemoError(401, "the access token has expired", "invalid_token") from exc
    except jwt.PyJWTError as exc:
        raise DemoError(401, f"the access token is invalid: {exc}", "invalid_token") from exc
    tool = platform.records.tool(claims["sub"])
    if tool is None or not tool.active:
        raise DemoError(401, "the access token's client is not an active tool", "invalid_token")
    scopes = frozenset(str(claims["scope"]).split())
    if not scopes & set(any_of):
        raise DemoError(
            403,
            f"this needs one of the scopes {' '.join(any_of)}; the token has {claims['scope']}",
            "insufficient_scope",
        )
    return Access(tool.client_id, scopes)


# Canvas: oauth2_provider_controller.rb#token, lib/canvas/oauth/provider.rb (valid_scopes?),
# asymmetric_client_credentials_provider.rb, client_credentials_provider.rb (the token), and
# lib/lti/ims/advantage_access_token.rb with concerns/lti_services.rb (checking it).
CANVAS_INVALID_SCOPE = (
    "A requested scope is invalid, unknown, malformed, or exceeds the scope granted by the "
    "resource owner. The following scopes were requested, but not granted: "
)


def _canvas_issue(platform: DemoPlatform, form: Mapping[str, str]) -> dict[str, Any]:
    if form.get("grant_type") != "client_credentials":
        raise DemoError(
            400,
            "The grant_type you requested is not currently supported",
            "unsupported_grant_type",
        )
    assertion = form.get("client_assertion", "")
    if form.get("client_assertion_type") != JWT_BEARER or not assertion:
        raise DemoError(400, "client_assertion is missing or of another type")
    # every failure of the assertion is a 400 invalid_request; the jti is not checked
    claims = assertions.peek(assertion)
    client_id = str(claims.get("sub") or "")
    tool = platform.records.tool(client_id)
    if tool is None or not tool.active:
        raise DemoError(400, "JWS signature invalid.")
    try:
        claims = assertions.verify(assertion, tool, platform.config.leeway_s)
    except DemoError as exc:
        raise DemoError(400, exc.message) from exc
    missing = [c for c in ("sub", "aud", "exp", "iat", "jti", "iss") if c not in claims]
    if missing:
        raise DemoError(400, f"the following assertions are missing: {','.join(missing)}")
    if not assertions.audience_includes(claims, platform.token_url):
        raise DemoError(400, "the 'aud' is invalid")
    requested = (form.get("scope") or form.get("scopes") or "").split()
    refused = [s for s in requested if s not in tool.scopes]
    if not requested or refused:  # all or nothing: no down-scoping
        raise DemoError(400, CANVAS_INVALID_SCOPE + " ".join(refused), "invalid_scope")
    now = int(time.time())
    scope = " ".join(dict.fromkeys(requested))
    token = platform.key.sign(
        {
            "iss": platform.issuer,
            "aud": platform.token_url,  # the token URL of the host asked
            "sub": client_id,
            "scopes": scope,
            "iat": now,
            "exp": now + 3600,  # client_credentials_provider.rb: ttl 1.hour
            "jti": uuid.uuid4().hex,
        }
    )
    return {"access_token": token, "token_type": "Bearer", "expires_in": 3600, "scope": scope}


def _canvas_check(
    platform: DemoPlatform, authorization: str | None, any_of: tuple[str, ...]
) -> Access:
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise DemoError(401, "Missing access token")
    try:
        claims = jwt.decode(
            token.strip(),
            platform.key.public_pem,
            algorithms=["RS256"],
            audience=platform.token_url,
            issuer=platform.issuer,
            options={"require": ["exp", "iat", "sub", "aud", "iss", "jti"]},
        )
    except jwt.ExpiredSignatureError as exc:
        raise DemoError(401, "Access token expired") from exc
    except jwt.InvalidSignatureError as exc:
        raise DemoError(401, "Access token invalid - signature likely incorrect") from exc
    except jwt.InvalidAudienceError as exc:
        raise DemoError(401, "Invalid access token field/s: the 'aud' is invalid") from exc
    except jwt.PyJWTError as exc:
        raise DemoError(401, f"Invalid access token field/s: {exc}") from exc
    tool = platform.records.tool(str(claims["sub"]))
    if tool is None or not tool.active:
        raise DemoError(401, "Unknown or inactive Developer Key")
    scopes = frozenset(str(claims.get("scopes", "")).split())
    if not scopes & set(any_of):
        raise DemoError(401, "Insufficient permissions")
    return Access(tool.client_id, scopes)


def client_of(authorization: str | None) -> str | None:
    """Return the client id a bearer token names, unverified (the throttle's bucket key)."""
    _, _, token = (authorization or "").partition(" ")
    try:
        sub = jwt.decode(token.strip(), options={"verify_signature": False}).get("sub")
    except jwt.PyJWTError:
        return None
    return sub if isinstance(sub, str) else None
