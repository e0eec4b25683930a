"""Another user's link in a browser with a session of its own: ask, never switch silently.

For a navigation from outside the tool whose link token is another user's than the browser's
own (cookie) session, service.web.auth keeps the browser's session and holds the link's
aside. Before any view runs, such a request is answered with a page that says whose link it
is and whose session this browser has, and offers both: go on as the browser's own user (the
same address without the link's token), or switch the browser to the link's user (a POST with
the page's CSRF token, which a page of another site cannot make). Nothing is done as the
link's user until the switch is chosen; after it, the browser's cookie is the link user's.
"""

from __future__ import annotations

from urllib.parse import urlencode, urlsplit

from flask import Blueprint, redirect, render_template, request
from flask.typing import ResponseReturnValue

from core.messages import say
from service.web import csrf
from service.web.auth import PARAM, adopt, contested, name_of, page_session
from service.web.student.actions import Refused

bp = Blueprint("switching", __name__)


@bp.before_app_request
def ask() -> ResponseReturnValue | None:
    """Answer a request that came with another user's link with a page that asks whose."""
    theirs = contested()
    if theirs is None:
        return None
    if request.method not in ("GET", "HEAD"):
        raise Refused(
            409,
            "another_users_link",
            say("This link belongs to another user's session; open the page from your course."),
        )
    target = _without_token()
    page = render_template(
        "switching.html",
        theirs=name_of(theirs["user_id"]),
        link=request.args.get(PARAM, ""),
        target=target,
        **page_session(),  # the browser's own session: its name, its CSRF token
    )
    return page, 409


@bp.post("/session/switch")
def switch() -> ResponseReturnValue:
    """Make a link's session this browser's own, as its user chose, and open the link's page."""
    csrf.check(request.form.get(csrf.FIELD))
    target = request.form.get("next", "")
    if not _local(target):
        raise Refused(400, "bad_request", say("The page to open is not one of this tool's."))
    if not adopt(request.form.get("link", "")):
        raise Refused(
            400, "stale_link", say("The link has expired; open the page again from your course.")
        )
    return redirect(target, code=303)


def _without_token() -> str:
    query = urlencode([(k, v) for k, v in request.args.items(multi=True) if k != PARAM])
    return request.path + (f"?{query}" if query else "")


def _local(target: str) -> bool:
    """Return whether a target is a path of this tool (never another site's address)."""
    parts = urlsplit(target)
    return (
        target.startswith("/")
        and not target.startswith("//")
        and "\\" not in target
        and not parts.scheme
        and not parts.netloc
    )
