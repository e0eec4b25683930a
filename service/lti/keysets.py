"""Platforms' public key sets, fetched with timeouts and re-fetched on an unknown kid.

One cache per web process, made in the app factory. A kid the cache does not know triggers
one re-fetch, at most once per `refetch_s` per key set URL, so a platform's key rotation is
picked up at once while a flood of forged kids cannot make us hammer the platform.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

import jwt
import requests

from service.lti.claims import LaunchProblem

TIMEOUT_S = (3.05, 5.0)  # connect, read
ALGORITHMS = ("RS256", "RS384", "RS512")


@dataclass
class _Entry:
    keys: dict[str, dict[str, Any]] = field(default_factory=dict)
    fetched_at: float = float("-inf")


class KeySets:
    """A thread-safe cache of JWKS documents, keyed by their URL."""

    def __init__(
        self, session: requests.Session | None = None, refetch_s: float = 5.0, ttl_s: float = 3600
    ) -> None:
        self._session = session or requests.Session()
        self._refetch_s = refetch_s
        self._ttl_s = ttl_s
        self._entries: dict[str, _Entry] = {}
        self._lock = threading.Lock()
        self.fetches = 0

    def public_key(self, url: str, kid: str | None, alg: str | None) -> Any:
        """Return the public key for a token header's kid and alg, or raise LaunchProblem."""
        if not kid:
            raise LaunchProblem("Missing kid", "the id_token header names no key (kid)")
        if alg not in ALGORITHMS:
            raise LaunchProblem("Refused algorithm", f"alg {alg!r} is not one of {ALGORITHMS}")
        with self._lock:
            entry = self._entries.setdefault(url, _Entry())
            now = time.monotonic()
            stale = now - entry.fetched_at > self._ttl_s
            if stale or (kid not in entry.keys and now - entry.fetched_at >= self._refetch_s):
                entry.keys = self._fetch(url)
                entry.fetched_at = now
            jwk = entry.keys.get(kid)
        if jwk is None:
            raise LaunchProblem(
                "Unknown key",
                f"no key with kid {kid!r} in the platform's key set",
                f"the key set URL registered for this platform ({url})",
            )
        if jwk.get("alg", alg) != alg:
            raise LaunchProblem("Key algorithm mismatch", f"key {kid!r} is not for {alg}")
        try:
            return jwt.PyJWK(jwk, algorithm=alg).key
        except jwt.PyJWKError as exc:
            raise LaunchProblem("Unusable key", f"key {kid!r} cannot be read: {exc}") from exc

    def _fetch(self, url: str) -> dict[str, dict[str, Any]]:
        self.fetches += 1
        try:
            response = self._session.get(url, timeout=TIMEOUT_S)
            response.raise_for_status()
            document = response.json()
        except (requests.RequestException, ValueError) as exc:
            raise LaunchProblem(
                "Key set unavailable",
                f"fetching {url} failed: {exc}",
                "the platform's key set URL and that this server can reach it",
                status=502,
            ) from exc
        keys = document.get("keys") if isinstance(document, dict) else None
        if not isinstance(keys, list):
            raise LaunchProblem("Bad key set", f"{url} is not a JWKS document", status=502)
        return {k["kid"]: k for k in keys if isinstance(k, dict) and isinstance(k.get("kid"), str)}
