"""Request ids: from an incoming X-Request-Id header or made up, kept for the request's log
lines (service.logs) and echoed in the response."""

from __future__ import annotations

import secrets

from flask import Flask, Response, g, request

from service.logs import request_id


def init_app(app: Flask) -> None:
    """Give every request an id, kept for its log lines and echoed in X-Request-Id."""

    @app.before_request
    def _start() -> None:
        incoming = request.headers.get("X-Request-Id", "")
        rid = incoming if 0 < len(incoming) <= 64 and incoming.isprintable() else None
        g.request_id = rid or secrets.token_hex(8)
        g.request_token = request_id.set(g.request_id)

    @app.after_request
    def _finish(response: Response) -> Response:
        if "request_id" in g:
            response.headers["X-Request-Id"] = g.request_id
        return response

    @app.teardown_request
    def _reset(_exc: BaseException | None) -> None:
        token = g.pop("request_token", None)
        if token is not None:
            request_id.reset(token)
