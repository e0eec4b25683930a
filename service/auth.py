"""Who is asking: the signed-in user, the placements they launched into, the courses they teach.

The LTI launch (service.lti) calls sign_in() after validating a launch; everything else asks
current_user(). The session is Flask's signed session. Inside an LMS iframe, browsers that
block third-party cookies never send the cookie back, so the same signed value also travels
with the page itself: as the `X-CodeBlanks-Session` header of its requests, or as `s` in a
link or form. Either way it is signed with the instance's secret key and expires.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from flask import Flask, Request, current_app, session
from flask.sessions import SecureCookieSession, SecureCookieSessionInterface

_USER = "user_id"
_PLACEMENTS = "placement_ids"
_TEACHES = "teacher_course_ids"
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
    user_id: int, placement_ids: Iterable[int], teacher_course_ids: Iterable[int] = ()
) -> None:
    """Start (or extend) the session after a launch: the user, placements and taught courses."""
    if session.get(_USER) != user_id:
        session.clear()
    session[_USER] = user_id
    session[_PLACEMENTS] = sorted(set(session.get(_PLACEMENTS) or []) | set(placement_ids))
    session[_TEACHES] = sorted(set(session.get(_TEACHES) or []) | set(teacher_course_ids))
    session.permanent = True


def session_token() -> str:
    """Return the current session, signed, for pages to carry where cookies may not come back."""
    serializer = current_app.session_interface.get_signing_serializer(current_app)  # type: ignore[attr-defined]
    assert serializer is not None
    return str(serializer.dumps(dict(session)))


class PortableSessionInterface(SecureCookieSessionInterface):
    """Flask's signed-cookie session, also read from a header or an `s` parameter."""

    def open_session(self, app: Flask, request: Request) -> SecureCookieSession | None:
        """Read the session from the cookie, else from the page's header or parameter."""
        # the query, never the form: parsing a body here would bypass the size checks
        token = request.headers.get(HEADER) or request.args.get(PARAM)
        if token and not request.cookies.get(self.get_cookie_name(app)):
            serializer = self.get_signing_serializer(app)
            if serializer is not None:
                max_age = int(app.permanent_session_lifetime.total_seconds())
                try:
                    data: dict[str, Any] = serializer.loads(token, max_age=max_age)
                    return self.session_class(data)
                except Exception:  # noqa: BLE001  a bad or stale token is no session
                    return self.session_class()
        return super().open_session(app, request)


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
