"""Platforms' public key sets, fetched through the outbound client, re-fetched on an unknown kid.

One cache per web process, made in the app factory. A kid the cache does not know triggers
one re-fetch, at most once per `refetch_s` per key set URL, so a platform's key rotation is
picked up at once while a flood of forged kids cannot make us hammer the platform.

No lock is held across a fetch: a slow key set delays only the launches that need it. One
fetch per URL is in flight at a time; others asking for the same URL meanwhile get the keys
already known, or wait for that fetch (never longer than the client's deadline).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import jwt
import requests

from core.messages import say
from service.lti.claims import LaunchProblem
from service.lti.services import unreadable
from service.outbound import Client, Unreadable, document, explain

ALGORITHMS = ("RS256", "RS384", "RS512")
log = logging.getLogger("codeblanks.lti")
Keys = dict[str, dict[str, Any]]


@dataclass
class _Entry:
    keys: Keys = field(default_factory=dict)
    fetched_at: float = float("-inf")  # last success
    tried_at: float = float("-inf")  # last attempt, successful or not
    problem: LaunchProblem | None = None  # why the last attempt failed
    fetching: threading.Event | None = None  # set when the fetch in flight ends


class KeySets:
    """A thread-safe cache of JWKS documents, keyed by their URL."""

    def __init__(self, client: Client, refetch_s: float = 5.0, ttl_s: float = 3600) -> None:
        self._client = client
        self._refetch_s = refetch_s
        self._ttl_s = ttl_s
        self._entries: dict[str, _Entry] = {}
        self._lock = threading.Lock()  # guards the entries, never held across a fetch
        self.fetches = 0

    def public_key(self, url: str, kid: str | None, alg: str | None) -> Any:
        """Return the public key for a token header's kid and alg, or raise LaunchProblem."""
        if not kid:
            raise LaunchProblem(say("Missing kid"), say("the id_token header names no key (kid)"))
        if alg not in ALGORITHMS:
            raise LaunchProblem(
                say("Refused algorithm"),
                say(
                    "alg {alg} is not one of {algorithms}",
                    alg=repr(alg),
                    algorithms=str(ALGORITHMS),
                ),
            )
        jwk = self._keys(url, kid).get(kid)
        if jwk is None:
            raise LaunchProblem(
                say("Unknown key"),
                say("no key with kid {kid} in the platform's key set", kid=repr(kid)),
                say("the key set URL registered for this platform ({url})", url=url),
            )
        if jwk.get("alg", alg) != alg:
            raise LaunchProblem(
                say("Key algorithm mismatch"),
                say("key {kid} is not for {alg}", kid=repr(kid), alg=alg),
            )
        try:
            return jwt.PyJWK(jwk, algorithm=alg).key
        except jwt.PyJWTError as exc:  # InvalidKeyError too, which PyJWKError is not
            log.warning("key %.100r of %s cannot be read: %.300r", kid, url, exc)  # quotes the key
            raise LaunchProblem(
                say("Unusable key"),
                say("key {kid} in the platform's key set cannot be read", kid=repr(kid)),
                status=502,
            ) from exc

    def usable(self, url: str) -> list[str]:
        """Fetch a key set now, bypassing the cache (the self-test's look at it); return the
        kids of the keys that can be read, or raise LaunchProblem."""
        found = []
        for kid, jwk in self._fetch(url).items():
            try:
                jwt.PyJWK(jwk, algorithm=jwk.get("alg") or ALGORITHMS[0])
            except jwt.PyJWTError:
                continue
            found.append(kid)
        return found

    def _keys(self, url: str, kid: str) -> Keys:
        """Return the keys to look `kid` up in, fetching them if they are stale or lack it."""
        with self._lock:
            entry = self._entries.setdefault(url, _Entry())
            now = time.monotonic()
            wanted = now - entry.fetched_at > self._ttl_s or kid not in entry.keys
            if not wanted or now - entry.tried_at < self._refetch_s:
                if entry.problem is not None and kid not in entry.keys:
                    raise entry.problem.anew()  # it failed moments ago: do not hammer it
                return entry.keys
            in_flight = entry.fetching
            if in_flight is None:
                entry.fetching = threading.Event()
        if in_flight is None:
            return self._refresh(url, entry)
        if kid in entry.keys:  # being refreshed: the keys we have still serve
            return entry.keys
        if not in_flight.wait(self._client.policy.deadline_s + 1):
            raise LaunchProblem(
                say("Key set unavailable"),
                say("fetching {url} takes too long", url=url),
                status=502,
            )
        with self._lock:
            if entry.problem is not None and kid not in entry.keys:
                raise entry.problem.anew()
            return entry.keys

    def _refresh(self, url: str, entry: _Entry) -> Keys:
        """Fetch a key set for everyone waiting on it; record the keys or why it failed."""
        keys: Keys | None = None
        problem = LaunchProblem(
            say("Key set unavailable"), say("fetching {url} failed", url=url), status=502
        )
        try:
            keys = self._fetch(url)
            return keys
        except LaunchProblem as exc:
            problem = exc
            raise
        finally:
            with self._lock:
                entry.tried_at = time.monotonic()
                entry.problem = None if keys is not None else problem
                if keys is not None:
                    entry.keys, entry.fetched_at = keys, entry.tried_at
                done, entry.fetching = entry.fetching, None
            if done is not None:
                done.set()

    def _fetch(self, url: str) -> Keys:
        self.fetches += 1
        try:
            response = self._client.get(url)
            response.raise_for_status()
            found = document(response)
        except requests.RequestException as exc:
            raise LaunchProblem(
                say("Key set unavailable"),
                say("fetching {url} failed: {exc}", url=url, exc=explain(exc)),
                say("the platform's key set URL and that this server can reach it"),
                status=502,
            ) from exc
        except Unreadable as exc:
            raise LaunchProblem(
                say("Bad key set"),
                unreadable(say("the key set at {url}", url=url), exc.fault),
                status=502,
            ) from None
        keys = found.get("keys")
        if not isinstance(keys, list):
            raise LaunchProblem(
                say("Bad key set"), say("{url} is not a JWKS document", url=url), status=502
            )
        return {k["kid"]: k for k in keys if isinstance(k, dict) and isinstance(k.get("kid"), str)}
