"""Checking JWTs the tool signs (client assertions, deep-linking responses) with its JWKS."""

from __future__ import annotations

import time
from typing import Any

import jwt
from lti1p3platform.exceptions import InvalidKeySetUrl, LtiException
from lti1p3platform.registration import Registration

from demo.adapters import PlatformConf
from demo.lms_errors import DemoError
from demo.lms_models import Tool


class _ToolKeySet(PlatformConf):
    """lti1p3platform's key-set fetch and kid lookup, for one tool, with exp/iat required."""

    def init_platform_config(self, **kwargs: Any) -> None:
        super().init_platform_config(**kwargs)
        # iat is checked below with our leeway; aud is checked by each caller (they differ).
        self._jwt_verify_options = {
            "verify_aud": False,
            "verify_iat": False,
            "require": ["exp", "iat"],
        }


def peek(token: str) -> dict[str, Any]:
    """Return a JWT's claims WITHOUT checking it, to find which tool claims to have signed it."""
    try:
        claims = jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError as exc:
        raise DemoError(400, f"not a readable JWT: {exc}") from exc
    if not isinstance(claims, dict):
        raise DemoError(400, "the JWT's payload is not a JSON object")
    return claims


def verify(token: str, tool: Tool, leeway_s: int) -> dict[str, Any]:
    """Verify `token`'s RS256 signature with the tool's key set; require live exp and sane iat."""
    if jwt.get_unverified_header(token).get("alg") != "RS256":
        raise DemoError(400, "the JWT must be signed with RS256")
    registration = Registration().set_client_id(tool.client_id)
    if tool.jwks is not None:
        registration.set_tool_key_set(tool.jwks)
    elif tool.jwks_url:
        registration.set_tool_key_set_url(tool.jwks_url)
    keys = _ToolKeySet(registration=registration)
    try:
        claims: dict[str, Any] = keys.tool_validate_and_decode(token)
    except jwt.ExpiredSignatureError as exc:
        raise DemoError(400, "the JWT has expired (exp is in the past)") from exc
    except jwt.MissingRequiredClaimError as exc:
        raise DemoError(400, f"the JWT lacks the {exc.claim!r} claim") from exc
    except jwt.InvalidSignatureError as exc:
        raise DemoError(400, "the JWT's signature does not verify with the tool's key") from exc
    except jwt.PyJWTError as exc:
        raise DemoError(400, f"the JWT is invalid: {exc}") from exc
    except (LtiException, InvalidKeySetUrl) as exc:
        raise DemoError(
            400, f"no key of the tool's key set ({tool.jwks_url or 'inline'}) matches: {exc}"
        ) from exc
    iat = claims["iat"]
    if not isinstance(iat, int | float) or iat > time.time() + leeway_s:
        raise DemoError(400, "the JWT's iat is not a time in the past")
    return claims


def audience_includes(claims: dict[str, Any], expected: str) -> bool:
    """Return whether the aud claim (a string or a list) names `expected`."""
    aud = claims.get("aud")
    return aud == expected or (isinstance(aud, list) and expected in aud)
