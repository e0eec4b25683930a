"""OIDC logins in flight: one-time states bound to a platform and to the browser.

A login stores its state with the platform (issuer and client id) it was made for, the
nonce it sent, and a hash of a browser token. The launch that answers it must come back to
the same browser: the token is in a cookie, or, where third-party cookies are blocked, in
the platform's storage (LTI client-side postMessage storage). A state is consumed exactly
once (an UPDATE that only one request can win), and a nonce is recorded per issuer so a
captured id_token cannot be replayed with a fresh state either.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

from core.messages import say
from service.lti.claims import LaunchProblem
from service.lti.validation import Login
from service.store import lti_logins, platform_rows
from service.store.database import Store
from service.store.models import LtiLogin, Platform, utcnow

# the parameters of an OIDC login initiation (LTI 1.3, 4.1) and how long each may be; a
# login keeps them to start again in a new window, and nothing else of the request
LOGIN_PARAMS = {
    "iss": 2048,
    "login_hint": 2048,
    "target_link_uri": 2048,
    "lti_message_hint": 4096,  # Canvas sends a signed JWT here
    "client_id": 255,
    "lti_deployment_id": 255,
    "lti_storage_target": 255,
}
LOGIN_LIFETIME = timedelta(minutes=10)
NONCE_LIFETIME = timedelta(hours=2)  # longer than any id_token's life plus leeway


@dataclass(frozen=True)
class Started:
    """A login just made: what goes to the platform and what goes to the browser."""

    state: str
    nonce: str
    browser_token: str


def login_params(values: Mapping[str, str]) -> dict[str, str]:
    """Return the login request's known parameters; LaunchProblem if one is too long."""
    params: dict[str, str] = {}
    for name, limit in LOGIN_PARAMS.items():
        value = values.get(name)
        if not isinstance(value, str) or not value:
            continue
        if len(value) > limit:
            raise LaunchProblem(
                say("Oversized login parameter"),
                say(
                    "{name} is {length} characters long; at most {limit} are allowed",
                    name=name,
                    length=len(value),
                    limit=limit,
                ),
                say("the LMS's tool URL and its login request"),
            )
        params[name] = value
    return params


def find_platform(store: Store, issuer: str, client_id: str | None) -> Platform:
    """Return the registration for a login's issuer (and client id, when given)."""
    found = platform_rows.with_issuer(store, issuer, client_id)
    if not found:
        who = f"issuer {issuer!r}" + (f" and client id {client_id!r}" if client_id else "")
        raise LaunchProblem(
            say("Unknown platform"),
            say("no platform is registered with {who}", who=who),
            say(
                "that the tool was registered for this LMS (codeblanks platforms add, or "
                "dynamic registration), with this exact issuer and client id"
            ),
        )
    if len(found) > 1:
        raise LaunchProblem(
            say("Ambiguous platform"),
            say(
                "several registrations share issuer {issuer} and the login names no client_id",
                issuer=repr(issuer),
            ),
            say("that the LMS sends client_id in its login request"),
        )
    return found[0]


def start(
    store: Store, platform: Platform, params: Mapping[str, str], storage: str | None
) -> Started:
    """Record a new login for `platform`; return its state, nonce and browser token."""
    started = Started(
        state=secrets.token_urlsafe(32),
        nonce=secrets.token_urlsafe(32),
        browser_token=secrets.token_urlsafe(32),
    )
    now = utcnow()
    lti_logins.record(
        store,
        state=started.state,
        platform_id=platform.id,
        nonce=started.nonce,
        browser_hash=_hash(started.browser_token),
        storage_target=storage,
        params=dict(params),
        created_at=now,
        expires_at=now + LOGIN_LIFETIME,
    )
    return started


def pending(store: Store, state: str) -> LtiLogin:
    """Return the unused, unexpired login of a state, or raise LaunchProblem."""
    login = lti_logins.by_state(store, state)
    if login is None or login.used_at is not None or login.expires_at < utcnow():
        raise LaunchProblem(
            say("Unknown or used state"),
            say(
                "this launch does not answer a login in progress (it was used, has expired, or "
                "never existed)"
            ),
            say("that the launch was not replayed; start it again from the LMS"),
            status=403,
        )
    return login


def consume(store: Store, login: LtiLogin, browser_token: str | None) -> Login:
    """Check the browser token and use the login up; return what the launch must match."""
    if not browser_token or not hmac.compare_digest(_hash(browser_token), login.browser_hash):
        raise LaunchProblem(
            say("Launch from another browser"),
            say("the state of this launch was made for another browser session"),
            say("that cookies for this tool are allowed, or open the tool in a new window"),
            status=403,
        )
    platform = lti_logins.use(store, login.id, login.platform_id, utcnow())
    if platform is None:
        raise LaunchProblem(
            say("Unknown or used state"), say("this login was used already"), status=403
        )
    return Login(
        platform.id, platform.issuer, platform.client_id, platform.key_set_url, login.nonce
    )


def use_nonce(store: Store, issuer: str, nonce: str) -> bool:
    """Record a nonce as used for an issuer; return False if it was used before."""
    return lti_logins.use_nonce(store, issuer, nonce, utcnow() + NONCE_LIFETIME)


def deployment_known(store: Store, platform_id: int, deployment_id: str) -> bool:
    """Return whether a deployment is registered, adding it if the platform opted in."""
    return platform_rows.knows_deployment(store, platform_id, deployment_id)


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
