"""Security headers: CSP with nonces, who may frame a page, no sniffing, no referrer leaks."""

import re

import pytest

from service.lti.validation import ValidLaunch
from service.web import extensions
from service.web.auth import origin_of
from service.web.lms.launch_pages import _lms_urls
from testkit.apps import swap
from testkit.factories import place
from testkit.sessions import sign_in

LESSON = "expert/what-is-attention"
LTI = "https://purl.imsglobal.org/spec/lti/claim/"


def policy(response) -> dict[str, str]:
    found = {}
    for part in response.headers["Content-Security-Policy"].split(";"):
        name, _, value = part.strip().partition(" ")
        found[name] = value
    return found


def test_every_page_says_no_sniffing_and_sends_no_referrer(client):
    for path in ("/", "/healthz", "/api/submissions/1", "/lti/jwks", "/no-such-page"):
        response = client.get(path)
        assert response.headers["X-Content-Type-Options"] == "nosniff", path
        # not even to the tool itself: a page's address may carry a link token
        assert response.headers["Referrer-Policy"] == "no-referrer", path
        assert "Content-Security-Policy" in response.headers, path
    assert '<meta name="referrer" content="no-referrer">' in client.get("/").text


def test_scripts_run_only_from_the_tool_or_with_the_pages_nonce(app, client):
    csp = policy(client.get("/"))
    assert csp["script-src"] == "'self'" and csp["object-src"] == "'none'"
    assert csp["base-uri"] == "'none'"
    with app.test_request_context("/lti/pick/deep-link"):
        from flask import render_template

        from service.web.headers import nonce

        html = render_template("lti/autopost.html", action="https://lms.example/return", fields={})
        assert f'<script nonce="{nonce()}">' in html
    page = client.get("/lti/register")  # a page without inline scripts carries no nonce
    assert "nonce-" not in policy(page)["script-src"]


def test_a_teachers_page_is_framed_only_by_its_own_lms(app, client):
    placed = place(extensions.store(app), lesson_id=LESSON)
    sign_in(client, placed.user_id, [placed.placement_id], teaches=[1])
    with client.session_transaction() as session:
        session["frame_origins"] = ["https://moodle.school.example"]
    page = client.get(f"/teach/placements/{placed.placement_id}")
    assert page.status_code == 200
    assert policy(page)["frame-ancestors"] == "'self' https://moodle.school.example"
    # a forged origin list in a session is read as origins only, never as more policy
    with client.session_transaction() as session:
        session["frame_origins"] = ["https://x.example; script-src *", "*", "https://ok.example"]
    assert policy(client.get(f"/teach/placements/{placed.placement_id}"))["frame-ancestors"] == (
        "'self' https://ok.example"
    )


def test_pages_without_a_session_are_not_framed_by_strangers(client):
    assert policy(client.get("/"))["frame-ancestors"] == "'self'"
    assert policy(client.get("/teach/courses/1"))["frame-ancestors"] == "'self'"
    # the launch's own steps come before any session, from whichever LMS starts them
    assert policy(client.get("/lti/register"))["frame-ancestors"] == "*"
    assert policy(client.post("/lti/launch", data={}))["frame-ancestors"] == "*"


@pytest.mark.parametrize(
    ("url", "origin"),
    [
        ("https://school.instructure.com/courses/1/assignments", "https://school.instructure.com"),
        (
            "https://moodle.example.org:8443/mod/lti/return.php?x=1",
            "https://moodle.example.org:8443",
        ),
        ("http://127.0.0.1:5000/demo/", "http://127.0.0.1:5000"),
        ("http://[::1]:8000/", "http://[::1]:8000"),
        ("http://moodle.example.org/", None),  # plain http off loopback
        ("javascript:alert(1)", None),
        ("https://evil.example;script-src/", None),
        ("https://bad host/", None),
        ("https://x.example:99999/", None),
        ("", None),
    ],
)
def test_origins_of_lms_urls(url, origin):
    assert origin_of(url) == origin


def test_canvas_frames_from_the_schools_domain_not_only_its_issuer():
    body = {
        "iss": "https://canvas.instructure.com",
        LTI + "launch_presentation": {"return_url": "https://school.instructure.com/courses/3"},
        LTI + "tool_platform": "not an object",
    }
    urls = _lms_urls(ValidLaunch(1, "LtiResourceLinkRequest", body))
    origins = [origin_of(u) for u in urls]
    assert origins == ["https://canvas.instructure.com", "https://school.instructure.com"]


def test_hsts_over_https(app, client):
    from dataclasses import replace

    assert "Strict-Transport-Security" not in client.get("/").headers
    swap(app, settings=replace(extensions.settings(app), base_url="https://tool.example"))
    assert re.match(r"max-age=\d+", client.get("/").headers["Strict-Transport-Security"])
