"""Settings of the demo LMS, passed in by whoever mounts it (tests, `codeblanks dev`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from demo.personalities import LmsName, Personality, personality


@dataclass(frozen=True)
class DemoConfig:
    """How the demo platform presents itself and how strict or LMS-like it behaves."""

    # The issuer: the public URL the blueprint is mounted at, e.g. http://127.0.0.1:5000/demo.
    base_url: str
    # Holds the platform's private key and its SQLite file; created at first start.
    state_dir: Path
    # The tool's public base URL, offered on the course page for dynamic registration.
    tool_url: str | None = None
    # False: a dynamically registered tool waits for an admin to activate it (like Moodle).
    activate_registrations: bool = True
    # Moodle sends the login initiation as an auto-submitted form POST; "GET" redirects
    # instead, for tests of a tool's GET path.
    login_method: Literal["GET", "POST"] = "POST"
    # Canvas adds lti_storage_target to the login initiation (platform storage by postMessage).
    storage_target: str | None = None
    # Moodle's id_tokens live 60 s: a tool must check them at once, with little leeway.
    id_token_lifetime_s: int = 60
    access_token_lifetime_s: int = 3600
    registration_token_lifetime_s: int = 3600
    # Accepted drift between the tool's clock and ours for iat.
    leeway_s: int = 10
    product_family_code: str = "codeblanks-demo"
    # Moodle's service URLs carry a query (".../lineitem?type_id=3"): tools must append
    # "/scores" to the path, not to the query. E.g. "type_id=1".
    service_url_query: str = ""
    # Moodle answers its token endpoint's JSON as text/html; tools must not depend on the type.
    token_content_type: str = "application/json"
    # Moodle lists a line item's results in one page unless the tool asks for `limit`;
    # Canvas pages them (10 by default). A number here pages them when the tool asks for none.
    results_per_page: int | None = None
    # Students beyond the seeded three (demo-learner-1, ...): a class for a deadline rush
    # (benchmarks/rush.py); the course page still lists the seeded people only.
    learners: int = 0
    # Which LMS the platform plays (demo/personalities.py): a name or a Personality.
    personality: Personality | str = "moodle"

    def __post_init__(self) -> None:
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"demo base_url must be an absolute http(s) URL: {self.base_url!r}")
        if parts.query or parts.fragment:
            raise ValueError(f"demo base_url must not carry a query: {self.base_url!r}")
        object.__setattr__(self, "base_url", self.base_url.rstrip("/"))
        object.__setattr__(self, "state_dir", Path(self.state_dir))
        plays = personality(self.personality)
        object.__setattr__(self, "personality", plays)
        if plays.product_family_code is not None:
            object.__setattr__(self, "product_family_code", plays.product_family_code)

    @property
    def plays(self) -> Personality:
        """Return the personality (always a Personality once constructed)."""
        assert isinstance(self.personality, Personality)
        return self.personality

    @property
    def lms(self) -> LmsName:
        """Return the name of the LMS played."""
        return self.plays.name

    @property
    def issuer(self) -> str:
        """Return the platform's issuer identifier: its base URL, or the LMS's one issuer
        (Canvas: https://canvas.instructure.com, Blackboard: https://blackboard.com)."""
        return self.plays.issuer or self.base_url

    @property
    def mount_path(self) -> str:
        """Return the URL path the blueprint must be mounted at ('' for the root)."""
        return urlsplit(self.base_url).path.rstrip("/")

    def url(self, path: str) -> str:
        """Return the absolute URL of one of the platform's own paths."""
        return self.base_url + path
