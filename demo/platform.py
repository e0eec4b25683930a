"""DemoPlatform: the demo LMS as one object, the API that tests and the web layer use."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from demo import lms_ags, lms_registration, oidc
from demo.config import DemoConfig
from demo.knobs import Knobs, Mode
from demo.lms_errors import DemoError
from demo.lms_keys import PlatformKey
from demo.lms_models import (
    COURSE,
    AutoPost,
    Checkboxes,
    LineItem,
    Link,
    LoginInitiation,
    Score,
    Tool,
    User,
    roster,
)
from demo.records import Records
from demo.tokens import ALL_SCOPES

PLATFORM_CONFIG = "https://purl.imsglobal.org/spec/lti-platform-configuration"


class DemoPlatform:
    """A small but strict LTI 1.3 Advantage platform with one course and four people."""

    def __init__(self, config: DemoConfig) -> None:
        self.config = config
        self.key = PlatformKey.load_or_create(config.state_dir)
        self.records = Records(config.state_dir / "demo.sqlite3")
        self.knobs = Knobs()
        self.users: dict[str, User] = roster(config.learners)
        # Canvas's publishing (tests set it): an unpublished course takes no scores (course.rb
        # user_is_student? is false unless available?), nor does an unpublished assignment
        self.course_published = True
        self.unpublished: set[int] = set()
        self._boxes: dict[str, Checkboxes] = {}

    # identity and URLs
    @property
    def issuer(self) -> str:
        """Return the issuer (the base URL)."""
        return self.config.issuer

    def _at(self, demo: str, canvas: str) -> str:
        """Return one of the platform's own URLs, on Canvas's route when it plays Canvas."""
        return self.config.url(canvas if self.config.plays.canvas_routes else demo)

    @property
    def auth_url(self) -> str:
        """Return the OIDC authorization endpoint (Canvas: authorize_redirect, which sends the
        browser on to the school's own /api/lti/authorize)."""
        return self._at("/auth", "/api/lti/authorize_redirect")

    @property
    def token_url(self) -> str:
        """Return the token endpoint."""
        return self._at("/token", "/login/oauth2/token")

    @property
    def token_audience(self) -> str:
        """Return the only `aud` the token endpoint accepts in a client assertion: the token
        URL, or the personality's own audience (Brightspace's OAuth2 Audience)."""
        return self.config.plays.token_audience or self.token_url

    @property
    def jwks_url(self) -> str:
        """Return the URL of the platform's public keys."""
        return self._at("/jwks", "/api/lti/security/jwks")

    @property
    def openid_config_url(self) -> str:
        """Return the URL of the platform's OpenID configuration."""
        return self._at(
            "/.well-known/openid-configuration", "/api/lti/security/openid-configuration"
        )

    @property
    def registration_url(self) -> str:
        """Return the dynamic registration endpoint tools POST to."""
        return self._at("/register", "/api/lti/registrations")

    def _service(self, path: str) -> str:
        query = self.config.service_url_query
        return self.config.url(path) + (f"?{query}" if query else "")

    def lineitems_url(self, course_id: str) -> str:
        """Return a course's line item container URL."""
        if self.config.plays.canvas_routes:
            return self._service(f"/api/lti/courses/{course_id}/line_items")
        return self._service(f"/courses/{course_id}/lineitems")

    def lineitem_url(self, item: LineItem) -> str:
        """Return a line item's URL (its id)."""
        if self.config.plays.canvas_routes:
            return self._service(f"/api/lti/courses/{item.course_id}/line_items/{item.id}")
        return self._service(f"/courses/{item.course_id}/lineitems/{item.id}")

    def memberships_url(self, course_id: str) -> str:
        """Return a course's NRPS membership URL."""
        if self.config.plays.canvas_routes:
            return self._service(f"/api/lti/courses/{course_id}/names_and_roles")
        return self._service(f"/courses/{course_id}/memberships")

    def openid_configuration(self) -> dict[str, Any]:
        """Return the platform's OpenID configuration with the LTI platform section."""
        found = {
            "issuer": self.issuer,
            "authorization_endpoint": self.auth_url,
            "token_endpoint": self.token_url,
            "token_endpoint_auth_methods_supported": ["private_key_jwt"],
            "token_endpoint_auth_signing_alg_values_supported": ["RS256"],
            "jwks_uri": self.jwks_url,
            "registration_endpoint": self.registration_url,
            "scopes_supported": ["openid", *ALL_SCOPES],
            "response_types_supported": ["id_token"],
            "response_modes_supported": ["form_post"],
            "subject_types_supported": ["public", "pairwise"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "claims_supported": ["sub", "iss", "name", "given_name", "family_name", "email"],
            PLATFORM_CONFIG: {
                "product_family_code": self.config.product_family_code,
                "version": "1.0",
                "messages_supported": [
                    {"type": "LtiResourceLinkRequest"},
                    {"type": "LtiDeepLinkingRequest", "placements": ["ContentArea"]},
                ],
                "variables": list(oidc.VARIABLES),
            },
        }
        if not self.config.plays.dynamic_registration:
            del found["registration_endpoint"]
        # LTI Dynamic Registration 1.0: the `aud` of the tool's token requests (Brightspace's
        # OAuth2 Audience), or only a name for the platform (Canvas's host)
        named = self.config.plays.authorization_server or self.config.plays.token_audience
        if named:
            found["authorization_server"] = named
        return found

    # registration
    def register_tool(self, **kwargs: Any) -> Tool:
        """Register a tool by hand; see lms_registration.register_tool for the arguments."""
        return lms_registration.register_tool(self, **kwargs)

    def start_registration(self, register_url: str) -> str:
        """Return the tool URL (with openid_configuration and a one-time token) to open."""
        return lms_registration.start_registration(self, register_url)

    def activate(self, client_id: str) -> Tool:
        """Activate a tool left pending by dynamic registration."""
        tool = replace(self.tool(client_id), active=True)
        self.records.put_tool(tool)
        return tool

    def untick(self, client_id: str, *scopes: str) -> Tool:
        """Take scopes off a tool, as a Canvas admin unticks them on the key's review page
        (the registration's overlay `disabledScopes`, lti/ims/registration.rb)."""
        tool = replace(
            self.tool(client_id),
            scopes=tuple(s for s in self.tool(client_id).scopes if s not in scopes),
        )
        self.records.put_tool(tool)
        return tool

    def tick(self, client_id: str, *, outcomes: bool, lineitems: bool) -> Checkboxes:
        """Set a tool's two Sakai checkboxes (return grades, create grade columns)."""
        self.tool(client_id)
        boxes = Checkboxes(outcomes=bool(outcomes), lineitems=bool(lineitems))
        self._boxes[client_id] = boxes
        return boxes

    def checkboxes(self, client_id: str) -> Checkboxes:
        """Return a tool's two Sakai checkboxes (both unticked until `tick`)."""
        return self._boxes.get(client_id, Checkboxes())

    def tool(self, client_id: str) -> Tool:
        """Return a registered tool; DemoError 404 if there is none."""
        tool = self.records.tool(client_id)
        if tool is None:
            raise DemoError(404, f"no tool registered with client id {client_id!r}")
        return tool

    def tools(self) -> list[Tool]:
        """Return every registered tool."""
        return self.records.tools()

    # content
    def add_link(
        self,
        client_id: str,
        title: str,
        *,
        url: str | None = None,
        custom: dict[str, str] | None = None,
        score_maximum: float | None = None,
    ) -> Link:
        """Place a tool's link in the course by hand, with a line item if given a maximum
        (none in a Brightspace, whose links make no grade item: links_make_grade_items)."""
        tool = self.tool(client_id)
        link = Link(
            f"rl-{secrets.token_hex(6)}",
            COURSE.id,
            client_id,
            title,
            url or tool.launch_url,
            dict(custom or {}),
        )
        self.records.put_link(link)
        if score_maximum is not None and self.config.plays.links_make_grade_items:
            self.records.add_lineitem(
                LineItem(
                    0, COURSE.id, client_id, title, float(score_maximum), resource_link_id=link.id
                )
            )
        return link

    def links(self) -> list[Link]:
        """Return the course's resource links."""
        return self.records.links(COURSE.id)

    def lineitems(self) -> list[LineItem]:
        """Return every line item of the course, of every tool."""
        return self.records.lineitems(COURSE.id)

    def lineitems_of(self, link: Link) -> list[LineItem]:
        """Return the line items attached to a resource link."""
        return [i for i in self.lineitems() if i.resource_link_id == link.id]

    # launches
    def launch(self, user: str, link_id: str, locale: str = "en") -> LoginInitiation:
        """Start a resource-link launch as `user` (a sub, or a first name like 'ali')."""
        return oidc.initiate(self, self.user_sub(user), link_id=link_id, locale=locale)

    def review(self, user: str, link_id: str, for_user: str, locale: str = "en") -> LoginInitiation:
        """Start a submission review of `for_user`'s work on a link, as `user` (Moodle's
        gradebook link for one student)."""
        return oidc.initiate(
            self,
            self.user_sub(user),
            link_id=link_id,
            locale=locale,
            for_user=self.user_sub(for_user),
        )

    def deep_link(self, user: str, client_id: str, locale: str = "en") -> LoginInitiation:
        """Start a deep-linking request to a tool as `user` (an instructor)."""
        return oidc.initiate(self, self.user_sub(user), client_id=client_id, locale=locale)

    def authorize(
        self,
        params: Mapping[str, str],
        *,
        mutate: oidc.Mutate | None = None,
        headers: dict[str, Any] | None = None,
        algorithm: str = "RS256",
    ) -> AutoPost:
        """Answer an authentication request as /auth does (optionally tampering with it)."""
        return oidc.authorize(self, params, mutate=mutate, headers=headers, algorithm=algorithm)

    def sign(
        self,
        claims: dict[str, Any],
        headers: dict[str, Any] | None = None,
        algorithm: str = "RS256",
    ) -> str:
        """Sign any claims with the platform key (kid header unless overridden)."""
        return self.key.sign(claims, headers, algorithm)

    def user_sub(self, user: str) -> str:
        """Return the sub of a user given by sub or by lower-case first name."""
        if user in self.users:
            return user
        if f"demo-{user.lower()}" in self.users:
            return f"demo-{user.lower()}"
        raise DemoError(404, f"no user {user!r} in the demo course")

    # grades and failures
    def scores(self, lineitem_id: int | None = None, user: str | None = None) -> list[Score]:
        """Return every score received (applied or refused), oldest first."""
        return self.records.scores(lineitem_id, self.user_sub(user) if user else None)

    def gradebook(self) -> dict[tuple[str, int], Score]:
        """Return the latest applied score per (user sub, line item id)."""
        return {
            (sub, item.id): score
            for item in self.lineitems()
            for sub, score in lms_ags.latest_scores(self, item).items()
        }

    def clear(self, lineitem_id: int, user: str) -> float:
        """Blank `user`'s grade on a line item, as a teacher's reset in Moodle's gradebook does:
        the results list them without a score, and a score stamped no later is refused."""
        if self.records.lineitem(lineitem_id) is None:
            raise DemoError(404, f"no line item {lineitem_id}")
        return self.records.clear(lineitem_id, self.user_sub(user))

    def fail(
        self,
        target: str,
        times: int = 1,
        mode: Mode = "error",
        delay_s: float = 5.0,
        status: int = 500,
    ) -> None:
        """Make the next `times` requests to 'token', 'ags', 'results' or 'nrps' fail or hang."""
        self.knobs.fail(target, times, mode, delay_s, status)

    def throttle(self, times: int = 1, client_id: str | None = None) -> None:
        """Answer the next `times` service requests of `client_id` (None: of any tool) with
        Canvas's throttle, 403 text/plain (playing Canvas only)."""
        self.knobs.throttle(times, client_id)

    def publish(self, published: bool = True, lineitem_id: int | None = None) -> None:
        """Publish or unpublish the course (lineitem_id None) or one assignment (its line
        item), as a Canvas teacher does."""
        if lineitem_id is None:
            self.course_published = published
            return
        if self.records.lineitem(lineitem_id) is None:
            raise DemoError(404, f"no line item {lineitem_id}")
        if published:
            self.unpublished.discard(lineitem_id)
        else:
            self.unpublished.add(lineitem_id)

    def developer_key(
        self,
        *,
        url: object = None,
        json_config: object = None,
        redirect_uris: object = None,
    ) -> Tool:
        """Make a Canvas developer key from a tool's JSON (given, or fetched from `url`), turn
        it ON and deploy it in the course, as a Canvas admin does; return the tool."""
        return lms_registration.developer_key(self, url, json_config, redirect_uris)

    def down_for(self, seconds: float, status: int = 502) -> None:
        """Answer every request of the tool's (token, AGS, NRPS) `status` for `seconds`."""
        self.knobs.down_for(seconds, status)
