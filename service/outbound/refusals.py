"""Why an outbound request failed, in the client's own words: never in the server's.

Whatever a server sends (its body, its reason phrase, its headers, where it redirects) may
come from anything a URL can point at, so no word of it reaches a page: a page gets a
status code and these words; the log gets the server's own, bounded and escaped.

    OutboundError (requests.RequestException)  .reason: REFUSED | TOO_LARGE | LATE
    Stopped (inside urllib3, told as an OutboundError)
    Unreadable (ValueError)                    .fault: NOT_JSON | TOO_DEEP | NOT_OBJECT
"""

from __future__ import annotations

import enum
import logging
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

import requests
from urllib3.exceptions import NameResolutionError

log = logging.getLogger("codeblanks.outbound")


class Reason(enum.StrEnum):
    """Why the client ended a request."""

    REFUSED = "refused"
    TOO_LARGE = "too large"
    LATE = "late"


class OutboundError(requests.RequestException):
    """A request the client refused or cut short; the message names the host, never a body."""

    def __init__(self, message: str, *, reason: Reason = Reason.REFUSED, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.reason = reason


class Stopped(Exception):  # noqa: N818  not core.errors.Refusal: no request of a user's
    """The client stopped a request, raised inside urllib3 (which would wrap any OSError, so
    any RequestException) and told as an OutboundError."""

    def __init__(self, reason: Reason, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class Fault(enum.StrEnum):
    """What is wrong with an answer that should have been JSON."""

    NOT_JSON = "not JSON"
    TOO_DEEP = "JSON nested too deeply"
    NOT_OBJECT = "not a JSON object"


class Unreadable(ValueError):
    """An answer that is not the JSON asked for (a ValueError, as `Response.json()` raises)."""

    def __init__(self, fault: Fault) -> None:
        super().__init__(f"the answer is {fault}")
        self.fault = fault


def status_of(response: requests.Response) -> str:
    """Return an answer's status in our words ("HTTP 404 Not Found"); log the server's own.

    The standard phrase, not the server's status line: that text is the server's to fill.
    """
    code = response.status_code
    log.warning(
        "HTTP %s from %s: reason %.200r, answer %.500r",
        code,
        urlsplit(response.url or "").hostname,
        response.reason,
        response.content[:500],
    )
    try:
        return f"HTTP {code} {HTTPStatus(code).phrase}"
    except ValueError:
        return f"HTTP {code}"


def unanswered(exc: BaseException) -> bool:
    """Return whether a request failed for want of an answer: the connection was refused or
    cut, or nothing came in time. Not a refusal of ours, a TLS failure or a name that does
    not resolve: those are about the request (or its configuration), not a server away."""
    if isinstance(exc, OutboundError):
        return exc.reason is Reason.LATE
    if isinstance(exc, requests.exceptions.SSLError):
        return False
    if isinstance(exc, requests.ConnectionError):
        cause = exc.args[0] if exc.args else None
        return not isinstance(getattr(cause, "reason", None), NameResolutionError)
    return isinstance(exc, requests.Timeout)


def explain(exc: BaseException) -> str:
    """Return why an outbound request failed, in a few words of ours, fit for any page."""
    if isinstance(exc, OutboundError | Unreadable):
        return str(exc)  # ours: the host the caller asked for, the rule, the limit
    if isinstance(exc, requests.HTTPError) and exc.response is not None:
        return f"it answered {status_of(exc.response)}"
    log.warning("outbound request failed: %.500r", exc)  # requests' words quote URLs it followed
    if isinstance(exc, requests.Timeout):
        return "it did not answer in time"
    if isinstance(exc, requests.TooManyRedirects):
        return "it redirected too many times"
    if isinstance(exc, requests.exceptions.SSLError):
        return "the TLS connection failed (its certificate, or no common protocol)"
    if isinstance(exc, requests.ConnectionError):
        cause = exc.args[0] if exc.args else None
        if isinstance(getattr(cause, "reason", None), NameResolutionError):
            return "its host name does not resolve"
        return "the connection failed"
    return f"the request failed ({type(exc).__name__})"
