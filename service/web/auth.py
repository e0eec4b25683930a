"""Who is asking: the signed-in user, the placements they launched into, the courses they teach.

The LTI launch (service.lti) calls sign_in() after validating a launch; everything else asks
current_user(). The session is Flask's signed session. Inside an LMS iframe, browsers that
block third-party cookies never send the cookie back, so the same signed value also travels
with the page itself: as the `X-CodeBlanks-Session` header of its requests, or as `s` in a
link or form. Either way it is signed with the instance's secret key and expires.

The page's own token wins over the cookie: a browser may hold the cookie of another user's
launch (two tabs, two LMS accounts), and the page must stay the page of whoever it was
opened for; a session read from a token never writes the cookie. A session lives
`PERMANENT_SESSION_LIFETIME` from its launch, however much it is used: only a new launch
(a fresh word from the LMS) starts the clock again.
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

from service.outbound import loopback

_USER = "user_id"
_PLACEMENTS = "placement_ids"
_TEACHES = "teacher_course_ids"
_SINCE = "launched_at"  # when the launch that started the session happened (Unix time)
_FRAMES = "frame_origins"  # the origins of the LMS pages that may frame this session's pages
MAX_FRAME_ORIGINS = 8
_HOST = re.compile(r"^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])$")
HEADER = "X-CodeBlanks-Session"
PARAM = "s"


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
    """Return the current session, signed, for pages to carry where cookies may not come back."""
    serializer = current_app.session_interface.get_signing_serializer(current_app)  # type: ignore[attr-defined]
    assert serializer is not None
    return str(serializer.dumps(dict(session)))


class PortableSessionInterface(SecureCookieSessionInterface):
    """Flask's signed-cookie session, also read from a header or an `s` parameter."""

    def open_session(self, app: Flask, request: Request) -> SecureCookieSession | None:
        """Read the session from the page's header or parameter, else from the cookie."""
        # the query, never the form: parsing a body here would bypass the size checks
        token = request.headers.get(HEADER) or request.args.get(PARAM)
        if token:
            found = self.session_class(self._load(app, token))
            found.from_page = True  # type: ignore[attr-defined]
            return found
        opened = super().open_session(app, request)
        if opened is not None and not _fresh(app, opened):
            return self.session_class()
        return opened

    def save_session(self, app: Flask, session: SessionMixin, response: Response) -> None:
        """Write the cookie, unless the session came with the page (its links carry it)."""
        if getattr(session, "from_page", False):
            return
        super().save_session(app, session, response)

    def _load(self, app: Flask, token: str) -> dict[str, Any]:
        serializer = self.get_signing_serializer(app)
        if serializer is None or len(token) > 16384:
            return {}
        max_age = int(app.permanent_session_lifetime.total_seconds())
        try:
            data = serializer.loads(token, max_age=max_age)
        except Exception:  # noqa: BLE001  a bad or stale token is no session
            return {}
        if not isinstance(data, dict) or not _fresh(app, data):
            return {}
        return data


def _fresh(app: Flask, data: Any) -> bool:
    """Return whether a session's launch is recent enough (or it holds nobody yet)."""
    if not isinstance(data.get(_USER), int):
        return True  # no user: nothing to expire (a CSRF nonce, a login in progress)
    since = data.get(_SINCE)
    lifetime = app.permanent_session_lifetime.total_seconds()
    return isinstance(since, int) and 0 <= time.time() - since <= lifetime


def init_app(app: Flask) -> None:
    """Use the portable session; the cookie itself must survive a cross-site iframe."""
    app.session_interface = PortableSessionInterface()
    secure = app.config["SETTINGS"].base_url.startswith("https://")
    app.config.update(
        SESSION_COOKIE_SECURE=secure,
        # inside the LMS iframe the tool is a third party: only SameSite=None (with Secure)
        # comes back; over plain http (loopback LMSs) Lax is all browsers accept
        SESSION_COOKIE_SAMESITE="None" if secure else "Lax",
        SESSION_COOKIE_HTTPONLY=True,
    )


def _ints(values: Any) -> frozenset[int]:
    return frozenset(v for v in values or [] if isinstance(v, int))
