"""Calls from the tool to a platform (AGS scores and line items, NRPS rosters) via pylti1p3.

pylti1p3's ServiceConnector asks for a new access token on every connector and sets no HTTP
timeouts; here one TokenCache per process keeps each platform's tokens until shortly before
they expire, and every request goes through the outbound client (service/outbound: the address
rule, a size cap and a total deadline).
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from http import HTTPStatus

import jwt
import requests
from pylti1p3.exception import LtiException, LtiServiceException
from pylti1p3.registration import Registration
from pylti1p3.service_connector import ServiceConnector

from core.errors import GraderError
from core.messages import Message, say
from core.platforms import AWAY_STATUSES
from service.lti.keys import SigningKey
from service.outbound import Fault, Unreadable, document, explain, status_of, unanswered

SCOPE_LINEITEM = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"
SCOPE_SCORE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
SCOPE_RESULT = "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly"
SCOPE_NRPS = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
AGS_SCOPES = (SCOPE_LINEITEM, SCOPE_SCORE, SCOPE_RESULT)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PlatformAccess:
    """What the tool needs to call one platform's services."""

    platform_id: int
    issuer: str
    client_id: str
    auth_token_url: str
    key: SigningKey
    # the `aud` of the client assertion when it is not the token URL: Brightspace's "OAuth2
    # Audience" (D2L KB 23662), the `authorization_server` of a platform's OpenID
    # configuration (1EdTech LTI Dynamic Registration 1.0)
    token_audience: str | None = None

    @property
    def audience(self) -> str:
        """Return the `aud` the token endpoint wants in the client assertion."""
        return self.token_audience or self.auth_token_url


class TokenCache:
    """Service access tokens per (platform, scopes), kept until 60 s before they expire."""

    def __init__(self) -> None:
        self._tokens: dict[tuple[int, str], tuple[str, float]] = {}
        self._lock = threading.Lock()
        self.requested = 0

    def get(self, platform_id: int, scopes: str) -> str | None:
        """Return a cached token that is still fresh, or None."""
        with self._lock:
            found = self._tokens.get((platform_id, scopes))
        if found and found[1] > time.monotonic():
            return found[0]
        return None

    def put(self, platform_id: int, scopes: str, token: str, expires_in: float) -> None:
        """Keep a token for its lifetime less a minute."""
        with self._lock:
            self.requested += 1
            self._tokens[(platform_id, scopes)] = (token, time.monotonic() + expires_in - 60)

    def forget(self, platform_id: int) -> None:
        """Drop a platform's tokens (after a 401, the platform has revoked them)."""
        with self._lock:
            for key in [k for k in self._tokens if k[0] == platform_id]:
                del self._tokens[key]


class CachingConnector(ServiceConnector):
    """pylti1p3's connector, with shared cached tokens, our key id and timeouts."""

    def __init__(self, access: PlatformAccess, cache: TokenCache, session: requests.Session):
        super().__init__(registration(access), session)
        self._access = access
        self._cache = cache

    def get_access_token(self, scopes: Sequence[str]) -> str:
        """Return a cached token for these scopes, or get one with a signed client assertion."""
        key = " ".join(sorted(scopes))
        token = self._cache.get(self._access.platform_id, key)
        if token is not None:
            return token
        now = int(time.time())
        assertion = jwt.encode(
            {
                "iss": self._access.client_id,
                "sub": self._access.client_id,
                "aud": self._access.audience,
                "iat": now - 5,
                "exp": now + 60,
                "jti": secrets.token_urlsafe(24),
            },
            self._access.key.private_pem,
            algorithm="RS256",
            headers={"kid": self._access.key.kid},
        )
        response = self._requests_session.post(
            self._access.auth_token_url,
            data={
                "grant_type": "client_credentials",
                "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
                "client_assertion": assertion,
                "scope": key,
            },
        )
        if not response.ok:
            raise LtiServiceException(response)
        try:
            # Moodle answers JSON labelled text/html: the reader reads it whatever its type
            body = document(response)
            token = str(body["access_token"])
            expires_in = float(body.get("expires_in") or 3600)
        except (ValueError, KeyError, TypeError) as exc:
            raise LtiServiceException(response) from exc
        self._cache.put(self._access.platform_id, key, token, expires_in)
        return token

    def delete(self, url: str, scopes: Sequence[str]) -> None:
        """DELETE a service resource (pylti1p3's connector only GETs and POSTs)."""
        token = self.get_access_token(scopes)
        response = self._requests_session.delete(url, headers={"Authorization": f"Bearer {token}"})
        if not response.ok:
            raise LtiServiceException(response)


def registration(access: PlatformAccess) -> Registration:
    """Return the pylti1p3 registration for calls to a platform."""
    found = (
        Registration()
        .set_issuer(access.issuer)
        .set_client_id(access.client_id)
        .set_auth_token_url(access.auth_token_url)
        .set_tool_private_key(access.key.private_pem.decode())
    )
    if access.token_audience:
        found.set_auth_audience(access.token_audience)
    return found


def describe(exc: Exception) -> str:
    """Return a one-line account of a failed platform call, fit for pages: never the LMS's answer.

    The answer may come from anything a URL can point at, so only its status reaches the
    teacher's page; the start of the answer goes to the log, for whoever runs the tool.
    A failed request is told in our words (service.outbound.explain); any other error (a
    KeyError or TypeError where pylti1p3 met an odd answer) only by its kind, and logged.
    """
    if isinstance(exc, LtiServiceException):
        response = exc.response
        if not response.ok:
            return status_of(response)
        if isinstance(exc.__cause__, Unreadable):  # our reader's words: what is wrong with it
            return f"{status_of(response)} ({exc.__cause__})"
        return f"{status_of(response)} (not the answer the tool expects)"
    if isinstance(exc, requests.RequestException | Unreadable):
        return explain(exc)
    if isinstance(exc, GraderError | LtiException):  # our sentences, and pylti1p3's fixed ones
        return str(exc)[:300]
    log.warning("platform call failed: %.500r", exc)
    return f"the LMS's answer is not what the tool expects ({type(exc).__name__})"


def away(exc: Exception) -> bool:
    """Return whether a failed platform call says the platform is away, not refusing it.

    Away: no answer (service.outbound.unanswered), an answer of AWAY_STATUSES, a token
    request's too, or Canvas's throttle (`throttled`). Any other status, or an answer the tool
    cannot read, is about this call.
    """
    if isinstance(exc, LtiServiceException):
        return exc.response.status_code in AWAY_STATUSES or throttled(exc.response)
    return unanswered(exc)


def scope_refused(exc: Exception) -> bool:
    """Return whether a failed call is the token endpoint refusing a scope (400 invalid_scope).

    All or nothing: a platform that will not grant one of the scopes asked for refuses the
    whole request (Sakai: LTI13Servlet.java, with the scope in `X-Tsugi-LTI13-Error-Detail`;
    Canvas alike). No retry helps until its admin changes the tool's registration.
    """
    if not isinstance(exc, LtiServiceException):
        return False
    response = exc.response
    if response.status_code != HTTPStatus.BAD_REQUEST:
        return False
    try:
        return document(response).get("error") == "invalid_scope"
    except Unreadable:
        return False


def throttled(response: requests.Response) -> bool:
    """Return whether an answer is Canvas's throttle: a 403 with no request cost left.

    Canvas answers "403 Forbidden (Rate Limit Exceeded)" with `X-Rate-Limit-Remaining: 0.0`
    and no Retry-After (app/middleware/request_throttle.rb): about the tool's pace, not this
    score, so its grades wait for the platform together, as for a 429.
    """
    if response.status_code != HTTPStatus.FORBIDDEN:
        return False
    try:
        return float(response.headers.get("X-Rate-Limit-Remaining", "")) <= 0
    except ValueError:
        return False


def unreadable(what: Message, fault: Fault) -> Message:
    """Say, in the reader's language, what is wrong with a platform's JSON (for a page)."""
    if fault is Fault.TOO_DEEP:
        return say("{what} answered JSON nested too deeply", what=what)
    if fault is Fault.NOT_JSON:
        return say("{what} did not answer JSON", what=what)
    return say("{what} did not answer a JSON object", what=what)
