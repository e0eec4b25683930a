"""The one HTTP client for every outbound request: registration, key sets, tokens, AGS, NRPS.

A `requests.Session`, so pylti1p3's ServiceConnector and our own calls keep working, with:
- the address rule checked where the socket connects: the host is resolved once, each address
  is checked, and the socket connects to a checked address while TLS still verifies the name
  (no window for DNS rebinding between the check and the connection); a redirect opens a new
  connection, so every hop is checked the same way, and https never redirects down to http
  off loopback;
- no connection reuse and no proxies: each request connects afresh under today's rule, to the
  host itself (a proxy would be the address we checked, not the one we reach);
- a cap on the size of every answer, its headers and its body, redirects included, and one
  way to read its JSON (service.outbound.reading);
- a total deadline per request (name resolution, connect, TLS, headers, body and redirects):
  a lookup is waited on no longer than that (service.outbound.resolver), and a watchdog shuts
  the sockets down when it passes, which ends even a server that trickles a byte at a time
  (a per-read timeout never would);
- no word of an answer in an error: a redirect's target is named in the log, never in the
  message, which names only the host the caller asked for (service.outbound.refusals).
"""

from __future__ import annotations

import contextvars
import functools
import logging
import socket
import sys
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, NameResolutionError, NewConnectionError

from service.outbound.addresses import Allowed, address, kind, loopback
from service.outbound.deadline import Deadline
from service.outbound.reading import Answer, Head, read_body
from service.outbound.refusals import OutboundError, Reason, Stopped
from service.outbound.resolver import Resolver
from service.settings import Settings

MAX_BYTES = 4 << 20  # key sets and registration answers are small; a big course's NRPS roster
MAX_REDIRECTS = 3
log = logging.getLogger("codeblanks.outbound")


@dataclass(frozen=True)
class Policy:
    """What outbound requests may reach, how long they may take and how much they may read."""

    allowed: Allowed = field(default_factory=Allowed)
    deadline_s: float = 10.0
    max_bytes: int = MAX_BYTES

    @classmethod
    def from_settings(cls, settings: Settings) -> Policy:
        """Return the policy of CODEBLANKS_OUTBOUND_ALLOW and CODEBLANKS_OUTBOUND_DEADLINE_S."""
        allow = settings.outbound_allow
        if settings.demo:
            # the demo LMS is mounted in the tool (codeblanks dev, the compose demo): its origin
            # is the tool's own base URL, often loopback; that origin and nothing more
            allow += "," + urlsplit(settings.base_url).netloc
        return cls(Allowed.parse(allow), float(settings.outbound_deadline_s))


@dataclass(frozen=True)
class _Call:
    """One request in progress (its redirects included): its policy, deadline and origin."""

    policy: Policy
    deadline: Deadline
    origin: str  # the host the caller asked for: the only one a message names
    resolver: Resolver

    def left(self) -> float:
        """Return the seconds left, or refuse to go on once the deadline has passed."""
        left = self.deadline.left()
        if left <= 0:
            raise Stopped(Reason.LATE, self.late())
        return left

    def late(self) -> str:
        """Say which request ran out of time."""
        return (
            f"the request to {self.origin} took longer than {self.policy.deadline_s:g} s "
            "(CODEBLANKS_OUTBOUND_DEADLINE_S)"
        )

    def redirected(self, host: str) -> bool:
        """Return whether `host` is not the caller's: a redirect named it."""
        return _bare(host) != self.origin


def _bare(host: str) -> str:
    return host.strip("[]").rstrip(".").lower()


# urllib3 makes connections itself, so the request in progress reaches them through the
# context of the calling thread (each thread has its own)
_CALL: contextvars.ContextVar[_Call | None] = contextvars.ContextVar("outbound_call", default=None)


class _Guarded:
    """A connection step that resolves, checks and connects to a checked address."""

    host: str
    port: int
    timeout: float | None
    socket_options: Any
    response_class: Any
    _dns_host: str

    def _new_conn(self) -> socket.socket:
        call = _CALL.get()
        if call is None:
            raise Stopped(Reason.REFUSED, f"refused: {self.host}: not through the outbound client")
        # its answer's head is read within the caps (a new connection for every request)
        self.response_class = functools.partial(Head, origin=call.origin)
        try:
            found = call.resolver.resolve(self._dns_host, self.port, call.deadline, call.late())
        except socket.gaierror as exc:
            raise NameResolutionError(self.host, self, exc) from exc  # type: ignore[arg-type]
        allowed = call.policy.allowed
        targets = [info for info in found if allowed.permits(self.host, self.port, _ip(info))]
        if not targets:
            ip = _ip(found[0])
            if call.redirected(self.host):  # a name the server sent: for the log only
                log.warning("refused a redirect to %.200r (%s) from %s", self.host, ip, call.origin)
                where = f"a redirect from {call.origin} leads to an address that"
            elif address(self.host) == ip:
                where = str(ip)
            else:
                where = f"{self.host} resolves to {ip}, which"
            raise Stopped(
                Reason.REFUSED,
                f"refused: {where} is {kind(ip)}; outbound requests reach public addresses "
                "only, unless CODEBLANKS_OUTBOUND_ALLOW lists the host",
            )
        error: OSError | None = None
        for family, kind_, proto, _, sockaddr in targets:
            sock = socket.socket(family, kind_, proto)
            try:
                call.deadline.watch(sock)
                for option in self.socket_options or ():
                    sock.setsockopt(*option)
                left = call.left()
                asked = self.timeout if isinstance(self.timeout, int | float) else None
                sock.settimeout(min(asked, left) if asked else left)
                sys.audit("http.client.connect", self, self.host, self.port)
                sock.connect(sockaddr)
                return sock
            except OSError as exc:
                sock.close()
                error = exc
            except BaseException:
                sock.close()
                raise
        if isinstance(error, TimeoutError):
            raise ConnectTimeoutError(self, f"connection to {self.host} timed out")
        raise NewConnectionError(self, f"failed to connect to {self.host}: {error}")  # type: ignore[arg-type]


def _ip(info: tuple[Any, ...]) -> Any:
    found = address(str(info[4][0]).split("%")[0])
    assert found is not None  # getaddrinfo answers numeric addresses
    return found


class _Connection(_Guarded, HTTPConnection):
    pass


class _TLSConnection(_Guarded, HTTPSConnection):
    pass


class _NoReuse(HTTPConnectionPool):
    def _put_conn(self, conn: Any) -> None:
        # never reused: the next request connects (and is checked) afresh
        if conn is not None:
            conn.close()
        super()._put_conn(None)


class _Pool(_NoReuse):
    ConnectionCls = _Connection


class _TLSPool(_NoReuse, HTTPSConnectionPool):
    ConnectionCls = _TLSConnection


class _Adapter(requests.adapters.HTTPAdapter):
    """Guarded connections, no proxies, the remaining time as timeout, answers read capped."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _Pool, "https": _TLSPool}

    def send(
        self,
        request: requests.PreparedRequest,
        stream: bool = False,
        timeout: Any = None,
        verify: Any = True,
        cert: Any = None,
        proxies: Any = None,
    ) -> requests.Response:
        call = _CALL.get()
        if call is None:
            host = urlsplit(request.url or "").hostname
            raise OutboundError(f"refused: {host}: not through the outbound client")
        try:
            left = call.left()
            response = super().send(request, True, _within(timeout, left), verify, cert, None)
            read_body(response, call.origin, call.policy.max_bytes)
        except Stopped as exc:
            raise OutboundError(str(exc), reason=exc.reason, request=request) from None
        # pylti1p3 reads answers with response.json(): the same reader as ours (Answer.json)
        response.__class__ = Answer
        return response


def _within(timeout: Any, left: float) -> Any:
    if isinstance(timeout, tuple):
        return tuple(left if t is None else min(t, left) for t in timeout)
    if isinstance(timeout, int | float):
        return min(timeout, left)
    return left


class Client(requests.Session):
    """A requests session that follows the outbound policy; see the module's docstring."""

    def __init__(self, policy: Policy) -> None:
        super().__init__()
        self.policy = policy
        self.resolver = Resolver()
        self.max_redirects = MAX_REDIRECTS
        self.headers["User-Agent"] = "codeblanks-grader"
        adapter = _Adapter(max_retries=0)
        self.mount("http://", adapter)
        self.mount("https://", adapter)

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        """Send a request (and follow its redirects) within the policy's deadline."""
        if _CALL.get() is not None:  # a redirect of the request in progress
            return super().send(request, **kwargs)
        origin = _bare(urlsplit(request.url or "").hostname or "?")
        with Deadline(self.policy.deadline_s) as deadline:
            call = _Call(self.policy, deadline, origin, self.resolver)
            token = _CALL.set(call)
            try:
                response = super().send(request, **kwargs)
            except OutboundError:
                raise
            except OSError:  # requests' errors, and a socket's own when the watchdog ended it
                if deadline.passed:  # say so, not "connection reset"
                    raise OutboundError(call.late(), reason=Reason.LATE) from None
                raise
            finally:
                _CALL.reset(token)
            if deadline.passed:  # an answer cut at the deadline can look complete
                raise OutboundError(call.late(), reason=Reason.LATE)
            return response

    def get_redirect_target(self, resp: requests.Response) -> str | None:
        """Return where a redirect leads, refusing a scheme other than http(s) or a downgrade."""
        target = super().get_redirect_target(resp)
        if target is not None:
            old, new = urlsplit(resp.url), urlsplit(urljoin(resp.url, target))
            downgrade = old.scheme == "https" and new.scheme == "http"
            if new.scheme not in ("http", "https") or (
                downgrade and not loopback(new.hostname or "")
            ):
                call = _CALL.get()
                origin = call.origin if call is not None else old.hostname
                log.warning("refused a redirect to %.200r, from %s", target, origin)
                raise OutboundError(
                    f"refused: {origin} redirects to a URL that is not https "
                    "(https only, http only for loopback)",
                )
        return target
