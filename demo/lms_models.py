"""The demo LMS's records, as frozen dataclasses, and its seeded course and people."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"


@dataclass(frozen=True)
class User:
    """A person of the demo course; `sub` is the stable id the tool sees."""

    sub: str
    given_name: str
    family_name: str
    email: str
    role: str  # LEARNER or INSTRUCTOR

    @property
    def name(self) -> str:
        """Return the full display name."""
        return f"{self.given_name} {self.family_name}"

    @property
    def is_instructor(self) -> bool:
        """Return whether this user teaches the course."""
        return self.role == INSTRUCTOR


@dataclass(frozen=True)
class Course:
    """An LTI context."""

    id: str
    label: str
    title: str


COURSE = Course(id="demo-course-1", label="DEMO101", title="Demo course")
TEACHER = User("demo-ada", "Ada", "Teacher", "ada.teacher@example.com", INSTRUCTOR)
STUDENTS = (
    User("demo-ali", "Ali", "Student", "ali.student@example.com", LEARNER),
    User("demo-berna", "Berna", "Student", "berna.student@example.com", LEARNER),
    User("demo-can", "Can", "Student", "can.student@example.com", LEARNER),
)
USERS: dict[str, User] = {u.sub: u for u in (TEACHER, *STUDENTS)}


def roster(learners: int) -> dict[str, User]:
    """Return the course's people: the seeded four and `learners` more students."""
    more = (
        User(f"demo-learner-{n}", "Learner", str(n), f"learner{n}@example.com", LEARNER)
        for n in range(1, learners + 1)
    )
    return {**USERS, **{u.sub: u for u in more}}


COURSES: dict[str, Course] = {COURSE.id: COURSE}


@dataclass(frozen=True)
class Tool:
    """A registered tool: one client id with one deployment."""

    client_id: str
    deployment_id: str
    name: str
    login_url: str
    launch_url: str
    redirect_uris: tuple[str, ...]
    jwks_url: str | None = None
    # A key set given inline at registration instead of a URL (Canvas allows both).
    jwks: dict[str, Any] | None = None
    deep_link_url: str | None = None
    scopes: tuple[str, ...] = ()
    custom: dict[str, str] = field(default_factory=dict)
    active: bool = True


@dataclass(frozen=True)
class Checkboxes:
    """A Sakai admin's two boxes for one tool (Personality.scope_checkboxes); both start
    unticked, as on Sakai's "Install LTI 1.x Tool" form (lti/docs/TSUGI.md)."""

    outcomes: bool = False  # "Allow External Tool to return grades" (allowoutcomes)
    lineitems: bool = False  # "Allow External Tool to create grade columns" (allowlineitems)


@dataclass(frozen=True)
class Link:
    """A resource link (placement) of a tool in a course."""

    id: str
    course_id: str
    client_id: str
    title: str
    url: str  # the target_link_uri of its launches
    custom: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class LineItem:
    """A gradebook column owned by a tool."""

    id: int
    course_id: str
    client_id: str
    label: str
    score_maximum: float
    resource_id: str | None = None
    tag: str | None = None
    resource_link_id: str | None = None
    start_date_time: str | None = None
    end_date_time: str | None = None
    # LTI Submission Review: {"reviewableStatus": [...], "label"?, "url"?, "custom"?}
    submission_review: dict[str, Any] | None = None


@dataclass(frozen=True)
class Score:
    """One score the tool posted, kept whole as received; `applied` is False when refused.

    A refused score was answered 409 (not a later second than the grade held); it is kept so
    the gradebook page can show every score received.
    """

    id: int
    lineitem_id: int
    user_id: str
    body: dict[str, Any]
    received_at: float
    applied: bool


@dataclass(frozen=True)
class LoginInitiation:
    """Where and how the platform sends the browser to start a launch (the OIDC 3rd party)."""

    login_url: str
    method: str  # GET or POST
    params: dict[str, str]

    @property
    def url(self) -> str:
        """Return the login URL with the parameters in the query (what a GET visits)."""
        sep = "&" if "?" in self.login_url else "?"
        return self.login_url + sep + urlencode(self.params)


@dataclass(frozen=True)
class AutoPost:
    """A form the browser submits by itself: the launch or a login initiation by POST."""

    action: str
    fields: dict[str, str]
    # The decoded claims of the id_token it carries, for tests; empty for other forms.
    claims: dict[str, Any] = field(default_factory=dict)

    def html(self, title: str = "Launching…") -> str:
        """Return a self-submitting HTML page (with a button when scripts are off)."""
        inputs = "".join(
            f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">'
            for k, v in self.fields.items()
        )
        return (
            f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
            f"</title></head><body><form id='autopost' method='post' "
            f"action='{html.escape(self.action)}'>{inputs}"
            "<noscript><button type='submit'>Continue</button></noscript></form>"
            "<script>document.getElementById('autopost').submit()</script></body></html>"
        )
