"""The platform's RSA key pair: made at first start in the state dir, published as a JWKS."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import tempfile
from pathlib import Path
from typing import Any, cast

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from lti1p3platform.registration import Registration

KEY_FILE = "platform-key.pem"


class PlatformKey:
    """The private key that signs id_tokens and access tokens, and its public JWK."""

    def __init__(self, private_pem: str) -> None:
        self.private_pem = private_pem
        # Parsed once: cryptography's key check makes each parse cost ~50 ms, and PyJWT
        # would parse a PEM string again for every signature. The file is our own.
        self._private = serialization.load_pem_private_key(
            private_pem.encode(), password=None, unsafe_skip_rsa_key_validation=True
        )
        self.public_pem = (
            self._private.public_key()
            .public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
            .decode()
        )
        self.jwk: dict[str, Any] = Registration.get_jwk(self.public_pem)  # kid = RFC 7638
        self.kid: str = self.jwk["kid"]

    @classmethod
    def load_or_create(cls, state_dir: Path) -> PlatformKey:
        """Return the key kept in `state_dir`, generating it (mode 0600) the first time."""
        state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = state_dir / KEY_FILE
        if not path.exists():
            # Write aside, then link: a racing second process sees no key or a whole key.
            fd, name = tempfile.mkstemp(dir=state_dir, prefix=f".{KEY_FILE}.")  # mode 0600
            tmp = Path(name)
            with os.fdopen(fd, "w") as out:
                out.write(generate_private_pem())
            try:
                os.link(tmp, path)
            except FileExistsError:
                pass
            finally:
                tmp.unlink()
        return cls(path.read_text())

    def jwks(self) -> dict[str, Any]:
        """Return the public key set, as served at /jwks."""
        return {"keys": [self.jwk]}

    def sign(
        self,
        claims: dict[str, Any],
        headers: dict[str, Any] | None = None,
        algorithm: str = "RS256",
    ) -> str:
        """Sign `claims` as given (no exp/iat added); headers default to this key's kid."""
        merged = {"kid": self.kid, **(headers or {})}
        if algorithm == "RS256":
            # The library annotates the key as a PEM string; PyJWT also takes the parsed key.
            key = cast(str, self._private)
            return str(Registration.encode_and_sign(dict(claims), key, headers=merged))
        if algorithm not in ("none", "HS256"):
            raise ValueError(f"cannot sign with {algorithm!r}: use RS256, HS256 or none")
        # Hostile tokens for tests, by hand: PyJWT rightly refuses an RSA key as an HMAC secret.
        head = _b64({**merged, "alg": algorithm, "typ": "JWT"})
        body = _b64(claims)
        signing_input = f"{head}.{body}".encode()
        signature = b""
        if algorithm == "HS256":
            signature = hmac.new(self.public_pem.encode(), signing_input, hashlib.sha256).digest()
        return f"{head}.{body}." + base64.urlsafe_b64encode(signature).rstrip(b"=").decode()


def _b64(part: dict[str, Any]) -> str:
    raw = json.dumps(part, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def generate_private_pem() -> str:
    """Return a new 2048-bit RSA private key as PKCS#8 PEM."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
