"""Driving a launch like a browser would, over real HTTP, for tests (no JavaScript)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any
from urllib.parse import parse_qsl, urljoin, urlsplit

import jwt
import requests

from demo.lms_models import AutoPost, LoginInitiation

REDIRECTS = (301, 302, 303, 307, 308)


class LaunchFlowError(Exception):
    """A step of the launch did not answer what a browser would need to go on."""


class _FormParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.action: str | None = None
        self.fields: dict[str, str] = {}
        self._done = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "form" and self.action is None:
            self.action = found.get("action") or ""
        elif tag == "input" and self.action is not None and not self._done and found.get("name"):
            self.fields[found["name"] or ""] = found.get("value") or ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._done = True


def parse_form(page: str, base_url: str = "") -> AutoPost:
    """Return the first form of a page as an AutoPost, with its id_token's claims UNVERIFIED."""
    parser = _FormParser()
    parser.feed(page)
    if parser.action is None:
        raise LaunchFlowError(f"no form in the page: {page[:300]!r}")
    claims: dict[str, Any] = {}
    if "id_token" in parser.fields:
        try:
            claims = jwt.decode(parser.fields["id_token"], options={"verify_signature": False})
        except jwt.PyJWTError:
            pass  # a hostile test token may not even parse; the fields are still returned
    return AutoPost(urljoin(base_url, parser.action), parser.fields, claims)


@dataclass
class LaunchTrace:
    """Every step of a launch, for assertions."""

    login: requests.Response
    auth_params: dict[str, str]
    form: AutoPost
    launch: requests.Response


def run_launch(
    session: requests.Session,
    initiation: LoginInitiation,
    *,
    authorize: Callable[[dict[str, str]], AutoPost] | None = None,
    timeout: float = 10,
) -> LaunchTrace:
    """Initiate login at the tool, follow it to the platform, post the form to the tool.

    `authorize` replaces the HTTP call to the platform's /auth, e.g.
    `lambda params: platform.authorize(params, mutate=...)` to send a tampered id_token.
    """
    if initiation.method == "POST":
        login = session.post(
            initiation.login_url, data=initiation.params, allow_redirects=False, timeout=timeout
        )
    else:
        login = session.get(initiation.url, allow_redirects=False, timeout=timeout)
    if login.status_code not in REDIRECTS:
        raise LaunchFlowError(
            f"the tool's login answered {login.status_code}, not a redirect: {login.text[:300]!r}"
        )
    location = urljoin(login.url, login.headers["Location"])
    params = dict(parse_qsl(urlsplit(location).query))
    if authorize is not None:
        form = authorize(params)
    else:
        auth = session.get(location, allow_redirects=False, timeout=timeout)
        for _ in range(3):  # Canvas's authorize_redirect sends the browser to the school's host
            if auth.status_code not in REDIRECTS:
                break
            location = urljoin(auth.url, auth.headers["Location"])
            auth = session.get(location, allow_redirects=False, timeout=timeout)
        if auth.status_code != 200:
            raise LaunchFlowError(f"the platform's /auth answered {auth.status_code}: {auth.text}")
        form = parse_form(auth.text, auth.url)
    launch = session.post(form.action, data=form.fields, allow_redirects=False, timeout=timeout)
    return LaunchTrace(login, params, form, launch)
