"""A fake LTI tool for the demo platform's tests: its own keys, a tiny Flask app over HTTP."""

from __future__ import annotations

import functools
import json
import secrets
import time
from typing import Any
from urllib.parse import urlencode

import jwt
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from flask import Flask, redirect, request

from demo import BackgroundServer, DemoPlatform, Tool

LTI = "https://purl.imsglobal.org/spec/lti/claim/"
DL = "https://purl.imsglobal.org/spec/lti-dl/claim/"
TOOL_CONFIG = "https://purl.imsglobal.org/spec/lti-tool-configuration"
CLOSE_PAGE = "<script>window.parent.postMessage({subject: 'org.imsglobal.lti.close'}, '*')</script>"


def new_private_pem() -> bytes:
    """Return a fresh RSA key as PEM (the tool's, or an impostor's)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


@functools.cache
def impostor_key() -> Any:
    """Return a parsed RSA key that is not the tool's (made once)."""
    return serialization.load_pem_private_key(new_private_pem(), None)


class FakeTool:
    """Just enough of a tool: JWKS, login initiation, launch sink, dynamic registration."""

    def __init__(self, private_pem: bytes) -> None:
        self.private_key = serialization.load_pem_private_key(private_pem, None)
        self.kid = "fake-tool-key"
        public = self.private_key.public_key()
        self.jwk = {
            **json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(public)),
            "kid": self.kid,
            "alg": "RS256",
            "use": "sig",
        }
        self.server = BackgroundServer()
        self.url = self.server.url
        self.auth_url = ""
        self.client_id = ""
        self.logins: list[dict[str, str]] = []
        self.login_methods: list[str] = []  # how each login initiation arrived: GET or POST
        self.launches: list[dict[str, str]] = []
        self.registrations: list[requests.Response] = []
        self.server.mount(self._app())
        self.server.start()

    login_url = property(lambda self: self.url + "/lti/login")
    launch_url = property(lambda self: self.url + "/lti/launch")
    jwks_url = property(lambda self: self.url + "/lti/jwks")
    register_url = property(lambda self: self.url + "/lti/register")

    def _app(self) -> Flask:
        app = Flask("fake_tool")

        @app.get("/lti/jwks")
        def jwks() -> dict[str, Any]:
            return {"keys": [self.jwk]}

        @app.route("/lti/login", methods=["GET", "POST"])
        def login() -> Any:
            params = request.values.to_dict()
            self.logins.append(params)
            self.login_methods.append(request.method)
            return redirect(self.auth_url + "?" + urlencode(self.auth_params(params)))

        @app.post("/lti/launch")
        def launch() -> str:
            self.launches.append(request.form.to_dict())
            return "launched"

        @app.get("/lti/register")
        def register() -> str:
            config = requests.get(request.args["openid_configuration"], timeout=5).json()
            self.auth_url = config["authorization_endpoint"]
            answer = requests.post(
                config["registration_endpoint"],
                json=self.registration_request(),
                headers={"Authorization": f"Bearer {request.args['registration_token']}"},
                timeout=5,
            )
            self.registrations.append(answer)
            if answer.ok:
                self.client_id = answer.json()["client_id"]
            return CLOSE_PAGE

        return app

    def auth_params(self, login: dict[str, str], **overrides: str) -> dict[str, str]:
        """Return a correct authentication request for a login initiation, then overrides."""
        params = {
            "scope": "openid",
            "response_type": "id_token",
            "response_mode": "form_post",
            "prompt": "none",
            "client_id": login.get("client_id", self.client_id),
            "redirect_uri": self.launch_url,
            "login_hint": login["login_hint"],
            "lti_message_hint": login["lti_message_hint"],
            "nonce": secrets.token_urlsafe(8),
            "state": secrets.token_urlsafe(8),
        }
        params.update(overrides)
        return {k: v for k, v in params.items() if v is not None}

    def registration_request(self, **overrides: Any) -> dict[str, Any]:
        """Return the tool's dynamic registration body."""
        body: dict[str, Any] = {
            "application_type": "web",
            "response_types": ["id_token"],
            "grant_types": ["implicit", "client_credentials"],
            "initiate_login_uri": self.login_url,
            "redirect_uris": [self.launch_url],
            "client_name": "Fake tool",
            "jwks_uri": self.jwks_url,
            "token_endpoint_auth_method": "private_key_jwt",
            "scope": "https://purl.imsglobal.org/spec/lti-ags/scope/score "
            "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem "
            "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly "
            "https://example.com/unknown-scope",
            TOOL_CONFIG: {
                "domain": self.url.split("://")[1],
                "target_link_uri": self.launch_url,
                "claims": ["iss", "sub", "name"],
                "messages": [{"type": "LtiDeepLinkingRequest", "label": "Add a lesson"}],
                "custom_parameters": {"who": "$User.id"},
            },
        }
        body.update(overrides)
        return body

    def register_with(self, platform: DemoPlatform, **fields: Any) -> Tool:
        """Register this tool by hand on `platform` (AGS and NRPS scopes by default)."""
        fields = {
            "name": "Fake tool",
            "login_url": self.login_url,
            "launch_url": self.launch_url,
            "jwks_url": self.jwks_url,
            **fields,
        }
        tool = platform.register_tool(**fields)
        self.client_id = tool.client_id
        self.auth_url = platform.auth_url
        return tool

    def sign(self, claims: dict[str, Any], key: Any = None, **headers: Any) -> str:
        """Sign claims as the tool (or with another key, under the tool's kid)."""
        signer = key or self.private_key  # parsed once: a PEM is re-parsed for each use
        return jwt.encode(claims, signer, "RS256", headers={"kid": self.kid, **headers})

    def assertion_claims(self, audience: str, **overrides: Any) -> dict[str, Any]:
        """Return correct client-assertion claims, then overrides (None removes a claim)."""
        now = int(time.time())
        claims = {
            "iss": self.client_id,
            "sub": self.client_id,
            "aud": audience,
            "iat": now,
            "exp": now + 300,
            "jti": secrets.token_hex(8),
        }
        claims.update(overrides)
        return {k: v for k, v in claims.items() if v is not None}

    def token_request(self, token_url: str, scope: str, assertion: str) -> requests.Response:
        """POST a client_credentials request to the platform's token endpoint."""
        return requests.post(
            token_url,
            data={
                "grant_type": "client_credentials",
                "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
                "client_assertion": assertion,
                "scope": scope,
            },
            timeout=10,
        )

    def access_token(self, platform: DemoPlatform, scope: str) -> str:
        """Return a bearer token for `scope`, obtained over HTTP."""
        answer = self.token_request(
            platform.token_url, scope, self.sign(self.assertion_claims(platform.token_audience))
        )
        assert answer.status_code == 200, answer.text
        return str(answer.json()["access_token"])

    def deep_link_claims(
        self, request_claims: dict[str, Any], items: list[dict[str, Any]], **overrides: Any
    ) -> dict[str, Any]:
        """Return a correct LtiDeepLinkingResponse answering `request_claims`, then overrides."""
        now = int(time.time())
        settings = request_claims[DL + "deep_linking_settings"]
        claims = {
            "iss": self.client_id,
            "aud": request_claims["iss"],
            "iat": now,
            "exp": now + 300,
            "nonce": secrets.token_hex(8),
            LTI + "message_type": "LtiDeepLinkingResponse",
            LTI + "version": "1.3.0",
            LTI + "deployment_id": request_claims[LTI + "deployment_id"],
            DL + "data": settings["data"],
            DL + "content_items": items,
        }
        claims.update(overrides)
        return {k: v for k, v in claims.items() if v is not None}
