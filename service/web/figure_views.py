"""A figure's bytes, for its author and the course's teachers only (core.figures).

`GET /figures/<id>.png` answers the PNG the worker re-encoded, never what the sandbox wrote.
Its page shows it in an <img>, which cannot send the page's session header: the URL carries
the page's link token (`?s=`, service/web/auth.py), as the page's other links do. Anyone else
(another student, a teacher of another course, nobody signed in) gets the same 404 as for a
figure that does not exist: the answer says nothing of whose figure it is, or whether there
is one. The image is the only thing the answer may load or run: `default-src 'none'` and a
sandbox, no framing, no sniffing; a browser may keep it (its bytes never change: a new
verdict makes new figures), a shared cache may not.
"""

from __future__ import annotations

from collections.abc import Callable

from flask import Blueprint, Response, current_app, request

from core.messages import say
from service.store import figure_rows
from service.web import extensions
from service.web.auth import PARAM, current_user, link_token
from service.web.student.actions import Refused

bp = Blueprint("figures", __name__)
POLICY = "default-src 'none'; frame-ancestors 'none'; sandbox"
KEPT_S = 3600  # in the viewer's own browser only ("private"), as long as its link lives or so


@bp.get("/figures/<int:figure_id>.png")
def figure(figure_id: int) -> Response:
    """Answer a figure's PNG to its author or a teacher of its course; 404 to anyone else."""
    found = figure_rows.find(extensions.store(), figure_id)
    user = current_user()
    if found is None or user is None or not (
        found.user_id == user.user_id or user.teaches(found.course_id)
    ):
        raise Refused(404, "unknown_figure", say("There is no such figure of yours."))
    response = Response(found.png, mimetype="image/png")
    response.headers["Content-Security-Policy"] = POLICY
    response.headers["Cache-Control"] = f"private, max-age={KEPT_S}"
    response.headers["Content-Disposition"] = f'inline; filename="figure-{figure_id}.png"'
    return response


def linker() -> Callable[[int], str]:
    """Return how this request's page links a figure (with its link token), as a function
    that works after the request too (the live status stream's later looks)."""
    adapter = current_app.url_map.bind("", script_name=request.script_root or "/")
    token = link_token()
    return lambda figure_id: adapter.build("figures.figure", {"figure_id": figure_id, PARAM: token})
