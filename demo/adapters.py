"""Adapters that run lti1p3platform's abstract classes without a web framework of theirs."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
from lti1p3platform.message_launch import LTIAdvantageMessageLaunchAbstract
from lti1p3platform.oidc_login import OIDCLoginAbstract
from lti1p3platform.registration import Registration
from lti1p3platform.request import Request, TRequest


class SigningRegistration(Registration):  # type: ignore[misc]
    """A Registration whose id_tokens are signed by our hook (which may also tamper, in tests)."""

    def __init__(self, sign: Callable[[dict[str, Any]], str] | None = None) -> None:
        self._sign = sign

    def platform_encode_and_sign(
        self, payload: dict[str, Any], expiration: int | None = None
    ) -> str:
        assert self._sign is not None, "this registration cannot sign"
        now = int(time.time())
        payload.update({"iat": now, "exp": now + (expiration or 60)})
        return self._sign(payload)


class PlatformConf(LTI1P3PlatformConfAbstract):  # type: ignore[misc]
    """The library's platform configuration around one given Registration."""

    def init_platform_config(self, **kwargs: Any) -> None:
        self._registration = kwargs["registration"]

    def get_registration_by_params(self, **kwargs: Any) -> Registration:
        assert self._registration is not None
        return self._registration


class ParamsRequest(Request):  # type: ignore[misc]
    """The tool's authentication request, as the library's Request type."""

    def build_metadata(self, request: Any) -> TRequest:
        params: dict[str, Any] = dict(request)
        return {"method": "GET", "get_data": params, "form_data": {}, "headers": {}, "path": ""}


class Login(OIDCLoginAbstract):  # type: ignore[misc]
    """Builds the third-party login initiation URL; we answer the redirect ourselves."""

    def set_lti_message_hint(self, **kwargs: Any) -> None:
        self._lti_message_hint = kwargs["hint"]

    def get_redirect(self, url: str) -> str:
        return url


class Launch(LTIAdvantageMessageLaunchAbstract):  # type: ignore[misc]
    """Assembles launch claims with the library; returns the launch data instead of a page."""

    def render_launch_form(self, launch_data: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        # The library's own template module imports pkg_resources; the caller renders the form.
        return launch_data
