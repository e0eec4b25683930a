"""The hardened launch: pylti1p3's MessageLaunch with every weak validation step replaced.

pylti1p3 (measured, see FINDINGS.md) accepts tokens without exp or iat, ignores azp, takes
aud[0] as the client id, allows no clock skew, never consumes nonces, never checks
target_link_uri and never re-fetches a key set. Here each step of its `validate()` pipeline
is overridden, in its order, with a strict one; its JWT format parsing and message
validators are kept. The state and nonce come from our own one-time login record (bound
to the issuer and client id of the login), not from pylti1p3's session service.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import jwt
from pylti1p3.exception import LtiException
from pylti1p3.message_launch import MessageLaunch
from pylti1p3.request import Request

from core.messages import say
from service.lti.claims import LaunchProblem, check_audience, check_message, client_id_of
from service.lti.keysets import KeySets

LEEWAY_S = 60
LTI = "https://purl.imsglobal.org/spec/lti/claim/"


@dataclass(frozen=True)
class Login:
    """What an OIDC login stored with its state: the platform it was for and the nonce."""

    platform_id: int
    issuer: str
    client_id: str
    key_set_url: str
    nonce: str


@dataclass(frozen=True)
class ValidLaunch:
    """A launch that passed every check: its platform, message type and claims."""

    platform_id: int
    message_type: str
    body: Mapping[str, Any]

    def claim(self, name: str, default: Any = None) -> Any:
        """Return an LTI claim by its short name (e.g. "context"), or `default`."""
        return self.body.get(LTI + name, default)


class _Form(Request):
    """The launch POST's form, as pylti1p3 wants to read it."""

    def __init__(self, form: Mapping[str, str]) -> None:
        super().__init__()
        self._form = form

    def get_param(self, key: str) -> str:
        return self._form.get(key, "")

    def get_cookie(self, key: str) -> str | None:
        return None

    def is_secure(self) -> bool:
        return True


class _Unused:
    """pylti1p3 insists on session and cookie services; our steps never call them."""


class HardenedLaunch(MessageLaunch[_Form, Any, Any, Any]):
    """Validates one launch POST against the login it answers."""

    def __init__(
        self,
        form: Mapping[str, str],
        login: Login,
        key_sets: KeySets,
        base_url: str,
        use_nonce: Callable[[str, str], bool],
        deployment_known: Callable[[int, str], bool],
    ) -> None:
        super().__init__(_Form(form), None, _Unused(), _Unused())
        self.set_auto_validation(False)  # its validate() would run its own weak steps
        self._login = login
        self._key_sets = key_sets
        self._base_url = base_url
        self._use_nonce = use_nonce
        self._deployment_known = deployment_known

    def _get_request_param(self, key: str) -> str:
        return str(self._request.get_param(key) or "")

    def run(self) -> ValidLaunch:
        """Run every check; return the launch or raise LaunchProblem saying what failed."""
        if not self._get_request_param("id_token"):
            raise LaunchProblem(say("Missing id_token"), say("the launch POST carries no id_token"))
        try:
            self.validate_jwt_format()
        except LtiException as exc:
            raise LaunchProblem(say("Malformed id_token"), str(exc)) from exc
        body: object = self._jwt["body"]
        if not isinstance(body, dict):
            raise LaunchProblem(say("Malformed id_token"), say("its body is not a JSON object"))
        self.validate_registration()
        self.validate_jwt_signature()
        self.validate_nonce()
        self.validate_deployment()
        message_type = self.validate_message()
        return ValidLaunch(self._login.platform_id, message_type, body)

    def validate_registration(self) -> HardenedLaunch:
        """Require the token's issuer and client id to be those of the login it answers."""
        body = self._jwt["body"]
        if body.get("iss") != self._login.issuer:
            raise LaunchProblem(
                say("Wrong issuer"),
                say(
                    "the id_token is from {token_issuer}, but the login was for {issuer}",
                    token_issuer=repr(body.get("iss")),
                    issuer=repr(self._login.issuer),
                ),
                say("the issuer registered for this platform"),
                status=403,
            )
        if client_id_of(body) != self._login.client_id:
            raise LaunchProblem(
                say("Wrong client id"),
                say(
                    "the id_token is for client {token_client}, but the login was for {client_id}",
                    token_client=repr(client_id_of(body)),
                    client_id=repr(self._login.client_id),
                ),
                say("the client id registered for this platform"),
                status=403,
            )
        return self

    def validate_jwt_signature(self) -> HardenedLaunch:
        """Verify the signature, exp, iat (60 s leeway), iss and aud; check azp."""
        header = self._jwt["header"]
        key = self._key_sets.public_key(
            self._login.key_set_url, header.get("kid"), header.get("alg")
        )
        try:
            jwt.decode(
                self._get_request_param("id_token"),
                key,
                algorithms=[header["alg"]],
                audience=self._login.client_id,
                issuer=self._login.issuer,
                leeway=LEEWAY_S,
                options={"require": ["exp", "iat", "iss", "aud", "nonce"]},
            )
        except jwt.ExpiredSignatureError as exc:
            raise LaunchProblem(
                say("Expired launch"),
                say("the id_token has expired"),
                say("the clocks of both servers"),
            ) from exc
        except jwt.ImmatureSignatureError as exc:
            raise LaunchProblem(
                say("Launch from the future"),
                say(
                    "the id_token was issued more than {leeway} s from now ({exc})",
                    leeway=LEEWAY_S,
                    exc=str(exc),
                ),
                say("the clocks of both servers"),
            ) from exc
        except jwt.InvalidTokenError as exc:
            raise LaunchProblem(
                say("Invalid id_token"), str(exc), say("the platform's key set URL"), status=403
            ) from exc
        check_audience(self._jwt["body"], self._login.client_id)
        return self

    def validate_nonce(self) -> HardenedLaunch:
        """Require the login's nonce, used here for the first time."""
        nonce = self._jwt["body"].get("nonce")
        if nonce != self._login.nonce:
            raise LaunchProblem(
                say("Wrong nonce"), say("the nonce is not the one this login sent"), status=403
            )
        if not self._use_nonce(self._login.issuer, nonce):
            raise LaunchProblem(
                say("Replayed launch"), say("this id_token was used before"), status=403
            )
        return self

    def validate_deployment(self) -> HardenedLaunch:
        """Require a deployment id known for the platform (or added, if it opted in)."""
        deployment_id = self._jwt["body"].get(LTI + "deployment_id")
        if isinstance(deployment_id, str) and len(deployment_id) <= 255 and deployment_id:
            if not self._deployment_known(self._login.platform_id, deployment_id):
                raise LaunchProblem(
                    say("Unknown deployment"),
                    say(
                        "deployment {deployment_id} is not registered for this platform",
                        deployment_id=repr(deployment_id),
                    ),
                    say(
                        "the deployment id in the platform registration "
                        "(codeblanks platforms add --deployment-id, or the admin page)"
                    ),
                    status=403,
                )
        return self

    def validate_message(self) -> str:  # type: ignore[override]
        """Check the claims (ours, then pylti1p3's validators); return the message type."""
        body = self._jwt["body"]
        message_type = check_message(body, self._base_url)
        try:
            super().validate_message()
        except LtiException as exc:
            raise LaunchProblem(say("Invalid launch message"), str(exc)) from exc
        return message_type
