"""The tool's RSA signing keys: made at first start, published as JWKS, rotated with grace.

Layout of the key directory (inside the instance dir, mode 0700, never in git, never in a
sandbox):
    <kid>.pem    a private key (PKCS#8, mode 0600); kid is the key's RFC 7638 thumbprint
    ring.json    {"current": kid, "retired": {kid: unix time it was retired}}
A retired key stays published in the JWKS for `grace_s`, so that platforms which cached the
old key set still verify what was signed just before a rotation; then it is deleted.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

DEFAULT_GRACE_S = 7 * 24 * 3600
_RING = "ring.json"


@dataclass(frozen=True)
class SigningKey:
    """A private key and its key id."""

    kid: str
    private_pem: bytes

    def public_jwk(self) -> dict[str, str]:
        """Return the public half as a JWK for RS256 signatures."""
        key = serialization.load_pem_private_key(self.private_pem, password=None)
        assert isinstance(key, rsa.RSAPrivateKey)
        return {**_rsa_public_jwk(key.public_key()), "kid": self.kid, "alg": "RS256", "use": "sig"}


class KeyRing:
    """The tool's keys in one directory; safe to share between processes (flock)."""

    def __init__(self, directory: Path, grace_s: int = DEFAULT_GRACE_S) -> None:
        self.directory = directory
        self.grace_s = grace_s

    def current(self) -> SigningKey:
        """Return the key that signs now, creating the first one if there is none."""
        with self._locked():
            ring = self._read()
            if ring.get("current") is None:
                ring = {"current": self._new_key(), "retired": {}}
                self._write(ring)
            return self._key(ring["current"])

    def jwks(self, now: float | None = None) -> dict[str, list[dict[str, str]]]:
        """Return the JWKS to publish: the current key and retired keys still in grace."""
        current = self.current()
        now = time.time() if now is None else now
        ring = self._read()
        keys = [current.public_jwk()]
        for kid, retired_at in sorted(ring.get("retired", {}).items()):
            if now - retired_at < self.grace_s and (self.directory / f"{kid}.pem").exists():
                keys.append(self._key(kid).public_jwk())
        return {"keys": keys}

    def rotate(self, now: float | None = None) -> SigningKey:
        """Make a new current key; retire the old one; delete keys past their grace."""
        now = time.time() if now is None else now
        with self._locked():
            ring = self._read()
            retired: dict[str, float] = dict(ring.get("retired", {}))
            if ring.get("current"):
                retired[ring["current"]] = now
            for kid, retired_at in list(retired.items()):
                if now - retired_at >= self.grace_s:
                    (self.directory / f"{kid}.pem").unlink(missing_ok=True)
                    del retired[kid]
            ring = {"current": self._new_key(), "retired": retired}
            self._write(ring)
            return self._key(ring["current"])

    def _new_key(self) -> str:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        kid = thumbprint(_rsa_public_jwk(key.public_key()))
        _write_private(self.directory / f"{kid}.pem", pem)
        return kid

    def _key(self, kid: str) -> SigningKey:
        return SigningKey(kid, (self.directory / f"{kid}.pem").read_bytes())

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads((self.directory / _RING).read_text())
        except FileNotFoundError:
            return {}
        return data if isinstance(data, dict) else {}

    def _write(self, ring: dict[str, Any]) -> None:
        _write_private(self.directory / _RING, json.dumps(ring, sort_keys=True).encode())

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(self.directory, 0o700)
        fd = os.open(self.directory / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)


def thumbprint(jwk: dict[str, str]) -> str:
    """Return the RFC 7638 SHA-256 thumbprint of an RSA JWK, base64url without padding."""
    canonical = json.dumps({k: jwk[k] for k in ("e", "kty", "n")}, separators=(",", ":"))
    return _b64(hashlib.sha256(canonical.encode()).digest())


def _rsa_public_jwk(public: rsa.RSAPublicKey) -> dict[str, str]:
    numbers = public.public_numbers()
    return {"kty": "RSA", "e": _b64(_int_bytes(numbers.e)), "n": _b64(_int_bytes(numbers.n))}


def _int_bytes(value: int) -> bytes:
    return value.to_bytes((value.bit_length() + 7) // 8, "big")


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _write_private(path: Path, data: bytes) -> None:
    """Write a file readable by its owner only, atomically."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
