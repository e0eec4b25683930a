"""Who is asking: the signed-in user, the placements they launched into, the courses they teach.

The LTI launch (service.lti) calls sign_in() after validating a launch; everything else asks
current_user(). The session is Flask's signed session. Inside an LMS iframe, browsers that
block third-party cookies never send the cookie back, so the session also travels with the
page itself, signed with the instance's secret key in one of two tokens:
- the session token, in the `X-CodeBlanks-Session` header of the page script's requests: it
  lives in the page's memory and is good for the session's life;
- the link token, as `s` in a link, a form's action or the live status stream's URL (the
  only places where a cookie-less page can put it): signed with another salt, so it is never
  taken for a session token, and good for `LINK_LIFETIME` (15 minutes) after it was signed.
  A URL is copied, pasted, logged and kept in history: whoever holds one acts as its owner,
  so it must die soon. The page's script (static/session.js) signs a fresh one through the
  API while the page is in use, so a page left idle leaves links that die.

The page's own token wins over the cookie: a browser may hold the cookie of another user's
launch (two tabs, two LMS accounts, a teacher's student view), and the page must stay the
page of whoever it was opened for; a session read from a token never writes the cookie.
Except in one case: a navigation that did not come from the tool's own pages (a link pasted
or followed from elsewhere: `Sec-Fetch-Site` is not `same-origin`, or absent) whose link
token is another user's than the browser's own cookie session. That link does not switch the
browser silently: the request keeps the cookie's session and carries the link's aside
(contested()), and service.web.switching asks whose session to go on with.

A session lives `PERMANENT_SESSION_LIFETIME` from its launch, however much it is used: only a
new launch (a fresh word from the LMS) starts the clock again.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from flask import Flask, Request, Response, current_app, session
from flask.sessions import SecureCookieSession, SecureCookieSessionInterface, SessionMixin
from flask_babel import gettext as _
from itsdangerous import URLSafeTimedSerializer

from service.outbound import loopback
from service.store import memberships
from service.web import csrf, extensions

_USER = "user_id"
_PLACEMENTS = "placement_ids"
_TEACHES = "teacher_course_ids"
_SINCE = "launched_at"  # when the launch that started the session happened (Unix time)
_FRAMES = "frame_origins"  # the origins of the LMS pages that may frame this session's pages
MAX_FRAME_ORIGINS = 8
MAX_TOKEN = 16384  # characters: a session is a few hundred; refuse to verify megabytes
_HOST = re.compile(r"^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])$")
HEADER = "X-CodeBlanks-Session"
PARAM = "s"
LINK_SALT = "codeblanks.link"  # the session's own salt is Flask's "cookie-session"


@dataclass(frozen=True)
class SignedIn:
    """A user with a session, the placements their launches opened, the courses they teach."""

    user_id: int
    placement_ids: frozenset[int]
    teacher_course_ids: frozenset[int] = frozenset()

    def may_open(self, placement_id: int) -> bool:
        """Return whether a launch gave this user the placement."""
        return placement_id in self.placement_ids

    def teaches(self, course_id: int) -> bool:
        """Return whether a launch showed this user as staff of the course."""
        return course_id in self.teacher_course_ids


def current_user() -> SignedIn | None:
    """Return the session's user, or None when nobody has launched."""
    user_id = session.get(_USER)
    if not isinstance(user_id, int):
        return None
    return SignedIn(user_id, _ints(session.get(_PLACEMENTS)), _ints(session.get(_TEACHES)))


def sign_in(
    user_id: int,
    placement_ids: Iterable[int],
    teacher_course_ids: Iterable[int] = (),
    frame_urls: Iterable[str] = (),
) -> None:
    """Start (or extend) the session after a launch: the user, placements and taught courses.

    `frame_urls` are URLs of the LMS that launched (issuer, login, return URL): their origins
    may frame the session's pages.
    """
    if session.get(_USER) != user_id:
        session.clear()
    session[_USER] = user_id
    session[_PLACEMENTS] = sorted(set(session.get(_PLACEMENTS) or []) | set(placement_ids))
    session[_TEACHES] = sorted(set(session.get(_TEACHES) or []) | set(teacher_course_ids))
    fresh = list(dict.fromkeys(o for o in (origin_of(u) for u in frame_urls) if o))
    kept = [o for o in session.get(_FRAMES) or [] if isinstance(o, str) and o not in fresh]
    session[_FRAMES] = (fresh + kept)[:MAX_FRAME_ORIGINS]
    session[_SINCE] = int(time.time())
    session.permanent = True


def add_placements(placement_ids: Iterable[int]) -> None:
    """Let the signed-in user open more placements (a teacher's pick), keeping the clock."""
    session[_PLACEMENTS] = sorted(set(session.get(_PLACEMENTS) or []) | set(placement_ids))


def frame_origins() -> list[str]:
    """Return the LMS origins that may frame this session's pages (none without a session)."""
    if not isinstance(session.get(_USER), int):
        return []
    return [o for o in session.get(_FRAMES) or [] if isinstance(o, str) and origin_of(o) == o]


def origin_of(url: str) -> str | None:
    """Return a URL's origin as a CSP source (https, or http on loopback), or None."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    host = parts.hostname or ""
    if not _HOST.match(host if ":" not in host else f"[{host}]"):
        return None
    if parts.scheme != "https" and not (parts.scheme == "http" and loopback(host)):
        return None
    shown = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{shown}" + (f":{port}" if port else "")


def session_token() -> str:
    """Return the current session, signed, for the page's script to send as its header."""
    return str(_signer(current_app, PortableSessionInterface.salt).dumps(dict(session)))


def link_token() -> str:
    """Return the current session signed for a URL (`s`): good for LINK_LIFETIME from now."""
    return str(_signer(current_app, LINK_SALT).dumps(dict(session)))


def page_session() -> dict[str, str]:
    """Return what a page of this session carries: its three tokens, and whose session it is."""
    # the CSRF nonce lives in the session: make it before signing the session for the page
    form_token = csrf.token()
    user = current_user()
    return {
        "csrf_token": form_token,
        "session_token": session_token(),
        "link_token": link_token(),
        "signed_in_as": name_of(user.user_id) if user else "",
    }


def name_of(user_id: int) -> str:
    """Return how pages name a user: the name their LMS gave, its email, else its id for them."""
    with extensions.store().session() as db:
        user = memberships.user(db, user_id)
        if user is None:
            return str(_("an unknown user"))
        return user.name or user.email or str(_("LMS user %(id)s", id=user.sub[:64]))


def contested() -> dict[str, Any] | None:
    """Return the session of another user's link that this request came with, if it did."""
    found = getattr(session, "contested", None)
    return found if isinstance(found, dict) else None


def adopt(token: str) -> bool:
    """Make a fresh link token's session this browser's own (a switch the user chose)."""
    found = _load(current_app, token, [(LINK_SALT, _link_lifetime(current_app))])
    if not isinstance(found.get(_USER), int):
        return False
    session.clear()
    session.update(found)
    session.permanent = True
    return True


class PortableSessionInterface(SecureCookieSessionInterface):
    """Flask's signed-cookie session, also read from a header or an `s` parameter."""

    def open_session(self, app: Flask, request: Request) -> SecureCookieSession | None:
        """Read the session from the page's header or link token, else from the cookie."""
        header = request.headers.get(HEADER)
        if header:  # the page's script: either token, whatever the cookie says
            both = [(self.salt, _session_lifetime(app)), (LINK_SALT, _link_lifetime(app))]
            return self._from_page(_load(app, header, both))
        cookie = self._cookie(app, request)
        # the query, never the form: parsing a body here would bypass the size checks
        link = request.args.get(PARAM)
        if not link:
            return cookie
        found = _load(app, link, [(LINK_SALT, _link_lifetime(app))])
        if cookie is not None and _another_users(request, cookie, found):
            cookie.contested = found  # type: ignore[attr-defined]
            return cookie
        return self._from_page(found)

    def save_session(self, app: Flask, session: SessionMixin, response: Response) -> None:
        """Write the cookie, unless the session came with the page (its links carry it)."""
        if getattr(session, "from_page", False):
            return
        super().save_session(app, session, response)

    def _cookie(self, app: Flask, request: Request) -> SecureCookieSession | None:
        opened = super().open_session(app, request)
        if opened is not None and not _fresh(app, opened):
            return self.session_class()
        return opened

    def _from_page(self, data: dict[str, Any]) -> SecureCookieSession:
        found = self.session_class(data)
        found.from_page = True  # type: ignore[attr-defined]
        return found


def _another_users(request: Request, cookie: SessionMixin, link: dict[str, Any]) -> bool:
    """Return whether a link from outside the tool is another user's than the cookie's."""
    if request.headers.get("Sec-Fetch-Site") == "same-origin":
        return False  # the tool's own page: its token wins, as for its script's header
    mine, theirs = cookie.get(_USER), link.get(_USER)
    return isinstance(mine, int) and isinstance(theirs, int) and mine != theirs


def _load(app: Flask, token: str, kinds: list[tuple[str, float]]) -> dict[str, Any]:
    """Return the session a token signs with one of `kinds` (salt, lifetime), else nothing."""
    if len(token) > MAX_TOKEN:
        return {}
    for salt, lifetime in kinds:
        try:
            data = _signer(app, salt).loads(token, max_age=int(lifetime))
        except Exception:  # noqa: BLE001  a bad or stale token is no session
            continue
        if isinstance(data, dict) and _fresh(app, data):
            return data
    return {}


def _signer(app: Flask, salt: str) -> URLSafeTimedSerializer:
    """Return Flask's session serializer (its keys, fallbacks and JSON) with `salt`."""
    interface = SecureCookieSessionInterface()
    interface.salt = salt
    serializer = interface.get_signing_serializer(app)
    assert serializer is not None, "the app has a secret key (service.instance)"
    return serializer


def _session_lifetime(app: Flask) -> float:
    return app.permanent_session_lifetime.total_seconds()


def _link_lifetime(app: Flask) -> float:
    return float(app.config["LINK_LIFETIME"].total_seconds())


def _fresh(app: Flask, data: Any) -> bool:
    """Return whether a session's launch is recent enough (or it holds nobody yet)."""
    if not isinstance(data.get(_USER), int):
        return True  # no user: nothing to expire (a CSRF nonce, a login in progress)
    since = data.get(_SINCE)
    return isinstance(since, int) and 0 <= time.time() - since <= _session_lifetime(app)


def init_app(app: Flask) -> None:
    """Use the portable session; the cookie itself must survive a cross-site iframe."""
    app.session_interface = PortableSessionInterface()
    secure = extensions.settings(app).base_url.startswith("https://")
    app.config.update(
        SESSION_COOKIE_SECURE=secure,
        # inside the LMS iframe the tool is a third party: only SameSite=None (with Secure)
        # comes back; over plain http (loopback LMSs) Lax is all browsers accept
        SESSION_COOKIE_SAMESITE="None" if secure else "Lax",
        SESSION_COOKIE_HTTPONLY=True,
    )


def _ints(values: Any) -> frozenset[int]:
    return frozenset(v for v in values or [] if isinstance(v, int))
