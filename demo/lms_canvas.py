"""What the demo answers when it plays Canvas, in Canvas's own shapes (instructure/canvas-lms).

Errors of the LTI services (`render_error` of app/controllers/lti/ims/concerns/lti_services.rb,
`api_error_json` of app/controllers/application_controller.rb), the `Link` header of
`Api.paginate` (lib/api.rb), and the throttle's answer (app/middleware/request_throttle.rb).
The handlers in lms_ags, nrps, tokens and lms_views call these where `config.plays` says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar
from urllib.parse import urlencode

from demo.lms_errors import DemoError

T = TypeVar("T")

# Rails' status symbols, the `type` of render_error's body
SYMBOLS = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    409: "conflict",
    412: "precondition_failed",
    415: "unsupported_media_type",
    422: "unprocessable_entity",
    500: "internal_server_error",
}
NOT_A_STUDENT = "User not found in course or is not a student"
UNPUBLISHED = "cannot be changed at this time: This assignment is still unpublished"
INSUFFICIENT = "Insufficient permissions"
# request_throttle.rb rate_limit_exceeded: the body, with its newline, as text/plain
THROTTLED = "403 Forbidden (Rate Limit Exceeded)\n"
# request_throttle.rb LeakyBucket: the high-water mark, counted down in X-Rate-Limit-Remaining
HIGH_WATER_MARK = 600.0
# lib/api.rb: query parameters left out of the pagination links
_NOT_IN_LINKS = ("page", "per_page", "limit", "access_token", "api_key")


def render_error(message: str, status: int = 412) -> DemoError:
    """Return lti_services.rb's render_error: {"errors": {"type", "message"}}, 412 by default."""
    body = {"errors": {"type": SYMBOLS.get(status, str(status)), "message": message}}
    return DemoError(status, message, body=body)


def not_found() -> DemoError:
    """Return ActiveRecord::RecordNotFound as api_error_json renders it under /api."""
    message = "The specified resource does not exist."
    return DemoError(404, message, body={"errors": [{"message": message}]})


def missing(param: str) -> DemoError:
    """Return ActionController::ParameterMissing as api_error_json renders it."""
    message = f"{param} is missing"
    return DemoError(400, message, body={"errors": [{"message": message}]})


def invalid(field: str, message: str) -> DemoError:
    """Return ActiveRecord::RecordInvalid (422) as Api::Errors::Reporter renders it: an array."""
    body = {"errors": [{"field": field, "message": message, "error_code": None}]}
    return DemoError(422, message, body=body)


def shaped(exc: DemoError) -> DemoError:
    """Return a refusal of the shared demo code in the shape Canvas gives that status."""
    if exc.body is not None:
        return exc
    if exc.status == 404:
        return not_found()
    return render_error(exc.message, exc.status)


def page(
    found: Sequence[T], url: str, query: Mapping[str, str], default: int, maximum: int | None
) -> tuple[list[T], str]:
    """Return one page of `found` and its Link header, as Api.paginate builds them.

    `page` (from 1) and `per_page` choose the page; `limit` stands for per_page (the LTI
    controllers' pagination_args), capped at `maximum`. Links come in the order current,
    next, prev, first, last, joined by "," with no space (build_links_from_hash).
    """
    asked = query.get("per_page") or query.get("limit") or ""
    per_page = int(asked) if asked.isdigit() and int(asked) > 0 else default
    if maximum is not None:
        per_page = min(per_page, maximum)
    number = int(query["page"]) if query.get("page", "").isdigit() else 1
    number = max(number, 1)
    last = max(1, math.ceil(len(found) / per_page))
    keep = [(k, v) for k, v in query.items() if k not in _NOT_IN_LINKS]

    def at(n: int) -> str:
        return f"{url}?{urlencode([*keep, ('page', str(n)), ('per_page', str(per_page))])}"

    links = [(at(number), "current")]
    if number < last:
        links.append((at(number + 1), "next"))
    if number > 1:
        links.append((at(number - 1), "prev"))
    links += [(at(1), "first"), (at(last), "last")]
    start = (number - 1) * per_page
    header = ",".join(f'<{u}>; rel="{rel}"' for u, rel in links)
    return list(found[start : start + per_page]), header


def compact(values: dict[str, Any]) -> dict[str, Any]:
    """Return `values` without its None values (Ruby's Hash#compact, as the serializers do)."""
    return {k: v for k, v in values.items() if v is not None}
